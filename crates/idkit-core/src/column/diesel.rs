//! Diesel's traits for the column forms, one feature per backend: `diesel-postgres`
//! (`bigint`, `uuid`, `bytea`), `diesel-mysql` (`BIGINT`, `BINARY(N)`) and `diesel-sqlite`
//! (`INTEGER`, `BLOB`).
//!
//! A form says, per backend, which of Diesel's SQL types it goes into ([`DieselColumn`]) and
//! how it is written and read; [`id_type!`](crate::id_type) gives an id type Diesel's
//! `AsExpression`, `ToSql`, `FromSql` and `Queryable` through its form (what Diesel's
//! `#[derive(AsExpression, FromSqlRow)]` would write), [`Id<M, T>`](crate::id::Id) among them.
//! Errors are [`ColumnError`]s, boxed as Diesel boxes every conversion error.

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output};
use diesel::sql_types::{self, Nullable};

use super::{BigInt, Bytes, ColumnError};
use crate::id::IdType;

/// How a column form goes into Diesel's SQL type `ST` on backend `DB`: implemented for each
/// backend turned on, for the form's SQL type and its `Nullable` (a value is written the
/// same either way). Used by [`id_type!`](crate::id_type); not meant to be implemented
/// elsewhere.
pub trait DieselColumn<DB: Backend, ST>: Sized {
    /// Writes the value.
    ///
    /// # Errors
    ///
    /// [`ColumnError`] with [`ColumnErrorKind::SignBit`](super::ColumnErrorKind::SignBit)
    /// for a 64-bit id with its top bit set; the backend's own write errors.
    fn write(self, out: &mut Output<'_, '_, DB>) -> serialize::Result;

    /// Reads the value.
    ///
    /// # Errors
    ///
    /// [`ColumnError`] for a negative number or a binary value of the wrong width; the
    /// backend's own errors for a value of another type.
    fn read(value: DB::RawValue<'_>) -> deserialize::Result<Self>;
}

/// The SQL types a column form goes into on some backend turned on (`BigInt`; `Uuid` or
/// `Binary`; each `Nullable`): what an id type is `AsExpression` of.
pub trait DieselSql<ST> {}

macro_rules! sql_of {
    ($form:ty => $($st:ty),+) => {
        $(
            impl DieselSql<$st> for $form {}
            impl DieselSql<Nullable<$st>> for $form {}
        )+
    };
}
sql_of!(BigInt => sql_types::BigInt);
sql_of!(Bytes<12> => sql_types::Binary);
sql_of!(Bytes<20> => sql_types::Binary);
#[cfg(feature = "diesel-postgres")]
sql_of!(Bytes<16> => sql_types::Uuid, sql_types::Binary);
#[cfg(not(feature = "diesel-postgres"))]
sql_of!(Bytes<16> => sql_types::Binary);

/// A form's value written by the backend's own `ToSql` for `T`, on backends whose
/// bind collector writes bytes (PostgreSQL, MySQL): the output is reborrowed for the
/// temporary value.
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql"))]
fn write_as<DB, ST, T>(value: &T, out: &mut Output<'_, '_, DB>) -> serialize::Result
where
    DB: for<'c> Backend<
        BindCollector<'c> = diesel::query_builder::bind_collector::RawBytesBindCollector<DB>,
    >,
    T: diesel::serialize::ToSql<ST, DB> + ?Sized,
{
    value.to_sql(&mut out.reborrow())
}

fn boxed(e: ColumnError) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(e)
}

/// A 64-bit id read back from a signed number.
fn bigint(v: i64) -> deserialize::Result<BigInt> {
    BigInt::from_i64(v).map_err(boxed)
}

/// An id of `N` bytes read back from a binary value.
fn bytes<const N: usize>(b: &[u8]) -> deserialize::Result<Bytes<N>> {
    Bytes::from_slice(b).map_err(boxed)
}

/// Implements [`DieselColumn`] for a form, backend and SQL type, and the type's `Nullable`;
/// the binary forms are given by width, and `bigint DB` is the `BigInt` form in the
/// backend's own 64-bit integer.
macro_rules! column {
    ($form:ty, $db:ty, $st:ty, |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        column!(@one $form, $db, $st, |$v, $out| $write, |$raw| $read);
        column!(@one $form, $db, Nullable<$st>, |$v, $out| $write, |$raw| $read);
    };
    (@one $form:ty, $db:ty, $st:ty, |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        impl DieselColumn<$db, $st> for $form {
            fn write(self, $out: &mut Output<'_, '_, $db>) -> serialize::Result {
                let $v = self;
                $write
            }
            fn read($raw: <$db as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
                $read
            }
        }
    };
    (bytes [$($n:literal),+], $db:ty, $st:ty, |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        $(column!(Bytes<$n>, $db, $st, |$v, $out| $write, |$raw| $read);)+
    };
    (bigint $db:ty) => {
        column!(
            BigInt,
            $db,
            sql_types::BigInt,
            |v, out| write_as::<$db, sql_types::BigInt, i64>(&v.to_i64().map_err(boxed)?, out),
            |raw| bigint(<i64 as FromSql<sql_types::BigInt, $db>>::from_sql(raw)?)
        );
    };
}

#[cfg(feature = "diesel-postgres")]
mod pg {
    use std::io::Write as _;

    use diesel::pg::Pg;
    use diesel::serialize::IsNull;

    use super::*;

    column!(bigint Pg);
    // PostgreSQL's binary `uuid` is its 16 bytes, as `bytea`'s is its bytes.
    column!(
        Bytes<16>,
        Pg,
        sql_types::Uuid,
        |v, out| {
            out.write_all(&v.0)?;
            Ok(IsNull::No)
        },
        |raw| bytes(raw.as_bytes())
    );
    column!(bytes [12, 16, 20], Pg, sql_types::Binary,
        |v, out| { out.write_all(&v.0)?; Ok(IsNull::No) },
        |raw| bytes(raw.as_bytes()));
}

#[cfg(feature = "diesel-mysql")]
mod mysql {
    use diesel::mysql::Mysql;

    use super::*;

    column!(bigint Mysql);
    column!(bytes [12, 16, 20], Mysql, sql_types::Binary,
        |v, out| write_as::<Mysql, sql_types::Binary, [u8]>(&v.0[..], out),
        |raw| bytes(raw.as_bytes()));
}

#[cfg(feature = "diesel-sqlite")]
mod sqlite {
    use diesel::serialize::IsNull;
    use diesel::sqlite::Sqlite;

    use super::*;

    // SQLite's bind collector keeps values, not bytes: an owned integer or blob.
    column!(
        BigInt,
        Sqlite,
        sql_types::BigInt,
        |v, out| {
            out.set_value(v.to_i64().map_err(boxed)?);
            Ok(IsNull::No)
        },
        |raw| bigint(<i64 as FromSql<sql_types::BigInt, Sqlite>>::from_sql(raw)?)
    );
    column!(bytes [12, 16, 20], Sqlite, sql_types::Binary,
        |v, out| { out.set_value(v.0.to_vec()); Ok(IsNull::No) },
        |raw| bytes(&<Vec<u8> as FromSql<sql_types::Binary, Sqlite>>::from_sql(raw)?));
}

/// `ToSql` of an id type through its form; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
pub fn to_sql<T, DB, ST>(id: &T, out: &mut Output<'_, '_, DB>) -> serialize::Result
where
    T: IdType,
    DB: Backend,
    T::Column: DieselColumn<DB, ST>,
{
    id.to_column().write(out)
}

/// `FromSql` of an id type through its form; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
pub fn from_sql<T, DB, ST>(value: DB::RawValue<'_>) -> deserialize::Result<T>
where
    T: IdType,
    DB: Backend,
    T::Column: DieselColumn<DB, ST>,
{
    Ok(crate::id::__private::from_column::<T>(
        <T::Column as DieselColumn<DB, ST>>::read(value)?,
    )?)
}
