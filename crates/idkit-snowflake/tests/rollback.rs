//! Every rollback policy, in every concurrency mode, driven by a `ManualClock` through
//! backward steps of one tick, 5 ms, 1 s and 1 h, a frozen clock and a forward jump.
//! Whatever happens: no duplicate, no decrease, and the documented wait or error.

mod common;

use common::{MODES, Mode};
use idkit_core::{Clock, GenerateError, GenerateErrorKind, IdScheme, ManualClock};
use idkit_snowflake::{Layout, RollbackPolicy, Snowflake, Sonyflake, Twitter};

const START_AFTER_EPOCH: u64 = 86_400_000;

fn build<'c, L: Layout<Id = u64>>(
    layout: L,
    mode: Mode,
    policy: RollbackPolicy,
    clock: &'c ManualClock,
) -> Box<dyn IdScheme<Id = u64> + 'c> {
    mode.build(Snowflake::builder(layout).clock(clock).rollback(policy))
}

/// Records every id issued and checks the whole history strictly increases.
#[derive(Default)]
struct History(Vec<u64>);

impl History {
    fn push(&mut self, id: u64) {
        if let Some(&last) = self.0.last() {
            assert!(
                id > last,
                "id {id} issued after {last}: duplicate or decrease"
            );
        }
        self.0.push(id);
    }
}

fn tick_of<L: Layout>(layout: L, id: u64) -> u64 {
    let t = layout.spec().time();
    (id >> t.shift) & t.max()
}

/// Steps the clock back by `back_ms` after some ids, checks the policy's documented
/// response, then freezes the clock and finally jumps it forward.
fn scenario<L: Layout<Id = u64>>(layout: L, mode: Mode, policy: RollbackPolicy, back_ms: u64) {
    let spec = *layout.spec();
    let t0 = spec.epoch_ms() + START_AFTER_EPOCH;
    let clock = ManualClock::new(t0);
    let generator = build(layout, mode, policy, &clock);
    let mut history = History::default();
    for _ in 0..10 {
        history.push(generator.next_id().unwrap());
    }
    let last_tick = tick_of(layout, *history.0.last().unwrap());
    let ctx = format!("{} {mode:?} {policy:?} back {back_ms} ms", spec.name());

    clock.step_back(back_ms);
    let waits_before = clock.waits();
    let result = generator.next_id();
    match policy {
        RollbackPolicy::FailFast => {
            assert_eq!(
                result,
                Err(GenerateError::clock_moved_backwards(back_ms, 0)),
                "{ctx}"
            );
        }
        RollbackPolicy::Wait { max_ms } if back_ms <= max_ms => {
            let id = result.unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(clock.waits(), waits_before + 1, "{ctx}: waited once");
            assert_eq!(
                clock.now_ms(),
                t0,
                "{ctx}: waited until the clock caught up"
            );
            assert_eq!(tick_of(layout, id), last_tick, "{ctx}");
            history.push(id);
        }
        RollbackPolicy::Wait { .. } => {
            assert_eq!(
                result,
                Err(GenerateError::clock_moved_backwards(back_ms, 0)),
                "{ctx}: too far back to wait"
            );
            assert_eq!(
                clock.waits(),
                waits_before,
                "{ctx}: no wait when it cannot help"
            );
        }
        RollbackPolicy::Logical { max_ahead_ms } => {
            // Keeps issuing from the last tick without waiting.
            let id = result.unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(tick_of(layout, id), last_tick, "{ctx}");
            assert_eq!(clock.waits(), waits_before, "{ctx}: no wait");
            history.push(id);
            // Then, with the clock frozen, it borrows ticks up to the bound and no further.
            let mut borrowed_error = None;
            for _ in 0..200_000 {
                match generator.next_id() {
                    Ok(id) => history.push(id),
                    Err(e) => {
                        borrowed_error = Some(e);
                        break;
                    }
                }
            }
            // Issuing from the last tick used is not borrowing; every tick beyond it is
            // borrowed, and must start within the bound of the clock.
            let last = tick_of(layout, *history.0.last().unwrap());
            if last > last_tick {
                let ahead = spec.tick_start_ms(last).unwrap() - clock.now_ms();
                assert!(ahead <= max_ahead_ms, "{ctx}: ran {ahead} ms ahead");
            }
            // Past the bound by more than one tick of waiting: an error, not a long wait.
            if back_ms > max_ahead_ms {
                assert!(
                    borrowed_error.as_ref().and_then(GenerateError::limit_ms) == Some(max_ahead_ms),
                    "{ctx}: {borrowed_error:?}"
                );
            } else {
                assert!(borrowed_error.is_none(), "{ctx}: {borrowed_error:?}");
            }
        }
    }

    // The clock stops: sequences run out and the generator waits (or borrows), never
    // repeating itself.
    clock.set(t0);
    for _ in 0..3 * (spec.sequence().max() + 1) {
        match generator.next_id() {
            Ok(id) => history.push(id),
            Err(e) if e.kind() == GenerateErrorKind::AheadLimit => break,
            Err(e) => panic!("{ctx}: frozen clock: {e}"),
        }
    }

    // A forward jump of an hour: ids carry the new time.
    let jump_to = clock.now_ms().max(t0) + 3_600_000;
    clock.set(jump_to);
    let id = generator
        .next_id()
        .unwrap_or_else(|e| panic!("{ctx}: after jump: {e}"));
    assert_eq!(
        spec.tick_start_ms(tick_of(layout, id)),
        Some(jump_to - (jump_to - spec.epoch_ms()) % spec.tick_ms()),
        "{ctx}"
    );
    history.push(id);
}

fn policies() -> [RollbackPolicy; 3] {
    [
        RollbackPolicy::FailFast,
        RollbackPolicy::Wait { max_ms: 5 },
        RollbackPolicy::Logical {
            max_ahead_ms: 1_000,
        },
    ]
}

#[test]
fn twitter_every_policy_every_mode_every_step() {
    for mode in MODES {
        for policy in policies() {
            for back in [1, 5, 1_000, 3_600_000] {
                scenario(Twitter, mode, policy, back);
            }
        }
    }
}

#[test]
fn sonyflake_ten_ms_ticks() {
    for mode in MODES {
        for policy in policies() {
            for back in [10, 1_000, 3_600_000] {
                scenario(Sonyflake, mode, policy, back);
            }
        }
    }
}

#[test]
fn wait_policy_gives_up_after_its_bound() {
    // A clock that is 4 ms behind and, each time the generator waits on it, comes back
    // from the wait no further on (as if stepped back again meanwhile).
    #[derive(Debug)]
    struct Slipping(ManualClock);
    impl Clock for Slipping {
        fn now_ms(&self) -> u64 {
            self.0.now_ms()
        }
        fn wait_until_ms(&self, _target_ms: u64) -> u64 {
            self.0.now_ms()
        }
    }
    let t0 = Twitter.spec().epoch_ms() + 10_000;
    let clock = Slipping(ManualClock::new(t0));
    let generator = Snowflake::builder(Twitter)
        .clock(&clock)
        .rollback(RollbackPolicy::Wait { max_ms: 5 })
        .build()
        .unwrap();
    generator.next_id().unwrap();
    clock.0.step_back(4);
    // Asked to wait 4 ms, still 4 ms behind: 4 + 4 > 5, so it gives up instead of looping.
    assert_eq!(
        generator.next_id(),
        Err(GenerateError::clock_moved_backwards(4, 4))
    );
}

#[test]
fn logical_reports_how_far_ahead_it_runs() {
    let t0 = Twitter.spec().epoch_ms() + 10_000;
    let clock = ManualClock::new(t0);
    let generator = Snowflake::builder(Twitter)
        .clock(&clock)
        .rollback(RollbackPolicy::Logical { max_ahead_ms: 50 })
        .build_atomic()
        .unwrap();
    // Three ticks' worth of ids on a frozen clock: borrows two ticks, no waiting.
    generator.take(3 * 4096).unwrap();
    assert_eq!(generator.ahead_ms(), 2);
    assert_eq!(clock.waits(), 0);
    clock.advance(10);
    assert_eq!(generator.ahead_ms(), 0);
}

#[test]
fn time_past_the_layout_and_before_the_epoch_are_errors() {
    let spec = Twitter.spec();
    let clock = ManualClock::new(spec.last_ms().unwrap());
    for mode in MODES {
        let generator = build(Twitter, mode, RollbackPolicy::FailFast, &clock);
        clock.set(spec.last_ms().unwrap());
        // The last millisecond works: 4096 ids, then no next tick to wait for.
        let ids = generator.take(4096).unwrap();
        assert_eq!(
            *ids.last().unwrap(),
            (1u64 << 63) - 1 - 31 * (1 << 12) - 31 * (1 << 17)
        );
        let err = generator.next_id().unwrap_err();
        assert!(
            err.kind() == GenerateErrorKind::TimeOverflow,
            "{mode:?}: {err}"
        );
        assert!(
            err.to_string().contains("2080-07-10T17:30:30.208Z"),
            "{err}"
        );
        clock.advance(1);
        assert_eq!(
            generator.next_id().unwrap_err().kind(),
            GenerateErrorKind::TimeOverflow
        );
        clock.set(spec.epoch_ms() - 1);
        let err = generator.next_id().unwrap_err();
        assert_eq!(err.kind(), GenerateErrorKind::BeforeEpoch, "{err}");
    }
}

/// `stats()` counts rollbacks and waits for the next tick, in every mode, and nothing on
/// the plain path.
#[test]
fn stats_count_rollbacks_and_tick_waits() {
    for mode in [Mode::Single, Mode::Atomic, Mode::Mutex] {
        let spec = *Twitter.spec();
        let clock = ManualClock::new(spec.epoch_ms() + START_AFTER_EPOCH);
        let generator = build(Twitter, mode, RollbackPolicy::FailFast, &clock);
        for _ in 0..100 {
            generator.next_id().unwrap();
        }
        assert_eq!(
            generator.stats(),
            idkit_core::GeneratorStats::default(),
            "{mode:?}"
        );
        // 4096 ids per tick: the rest of this tick's sequence, then one wait.
        for _ in 0..4096 {
            generator.next_id().unwrap();
        }
        assert_eq!(generator.stats().tick_waits, 1, "{mode:?}");
        clock.step_back(3);
        assert!(generator.next_id().is_err());
        assert!(generator.next_id().is_err());
        assert_eq!(generator.stats().clock_rollbacks, 2, "{mode:?}");
        assert_eq!(generator.stats().tick_waits, 1, "{mode:?}");
    }
}
