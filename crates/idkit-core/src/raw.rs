//! [`RawId`]: an id of any scheme as big-endian bytes, held in an [`InlineBytes`].

use core::fmt;

use crate::error::ParseError;

/// The longest id idkit handles: KSUID's 20 bytes.
pub const MAX_ID_BYTES: usize = 20;

/// An id of any scheme, as its big-endian bytes (8 for 64-bit ids, 16 for UUIDs and ULIDs,
/// 20 for KSUIDs). `Copy`, no allocation.
///
/// Within one scheme, the byte order is the numeric order, so `Ord` sorts ids as the
/// scheme does.
///
/// # Examples
///
/// ```
/// use idkit_core::RawId;
/// let id = RawId::from_u64(0x0102_0304_0506_0708);
/// assert_eq!(id.as_bytes(), &[1, 2, 3, 4, 5, 6, 7, 8]);
/// assert_eq!(id.to_u64()?, 0x0102_0304_0506_0708);
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RawId(InlineBytes<MAX_ID_BYTES>);

impl RawId {
    /// A 64-bit id.
    pub fn from_u64(v: u64) -> Self {
        Self(InlineBytes::from_array(v.to_be_bytes()))
    }

    /// A 128-bit id.
    pub fn from_u128(v: u128) -> Self {
        Self(InlineBytes::from_array(v.to_be_bytes()))
    }

    /// An id from its big-endian bytes.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) when `bytes` is empty or longer than
    /// [`MAX_ID_BYTES`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ParseError> {
        match InlineBytes::new(bytes) {
            Some(stored) if !bytes.is_empty() => Ok(Self(stored)),
            _ => Err(ParseError::invalid_byte_length(
                1,
                MAX_ID_BYTES,
                bytes.len(),
            )),
        }
    }

    /// The big-endian bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// The id as exactly `N` bytes, for a scheme whose ids have one width.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) unless the id is `N` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::{ParseErrorKind, RawId};
    /// let id = RawId::from_bytes(&[7; 12])?;
    /// assert_eq!(id.to_array::<12>()?, [7; 12]);
    /// assert_eq!(id.to_array::<16>().unwrap_err().kind(), ParseErrorKind::InvalidLength);
    /// # Ok::<(), idkit_core::ParseError>(())
    /// ```
    pub fn to_array<const N: usize>(&self) -> Result<[u8; N], ParseError> {
        self.as_bytes()
            .try_into()
            .map_err(|_| ParseError::byte_length(N, self.as_bytes().len()))
    }

    /// The id as a `u64`.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) unless the id is 8 bytes.
    pub fn to_u64(&self) -> Result<u64, ParseError> {
        self.to_array().map(u64::from_be_bytes)
    }

    /// The id as a `u128`.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::InvalidLength`](crate::ParseErrorKind::InvalidLength) unless the id is 16 bytes.
    pub fn to_u128(&self) -> Result<u128, ParseError> {
        self.to_array().map(u128::from_be_bytes)
    }
}

impl fmt::Debug for RawId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RawId(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

impl Default for RawId {
    fn default() -> Self {
        Self::from_u64(0)
    }
}

/// Up to `N` bytes (at most 255) stored in place with their length: `Copy`, no allocation.
/// The length compares first, then the bytes, so values of one length sort by their bytes.
/// [`RawId`] holds its id in one, and TypeID's prefix its text.
///
/// # Examples
///
/// ```
/// use idkit_core::InlineBytes;
/// let short = InlineBytes::<4>::new(b"ab").unwrap();
/// assert_eq!((short.as_slice(), short.len()), (&b"ab"[..], 2));
/// assert!(InlineBytes::<4>::new(b"abcde").is_none());
/// assert!(InlineBytes::<4>::from_array(*b"ab") < InlineBytes::from_array(*b"ac"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InlineBytes<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> InlineBytes<N> {
    /// No bytes.
    pub const EMPTY: Self = {
        assert!(N <= 255, "an InlineBytes holds at most 255 bytes");
        Self {
            len: 0,
            bytes: [0; N],
        }
    };

    /// `bytes` stored, or `None` when there are more than `N` of them.
    #[inline]
    pub fn new(bytes: &[u8]) -> Option<Self> {
        const { assert!(N <= 255, "an InlineBytes holds at most 255 bytes") };
        if bytes.len() > N {
            return None;
        }
        let mut stored = [0; N];
        stored[..bytes.len()].copy_from_slice(bytes);
        Some(Self {
            // At most N, which is at most 255.
            len: u8::try_from(bytes.len()).ok()?,
            bytes: stored,
        })
    }

    /// The `M` bytes of `array` stored; `M` larger than `N` does not compile.
    #[inline]
    pub fn from_array<const M: usize>(array: [u8; M]) -> Self {
        const { assert!(M <= N, "more bytes than the InlineBytes holds") };
        let mut out = Self::EMPTY;
        out.bytes[..M].copy_from_slice(&array);
        // At most N, and N is at most 255.
        out.len = u8::try_from(M).unwrap_or(u8::MAX);
        out
    }

    /// The bytes stored.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// How many bytes are stored.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when no bytes are stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> Default for InlineBytes<N> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const N: usize> fmt::Debug for InlineBytes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InlineBytes({:?})", self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParseErrorKind;

    #[test]
    fn fixed_widths_read_back_and_refuse_other_widths() {
        let v = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10_u128;
        assert_eq!(RawId::from_u128(v).to_u128(), Ok(v));
        assert_eq!(RawId::from_u64(u64::MAX).to_u64(), Ok(u64::MAX));
        let twenty = RawId::from_bytes(&[0xff; MAX_ID_BYTES]).unwrap();
        assert_eq!(twenty.to_array::<MAX_ID_BYTES>(), Ok([0xff; MAX_ID_BYTES]));
        for (err, (want, found)) in [
            (RawId::from_u128(v).to_u64().unwrap_err(), (8, 16)),
            (RawId::from_u64(1).to_u128().unwrap_err(), (16, 8)),
            (twenty.to_array::<12>().unwrap_err(), (12, 20)),
        ] {
            assert_eq!(err.kind(), ParseErrorKind::InvalidLength);
            let text = err.to_string();
            assert!(text.contains(&format!("expected {want} ")), "{text}");
            assert!(text.ends_with(&format!("found {found}")), "{text}");
            assert_eq!(
                text,
                format!("invalid length: expected {want} bytes, found {found}")
            );
        }
    }

    #[test]
    fn inline_bytes_hold_up_to_their_width_and_refuse_more() {
        let full = InlineBytes::<255>::new(&[7; 255]).unwrap();
        assert_eq!((full.len(), full.as_slice()), (255, &[7; 255][..]));
        assert!(InlineBytes::<255>::new(&[7; 256]).is_none());
        assert!(InlineBytes::<4>::new(&[]).unwrap().is_empty());
        // The length compares first: a shorter value sorts first whatever its bytes.
        assert!(InlineBytes::<4>::from_array([9]) < InlineBytes::from_array([0, 0]));
    }

    #[test]
    fn bytes_outside_an_ids_widths_are_refused_in_bytes() {
        for found in [0, MAX_ID_BYTES + 1] {
            let err = RawId::from_bytes(&vec![1; found]).unwrap_err();
            assert_eq!(err.kind(), ParseErrorKind::InvalidLength);
            assert_eq!(
                err.to_string(),
                format!("invalid length: expected 1 to {MAX_ID_BYTES} bytes, found {found}")
            );
        }
    }
}
