//! RFC 9562 example values, and v7 monotonicity driven by a manual clock.

use idkit_core::{Codec, FieldValue, IdScheme, ManualClock};
use idkit_testkit::load_vectors;
use idkit_uuid::{UuidCodec, UuidV7};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    vector: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    name: String,
    version: u8,
    text: String,
    hex: String,
    timestamp_ms: Option<u64>,
}

fn codec(version: u8) -> UuidCodec {
    if version == 4 {
        UuidCodec::V4
    } else {
        UuidCodec::V7
    }
}

#[test]
fn rfc9562() {
    let file: File = load_vectors(env!("CARGO_MANIFEST_DIR"), "rfc9562");
    for v in file.vector {
        let c = codec(v.version);
        let id = c
            .parse(&v.text)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(format!("{:032x}", id.as_u128()), v.hex, "{}", v.name);
        assert_eq!(c.format(id), v.text);
        assert_eq!(
            c.parse(&v.text.to_uppercase()).unwrap(),
            id,
            "upper case reads too"
        );
        let decoded = c.decode(id);
        assert_eq!(decoded.timestamp_ms, v.timestamp_ms, "{}", v.name);
        assert_eq!(
            decoded.field("version"),
            Some(&FieldValue::Int(u64::from(v.version)))
        );
        // The other version's codec refuses it.
        let other = codec(if v.version == 4 { 7 } else { 4 });
        let err = other.parse(&v.text).unwrap_err().to_string();
        assert!(err.contains(&format!("version {}", v.version)), "{err}");
    }
}

#[test]
fn malformed_text_is_refused_with_the_reason() {
    let c = UuidCodec::V4;
    let cases = [
        ("", "empty input: expected an id"),
        (
            "919108f7-52d1-4320-9bac-f847db4148a",
            "invalid length: expected 36 characters, found 35",
        ),
        (
            "919108f7x52d1-4320-9bac-f847db4148a8",
            "invalid character 'x' at position 8: expected '-' at positions 8, 13, 18 and 23",
        ),
        (
            "919108f7-52d1-4320-9bac-f847db4148ag",
            "invalid character 'g' at position 35: expected hexadecimal digits 0-9 a-f",
        ),
        (
            "919108f7-52d1-4320-1bac-f847db4148a8",
            "invalid id: variant bits 00, expected 10 (RFC 9562)",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(c.parse(text).unwrap_err().to_string(), message, "{text}");
    }
}

#[test]
fn v7_counts_within_a_millisecond_and_through_a_backward_step() {
    let clock = ManualClock::new(1_645_557_742_000);
    let generator = UuidV7::with_fixed_start(&clock, 0xCC3 << 62 | 0x18C4_DC0C_0C07_398F);
    let first = generator.next_id().unwrap();
    // With the RFC's rand_a/rand_b as the start, the first id is the RFC's example.
    assert_eq!(
        UuidCodec::V7.format(first),
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
    );
    let second = generator.next_id().unwrap();
    assert_eq!(
        second.as_u128(),
        first.as_u128() + 1,
        "same ms: counter + 1"
    );
    clock.step_back(60_000);
    let third = generator.next_id().unwrap();
    assert!(third > second, "clock went back a minute: still increasing");
    assert_eq!(
        third.as_u128() >> 80,
        0x017F_22E2_79B0,
        "keeps the last millisecond"
    );
    clock.set(1_645_557_742_005);
    let fourth = generator.next_id().unwrap();
    assert_eq!(fourth.as_u128() >> 80, 1_645_557_742_005);
    assert!(fourth > third);
    // Many in one millisecond: strictly increasing throughout.
    idkit_testkit::check_sequence(&generator, 100_000);
}
