//! postgres-types' `ToSql` and `FromSql` for the column forms (the `postgres` and
//! `tokio-postgres` clients): `bigint`, and `uuid` or `bytea`.

use std::error::Error;

use postgres_types::{FromSql, IsNull, ToSql, Type, private::BytesMut, to_sql_checked};

use super::{BigInt, Bytes};

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for BigInt {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.to_i64()?.to_sql(ty, out)
    }
    fn accepts(ty: &Type) -> bool {
        <i64 as ToSql>::accepts(ty)
    }
    to_sql_checked!();
}

impl FromSql<'_> for BigInt {
    fn from_sql(ty: &Type, raw: &[u8]) -> Result<Self, BoxError> {
        Ok(Self::from_i64(i64::from_sql(ty, raw)?)?)
    }
    fn accepts(ty: &Type) -> bool {
        <i64 as FromSql>::accepts(ty)
    }
}

/// `uuid` for 16 bytes (and `bytea`, which a 16-byte id reads from too, and the idkit
/// extension's `ulid`), `bytea` otherwise.
fn accepts_bytes<const N: usize>(ty: &Type) -> bool {
    *ty == Type::BYTEA || (N == 16 && (*ty == Type::UUID || ty.name() == super::ULID_TYPE))
}

impl<const N: usize> ToSql for Bytes<N> {
    // `uuid` and `bytea` have the same binary form: the bytes themselves.
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        accepts_bytes::<N>(ty)
    }
    to_sql_checked!();
}

impl<const N: usize> FromSql<'_> for Bytes<N> {
    fn from_sql(_ty: &Type, raw: &[u8]) -> Result<Self, BoxError> {
        Ok(Self::from_slice(raw)?)
    }
    // Read from the extension's `typeid` too: the id types read it whole (a TypeID) or
    // refuse it with a typed error.
    fn accepts(ty: &Type) -> bool {
        accepts_bytes::<N>(ty) || (N == 16 && ty.name() == super::TYPEID_TYPE)
    }
}
