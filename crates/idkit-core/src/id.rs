//! Id types where applications keep them: [`IdType`] (text, column form, decoding), ids
//! typed by what they name ([`Id<M, T>`](Id), [`Marker`]), and the [`id_type!`](crate::id_type)
//! macro that gives an id type serde and every database driver's traits in one line.
//!
//! # One mapping
//!
//! | id | JSON (human-readable serde) | binary serde | PostgreSQL | MySQL / MariaDB | SQLite |
//! |---|---|---|---|---|---|
//! | 64-bit (Snowflake layouts, range, TSID) | decimal string (TSID: its 13 characters) | integer | `bigint` | `BIGINT` | `INTEGER` |
//! | 128-bit (UUID v4/v7, ULID, TypeID, Boundary's flake) | canonical string | 16 bytes | `uuid` | `BINARY(16)` | 16-byte `BLOB` |
//! | KSUID | base62 string | 20 bytes | `bytea` | `BINARY(20)` | `BLOB` |
//! | ObjectId | 24 hex digits | 12 bytes | `bytea` | `BINARY(12)` | `BLOB` |
//!
//! 64-bit ids go to JSON as strings: JavaScript's numbers hold integers exactly only up to
//! 2^53, and a Snowflake id made today is above that. `as_number` (feature `serde`) writes JSON numbers for
//! those who want them anyway. A 64-bit id with its top bit set is an error when encoded for
//! a signed column, never a negative number ([`column`](crate::column)).
//!
//! # Typed ids
//!
//! ```
//! use idkit_core::id::{Id, Marker};
//! # use idkit_core::column::BigInt;
//! # use idkit_core::{ParseError, id::IdType};
//! # #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
//! # struct Seq(u64);
//! # impl core::fmt::Display for Seq {
//! #     fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { self.0.fmt(f) } }
//! # impl core::str::FromStr for Seq { type Err = ParseError;
//! #     fn from_str(s: &str) -> Result<Self, ParseError> { idkit_core::codec::decimal::parse_u64(s).map(Seq) } }
//! # impl IdType for Seq { type Column = BigInt;
//! #     fn parse_text(s: &str) -> Result<Self, ParseError> { s.parse() }
//! #     fn to_column(&self) -> BigInt { BigInt(self.0) }
//! #     fn from_column(c: BigInt) -> Result<Self, ParseError> { Ok(Seq(c.0)) } }
//! struct User;
//! impl Marker for User {}
//! struct Order;
//! impl Marker for Order {}
//!
//! fn load_user(id: Id<User, Seq>) -> u64 { id.get().0 }
//!
//! let user: Id<User, Seq> = "42".parse()?;
//! let order: Id<Order, Seq> = Id::new(Seq(7))?;
//! assert_eq!(load_user(user), 42);
//! // load_user(order); // does not compile: an order id is not a user id
//! # let _ = order;
//! # Ok::<(), ParseError>(())
//! ```

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::str::FromStr;

use crate::column::ColumnForm;
use crate::error::{GenerateError, ParseError};
use crate::prelude::*;

/// An id type: canonical text (`Display`, `FromStr`), ordered as the scheme orders ids, and
/// one column form ([`BigInt`](crate::column::BigInt) or [`Bytes<N>`](crate::column::Bytes))
/// through which it goes into every database and binary serde format.
///
/// Implement it, then call [`id_type!`](crate::id_type) once to get the serde and driver
/// impls the crate's features turn on.
pub trait IdType:
    Copy + Eq + Ord + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static
{
    /// How the id is stored.
    type Column: ColumnForm;

    /// Whether SQLite keeps the id as its text rather than its column form: an id whose
    /// text carries more than its column (TypeID's type prefix), which the SQLite functions
    /// write as text, so that a value bound from Rust compares with theirs. The drivers
    /// read both forms whatever this says.
    const SQLITE_TEXT: bool = false;

    /// Parses the canonical text (what `Display` writes; `FromStr` where the type has it).
    ///
    /// # Errors
    ///
    /// [`ParseError`] naming what was wrong.
    fn parse_text(text: &str) -> Result<Self, ParseError>;

    /// The id's column value.
    fn to_column(&self) -> Self::Column;

    /// The id from a column value.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when the value is not an id of the scheme (a reserved bit set, a wrong
    /// UUID version).
    fn from_column(column: Self::Column) -> Result<Self, ParseError>;

    /// The id from a database value wider than its column form: the idkit PostgreSQL
    /// extension's `typeid`, the UUID's 16 bytes then the type prefix. Only TypeID reads it.
    ///
    /// # Errors
    ///
    /// [`ParseError`] for bytes that are not such a value, and from every id type but
    /// TypeID's.
    fn from_prefixed_column(bytes: &[u8]) -> Result<Self, ParseError> {
        let _ = bytes;
        Err(ParseError::invalid(
            "a typeid value (a type prefix and a UUID) is not an id of this scheme",
        ))
    }

    /// Checks that the id belongs to a type named `prefix` ([`Marker::PREFIX`]). Only ids
    /// that carry a type name (TypeID) check anything.
    ///
    /// # Errors
    ///
    /// [`ParseError`] naming both prefixes when they differ.
    fn check_prefix(&self, prefix: &str) -> Result<(), ParseError> {
        let _ = prefix;
        Ok(())
    }

    /// The same id named by `prefix`: what a column value (which holds no name) or a
    /// generator's id becomes as an [`Id<M, Self>`](Id). Ids without a type name are
    /// returned as they are.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when `prefix` is not a valid type name.
    fn with_prefix(self, prefix: &'static str) -> Result<Self, ParseError> {
        let _ = prefix;
        Ok(self)
    }
}

/// What a generator's id becomes at no cost: [`IdScheme::next_as`](crate::IdScheme::next_as)
/// returns any type that implements this for the generator's id.
pub trait FromGenerated<Raw>: Sized {
    /// The id for what the generator issued.
    ///
    /// # Errors
    ///
    /// Only a typed TypeID whose marker's prefix is not a valid type name fails.
    fn from_generated(raw: Raw) -> Result<Self, GenerateError>;
}

/// A zero-sized type naming what an [`Id`] identifies (`User`, `Order`).
///
/// For a TypeID, `PREFIX` is the type name the id carries (`user_01h455vb4pex5vsknk084sn02q`):
/// parsing another prefix as this type is an error, and an id read from a column (which
/// holds only the UUID) gets this prefix. Other schemes ignore it.
pub trait Marker: 'static {
    /// The TypeID prefix; empty for none.
    const PREFIX: &'static str = "";
}

/// An id of type `T` naming an `M`: `Id<User, Tsid>` and `Id<Order, Tsid>` do not mix at
/// compile time. Zero-sized on top of `T`; text, serde and columns are `T`'s (for a TypeID,
/// with `M`'s prefix checked and supplied).
pub struct Id<M, T> {
    id: T,
    marker: PhantomData<fn() -> M>,
}

impl<M: Marker, T: IdType> Id<M, T> {
    /// Names `id` as an `M`.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when `id` carries a type name other than [`Marker::PREFIX`].
    pub fn new(id: T) -> Result<Self, ParseError> {
        id.check_prefix(M::PREFIX)?;
        Ok(Self::wrap(id))
    }
}

impl<M, T> Id<M, T> {
    #[inline]
    fn wrap(id: T) -> Self {
        Self {
            id,
            marker: PhantomData,
        }
    }

    /// The untyped id.
    pub fn get(self) -> T
    where
        T: Copy,
    {
        self.id
    }

    /// The untyped id, borrowed.
    pub fn as_inner(&self) -> &T {
        &self.id
    }
}

impl<M, T: Copy> Clone for Id<M, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M, T: Copy> Copy for Id<M, T> {}
impl<M, T: PartialEq> PartialEq for Id<M, T> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl<M, T: Eq> Eq for Id<M, T> {}
impl<M, T: PartialOrd> PartialOrd for Id<M, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.id.partial_cmp(&other.id)
    }
}
impl<M, T: Ord> Ord for Id<M, T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id)
    }
}
impl<M, T: Hash> Hash for Id<M, T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}
impl<M, T: fmt::Debug> fmt::Debug for Id<M, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id<{}>({:?})", short_type_name::<M>(), self.id)
    }
}
impl<M, T: fmt::Display> fmt::Display for Id<M, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.id.fmt(f)
    }
}

/// `User` for `my_app::models::User`.
fn short_type_name<M>() -> &'static str {
    let full = core::any::type_name::<M>();
    full.rsplit("::").next().unwrap_or(full)
}

impl<M: Marker, T: IdType> FromStr for Id<M, T> {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Self::new(T::parse_text(s)?)
    }
}

impl<M: Marker, T: IdType> IdType for Id<M, T> {
    type Column = T::Column;
    const SQLITE_TEXT: bool = T::SQLITE_TEXT;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> T::Column {
        self.id.to_column()
    }
    fn from_column(column: T::Column) -> Result<Self, ParseError> {
        T::from_column(column)?
            .with_prefix(M::PREFIX)
            .map(Self::wrap)
    }
    /// The value's own prefix, checked against the marker's.
    fn from_prefixed_column(bytes: &[u8]) -> Result<Self, ParseError> {
        let id = T::from_prefixed_column(bytes)?;
        id.check_prefix(M::PREFIX)?;
        Ok(Self::wrap(id))
    }
    fn check_prefix(&self, prefix: &str) -> Result<(), ParseError> {
        self.id.check_prefix(prefix)
    }
    fn with_prefix(self, prefix: &'static str) -> Result<Self, ParseError> {
        self.id.with_prefix(prefix).map(Self::wrap)
    }
}

impl<M: Marker, R, T: IdType + FromGenerated<R>> FromGenerated<R> for Id<M, T> {
    #[inline]
    fn from_generated(raw: R) -> Result<Self, GenerateError> {
        T::from_generated(raw)?
            .with_prefix(M::PREFIX)
            .map(Self::wrap)
            .map_err(|e| GenerateError::unavailable(format!("marker prefix: {e}")))
    }
}

crate::id_type!(impl[M: Marker, T: IdType] Id<M, T>);

/// serde for 64-bit ids as JSON numbers, for clients that read 64-bit integers exactly.
///
/// **JavaScript's `JSON.parse` turns numbers above 2^53 (9007199254740992) into the nearest
/// double**: a Snowflake id made today comes back as a different id, silently. The default
/// (a decimal string) is safe everywhere; use this only when every reader parses 64-bit
/// integers exactly.
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use idkit_core::id::{as_number, IdType};
/// # use idkit_core::column::BigInt;
/// # use idkit_core::ParseError;
/// # #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// # struct Seq(u64);
/// # impl core::fmt::Display for Seq {
/// #     fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { self.0.fmt(f) } }
/// # impl core::str::FromStr for Seq { type Err = ParseError;
/// #     fn from_str(s: &str) -> Result<Self, ParseError> { idkit_core::codec::decimal::parse_u64(s).map(Seq) } }
/// # impl IdType for Seq { type Column = BigInt;
/// #     fn parse_text(s: &str) -> Result<Self, ParseError> { s.parse() }
/// #     fn to_column(&self) -> BigInt { BigInt(self.0) }
/// #     fn from_column(c: BigInt) -> Result<Self, ParseError> { Ok(Seq(c.0)) } }
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Row {
///     #[serde(with = "as_number")]
///     id: Seq,
/// }
/// # }
/// ```
#[cfg(feature = "serde")]
pub mod as_number {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::IdType;
    use crate::column::BigInt;

    /// Writes the id as an unsigned integer.
    ///
    /// # Errors
    ///
    /// Only the serializer's own.
    pub fn serialize<T, S>(id: &T, serializer: S) -> Result<S::Ok, S::Error>
    where
        T: IdType<Column = BigInt>,
        S: Serializer,
    {
        serializer.serialize_u64(id.to_column().0)
    }

    /// Reads the id from an unsigned integer.
    ///
    /// # Errors
    ///
    /// Not an unsigned 64-bit integer, or not an id of the scheme.
    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<T, D::Error>
    where
        T: IdType<Column = BigInt>,
        D: Deserializer<'de>,
    {
        let v = u64::deserialize(deserializer)?;
        T::from_column(BigInt(v)).map_err(serde::de::Error::custom)
    }
}

/// What [`id_type!`](crate::id_type) expands to calls; not public API.
#[doc(hidden)]
pub mod __private {
    use super::IdType;
    use crate::column::ColumnError;

    pub fn from_column<T: IdType>(c: T::Column) -> Result<T, ColumnError> {
        T::from_column(c).map_err(ColumnError::from)
    }

    #[cfg(feature = "serde")]
    pub use serde;

    #[cfg(feature = "sea-orm")]
    pub use {
        crate::column::sea_orm::{
            SeaOrmColumn, from_value as sea_orm_from_value, to_value as sea_orm_to_value,
            try_from_u64 as sea_orm_try_from_u64, try_get_by as sea_orm_try_get_by,
        },
        sea_orm,
    };

    #[cfg(any(
        feature = "diesel-postgres",
        feature = "diesel-mysql",
        feature = "diesel-sqlite"
    ))]
    pub use {
        crate::column::diesel::{
            DieselColumn, DieselSql, from_sql as diesel_from_sql, to_sql as diesel_to_sql,
        },
        diesel,
    };

    #[cfg(feature = "serde")]
    pub fn serialize<T: IdType, S: serde::Serializer>(id: &T, s: S) -> Result<S::Ok, S::Error> {
        use serde::Serialize;
        if s.is_human_readable() {
            s.collect_str(id)
        } else {
            id.to_column().serialize(s)
        }
    }

    #[cfg(feature = "serde")]
    pub fn deserialize<'de, T: IdType, D: serde::Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        use serde::Deserialize;
        use serde::de::Error;
        if d.is_human_readable() {
            struct Text<T>(core::marker::PhantomData<T>);
            impl<T: IdType> serde::de::Visitor<'_> for Text<T> {
                type Value = T;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("an id in its canonical text")
                }
                fn visit_str<E: Error>(self, v: &str) -> Result<T, E> {
                    T::parse_text(v).map_err(E::custom)
                }
            }
            d.deserialize_str(Text(core::marker::PhantomData))
        } else {
            from_column(T::Column::deserialize(d)?).map_err(D::Error::custom)
        }
    }

    #[cfg(any(
        feature = "sqlx-postgres",
        feature = "sqlx-mysql",
        feature = "sqlx-sqlite"
    ))]
    pub use sqlx;

    /// `Encode` for an id type through its column form, for database `DB`.
    #[cfg(any(
        feature = "sqlx-postgres",
        feature = "sqlx-mysql",
        feature = "sqlx-sqlite"
    ))]
    pub fn sqlx_encode<'q, T, DB>(
        id: &T,
        buf: &mut <DB as sqlx::Database>::ArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError>
    where
        T: IdType,
        DB: sqlx::Database,
        T::Column: sqlx::Encode<'q, DB>,
        String: sqlx::Encode<'q, DB>,
    {
        if T::SQLITE_TEXT && DB::NAME == "SQLite" {
            return sqlx::Encode::<'q, DB>::encode(id.to_string(), buf);
        }
        sqlx::Encode::<'q, DB>::encode(id.to_column(), buf)
    }

    /// Whether a database type is text: an id written as its text (`idkit_ulid_text()`,
    /// `idkit_typeid()` in SQLite, a `text` column elsewhere), read by parsing it.
    #[cfg(any(
        feature = "sqlx-postgres",
        feature = "sqlx-mysql",
        feature = "sqlx-sqlite"
    ))]
    pub fn sqlx_is_text(name: &str) -> bool {
        matches!(
            name,
            "TEXT"
                | "VARCHAR"
                | "CHAR"
                | "BPCHAR"
                | "NAME"
                | "TINYTEXT"
                | "MEDIUMTEXT"
                | "LONGTEXT"
        )
    }

    /// `Decode` for an id type through its column form, for database `DB`.
    #[cfg(any(
        feature = "sqlx-postgres",
        feature = "sqlx-mysql",
        feature = "sqlx-sqlite"
    ))]
    pub fn sqlx_decode<'r, T, DB>(
        value: <DB as sqlx::Database>::ValueRef<'r>,
    ) -> Result<T, sqlx::error::BoxDynError>
    where
        T: IdType,
        DB: sqlx::Database,
        T::Column: sqlx::Decode<'r, DB>,
        Vec<u8>: sqlx::Decode<'r, DB>,
        String: sqlx::Decode<'r, DB>,
    {
        use sqlx::{TypeInfo as _, ValueRef as _};
        if sqlx_is_text(value.type_info().name()) {
            let text = <String as sqlx::Decode<'r, DB>>::decode(value)?;
            return Ok(T::parse_text(&text).map_err(ColumnError::from)?);
        }
        if value.type_info().name() == crate::column::TYPEID_TYPE {
            let bytes = <Vec<u8> as sqlx::Decode<'r, DB>>::decode(value)?;
            return Ok(T::from_prefixed_column(&bytes).map_err(ColumnError::from)?);
        }
        let column = <T::Column as sqlx::Decode<'r, DB>>::decode(value)?;
        Ok(from_column::<T>(column)?)
    }

    #[cfg(feature = "postgres")]
    pub use postgres_types;

    #[cfg(feature = "rusqlite")]
    pub use rusqlite;

    /// rusqlite's `ToSql` through the column form.
    #[cfg(feature = "rusqlite")]
    pub fn rusqlite_to_sql<T: IdType>(
        id: &T,
    ) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'static>> {
        use rusqlite::types::{ToSql, ToSqlOutput};
        if T::SQLITE_TEXT {
            return Ok(ToSqlOutput::Owned(rusqlite::types::Value::Text(
                id.to_string(),
            )));
        }
        match id.to_column().to_sql()? {
            ToSqlOutput::Owned(v) => Ok(ToSqlOutput::Owned(v)),
            ToSqlOutput::Borrowed(v) => {
                Ok(ToSqlOutput::Owned(rusqlite::types::Value::try_from(v)?))
            }
            // The column forms give only values.
            _ => Err(rusqlite::Error::ToSqlConversionFailure(
                "unexpected column output".into(),
            )),
        }
    }

    /// rusqlite's `FromSql` through the column form.
    #[cfg(feature = "rusqlite")]
    pub fn rusqlite_column<T: IdType>(
        value: rusqlite::types::ValueRef<'_>,
    ) -> rusqlite::types::FromSqlResult<T> {
        use rusqlite::types::FromSqlError;
        if let rusqlite::types::ValueRef::Text(text) = value {
            // Its text form (`idkit_ulid_text()`, `idkit_typeid()`).
            let text = core::str::from_utf8(text).map_err(|e| FromSqlError::Other(Box::new(e)))?;
            return T::parse_text(text).map_err(|e| FromSqlError::Other(Box::new(e)));
        }
        let c = <T::Column as rusqlite::types::FromSql>::column_result(value)?;
        from_column::<T>(c).map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
    }
}

/// Gives an [`IdType`] serde and every database driver's traits, each behind the calling
/// crate's feature of the same name: `serde`, `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite`,
/// `postgres`, `rusqlite` (each turning on `idkit-core`'s). Every impl goes through the
/// type's column form, so the mapping is the same for every scheme.
///
/// `id_type!(Tsid);` for a plain type, which also makes it what its own generators'
/// [`IdScheme::next_as`](crate::IdScheme::next_as) returns (`FromGenerated<Self>`);
/// `id_type!(impl[L: Layout] SnowflakeId<L>);` with generics.
#[macro_export]
macro_rules! id_type {
    ($ty:ty) => {
        impl $crate::id::FromGenerated<$ty> for $ty {
            #[inline]
            fn from_generated(raw: $ty) -> ::core::result::Result<Self, $crate::GenerateError> {
                Ok(raw)
            }
        }
        $crate::id_type!(impl[] $ty);
    };
    (impl[$($gen:tt)*] $ty:ty) => {
        #[cfg(feature = "serde")]
        impl<$($gen)*> $crate::id::__private::serde::Serialize for $ty {
            fn serialize<S: $crate::id::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                $crate::id::__private::serialize(self, serializer)
            }
        }
        #[cfg(feature = "serde")]
        impl<'de, $($gen)*> $crate::id::__private::serde::Deserialize<'de> for $ty {
            fn deserialize<D: $crate::id::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                $crate::id::__private::deserialize(deserializer)
            }
        }
        #[cfg(feature = "sqlx-postgres")]
        $crate::__id_type_sqlx!([$($gen)*] $ty, Postgres);
        #[cfg(feature = "sqlx-mysql")]
        $crate::__id_type_sqlx!([$($gen)*] $ty, MySql);
        #[cfg(feature = "sqlx-sqlite")]
        $crate::__id_type_sqlx!([$($gen)*] $ty, Sqlite);
        #[cfg(any(
            feature = "diesel-postgres",
            feature = "diesel-mysql",
            feature = "diesel-sqlite"
        ))]
        $crate::__id_type_diesel!([$($gen)*] $ty);
        #[cfg(feature = "sea-orm")]
        $crate::__id_type_sea_orm!([$($gen)*] $ty);
        #[cfg(feature = "postgres")]
        impl<$($gen)*> $crate::id::__private::postgres_types::ToSql for $ty {
            fn to_sql(
                &self,
                ty: &$crate::id::__private::postgres_types::Type,
                out: &mut $crate::id::__private::postgres_types::private::BytesMut,
            ) -> ::core::result::Result<
                $crate::id::__private::postgres_types::IsNull,
                ::std::boxed::Box<dyn ::std::error::Error + Sync + Send>,
            > {
                let column = <Self as $crate::id::IdType>::to_column(self);
                $crate::id::__private::postgres_types::ToSql::to_sql(&column, ty, out)
            }
            fn accepts(ty: &$crate::id::__private::postgres_types::Type) -> bool {
                <<Self as $crate::id::IdType>::Column
                    as $crate::id::__private::postgres_types::ToSql>::accepts(ty)
            }
            $crate::id::__private::postgres_types::to_sql_checked!();
        }
        #[cfg(feature = "postgres")]
        impl<'a, $($gen)*> $crate::id::__private::postgres_types::FromSql<'a> for $ty {
            fn from_sql(
                ty: &$crate::id::__private::postgres_types::Type,
                raw: &'a [u8],
            ) -> ::core::result::Result<
                Self,
                ::std::boxed::Box<dyn ::std::error::Error + Sync + Send>,
            > {
                if ty.name() == $crate::column::TYPEID_TYPE {
                    return Ok(<Self as $crate::id::IdType>::from_prefixed_column(raw)
                        .map_err($crate::column::ColumnError::from)?);
                }
                let column = <<Self as $crate::id::IdType>::Column
                    as $crate::id::__private::postgres_types::FromSql>::from_sql(ty, raw)?;
                Ok($crate::id::__private::from_column::<Self>(column)?)
            }
            fn accepts(ty: &$crate::id::__private::postgres_types::Type) -> bool {
                <<Self as $crate::id::IdType>::Column
                    as $crate::id::__private::postgres_types::FromSql>::accepts(ty)
            }
        }
        #[cfg(feature = "rusqlite")]
        impl<$($gen)*> $crate::id::__private::rusqlite::types::ToSql for $ty {
            fn to_sql(
                &self,
            ) -> $crate::id::__private::rusqlite::Result<
                $crate::id::__private::rusqlite::types::ToSqlOutput<'_>,
            > {
                $crate::id::__private::rusqlite_to_sql(self)
            }
        }
        #[cfg(feature = "rusqlite")]
        impl<$($gen)*> $crate::id::__private::rusqlite::types::FromSql for $ty {
            fn column_result(
                value: $crate::id::__private::rusqlite::types::ValueRef<'_>,
            ) -> $crate::id::__private::rusqlite::types::FromSqlResult<Self> {
                $crate::id::__private::rusqlite_column(value)
            }
        }
    };
}

/// sqlx's three traits for one database; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
#[macro_export]
macro_rules! __id_type_sqlx {
    ([$($gen:tt)*] $ty:ty, $db:ident) => {
        impl<$($gen)*> $crate::id::__private::sqlx::Type<$crate::id::__private::sqlx::$db> for $ty {
            fn type_info() -> <$crate::id::__private::sqlx::$db as $crate::id::__private::sqlx::Database>::TypeInfo {
                <<Self as $crate::id::IdType>::Column
                    as $crate::id::__private::sqlx::Type<$crate::id::__private::sqlx::$db>>::type_info()
            }
            fn compatible(
                ty: &<$crate::id::__private::sqlx::$db as $crate::id::__private::sqlx::Database>::TypeInfo,
            ) -> bool {
                <<Self as $crate::id::IdType>::Column
                    as $crate::id::__private::sqlx::Type<$crate::id::__private::sqlx::$db>>::compatible(ty)
                    || $crate::id::__private::sqlx_is_text(
                        $crate::id::__private::sqlx::TypeInfo::name(ty),
                    )
            }
        }
        impl<'q, $($gen)*> $crate::id::__private::sqlx::Encode<'q, $crate::id::__private::sqlx::$db> for $ty {
            fn encode_by_ref(
                &self,
                buf: &mut <$crate::id::__private::sqlx::$db as $crate::id::__private::sqlx::Database>::ArgumentBuffer,
            ) -> ::core::result::Result<
                $crate::id::__private::sqlx::encode::IsNull,
                $crate::id::__private::sqlx::error::BoxDynError,
            > {
                $crate::id::__private::sqlx_encode::<Self, $crate::id::__private::sqlx::$db>(self, buf)
            }
        }
        impl<'r, $($gen)*> $crate::id::__private::sqlx::Decode<'r, $crate::id::__private::sqlx::$db> for $ty {
            fn decode(
                value: <$crate::id::__private::sqlx::$db as $crate::id::__private::sqlx::Database>::ValueRef<'r>,
            ) -> ::core::result::Result<Self, $crate::id::__private::sqlx::error::BoxDynError> {
                $crate::id::__private::sqlx_decode::<Self, $crate::id::__private::sqlx::$db>(value)
            }
        }
    };
}

/// Diesel's traits through the column form (what `#[derive(AsExpression, FromSqlRow)]`
/// writes, for every backend turned on); used by [`id_type!`](crate::id_type).
#[doc(hidden)]
#[macro_export]
macro_rules! __id_type_diesel {
    // `$by` (the id type or a reference to it) as an expression of every SQL type its form
    // goes into.
    (@expression [$($lt:lifetime)?] [$($gen:tt)*] $ty:ty, $by:ty) => {
        impl<$($lt,)? __ST, $($gen)*> $crate::id::__private::diesel::expression::AsExpression<__ST> for $by
        where
            __ST: $crate::id::__private::diesel::sql_types::SqlType
                + $crate::id::__private::diesel::expression::TypedExpressionType,
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::DieselSql<__ST>,
        {
            type Expression = $crate::id::__private::diesel::internal::derives::as_expression::Bound<__ST, Self>;
            fn as_expression(self) -> Self::Expression {
                $crate::id::__private::diesel::internal::derives::as_expression::Bound::new(self)
            }
        }
    };
    ([$($gen:tt)*] $ty:ty) => {
        $crate::__id_type_diesel!(@expression [] [$($gen)*] $ty, $ty);
        $crate::__id_type_diesel!(@expression ['__a] [$($gen)*] $ty, &'__a $ty);
        impl<__ST, __DB, $($gen)*> $crate::id::__private::diesel::serialize::ToSql<__ST, __DB> for $ty
        where
            __DB: $crate::id::__private::diesel::backend::Backend,
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::DieselColumn<__DB, __ST>,
        {
            fn to_sql<'__b>(
                &'__b self,
                out: &mut $crate::id::__private::diesel::serialize::Output<'__b, '_, __DB>,
            ) -> $crate::id::__private::diesel::serialize::Result {
                $crate::id::__private::diesel_to_sql::<Self, __DB, __ST>(self, out)
            }
        }
        impl<__ST, __DB, $($gen)*> $crate::id::__private::diesel::deserialize::FromSql<__ST, __DB> for $ty
        where
            __DB: $crate::id::__private::diesel::backend::Backend,
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::DieselColumn<__DB, __ST>,
        {
            fn from_sql(
                value: <__DB as $crate::id::__private::diesel::backend::Backend>::RawValue<'_>,
            ) -> $crate::id::__private::diesel::deserialize::Result<Self> {
                $crate::id::__private::diesel_from_sql::<Self, __DB, __ST>(value)
            }
        }
        impl<__ST, __DB, $($gen)*> $crate::id::__private::diesel::deserialize::Queryable<__ST, __DB> for $ty
        where
            __DB: $crate::id::__private::diesel::backend::Backend,
            __ST: $crate::id::__private::diesel::sql_types::SingleValue,
            Self: $crate::id::__private::diesel::deserialize::FromSql<__ST, __DB>,
        {
            type Row = Self;
            fn build(row: Self) -> $crate::id::__private::diesel::deserialize::Result<Self> {
                Ok(row)
            }
        }
    };
}

/// SeaORM's traits through the column form; used by [`id_type!`](crate::id_type).
#[doc(hidden)]
#[macro_export]
macro_rules! __id_type_sea_orm {
    ([$($gen:tt)*] $ty:ty) => {
        impl<$($gen)*> ::core::convert::From<$ty> for $crate::id::__private::sea_orm::Value
        where
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::SeaOrmColumn,
        {
            fn from(id: $ty) -> Self {
                $crate::id::__private::sea_orm_to_value(&id)
            }
        }
        impl<$($gen)*> $crate::id::__private::sea_orm::sea_query::ValueType for $ty
        where
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::SeaOrmColumn,
        {
            fn try_from(
                value: $crate::id::__private::sea_orm::Value,
            ) -> ::core::result::Result<Self, $crate::id::__private::sea_orm::sea_query::ValueTypeErr> {
                $crate::id::__private::sea_orm_from_value(value)
            }
            fn type_name() -> ::std::string::String {
                ::core::any::type_name::<Self>().to_owned()
            }
            fn array_type() -> $crate::id::__private::sea_orm::sea_query::ArrayType {
                <<$ty as $crate::id::IdType>::Column as $crate::id::__private::SeaOrmColumn>::array_type()
            }
            fn column_type() -> $crate::id::__private::sea_orm::sea_query::ColumnType {
                <<$ty as $crate::id::IdType>::Column as $crate::id::__private::SeaOrmColumn>::column_type()
            }
        }
        impl<$($gen)*> $crate::id::__private::sea_orm::sea_query::Nullable for $ty
        where
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::SeaOrmColumn,
        {
            fn null() -> $crate::id::__private::sea_orm::Value {
                <<$ty as $crate::id::IdType>::Column as $crate::id::__private::SeaOrmColumn>::null()
            }
        }
        impl<$($gen)*> $crate::id::__private::sea_orm::TryGetable for $ty
        where
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::SeaOrmColumn,
        {
            fn try_get_by<__I: $crate::id::__private::sea_orm::ColIdx>(
                res: &$crate::id::__private::sea_orm::QueryResult,
                index: __I,
            ) -> ::core::result::Result<Self, $crate::id::__private::sea_orm::TryGetError> {
                $crate::id::__private::sea_orm_try_get_by(res, index)
            }
        }
        impl<$($gen)*> $crate::id::__private::sea_orm::TryFromU64 for $ty
        where
            <$ty as $crate::id::IdType>::Column: $crate::id::__private::SeaOrmColumn,
        {
            fn try_from_u64(n: u64) -> ::core::result::Result<Self, $crate::id::__private::sea_orm::DbErr> {
                $crate::id::__private::sea_orm_try_from_u64(n)
            }
        }
    };
}

#[cfg(feature = "uuid")]
mod uuid_impl {
    use super::{FromGenerated, IdType};
    use crate::column::Bytes;
    use crate::error::{GenerateError, ParseError};
    use crate::prelude::*;

    impl IdType for uuid::Uuid {
        type Column = Bytes<16>;
        fn parse_text(text: &str) -> Result<Self, ParseError> {
            uuid::Uuid::try_parse(text).map_err(|e| ParseError::invalid(e.to_string()))
        }
        fn to_column(&self) -> Bytes<16> {
            Bytes(*self.as_bytes())
        }
        fn from_column(column: Bytes<16>) -> Result<Self, ParseError> {
            Ok(uuid::Uuid::from_bytes(column.0))
        }
    }

    impl FromGenerated<uuid::Uuid> for uuid::Uuid {
        fn from_generated(raw: uuid::Uuid) -> Result<Self, GenerateError> {
            Ok(raw)
        }
    }
}
