//! RFC 9562's example values of every version (appendices A and B), name-based ids from
//! Python's documentation and the `uuid` crate's tests, and v7 monotonicity driven by a
//! manual clock.

use idkit_core::{Codec, ComposeErrorKind, FieldValue, IdScheme, ManualClock};
use idkit_testkit::load_vectors;
use idkit_uuid::versions::{self, UuidV6};
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
    /// Versions 1 and 6: the 100 ns ticks since 1582-10-15, clock sequence and node.
    ticks: Option<u64>,
    clock_seq: Option<u64>,
    node: Option<String>,
    /// Versions 3 and 5: the namespace and name they were made from.
    namespace: Option<String>,
    from_name: Option<String>,
    /// Version 8: custom_a, custom_b, custom_c.
    custom: Option<[u64; 3]>,
}

const VERSIONS: [u8; 7] = [1, 3, 4, 5, 6, 7, 8];

fn codec(version: u8) -> UuidCodec {
    UuidCodec::of_version(version).unwrap()
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
        // Every other version's codec refuses it, naming the version it found.
        for other in VERSIONS.into_iter().filter(|&o| o != v.version) {
            let err = codec(other).parse(&v.text).unwrap_err().to_string();
            assert!(err.contains(&format!("version {}", v.version)), "{err}");
        }
        if let Some(ticks) = v.ticks {
            assert_eq!(versions::gregorian_ticks(id), Some(ticks), "{}", v.name);
            assert_eq!(
                decoded.field("ticks_100ns_since_1582"),
                Some(&FieldValue::Int(ticks))
            );
            let (clock_seq, node) = versions::clock_seq_and_node(id).unwrap();
            assert_eq!(Some(u64::from(clock_seq)), v.clock_seq, "{}", v.name);
            assert_eq!(Some(format!("{node:012x}")), v.node, "{}", v.name);
        }
        if let (Some(ns), Some(name)) = (&v.namespace, &v.from_name) {
            let ns = versions::namespace(ns).unwrap();
            let made = match v.version {
                3 => versions::v3(&ns, name.as_bytes()),
                _ => versions::v5(&ns, name.as_bytes()),
            };
            assert_eq!(made, id, "{}", v.name);
        }
        if let Some([a, b, c]) = v.custom {
            let custom = u128::from(a) << 74 | u128::from(b) << 62 | u128::from(c);
            assert_eq!(versions::v8(custom).unwrap(), id, "{}", v.name);
            assert_eq!(versions::v8_custom(id), Some(custom), "{}", v.name);
        }
    }
}

#[derive(Deserialize)]
struct NameFile {
    vector: Vec<NameVector>,
}

#[derive(Deserialize)]
struct NameVector {
    version: u8,
    namespace: String,
    name: String,
    text: String,
}

#[test]
fn name_based_ids_match_python_and_the_uuid_crate() {
    let file: NameFile = load_vectors(env!("CARGO_MANIFEST_DIR"), "name_based");
    for v in file.vector {
        let ns = versions::namespace(&v.namespace).unwrap();
        let made = match v.version {
            3 => versions::v3(&ns, v.name.as_bytes()),
            _ => versions::v5(&ns, v.name.as_bytes()),
        };
        assert_eq!(
            made.to_string(),
            v.text,
            "v{} {} {:?}",
            v.version,
            v.namespace,
            v.name
        );
        assert_eq!(codec(v.version).parse(&v.text).unwrap(), made);
        // The namespace as its UUID text gives the same id.
        let by_text = versions::namespace(&ns.to_string()).unwrap();
        assert_eq!(by_text, ns);
    }
}

#[test]
fn v1_and_v6_are_the_same_fields_reordered() {
    // RFC 9562 appendix A.1 and A.5.
    let v1 = UuidCodec::V1
        .parse("c232ab00-9414-11ec-b3c8-9f6bdeced846")
        .unwrap();
    let v6 = UuidCodec::V6
        .parse("1ec9414c-232a-6b00-b3c8-9f6bdeced846")
        .unwrap();
    assert_eq!(versions::v1_to_v6(v1).unwrap(), v6);
    assert_eq!(versions::v6_to_v1(v6).unwrap(), v1);
    // Anything else is refused by version.
    let err = versions::v1_to_v6(v6).unwrap_err().to_string();
    assert!(err.contains("version 6, expected a version 1"), "{err}");
    assert!(versions::v6_to_v1(v1).is_err());
}

#[test]
fn bad_namespaces_and_wide_v8_payloads_are_typed_errors() {
    for bad in [
        "",
        "dns.",
        "example.com",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c",
    ] {
        let err = versions::namespace(bad).unwrap_err().to_string();
        assert!(
            err.contains("a namespace is dns, url, oid, x500 or a UUID"),
            "{bad}: {err}"
        );
    }
    let err = versions::v8(1 << 122).unwrap_err();
    assert_eq!(err.kind(), ComposeErrorKind::FieldOutOfRange);
    assert!(versions::v8((1 << 122) - 1).is_ok());
    assert_eq!(versions::v8_custom(versions::v8(0).unwrap()), Some(0));
    // Not version 8: no custom bits.
    assert_eq!(
        versions::v8_custom(UuidV6::with_low(ManualClock::new(0), 0).next_id().unwrap()),
        None
    );
}

#[test]
fn v6_counts_ticks_within_a_millisecond_and_never_steps_back() {
    let clock = ManualClock::new(1_645_557_742_000);
    // A.5's clock sequence and node (0x33C8, 0x9F6BDECED846; its multicast bit is set).
    let generator = UuidV6::with_low(&clock, 0x33C8 << 48 | 0x9F6B_DECE_D846);
    let first = generator.next_id().unwrap();
    assert_eq!(first.to_string(), "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
    let second = generator.next_id().unwrap();
    assert_eq!(
        versions::gregorian_ticks(second),
        Some(0x1EC9414C232AB00 + 1)
    );
    clock.step_back(60_000);
    let third = generator.next_id().unwrap();
    assert!(
        third > second,
        "the clock went back a minute: still increasing"
    );
    clock.set(1_645_557_742_005);
    let fourth = generator.next_id().unwrap();
    assert_eq!(versions::unix_ms(fourth), Some(1_645_557_742_005));
    // Past 10,000 ids in one millisecond the time runs ahead, still increasing.
    idkit_testkit::check_sequence(&generator, 30_000);
    // Every id is one the codec reads, and its bounds hold it.
    let bounds = UuidCodec::V6.bounds_at(1_645_557_742_005, &[]).unwrap();
    assert!(bounds.lowest <= fourth && fourth <= bounds.highest);
    let before = UuidCodec::V6.bounds_at(1_645_557_742_004, &[]).unwrap();
    assert!(before.highest < fourth);
    // Version 1's bytes do not sort by time: no bounds, and the error says why.
    let err = UuidCodec::V1.bounds_at(0, &[]).unwrap_err();
    assert_eq!(err.kind(), ComposeErrorKind::NoTime);
    assert!(err.to_string().contains("do not sort by it"), "{err}");
}

#[test]
fn v6_shared_by_threads_issues_no_duplicate() {
    // Four threads, one and ten ids at a time: each thread's increasing, none twice.
    let generator = UuidV6::new().unwrap();
    idkit_testkit::check_mixed_contention(generator, &[1, 10, 1, 10], 50_000);
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
