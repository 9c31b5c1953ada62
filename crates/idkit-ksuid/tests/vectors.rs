//! KSUID README examples, Nil and Max, and malformed input.

use idkit_core::{Codec, FieldValue, IdScheme, ManualClock};
use idkit_ksuid::{KsuidCodec, KsuidGenerator};
use idkit_testkit::load_vectors;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    valid: Vec<Valid>,
    invalid: Vec<Invalid>,
}

#[derive(Deserialize)]
struct Valid {
    name: String,
    text: String,
    raw: String,
    timestamp_ms: u64,
    payload: String,
}

#[derive(Deserialize)]
struct Invalid {
    name: String,
    text: String,
    error: String,
}

#[test]
fn readme() {
    let file: File = load_vectors(env!("CARGO_MANIFEST_DIR"), "readme");
    for v in &file.valid {
        let id = KsuidCodec
            .parse(&v.text)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(
            idkit_core::codec::hex::encode(id.bytes()),
            v.raw,
            "{}",
            v.name
        );
        let d = KsuidCodec.decode(id);
        assert_eq!(d.timestamp_ms, Some(v.timestamp_ms), "{}", v.name);
        assert_eq!(
            d.field("payload"),
            Some(&FieldValue::Hex(v.payload.clone()))
        );
        assert_eq!(KsuidCodec.format(id), v.text);
        // svix-ksuid agrees on the text.
        assert_eq!(id.to_string(), v.text);
    }
    for v in &file.invalid {
        assert_eq!(
            KsuidCodec.parse(&v.text).unwrap_err().to_string(),
            v.error,
            "{}",
            v.name
        );
    }
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
