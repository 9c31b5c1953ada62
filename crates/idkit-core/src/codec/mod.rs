//! String codecs shared across schemes. Every parser is strict: no sign, no prefix, no
//! white space, no silent truncation; each failure names the character or length at fault.

pub mod base62;
pub mod crockford;
pub mod decimal;
pub mod hex;

use crate::error::ParseError;

/// Writes the big-endian number in `bytes` with the digits of `alphabet` (its length is the
/// base), padded with the zero digit to at least `min_width` characters.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::radix_encode;
/// assert_eq!(radix_encode(&[0x01, 0x00], b"0123456789", 1), "256");
/// assert_eq!(radix_encode(&[0], b"0123456789", 1), "0");
/// assert_eq!(radix_encode(&[0xff], b"01", 10), "0011111111");
/// ```
///
/// # Panics
///
/// Panics if `alphabet` has fewer than 2 or more than 256 digits.
pub fn radix_encode(bytes: &[u8], alphabet: &[u8], min_width: usize) -> String {
    assert!(
        (2..=256).contains(&alphabet.len()),
        "alphabet of {} digits",
        alphabet.len()
    );
    let base = u32::try_from(alphabet.len()).unwrap_or(256);
    // Long division of the number by the base, one output digit per pass.
    let mut num = bytes.to_vec();
    let mut out = Vec::new();
    while out.len() < min_width || num.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in &mut num {
            let acc = (rem << 8) | u32::from(*b);
            // acc < base * 256, so the quotient fits a byte.
            *b = u8::try_from(acc / base).unwrap_or(u8::MAX);
            rem = acc % base;
        }
        out.push(alphabet[usize::try_from(rem).unwrap_or(0)]);
    }
    out.iter().rev().map(|&b| char::from(b)).collect()
}

/// Appends `bytes`, an encoder's ASCII output, to `out` in one copy.
fn push_ascii(out: &mut String, bytes: &[u8]) {
    match core::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        // Not reached: every alphabet here is ASCII. Byte by byte is still right for it.
        Err(_) => out.extend(bytes.iter().map(|&b| char::from(b))),
    }
}

/// Checks that `text` is `min..=max` ASCII characters; returns its bytes.
fn ascii_len(text: &str, min: usize, max: usize) -> Result<&[u8], ParseError> {
    if text.is_empty() {
        return Err(ParseError::empty());
    }
    let found = text.chars().count();
    if found < min || found > max {
        return Err(ParseError::invalid_length(min, max, found));
    }
    Ok(text.as_bytes())
}

/// The error for the first non-ASCII or out-of-alphabet character at byte `at`.
fn bad_char(text: &str, at: usize, expected: &'static str) -> ParseError {
    let index = text[..at].chars().count();
    let ch = text[at..].chars().next().unwrap_or('\u{fffd}');
    ParseError::invalid_char(ch, index, expected)
}
