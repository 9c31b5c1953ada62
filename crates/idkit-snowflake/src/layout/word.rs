//! [`Word`]: the integer an id is, `u64` or `u128`.

use core::fmt::{Debug, Display};

use idkit_core::codec::decimal;
use idkit_core::column::{BigInt, Bytes, ColumnForm};
use idkit_core::{ParseError, RawId};

/// The integer an id is: `u64` for 64-bit layouts, `u128` for 128-bit ones.
pub trait Word:
    Copy + Default + Ord + Debug + Display + Send + Sync + core::hash::Hash + 'static
{
    /// Bits in the word.
    const BITS: u32;
    /// How an id of this word is stored in a database column.
    type Column: ColumnForm;
    /// The word as a column value.
    fn to_column(self) -> Self::Column;
    /// The word from a column value.
    fn from_column(column: Self::Column) -> Self;
    /// `base | tick << time_shift | seq << seq_shift`, in the word's own width.
    fn pack(base: Self, tick: u64, time_shift: u32, seq: u64, seq_shift: u32) -> Self;
    /// The field of at most 64 bits at `shift`: `(self >> shift) & mask`.
    fn field(self, shift: u32, mask: u64) -> u64;
    /// `self + (1 << shift)`: the next sequence value, when the sequence field (at
    /// `shift`) is known not to be full, so no carry leaves it.
    fn bump(self, shift: u32) -> Self;
    /// Widens to `u128`.
    fn to_u128(self) -> u128;
    /// Narrows from `u128`; `None` when it does not fit.
    fn from_u128(v: u128) -> Option<Self>;
    /// Big-endian bytes.
    fn to_raw(self) -> RawId;
    /// From big-endian bytes.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::InvalidLength`](idkit_core::ParseErrorKind::InvalidLength) for the wrong number of bytes.
    fn from_raw(raw: &RawId) -> Result<Self, ParseError>;
    /// Parses the decimal form.
    ///
    /// # Errors
    ///
    /// As [`decimal::parse_u64`].
    fn parse_decimal(text: &str) -> Result<Self, ParseError>;
}

impl Word for u64 {
    const BITS: u32 = 64;
    type Column = BigInt;
    fn to_column(self) -> BigInt {
        BigInt(self)
    }
    fn from_column(column: BigInt) -> u64 {
        column.0
    }
    #[inline]
    fn pack(base: u64, tick: u64, time_shift: u32, seq: u64, seq_shift: u32) -> u64 {
        base | (tick << time_shift) | (seq << seq_shift)
    }
    #[inline]
    fn field(self, shift: u32, mask: u64) -> u64 {
        (self >> shift) & mask
    }
    #[inline]
    fn bump(self, shift: u32) -> u64 {
        self.wrapping_add(1 << shift)
    }
    fn to_u128(self) -> u128 {
        u128::from(self)
    }
    fn from_u128(v: u128) -> Option<u64> {
        u64::try_from(v).ok()
    }
    fn to_raw(self) -> RawId {
        RawId::from_u64(self)
    }
    fn from_raw(raw: &RawId) -> Result<u64, ParseError> {
        raw.to_u64()
    }
    fn parse_decimal(text: &str) -> Result<u64, ParseError> {
        decimal::parse_u64(text)
    }
}

impl Word for u128 {
    const BITS: u32 = 128;
    type Column = Bytes<16>;
    fn to_column(self) -> Bytes<16> {
        Bytes(self.to_be_bytes())
    }
    fn from_column(column: Bytes<16>) -> u128 {
        u128::from_be_bytes(column.0)
    }
    #[inline]
    fn pack(base: u128, tick: u64, time_shift: u32, seq: u64, seq_shift: u32) -> u128 {
        base | (u128::from(tick) << time_shift) | (u128::from(seq) << seq_shift)
    }
    #[inline]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the mask keeps at most 64 bits"
    )]
    fn field(self, shift: u32, mask: u64) -> u64 {
        (self >> shift) as u64 & mask
    }
    #[inline]
    fn bump(self, shift: u32) -> u128 {
        self.wrapping_add(1 << shift)
    }
    fn to_u128(self) -> u128 {
        self
    }
    fn from_u128(v: u128) -> Option<u128> {
        Some(v)
    }
    fn to_raw(self) -> RawId {
        RawId::from_u128(self)
    }
    fn from_raw(raw: &RawId) -> Result<u128, ParseError> {
        raw.to_u128()
    }
    fn parse_decimal(text: &str) -> Result<u128, ParseError> {
        decimal::parse_u128(text)
    }
}
