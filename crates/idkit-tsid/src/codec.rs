//! The TSID value, its text and its fields: pure functions, no clock.

use alloc::string::String;
use alloc::vec;

use core::fmt;
use core::str::FromStr;

use idkit_core::codec::crockford::{self, Aliases};
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds,
};

/// TSID's epoch: 2020-01-01T00:00:00Z, in Unix milliseconds.
pub const EPOCH_MS: u64 = 1_577_836_800_000;
/// Bits below the time field: node and counter together.
pub const RANDOM_BITS: u32 = 22;
/// Bits of the time field.
const TIME_BITS: u32 = 42;
/// The last Unix millisecond the 42-bit time field holds (2159-05-15).
pub(crate) const LAST_MS: u64 = EPOCH_MS + (1 << TIME_BITS) - 1;

/// A TSID: 42 bits of milliseconds since [`EPOCH_MS`], then 22 bits of node and counter.
/// `Display` writes the 13-character canonical string; `FromStr` reads it.
///
/// # Examples
///
/// ```
/// use idkit_tsid::Tsid;
/// let id: Tsid = "0AXFXR5W7VBX0".parse()?;
/// assert_eq!(id.0, 0x0575_fdc1_787d_afa0);
/// assert_eq!(id.to_string(), "0AXFXR5W7VBX0");
/// # Ok::<(), idkit_tsid::idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tsid(pub u64);

impl Tsid {
    /// Lays out a TSID from its time field (ms since [`EPOCH_MS`]) and its 22 low bits.
    pub const fn from_parts(time: u64, random: u64) -> Self {
        Self((time << RANDOM_BITS) | (random & ((1 << RANDOM_BITS) - 1)))
    }

    /// The creation time, Unix milliseconds.
    pub const fn timestamp_ms(self) -> u64 {
        (self.0 >> RANDOM_BITS) + EPOCH_MS
    }

    /// The 22 bits of node and counter.
    pub const fn random(self) -> u64 {
        self.0 & ((1 << RANDOM_BITS) - 1)
    }
}

impl fmt::Display for Tsid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&TsidCodec::default().format(*self))
    }
}

impl FromStr for Tsid {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        TsidCodec::default().parse(text)
    }
}

/// Reads and writes TSIDs: 13 characters of Crockford base32 for 64 bits, so the first
/// character is `0`-`F`. The node width decides how the 22 low bits split into `node` and
/// `counter` when decoding.
///
/// **Alias policy**, as tsid-creator's `Tsid.from`: output is upper case; input may be
/// lower case, and `I`/`L` read as `1`, `O` as `0`. `U` and every other character are
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsidCodec {
    node_bits: u32,
}

impl Default for TsidCodec {
    /// The default node width, 10 bits.
    fn default() -> Self {
        Self {
            node_bits: crate::DEFAULT_NODE_BITS,
        }
    }
}

impl TsidCodec {
    /// A codec that decodes `node_bits` of node (0 to 20; more is taken as 20).
    pub const fn with_node_bits(node_bits: u32) -> Self {
        Self {
            node_bits: if node_bits > crate::MAX_NODE_BITS {
                crate::MAX_NODE_BITS
            } else {
                node_bits
            },
        }
    }

    /// Bits of the node field.
    pub const fn node_bits(self) -> u32 {
        self.node_bits
    }

    /// The scheme's facts. The cap counts the ids of a millisecond on average: a counter
    /// of `22 - node_bits` bits starting at a random value in its lower half.
    pub fn info(self) -> SchemeInfo {
        let counter_bits = RANDOM_BITS - self.node_bits;
        let coordination = if self.node_bits == 0 {
            Coordination::None
        } else {
            Coordination::WorkerId {
                bits: self.node_bits,
            }
        };
        SchemeInfo::new("tsid", 64)
            .with_string(
                Alphabet::CROCKFORD32,
                u32::try_from(crockford::LEN_64).unwrap_or(u32::MAX),
            )
            .with_time(1, Some(LAST_MS))
            .with_coordination(coordination)
            // Generators on one node differ only by the counter's random start (lower half).
            .with_random_bits(counter_bits - 1)
            // 3/4 of 2^counter_bits per ms on average, times 1000 ms.
            .with_cap(Some((3u64 << counter_bits) / 4 * 1000))
    }
}

/// Milliseconds since the TSID epoch of the Unix millisecond `timestamp_ms`.
fn since_epoch(timestamp_ms: u64) -> Result<u64, ComposeError> {
    if !(EPOCH_MS..=LAST_MS).contains(&timestamp_ms) {
        return Err(ComposeError::time_out_of_range(
            timestamp_ms,
            EPOCH_MS,
            LAST_MS,
        ));
    }
    Ok(timestamp_ms - EPOCH_MS)
}

impl Codec for TsidCodec {
    type Id = Tsid;

    fn to_raw(&self, id: Tsid) -> RawId {
        RawId::from_u64(id.0)
    }

    fn read_raw(&self, raw: &RawId) -> Result<Tsid, ParseError> {
        raw.to_u64().map(Tsid)
    }

    fn format(&self, id: Tsid) -> String {
        let mut out = String::with_capacity(crockford::LEN_64);
        self.format_into(id, &mut out);
        out
    }

    fn format_into(&self, id: Tsid, out: &mut String) {
        crockford::encode_into(
            u128::from(id.0),
            crockford::LEN_64,
            crockford::ALPHABET,
            out,
        );
    }

    fn parse(&self, text: &str) -> Result<Tsid, ParseError> {
        crockford::decode_u64(text, Aliases::Crockford).map(Tsid)
    }

    fn decode(&self, id: Tsid) -> Decoded {
        let counter_bits = RANDOM_BITS - self.node_bits;
        let random = id.random();
        Decoded {
            timestamp_ms: Some(id.timestamp_ms()),
            fields: vec![
                ("node", FieldValue::Int(random >> counter_bits)),
                (
                    "counter",
                    FieldValue::Int(random & ((1 << counter_bits) - 1)),
                ),
            ],
        }
    }

    /// The TSIDs of one millisecond: node and counter all zeros, then all ones, or with
    /// `("node", n)` that node's counter from zero to its last value.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_tsid::TsidCodec;
    /// let ms = TsidCodec::default().bounds_at(1_700_000_000_000, &[])?;
    /// assert_eq!((ms.lowest.0, ms.highest.0), (0x071c_5fa0_0000_0000, 0x071c_5fa0_003f_ffff));
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<Tsid>, ComposeError> {
        let counter_bits = RANDOM_BITS - self.node_bits;
        let node_max = (1_u64 << self.node_bits) - 1;
        let (mut low, mut high) = (0, (1 << RANDOM_BITS) - 1);
        for &(name, value) in fields {
            if name != "node" {
                return Err(ComposeError::unknown_field(name, "node"));
            }
            let node = u64::try_from(value).ok().filter(|n| *n <= node_max).ok_or(
                ComposeError::field_out_of_range("node", value, node_max.into()),
            )?;
            low = node << counter_bits;
            high = low | ((1 << counter_bits) - 1);
        }
        let time = since_epoch(timestamp_ms)?;
        Ok(TimeBounds::new(
            Tsid::from_parts(time, low),
            Tsid::from_parts(time, high),
        ))
    }

    /// The TSID of `timestamp_ms` with its `node` and `counter` (widths by this codec's
    /// node bits; zero when not given).
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_tsid::TsidCodec;
    /// let codec = TsidCodec::with_node_bits(10);
    /// let id = codec.compose_at(1_800_000_000_000, &[("node", 7), ("counter", 42)])?;
    /// let decoded = codec.decode(id);
    /// assert_eq!(decoded.timestamp_ms, Some(1_800_000_000_000));
    /// assert_eq!(id.random(), 7 << 12 | 42);
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn compose_at(&self, timestamp_ms: u64, fields: &[(&str, u128)]) -> Result<Tsid, ComposeError> {
        let counter_bits = RANDOM_BITS - self.node_bits;
        let [node, counter] = idkit_core::compose_fields(
            fields,
            [("node", self.node_bits), ("counter", counter_bits)],
        )?;
        // Both fit their widths, 22 bits together.
        let random = u64::try_from(node << counter_bits | counter).unwrap_or(u64::MAX);
        Ok(Tsid::from_parts(since_epoch(timestamp_ms)?, random))
    }
}

impl idkit_core::id::IdType for Tsid {
    type Column = idkit_core::column::BigInt;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        text.parse()
    }
    fn to_column(&self) -> Self::Column {
        idkit_core::column::BigInt(self.0)
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Ok(Self(column.0))
    }
}

idkit_core::id_type!(Tsid);
