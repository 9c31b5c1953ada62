//! String codecs shared across schemes. Every parser is strict: no sign, no prefix, no
//! white space, no silent truncation; each failure names the character or length at fault.

pub mod base62;
pub mod crockford;
pub mod decimal;
pub mod hex;

use crate::error::ParseError;
use crate::prelude::*;

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

/// Reads `text`, a number written with the digits of `alphabet` (most significant first, as
/// [`radix_encode`] writes it), into `out` as big-endian bytes, zero-padded: the inverse of
/// [`radix_encode`]. Any number of digits is read, leading zero digits included; `expected`
/// names the alphabet in an error.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::radix_decode;
/// let mut out = [0u8; 2];
/// radix_decode("256", b"0123456789", "decimal digits 0-9", &mut out).unwrap();
/// assert_eq!(out, [0x01, 0x00]);
/// assert!(radix_decode("65536", b"0123456789", "decimal digits 0-9", &mut out).is_err());
/// ```
///
/// # Errors
///
/// [`ParseError::empty()`] for no digits, [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar)
/// (naming `expected`) for a character not in `alphabet`, and
/// [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow) (naming the largest value
/// `out` holds, in `alphabet`'s digits) when the number needs more than `out.len()` bytes.
///
/// # Panics
///
/// Panics if `alphabet` has fewer than 2 or more than 256 digits.
pub fn radix_decode(
    text: &str,
    alphabet: &[u8],
    expected: &'static str,
    out: &mut [u8],
) -> Result<(), ParseError> {
    let digit = |c: u8| alphabet.iter().position(|&a| a == c);
    radix_decode_by(text, alphabet, digit, expected, 1, out)
}

/// [`radix_decode`] with `digit` telling each character's value (an alphabet with aliases),
/// and the largest value in an overflow's message padded to `max_width` digits.
pub(crate) fn radix_decode_by(
    text: &str,
    alphabet: &[u8],
    digit: impl Fn(u8) -> Option<usize>,
    expected: &'static str,
    max_width: usize,
    out: &mut [u8],
) -> Result<(), ParseError> {
    assert!(
        (2..=256).contains(&alphabet.len()),
        "alphabet of {} digits",
        alphabet.len()
    );
    if text.is_empty() {
        return Err(ParseError::empty());
    }
    let base = u32::try_from(alphabet.len()).unwrap_or(256);
    out.fill(0);
    for (i, &c) in text.as_bytes().iter().enumerate() {
        // A byte of a multi-byte character is in no alphabet here, and the first such byte
        // starts its character: every byte before it was a digit.
        let d = digit(c).ok_or_else(|| bad_char(text, i, expected))?;
        // out = out * base + d, from the least significant byte up.
        let mut carry = u32::try_from(d).unwrap_or(u32::MAX);
        for b in out.iter_mut().rev() {
            let acc = u32::from(*b) * base + carry;
            *b = u8::try_from(acc & 0xff).unwrap_or(0);
            carry = acc >> 8;
        }
        if carry != 0 {
            return Err(ParseError::overflow(radix_encode(
                &vec![0xff; out.len()],
                alphabet,
                max_width,
            )));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::{base62, crockford, radix_decode, radix_encode};
    use crate::ParseErrorKind;

    const DECIMAL: &[u8] = b"0123456789";

    proptest::proptest! {
        /// What radix_encode writes, radix_decode reads back, in any base and padding.
        #[test]
        fn decode_inverts_encode(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 1..33),
            pad in 1usize..60,
        ) {
            for alphabet in [DECIMAL, &b"01"[..], &crockford::ALPHABET[..], &base62::ALPHABET[..]] {
                let text = radix_encode(&bytes, alphabet, pad);
                let mut out = vec![0xaa; bytes.len()];
                radix_decode(&text, alphabet, "digits", &mut out).unwrap();
                proptest::prop_assert_eq!(&out, &bytes);
            }
        }
    }

    #[test]
    fn the_largest_value_fits_and_one_more_overflows() {
        let mut out = [0u8; 8];
        radix_decode("18446744073709551615", DECIMAL, "digits", &mut out).unwrap();
        assert_eq!(u64::from_be_bytes(out), u64::MAX);
        let e = radix_decode("18446744073709551616", DECIMAL, "digits", &mut out).unwrap_err();
        assert_eq!(e.kind(), ParseErrorKind::Overflow);
        assert!(e.to_string().contains("18446744073709551615"), "{e}");
        // Leading zeros cost nothing.
        radix_decode(
            &format!("{}1", "0".repeat(100)),
            DECIMAL,
            "digits",
            &mut out,
        )
        .unwrap();
        assert_eq!(u64::from_be_bytes(out), 1);
    }

    #[test]
    fn bad_input_is_named() {
        let mut out = [0u8; 4];
        let empty = radix_decode("", DECIMAL, "decimal digits", &mut out).unwrap_err();
        assert_eq!(empty.kind(), ParseErrorKind::Empty);
        let e = radix_decode("12x4", DECIMAL, "decimal digits", &mut out).unwrap_err();
        assert_eq!(e.kind(), ParseErrorKind::InvalidChar);
        assert!(e.to_string().contains("'x' at position 2"), "{e}");
        assert!(e.to_string().contains("decimal digits"), "{e}");
        // The position counts characters, not bytes.
        let e = radix_decode("1é2", DECIMAL, "decimal digits", &mut out).unwrap_err();
        assert!(e.to_string().contains("'é' at position 1"), "{e}");
        assert!(radix_decode("-1", DECIMAL, "decimal digits", &mut out).is_err());
        assert!(radix_decode(" 1", DECIMAL, "decimal digits", &mut out).is_err());
    }
}
