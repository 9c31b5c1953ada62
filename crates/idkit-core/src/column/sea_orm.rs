//! SeaORM's traits for the column forms (feature `sea-orm`): a [`BigInt`] is a
//! `Value::BigInt` (`BIGINT`, SQLite `INTEGER`), a [`Bytes<16>`] a `Value::Uuid` (PostgreSQL
//! `uuid`; sqlx writes it as 16 bytes to MySQL `BINARY(16)` and a SQLite `BLOB`), other
//! widths `Value::Bytes` (`bytea`, `BINARY(N)`, `BLOB`).
//!
//! [`id_type!`](crate::id_type) gives an id type `ValueType`, `Nullable`, `TryGetable`,
//! `TryFromU64` and `From<T> for Value` through its form, so it can be an entity's field and
//! primary key (with `auto_increment = false`: the application makes the id). A row's value
//! that is no id fails with `DbErr::TryIntoErr` whose `source` is the [`ColumnError`];
//! `ValueType::try_from` can only say `ValueTypeErr`, which carries nothing. SeaORM's
//! conversion into a `Value` cannot fail: a 64-bit id with its top bit set becomes a null,
//! which a key or `NOT NULL` column refuses, never a negative number.
//!
//! A row's value or a `Value` that is text (`Value::String`: a column `idkit_ulid_text()` or
//! `idkit_typeid()` fills, a `text` key) is read as the id's canonical text. Writing, SeaORM's
//! `Value` does not know the backend, so an id always goes as its column form: a TypeID as
//! its UUID, which in SQLite is a 16-byte blob beside the text `idkit_typeid()` writes. To
//! write TypeIDs into a SQLite column the SQL functions also fill, bind its text
//! (`id.to_string()`) there.

use std::sync::Arc;

use sea_orm::sea_query::{ArrayType, ColumnType, Value, ValueTypeErr};
use sea_orm::{ColIdx, DbErr, QueryResult, TryGetError, TryGetable};

use super::{BigInt, Bytes, ColumnError};

/// How a column form is a SeaORM value. Used by [`id_type!`](crate::id_type); implemented by
/// the two forms only.
pub trait SeaOrmColumn: Sized {
    /// The value of an id of this form.
    ///
    /// # Errors
    ///
    /// [`ColumnError`] for a 64-bit id with its top bit set.
    fn to_value(self) -> Result<Value, ColumnError>;

    /// The form back from a value.
    ///
    /// # Errors
    ///
    /// [`ColumnError`] for a negative number or bytes of the wrong width; `None` for a value
    /// of another type or a null.
    fn from_value(value: Value) -> Option<Result<Self, ColumnError>>;

    /// A null of this form's type.
    fn null() -> Value;

    /// The column type SeaORM declares for this form.
    fn column_type() -> ColumnType;

    /// The array element type.
    fn array_type() -> ArrayType;

    /// Reads the form from a row.
    ///
    /// # Errors
    ///
    /// The driver's error for a value of another type, [`TryGetError::Null`] for a null, and
    /// `DbErr::TryIntoErr` with the [`ColumnError`] as its source for a value that is no id.
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError>;
}

/// A [`ColumnError`] as SeaORM reports a failed conversion of a row's value.
pub(crate) fn get_error(e: ColumnError, into: &'static str) -> TryGetError {
    TryGetError::DbErr(DbErr::TryIntoErr {
        from: "column value",
        into,
        source: Arc::new(e),
    })
}

impl SeaOrmColumn for BigInt {
    fn to_value(self) -> Result<Value, ColumnError> {
        Ok(Value::BigInt(Some(self.to_i64()?)))
    }

    fn from_value(value: Value) -> Option<Result<Self, ColumnError>> {
        match value {
            Value::BigInt(Some(v)) => Some(Self::from_i64(v)),
            Value::BigUnsigned(Some(v)) => Some(Ok(Self(v))),
            _ => None,
        }
    }

    fn null() -> Value {
        Value::BigInt(None)
    }

    fn column_type() -> ColumnType {
        ColumnType::BigInteger
    }

    fn array_type() -> ArrayType {
        ArrayType::BigInt
    }

    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
        let v = i64::try_get_by(res, index)?;
        Self::from_i64(v).map_err(|e| get_error(e, "a 64-bit id"))
    }
}

impl<const N: usize> SeaOrmColumn for Bytes<N> {
    fn to_value(self) -> Result<Value, ColumnError> {
        Ok(match uuid::Uuid::from_slice(&self.0) {
            Ok(uuid) if N == 16 => Value::Uuid(Some(uuid)),
            _ => Value::Bytes(Some(self.0.to_vec())),
        })
    }

    fn from_value(value: Value) -> Option<Result<Self, ColumnError>> {
        match value {
            Value::Uuid(Some(uuid)) => Some(Self::from_slice(uuid.as_bytes())),
            Value::Bytes(Some(bytes)) => Some(Self::from_slice(&bytes)),
            _ => None,
        }
    }

    fn null() -> Value {
        if N == 16 {
            Value::Uuid(None)
        } else {
            Value::Bytes(None)
        }
    }

    fn column_type() -> ColumnType {
        if N == 16 {
            ColumnType::Uuid
        } else {
            ColumnType::Binary(u32::try_from(N).unwrap_or(u32::MAX))
        }
    }

    fn array_type() -> ArrayType {
        if N == 16 {
            ArrayType::Uuid
        } else {
            ArrayType::Bytes
        }
    }

    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
        let into = "an id of bytes";
        if N != 16 {
            let bytes = Vec::<u8>::try_get_by(res, index)?;
            return Self::from_slice(&bytes).map_err(|e| get_error(e, into));
        }
        // PostgreSQL `uuid`; MySQL and SQLite hold the 16 bytes, which sqlx also reads as a
        // UUID, and a value of another width is read again as bytes for a typed error.
        match uuid::Uuid::try_get_by(res, index) {
            Ok(uuid) => Self::from_slice(uuid.as_bytes()).map_err(|e| get_error(e, into)),
            Err(TryGetError::Null(column)) => Err(TryGetError::Null(column)),
            Err(first) => match Vec::<u8>::try_get_by(res, index) {
                Ok(bytes) => Self::from_slice(&bytes).map_err(|e| get_error(e, into)),
                Err(_) => Err(first),
            },
        }
    }
}

/// `ValueType::try_from` of an id type through its form; used by
/// [`id_type!`](crate::id_type).
///
/// # Errors
///
/// `ValueTypeErr` for a value of another type, a null, or a value that is no id.
#[doc(hidden)]
pub fn from_value<T: crate::id::IdType>(value: Value) -> Result<T, ValueTypeErr>
where
    T::Column: SeaOrmColumn,
{
    if let Value::String(Some(text)) = &value {
        return T::parse_text(text).map_err(|_| ValueTypeErr);
    }
    match T::Column::from_value(value) {
        Some(Ok(column)) => {
            crate::id::__private::from_column::<T>(column).map_err(|_| ValueTypeErr)
        }
        _ => Err(ValueTypeErr),
    }
}

/// `TryGetable` of an id type through its form; used by [`id_type!`](crate::id_type).
///
/// # Errors
///
/// As [`SeaOrmColumn::try_get_by`], and a value of the right form (or text) that is no id
/// of the scheme.
#[doc(hidden)]
pub fn try_get_by<T: crate::id::IdType, I: ColIdx>(
    res: &QueryResult,
    index: I,
) -> Result<T, TryGetError>
where
    T::Column: SeaOrmColumn,
{
    match T::Column::try_get_by(res, index) {
        Ok(column) => {
            crate::id::__private::from_column::<T>(column).map_err(|e| get_error(e, "an id"))
        }
        Err(TryGetError::Null(column)) => Err(TryGetError::Null(column)),
        // Not the form: the id's text (which sqlx also hands out as bytes of the wrong
        // width), or else the form's own error.
        Err(first) => match String::try_get_by(res, index) {
            Ok(text) => T::parse_text(&text)
                .map_err(|e| get_error(ColumnError::from(e), "an id from its text")),
            Err(_) => Err(first),
        },
    }
}

/// `From<T> for Value` of an id type. SeaORM's conversion cannot fail, so a 64-bit id with
/// its top bit set becomes a null (which a primary key or a `NOT NULL` column refuses).
#[doc(hidden)]
pub fn to_value<T: crate::id::IdType>(id: &T) -> Value
where
    T::Column: SeaOrmColumn,
{
    id.to_column()
        .to_value()
        .unwrap_or_else(|_| T::Column::null())
}

/// `TryFromU64` of an id type: a 64-bit id from the number a driver returns as the last
/// inserted id; ids of other forms never come from there.
///
/// # Errors
///
/// `DbErr::ConvertFromU64` for ids that are not 64-bit numbers, or a number that is no id.
#[doc(hidden)]
pub fn try_from_u64<T: crate::id::IdType>(n: u64) -> Result<T, DbErr>
where
    T::Column: SeaOrmColumn,
{
    match T::Column::from_value(Value::BigUnsigned(Some(n))) {
        Some(Ok(column)) => crate::id::__private::from_column::<T>(column)
            .map_err(|_| DbErr::ConvertFromU64(core::any::type_name::<T>())),
        _ => Err(DbErr::ConvertFromU64(core::any::type_name::<T>())),
    }
}
