//! sqlx's SQLite traits for the column forms: `INTEGER` and `BLOB`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Sqlite, Type};

use super::{BigInt, Bytes};

sqlx_bigint!(
    Sqlite,
    SqliteTypeInfo,
    SqliteArgumentsBuffer,
    SqliteValueRef<'_>
);

impl<const N: usize> Type<Sqlite> for Bytes<N> {
    fn type_info() -> SqliteTypeInfo {
        <Vec<u8> as Type<Sqlite>>::type_info()
    }
    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <Vec<u8> as Type<Sqlite>>::compatible(ty)
    }
}

impl<const N: usize> Encode<'_, Sqlite> for Bytes<N> {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <&[u8] as Encode<Sqlite>>::encode(&self.0[..], buf)
    }
}

impl<const N: usize> Decode<'_, Sqlite> for Bytes<N> {
    fn decode(value: SqliteValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(Self::from_slice(<&[u8] as Decode<Sqlite>>::decode(value)?)?)
    }
}
