//! The range allocator's hot path: ids from a leased block (SQLite store), against the
//! floor of any shared counter, one `AtomicU64::fetch_add` (idkit's auto-increment
//! baseline), on one thread and with two threads sharing one generator.
//!
//! Run: `cargo bench -p bench-harness --bench range`. The latency distribution over many
//! refills is `cargo run --release -p bench-harness --bin range_latency`.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use idkit_all::baseline::AutoIncrement;
use idkit_core::IdScheme;
use idkit_range::{RangeAllocator, SqliteStore};

fn allocator(dir: &std::path::Path) -> RangeAllocator {
    let store = SqliteStore::open(dir.join("bench.db"), Duration::from_secs(5)).expect("store");
    // Large blocks: a refill every million ids, leased in the background.
    RangeAllocator::builder(store)
        .block_size(1_000_000)
        .max_block(1 << 24)
        .build()
        .expect("allocator")
}

fn scratch() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("idkit-range-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn hot(c: &mut Criterion) {
    let dir = scratch();
    let range = allocator(&dir);
    let counter = AutoIncrement::new();
    let mut g = c.benchmark_group("range-1t");
    g.throughput(Throughput::Elements(1));
    g.bench_function("idkit-range", |b| b.iter(|| black_box(range.next_id())));
    g.bench_function("atomic-counter", |b| {
        b.iter(|| black_box(counter.next_id()))
    });
    g.finish();

    let mut g = c.benchmark_group("range-threads");
    g.throughput(Throughput::Elements(1));
    for threads in [1usize, 2] {
        let shared = Arc::new(allocator(&dir));
        g.bench_function(format!("idkit-range/{threads}"), |b| {
            b.iter_custom(|iters| {
                let per = iters / threads as u64 + 1;
                let start = Arc::new(Barrier::new(threads + 1));
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        let (shared, start) = (Arc::clone(&shared), Arc::clone(&start));
                        std::thread::spawn(move || {
                            start.wait();
                            for _ in 0..per {
                                black_box(shared.next_id().expect("id"));
                            }
                        })
                    })
                    .collect();
                start.wait();
                let began = Instant::now();
                for h in handles {
                    h.join().expect("thread");
                }
                // Wall time for all `iters` ids: criterion's rate is the aggregate.
                began.elapsed()
            });
        });
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, hot);
criterion_main!(benches);
