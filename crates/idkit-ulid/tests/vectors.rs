//! The ULID spec's examples, alias policy, and overflow of the random part.

use idkit_core::{Codec, GenerateError, IdScheme, ManualClock};
use idkit_testkit::load_vectors;
use idkit_ulid::{UlidCodec, UlidGenerator};
use serde::Deserialize;

#[test]
fn spec() {
    idkit_testkit::vectors::run(&idkit_ulid::DEFINITION, env!("CARGO_MANIFEST_DIR"), "spec");
}

/// The spec's same-millisecond sequence.
#[derive(Deserialize)]
struct Monotonic {
    sequence: Vec<String>,
}

#[test]
fn the_generator_reproduces_the_specs_monotonic_sequence() {
    let file: Monotonic = load_vectors(env!("CARGO_MANIFEST_DIR"), "monotonic");
    // From the sequence's first id: its millisecond and its random part.
    let first = UlidCodec.parse(&file.sequence[0]).unwrap();
    let clock = ManualClock::new(first.timestamp_ms());
    let generator = UlidGenerator::with_fixed_random(&clock, first.random());
    for want in &file.sequence {
        assert_eq!(&UlidCodec.format(generator.next_id().unwrap()), want);
    }
}

#[test]
fn alias_policy() {
    let canonical = UlidCodec.parse("01ARZ3NDEKTSV4RRFFQ69G5FAV").unwrap();
    // Lower case, and Crockford's I/L -> 1, O -> 0, all read as the canonical id.
    assert_eq!(
        UlidCodec.parse("01arz3ndektsv4rrffq69g5fav").unwrap(),
        canonical
    );
    assert_eq!(
        UlidCodec.parse("OIARZ3NDEKTSV4RRFFQ69G5FAV").unwrap(),
        canonical
    );
    assert_eq!(
        UlidCodec.parse("0lARZ3NDEKTSV4RRFFQ69G5FAV").unwrap(),
        canonical
    );
    assert!(
        UlidCodec.parse("01ARZ3NDEKTSV4RRFFQ69G5FAu").is_err(),
        "u is refused too"
    );
}

#[test]
fn overflow_within_a_millisecond_is_an_error_not_a_wraparound() {
    let clock = ManualClock::new(1_469_922_850_259);
    let generator = UlidGenerator::with_fixed_random(&clock, (1 << 80) - 2);
    let a = generator.next_id().unwrap();
    let b = generator.next_id().unwrap();
    assert_eq!(b.random(), (1 << 80) - 1);
    assert!(b > a);
    assert_eq!(
        generator.next_id(),
        Err(GenerateError::exhausted(
            "the 80-bit random part within one millisecond"
        ))
    );
    // And it stays an error until the clock moves on; the clock stepping back does not help.
    clock.step_back(5);
    assert!(generator.next_id().is_err());
    clock.set(1_469_922_850_260);
    let c = generator.next_id().unwrap();
    assert!(c > b);
}
