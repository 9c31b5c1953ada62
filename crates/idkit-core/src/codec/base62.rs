//! Fixed-width base62 over big-endian bytes, alphabet `0-9A-Za-z` (KSUID's), so that for a
//! fixed width the string order is the numeric order.

use super::ascii_len;
use crate::error::ParseError;
use crate::prelude::*;

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
    // 62^5 fits a u32: the number is divided by it, in 32-bit limbs, five digits per pass.
    const BASE_5: u64 = 62u64.pow(5);
    let mut limbs: Vec<u32> = Vec::with_capacity(bytes.len().div_ceil(4));
    let head = bytes.len() % 4;
    if head != 0 {
        limbs.push(
            bytes[..head]
                .iter()
                .fold(0, |acc, &b| (acc << 8) | u32::from(b)),
        );
    }
    for chunk in bytes[head..].chunks_exact(4) {
        limbs.push(u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
    }
    // Least significant digit first.
    let mut digits: Vec<u8> = Vec::with_capacity(width + 5);
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for limb in &mut limbs {
            let acc = (rem << 32) | u64::from(*limb);
            // rem < BASE_5 < 2^32, so the quotient fits a limb.
            *limb = u32::try_from(acc / BASE_5).unwrap_or(u32::MAX);
            rem = acc % BASE_5;
        }
        for _ in 0..5 {
            digits.push(ALPHABET[usize::try_from(rem % 62).unwrap_or(0)]);
            rem /= 62;
        }
    }
    // The last pass may leave zero digits on top: drop them down to the width.
    while digits.len() > width && digits.last() == Some(&b'0') {
        digits.pop();
    }
    assert!(
        digits.len() <= width,
        "base62 width {width} too small for {} bytes",
        bytes.len()
    );
    digits.resize(width, b'0');
    digits.iter().rev().map(|&b| char::from(b)).collect()
}

/// Decodes exactly `width` characters into `out` (big-endian).
///
/// # Errors
///
/// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength), [`ParseErrorKind::InvalidChar`](crate::ParseErrorKind::InvalidChar), or [`ParseErrorKind::Overflow`](crate::ParseErrorKind::Overflow)
/// when the value does not fit in `out.len()` bytes.
pub fn decode(text: &str, width: usize, out: &mut [u8]) -> Result<(), ParseError> {
    ascii_len(text, width, width)?;
    let digit = |c| digit(c).map(usize::from);
    super::radix_decode_by(text, ALPHABET, digit, "base62 (0-9 A-Z a-z)", width, out)
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

    proptest::proptest! {
        /// The limb-wise encoder agrees with the general byte-wise long division.
        #[test]
        fn encode_matches_long_division(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..33)) {
            let width = width_for(bytes.len());
            proptest::prop_assert_eq!(
                encode(&bytes, width),
                crate::codec::radix_encode(&bytes, ALPHABET, width)
            );
            // A wider field pads with zeros.
            proptest::prop_assert_eq!(
                encode(&bytes, width + 3),
                crate::codec::radix_encode(&bytes, ALPHABET, width + 3)
            );
        }
    }

    #[test]
    #[should_panic(expected = "too small")]
    fn a_narrow_width_panics() {
        let _ = encode(&[0xff; 20], 26);
    }

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
        assert_eq!(
            decode("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, &mut out)
                .unwrap_err()
                .kind(),
            crate::ParseErrorKind::Overflow
        );
        assert_eq!(
            decode("aWgEPTl1tmebfsQzFP4bxwgy80-", 27, &mut out)
                .unwrap_err()
                .to_string(),
            "invalid character '-' at position 26: expected base62 (0-9 A-Z a-z)"
        );
        let v = 0x0123_4567_89ab_cdef_u64.to_be_bytes();
        let s = encode(&v, 11);
        let mut back = [0u8; 8];
        decode(&s, 11, &mut back).unwrap();
        assert_eq!(back, v);
    }
}
