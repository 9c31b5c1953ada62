//! Unsigned decimal integers, as Snowflake ids are usually written.

use super::{ascii_len, bad_char};
use crate::error::ParseError;
use crate::prelude::*;
use crate::raw::RawId;
use crate::scheme::{Codec, Decoded};

/// The codec of plain 64-bit counters (the range allocator, auto-increment): decimal text,
/// no time and no fields.
///
/// # Examples
///
/// ```
/// use idkit_core::Codec;
/// use idkit_core::codec::decimal::DecimalCodec;
/// assert_eq!(DecimalCodec.parse("42")?, 42);
/// assert_eq!(DecimalCodec.format(u64::MAX), "18446744073709551615");
/// assert_eq!(DecimalCodec.decode(7).timestamp_ms, None);
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecimalCodec;

impl Codec for DecimalCodec {
    type Id = u64;
    fn to_raw(&self, id: u64) -> RawId {
        RawId::from_u64(id)
    }
    fn read_raw(&self, raw: &RawId) -> Result<u64, ParseError> {
        raw.to_u64()
    }
    fn format(&self, id: u64) -> String {
        id.to_string()
    }
    fn parse(&self, text: &str) -> Result<u64, ParseError> {
        parse_u64(text)
    }
    fn decode(&self, _id: u64) -> Decoded {
        Decoded {
            timestamp_ms: None,
            fields: Vec::new(),
        }
    }
}

const EXPECTED: &str = "decimal digits 0-9";

/// Parses a decimal `u64`: digits only (no sign, space or underscore), at most 20.
///
/// # Errors
///
/// [`ParseError::empty()`], [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength), [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar), or
/// [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow) above `u64::MAX`.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::decimal::parse_u64;
/// assert_eq!(parse_u64("175928847299117063"), Ok(175928847299117063));
/// assert!(parse_u64("18446744073709551616").is_err());
/// assert!(parse_u64("-1").is_err());
/// ```
pub fn parse_u64(text: &str) -> Result<u64, ParseError> {
    let v = parse_u128_bounded(text, 20)?;
    u64::try_from(v).map_err(|_| ParseError::overflow(u64::MAX.to_string()))
}

/// Parses a decimal `u128`, at most 39 digits.
///
/// # Errors
///
/// As [`parse_u64`], with [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow) above `u128::MAX`.
pub fn parse_u128(text: &str) -> Result<u128, ParseError> {
    parse_u128_bounded(text, 39)
}

fn parse_u128_bounded(text: &str, max_len: usize) -> Result<u128, ParseError> {
    let bytes = ascii_len(text, 1, max_len)?;
    let mut v: u128 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !b.is_ascii_digit() {
            return Err(bad_char(text, i, EXPECTED));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(b - b'0')))
            .ok_or(ParseError::overflow(u128::MAX.to_string()))?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges() {
        assert_eq!(parse_u64("0"), Ok(0));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_u64("18446744073709551616").unwrap_err().kind(),
            crate::ParseErrorKind::Overflow
        );
        assert_eq!(
            parse_u64("123456789012345678901"),
            Err(ParseError::invalid_length(1, 20, 21))
        );
        assert_eq!(parse_u64(""), Err(ParseError::empty()));
        assert_eq!(
            parse_u64("12a"),
            Err(ParseError::invalid_char('a', 2, EXPECTED))
        );
        assert!(parse_u64("+1").is_err());
        assert!(parse_u64(" 1").is_err());
        assert!(parse_u64("1é").is_err());
        assert_eq!(
            parse_u128("340282366920938463463374607431768211455"),
            Ok(u128::MAX)
        );
        assert!(parse_u128("340282366920938463463374607431768211456").is_err());
    }

    #[test]
    fn error_messages_name_the_problem() {
        assert_eq!(
            parse_u64("12a").unwrap_err().to_string(),
            "invalid character 'a' at position 2: expected decimal digits 0-9"
        );
    }
}
