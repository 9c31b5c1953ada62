//! Fixed-width lowercase hexadecimal.

use super::{ascii_len, bad_char};
use crate::error::ParseError;
use crate::prelude::*;

const EXPECTED: &str = "hexadecimal digits 0-9 a-f";
const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`, two characters per byte.
///
/// # Examples
///
/// ```
/// assert_eq!(idkit_core::codec::hex::encode(&[0x0a, 0xff]), "0aff");
/// ```
pub fn encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// 16 lowercase hex digits of a `u64`, zero-padded.
pub fn encode_u64(v: u64) -> String {
    encode(&v.to_be_bytes())
}

/// Parses exactly `out.len() * 2` hex digits (either case) into `out`.
///
/// # Errors
///
/// [`ParseError::empty()`], [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) or [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar).
pub fn decode_into(text: &str, out: &mut [u8]) -> Result<(), ParseError> {
    let bytes = ascii_len(text, out.len() * 2, out.len() * 2)?;
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let hi = nibble(pair[0]).ok_or_else(|| bad_char(text, 2 * i, EXPECTED))?;
        let lo = nibble(pair[1]).ok_or_else(|| bad_char(text, 2 * i + 1, EXPECTED))?;
        out[i] = (hi << 4) | lo;
    }
    Ok(())
}

/// Parses 1 to 16 hex digits (either case) as a `u64`.
///
/// # Errors
///
/// [`ParseError::empty()`], [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) or [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar).
///
/// # Examples
///
/// ```
/// use idkit_core::codec::hex::parse_u64;
/// assert_eq!(parse_u64("ff"), Ok(255));
/// assert!(parse_u64("0x1").is_err());
/// ```
pub fn parse_u64(text: &str) -> Result<u64, ParseError> {
    let bytes = ascii_len(text, 1, 16)?;
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate() {
        let n = nibble(b).ok_or_else(|| bad_char(text, i, EXPECTED))?;
        v = (v << 4) | u64::from(n);
    }
    Ok(v)
}

fn nibble(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_errors() {
        assert_eq!(encode_u64(0x0123_4567_89ab_cdef), "0123456789abcdef");
        assert_eq!(parse_u64("0123456789ABCDEF"), Ok(0x0123_4567_89ab_cdef));
        assert_eq!(parse_u64("ffffffffffffffff"), Ok(u64::MAX));
        assert_eq!(
            parse_u64("1ffffffffffffffff").unwrap_err().kind(),
            crate::ParseErrorKind::InvalidLength
        );
        let mut out = [0u8; 2];
        decode_into("0aFf", &mut out).unwrap();
        assert_eq!(out, [0x0a, 0xff]);
        assert_eq!(
            decode_into("0ag0", &mut out),
            Err(ParseError::invalid_char('g', 2, EXPECTED))
        );
    }
}
