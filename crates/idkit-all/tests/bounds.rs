//! Time bounds: for every scheme of the registry, the lowest and highest ids of a time hold
//! every id made at that time and no id of the times beside it.

mod common;

use idkit_all::registry::{Entry, Options, Scheme, schemes};
use idkit_core::ComposeErrorKind;

/// Every registered scheme, built.
fn built() -> Vec<(&'static Entry, Scheme)> {
    common::build_each(schemes().iter().copied(), "bounds-range")
        .into_iter()
        .map(|(entry, scheme)| (entry, scheme.unwrap()))
        .collect()
}

#[test]
fn the_bounds_of_an_ids_time_hold_it_and_the_times_beside_do_not() {
    for (entry, scheme) in built() {
        let codec = entry.codec();
        let Some(precision) = entry.info().time_precision_ms else {
            common::refused_for_no_time(entry, codec.bounds_raw(1_700_000_000_000, &[]));
            continue;
        };
        for id in common::made(&scheme, 2_000) {
            let ms = codec.decode_raw(&id).unwrap().timestamp_ms.unwrap();
            let at = codec.bounds_raw(ms, &[]).unwrap();
            assert!(at.holds(&id), "{}: {id:?} outside {at:?}", entry.name());
            // Both bounds are ids of the scheme, of the same time.
            for bound in [at.lowest, at.highest] {
                let decoded = codec.decode_raw(&bound).unwrap();
                assert_eq!(decoded.timestamp_ms, Some(ms), "{}", entry.name());
            }
            // Any time within the same tick gives the same bounds.
            assert_eq!(codec.bounds_raw(ms + precision - 1, &[]).unwrap(), at);
            let next = codec.bounds_raw(ms + precision, &[]).unwrap();
            let before = codec.bounds_raw(ms - precision, &[]).unwrap();
            assert!(before.highest < at.lowest && at.highest < next.lowest);
        }
        // The last time the scheme holds has bounds; the next one has none.
        if let Some(last) = entry.info().time_runs_out_ms {
            assert!(codec.bounds_raw(last, &[]).is_ok(), "{}", entry.name());
            if let Some(past) = last.checked_add(1) {
                let e = codec.bounds_raw(past, &[]).unwrap_err();
                assert_eq!(
                    e.kind(),
                    ComposeErrorKind::TimeOutOfRange,
                    "{}",
                    entry.name()
                );
            }
        }
    }
}

#[test]
fn a_snowflake_layouts_bounds_hold_its_fields() {
    let entry = idkit_all::registry::find("snowflake-twitter").unwrap();
    let mut options = Options::default();
    options.set_field("datacenter", 3);
    options.set_field("worker", 9);
    let scheme = entry.build(&options).unwrap();
    let codec = entry.codec();
    let id = scheme.next_raw().unwrap();
    let ms = codec.decode_raw(&id).unwrap().timestamp_ms.unwrap();
    let mine = [("datacenter", 3), ("worker", 9)];
    let b = codec.bounds_raw(ms, &mine).unwrap();
    assert!(b.holds(&id));
    // The range of one worker: 4,096 sequence values.
    assert_eq!(
        b.highest.to_u64().unwrap() - b.lowest.to_u64().unwrap(),
        4095
    );
    let other = codec
        .bounds_raw(ms, &[("datacenter", 3), ("worker", 10)])
        .unwrap();
    assert!(!other.holds(&id));
    for (fields, kind) in [
        (&[("shard", 1)][..], ComposeErrorKind::UnknownField),
        (&[("worker", 32)][..], ComposeErrorKind::FieldOutOfRange),
    ] {
        assert_eq!(codec.bounds_raw(ms, fields).unwrap_err().kind(), kind);
    }
    // Before Twitter's epoch.
    let early = codec.bounds_raw(1_000, &[]).unwrap_err();
    assert_eq!(early.kind(), ComposeErrorKind::TimeOutOfRange);
}

#[test]
fn schemes_of_time_and_random_bits_take_no_fields() {
    for name in ["ulid", "uuid-v7", "ksuid", "objectid", "typeid"] {
        let codec = idkit_all::registry::find(name).unwrap().codec();
        let e = codec
            .bounds_raw(1_700_000_000_000, &[("worker", 1)])
            .unwrap_err();
        assert_eq!(e.kind(), ComposeErrorKind::UnknownField, "{name}: {e}");
    }
}
