//! [`AsText`]: an id bound and read as its canonical text, for a key that holds text.

use core::fmt;
use core::str::FromStr;

use crate::error::ParseError;
use crate::id::IdType;

/// An id that goes into the database as its canonical text (what `Display` writes), for a
/// key that holds text: a column `idkit_ulid_text()`, `idkit_uuidv7_text()` or
/// `idkit_typeid()` fills, or a `text` / `VARCHAR` key.
///
/// An id binds in its column form (a number or bytes) by default, and SQLite never finds a
/// blob equal to text: bound plainly against a text key, `WHERE id = ?` finds nothing and
/// `ON CONFLICT (id)` lets the same id in a second time. Wrap it here and it binds as text;
/// it reads every form (text, or the column form) as the id type does. Behind the drivers'
/// features: rusqlite, sqlx (PostgreSQL, MySQL, SQLite) and SeaORM, whose entity field it
/// can be. In Diesel, declare the column `Text`: an id type goes into `Text` as its text.
///
/// # Examples
///
/// ```
/// use idkit_core::column::AsText;
/// # use idkit_core::column::BigInt;
/// # use idkit_core::ParseError;
/// # #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
/// # struct Seq(u64);
/// # impl core::fmt::Display for Seq {
/// #     fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { self.0.fmt(f) } }
/// # impl idkit_core::id::IdType for Seq { type Column = BigInt;
/// #     fn parse_text(t: &str) -> Result<Self, ParseError> {
/// #         t.parse().map(Seq).map_err(|_| ParseError::invalid("not a number")) }
/// #     fn to_column(&self) -> BigInt { BigInt(self.0) }
/// #     fn from_column(c: BigInt) -> Result<Self, ParseError> { Ok(Seq(c.0)) } }
/// let key = AsText(Seq(42));
/// assert_eq!(key.to_string(), "42");
/// assert_eq!("42".parse::<AsText<Seq>>()?, key);
/// # Ok::<(), ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AsText<T>(pub T);

impl<T> AsText<T> {
    /// The id.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for AsText<T> {
    fn from(id: T) -> Self {
        Self(id)
    }
}

impl<T: fmt::Display> fmt::Display for AsText<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: fmt::Debug> fmt::Debug for AsText<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: IdType> FromStr for AsText<T> {
    type Err = ParseError;

    /// # Errors
    ///
    /// [`ParseError`] when the text is not an id of `T`'s scheme.
    fn from_str(text: &str) -> Result<Self, ParseError> {
        T::parse_text(text).map(Self)
    }
}

#[cfg(feature = "rusqlite")]
mod rusqlite_impl {
    use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, Value, ValueRef};

    use super::AsText;
    use crate::id::IdType;

    impl<T: IdType> ToSql for AsText<T> {
        fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
            Ok(ToSqlOutput::Owned(Value::Text(self.0.to_string())))
        }
    }

    impl<T: IdType> FromSql for AsText<T> {
        fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
            crate::id::__private::rusqlite_column::<T>(value).map(Self)
        }
    }
}

#[cfg(any(
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite"
))]
mod sqlx_impl {
    use super::AsText;
    use crate::id::IdType;

    impl<T, DB> sqlx::Type<DB> for AsText<T>
    where
        DB: sqlx::Database,
        String: sqlx::Type<DB>,
    {
        fn type_info() -> DB::TypeInfo {
            <String as sqlx::Type<DB>>::type_info()
        }
        fn compatible(ty: &DB::TypeInfo) -> bool {
            <String as sqlx::Type<DB>>::compatible(ty)
        }
    }

    impl<'q, T, DB> sqlx::Encode<'q, DB> for AsText<T>
    where
        T: IdType,
        DB: sqlx::Database,
        String: sqlx::Encode<'q, DB>,
    {
        fn encode_by_ref(
            &self,
            buf: &mut <DB as sqlx::Database>::ArgumentBuffer,
        ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
            <String as sqlx::Encode<'q, DB>>::encode(self.0.to_string(), buf)
        }
    }

    impl<'r, T, DB> sqlx::Decode<'r, DB> for AsText<T>
    where
        T: IdType,
        DB: sqlx::Database,
        T::Column: sqlx::Decode<'r, DB>,
        Vec<u8>: sqlx::Decode<'r, DB>,
        String: sqlx::Decode<'r, DB>,
    {
        fn decode(
            value: <DB as sqlx::Database>::ValueRef<'r>,
        ) -> Result<Self, sqlx::error::BoxDynError> {
            crate::id::__private::sqlx_decode::<T, DB>(value).map(Self)
        }
    }
}

#[cfg(feature = "sea-orm")]
mod sea_orm_impl {
    use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, Value, ValueType, ValueTypeErr};
    use sea_orm::{ColIdx, DbErr, QueryResult, TryFromU64, TryGetError, TryGetable};

    use super::AsText;
    use crate::column::sea_orm::SeaOrmColumn;
    use crate::id::IdType;

    impl<T: IdType> From<AsText<T>> for Value {
        fn from(id: AsText<T>) -> Self {
            Value::String(Some(id.0.to_string()))
        }
    }

    impl<T: IdType> ValueType for AsText<T>
    where
        T::Column: SeaOrmColumn,
    {
        fn try_from(value: Value) -> Result<Self, ValueTypeErr> {
            crate::column::sea_orm::from_value::<T>(value).map(Self)
        }
        fn type_name() -> String {
            core::any::type_name::<Self>().to_owned()
        }
        fn array_type() -> ArrayType {
            ArrayType::String
        }
        fn column_type() -> ColumnType {
            ColumnType::Text
        }
    }

    impl<T: IdType> Nullable for AsText<T> {
        fn null() -> Value {
            Value::String(None)
        }
    }

    impl<T: IdType> TryGetable for AsText<T>
    where
        T::Column: SeaOrmColumn,
    {
        fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
            crate::column::sea_orm::try_get_by::<T, I>(res, index).map(Self)
        }
    }

    /// A key of text never comes from a last-inserted number.
    impl<T: IdType> TryFromU64 for AsText<T> {
        fn try_from_u64(_: u64) -> Result<Self, DbErr> {
            Err(DbErr::ConvertFromU64(core::any::type_name::<Self>()))
        }
    }
}
