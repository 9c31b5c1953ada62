//! Round trips, typed codecs, ordering and the deterministic constructor.

use idkit_core::random::SeededRandom;
use idkit_core::{Codec, IdScheme, ManualClock};
use idkit_typeid::{Prefix, TypeId, TypeIdCodec, TypeIdGenerator};
use proptest::prelude::*;

proptest! {
    #[test]
    fn text_and_bytes_roundtrip(prefix in "([a-z]([a-z_]{0,61}[a-z])?)?", uuid in any::<u128>()) {
        let id = TypeId::new(Prefix::new(&prefix).unwrap(), uuid);
        let text = id.to_string();
        prop_assert_eq!(text.parse::<TypeId>().unwrap(), id);
        let typed = TypeIdCodec::typed(id.prefix());
        prop_assert_eq!(typed.parse(&text).unwrap(), id);
        prop_assert_eq!(typed.read_raw(&typed.to_raw(id)).unwrap(), id);
        prop_assert_eq!(text.len(), typed.info().string_len as usize);
    }

    #[test]
    fn suffix_order_is_uuid_order(a in any::<u128>(), b in any::<u128>()) {
        let text = |u| TypeId::new(Prefix::EMPTY, u).to_string();
        prop_assert_eq!(a.cmp(&b), text(a).cmp(&text(b)));
    }

    #[test]
    fn parse_never_panics(text in "\\PC{0,100}") {
        let _ = TypeIdCodec::any().parse(&text);
    }
}

#[test]
fn a_typed_codec_refuses_another_type() {
    let users = TypeIdCodec::typed(Prefix::new("user").unwrap());
    assert!(users.parse("user_01h455vb4pex5vsknk084sn02q").is_ok());
    assert_eq!(
        users
            .parse("post_01h455vb4pex5vsknk084sn02q")
            .unwrap_err()
            .to_string(),
        "invalid id: type prefix \"post\", expected \"user\""
    );
    assert!(users.parse("01h455vb4pex5vsknk084sn02q").is_err());
}

#[test]
fn generated_ids_are_uuidv7_and_increase() {
    let clock = ManualClock::new(1_700_000_000_000);
    let generator =
        TypeIdGenerator::with_source(Prefix::new("order").unwrap(), &clock, SeededRandom::new(3));
    let ids = generator.take(1_000).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    for id in &ids {
        assert_eq!(id.timestamp_ms(), Some(1_700_000_000_000));
        assert!(id.to_string().starts_with("order_"));
    }
    let clock2 = ManualClock::new(1_700_000_000_000);
    let replay =
        TypeIdGenerator::with_source(Prefix::new("order").unwrap(), &clock2, SeededRandom::new(3))
            .take(1_000)
            .unwrap();
    assert_eq!(
        replay, ids,
        "a seeded source and a manual clock repeat themselves"
    );
}
