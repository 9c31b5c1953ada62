#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::string::String;
use alloc::vec;

use idkit_core::codec::{crockford, hex};
use idkit_core::random::DefaultRandom;
use idkit_core::time_ordered::{self, AtomicTimeOrdered, TimeOrdered, WhenFull};
use idkit_core::{
    Alphabet, Codec, ComposeError, Coordination, Decoded, FieldValue, ParseError, RawId,
    SchemeInfo, TimeBounds, compose_fields,
};

pub use idkit_core;
pub use idkit_core::reexports::*;

/// The registry definition of `ulid`: monotonic, shared without a lock ([`AtomicUlid`]).
#[cfg(feature = "std")]
pub static DEFINITION: idkit_core::PlainDef<UlidCodec> = idkit_core::PlainDef {
    name: "ulid",
    aliases: &[],
    summary: "ULID: 48-bit Unix ms, 80 random bits, monotonic, Crockford base32",
    codec: UlidCodec,
    info: || UlidCodec.info(),
    generator: || idkit_core::definition::shared(AtomicUlid::new(), UlidCodec),
};

/// Bits of the random part.
const RANDOM_BITS: u32 = 80;
const RANDOM_MAX: u128 = (1 << RANDOM_BITS) - 1;
/// The last Unix millisecond a ULID holds (48 bits).
const LAST_MS: u64 = time_ordered::LAST_MS;

/// ULID's layout for idkit's time-ordered generators: the 80-bit random part is the
/// counter, drawn whole in a new millisecond (the spec sets no guard bit), and a full one
/// fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct UlidLayout;

impl time_ordered::Layout for UlidLayout {
    type Id = Ulid;
    const COUNTER_BITS: u32 = RANDOM_BITS;
    const WHEN_FULL: WhenFull = WhenFull::Fail("the 80-bit random part within one millisecond");
    const GUARD_BIT: bool = false;
    #[inline]
    fn assemble(ms: u64, counter: u128) -> Ulid {
        Ulid::from_parts(ms, counter)
    }
    fn info() -> SchemeInfo {
        UlidCodec.info()
    }
}

/// Monotonic ULIDs, per the spec's monotonicity section: in a new millisecond the 80-bit
/// random part is drawn fresh; within the same millisecond it is the previous one plus one.
/// If it would overflow, [`IdScheme::next_id`] fails with [`GenerateErrorKind::Exhausted`](idkit_core::GenerateErrorKind::Exhausted)
/// (the spec: "the generation MUST fail"), never wraps; the next millisecond works again.
///
/// When the clock steps back, the generator stays on the last millisecond it used and keeps
/// incrementing, so ids still increase. `fill` and `take` read the clock once for the batch.
///
/// Randomness comes from a [`RandomSource`](idkit_core::random::RandomSource): by default
/// [`ThreadRandom`](idkit_core::random::ThreadRandom), a ChaCha8 generator per thread seeded
/// from the operating system once; `with_source` takes a seeded one for tests,
/// `with_fixed_random` a fixed random part.
///
/// Single-owner (`Send`, not `Sync`); to share one between threads, use [`AtomicUlid`]
/// (lock-free). Both are idkit's time-ordered generator
/// ([`idkit_core::time_ordered`]) over [`UlidLayout`].
///
/// # Examples
///
/// ```
/// use idkit_ulid::{IdScheme, UlidGenerator};
/// let generator = UlidGenerator::new();
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(b > a);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
pub type UlidGenerator<C = DefaultClock, R = DefaultRandom> = TimeOrdered<UlidLayout, C, R>;

/// Monotonic ULIDs from one generator shared by threads, without a lock: `Sync`, strictly
/// increasing per generator (so per thread), never a duplicate.
///
/// The millisecond and a 24-bit counter (the top of the 80 random bits) live in one atomic
/// word advanced by compare-and-swap; the 56 bits below are random, drawn with each new
/// millisecond's counter start. In a new millisecond the counter starts at a random value
/// with its top bit clear, so at least 2^23 ids fit in one millisecond, each id within it
/// counting one up; past the counter's end, as [`UlidGenerator`] past its 80 bits, the
/// next id fails with
/// [`GenerateErrorKind::Exhausted`](idkit_core::GenerateErrorKind::Exhausted) until the
/// clock moves on. A clock that steps back keeps the last millisecond.
///
/// The word counts milliseconds from the generator's creation: 2^40 ms, 34 years.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use idkit_ulid::{AtomicUlid, IdScheme};
///
/// let generator = Arc::new(AtomicUlid::new());
/// let other = Arc::clone(&generator);
/// let theirs = std::thread::spawn(move || other.take(1_000)).join().unwrap()?;
/// let ours = generator.take(1_000)?;
/// assert!(ours.windows(2).all(|w| w[0] < w[1]));
/// assert!(ours.iter().all(|id| !theirs.contains(id)));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
pub type AtomicUlid<C = DefaultClock, R = DefaultRandom> = AtomicTimeOrdered<UlidLayout, C, R>;

/// Reads and writes ULIDs: 26 characters of Crockford base32.
///
/// **Alias policy.** Output is canonical upper case. Input follows Crockford's decoding
/// rules, as the ULID spec asks ("case insensitive"): lower case reads as upper case, `I`
/// and `L` read as `1`, `O` reads as `0`. `U` is refused, as is any other character. A first
/// character above `7` is refused as overflow (the value would not fit 128 bits).
///
/// # Examples
///
/// ```
/// use idkit_ulid::UlidCodec;
/// use idkit_core::Codec;
/// let id = UlidCodec.parse("01arz3ndektsv4rrffq69g5fav")?;
/// assert_eq!(UlidCodec.format(id), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
/// assert_eq!(UlidCodec.parse("O1ARZ3NDEKTSV4RRFFQ69G5FAV")?, id);
/// assert!(UlidCodec.parse("01ARZ3NDEKTSV4RRFFQ69G5FAU").is_err());
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UlidCodec;

impl UlidCodec {
    /// The scheme's published facts.
    pub fn info(self) -> SchemeInfo {
        SchemeInfo::new("ulid", 128)
            .with_string(
                Alphabet::CROCKFORD32,
                u32::try_from(crockford::LEN_128).unwrap_or(u32::MAX),
            )
            .with_time(1, Some(LAST_MS))
            .with_coordination(Coordination::None)
            // The shared generator's counter starts each millisecond with its top bit clear
            // (room for 2^23 ids): 79 random bits, as uuid-v7's 74 give 73.
            .with_random_bits(RANDOM_BITS - 1)
    }
}

impl Codec for UlidCodec {
    type Id = Ulid;

    fn to_raw(&self, id: Ulid) -> RawId {
        RawId::from_u128(id.0)
    }

    fn read_raw(&self, raw: &RawId) -> Result<Ulid, ParseError> {
        Ok(Ulid(raw.to_u128()?))
    }

    fn format(&self, id: Ulid) -> String {
        crockford::encode_u128(id.0)
    }

    fn format_into(&self, id: Ulid, out: &mut String) {
        crockford::encode_u128_into(id.0, out);
    }

    fn parse(&self, text: &str) -> Result<Ulid, ParseError> {
        crockford::decode_u128(text, crockford::Aliases::Crockford).map(Ulid)
    }

    fn decode(&self, id: Ulid) -> Decoded {
        let random = id.random().to_be_bytes();
        Decoded {
            timestamp_ms: Some(id.timestamp_ms()),
            // The low 10 bytes of the u128 are the 80 random bits.
            fields: vec![("randomness", FieldValue::Hex(hex::encode(&random[6..])))],
        }
    }

    /// The ULIDs of one millisecond: its random part all zeros, then all ones.
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_ulid::UlidCodec;
    /// let day = UlidCodec.bounds_at(1_469_922_850_259, &[])?;
    /// assert_eq!(day.lowest.to_string(), "01ARZ3NDEK0000000000000000");
    /// assert_eq!(day.highest.to_string(), "01ARZ3NDEKZZZZZZZZZZZZZZZZ");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<Ulid>, ComposeError> {
        time_ordered::bounds::<UlidLayout>(timestamp_ms, fields)
    }

    /// The ULID of `timestamp_ms` and its 80-bit `randomness` (the part
    /// [`decode`](Codec::decode) gives; zero when not given).
    ///
    /// ```
    /// use idkit_core::Codec;
    /// use idkit_ulid::UlidCodec;
    /// // The ULID spec's example, from its time and random part.
    /// let id = UlidCodec.compose_at(1_469_922_850_259, &[("randomness", 0xD676_4C61_EFB9_9302_BD5B)])?;
    /// assert_eq!(id.to_string(), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
    /// # Ok::<(), idkit_core::ComposeError>(())
    /// ```
    fn compose_at(&self, timestamp_ms: u64, fields: &[(&str, u128)]) -> Result<Ulid, ComposeError> {
        let [randomness] = compose_fields(fields, [("randomness", RANDOM_BITS)])?;
        time_ordered::compose::<UlidLayout>(timestamp_ms, randomness, "randomness")
    }
}

/// A ULID: 48 bits of Unix milliseconds, then 80 random bits, as one `u128`, so numeric
/// order is time order. `Display` writes the 26 Crockford base32 characters; `FromStr` reads
/// them as [`UlidCodec`] does. Converts to and from `ulid::Ulid` with `From`.
///
/// With the crate's features it goes into JSON as its string and into `uuid` /
/// `BINARY(16)` / 16-byte `BLOB` columns (see `idkit_core::column`).
///
/// # Examples
///
/// ```
/// use idkit_ulid::Ulid;
/// // The ULID spec's example.
/// let id: Ulid = "01ARZ3NDEKTSV4RRFFQ69G5FAV".parse()?;
/// assert_eq!(id.timestamp_ms(), 1_469_922_850_259);
/// assert_eq!(id.to_string(), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ulid(pub u128);

impl Ulid {
    /// The ULID of `timestamp_ms` (its low 48 bits) and `random` (its low 80 bits).
    pub const fn from_parts(timestamp_ms: u64, random: u128) -> Self {
        let time = (timestamp_ms as u128) & ((1 << 48) - 1);
        Self((time << RANDOM_BITS) | (random & RANDOM_MAX))
    }

    /// The creation time, Unix milliseconds.
    pub const fn timestamp_ms(self) -> u64 {
        // The top 48 bits always fit.
        (self.0 >> RANDOM_BITS) as u64
    }

    /// The 80 random bits.
    pub const fn random(self) -> u128 {
        self.0 & RANDOM_MAX
    }
}

impl core::fmt::Display for Ulid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&crockford::encode_u128(self.0))
    }
}

impl core::str::FromStr for Ulid {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        UlidCodec.parse(text)
    }
}

impl From<ulid::Ulid> for Ulid {
    fn from(id: ulid::Ulid) -> Self {
        Self(id.0)
    }
}

impl From<Ulid> for ulid::Ulid {
    fn from(id: Ulid) -> Self {
        ulid::Ulid(id.0)
    }
}

impl idkit_core::id::IdType for Ulid {
    type Column = idkit_core::column::Bytes<16>;
    fn parse_text(text: &str) -> Result<Self, ParseError> {
        UlidCodec.parse(text)
    }
    fn to_column(&self) -> Self::Column {
        idkit_core::column::Bytes(self.0.to_be_bytes())
    }
    fn from_column(column: Self::Column) -> Result<Self, ParseError> {
        Ok(Self(u128::from_be_bytes(column.0)))
    }
}

idkit_core::id_type!(Ulid);

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::random::SeededRandom;
    use idkit_core::{GenerateErrorKind, ManualClock};

    #[test]
    fn the_shared_generator_fails_past_a_full_counter_until_the_clock_moves() {
        let clock = ManualClock::new(9_000);
        let generator = AtomicUlid::with_source(&clock, SeededRandom::new(5));
        let first = generator.next_id().unwrap();
        assert_eq!(first.timestamp_ms(), 9_000);
        let counter = first.random() >> (RANDOM_BITS - time_ordered::SHARED_COUNTER_BITS);
        assert!(counter < 1 << 23, "{counter:#x}");
        let left = (1u128 << 24) - 1 - counter;
        let mut last = first;
        for _ in 0..left {
            let id = generator.next_id().unwrap();
            assert!(id > last);
            last = id;
        }
        let err = generator.next_id().unwrap_err();
        assert_eq!(err.kind(), GenerateErrorKind::Exhausted);
        // Nothing was issued by the failure; the next millisecond goes on.
        clock.advance(1);
        let next = generator.next_id().unwrap();
        assert!(next > last);
        assert_eq!(next.timestamp_ms(), 9_001);
    }
}
