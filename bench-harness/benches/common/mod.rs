//! What the benches share: the uncapped Snowflake layout (sign 1, time 41, sequence 22:
//! 4.2 G ids/s, out of reach, so the cost of the code shows) on both sides, and ferroid's
//! clock on Twitter's epoch; groups timed per id, one operation timed per iteration, and
//! the threads that time an operation.
#![allow(dead_code)] // each bench uses part of it

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};

use ferroid::time::{MonotonicClock as FerroidClock, TWITTER_EPOCH};
use idkit_snowflake::{Custom, LayoutSpec};

/// Twitter's epoch, Unix ms (ferroid's `TWITTER_EPOCH`).
pub const TWEPOCH_MS: u64 = 1_288_834_974_657;

mod wide_id {
    // The macro generates items without docs; they are ferroid's, not ours.
    #![allow(missing_docs)]
    use ferroid::define_snowflake_id;
    define_snowflake_id!(
        /// The uncapped layout for ferroid: sign 1, time 41, no machine bits, sequence 22.
        WideId, u64,
        reserved: 1,
        timestamp: 41,
        machine_id: 0,
        sequence: 22
    );
}
#[allow(unused_imports)] // each bench uses part of it
pub use wide_id::WideId;

/// The uncapped layout for idkit.
pub fn wide() -> Custom<u64> {
    let spec = LayoutSpec::builder("wide-sequence", 64)
        .time(41)
        .sequence(22)
        .epoch_ms(TWEPOCH_MS)
        .build()
        .expect("valid layout");
    Custom::new(spec).expect("64-bit layout")
}

/// ferroid's monotonic clock (a ticker thread, 1 ms) on Twitter's epoch.
pub fn ferroid_clock() -> FerroidClock<1> {
    FerroidClock::<1>::with_epoch(TWITTER_EPOCH)
}

/// A benchmark group whose figures are per id.
pub fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(1));
    g
}

/// Times `op` under `name`, one call per iteration, its result kept from the optimizer.
/// `op` is a closure type, not a function pointer, so the loop inlines it.
pub fn each<T>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, mut op: impl FnMut() -> T) {
    g.bench_function(name, |b| b.iter(|| black_box(op())));
}

/// Times idkit's `generator` under `name`, one id per iteration.
pub fn each_id<G: idkit_core::IdScheme>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    generator: G,
) {
    each(g, name, || generator.next_id().unwrap());
}

/// Keeps `value` from being optimised away (the closures' one statement).
pub fn keep<T>(value: T) {
    black_box(value);
}

/// What ferroid's generators do while they wait for the next tick.
pub fn spin<T>(_: T) {
    std::hint::spin_loop();
}

/// `threads` threads, each making its own state with `make` before the clock starts and
/// then calling `op` on it for its share of `iters`; the wall time.
pub fn per_thread<S, M, F>(threads: u64, iters: u64, make: M, op: F) -> Duration
where
    M: Fn() -> S + Send + Sync + 'static,
    S: 'static,
    F: Fn(&mut S) + Copy + Send + 'static,
{
    let make = Arc::new(make);
    let barrier = Arc::new(Barrier::new(usize::try_from(threads).unwrap() + 1));
    let per = iters.div_ceil(threads);
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (make, barrier) = (Arc::clone(&make), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut state = make();
                barrier.wait();
                for _ in 0..per {
                    op(&mut state);
                }
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in handles {
        h.join().unwrap();
    }
    start.elapsed()
}
