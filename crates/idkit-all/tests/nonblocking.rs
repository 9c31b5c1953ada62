//! The async API (`idkit_core::nonblocking`): generators that wait (a capped layout whose
//! sequence is spent, a range allocator whose block is spent) are awaited, not slept
//! through, so the executor thread keeps running other tasks; the ids are those the
//! blocking calls give, with none lost or repeated.
//!
//! Every test runs on a current-thread runtime beside a heartbeat task that counts 1 ms
//! sleeps: had the generator blocked the one executor thread while waiting, the heartbeat
//! could not have run during the wait.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use idkit_all::core::{GenerateErrorKind, nonblocking};
use idkit_all::objectid::ObjectIdGenerator;
use idkit_all::range::RangeAllocator;
use idkit_all::snowflake::{Snowflake, Sonyflake};
use idkit_all::tsid::{AtomicTsidGenerator, Tsid};
use idkit_testkit::range::SlowStore;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Runs `work` on a current-thread runtime beside a heartbeat; returns its output and how
/// many heartbeats happened while it ran.
fn beside_heartbeat<T>(work: impl std::future::Future<Output = T>) -> (T, u64) {
    runtime().block_on(async {
        let beats = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&beats);
        let heart = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        let out = work.await;
        heart.abort();
        (out, beats.load(Ordering::Relaxed))
    })
}

#[test]
fn a_capped_snowflake_awaits_its_next_tick() {
    // Sonyflake: 256 ids per 10 ms tick, so 2,000 ids span at least 7 waits of up to 10 ms.
    let generator = Snowflake::builder(Sonyflake)
        .field("machine", 3)
        .build()
        .unwrap();
    let (ids, beats) = beside_heartbeat(async {
        let mut ids = vec![0u64; 2_000];
        nonblocking::fill(&generator, &mut ids).await.unwrap();
        ids.push(nonblocking::next_id(&generator).await.unwrap());
        ids
    });
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
    // Nothing lost: every tick but the first and the last gave all 256 of its sequence.
    // Sonyflake's time field sits above 8 sequence and 16 machine bits.
    let mut per_tick = std::collections::BTreeMap::<u64, u64>::new();
    for id in &ids {
        *per_tick.entry(id >> 24).or_default() += 1;
    }
    let full: Vec<u64> = per_tick.values().copied().collect();
    assert!(full.len() >= 8, "{} ticks", full.len());
    assert!(
        full[1..full.len() - 1].iter().all(|n| *n == 256),
        "a tick lost ids: {full:?}"
    );
    assert!(
        beats >= 20,
        "the executor thread was held: {beats} heartbeats"
    );
}

#[test]
fn a_shared_tsid_with_a_small_counter_awaits_from_several_tasks() {
    // 20 node bits leave 2 counter bits: four ids a millisecond.
    let generator = Arc::new(AtomicTsidGenerator::with_node(20, 9).unwrap());
    let (ids, beats) = beside_heartbeat(async {
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let generator = Arc::clone(&generator);
                tokio::spawn(async move { nonblocking::take(&*generator, 100).await.unwrap() })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            let ids: Vec<Tsid> = task.await.unwrap();
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a task's ids out of order"
            );
            all.extend(ids);
        }
        all
    });
    let n = idkit_testkit::check_distinct(ids);
    assert_eq!(n, 400);
    // 400 ids at 4 a millisecond: 100 ms at least, spent awaiting.
    assert!(
        beats >= 20,
        "the executor thread was held: {beats} heartbeats"
    );
}

#[test]
fn a_manual_clock_is_waited_on_as_usual() {
    // A ManualClock's wait moves it forward at once; awaiting real time would never move it.
    let clock = idkit_all::core::ManualClock::new(1_700_000_000_000);
    let generator = Snowflake::builder(Sonyflake)
        .field("machine", 1)
        .clock(&clock)
        .build()
        .unwrap();
    let ids = runtime()
        .block_on(nonblocking::take(&generator, 1_000))
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(clock.waits() >= 3, "{} waits", clock.waits());
}

#[test]
fn an_objectid_generator_answers_at_once() {
    let generator = ObjectIdGenerator::new();
    let ids = runtime()
        .block_on(nonblocking::take(&generator, 10_000))
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_range_allocator_awaits_its_next_block() {
    let allocator = RangeAllocator::builder(SlowStore::new(Duration::from_millis(40)))
        .block_size(100)
        .max_block(100)
        .build()
        .unwrap();
    let (ids, beats) = beside_heartbeat(async {
        let mut ids = vec![0u64; 1_000];
        nonblocking::fill(&allocator, &mut ids).await.unwrap();
        ids
    });
    let expected: Vec<u64> = (1..=1_000).collect();
    assert_eq!(
        ids, expected,
        "one task draining blocks in order, none lost"
    );
    // About 9 waits of 40 ms for a block.
    assert!(
        beats >= 50,
        "the executor thread was held: {beats} heartbeats"
    );
}

#[test]
fn a_range_allocator_gives_up_after_its_wait() {
    let allocator = RangeAllocator::builder(SlowStore::new(Duration::from_secs(3)))
        .block_size(10)
        .max_block(10)
        .wait(Duration::from_millis(200))
        .build()
        .unwrap();
    let started = Instant::now();
    let (result, beats) = beside_heartbeat(nonblocking::next_id(&allocator));
    let error = result.unwrap_err();
    assert_eq!(error.kind(), GenerateErrorKind::Unavailable, "{error}");
    assert!(
        error.to_string().contains("gave no block within 200 ms"),
        "{error}"
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(
        beats >= 50,
        "the executor thread was held: {beats} heartbeats"
    );
}

#[test]
fn a_scheme_that_never_waits_is_filled_a_run_at_a_time() {
    // UUIDv7 has no cap: its own fill serves the whole batch (one clock read per run).
    let generator = idkit_all::uuid::AtomicUuidV7::new();
    let ids = runtime()
        .block_on(nonblocking::take(&generator, 200_000))
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
    let mut raw = vec![idkit_all::core::RawId::default(); 1_000];
    let scheme = idkit_all::registry::find("uuid-v7")
        .unwrap()
        .build(&idkit_all::registry::Options::default())
        .unwrap();
    runtime()
        .block_on(nonblocking::fill_raw(&*scheme, &mut raw))
        .unwrap();
    assert!(raw.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
}
