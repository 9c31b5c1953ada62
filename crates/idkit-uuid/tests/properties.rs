//! Round trips, parse robustness and the shared conformance checks.

use std::sync::Mutex;

use idkit_core::{Codec, Erased};
use idkit_uuid::{Uuid, UuidCodec, UuidV4, UuidV7};
use proptest::prelude::*;

proptest! {
    #[test]
    fn text_and_bytes_roundtrip(bits in any::<u128>()) {
        for codec in [UuidCodec::V4, UuidCodec::V7] {
            let v = if codec == UuidCodec::V4 { 0x4 } else { 0x7 };
            let id = Uuid::from_u128((bits & 0xffff_ffff_ffff_0fff_3fff_ffff_ffff_ffff) | (v << 76) | (0b10 << 62));
            prop_assert_eq!(codec.parse(&codec.format(id)).unwrap(), id);
            prop_assert_eq!(codec.read_raw(&codec.to_raw(id)).unwrap(), id);
        }
    }

    #[test]
    fn parse_never_panics(text in "\\PC{0,40}") {
        let _ = UuidCodec::V4.parse(&text);
        let _ = UuidCodec::V7.parse(&text);
    }
}

#[test]
fn conformance() {
    idkit_testkit::check_dyn(&Erased::new(UuidV4::new(), UuidCodec::V4), 10_000);
    idkit_testkit::check_dyn(
        &Erased::new(Mutex::new(UuidV7::new()), UuidCodec::V7),
        10_000,
    );
    idkit_testkit::check_sequence(&UuidV7::new(), 200_000);
    let shared = Mutex::new(UuidV7::new());
    idkit_testkit::check_contention(shared, 4, 50_000, 1);
}

/// The deterministic constructors: a manual clock and a seeded source give the same ids on
/// every run; another seed gives others.
#[test]
fn seeded_generators_repeat_themselves() {
    idkit_testkit::check_seeded(UuidV7::with_source, 50);
    idkit_testkit::check_seeded(|_, random| UuidV4::with_source(random), 50);
}
