//! Fixed-width base62 over big-endian bytes, alphabet `0-9A-Za-z` (KSUID's), so that for a
//! fixed width the string order is the numeric order.

use super::{ascii_len, bad_char};
use crate::error::ParseError;

/// The alphabet, in ASCII order.
pub const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Characters needed for `bytes` bytes: `ceil(bytes * 8 / log2 62)`.
pub const fn width_for(bytes: usize) -> usize {
    // log2(62) ~ 5.954196; scaled by 10^6 to stay in integers.
    (bytes * 8 * 1_000_000).div_ceil(5_954_196)
}

/// Encodes `bytes` (big-endian) as exactly `width` characters, zero-padded.
///
/// # Panics
///
/// Panics if `width` is too small for `bytes`; use [`width_for`].
///
/// # Examples
///
/// ```
/// use idkit_core::codec::base62::{encode, width_for};
/// assert_eq!(width_for(20), 27);
/// assert_eq!(encode(&[0xff; 20], 27), "aWgEPTl1tmebfsQzFP4bxwgy80V");
/// ```
pub fn encode(bytes: &[u8], width: usize) -> String {
    let text = super::radix_encode(bytes, ALPHABET, width);
    assert!(
        text.len() == width,
        "base62 width {width} too small for {} bytes",
        bytes.len()
    );
    text
}

/// Decodes exactly `width` characters into `out` (big-endian).
///
/// # Errors
///
/// [`ParseError::InvalidLength`], [`ParseError::InvalidChar`], or [`ParseError::Overflow`]
/// when the value does not fit in `out.len()` bytes.
pub fn decode(text: &str, width: usize, out: &mut [u8]) -> Result<(), ParseError> {
    const EXPECTED: &str = "base62 (0-9 A-Z a-z)";
    let bytes = ascii_len(text, width, width)?;
    out.fill(0);
    for (i, &c) in bytes.iter().enumerate() {
        let d = digit(c).ok_or_else(|| bad_char(text, i, EXPECTED))?;
        // out = out * 62 + d, from the least significant byte up.
        let mut carry = u32::from(d);
        for b in out.iter_mut().rev() {
            let acc = u32::from(*b) * 62 + carry;
            *b = u8::try_from(acc & 0xff).unwrap_or(0);
            carry = acc >> 8;
        }
        if carry != 0 {
            return Err(ParseError::Overflow {
                max: encode(&vec![0xff; out.len()], width).into(),
            });
        }
    }
    Ok(())
}

fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'Z' => Some(c - b'A' + 10),
        b'a'..=b'z' => Some(c - b'a' + 36),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width_for(8), 11);
        assert_eq!(width_for(16), 22);
        assert_eq!(width_for(20), 27);
    }

    #[test]
    fn roundtrip_and_overflow() {
        let mut out = [0u8; 20];
        // KSUID's documented Max and Nil strings (segmentio/ksuid README).
        decode("aWgEPTl1tmebfsQzFP4bxwgy80V", 27, &mut out).unwrap();
        assert_eq!(out, [0xff; 20]);
        assert_eq!(encode(&[0; 20], 27), "000000000000000000000000000");
        assert!(matches!(
            decode("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, &mut out),
            Err(ParseError::Overflow { .. })
        ));
        assert!(matches!(
            decode("aWgEPTl1tmebfsQzFP4bxwgy80-", 27, &mut out),
            Err(ParseError::InvalidChar {
                ch: '-',
                index: 26,
                ..
            })
        ));
        let v = 0x0123_4567_89ab_cdef_u64.to_be_bytes();
        let s = encode(&v, 11);
        let mut back = [0u8; 8];
        decode(&s, 11, &mut back).unwrap();
        assert_eq!(back, v);
    }
}
