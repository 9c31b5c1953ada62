//! [`SnowflakeId`]: an id of a layout, typed by that layout, with its word inside.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::str::FromStr;

use idkit_core::id::{FromGenerated, IdType};
use idkit_core::{Codec, Decoded, GenerateError, ParseError};

use crate::layout::{Layout, SnowflakeCodec, Word};

/// An id of layout `L`: the layout's word (`u64`, or `u128` for Boundary's flake) and
/// nothing else, so it costs what the word costs. `Display` and `FromStr` use the decimal
/// text; the accessors decode the fields.
///
/// Get one from any generator with [`IdScheme::next_as`](idkit_core::IdScheme::next_as), or
/// from a word with [`SnowflakeId::new`], which checks the layout's reserved bits.
///
/// With the crate's features it goes into JSON as a decimal *string* (JavaScript's numbers
/// lose digits above 2^53) and into `BIGINT` / `INTEGER` columns (`uuid` / `BINARY(16)` /
/// `BLOB` for Boundary's 128-bit flake); see `idkit_core::column` for the mapping.
///
/// # Examples
///
/// ```
/// use idkit_snowflake::{Discord, IdScheme, Snowflake, SnowflakeId};
/// // The example id from Discord's API reference.
/// let id: SnowflakeId<Discord> = "175928847299117063".parse()?;
/// assert_eq!(id.timestamp_ms(), 1_462_015_105_796);
/// assert_eq!(id.field("worker"), Some(1));
/// assert_eq!(id.field("increment"), Some(7));
/// assert_eq!(id.word(), 175_928_847_299_117_063);
/// // The word as an integer: `word()`, or `u64::from` (`u128` for Boundary's flake).
/// assert_eq!(u64::from(id), 175_928_847_299_117_063);
///
/// let generator = Snowflake::builder(Discord).field("worker", 1).build()?;
/// let id: SnowflakeId<Discord> = generator.next_as()?;
/// assert_eq!(id.field("worker"), Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SnowflakeId<L: Layout> {
    word: L::Id,
    layout: PhantomData<L>,
}

impl<L: Layout> SnowflakeId<L> {
    /// The id of `word` as `L` issued it, unchecked: what a generator of `L` returns is
    /// always a valid id.
    #[inline]
    pub(crate) fn from_word(word: L::Id) -> Self {
        Self {
            word,
            layout: PhantomData,
        }
    }

    /// The raw word.
    #[inline]
    pub fn word(self) -> L::Id {
        self.word
    }
}

impl<L: Layout + Default> SnowflakeId<L> {
    /// The id of `word`.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) when a bit the
    /// layout keeps zero is set.
    pub fn new(word: L::Id) -> Result<Self, ParseError> {
        SnowflakeCodec(L::default())
            .validate(word)
            .map(Self::from_word)
    }

    /// Creation time, Unix milliseconds (the start of the id's tick).
    pub fn timestamp_ms(self) -> u64 {
        self.decode().timestamp_ms.unwrap_or(0)
    }

    /// The value of the field called `name` (`worker`, `sequence`...) as a number: `None`
    /// when the layout has no such field. ([`Decoded::field`] of [`decode`](Self::decode),
    /// the form every scheme shares, gives a [`FieldValue`](idkit_core::FieldValue)
    /// instead: `FieldValue::Int(1)` where this gives `1`.)
    pub fn field(self, name: &str) -> Option<u64> {
        let spec = L::default();
        let spec = spec.spec();
        let (_, values) = spec.split(self.word.to_u128()).ok()?;
        spec.fields()
            .zip(values)
            .find(|(f, _)| f.name == name)
            .map(|(_, v)| v)
    }

    /// The timestamp and every named field, most significant first.
    pub fn decode(self) -> Decoded {
        SnowflakeCodec(L::default()).decode(self.word)
    }
}

/// The word of a 64-bit layout's id.
impl<L: Layout<Id = u64>> From<SnowflakeId<L>> for u64 {
    fn from(id: SnowflakeId<L>) -> Self {
        id.word
    }
}

/// The word of a 128-bit layout's id (Boundary's flake).
impl<L: Layout<Id = u128>> From<SnowflakeId<L>> for u128 {
    fn from(id: SnowflakeId<L>) -> Self {
        id.word
    }
}

impl<L: Layout> Clone for SnowflakeId<L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<L: Layout> Copy for SnowflakeId<L> {}
impl<L: Layout> PartialEq for SnowflakeId<L> {
    fn eq(&self, other: &Self) -> bool {
        self.word == other.word
    }
}
impl<L: Layout> Eq for SnowflakeId<L> {}
impl<L: Layout> PartialOrd for SnowflakeId<L> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<L: Layout> Ord for SnowflakeId<L> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.word.cmp(&other.word)
    }
}
impl<L: Layout> Hash for SnowflakeId<L> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.word.hash(state);
    }
}
impl<L: Layout> fmt::Debug for SnowflakeId<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SnowflakeId({})", self.word)
    }
}
impl<L: Layout> fmt::Display for SnowflakeId<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.word, f)
    }
}

impl<L: Layout + Default> FromStr for SnowflakeId<L> {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        SnowflakeCodec(L::default())
            .parse(text)
            .map(Self::from_word)
    }
}

impl<L: Layout + Default> IdType for SnowflakeId<L> {
    type Column = <L::Id as Word>::Column;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> Self::Column {
        self.word.to_column()
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Self::new(L::Id::from_column(column))
    }
}

impl<L: Layout> FromGenerated<L::Id> for SnowflakeId<L> {
    #[inline]
    fn from_generated(raw: L::Id) -> Result<Self, GenerateError> {
        Ok(Self::from_word(raw))
    }
}

idkit_core::id_type!(impl[L: Layout + Default] SnowflakeId<L>);
