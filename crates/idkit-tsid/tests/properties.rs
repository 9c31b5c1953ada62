//! Round trips, field bounds, ordering and the deterministic constructor.

use std::sync::Mutex;

use idkit_core::random::SeededRandom;
use idkit_core::{Codec, FieldValue, IdScheme, ManualClock};
use idkit_tsid::{EPOCH_MS, Tsid, TsidCodec, TsidGenerator};
use proptest::prelude::*;

proptest! {
    #[test]
    fn text_and_bytes_roundtrip(bits in any::<u64>()) {
        let id = Tsid(bits);
        let codec = TsidCodec::default();
        let text = codec.format(id);
        prop_assert_eq!(text.len(), 13);
        prop_assert_eq!(codec.parse(&text).unwrap(), id);
        prop_assert_eq!(codec.parse(&text.to_lowercase()).unwrap(), id);
        prop_assert_eq!(codec.read_raw(&codec.to_raw(id)).unwrap(), id);
        prop_assert_eq!(text.parse::<Tsid>().unwrap(), id);
    }

    #[test]
    fn text_order_is_numeric_order(a in any::<u64>(), b in any::<u64>()) {
        let codec = TsidCodec::default();
        prop_assert_eq!(a.cmp(&b), codec.format(Tsid(a)).cmp(&codec.format(Tsid(b))));
    }

    #[test]
    fn fields_hold_what_was_generated(node_bits in 0u32..=20, node_seed in any::<u64>(), ms in 0u64..1_000_000) {
        let node = node_seed & ((1 << node_bits) - 1);
        let clock = ManualClock::new(EPOCH_MS + ms);
        let generator = TsidGenerator::with_parts(&clock, SeededRandom::new(node_seed), node_bits, node).unwrap();
        let codec = TsidCodec::with_node_bits(node_bits);
        for id in generator.take(20).unwrap() {
            let decoded = codec.decode(id);
            prop_assert_eq!(decoded.field("node"), Some(&FieldValue::Int(node)));
            prop_assert!(decoded.timestamp_ms.unwrap() >= EPOCH_MS + ms);
        }
    }

    #[test]
    fn parse_never_panics(text in "\\PC{0,20}") {
        let _ = TsidCodec::default().parse(&text);
    }
}

#[test]
fn ids_increase_under_contention() {
    let generator = Mutex::new(TsidGenerator::with_node(10, 3).unwrap());
    idkit_testkit::check_contention(generator, 4, 5_000, 1);
}

#[test]
fn seeded_generators_repeat_themselves() {
    idkit_testkit::check_seeded(
        |clock, random| TsidGenerator::with_parts(clock, random, 10, 1).unwrap(),
        5_000,
    );
}
