//! A generator under a lease guard (`Builder::guard`), in every concurrency mode: it issues
//! nothing while the fence is closed, no id whose tick ends after the fence, nothing at or
//! below the high-water mark, and the rollback policy decides what a clock behind the mark
//! does. The clock is the guard's real monotonic clock; no assertion depends on timing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod common;

use common::{MODES, Mode};
use idkit_core::guard::Guard;
use idkit_core::{Clock, GenerateErrorKind, IdScheme};
use idkit_snowflake::{RollbackPolicy, Snowflake, Sonyflake, Twitter};

/// Twitter's epoch (Unix ms) and time shift.
const EPOCH: u64 = 1_288_834_974_657;
fn time_ms(id: u64) -> u64 {
    (id >> 22) + EPOCH
}

fn build(mode: Mode, guard: &Guard, policy: RollbackPolicy) -> Box<dyn IdScheme<Id = u64> + Send> {
    mode.build(
        Snowflake::builder(Twitter)
            .field("worker", 9)
            .rollback(policy)
            .guard(guard.clone()),
    )
}

#[test]
fn a_closed_fence_issues_nothing_and_an_open_one_issues() {
    for mode in MODES {
        let guard = Guard::new(0);
        let g = build(mode, &guard, RollbackPolicy::default());
        let e = g.next_id().unwrap_err();
        assert_eq!(e.kind(), GenerateErrorKind::Fenced, "{mode:?}");
        assert!(e.to_string().contains("lease lost"), "{e}");
        let mut out = [0u64; 10];
        assert_eq!(
            g.fill(&mut out).unwrap_err().kind(),
            GenerateErrorKind::Fenced
        );

        let fence = guard.clock().now_ms() + 60_000;
        guard.open_until(fence);
        for id in g.take(5_000).unwrap() {
            assert!(time_ms(id) < fence, "{mode:?}");
        }
    }
}

#[test]
fn no_id_carries_a_tick_that_ends_after_the_fence() {
    for mode in MODES {
        let guard = Guard::new(0);
        let g = build(mode, &guard, RollbackPolicy::default());
        let fence = guard.clock().now_ms() + 20;
        guard.open_until(fence);
        let mut issued = 0u64;
        let error = loop {
            match g.next_id() {
                Ok(id) => {
                    assert!(
                        time_ms(id) < fence,
                        "{mode:?}: id at {} past fence {fence}",
                        time_ms(id)
                    );
                    issued += 1;
                }
                Err(e) => break e,
            }
        };
        assert!(issued > 0, "{mode:?}: the fence was 20 ms ahead");
        assert_eq!(error.kind(), GenerateErrorKind::Fenced, "{mode:?}: {error}");
        assert!(error.to_string().contains("not renewed in time"), "{error}");
        // Renewed: issuing resumes, above everything issued before.
        let before = g.next_id().unwrap_err();
        assert_eq!(before.kind(), GenerateErrorKind::Fenced);
        guard.open_until(guard.clock().now_ms() + 60_000);
        let after = g.next_id().unwrap();
        assert!(time_ms(after) >= fence - 1, "{mode:?}");
    }
}

#[test]
fn the_first_id_is_above_the_high_water_mark() {
    for mode in MODES {
        // A mark 40 ms ahead of the clock, as after a restart with the clock behind.
        let probe = Guard::new(0);
        let mark = probe.clock().now_ms() + 40;
        let guard = Guard::new(mark);
        guard.open_until(mark + 60_000);

        let waits = build(mode, &guard, RollbackPolicy::Wait { max_ms: 1_000 });
        let id = waits.next_id().unwrap();
        assert!(
            time_ms(id) > mark,
            "{mode:?}: {} <= mark {mark}",
            time_ms(id)
        );

        let guard = Guard::new(guard.clock().now_ms() + 5_000);
        guard.open_until(u64::MAX);
        let fails = build(mode, &guard, RollbackPolicy::FailFast);
        let e = fails.next_id().unwrap_err();
        assert_eq!(e.kind(), GenerateErrorKind::ClockMovedBackwards, "{mode:?}");
        let behind = e.behind_ms().unwrap();
        assert!(
            (4_000..=5_001).contains(&behind),
            "{mode:?}: behind {behind}"
        );

        let short = build(mode, &guard, RollbackPolicy::Wait { max_ms: 5 });
        assert_eq!(
            short.next_id().unwrap_err().kind(),
            GenerateErrorKind::ClockMovedBackwards
        );

        let logical = build(
            mode,
            &guard,
            RollbackPolicy::Logical {
                max_ahead_ms: 10_000,
            },
        );
        let id = logical.next_id().unwrap();
        assert!(time_ms(id) > guard.floor_ms(), "{mode:?}");
    }
}

#[test]
fn closing_the_fence_under_contention_stops_every_thread() {
    // Two threads issue as fast as they can while the holder closes the fence. Every id
    // issued is distinct, and none was issued in a tick that began after the fence closed
    // plus one tick (ids of the tick in progress may finish: it ends before the old fence).
    let guard = Guard::new(0);
    let g = Arc::new(
        Snowflake::builder(Twitter)
            .guard(guard.clone())
            .build_atomic()
            .unwrap(),
    );
    guard.open_until(guard.clock().now_ms() + 60_000);
    let closed_at = Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let g = Arc::clone(&g);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                let mut refused = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match g.next_id() {
                        Ok(id) => ids.push(id),
                        Err(e) => {
                            assert_eq!(e.kind(), GenerateErrorKind::Fenced);
                            refused += 1;
                        }
                    }
                }
                (ids, refused)
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(30));
    closed_at.store(guard.clock().now_ms(), Ordering::SeqCst);
    guard.close();
    std::thread::sleep(std::time::Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    let mut refused = 0;
    for w in workers {
        let (ids, r) = w.join().unwrap();
        all.extend(ids);
        refused += r;
    }
    let closed_at = closed_at.load(Ordering::SeqCst);
    assert!(refused > 0, "the threads kept running after the close");
    assert!(all.iter().all(|&id| time_ms(id) <= closed_at + 1));
    idkit_testkit::check_distinct(all);
}

/// After `close_and_drain` returns, the very next request is refused, even in the tick
/// the generator was in when the fence closed (a plain `close` lets that tick finish):
/// Twitter's 1 ms tick and Sonyflake's 10 ms tick, every concurrency mode, and a logical
/// clock that may run ahead.
#[test]
fn nothing_issues_once_close_and_drain_returns() {
    for mode in MODES {
        for policy in [
            RollbackPolicy::default(),
            RollbackPolicy::Logical { max_ahead_ms: 5 },
        ] {
            let guard = Guard::new(0);
            guard.open_until(guard.clock().now_ms() + 60_000);
            let twitter = build(mode, &guard, policy);
            twitter.next_id().unwrap();
            assert!(guard.close_and_drain() > 0);
            let e = twitter.next_id().unwrap_err();
            assert_eq!(e.kind(), GenerateErrorKind::Fenced, "{mode:?} {policy:?}");

            let guard = Guard::new(0);
            guard.open_until(guard.clock().now_ms() + 60_000);
            let sonyflake = mode.build(
                Snowflake::builder(Sonyflake)
                    .field("machine", 9)
                    .rollback(policy)
                    .guard(guard.clone()),
            );
            assert_eq!(guard.tick_ms(), 10, "the builder records the tick");
            sonyflake.next_id().unwrap();
            let closed_at = guard.clock().now_ms();
            guard.close_and_drain();
            assert!(guard.clock().now_ms() >= closed_at + 10);
            let e = sonyflake.next_id().unwrap_err();
            assert_eq!(e.kind(), GenerateErrorKind::Fenced, "{mode:?} {policy:?}");
        }
    }
}
