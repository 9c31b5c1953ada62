//! The column decoders: every id type read from its column form (`BigInt` or `Bytes<N>`),
//! from the PostgreSQL binary protocol (`FromSql` for `bigint`, `uuid`, `bytea` and the
//! extension's `ulid` and `typeid`), and a TypeID from the extension's prefixed value.
//!
//! Reading never panics; an id read writes back the same column value.
#![no_main]

use std::fmt::Debug;

use idkit_all::snowflake::{SnowflakeId, Sonyflake, Twitter};
use idkit_all::{Id, IdType, Marker};
use idkit_core::column::{BigInt, Bytes};
use libfuzzer_sys::fuzz_target;
use postgres_types::{FromSql, Kind, Type};

struct User;
impl Marker for User {
    const PREFIX: &'static str = "user";
}

fn bytes<T: IdType<Column = Bytes<N>> + Debug, const N: usize>(data: &[u8]) {
    if let Ok(column) = Bytes::<N>::from_slice(data) {
        if let Ok(id) = T::from_column(column) {
            assert_eq!(id.to_column().0, column.0, "{id:?}");
        }
    }
}

fn int<T: IdType<Column = BigInt> + Debug>(data: &[u8]) {
    let Some(word) = data.get(..8) else {
        return;
    };
    let v = i64::from_be_bytes(word.try_into().unwrap());
    if let Ok(column) = BigInt::from_i64(v) {
        if let Ok(id) = T::from_column(column) {
            assert_eq!(id.to_column().0, column.0, "{id:?}");
        }
    }
}

/// `T` from a PostgreSQL binary value of each type it could be sent as.
fn pg<T: for<'a> FromSql<'a>>(data: &[u8], types: &[Type]) {
    for ty in types {
        if T::accepts(ty) {
            let _ = T::from_sql(ty, data);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    int::<SnowflakeId<Twitter>>(data);
    int::<SnowflakeId<Sonyflake>>(data);
    int::<idkit_all::range::RangeId>(data);
    int::<idkit_all::tsid::Tsid>(data);
    bytes::<idkit_all::uuid::Uuid, 16>(data);
    bytes::<idkit_all::ulid::Ulid, 16>(data);
    bytes::<idkit_all::typeid::TypeId, 16>(data);
    bytes::<idkit_all::ksuid::Ksuid, 20>(data);
    bytes::<idkit_all::objectid::ObjectId, 12>(data);
    if let Ok(id) = idkit_all::typeid::TypeId::from_prefixed_column(data) {
        // The prefixed value is the UUID's 16 bytes, then the prefix.
        assert_eq!(&data[..16], &id.to_column().0);
    }
    let _ = Id::<User, idkit_all::typeid::TypeId>::from_prefixed_column(data);
    let ulid = Type::new("ulid".into(), 0, Kind::Simple, "public".into());
    let typeid = Type::new("typeid".into(), 0, Kind::Simple, "public".into());
    let types = [Type::INT8, Type::UUID, Type::BYTEA, ulid, typeid];
    pg::<SnowflakeId<Twitter>>(data, &types);
    pg::<idkit_all::tsid::Tsid>(data, &types);
    pg::<idkit_all::ulid::Ulid>(data, &types);
    pg::<idkit_all::typeid::TypeId>(data, &types);
    pg::<Id<User, idkit_all::typeid::TypeId>>(data, &types);
    pg::<idkit_all::ksuid::Ksuid>(data, &types);
    pg::<idkit_all::objectid::ObjectId>(data, &types);
});
