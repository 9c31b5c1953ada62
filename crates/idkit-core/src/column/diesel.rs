//! Diesel's traits for the column forms, one feature per backend: `diesel-postgres`
//! (`bigint`, `uuid`, `bytea`, `text`), `diesel-mysql` (`BIGINT`, `BINARY(N)`, `VARCHAR`) and
//! `diesel-sqlite` (`INTEGER`, `BLOB`, `TEXT`).
//!
//! A form says, per backend, which of Diesel's SQL types it goes into ([`DieselColumn`]) and
//! how it is written and read; [`id_type!`](crate::id_type) gives an id type Diesel's
//! `AsExpression`, `ToSql`, `FromSql` and `Queryable` through its form (what Diesel's
//! `#[derive(AsExpression, FromSqlRow)]` would write), [`Id<M, T>`](crate::id::Id) among them.
//! Errors are [`ColumnError`]s, boxed as Diesel boxes every conversion error.
//!
//! Every id type also goes into Diesel's `Text`, as its canonical text (a column
//! `idkit_ulid_text()` fills, or a `text` key). In SQLite the choice follows the value, as
//! it does for rusqlite and sqlx: an id whose type keeps its text there
//! ([`IdType::SQLITE_TEXT`], TypeID) goes only into a column declared `Text`, so that it
//! compares with what `idkit_typeid()` writes (a `Binary` one refuses it with a
//! [`ColumnError`] that says so), and a value stored as text is parsed whatever the
//! declared type says.

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output};
use diesel::sql_types::{self, Nullable};

use super::{BigInt, Bytes, ColumnError};
use crate::id::IdType;

/// An id as Diesel writes or reads it: its column form, or its canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DieselValue<F> {
    /// The column form's value (a number or bytes).
    Column(F),
    /// The id's canonical text.
    Text(String),
}

/// How a column form goes into Diesel's SQL type `ST` on backend `DB`: implemented for each
/// backend turned on, for the form's SQL types and `Text`, and their `Nullable` (a value is
/// written the same either way). Used by [`id_type!`](crate::id_type); not meant to be
/// implemented elsewhere.
pub trait DieselColumn<DB: Backend, ST>: Sized {
    /// Whether `ST` holds the id's text (Diesel's `Text`): the id is written as its text.
    const TEXT: bool = false;

    /// Whether `DB` is SQLite, where an id type with [`IdType::SQLITE_TEXT`] is written as
    /// its text whatever `ST` says.
    const SQLITE: bool = false;

    /// Writes the value.
    ///
    /// # Errors
    ///
    /// [`ColumnError`] with [`ColumnErrorKind::SignBit`](super::ColumnErrorKind::SignBit)
    /// for a 64-bit id with its top bit set, and with
    /// [`ColumnErrorKind::Invalid`](super::ColumnErrorKind::Invalid) for a column value
    /// given to a text type; the backend's own write errors.
    fn write(value: DieselValue<Self>, out: &mut Output<'_, '_, DB>) -> serialize::Result;

    /// Reads the value: the column form, or the text of a text type (and in SQLite of any
    /// value stored as text).
    ///
    /// # Errors
    ///
    /// [`ColumnError`] for a negative number or a binary value of the wrong width; the
    /// backend's own errors for a value of another type.
    fn read(value: DB::RawValue<'_>) -> deserialize::Result<DieselValue<Self>>;
}

/// The SQL types a column form goes into on some backend turned on (`BigInt`; `Uuid` or
/// `Binary`; `Text`; each `Nullable`): what an id type is `AsExpression` of.
pub trait DieselSql<ST> {}

macro_rules! sql_of {
    ($form:ty => $($st:ty),+) => {
        $(
            impl DieselSql<$st> for $form {}
            impl DieselSql<Nullable<$st>> for $form {}
        )+
    };
}
sql_of!(BigInt => sql_types::BigInt, sql_types::Text);
sql_of!(Bytes<12> => sql_types::Binary, sql_types::Text);
sql_of!(Bytes<20> => sql_types::Binary, sql_types::Text);
#[cfg(feature = "diesel-postgres")]
sql_of!(Bytes<16> => sql_types::Uuid, sql_types::Binary, sql_types::Text);
#[cfg(not(feature = "diesel-postgres"))]
sql_of!(Bytes<16> => sql_types::Binary, sql_types::Text);

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

/// A column value given to a text type, which only the id's text goes into (the
/// conversions never do this).
fn not_text() -> Box<dyn std::error::Error + Send + Sync> {
    boxed(ColumnError::from(crate::error::ParseError::invalid(
        "a text column takes the id's text, not its column value",
    )))
}

/// Implements [`DieselColumn`] for a form, backend and SQL type, and the type's `Nullable`
/// (`TEXT` and `SQLITE` given as `consts`); the binary forms are given by width, `bigint DB`
/// is the `BigInt` form in the backend's own 64-bit integer, and `text [forms] DB` the
/// forms in `Text`, written and read by the backend's own `String`.
macro_rules! column {
    ($form:ty, $db:ty, $st:ty, consts($text:expr, $sqlite:expr), |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        column!(@one $form, $db, $st, $text, $sqlite, |$v, $out| $write, |$raw| $read);
        column!(@one $form, $db, Nullable<$st>, $text, $sqlite, |$v, $out| $write, |$raw| $read);
    };
    (@one $form:ty, $db:ty, $st:ty, $text:expr, $sqlite:expr, |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        impl DieselColumn<$db, $st> for $form {
            const TEXT: bool = $text;
            const SQLITE: bool = $sqlite;
            fn write($v: DieselValue<Self>, $out: &mut Output<'_, '_, $db>) -> serialize::Result {
                $write
            }
            fn read($raw: <$db as Backend>::RawValue<'_>) -> deserialize::Result<DieselValue<Self>> {
                $read
            }
        }
    };
    (bytes [$($n:literal),+], $db:ty, $st:ty, consts($text:expr, $sqlite:expr), |$v:ident, $out:ident| $write:expr, |$raw:ident| $read:expr) => {
        $(column!(Bytes<$n>, $db, $st, consts($text, $sqlite), |$v, $out| $write, |$raw| $read);)+
    };
    (bigint $db:ty) => {
        column!(
            BigInt,
            $db,
            sql_types::BigInt,
            consts(false, false),
            |v, out| match v {
                DieselValue::Column(v) => {
                    write_as::<$db, sql_types::BigInt, i64>(&v.to_i64().map_err(boxed)?, out)
                }
                DieselValue::Text(_) => Err("a 64-bit id goes into BIGINT as a number".into()),
            },
            |raw| Ok(DieselValue::Column(bigint(<i64 as FromSql<sql_types::BigInt, $db>>::from_sql(raw)?)?))
        );
    };
    (text [$($form:ty),+] $db:ty) => {
        $(column!(
            $form,
            $db,
            sql_types::Text,
            consts(true, false),
            |v, out| match v {
                DieselValue::Text(text) => write_as::<$db, sql_types::Text, str>(&text, out),
                DieselValue::Column(_) => Err(not_text()),
            },
            |raw| Ok(DieselValue::Text(<String as FromSql<sql_types::Text, $db>>::from_sql(raw)?))
        );)+
    };
}

/// The forms in `Text` on a backend whose bind collector writes bytes.
#[cfg(any(feature = "diesel-postgres", feature = "diesel-mysql"))]
macro_rules! text {
    ($db:ty) => {
        column!(text [BigInt, Bytes<12>, Bytes<16>, Bytes<20>] $db);
    };
}

#[cfg(feature = "diesel-postgres")]
mod pg {
    use std::io::Write as _;

    use diesel::pg::Pg;
    use diesel::serialize::IsNull;

    use super::*;

    /// Writes a form's bytes, as PostgreSQL's binary `uuid` and `bytea` are.
    fn write_bytes<const N: usize>(
        v: DieselValue<Bytes<N>>,
        out: &mut Output<'_, '_, Pg>,
    ) -> serialize::Result {
        match v {
            DieselValue::Column(v) => {
                out.write_all(&v.0)?;
                Ok(IsNull::No)
            }
            DieselValue::Text(_) => {
                Err("an id of bytes goes into a binary type as its bytes".into())
            }
        }
    }

    column!(bigint Pg);
    text!(Pg);
    // PostgreSQL's binary `uuid` is its 16 bytes, as `bytea`'s is its bytes.
    column!(
        Bytes<16>,
        Pg,
        sql_types::Uuid,
        consts(false, false),
        |v, out| write_bytes(v, out),
        |raw| Ok(DieselValue::Column(bytes(raw.as_bytes())?))
    );
    column!(bytes [12, 16, 20], Pg, sql_types::Binary, consts(false, false),
        |v, out| write_bytes(v, out),
        |raw| Ok(DieselValue::Column(bytes(raw.as_bytes())?)));
}

#[cfg(feature = "diesel-mysql")]
mod mysql {
    use diesel::mysql::Mysql;

    use super::*;

    column!(bigint Mysql);
    text!(Mysql);
    column!(bytes [12, 16, 20], Mysql, sql_types::Binary, consts(false, false),
        |v, out| match v {
            DieselValue::Column(v) => write_as::<Mysql, sql_types::Binary, [u8]>(&v.0[..], out),
            DieselValue::Text(_) => Err("an id of bytes goes into BINARY as its bytes".into()),
        },
        |raw| Ok(DieselValue::Column(bytes(raw.as_bytes())?)));
}

#[cfg(feature = "diesel-sqlite")]
mod sqlite {
    use diesel::serialize::IsNull;
    use diesel::sqlite::{Sqlite, SqliteType};

    use super::*;

    /// SQLite's bind collector keeps values, not bytes: an owned integer or blob for the
    /// form's types, text for `Text`. Diesel binds only the declared type's kind of value,
    /// so an id SQLite keeps as its text (TypeID, as `idkit_typeid()` writes it) is refused
    /// for a column declared otherwise rather than stored in a form the SQL functions'
    /// values never equal.
    fn write<F>(
        v: DieselValue<F>,
        out: &mut Output<'_, '_, Sqlite>,
        text: bool,
        column: impl FnOnce(F, &mut Output<'_, '_, Sqlite>) -> serialize::Result,
    ) -> serialize::Result {
        match v {
            DieselValue::Column(v) => column(v, out),
            DieselValue::Text(text_value) if text => {
                out.set_value(text_value);
                Ok(IsNull::No)
            }
            DieselValue::Text(_) => {
                Err(boxed(ColumnError::from(crate::error::ParseError::invalid(
                    "this id is kept as its text in SQLite, as the idkit SQL functions write \
                     it: declare its column as Diesel's `Text`",
                ))))
            }
        }
    }

    /// A value stored as text is the id's text whatever the declared type (SQLite keeps
    /// each value's own type); others are the form, read by `column`.
    fn read<F>(
        mut raw: diesel::sqlite::SqliteValue<'_, '_, '_>,
        column: impl FnOnce(diesel::sqlite::SqliteValue<'_, '_, '_>) -> deserialize::Result<F>,
    ) -> deserialize::Result<DieselValue<F>> {
        if raw.value_type() == Some(SqliteType::Text) {
            return Ok(DieselValue::Text(raw.read_text().to_owned()));
        }
        Ok(DieselValue::Column(column(raw)?))
    }

    column!(
        BigInt,
        Sqlite,
        sql_types::BigInt,
        consts(false, true),
        |v, out| write(v, out, false, |v, out| {
            out.set_value(v.to_i64().map_err(boxed)?);
            Ok(IsNull::No)
        }),
        |raw| read(raw, |raw| bigint(<i64 as FromSql<
            sql_types::BigInt,
            Sqlite,
        >>::from_sql(raw)?))
    );
    column!(bytes [12, 16, 20], Sqlite, sql_types::Binary, consts(false, true),
        |v, out| write(v, out, false, |v, out| { out.set_value(v.0.to_vec()); Ok(IsNull::No) }),
        |raw| read(raw, |raw| bytes(&<Vec<u8> as FromSql<sql_types::Binary, Sqlite>>::from_sql(raw)?)));
    column!(
        BigInt,
        Sqlite,
        sql_types::Text,
        consts(true, true),
        |v, out| write(v, out, true, |_, _| Err(not_text())),
        |raw| read(raw, |raw| bigint(<i64 as FromSql<
            sql_types::BigInt,
            Sqlite,
        >>::from_sql(raw)?))
    );
    column!(bytes [12, 16, 20], Sqlite, sql_types::Text, consts(true, true),
        |v, out| write(v, out, true, |_, _| Err(not_text())),
        |raw| read(raw, |raw| bytes(&<Vec<u8> as FromSql<sql_types::Binary, Sqlite>>::from_sql(raw)?)));
}

/// `ToSql` of an id type through its form; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
pub fn to_sql<T, DB, ST>(id: &T, out: &mut Output<'_, '_, DB>) -> serialize::Result
where
    T: IdType,
    DB: Backend,
    T::Column: DieselColumn<DB, ST>,
{
    let value = if <T::Column as DieselColumn<DB, ST>>::TEXT
        || (<T::Column as DieselColumn<DB, ST>>::SQLITE && T::SQLITE_TEXT)
    {
        DieselValue::Text(id.to_string())
    } else {
        DieselValue::Column(id.to_column())
    };
    <T::Column as DieselColumn<DB, ST>>::write(value, out)
}

/// `FromSql` of an id type through its form; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
pub fn from_sql<T, DB, ST>(value: DB::RawValue<'_>) -> deserialize::Result<T>
where
    T: IdType,
    DB: Backend,
    T::Column: DieselColumn<DB, ST>,
{
    match <T::Column as DieselColumn<DB, ST>>::read(value)? {
        DieselValue::Column(column) => Ok(crate::id::__private::from_column::<T>(column)?),
        DieselValue::Text(text) => Ok(T::parse_text(&text).map_err(ColumnError::from)?),
    }
}
