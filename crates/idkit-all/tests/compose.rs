//! Ids from their parts: for every scheme of the registry with a time, the id composed from
//! a made id's time and the parts `decode` gives is that id; the examples of the schemes'
//! specifications come out of their parts; bad parts get typed errors.

mod common;

use idkit_all::registry;
use idkit_core::{ComposeErrorKind, DynCodec, FieldValue, RawId};

/// The parts of `id` as `compose_raw` takes them: `decode`'s numbers and hex fields, less
/// those that are not parts (a UUID's version, fixed by the codec).
fn parts(codec: &dyn DynCodec, id: &RawId) -> (u64, Vec<(&'static str, u128)>) {
    let decoded = codec.decode_raw(id).unwrap();
    let parts = decoded
        .fields
        .iter()
        .filter(|(name, _)| *name != "version")
        .filter_map(|(name, value)| match value {
            FieldValue::Int(n) => Some((*name, u128::from(*n))),
            FieldValue::Hex(hex) => Some((*name, u128::from_str_radix(hex, 16).unwrap())),
            FieldValue::Text(_) => None,
        })
        .collect();
    (decoded.timestamp_ms.unwrap(), parts)
}

#[test]
fn an_id_is_composed_again_from_its_time_and_parts() {
    let mut composed = Vec::new();
    for (entry, scheme) in common::build_each(registry::all(), "compose-range") {
        let codec = entry.codec();
        let Ok(scheme) = scheme else {
            continue; // versions made from names or a caller's bits: tested below
        };
        if entry.info().time_precision_ms.is_none() {
            common::refused_for_no_time(entry, codec.compose_raw(1_700_000_000_000, &[]));
            continue;
        }
        for id in common::made(&scheme, 500) {
            let (ms, mut parts) = parts(&*codec, &id);
            match entry.name() {
                // A TypeID's parts are its UUIDv7's.
                "typeid" => {
                    let uuid = codec.decode_raw(&id).unwrap();
                    let Some((_, FieldValue::Text(uuid))) =
                        uuid.fields.iter().find(|(name, _)| *name == "uuid")
                    else {
                        panic!("typeid decodes without its uuid");
                    };
                    let v7 = registry::find("uuid-v7").unwrap().codec();
                    parts = self::parts(&*v7, &v7.parse_raw(uuid).unwrap()).1;
                }
                // A UUIDv6 counts 100 ns ticks within the millisecond; composing takes
                // the millisecond's first tick.
                "uuid-v6" => {
                    let not_ticks = |(name, _): &(&str, u128)| *name != "ticks_100ns_since_1582";
                    parts.retain(not_ticks);
                    let (again_ms, mut again) =
                        self::parts(&*codec, &codec.compose_raw(ms, &parts).unwrap());
                    again.retain(not_ticks);
                    assert_eq!((again_ms, again), (ms, parts));
                    continue;
                }
                _ => {}
            }
            let again = codec.compose_raw(ms, &parts).unwrap_or_else(|e| {
                panic!("{}: {id:?} from {ms} and {parts:?}: {e}", entry.name())
            });
            assert_eq!(again, id, "{}: from {ms} and {parts:?}", entry.name());
        }
        composed.push(entry.name());
    }
    for name in [
        "snowflake-twitter",
        "ulid",
        "uuid-v7",
        "uuid-v6",
        "ksuid",
        "objectid",
        "tsid",
        "typeid",
    ] {
        assert!(
            composed.contains(&name),
            "{name} not composed: {composed:?}"
        );
    }
}

/// A scheme, a time, its parts, and the id they make.
type Example<'a> = (&'a str, u64, &'a [(&'a str, u128)], &'a str);

/// Examples of the specifications, made from the parts they name.
#[test]
fn the_specifications_examples_come_out_of_their_parts() {
    let twitter = ((1_000_u64 << 22) | (5 << 17) | (3 << 12) | 7).to_string();
    let cases: [Example<'_>; 6] = [
        // RFC 9562 appendix A.6 (version 7): unix_ts_ms 0x017F22E279B0, rand_a 0xCC3,
        // rand_b 0x18C4DC0C0C07398F.
        (
            "uuid-v7",
            0x017F_22E2_79B0,
            &[("rand_a", 0xCC3), ("rand_b", 0x18C4_DC0C_0C07_398F)],
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        ),
        // RFC 9562 appendix A.5 (version 6) and A.1 (version 1): 2022-02-22T19:22:22Z,
        // clock_seq 0x33C8, node 0x9F6BDECED846.
        (
            "uuid-v6",
            1_645_557_742_000,
            &[("clock_seq", 0x33C8), ("node", 0x9F6B_DECE_D846)],
            "1ec9414c-232a-6b00-b3c8-9f6bdeced846",
        ),
        (
            "uuid-v1",
            1_645_557_742_000,
            &[("clock_seq", 0x33C8), ("node", 0x9F6B_DECE_D846)],
            "c232ab00-9414-11ec-b3c8-9f6bdeced846",
        ),
        // Segment's KSUID README: 0ujtsYcgvSTl8PAuAdqWYSMnLOv, time 107608047 (since
        // 2014-05-13T16:53:20Z), payload B5A1CD34B5F99D1154FB6853345C9735.
        (
            "ksuid",
            (1_400_000_000 + 107_608_047) * 1000,
            &[("payload", 0xB5A1_CD34_B5F9_9D11_54FB_6853_345C_9735)],
            "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
        ),
        // The Twitter Snowflake layout: 41 bits of ms since 1288834974657, datacenter 5,
        // worker 3, sequence 7.
        (
            "snowflake-twitter",
            1_288_834_974_657 + 1_000,
            &[("datacenter", 5), ("worker", 3), ("sequence", 7)],
            &twitter,
        ),
        // The ULID spec's example, 01ARZ3NDEKTSV4RRFFQ69G5FAV at 1469922850259 ms.
        (
            "ulid",
            1_469_922_850_259,
            &[("randomness", 0xD676_4C61_EFB9_9302_BD5B)],
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        ),
    ];
    for (scheme, ms, parts, want) in cases {
        let codec = registry::find(scheme).unwrap().codec();
        let id = codec.compose_raw(ms, parts).unwrap();
        assert_eq!(codec.format_raw(&id).unwrap(), want, "{scheme}");
    }
}

#[test]
fn bad_parts_get_typed_errors() {
    let kind = |scheme: &str, ms: u64, parts: &[(&str, u128)]| {
        let codec = registry::find(scheme).unwrap().codec();
        codec.compose_raw(ms, parts).unwrap_err().kind()
    };
    let now = 1_800_000_000_000;
    // A part the scheme does not have, and the message lists those it has.
    assert_eq!(
        kind("ulid", now, &[("worker", 1)]),
        ComposeErrorKind::UnknownField
    );
    let codec = registry::find("objectid").unwrap().codec();
    let e = codec.compose_raw(now, &[("node", 1)]).unwrap_err();
    assert!(e.to_string().contains("random, counter"), "{e}");
    // Wider than the part.
    for (scheme, part, bits) in [
        ("ulid", "randomness", 80),
        ("uuid-v7", "rand_a", 12),
        ("uuid-v7", "rand_b", 62),
        ("uuid-v6", "clock_seq", 14),
        ("uuid-v6", "node", 48),
        ("objectid", "counter", 24),
        ("tsid", "counter", 12),
        ("snowflake-twitter", "sequence", 12),
    ] {
        assert_eq!(
            kind(scheme, now, &[(part, 1 << bits)]),
            ComposeErrorKind::FieldOutOfRange,
            "{scheme} {part}"
        );
        let codec = registry::find(scheme).unwrap().codec();
        assert!(codec.compose_raw(now, &[(part, (1 << bits) - 1)]).is_ok());
    }
    // Times the scheme does not hold.
    assert_eq!(kind("ksuid", 0, &[]), ComposeErrorKind::TimeOutOfRange);
    assert_eq!(kind("ulid", 1 << 48, &[]), ComposeErrorKind::TimeOutOfRange);
    assert_eq!(
        kind("snowflake-twitter", 0, &[]),
        ComposeErrorKind::TimeOutOfRange
    );
    // Schemes whose ids hold no time.
    for scheme in ["uuid-v4", "uuid-v3", "uuid-v5", "uuid-v8"] {
        assert_eq!(kind(scheme, now, &[]), ComposeErrorKind::NoTime, "{scheme}");
        let codec = registry::find(scheme).unwrap().codec();
        let e = codec.compose_raw(now, &[]).unwrap_err();
        assert!(e.to_string().contains(scheme), "{e}");
    }
}
