//! How an id is stored in a database column, written once for every scheme.
//!
//! Every id type has one *column form*: [`BigInt`] (a 64-bit id in a signed `BIGINT` /
//! `INTEGER` column) or [`Bytes<N>`] (an id of `N` bytes: PostgreSQL `uuid` for 16 bytes and
//! `bytea` otherwise, MySQL `BINARY(N)`, SQLite `BLOB`). This module implements each database
//! driver's traits for the two forms, behind features of the same names as the scheme crates':
//!
//! | feature | driver traits |
//! |---|---|
//! | `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite` | sqlx's `Type`, `Encode`, `Decode` |
//! | `postgres` | postgres-types' `ToSql`, `FromSql` (postgres, tokio-postgres) |
//! | `rusqlite` | rusqlite's `ToSql`, `FromSql` |
//! | `diesel-postgres`, `diesel-mysql`, `diesel-sqlite` | Diesel's `AsExpression`, `ToSql`, `FromSql`, `Queryable` ([`diesel`](mod@diesel)) |
//! | `sea-orm` | SeaORM's `ValueType`, `Nullable`, `TryGetable`, `TryFromU64`, `From<T> for Value` ([`sea_orm`](mod@sea_orm)) |
//! | `serde` | `Serialize`, `Deserialize` (the compact form binary formats get) |
//!
//! An id type declares its form through [`IdType`](crate::id::IdType) and gets every driver's
//! impls from the [`id_type!`](crate::id_type) macro, which delegates to the form. For a key
//! that holds the id's text, wrap the id in [`AsText`]: it binds as text and reads every
//! form.
//!
//! # The mapping
//!
//! | id | PostgreSQL | MySQL / MariaDB | SQLite |
//! |---|---|---|---|
//! | 64-bit ([`BigInt`]) | `bigint` | `BIGINT` (or `BIGINT UNSIGNED`) | `INTEGER` |
//! | 128-bit ([`Bytes<16>`]) | `uuid` | `BINARY(16)` | 16-byte `BLOB` |
//! | KSUID, ObjectId ([`Bytes<20>`], [`Bytes<12>`]) | `bytea` | `BINARY(20)`, `BINARY(12)` | `BLOB` |
//!
//! A 64-bit id with its top bit set is refused when encoded ([`ColumnErrorKind::SignBit`]):
//! a signed column would hold it as a negative number, which sorts before every other id and
//! reads back as something else in every other client. A negative number or a value of the
//! wrong width read back is an error too, never a wrapped or truncated id.
//!
//! Ids of the time-ordered schemes sort the same way as numbers (`BigInt`) or as bytes
//! compared one by one (`Bytes`, PostgreSQL `uuid`, MySQL `BINARY`, SQLite `BLOB`), so
//! `ORDER BY id` returns them in the order they were made.

use core::fmt;

use crate::error::ParseError;
use crate::prelude::*;

#[cfg(any(
    feature = "diesel-postgres",
    feature = "diesel-mysql",
    feature = "diesel-sqlite"
))]
pub mod diesel;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "rusqlite")]
mod rusqlite;
#[cfg(feature = "sea-orm")]
pub mod sea_orm;
#[cfg(feature = "serde")]
mod serde;
mod text;

pub use text::AsText;
/// sqlx's `Type`, `Encode` and `Decode` of [`BigInt`] for a database whose 64-bit column
/// is `i64` and nothing else (MySQL, which also has `BIGINT UNSIGNED`, has its own).
#[cfg(any(feature = "sqlx-postgres", feature = "sqlx-sqlite"))]
macro_rules! sqlx_bigint {
    ($db:ty, $type_info:ty, $buffer:ty, $value:ty) => {
        impl sqlx::Type<$db> for BigInt {
            fn type_info() -> $type_info {
                <i64 as sqlx::Type<$db>>::type_info()
            }
            fn compatible(ty: &$type_info) -> bool {
                <i64 as sqlx::Type<$db>>::compatible(ty)
            }
        }

        impl sqlx::Encode<'_, $db> for BigInt {
            fn encode_by_ref(
                &self,
                buf: &mut $buffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <i64 as sqlx::Encode<'_, $db>>::encode(self.to_i64()?, buf)
            }
        }

        impl sqlx::Decode<'_, $db> for BigInt {
            fn decode(value: $value) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(Self::from_i64(<i64 as sqlx::Decode<$db>>::decode(value)?)?)
            }
        }
    };
}

/// The type name of the idkit PostgreSQL extension's `ulid` (16 bytes on the binary protocol,
/// as `uuid`), which the 16-byte column forms read and write as they do `uuid`.
#[cfg(any(feature = "postgres", feature = "sqlx-postgres"))]
const ULID_TYPE: &str = "ulid";

/// The type name of the idkit PostgreSQL extension's `typeid`: the UUID's 16 bytes then the
/// type prefix on the binary protocol, which a TypeID reads whole
/// ([`IdType::from_prefixed_column`](crate::id::IdType::from_prefixed_column)); it is only
/// read, never written (a TypeID is written as its UUID).
#[doc(hidden)]
pub const TYPEID_TYPE: &str = "typeid";

#[cfg(feature = "sqlx-mysql")]
mod sqlx_mysql;
#[cfg(feature = "sqlx-postgres")]
mod sqlx_postgres;
#[cfg(feature = "sqlx-sqlite")]
mod sqlx_sqlite;

/// A 64-bit id as stored in a signed 64-bit integer column.
///
/// # Examples
///
/// ```
/// use idkit_core::column::{BigInt, ColumnErrorKind};
/// assert_eq!(BigInt(42).to_i64()?, 42);
/// let err = BigInt(1 << 63).to_i64().unwrap_err();
/// assert_eq!(err.kind(), ColumnErrorKind::SignBit);
/// assert_eq!(BigInt::from_i64(-1).unwrap_err().kind(), ColumnErrorKind::Negative);
/// # Ok::<(), idkit_core::column::ColumnError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BigInt(pub u64);

impl BigInt {
    /// The value for a signed column.
    ///
    /// # Errors
    ///
    /// [`ColumnErrorKind::SignBit`] when the top bit is set.
    pub fn to_i64(self) -> Result<i64, ColumnError> {
        i64::try_from(self.0).map_err(|_| ColumnError::new(ColumnKind::SignBit(self.0)))
    }

    /// The id read back from a signed column.
    ///
    /// # Errors
    ///
    /// [`ColumnErrorKind::Negative`] for a negative value.
    pub fn from_i64(v: i64) -> Result<Self, ColumnError> {
        u64::try_from(v)
            .map(Self)
            .map_err(|_| ColumnError::new(ColumnKind::Negative(v)))
    }
}

/// An id of `N` bytes, big-endian, as stored in a binary column (PostgreSQL `uuid` when `N`
/// is 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes<const N: usize>(pub [u8; N]);

impl<const N: usize> Bytes<N> {
    /// The id read back from a binary value.
    ///
    /// # Errors
    ///
    /// [`ColumnErrorKind::Width`] unless `bytes` has exactly `N` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::column::{Bytes, ColumnErrorKind};
    /// assert_eq!(Bytes::<2>::from_slice(&[1, 2])?, Bytes([1, 2]));
    /// let err = Bytes::<16>::from_slice(&[0; 12]).unwrap_err();
    /// assert_eq!(err.kind(), ColumnErrorKind::Width);
    /// assert_eq!(err.to_string(), "invalid length: expected 16 bytes, found 12");
    /// # Ok::<(), idkit_core::column::ColumnError>(())
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<Self, ColumnError> {
        bytes
            .try_into()
            .map(Self)
            .map_err(|_| ColumnError::new(ColumnKind::Width(N, bytes.len())))
    }
}

/// A database engine, for [`ColumnForm::sql_type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB (InnoDB).
    MySql,
    /// SQLite.
    Sqlite,
}

/// A column form: [`BigInt`] or [`Bytes<N>`], the only implementers. It meets the bounds of
/// every driver turned on.
pub trait ColumnForm:
    Copy + fmt::Debug + Send + Sync + 'static + bounds::Serde + bounds::All + sealed::Sealed
{
    /// The column type to declare for ids of this form in `engine`.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::column::{BigInt, Bytes, ColumnForm, Engine};
    /// assert_eq!(BigInt::sql_type(Engine::Postgres), "bigint");
    /// assert_eq!(Bytes::<16>::sql_type(Engine::Postgres), "uuid");
    /// assert_eq!(Bytes::<20>::sql_type(Engine::MySql), "BINARY(20)");
    /// assert_eq!(Bytes::<12>::sql_type(Engine::Sqlite), "BLOB");
    /// ```
    fn sql_type(engine: Engine) -> String;
}

impl ColumnForm for BigInt {
    fn sql_type(engine: Engine) -> String {
        match engine {
            Engine::Postgres => "bigint",
            Engine::MySql => "BIGINT",
            Engine::Sqlite => "INTEGER",
        }
        .to_owned()
    }
}

impl<const N: usize> ColumnForm for Bytes<N> {
    fn sql_type(engine: Engine) -> String {
        match engine {
            Engine::Postgres if N == 16 => "uuid".to_owned(),
            Engine::Postgres => "bytea".to_owned(),
            Engine::MySql => format!("BINARY({N})"),
            Engine::Sqlite => "BLOB".to_owned(),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::BigInt {}
    impl<const N: usize> Sealed for super::Bytes<N> {}
}

/// One trait per driver, empty when its feature is off, so that generic code over an
/// [`IdType`](crate::id::IdType) can call the driver's traits on its column form.
#[doc(hidden)]
pub mod bounds {
    macro_rules! bound {
        ($name:ident, $feature:literal, $($bound:tt)+) => {
            #[cfg(feature = $feature)]
            #[doc(hidden)]
            pub trait $name: $($bound)+ {}
            #[cfg(feature = $feature)]
            impl<T: $($bound)+> $name for T {}
            #[cfg(not(feature = $feature))]
            #[doc(hidden)]
            pub trait $name {}
            #[cfg(not(feature = $feature))]
            impl<T> $name for T {}
        };
    }
    bound!(
        Serde,
        "serde",
        serde::Serialize + serde::de::DeserializeOwned
    );
    /// sqlx's three traits (`Type`, `Encode`, `Decode`) for one database.
    macro_rules! sqlx_bound {
        ($name:ident, $feature:literal, $db:ident) => {
            bound!(
                $name,
                $feature,
                sqlx::Type<sqlx::$db>
                    + for<'q> sqlx::Encode<'q, sqlx::$db>
                    + for<'r> sqlx::Decode<'r, sqlx::$db>
            );
        };
    }
    sqlx_bound!(SqlxPostgres, "sqlx-postgres", Postgres);
    sqlx_bound!(SqlxMySql, "sqlx-mysql", MySql);
    sqlx_bound!(SqlxSqlite, "sqlx-sqlite", Sqlite);
    bound!(
        Postgres,
        "postgres",
        postgres_types::ToSql + for<'a> postgres_types::FromSql<'a>
    );
    bound!(
        Rusqlite,
        "rusqlite",
        rusqlite::types::ToSql + rusqlite::types::FromSql
    );

    /// Every database driver's bounds.
    #[doc(hidden)]
    pub trait All: SqlxPostgres + SqlxMySql + SqlxSqlite + Postgres + Rusqlite {}
    impl<T: SqlxPostgres + SqlxMySql + SqlxSqlite + Postgres + Rusqlite> All for T {}
}

/// Why an id could not be written to or read from a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnError {
    kind: ColumnKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ColumnKind {
    SignBit(u64),
    Negative(i64),
    Width(usize, usize),
    Invalid(ParseError),
}

/// What went wrong, from [`ColumnError::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnErrorKind {
    /// A 64-bit id with its top bit set, refused for a signed column.
    SignBit,
    /// A negative number read from a 64-bit id column.
    Negative,
    /// A binary value of the wrong number of bytes.
    Width,
    /// A value of the right form that is not an id of the scheme (a reserved bit set, a
    /// wrong version, a TypeID prefix other than the marker's).
    Invalid,
}

impl ColumnError {
    fn new(kind: ColumnKind) -> Self {
        Self { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> ColumnErrorKind {
        match self.kind {
            ColumnKind::SignBit(_) => ColumnErrorKind::SignBit,
            ColumnKind::Negative(_) => ColumnErrorKind::Negative,
            ColumnKind::Width(..) => ColumnErrorKind::Width,
            ColumnKind::Invalid(_) => ColumnErrorKind::Invalid,
        }
    }
}

impl From<ParseError> for ColumnError {
    fn from(e: ParseError) -> Self {
        Self::new(ColumnKind::Invalid(e))
    }
}

impl fmt::Display for ColumnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ColumnKind::SignBit(v) => write!(
                f,
                "id {v} has its top bit set: a signed 64-bit column would hold it as a negative number"
            ),
            ColumnKind::Negative(v) => {
                write!(f, "negative value {v} in an id column: ids are unsigned")
            }
            ColumnKind::Width(expected, found) => {
                write!(
                    f,
                    "invalid length: expected {expected} bytes, found {found}"
                )
            }
            ColumnKind::Invalid(e) => write!(f, "not an id of this scheme: {e}"),
        }
    }
}

impl core::error::Error for ColumnError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.kind {
            ColumnKind::Invalid(e) => Some(e),
            _ => None,
        }
    }
}
