//! rusqlite's `ToSql` and `FromSql` for the column forms: `INTEGER` and `BLOB`.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use super::{BigInt, Bytes};

impl ToSql for BigInt {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let v = self
            .to_i64()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(ToSqlOutput::from(v))
    }
}

impl FromSql for BigInt {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Self::from_i64(value.as_i64()?).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

impl<const N: usize> ToSql for Bytes<N> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(&self.0[..]))
    }
}

impl<const N: usize> FromSql for Bytes<N> {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Self::from_slice(value.as_blob()?).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}
