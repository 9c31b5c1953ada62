//! Crockford's base32 (<https://www.crockford.com/base32.html>) in fixed widths: 128-bit
//! values in the 26-character form ULID and TypeID use (2 padding bits on top, so the first
//! character is `0`-`7`), 64-bit values in the 13-character form TSID uses (first character
//! `0`-`F`).

use super::{ascii_len, bad_char, push_ascii};
use crate::error::ParseError;
use crate::prelude::*;

/// The canonical alphabet: digits and upper-case letters without `I L O U`.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters in the 128-bit form.
pub const LEN_128: usize = 26;
/// Characters in the 64-bit form.
pub const LEN_64: usize = 13;

/// Which non-canonical spellings a parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aliases {
    /// Only the canonical upper-case alphabet.
    Strict,
    /// Crockford's decoding rules: lower case as upper case, `I`/`L` as `1`, `O` as `0`.
    /// `U` stays invalid (Crockford reserves it).
    Crockford,
    /// Only the lower-case alphabet, no aliases (TypeID's rule).
    StrictLower,
}

/// The 26-character encoding of `v`.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::encode_u128;
/// assert_eq!(encode_u128(u128::MAX), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
/// ```
pub fn encode_u128(v: u128) -> String {
    let mut out = String::with_capacity(LEN_128);
    encode_u128_into(v, &mut out);
    out
}

/// Appends the 26-character form of `v` to `out`.
pub fn encode_u128_into(v: u128, out: &mut String) {
    encode_into(v, LEN_128, ALPHABET, out);
}

/// Appends the `len`-character form of `v` to `out`, in the digits of `alphabet` (32 of
/// them: [`ALPHABET`] or its lower case). The top digit holds what is left of `v` above
/// `5 * (len - 1)` bits.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::{ALPHABET, LEN_64, encode_into};
/// let mut out = String::new();
/// encode_into(u128::from(u64::MAX), LEN_64, ALPHABET, &mut out);
/// assert_eq!(out, "FZZZZZZZZZZZZ");
/// ```
pub fn encode_into(v: u128, len: usize, alphabet: &[u8; 32], out: &mut String) {
    push_ascii(out, &digits(v, len, alphabet)[..len]);
}

/// The 26 ASCII characters of `v` in the digits of `alphabet`, without allocating: for a
/// caller that hands the text on as bytes.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::{ALPHABET, encode_u128_ascii};
/// assert_eq!(&encode_u128_ascii(u128::MAX, ALPHABET), b"7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
/// ```
pub fn encode_u128_ascii(v: u128, alphabet: &[u8; 32]) -> [u8; LEN_128] {
    // In three runs of 64-bit words, each of a fixed number of digits, that the compiler
    // lays out straight: the first 2 digits (bits 120..128), the next 12 (bits 60..120) and
    // the last 12 (bits 0..60). A generator that hands out text ids spends a good share of
    // each id here.
    const LOW_60: u128 = (1 << 60) - 1;
    let mut out = [0u8; LEN_128];
    let (head, rest) = out.split_at_mut(2);
    let (middle, tail) = rest.split_at_mut(12);
    // Each fits its 64 bits: the unwraps are never taken.
    word_digits(head, u64::try_from(v >> 120).unwrap_or(0), alphabet);
    word_digits(
        middle,
        u64::try_from((v >> 60) & LOW_60).unwrap_or(0),
        alphabet,
    );
    word_digits(tail, u64::try_from(v & LOW_60).unwrap_or(0), alphabet);
    out
}

/// Writes the `out.len()` last digits of `word` into `out`, the last digit from its low
/// five bits.
#[inline(always)]
fn word_digits(out: &mut [u8], word: u64, alphabet: &[u8; 32]) {
    let mut rest = word;
    for slot in out.iter_mut().rev() {
        *slot = alphabet[usize::from(u8::try_from(rest & 0x1f).unwrap_or(0))];
        rest >>= 5;
    }
}

/// The first `len` bytes: the `len` digits of `v`.
fn digits(v: u128, len: usize, alphabet: &[u8; 32]) -> [u8; LEN_128] {
    let mut digits = [0u8; LEN_128];
    // From the last digit, five bits at a time off the low end: digit i covers bits
    // 5(len-1-i) .. 5(len-i), the first what is left (a shift by a constant is cheaper than
    // the shift by 5(len-1-i) of each digit in turn).
    let mut rest = v;
    for slot in digits[..len].iter_mut().rev() {
        *slot = alphabet[usize::from(u8::try_from(rest & 0x1f).unwrap_or(0))];
        rest >>= 5;
    }
    digits
}

/// The lower-case alphabet (TypeID's).
pub const ALPHABET_LOWER: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Parses the 26-character form.
///
/// # Errors
///
/// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength), [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar), or [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow)
/// when the first character is above `7` (the value would not fit 128 bits).
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::{decode_u128, Aliases};
/// assert_eq!(decode_u128("0000000000000000000000000A", Aliases::Strict), Ok(10));
/// assert_eq!(decode_u128("000000000000000000000000oi", Aliases::Crockford), Ok(1));
/// assert!(decode_u128("80000000000000000000000000", Aliases::Strict).is_err());
/// ```
pub fn decode_u128(text: &str, aliases: Aliases) -> Result<u128, ParseError> {
    decode(text, LEN_128, 128, aliases)
}

/// Parses the 13-character form of a 64-bit value.
///
/// # Errors
///
/// As [`decode_u128`], with [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow) when the first character is above `F`.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::{decode_u64, Aliases};
/// assert_eq!(decode_u64("0000000000010", Aliases::Strict), Ok(32));
/// assert!(decode_u64("G000000000000", Aliases::Strict).is_err());
/// ```
pub fn decode_u64(text: &str, aliases: Aliases) -> Result<u64, ParseError> {
    let v = decode(text, LEN_64, 64, aliases)?;
    // decode checked the top digit: the value fits 64 bits.
    Ok(u64::try_from(v).unwrap_or(u64::MAX))
}

/// Reads a number of any width written in this alphabet (as
/// [`radix_encode`](super::radix_encode) writes it with [`ALPHABET`]) into `out` as
/// big-endian bytes, zero-padded, under `aliases`.
///
/// # Examples
///
/// ```
/// use idkit_core::codec::crockford::{decode_bytes, Aliases};
/// let mut out = [0u8; 2];
/// decode_bytes("80", Aliases::Strict, &mut out).unwrap();
/// assert_eq!(out, [0x01, 0x00]);
/// decode_bytes("8o", Aliases::Crockford, &mut out).unwrap();
/// assert_eq!(out, [0x01, 0x00]);
/// ```
///
/// # Errors
///
/// As [`radix_decode`](super::radix_decode): no digits, a character outside the alphabet
/// (after `aliases`), or a number wider than `out`.
pub fn decode_bytes(text: &str, aliases: Aliases, out: &mut [u8]) -> Result<(), ParseError> {
    let alphabet = if aliases == Aliases::StrictLower {
        ALPHABET_LOWER
    } else {
        ALPHABET
    };
    let digit = |b| digit(b, aliases).map(usize::from);
    super::radix_decode_by(text, alphabet, digit, expected(aliases), 1, out)
}

/// The alphabet as errors name it.
fn expected(aliases: Aliases) -> &'static str {
    match aliases {
        Aliases::StrictLower => "lower-case crockford base32 (0-9 a-z without i l o u)",
        _ => "crockford base32 (0-9 A-Z without I L O U)",
    }
}

/// Parses `len` characters holding a value of `value_bits` bits (at most 128): the first
/// character may hold only the bits left above `5 * (len - 1)`.
fn decode(text: &str, len: usize, value_bits: usize, aliases: Aliases) -> Result<u128, ParseError> {
    let expected = expected(aliases);
    let bytes = ascii_len(text, len, len)?;
    let top_bits = value_bits - 5 * (len - 1);
    let top_max = (1u8 << top_bits) - 1;
    let mut v = 0u128;
    for (i, &b) in bytes.iter().enumerate() {
        let d = digit(b, aliases).ok_or_else(|| bad_char(text, i, expected))?;
        if i == 0 && d > top_max {
            let alphabet = if aliases == Aliases::StrictLower {
                ALPHABET_LOWER
            } else {
                ALPHABET
            };
            let mut max = String::with_capacity(len);
            max.push(char::from(alphabet[usize::from(top_max)]));
            max.extend(core::iter::repeat_n(char::from(alphabet[31]), len - 1));
            return Err(ParseError::overflow(max));
        }
        v = (v << 5) | u128::from(d);
    }
    Ok(v)
}

fn digit(b: u8, aliases: Aliases) -> Option<u8> {
    let b = match aliases {
        Aliases::Strict => b,
        Aliases::StrictLower if b.is_ascii_uppercase() => return None,
        Aliases::StrictLower => b.to_ascii_uppercase(),
        Aliases::Crockford => match b.to_ascii_uppercase() {
            b'I' | b'L' => b'1',
            b'O' => b'0',
            up => up,
        },
    };
    ALPHABET
        .iter()
        .position(|&c| c == b)
        .and_then(|p| u8::try_from(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_edges() {
        for v in [0, 1, 31, 32, u128::MAX, 1 << 127, u128::MAX >> 1] {
            assert_eq!(decode_u128(&encode_u128(v), Aliases::Strict), Ok(v));
        }
        assert_eq!(encode_u128(0), "00000000000000000000000000");
    }

    proptest::proptest! {
        /// The fast 26-digit form against the definition: digit i is bits
        /// 5(25-i) .. 5(26-i) of the value, in both alphabets.
        #[test]
        fn ascii_digits_match_their_positions(v in proptest::num::u128::ANY) {
            for alphabet in [ALPHABET, ALPHABET_LOWER] {
                let want: Vec<u8> = (0..LEN_128)
                    .map(|i| alphabet[usize::try_from((v >> (5 * (25 - i))) & 0x1f).unwrap()])
                    .collect();
                proptest::prop_assert_eq!(&encode_u128_ascii(v, alphabet)[..], &want[..]);
                proptest::prop_assert_eq!(decode_u128(&encode_u128(v), Aliases::Strict), Ok(v));
            }
        }
    }

    #[test]
    fn alias_policy() {
        let canonical = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
        let v = decode_u128(canonical, Aliases::Strict).unwrap();
        assert_eq!(
            decode_u128(&canonical.to_lowercase(), Aliases::Crockford),
            Ok(v)
        );
        assert!(decode_u128(&canonical.to_lowercase(), Aliases::Strict).is_err());
        assert!(decode_u128("0000000000000000000000000U", Aliases::Crockford).is_err());
        assert!(decode_u128("0000000000000000000000000I", Aliases::Strict).is_err());
    }
}
