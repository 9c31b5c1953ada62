//! Threads waiting on a slow store sleep: eight threads drain an allocator whose store takes
//! 40 ms per lease, and the process's CPU time over the run stays a small fraction of the
//! wall time. (Before waiters slept on a condition of their own they woke each other in a
//! loop while a lease was in flight: 2.8 s of CPU in 1.6 s of wall time on 2 cores.)
//!
//! The one test of this file: the CPU time is the whole process's, so nothing else may run
//! beside it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use idkit_range::{IdScheme, RangeAllocator};
use idkit_testkit::cpu::process_cpu_time;
use idkit_testkit::range::SlowStore;

/// How long the store takes for every lease, as a far or busy database.
const LEASE_TIME: Duration = Duration::from_millis(40);

#[cfg(target_os = "linux")]
#[test]
fn threads_waiting_on_a_slow_store_sleep() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 500;
    const BLOCK: u64 = 100;
    let allocator = Arc::new(
        RangeAllocator::builder(SlowStore::new(LEASE_TIME))
            .block_size(BLOCK)
            .max_block(BLOCK)
            .wait(Duration::from_secs(30))
            .build()
            .unwrap(),
    );
    let cpu_before = process_cpu_time();
    let started = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let allocator = Arc::clone(&allocator);
            std::thread::spawn(move || {
                (0..PER_THREAD)
                    .map(|_| allocator.next_id().unwrap())
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let wall = started.elapsed();
    let cpu = process_cpu_time() - cpu_before;

    let n = idkit_testkit::check_distinct(all);
    let stats = RangeAllocator::stats(&allocator);
    // Blocks of 100 drained by 8 threads: most refills find the next block not leased yet.
    assert!(stats.waits >= 10, "threads never waited: {stats:?}");
    let share = cpu.as_secs_f64() / wall.as_secs_f64();
    eprintln!(
        "{n} ids, {} leases, {} waits: {:.0} ms CPU in {:.0} ms wall ({:.1}%)",
        stats.leases,
        stats.waits,
        cpu.as_secs_f64() * 1e3,
        wall.as_secs_f64() * 1e3,
        share * 100.0
    );
    assert!(
        share < 0.2,
        "waiting threads burned {:.0} ms of CPU in {:.0} ms ({:.0}%)",
        cpu.as_secs_f64() * 1e3,
        wall.as_secs_f64() * 1e3,
        share * 100.0
    );
}
