//! The ObjectId value, its text and its fields: pure functions, no clock.

use alloc::string::String;
use alloc::vec;

use core::fmt;
use core::str::FromStr;

use idkit_core::codec::hex;
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds,
};

/// Bytes in an ObjectId.
pub(crate) const BYTES: usize = 12;
/// The last Unix millisecond the 32-bit seconds field holds: 2106-02-07T06:28:15.999Z.
pub(crate) const LAST_MS: u64 = u32::MAX as u64 * 1000 + 999;

/// A BSON ObjectId: 4 bytes of Unix seconds, 5 bytes of per-process random, 3 bytes of
/// counter, all big-endian. `Display` writes 24 lowercase hex digits; `FromStr` reads them
/// in either case.
///
/// # Examples
///
/// ```
/// use idkit_objectid::ObjectId;
/// let id: ObjectId = "7FFFFFFF0102030405000007".parse()?;
/// assert_eq!(id.timestamp_secs(), 0x7fff_ffff); // 2038-01-19T03:14:07Z
/// assert_eq!(id.counter(), 7);
/// assert_eq!(id.to_string(), "7fffffff0102030405000007");
/// # Ok::<(), idkit_objectid::idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub [u8; BYTES]);

impl ObjectId {
    /// Lays out an ObjectId from its three fields (`random` and `counter` keep their low 40
    /// and 24 bits).
    pub fn from_parts(secs: u32, random: u64, counter: u32) -> Self {
        let mut bytes = [0u8; BYTES];
        bytes[..4].copy_from_slice(&secs.to_be_bytes());
        bytes[4..9].copy_from_slice(&random.to_be_bytes()[3..]);
        bytes[9..].copy_from_slice(&counter.to_be_bytes()[1..]);
        Self(bytes)
    }

    /// The seconds field, read as unsigned as the spec requires.
    pub fn timestamp_secs(self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// The 5-byte process-unique random value.
    pub fn random(self) -> u64 {
        let mut b = [0u8; 8];
        b[3..].copy_from_slice(&self.0[4..9]);
        u64::from_be_bytes(b)
    }

    /// The 3-byte counter.
    pub fn counter(self) -> u32 {
        u32::from_be_bytes([0, self.0[9], self.0[10], self.0[11]])
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(&self.0))
    }
}

impl FromStr for ObjectId {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        ObjectIdCodec.parse(text)
    }
}

/// Reads and writes ObjectIds: 24 hex digits, lower case out, either case in (as the
/// drivers' `ObjectId(hex)` constructors accept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ObjectIdCodec;

impl ObjectIdCodec {
    /// The scheme's facts: time-ordered by the second, 2^24 ids per second per generator.
    pub fn info(self) -> SchemeInfo {
        SchemeInfo::new("objectid", 96)
            .with_string(Alphabet::HEX, 24)
            .with_time(1000, Some(LAST_MS))
            .with_coordination(Coordination::None)
            // Two generators' ids of one second differ by the 40-bit random value and the
            // counter, whose start was random: 64 bits.
            .with_random_bits(64)
            .with_cap(Some(1 << 24))
    }
}

impl Codec for ObjectIdCodec {
    type Id = ObjectId;

    fn to_raw(&self, id: ObjectId) -> RawId {
        // 12 bytes always fit a RawId.
        RawId::from_bytes(&id.0).unwrap_or_default()
    }

    fn read_raw(&self, raw: &RawId) -> Result<ObjectId, ParseError> {
        raw.to_array().map(ObjectId)
    }

    fn format(&self, id: ObjectId) -> String {
        hex::encode(&id.0)
    }

    fn parse(&self, text: &str) -> Result<ObjectId, ParseError> {
        let mut bytes = [0u8; BYTES];
        hex::decode_into(text, &mut bytes)?;
        Ok(ObjectId(bytes))
    }

    fn decode(&self, id: ObjectId) -> Decoded {
        Decoded {
            timestamp_ms: Some(u64::from(id.timestamp_secs()) * 1000),
            fields: vec![
                ("random", FieldValue::Hex(hex::encode(&id.0[4..9]))),
                ("counter", FieldValue::Int(u64::from(id.counter()))),
            ],
        }
    }

    /// The ObjectIds of the second holding `timestamp_ms`: random part and counter all
    /// zeros, then all ones.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_objectid::ObjectIdCodec;
    /// let second = ObjectIdCodec.bounds_at(1_700_000_000_250, &[])?;
    /// assert_eq!(second.lowest.to_string(), "6553f1000000000000000000");
    /// assert_eq!(second.highest.to_string(), "6553f100ffffffffffffffff");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<ObjectId>, ComposeError> {
        ComposeError::refuse_fields(fields)?;
        let secs = seconds(timestamp_ms)?;
        Ok(TimeBounds::new(
            ObjectId::from_parts(secs, 0, 0),
            ObjectId::from_parts(secs, u64::MAX, u32::MAX),
        ))
    }

    /// The ObjectId of `timestamp_ms`'s second, its 40-bit `random` part and 24-bit
    /// `counter` (zero when not given).
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_objectid::ObjectIdCodec;
    /// // MongoDB's documentation's example ObjectId, from its parts.
    /// let parts = [("random", 0xBC_F86C_D799), ("counter", 0x43_9011)];
    /// let id = ObjectIdCodec.compose_at(1_350_508_407_000, &parts)?;
    /// assert_eq!(id.to_string(), "507f1f77bcf86cd799439011");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn compose_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<ObjectId, ComposeError> {
        let [random, counter] =
            idkit_core::compose_fields(fields, [("random", 40), ("counter", 24)])?;
        // Both fit their widths (40 and 24 bits).
        let random = u64::try_from(random).unwrap_or(u64::MAX);
        let counter = u32::try_from(counter).unwrap_or(u32::MAX);
        Ok(ObjectId::from_parts(
            seconds(timestamp_ms)?,
            random,
            counter,
        ))
    }
}

/// The 32-bit second count of `timestamp_ms`.
fn seconds(timestamp_ms: u64) -> Result<u32, ComposeError> {
    u32::try_from(timestamp_ms / 1000)
        .map_err(|_| ComposeError::time_out_of_range(timestamp_ms, 0, LAST_MS))
}

impl idkit_core::id::IdType for ObjectId {
    type Column = idkit_core::column::Bytes<BYTES>;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> Self::Column {
        idkit_core::column::Bytes(self.0)
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Ok(Self(column.0))
    }
}

idkit_core::id_type!(ObjectId);
