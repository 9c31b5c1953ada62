//! sqlx's MySQL and MariaDB traits for the column forms: `BIGINT` (signed, or `UNSIGNED` on
//! reading) and `BINARY(N)`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::mysql::{MySqlTypeInfo, MySqlValueRef};
use sqlx::{Decode, Encode, MySql, Type, ValueRef};

use super::{BigInt, Bytes};

impl Type<MySql> for BigInt {
    fn type_info() -> MySqlTypeInfo {
        <i64 as Type<MySql>>::type_info()
    }
    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <i64 as Type<MySql>>::compatible(ty) || <u64 as Type<MySql>>::compatible(ty)
    }
}

impl Encode<'_, MySql> for BigInt {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<'_, MySql>>::encode(self.to_i64()?, buf)
    }
}

impl Decode<'_, MySql> for BigInt {
    fn decode(value: MySqlValueRef<'_>) -> Result<Self, BoxDynError> {
        // An unsigned column holds every u64; a signed one must not hold a negative id.
        if <u64 as Type<MySql>>::compatible(&value.type_info()) {
            return Ok(Self(<u64 as Decode<MySql>>::decode(value)?));
        }
        Ok(Self::from_i64(<i64 as Decode<MySql>>::decode(value)?)?)
    }
}

impl<const N: usize> Type<MySql> for Bytes<N> {
    fn type_info() -> MySqlTypeInfo {
        <[u8] as Type<MySql>>::type_info()
    }
    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <[u8] as Type<MySql>>::compatible(ty)
    }
}

impl<const N: usize> Encode<'_, MySql> for Bytes<N> {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <&[u8] as Encode<MySql>>::encode(&self.0[..], buf)
    }
}

impl<const N: usize> Decode<'_, MySql> for Bytes<N> {
    fn decode(value: MySqlValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(Self::from_slice(<&[u8] as Decode<MySql>>::decode(value)?)?)
    }
}
