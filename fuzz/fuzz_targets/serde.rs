//! Every id type's serde deserialization from JSON (a string, or a number for 64-bit ids),
//! as an application reads ids from a request body.
//!
//! Deserializing never panics; what deserializes serializes to JSON that deserializes to the
//! same id.
#![no_main]

use std::fmt::Debug;

use idkit_all::snowflake::{Discord, Instagram, Mastodon, SnowflakeId, Sonyflake, Twitter};
use idkit_all::{Id, Marker};
use libfuzzer_sys::fuzz_target;
use serde::{Serialize, de::DeserializeOwned};

struct User;
impl Marker for User {
    const PREFIX: &'static str = "user";
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(data: &[u8]) {
    if let Ok(id) = serde_json::from_slice::<T>(data) {
        let json = serde_json::to_vec(&id).expect("an id serializes");
        let again: T = serde_json::from_slice(&json).expect("its JSON reads back");
        assert_eq!(again, id);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<SnowflakeId<Twitter>>(data);
    round_trip::<SnowflakeId<Discord>>(data);
    round_trip::<SnowflakeId<Instagram>>(data);
    round_trip::<SnowflakeId<Sonyflake>>(data);
    round_trip::<SnowflakeId<Mastodon>>(data);
    round_trip::<idkit_all::uuid::Uuid>(data);
    round_trip::<idkit_all::ulid::Ulid>(data);
    round_trip::<idkit_all::ksuid::Ksuid>(data);
    round_trip::<idkit_all::range::RangeId>(data);
    round_trip::<idkit_all::tsid::Tsid>(data);
    round_trip::<idkit_all::objectid::ObjectId>(data);
    round_trip::<idkit_all::typeid::TypeId>(data);
    round_trip::<Id<User, idkit_all::typeid::TypeId>>(data);
    round_trip::<Id<User, idkit_all::ulid::Ulid>>(data);
});
