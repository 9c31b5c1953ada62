#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::string::String;
use alloc::vec;

use idkit_core::codec::{base62, hex};
use idkit_core::random::{DefaultRandom, RandomSource};
use idkit_core::{
    Alphabet, Clock, Codec, ComposeError, Coordination, Decoded, FieldValue, GenerateError,
    ParseError, RawId, SchemeInfo, TimeBounds,
};

pub use idkit_core;
pub use idkit_core::reexports::*;

/// The registry definition of `ksuid`: stateless, shared as it is.
#[cfg(feature = "std")]
pub static DEFINITION: idkit_core::PlainDef<KsuidCodec> = idkit_core::PlainDef {
    name: "ksuid",
    aliases: &[],
    summary: "KSUID: 32-bit seconds since 2014, 128-bit payload, base62",
    codec: KsuidCodec,
    info: || KsuidCodec.info(),
    generator: || idkit_core::definition::shared(KsuidGenerator::new(), KsuidCodec),
};

/// KSUID's epoch: 1400000000 seconds after the Unix epoch (2014-05-13T16:53:20Z).
pub const EPOCH_SECONDS: u64 = 1_400_000_000;
/// Bytes in a KSUID: 4 of time, 16 of payload.
pub const BYTES: usize = 20;
/// Characters in the canonical string.
pub const TEXT_LEN: usize = 27;

/// KSUIDs: 32 bits of seconds since [`EPOCH_SECONDS`], then a 128-bit random payload.
///
/// Ids sort by second; within a second their order is random (KSUIDs have no monotonic
/// mode). The payload comes from `idkit_core::random`: a ChaCha8 generator per thread,
/// seeded from the operating system once, so no id costs a system call. Stateless: one value
/// serves every thread.
///
/// # Examples
///
/// ```
/// use idkit_ksuid::{IdScheme, KsuidGenerator, KsuidCodec};
/// use idkit_core::Codec;
/// let id = KsuidGenerator::new().next_id()?;
/// assert_eq!(KsuidCodec.format(id).len(), 27);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct KsuidGenerator<C = DefaultClock, R = DefaultRandom> {
    clock: C,
    random: R,
}

#[cfg(feature = "std")]
impl KsuidGenerator {
    /// A generator on a [`TickerClock`].
    pub fn new() -> Self {
        Self::with_clock(idkit_core::TickerClock::new())
    }
}

#[cfg(feature = "std")]
impl<C: Clock> KsuidGenerator<C> {
    /// A generator on `clock`.
    pub fn with_clock(clock: C) -> Self {
        Self::with_source(clock, idkit_core::random::ThreadRandom)
    }
}

impl<C: Clock, R: RandomSource> KsuidGenerator<C, R> {
    /// A generator on `clock` drawing payloads from `random`: with a
    /// [`SeededRandom`](idkit_core::random::SeededRandom), the same ids every run.
    pub fn with_source(clock: C, random: R) -> Self {
        Self { clock, random }
    }
}

const LAST_MS: u64 = (EPOCH_SECONDS + u32::MAX as u64) * 1000 + 999;

impl<C: Clock, R: RandomSource> IdScheme for KsuidGenerator<C, R> {
    type Id = Ksuid;

    fn next_id(&self) -> Result<Ksuid, GenerateError> {
        let now_ms = self.clock.now_ms();
        let secs = (now_ms / 1000)
            .checked_sub(EPOCH_SECONDS)
            .ok_or(GenerateError::before_epoch(now_ms, EPOCH_SECONDS * 1000))?;
        let secs = u32::try_from(secs).map_err(|_| GenerateError::time_overflow(LAST_MS))?;
        let mut payload = [0u8; 16];
        self.random.fill(&mut payload)?;
        Ok(Ksuid::from_parts(secs, payload))
    }

    fn info(&self) -> SchemeInfo {
        KsuidCodec.info()
    }
}

/// Reads and writes KSUIDs: exactly 27 base62 characters (`0-9A-Za-z`), case-sensitive.
/// Values above the maximum KSUID (`aWgEPTl1tmebfsQzFP4bxwgy80V`) are refused as overflow.
///
/// # Examples
///
/// ```
/// use idkit_ksuid::KsuidCodec;
/// use idkit_core::Codec;
/// // From segmentio/ksuid's README.
/// let id = KsuidCodec.parse("0ujtsYcgvSTl8PAuAdqWYSMnLOv")?;
/// assert_eq!(KsuidCodec.decode(id).timestamp_ms, Some(1_507_608_047_000));
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KsuidCodec;

impl KsuidCodec {
    /// The scheme's published facts.
    pub fn info(self) -> SchemeInfo {
        SchemeInfo::new("ksuid", 160)
            .with_string(
                Alphabet::BASE62,
                u32::try_from(TEXT_LEN).unwrap_or(u32::MAX),
            )
            .with_time(1000, Some(LAST_MS))
            .with_coordination(Coordination::None)
            .with_random_bits(128)
    }
}

impl Codec for KsuidCodec {
    type Id = Ksuid;

    fn to_raw(&self, id: Ksuid) -> RawId {
        // 20 bytes always fit a RawId.
        RawId::from_bytes(id.bytes()).unwrap_or_default()
    }

    fn read_raw(&self, raw: &RawId) -> Result<Ksuid, ParseError> {
        raw.to_array().map(Ksuid::from_bytes)
    }

    fn format(&self, id: Ksuid) -> String {
        base62::encode(id.bytes(), TEXT_LEN)
    }

    fn parse(&self, text: &str) -> Result<Ksuid, ParseError> {
        let mut bytes = [0u8; BYTES];
        base62::decode(text, TEXT_LEN, &mut bytes)?;
        Ok(Ksuid::from_bytes(bytes))
    }

    fn decode(&self, id: Ksuid) -> Decoded {
        let secs = u64::from(id.timestamp_raw()) + EPOCH_SECONDS;
        let payload = id.payload();
        Decoded {
            timestamp_ms: Some(secs * 1000),
            fields: vec![("payload", FieldValue::Hex(hex::encode(&payload)))],
        }
    }

    /// The KSUIDs of the second holding `timestamp_ms`: the payload all zeros, then all
    /// ones.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_ksuid::KsuidCodec;
    /// // The second of the KSUID README's example, 0ujtsYcgvSTl8PAuAdqWYSMnLOv.
    /// let second = KsuidCodec.bounds_at(1_507_608_047_500, &[])?;
    /// assert_eq!(second.lowest.to_string(), "0ujtsT5xN49RIv7vRkXBy3rhkHI");
    /// assert_eq!(second.highest.to_string(), "0ujtsat1PHPnOOnhBuKKkwyxRtP");
    /// assert!(second.holds(&"0ujtsYcgvSTl8PAuAdqWYSMnLOv".parse()?));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<Ksuid>, ComposeError> {
        ComposeError::refuse_fields(fields)?;
        let secs = ksuid_seconds(timestamp_ms)?;
        Ok(TimeBounds::new(
            Ksuid::from_parts(secs, [0; 16]),
            Ksuid::from_parts(secs, [0xff; 16]),
        ))
    }

    /// The KSUID of `timestamp_ms`'s second and its 128-bit `payload` (zero when not
    /// given).
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_ksuid::KsuidCodec;
    /// // Segment's example KSUID, from its time and payload.
    /// let payload = 0xB5A1_CD34_B5F9_9D11_54FB_6853_345C_9735;
    /// let id = KsuidCodec.compose_at(1_507_608_047_000, &[("payload", payload)])?;
    /// assert_eq!(id.to_string(), "0ujtsYcgvSTl8PAuAdqWYSMnLOv");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn compose_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<Ksuid, ComposeError> {
        let [payload] = idkit_core::compose_fields(fields, [("payload", 128)])?;
        Ok(Ksuid::from_parts(
            ksuid_seconds(timestamp_ms)?,
            payload.to_be_bytes(),
        ))
    }
}

/// The KSUID second count of `timestamp_ms`.
fn ksuid_seconds(timestamp_ms: u64) -> Result<u32, ComposeError> {
    (timestamp_ms / 1000)
        .checked_sub(EPOCH_SECONDS)
        .and_then(|s| u32::try_from(s).ok())
        .ok_or(ComposeError::time_out_of_range(
            timestamp_ms,
            EPOCH_SECONDS * 1000,
            LAST_MS,
        ))
}

/// A KSUID: 4 bytes of seconds since [`EPOCH_SECONDS`], then 16 bytes of payload, big-endian,
/// so byte order is time order. `Display` writes the 27 base62 characters; `FromStr` reads
/// them. Converts to and from `svix_ksuid::Ksuid` with `From`.
///
/// With the crate's features it goes into JSON as its string and into `bytea` /
/// `BINARY(20)` / `BLOB` columns (see `idkit_core::column`).
///
/// # Examples
///
/// ```
/// use idkit_ksuid::Ksuid;
/// // From segmentio/ksuid's README.
/// let id: Ksuid = "0ujtsYcgvSTl8PAuAdqWYSMnLOv".parse()?;
/// assert_eq!(id.timestamp_ms(), 1_507_608_047_000);
/// assert_eq!(id.to_string(), "0ujtsYcgvSTl8PAuAdqWYSMnLOv");
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ksuid([u8; BYTES]);

impl Ksuid {
    /// The KSUID of these 20 bytes.
    pub const fn from_bytes(bytes: [u8; BYTES]) -> Self {
        Self(bytes)
    }

    /// The KSUID of `secs` since [`EPOCH_SECONDS`] and `payload`.
    pub fn from_parts(secs: u32, payload: [u8; 16]) -> Self {
        let mut bytes = [0u8; BYTES];
        bytes[..4].copy_from_slice(&secs.to_be_bytes());
        bytes[4..].copy_from_slice(&payload);
        Self(bytes)
    }

    /// The 20 bytes.
    pub const fn bytes(&self) -> &[u8; BYTES] {
        &self.0
    }

    /// Seconds since [`EPOCH_SECONDS`].
    pub fn timestamp_raw(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// The creation time, Unix milliseconds (a whole second).
    pub fn timestamp_ms(&self) -> u64 {
        (u64::from(self.timestamp_raw()) + EPOCH_SECONDS) * 1000
    }

    /// The 16 bytes of payload.
    pub fn payload(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.0[4..]);
        out
    }
}

impl core::fmt::Display for Ksuid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&KsuidCodec.format(*self))
    }
}

impl core::str::FromStr for Ksuid {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        KsuidCodec.parse(text)
    }
}

#[cfg(feature = "std")]
impl From<svix_ksuid::Ksuid> for Ksuid {
    fn from(id: svix_ksuid::Ksuid) -> Self {
        use svix_ksuid::KsuidLike;
        let mut bytes = [0u8; BYTES];
        bytes.copy_from_slice(id.bytes());
        Self(bytes)
    }
}

#[cfg(feature = "std")]
impl From<Ksuid> for svix_ksuid::Ksuid {
    fn from(id: Ksuid) -> Self {
        use svix_ksuid::KsuidLike;
        svix_ksuid::Ksuid::from_bytes(id.0)
    }
}

impl idkit_core::id::IdType for Ksuid {
    type Column = idkit_core::column::Bytes<BYTES>;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        KsuidCodec.parse(text)
    }
    fn to_column(&self) -> Self::Column {
        idkit_core::column::Bytes(self.0)
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Ok(Self(column.0))
    }
}

idkit_core::id_type!(Ksuid);
