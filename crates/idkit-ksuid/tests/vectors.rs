//! KSUID README examples, Nil and Max, and malformed input.

use idkit_core::{IdScheme, ManualClock};
use idkit_ksuid::KsuidGenerator;

#[test]
fn readme() {
    idkit_testkit::vectors::run(
        &idkit_ksuid::DEFINITION,
        env!("CARGO_MANIFEST_DIR"),
        "readme",
    );
}

#[test]
fn clock_outside_the_32_bit_seconds_is_an_error() {
    let before = ManualClock::new(1_399_999_999_999);
    assert_eq!(
        KsuidGenerator::with_clock(&before)
            .next_id()
            .unwrap_err()
            .kind(),
        idkit_core::GenerateErrorKind::BeforeEpoch
    );
    let after = ManualClock::new((1_400_000_000 + (1u64 << 32)) * 1000);
    assert_eq!(
        KsuidGenerator::with_clock(&after)
            .next_id()
            .unwrap_err()
            .kind(),
        idkit_core::GenerateErrorKind::TimeOverflow
    );
    let last = ManualClock::new((1_400_000_000 + (1u64 << 32) - 1) * 1000);
    let id = KsuidGenerator::with_clock(&last).next_id().unwrap();
    assert_eq!(id.timestamp_raw(), u32::MAX);
}
