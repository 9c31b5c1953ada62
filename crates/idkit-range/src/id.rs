//! [`RangeId`]: a range allocator's id as a type.

use core::fmt;
use core::str::FromStr;

use idkit_core::codec::decimal;
use idkit_core::column::BigInt;
use idkit_core::id::{FromGenerated, IdType};
use idkit_core::{GenerateError, ParseError};

/// An id handed out by a [`RangeAllocator`](crate::RangeAllocator): a plain 64-bit counter,
/// decimal in text. Get one with [`IdScheme::next_as`](idkit_core::IdScheme::next_as).
///
/// With the crate's features it goes into JSON as a decimal *string* and into `BIGINT` /
/// `INTEGER` columns (see `idkit_core::column`).
///
/// # Examples
///
/// ```
/// use idkit_range::RangeId;
/// let id: RangeId = "42".parse()?;
/// assert_eq!(id.get(), 42);
/// assert!("-1".parse::<RangeId>().is_err());
/// # Ok::<(), idkit_range::idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RangeId(pub u64);

impl RangeId {
    /// The number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for RangeId {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        decimal::parse_u64(text).map(Self)
    }
}

impl IdType for RangeId {
    type Column = BigInt;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> BigInt {
        BigInt(self.0)
    }
    fn from_column(column: BigInt) -> Result<Self, ParseError> {
        Ok(Self(column.0))
    }
}

impl FromGenerated<u64> for RangeId {
    fn from_generated(raw: u64) -> Result<Self, GenerateError> {
        Ok(Self(raw))
    }
}

idkit_core::id_type!(RangeId);
