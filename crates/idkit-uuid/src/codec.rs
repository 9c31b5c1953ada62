//! Text, bytes and decoding for UUIDs of one version.

use idkit_core::codec::hex;
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds,
};
use uuid::Uuid;

/// The canonical form: 8-4-4-4-12 lowercase hex, 36 characters (RFC 9562 section 4).
pub const TEXT_LEN: usize = 36;

/// Reads and writes UUIDs of one version (4 or 7); ids of another version or variant are
/// rejected.
///
/// Parsing accepts only the 36-character hyphenated form, in either case; braces, `urn:`
/// prefixes and the 32-digit simple form are refused, so one id has one spelling.
///
/// # Examples
///
/// ```
/// use idkit_uuid::UuidCodec;
/// use idkit_core::Codec;
/// // RFC 9562 appendix A.6, the example UUIDv7.
/// let id = UuidCodec::V7.parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F")?;
/// assert_eq!(UuidCodec::V7.format(id), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(UuidCodec::V7.decode(id).timestamp_ms, Some(0x017F_22E2_79B0));
/// assert!(UuidCodec::V4.parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f").is_err());
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UuidCodec {
    /// Random UUIDs (RFC 9562 section 5.4).
    V4,
    /// Unix-epoch time-ordered UUIDs (RFC 9562 section 5.7).
    V7,
}

impl UuidCodec {
    /// The version number.
    pub fn version(self) -> u8 {
        match self {
            Self::V4 => 4,
            Self::V7 => 7,
        }
    }

    /// The scheme's published facts.
    pub fn info(self) -> SchemeInfo {
        let len = u32::try_from(TEXT_LEN).unwrap_or(u32::MAX);
        match self {
            Self::V4 => SchemeInfo::new("uuid-v4", 128)
                .with_string(Alphabet::UUID_HEX, len)
                .with_random_bits(122),
            // rand_a and rand_b; a new millisecond's counter start has 73 random bits.
            Self::V7 => SchemeInfo::new("uuid-v7", 128)
                .with_string(Alphabet::UUID_HEX, len)
                .with_random_bits(73)
                // 48-bit Unix ms: the last representable millisecond.
                .with_time(1, Some((1 << 48) - 1)),
        }
        .with_coordination(Coordination::None)
    }

    /// Checks version and variant.
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) naming the version or variant found.
    pub fn validate(self, id: Uuid) -> Result<Uuid, ParseError> {
        let bytes = id.as_bytes();
        let version = bytes[6] >> 4;
        if version != self.version() {
            return Err(ParseError::invalid(format!(
                "version {version}, expected a version {} uuid",
                self.version()
            )));
        }
        // RFC 9562 section 4.1: the variant bits are 10xx.
        if bytes[8] >> 6 != 0b10 {
            return Err(ParseError::invalid(format!(
                "variant bits {:02b}, expected 10 (RFC 9562)",
                bytes[8] >> 6
            )));
        }
        Ok(id)
    }
}

impl Codec for UuidCodec {
    type Id = Uuid;

    fn to_raw(&self, id: Uuid) -> RawId {
        RawId::from_u128(id.as_u128())
    }

    fn read_raw(&self, raw: &RawId) -> Result<Uuid, ParseError> {
        self.validate(Uuid::from_u128(raw.to_u128()?))
    }

    fn format(&self, id: Uuid) -> String {
        id.hyphenated().to_string()
    }

    fn format_into(&self, id: Uuid, out: &mut String) {
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        out.push_str(id.hyphenated().encode_lower(&mut buf));
    }

    fn parse(&self, text: &str) -> Result<Uuid, ParseError> {
        if text.is_empty() {
            return Err(ParseError::empty());
        }
        let found = text.chars().count();
        if found != TEXT_LEN {
            return Err(ParseError::length(TEXT_LEN, found));
        }
        let mut bytes = [0u8; 16];
        let mut digits = String::with_capacity(32);
        for (i, ch) in text.chars().enumerate() {
            let hyphen = matches!(i, 8 | 13 | 18 | 23);
            match (hyphen, ch) {
                (true, '-') => {}
                (true, _) => {
                    return Err(ParseError::invalid_char(
                        ch,
                        i,
                        "'-' at positions 8, 13, 18 and 23",
                    ));
                }
                (false, c) if c.is_ascii_hexdigit() => digits.push(c),
                (false, c) => {
                    return Err(ParseError::invalid_char(c, i, "hexadecimal digits 0-9 a-f"));
                }
            }
        }
        hex::decode_into(&digits, &mut bytes)?;
        self.validate(Uuid::from_bytes(bytes))
    }

    fn decode(&self, id: Uuid) -> Decoded {
        let version = FieldValue::Int(u64::from(id.as_bytes()[6] >> 4));
        let timestamp_ms = match self {
            Self::V4 => None,
            // The top 48 bits: Unix milliseconds (RFC 9562 section 5.7).
            Self::V7 => u64::try_from(id.as_u128() >> 80).ok(),
        };
        Decoded {
            timestamp_ms,
            fields: vec![("version", version)],
        }
    }

    /// The v7 UUIDs of one millisecond: `rand_a` and `rand_b` all zeros, then all ones (the
    /// version and variant bits as RFC 9562 sets them). UUIDv4 carries no time.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_uuid::UuidCodec;
    /// let ms = UuidCodec::V7.bounds_at(0x017F_22E2_79B0, &[])?;
    /// assert_eq!(ms.lowest.to_string(), "017f22e2-79b0-7000-8000-000000000000");
    /// assert_eq!(ms.highest.to_string(), "017f22e2-79b0-7fff-bfff-ffffffffffff");
    /// assert!(UuidCodec::V4.bounds_at(0, &[]).is_err());
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<Uuid>, ComposeError> {
        match self {
            Self::V4 => Err(ComposeError::no_time("uuid-v4")),
            Self::V7 => idkit_core::time_ordered::bounds::<crate::V7Layout>(timestamp_ms, fields),
        }
    }
}
