//! serde for every scheme's id type: the canonical string in JSON (decimal strings for
//! 64-bit ids), the compact form in a binary format (postcard), typed ids, and the opt-in
//! JSON numbers. Run by scripts/test.sh (`--features live-tests`, which turns on `serde`).
#![cfg(feature = "serde")]

use std::fmt::Debug;
use std::time::Duration;

use idkit_core::id::{Id, IdType, Marker, as_number};
use idkit_core::{IdScheme, id::FromGenerated};
use idkit_objectid::{ObjectId, ObjectIdGenerator};
use idkit_range::{RangeAllocator, RangeId, SqliteStore};
use idkit_snowflake::{
    Boundary, Discord, Instagram, Layout, Mastodon, Snowflake, SnowflakeId, Sonyflake, Twitter,
};
use idkit_tsid::{Tsid, TsidGenerator};
use idkit_typeid::{Prefix, TypeId, TypeIdGenerator};
use serde::{Serialize, de::DeserializeOwned};

struct User;
impl Marker for User {
    const PREFIX: &'static str = "user";
}
struct Order;
impl Marker for Order {
    const PREFIX: &'static str = "order";
}

/// JSON holds the canonical string; postcard the column form, at most `max_binary` bytes.
fn check<T>(ids: &[T], max_binary: usize)
where
    T: IdType + Serialize + DeserializeOwned + Debug,
{
    for id in ids {
        let json = serde_json::to_string(id).unwrap();
        assert_eq!(json, format!("\"{id}\""), "{id:?}");
        assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), id);
        let bytes = postcard::to_allocvec(id).unwrap();
        assert!(bytes.len() <= max_binary, "{id:?}: {} bytes", bytes.len());
        assert_eq!(&postcard::from_bytes::<T>(&bytes).unwrap(), id);
    }
    assert!(serde_json::from_str::<T>("\"not an id\"").is_err());
}

fn make<G: IdScheme, T: FromGenerated<G::Id>>(generator: &G) -> Vec<T> {
    (0..200).map(|_| generator.next_as().unwrap()).collect()
}

/// 200 ids of a Snowflake preset, its machine `field` (where it has one) set to 1.
fn flakes<L: Layout>(layout: L, field: Option<&str>) -> Vec<SnowflakeId<L>> {
    let builder = Snowflake::builder(layout);
    let builder = match field {
        Some(name) => builder.field(name, 1),
        None => builder,
    };
    make(&builder.build().unwrap())
}

#[test]
fn every_scheme_round_trips_through_json_and_postcard() {
    // 64-bit ids: a varint of at most 10 bytes; N-byte ids: N bytes and a length byte.
    check(&flakes(Twitter, Some("worker")), 10);
    check(&flakes(Discord, Some("worker")), 10);
    check(&flakes(Instagram, Some("shard")), 10);
    check(&flakes(Sonyflake, Some("machine")), 10);
    check(&flakes(Mastodon, None), 10);
    check(&flakes(Boundary, Some("worker")), 17);
    check::<uuid::Uuid>(&make(&idkit_uuid::UuidV4::new()), 17);
    check::<uuid::Uuid>(&make(&idkit_uuid::UuidV7::new()), 17);
    check::<idkit_ulid::Ulid>(&make(&idkit_ulid::UlidGenerator::new()), 17);
    check::<idkit_ksuid::Ksuid>(&make(&idkit_ksuid::KsuidGenerator::new()), 21);
    check::<Tsid>(&make(&TsidGenerator::with_node(10, 3).unwrap()), 10);
    check::<ObjectId>(&make(&ObjectIdGenerator::new()), 13);
    // A plain TypeID's binary form is its UUID: the prefix comes back from a marker
    // (`typed_ids_carry_their_type`), so the plain one round-trips with the empty prefix.
    check::<TypeId>(&make(&TypeIdGenerator::new(Prefix::EMPTY)), 17);
    let dir = idkit_testkit::Scratch::new("serde");
    let store = SqliteStore::open(dir.join("ids.db"), Duration::from_secs(5)).unwrap();
    let range = RangeAllocator::builder(store)
        .namespace("serde")
        .build()
        .unwrap();
    check::<RangeId>(&make(&range), 10);
}

#[test]
fn a_snowflake_id_above_2_pow_53_survives_json() {
    let generator = Snowflake::builder(Twitter)
        .field("worker", 1)
        .build()
        .unwrap();
    let id: SnowflakeId<Twitter> = generator.next_as().unwrap();
    assert!(id.word() > 1 << 53, "a Twitter id made today is above 2^53");
    let json = serde_json::to_value(id).unwrap();
    // A string: JSON.parse in a browser keeps every digit.
    assert_eq!(json, serde_json::Value::String(id.word().to_string()));
    let back: SnowflakeId<Twitter> = serde_json::from_value(json).unwrap();
    assert_eq!(back, id);
    // What a JavaScript number would have made of it: a different id.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let as_double = (id.word() as f64) as u64;
    assert_ne!(
        as_double,
        id.word() | 1,
        "the double rounds the low bits away"
    );
}

#[test]
fn as_number_writes_json_numbers_on_request() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Row {
        #[serde(with = "as_number")]
        id: SnowflakeId<Discord>,
    }
    let row = Row {
        id: "175928847299117063".parse().unwrap(),
    };
    let json = serde_json::to_string(&row).unwrap();
    assert_eq!(json, r#"{"id":175928847299117063}"#);
    assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
    // Twitter ids keep the sign bit zero: a number with it set is not a Twitter id.
    #[derive(serde::Deserialize, Debug)]
    struct TwitterRow {
        #[serde(with = "as_number")]
        #[allow(dead_code)]
        id: SnowflakeId<Twitter>,
    }
    let err = serde_json::from_str::<TwitterRow>(r#"{"id":9223372036854775808}"#).unwrap_err();
    assert!(err.to_string().contains("bit 63 is set"), "{err}");
}

#[test]
fn typed_ids_carry_their_type() {
    let generator = TypeIdGenerator::new(Prefix::EMPTY);
    let user: Id<User, TypeId> = generator.next_as().unwrap();
    let text = serde_json::to_string(&user).unwrap();
    assert!(text.starts_with("\"user_"), "{text}");
    assert_eq!(
        serde_json::from_str::<Id<User, TypeId>>(&text).unwrap(),
        user
    );
    // The marker supplies the prefix, so an order id is never read as a user id.
    let err = serde_json::from_str::<Id<Order, TypeId>>(&text).unwrap_err();
    assert!(err.to_string().contains("expected \"order\""), "{err}");
    // Binary formats hold only the UUID; the marker gives the prefix back.
    let bytes = postcard::to_allocvec(&user).unwrap();
    let back: Id<User, TypeId> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, user);
    assert_eq!(back.get().prefix().as_str(), "user");

    // Typed ids of a scheme without a type name are the id itself in every format.
    let twitter = Snowflake::builder(Twitter)
        .field("worker", 1)
        .build()
        .unwrap();
    let order: Id<Order, SnowflakeId<Twitter>> = twitter.next_as().unwrap();
    assert_eq!(
        serde_json::to_string(&order).unwrap(),
        format!("\"{order}\"")
    );
    assert_eq!(std::mem::size_of_val(&order), 8);
}
