//! UUIDv7 by RFC 9562 section 6.2 method 3 (`UuidV7SubMs`): the millisecond's fraction in
//! `rand_a` (12 bits, `fraction * 4096 / 1,000,000` as the section describes), strictly
//! increasing per generator, unique across threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use idkit_core::random::SeededRandom;
use idkit_core::{Clock, Codec, IdScheme};
use idkit_uuid::{UuidCodec, UuidV7SubMs, sub_ms_time};

/// A clock set by hand to the nanosecond.
#[derive(Debug, Default)]
struct NanoClock(AtomicU64);

impl Clock for NanoClock {
    fn now_ms(&self) -> u64 {
        self.now_ns() / 1_000_000
    }
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// RFC 9562 appendix A.6's millisecond, 2022-02-22T19:22:22Z.
const MS: u64 = 0x017F_22E2_79B0;

fn rand_a(id: idkit_uuid::Uuid) -> u128 {
    id.as_u128() >> 64 & 0xfff
}

#[test]
fn rand_a_holds_the_fraction_of_the_millisecond() {
    let clock = Arc::new(NanoClock::default());
    let generator = UuidV7SubMs::with_source(Arc::clone(&clock), SeededRandom::new(1));
    // Half a millisecond in: 2048 of 4096 steps.
    clock.0.store(MS * 1_000_000 + 500_000, Ordering::SeqCst);
    let id = generator.next_id().unwrap();
    assert_eq!(id.as_u128() >> 80, u128::from(MS));
    assert_eq!(rand_a(id), 0x800);
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(UuidCodec::V7.decode(id).timestamp_ms, Some(MS));
    // The last step of the millisecond, and the step below a whole one (rounded down).
    assert_eq!(sub_ms_time(MS * 1_000_000 + 999_999) & 0xfff, 0xfff);
    assert_eq!(sub_ms_time(MS * 1_000_000 + 244) & 0xfff, 0);
    assert_eq!(sub_ms_time(MS * 1_000_000 + 245) & 0xfff, 1);
    // 250 µs later: a quarter further.
    clock.0.store(MS * 1_000_000 + 750_000, Ordering::SeqCst);
    assert_eq!(rand_a(generator.next_id().unwrap()), 0xc00);
}

#[test]
fn a_clock_that_does_not_move_or_steps_back_still_gives_increasing_ids() {
    let clock = Arc::new(NanoClock::default());
    clock.0.store(MS * 1_000_000, Ordering::SeqCst);
    let generator = UuidV7SubMs::with_source(Arc::clone(&clock), SeededRandom::new(2));
    let mut last = generator.next_id().unwrap();
    // 5,000 ids on a clock that stands still: one step each, past the millisecond's 4,096.
    for i in 1..5_000u128 {
        let id = generator.next_id().unwrap();
        assert!(id > last);
        // The 60-bit time (ms above the 12-bit fraction) is the start's plus i steps.
        let time = (id.as_u128() >> 80) << 12 | rand_a(id);
        assert_eq!(time, u128::from(MS) << 12 | i, "{i}");
        last = id;
    }
    clock.0.store((MS - 60_000) * 1_000_000, Ordering::SeqCst);
    let back = generator.next_id().unwrap();
    assert!(
        back > last,
        "the clock went back a minute: still increasing"
    );
}

#[test]
fn shared_by_threads_it_issues_no_duplicate() {
    // Four threads, one and ten ids at a time: each thread's increasing, none twice.
    let generator = UuidV7SubMs::new();
    idkit_testkit::check_mixed_contention(generator, &[1, 10, 1, 10], 50_000);
}
