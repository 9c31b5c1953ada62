//! TypeID text: `prefix_suffix`, the suffix a UUID in 26 lower-case base32 characters.

use alloc::borrow::ToOwned;
use alloc::string::{String, ToString};
use alloc::{format, vec};

use core::fmt;
use core::str::FromStr;

use idkit_core::codec::crockford::{self, Aliases};
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds,
};

use crate::prefix::{MAX_PREFIX, Prefix};

/// The characters of TypeID strings.
pub(crate) const ALPHABET: Alphabet =
    Alphabet::new("typeid", "_0123456789abcdefghijklmnopqrstuvwxyz");

/// A TypeID: a type prefix and a UUID (a UUIDv7 when generated; any UUID when read).
/// `Display` writes the canonical string; `FromStr` reads one with any valid prefix.
///
/// In a database column and in binary serde formats a TypeID is its UUID alone (PostgreSQL
/// `uuid`, `BINARY(16)`, a 16-byte `BLOB`): store a typed `Id<M, TypeId>`, whose marker
/// `M` gives the prefix back when it is read (a plain `TypeId` reads back with the empty
/// prefix). JSON and other human-readable formats keep the whole string.
///
/// # Examples
///
/// ```
/// use idkit_typeid::TypeId;
/// // The TypeID specification's own example, spec/valid.yml "valid-uuidv7".
/// let id: TypeId = "prefix_01h455vb4pex5vsknk084sn02q".parse()?;
/// assert_eq!(id.prefix().as_str(), "prefix");
/// assert_eq!(id.uuid(), 0x01890a5d_ac96_774b_bcce_b302099a8057);
/// assert_eq!(id.to_string(), "prefix_01h455vb4pex5vsknk084sn02q");
/// # Ok::<(), idkit_typeid::idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeId {
    prefix: Prefix,
    uuid: u128,
}

impl TypeId {
    /// The id of `uuid` with type `prefix`.
    pub const fn new(prefix: Prefix, uuid: u128) -> Self {
        Self { prefix, uuid }
    }

    /// The type prefix.
    pub const fn prefix(&self) -> Prefix {
        self.prefix
    }

    /// The UUID.
    pub const fn uuid(&self) -> u128 {
        self.uuid
    }

    /// The longest TypeID text: a prefix of [`MAX_PREFIX`] characters, `_`, 26 characters.
    pub const MAX_LEN: usize = MAX_PREFIX + 1 + crockford::LEN_128;

    /// Writes the id's text into `out`, without allocating, and returns it (the first bytes
    /// of `out`): what `Display` writes.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_typeid::{Prefix, TypeId};
    /// let id = TypeId::new(Prefix::new("user").unwrap(), 0x0188_0000_0000_7000_8000_0000_0000_0001);
    /// let mut out = [0; TypeId::MAX_LEN];
    /// assert_eq!(id.encode(&mut out), id.to_string());
    /// ```
    pub fn encode<'a>(&self, out: &'a mut [u8; Self::MAX_LEN]) -> &'a str {
        // ASCII throughout: a prefix of [a-z_] and the alphabet's digits.
        core::str::from_utf8(self.encode_ascii(out)).unwrap_or_default()
    }

    /// As [`TypeId::encode`], the text as its ASCII bytes, for a caller that hands bytes on
    /// (an SQL function's result) and needs no check that they are UTF-8.
    ///
    /// ```
    /// use idkit_typeid::{Prefix, TypeId};
    /// let id = TypeId::new(Prefix::new("user").unwrap(), 1);
    /// assert_eq!(id.encode_ascii(&mut [0; TypeId::MAX_LEN]), b"user_00000000000000000000000001");
    /// ```
    #[inline]
    pub fn encode_ascii<'a>(&self, out: &'a mut [u8; Self::MAX_LEN]) -> &'a [u8] {
        let mut len = 0;
        if !self.prefix.is_empty() {
            let prefix = self.prefix.as_bytes();
            out[..prefix.len()].copy_from_slice(prefix);
            out[prefix.len()] = b'_';
            len = prefix.len() + 1;
        }
        let suffix = crockford::encode_u128_ascii(self.uuid, crockford::ALPHABET_LOWER);
        out[len..len + suffix.len()].copy_from_slice(&suffix);
        &out[..len + suffix.len()]
    }

    /// The creation time, Unix milliseconds, when the UUID is a version 7 one.
    pub fn timestamp_ms(&self) -> Option<u64> {
        let version = (self.uuid >> 76) & 0xf;
        // The top 48 bits of a UUIDv7 are its Unix milliseconds.
        (version == 7).then(|| u64::try_from(self.uuid >> 80).unwrap_or(0))
    }
}

impl fmt::Display for TypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&TypeIdCodec::any().format(*self))
    }
}

impl FromStr for TypeId {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        TypeIdCodec::any().parse(text)
    }
}

/// Reads and writes TypeIDs, strictly as the specification says: the prefix matches
/// `^([a-z]([a-z_]*[a-z])?)?$` and has at most 63 characters; the separator `_` is there
/// exactly when the prefix is not empty; the suffix is 26 characters of the lower-case
/// alphabet `0123456789abcdefghjkmnpqrstvwxyz` (no upper case, no Crockford aliases, no
/// hyphens), its first character `0`-`7` (at most 128 bits).
///
/// A codec for one type ([`TypeIdCodec::typed`]) refuses ids of another type; the codec
/// for any type ([`TypeIdCodec::any`]) reads every valid prefix and, from raw bytes alone,
/// gives ids without one; a codec issuing one type ([`TypeIdCodec::issuing`]) gives raw ids
/// that type's prefix and reads text of any type, as a service does that makes one type
/// and decodes them all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeIdCodec {
    prefix: Option<Prefix>,
    /// Whether `parse` accepts every prefix even though raw ids get `prefix`.
    read_any: bool,
}

impl TypeIdCodec {
    /// Reads ids of any type.
    pub const fn any() -> Self {
        Self {
            prefix: None,
            read_any: true,
        }
    }

    /// Reads and writes ids of type `prefix` only.
    pub const fn typed(prefix: Prefix) -> Self {
        Self {
            prefix: Some(prefix),
            read_any: false,
        }
    }

    /// Gives raw ids the type `prefix` (the ids a generator of that type issues) and reads
    /// text of any type.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_typeid::{Prefix, TypeIdCodec};
    /// use idkit_typeid::idkit_core::Codec;
    /// let codec = TypeIdCodec::issuing(Prefix::EMPTY);
    /// let id = codec.parse("user_01h455vb4pex5vsknk084sn02q")?;
    /// assert_eq!(id.prefix().as_str(), "user");
    /// assert_eq!(codec.format(codec.read_raw(&codec.to_raw(id))?), "01h455vb4pex5vsknk084sn02q");
    /// # Ok::<(), idkit_typeid::idkit_core::ParseError>(())
    /// ```
    pub const fn issuing(prefix: Prefix) -> Self {
        Self {
            prefix: Some(prefix),
            read_any: true,
        }
    }

    /// The scheme's facts for ids of this codec's type (no prefix for [`TypeIdCodec::any`]).
    pub fn info(self) -> SchemeInfo {
        let prefix = self.prefix.unwrap_or_default();
        let separator = usize::from(!prefix.is_empty());
        let len = prefix.len() + separator + crockford::LEN_128;
        SchemeInfo::new("typeid", 128)
            .with_string(ALPHABET, u32::try_from(len).unwrap_or(u32::MAX))
            // The UUIDv7's 48-bit Unix ms.
            .with_time(1, Some((1 << 48) - 1))
            .with_coordination(Coordination::None)
            // The UUIDv7's counter start, as uuid-v7.
            .with_random_bits(73)
    }
}

impl Codec for TypeIdCodec {
    type Id = TypeId;

    fn to_raw(&self, id: TypeId) -> RawId {
        RawId::from_u128(id.uuid)
    }

    fn read_raw(&self, raw: &RawId) -> Result<TypeId, ParseError> {
        Ok(TypeId::new(self.prefix.unwrap_or_default(), raw.to_u128()?))
    }

    fn format(&self, id: TypeId) -> String {
        let mut out = String::with_capacity(id.prefix.len() + 1 + crockford::LEN_128);
        self.format_into(id, &mut out);
        out
    }

    fn format_into(&self, id: TypeId, out: &mut String) {
        out.push_str(id.encode(&mut [0; TypeId::MAX_LEN]));
    }

    fn parse(&self, text: &str) -> Result<TypeId, ParseError> {
        if text.is_empty() {
            return Err(ParseError::empty());
        }
        let (prefix, suffix) = match text.rfind('_') {
            Some(0) => {
                return Err(ParseError::invalid(
                    "a separator '_' with an empty type prefix: write the suffix alone",
                ));
            }
            Some(at) => (Prefix::new(&text[..at])?, &text[at + 1..]),
            None => (Prefix::EMPTY, text),
        };
        if let Some(want) = self.prefix
            && !self.read_any
            && want != prefix
        {
            return Err(ParseError::invalid(format!(
                "type prefix {:?}, expected {:?}",
                prefix.as_str(),
                want.as_str()
            )));
        }
        let uuid = crockford::decode_u128(suffix, Aliases::StrictLower)?;
        Ok(TypeId::new(prefix, uuid))
    }

    fn decode(&self, id: TypeId) -> Decoded {
        let uuid = idkit_uuid::Uuid::from_u128(id.uuid);
        Decoded {
            timestamp_ms: id.timestamp_ms(),
            fields: vec![
                ("prefix", FieldValue::Text(id.prefix.as_str().to_owned())),
                ("uuid", FieldValue::Text(uuid.hyphenated().to_string())),
            ],
        }
    }

    /// The TypeIDs of one millisecond: the codec's prefix (empty for [`TypeIdCodec::any`])
    /// and the bounds of its UUIDv7. In a column a TypeID is its UUID, so these are the
    /// bounds of a range over the column.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_typeid::{Prefix, TypeIdCodec};
    /// let codec = TypeIdCodec::issuing(Prefix::new("user")?);
    /// let ms = codec.bounds_at(1_688_000_000_000, &[])?;
    /// assert_eq!(ms.lowest.to_string(), "user_01h42a7w00e008000000000000");
    /// assert_eq!(ms.highest.to_string(), "user_01h42a7w00fzzvzzzzzzzzzzzz");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<TypeId>, ComposeError> {
        let prefix = self.prefix.unwrap_or_default();
        Ok(
            idkit_core::time_ordered::bounds::<idkit_uuid::V7Layout>(timestamp_ms, fields)?
                .map(|uuid| TypeId::new(prefix, uuid.as_u128())),
        )
    }

    /// The TypeID of this codec's prefix over the UUIDv7 of `timestamp_ms`, `rand_a` and
    /// `rand_b`, as [`UuidCodec::V7`](idkit_uuid::UuidCodec::V7) composes it.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_typeid::{Prefix, TypeIdCodec};
    /// let codec = TypeIdCodec::issuing(Prefix::new("user")?);
    /// let parts = [("rand_a", 0xCC3), ("rand_b", 0x18C4_DC0C_0C07_398F)];
    /// let id = codec.compose_at(0x017F_22E2_79B0, &parts)?;
    /// assert_eq!(id.uuid(), 0x017F_22E2_79B0_7CC3_98C4_DC0C_0C07_398F);
    /// assert!(id.to_string().starts_with("user_"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn compose_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TypeId, ComposeError> {
        let uuid = idkit_uuid::UuidCodec::V7.compose_at(timestamp_ms, fields)?;
        Ok(TypeId::new(self.prefix.unwrap_or_default(), uuid.as_u128()))
    }
}

/// A TypeID's column is its UUID; the prefix is the type's, so a plain `TypeId` reads back
/// with the empty prefix and a typed `Id<M, TypeId>` with `M::PREFIX`.
impl idkit_core::id::IdType for TypeId {
    type Column = idkit_core::column::Bytes<16>;
    /// Text in SQLite, as `idkit_typeid()` writes it: the type prefix is part of the id.
    const SQLITE_TEXT: bool = true;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> Self::Column {
        idkit_core::column::Bytes(self.uuid.to_be_bytes())
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Ok(Self::new(Prefix::EMPTY, u128::from_be_bytes(column.0)))
    }
    /// The UUID's 16 bytes then the prefix, as the idkit PostgreSQL extension's `typeid`
    /// carries it.
    fn from_prefixed_column(bytes: &[u8]) -> Result<Self, ParseError> {
        let (Some(uuid), Some(prefix)) = (bytes.get(..16), bytes.get(16..)) else {
            return Err(ParseError::invalid_byte_length(
                16,
                16 + MAX_PREFIX,
                bytes.len(),
            ));
        };
        let prefix = core::str::from_utf8(prefix)
            .map_err(|_| ParseError::invalid("a type prefix that is not text"))?;
        let mut array = [0; 16];
        array.copy_from_slice(uuid);
        Ok(Self::new(Prefix::new(prefix)?, u128::from_be_bytes(array)))
    }
    fn check_prefix(&self, prefix: &str) -> Result<(), ParseError> {
        if self.prefix.as_str() == prefix {
            return Ok(());
        }
        Err(ParseError::invalid(format!(
            "type prefix \"{}\", expected \"{prefix}\"",
            self.prefix.as_str()
        )))
    }
    fn with_prefix(self, prefix: &'static str) -> Result<Self, ParseError> {
        Ok(Self::new(Prefix::new(prefix)?, self.uuid))
    }
}

idkit_core::id_type!(TypeId);
