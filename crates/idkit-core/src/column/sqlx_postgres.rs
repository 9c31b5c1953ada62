//! sqlx's PostgreSQL traits for the column forms: `bigint`, and `uuid` or `bytea`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueFormat, PgValueRef};
use sqlx::{Decode, Encode, Postgres, Type, TypeInfo};

use super::{BigInt, Bytes, ULID_TYPE};

sqlx_bigint!(Postgres, PgTypeInfo, PgArgumentBuffer, PgValueRef<'_>);

impl<const N: usize> Type<Postgres> for Bytes<N> {
    fn type_info() -> PgTypeInfo {
        if N == 16 {
            <uuid::Uuid as Type<Postgres>>::type_info()
        } else {
            <Vec<u8> as Type<Postgres>>::type_info()
        }
    }
    // A 16-byte id reads from `bytea` too (a wrong width there is a `Width` error), and from
    // the idkit extension's `ulid`, whose binary form is its 16 bytes.
    fn compatible(ty: &PgTypeInfo) -> bool {
        <Vec<u8> as Type<Postgres>>::compatible(ty)
            || (N == 16
                && (<uuid::Uuid as Type<Postgres>>::compatible(ty)
                    || ty.name() == ULID_TYPE
                    || ty.name() == super::TYPEID_TYPE))
    }
}

impl<const N: usize> Encode<'_, Postgres> for Bytes<N> {
    // `uuid` and `bytea` have the same binary form: the bytes themselves.
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        buf.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
}

impl<const N: usize> Decode<'_, Postgres> for Bytes<N> {
    fn decode(value: PgValueRef<'_>) -> Result<Self, BoxDynError> {
        if value.format() == PgValueFormat::Text
            && N == 16
            && let Ok(uuid) = <uuid::Uuid as Decode<Postgres>>::decode(value.clone())
        {
            return Ok(Self::from_slice(uuid.as_bytes())?);
        }
        let bytes = <Vec<u8> as Decode<Postgres>>::decode(value)?;
        Ok(Self::from_slice(&bytes)?)
    }
}
