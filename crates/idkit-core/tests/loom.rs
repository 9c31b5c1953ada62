//! Model check of [`AtomicMsCounter`], the one atomic word behind the lock-free UUIDv7,
//! ULID, TypeID, TSID and ObjectId generators: loom explores every interleaving of threads
//! racing on it. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p idkit-core --test loom --release`.
#![cfg(loom)]

use idkit_core::monotonic::{AtomicMsCounter, Step};
use loom::sync::Arc;
use loom::thread;

/// The next pair at `now`, moving to the next tick when the counter is full (UUIDv7's
/// rule), as `(tick, counter)`.
fn next(state: &AtomicMsCounter, now: u64, fresh: u64) -> (u64, u64) {
    let mut at = now;
    loop {
        match state.step(at, || Ok(fresh)).unwrap() {
            Step::Issued { tick, counter } => return (tick, counter),
            Step::Exhausted { tick } => at = tick + 1,
        }
    }
}

fn check(pairs: &[Vec<(u64, u64)>]) {
    idkit_testkit::check_threads(pairs.to_vec());
}

#[test]
fn two_threads_share_a_tick_and_overflow_into_the_next() {
    loom::model(|| {
        // Two counter bits: four pairs per tick, so six reach the next tick.
        let state = Arc::new(AtomicMsCounter::new(1_000, 2));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let state = Arc::clone(&state);
                thread::spawn(move || (0..3).map(|_| next(&state, 1_000, 0)).collect::<Vec<_>>())
            })
            .collect();
        let pairs: Vec<Vec<(u64, u64)>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        check(&pairs);
        assert!(pairs.iter().flatten().any(|p| p.0 == 1_001));
    });
}

#[test]
fn threads_with_different_clock_readings_never_go_back() {
    loom::model(|| {
        // One thread's clock reads a later tick, the other's an earlier one (as when a
        // thread is descheduled between reading the clock and the swap).
        let state = Arc::new(AtomicMsCounter::new(1_000, 2));
        let handles: Vec<_> = [1_000, 1_005]
            .into_iter()
            .map(|now| {
                let state = Arc::clone(&state);
                thread::spawn(move || (0..2).map(|_| next(&state, now, 1)).collect::<Vec<_>>())
            })
            .collect();
        let pairs: Vec<Vec<(u64, u64)>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        check(&pairs);
    });
}
