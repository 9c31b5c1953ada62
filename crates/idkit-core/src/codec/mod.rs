//! String codecs shared across schemes. Every parser is strict: no sign, no prefix, no
//! white space, no silent truncation; each failure names the character or length at fault.

pub mod base62;
pub mod crockford;
pub mod decimal;
pub mod hex;

use crate::error::ParseError;

/// Checks that `text` is `min..=max` ASCII characters; returns its bytes.
fn ascii_len(text: &str, min: usize, max: usize) -> Result<&[u8], ParseError> {
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    let found = text.chars().count();
    if found < min || found > max {
        return Err(ParseError::InvalidLength { min, max, found });
    }
    Ok(text.as_bytes())
}

/// The error for the first non-ASCII or out-of-alphabet character at byte `at`.
fn bad_char(text: &str, at: usize, expected: &'static str) -> ParseError {
    let index = text[..at].chars().count();
    let ch = text[at..].chars().next().unwrap_or('\u{fffd}');
    ParseError::InvalidChar {
        ch,
        index,
        expected,
    }
}
