//! Text, bytes and decoding for UUIDs of one version.

use alloc::string::{String, ToString};
use alloc::{format, vec};

use idkit_core::codec::hex;
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds, compose_fields,
};
use uuid::Uuid;

use crate::versions;

/// The canonical form: 8-4-4-4-12 lowercase hex, 36 characters (RFC 9562 section 4).
pub const TEXT_LEN: usize = 36;

/// Reads and writes UUIDs of one version; ids of another version or variant are rejected.
/// Versions 4 and 7 are made by this crate's generators, 6 by
/// [`UuidV6`](crate::versions::UuidV6), 3, 5 and 8 by the functions of
/// [`versions`](crate::versions); version 1 is read only (its node is a MAC address).
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
#[non_exhaustive]
pub enum UuidCodec {
    /// Gregorian-time UUIDs with a node, the time's low bits first (RFC 9562 section 5.1).
    V1,
    /// Name-based UUIDs, MD5 (RFC 9562 section 5.3).
    V3,
    /// Random UUIDs (RFC 9562 section 5.4).
    V4,
    /// Name-based UUIDs, SHA-1 (RFC 9562 section 5.5).
    V5,
    /// Version 1's fields with the time's high bits first, so they sort by time (RFC 9562
    /// section 5.6).
    V6,
    /// Unix-epoch time-ordered UUIDs (RFC 9562 section 5.7).
    V7,
    /// 122 bits of the maker's own layout (RFC 9562 section 5.8).
    V8,
}

impl UuidCodec {
    /// The version number.
    pub fn version(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V3 => 3,
            Self::V4 => 4,
            Self::V5 => 5,
            Self::V6 => 6,
            Self::V7 => 7,
            Self::V8 => 8,
        }
    }

    /// The codec of `version` (1, 3 to 8); `None` for the others (2, DCE security, has no
    /// layout in RFC 9562).
    pub fn of_version(version: u8) -> Option<Self> {
        [
            Self::V1,
            Self::V3,
            Self::V4,
            Self::V5,
            Self::V6,
            Self::V7,
            Self::V8,
        ]
        .into_iter()
        .find(|c| c.version() == version)
    }

    /// The scheme's published facts.
    pub fn info(self) -> SchemeInfo {
        let len = u32::try_from(TEXT_LEN).unwrap_or(u32::MAX);
        let info = |name| SchemeInfo::new(name, 128).with_string(Alphabet::UUID_HEX, len);
        match self {
            // Time but not in byte order; made elsewhere with a MAC address as the node.
            Self::V1 => info("uuid-v1").with_coordination(Coordination::WorkerId { bits: 48 }),
            // The same name gives the same id: nothing random, nothing coordinated.
            Self::V3 => info("uuid-v3").with_coordination(Coordination::None),
            Self::V5 => info("uuid-v5").with_coordination(Coordination::None),
            Self::V4 => info("uuid-v4")
                .with_random_bits(122)
                .with_coordination(Coordination::None),
            // The clock sequence and node, drawn once per generator (the multicast bit set).
            Self::V6 => info("uuid-v6")
                .with_random_bits(61)
                .with_time(1, Some(crate::versions::LAST_MS))
                .with_coordination(Coordination::None),
            // rand_a and rand_b; a new millisecond's counter start has 73 random bits.
            Self::V7 => info("uuid-v7")
                .with_random_bits(73)
                // 48-bit Unix ms: the last representable millisecond.
                .with_time(1, Some((1 << 48) - 1))
                .with_coordination(Coordination::None),
            Self::V8 => info("uuid-v8").with_coordination(Coordination::None),
        }
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
        self.validate(parse_any(text)?)
    }

    fn decode(&self, id: Uuid) -> Decoded {
        let version = u64::from(id.as_bytes()[6] >> 4);
        let mut fields = vec![("version", FieldValue::Int(version))];
        if let Some((clock_seq, node)) = versions::clock_seq_and_node(id) {
            let ticks = versions::gregorian_ticks(id).unwrap_or(0);
            fields.push(("ticks_100ns_since_1582", FieldValue::Int(ticks)));
            fields.push(("clock_seq", FieldValue::Int(u64::from(clock_seq))));
            fields.push(("node", FieldValue::Hex(format!("{node:012x}"))));
        }
        if version == 7 {
            // RFC 9562 section 5.7's fields below the time, as `compose_at` takes them.
            let bits = id.as_u128();
            fields.push(("rand_a", FieldValue::Int(((bits >> 64) & 0xfff) as u64)));
            let rand_b = bits & ((1 << 62) - 1);
            fields.push(("rand_b", FieldValue::Hex(format!("{rand_b:016x}"))));
        }
        if let Some(custom) = versions::v8_custom(id) {
            fields.push(("custom", FieldValue::Hex(format!("{custom:031x}"))));
        }
        Decoded {
            // The Unix millisecond of versions 1, 6 and 7 (RFC 9562 sections 5.1, 5.6, 5.7).
            timestamp_ms: versions::unix_ms(id),
            fields,
        }
    }

    /// The v6 or v7 UUIDs of one millisecond: the bits below the time all zeros, then all
    /// ones (the version and variant bits as RFC 9562 sets them). Versions 3, 4, 5 and 8
    /// carry no time, and version 1's bytes do not sort by its time.
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
            Self::V7 => idkit_core::time_ordered::bounds::<crate::V7Layout>(timestamp_ms, fields),
            Self::V6 => versions::v6_bounds(timestamp_ms, fields),
            Self::V1 => Err(ComposeError::not_time_ordered("uuid-v1")),
            _ => Err(ComposeError::no_time(self.info().name)),
        }
    }

    /// A version 7 UUID of `timestamp_ms` and its `rand_a` (12 bits) and `rand_b` (62
    /// bits); a version 6 or 1 UUID of the millisecond's first 100 ns tick and its
    /// `clock_seq` (14 bits) and `node` (48 bits). Parts not given are zero. Versions 3,
    /// 4, 5 and 8 carry no time.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_uuid::UuidCodec;
    /// // RFC 9562 appendix A.6's version 7 example, from its fields.
    /// let parts = [("rand_a", 0xCC3), ("rand_b", 0x18C4_DC0C_0C07_398F)];
    /// let id = UuidCodec::V7.compose_at(0x017F_22E2_79B0, &parts)?;
    /// assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn compose_at(&self, timestamp_ms: u64, fields: &[(&str, u128)]) -> Result<Uuid, ComposeError> {
        match self {
            Self::V7 => {
                let [a, b] = compose_fields(fields, [("rand_a", 12), ("rand_b", 62)])?;
                idkit_core::time_ordered::compose::<crate::V7Layout>(
                    timestamp_ms,
                    a << 62 | b,
                    "rand_a",
                )
            }
            Self::V6 => versions::time_based_at(6, timestamp_ms, fields),
            Self::V1 => versions::time_based_at(1, timestamp_ms, fields),
            _ => Err(ComposeError::no_time(self.info().name)),
        }
    }
}

/// The 128 bits of a UUID in the 8-4-4-4-12 form, in either case, whatever its version.
pub(crate) fn parse_any(text: &str) -> Result<Uuid, ParseError> {
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
    Ok(Uuid::from_bytes(bytes))
}
