//! `next_id` latency of the range allocator over many block refills against SQLite, with
//! double buffering on (prefetch at 20% of a block) and off (lease when the block is
//! spent). Every call is timed; p50, p99, p99.9 and max are printed with the refill count.
//!
//! `cargo run --release -p bench-harness --bin range_latency [-- IDS BLOCK]`
//! (defaults: 20,000,000 ids in blocks of 100,000: 200 refills). A block must outlast one
//! lease (a SQLite transaction with fsync, a few hundred µs) for double buffering to keep
//! up; blocks of 1,000 drain in about 20 µs here.

use std::time::{Duration, Instant};

use idkit_core::IdScheme;
use idkit_range::{RangeAllocator, SqliteStore};

fn percentile(sorted: &[u64], p: f64) -> u64 {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i]
}

fn run(ids: usize, block: u64, prefetch_at: f64) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("idkit-range-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("latency.db");
    let _ = std::fs::remove_file(&db);
    let store = SqliteStore::open(&db, Duration::from_secs(5))?;
    let allocator = RangeAllocator::builder(store)
        .block_size(block)
        .max_block(block)
        .prefetch_at(prefetch_at)
        .build()?;
    // The first block is leased at build; wait for it so the run starts in steady state.
    allocator.next_id()?;
    let waits_before = allocator.stats().waits;
    let mut nanos = Vec::with_capacity(ids);
    for _ in 0..ids {
        let t = Instant::now();
        std::hint::black_box(allocator.next_id()?);
        nanos.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    let stats = allocator.stats();
    let slow = nanos.iter().filter(|&&n| n > 100_000).count();
    drop(allocator);
    nanos.sort_unstable();
    println!(
        "| {} | {ids} | {block} | {} | {} | {slow} | {} ns | {} ns | {} ns | {:.1} µs |",
        if prefetch_at < 1.0 {
            format!("on (at {:.0}%)", prefetch_at * 100.0)
        } else {
            "off".to_owned()
        },
        stats.leases,
        stats.waits - waits_before,
        percentile(&nanos, 50.0),
        percentile(&nanos, 99.0),
        percentile(&nanos, 99.9),
        nanos[nanos.len() - 1] as f64 / 1000.0
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let ids: usize = args.next().map_or(Ok(20_000_000), |a| a.parse())?;
    let block: u64 = args.next().map_or(Ok(100_000), |a| a.parse())?;
    println!(
        "| double buffering | ids | block | leases | waits on the store | calls > 100 µs | p50 | p99 | p99.9 | max |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    run(ids, block, 0.2)?;
    run(ids, block, 1.0)?;
    Ok(())
}
