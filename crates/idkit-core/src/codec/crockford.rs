//! Crockford's base32 (<https://www.crockford.com/base32.html>) for 128-bit values, in the
//! 26-character form ULID uses: 2 padding bits on top, so the first character is `0`-`7`.

use super::{ascii_len, bad_char, push_ascii};
use crate::error::ParseError;

/// The canonical alphabet: digits and upper-case letters without `I L O U`.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters in the 128-bit form.
pub const LEN_128: usize = 26;

/// Which non-canonical spellings a parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aliases {
    /// Only the canonical upper-case alphabet.
    Strict,
    /// Crockford's decoding rules: lower case as upper case, `I`/`L` as `1`, `O` as `0`.
    /// `U` stays invalid (Crockford reserves it).
    Crockford,
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
    let mut digits = [0u8; LEN_128];
    for (i, slot) in digits.iter_mut().enumerate() {
        // Digit i covers bits 125-5i .. 130-5i; the first digit holds only the top 3 bits.
        let shift = 5 * (LEN_128 - 1 - i);
        let digit = (v >> shift) & 0x1f;
        *slot = ALPHABET[usize::try_from(digit).unwrap_or(0)];
    }
    push_ascii(out, &digits);
}

/// Parses the 26-character form.
///
/// # Errors
///
/// [`ParseError::InvalidLength`], [`ParseError::InvalidChar`], or [`ParseError::Overflow`]
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
    const EXPECTED: &str = "crockford base32 (0-9 A-Z without I L O U)";
    let bytes = ascii_len(text, LEN_128, LEN_128)?;
    let mut v = 0u128;
    for (i, &b) in bytes.iter().enumerate() {
        let d = digit(b, aliases).ok_or_else(|| bad_char(text, i, EXPECTED))?;
        if i == 0 && d > 7 {
            return Err(ParseError::Overflow {
                max: "7ZZZZZZZZZZZZZZZZZZZZZZZZZ".into(),
            });
        }
        v = (v << 5) | u128::from(d);
    }
    Ok(v)
}

fn digit(b: u8, aliases: Aliases) -> Option<u8> {
    let b = match aliases {
        Aliases::Strict => b,
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
