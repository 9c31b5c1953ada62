//! The [`IdScheme`] trait, the facts every scheme publishes ([`SchemeInfo`]), the capability
//! traits ([`Codec`], [`Compose`]) and the object-safe form ([`DynScheme`]).

use alloc::sync::Arc;
use core::fmt;

use crate::prelude::*;

use crate::error::{ComposeError, GenerateError, ParseError};
use crate::raw::RawId;

/// A generator of unique ids.
///
/// One method is required, [`IdScheme::next_id`]; the batch methods are built on it and
/// generators override them where a batch is cheaper than a loop (the lock-free Snowflake
/// reserves a whole run of sequence numbers with one atomic operation).
///
/// `next_id` takes `&self`, so the one trait serves both kinds of generator:
///
/// * a **single-owner** generator keeps its state in `Cell`s; it is `Send` but not `Sync`,
///   so the compiler keeps it on one thread at a time and it pays for no synchronisation;
/// * a **shared** generator (atomics or a mutex) is `Sync`; put it in an `Arc` or a `static`
///   and call it from every thread.
///
/// # Examples
///
/// ```
/// use idkit_core::{GenerateError, IdScheme, SchemeInfo};
/// use std::cell::Cell;
///
/// /// Counts up from 1: the smallest possible scheme.
/// #[derive(Debug, Default)]
/// struct Counter(Cell<u64>);
///
/// impl IdScheme for Counter {
///     type Id = u64;
///     fn next_id(&self) -> Result<u64, GenerateError> {
///         let next = self.0.get().checked_add(1)
///             .ok_or(GenerateError::exhausted("the 64-bit counter"))?;
///         self.0.set(next);
///         Ok(next)
///     }
///     fn info(&self) -> SchemeInfo {
///         SchemeInfo::new("counter", 64)
///     }
/// }
///
/// let ids = Counter::default().take(3)?;
/// assert_eq!(ids, [1, 2, 3]);
/// # Ok::<(), GenerateError>(())
/// ```
pub trait IdScheme {
    /// The id type, e.g. `u64` for Snowflake layouts.
    type Id: Copy;

    /// Issues the next id.
    ///
    /// # Errors
    ///
    /// A [`GenerateError`] when no id can be issued right now (clock went back further than
    /// the policy allows, time field or id space exhausted, store unavailable). No id is
    /// consumed by a failed call.
    fn next_id(&self) -> Result<Self::Id, GenerateError>;

    /// Fills `out` with consecutive ids, in the order issued.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::next_id`]. On error, the slots before the failing one hold ids that
    /// were issued; they are not reissued later (a gap, never a duplicate).
    fn fill(&self, out: &mut [Self::Id]) -> Result<(), GenerateError> {
        for slot in out {
            *slot = self.next_id()?;
        }
        Ok(())
    }

    /// Issues `n` ids into a new vector.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::fill`].
    fn take(&self, n: usize) -> Result<Vec<Self::Id>, GenerateError> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.next_id()?);
        }
        Ok(out)
    }

    /// Issues the next id as `T`: the scheme's id type (`SnowflakeId<Twitter>` for a
    /// generator of raw words) or a typed id ([`Id<User, _>`](crate::id::Id)), at no cost
    /// over [`IdScheme::next_id`].
    ///
    /// # Errors
    ///
    /// As [`IdScheme::next_id`]; for a typed TypeID, a marker prefix that is not a valid
    /// type name.
    #[inline]
    fn next_as<T: crate::id::FromGenerated<Self::Id>>(&self) -> Result<T, GenerateError>
    where
        Self: Sized,
    {
        self.next_id().and_then(T::from_generated)
    }

    /// The scheme's published facts.
    fn info(&self) -> SchemeInfo;

    /// What the generator has met so far: clock rollbacks and waits for the next tick.
    /// Schemes without a clock-driven sequence report zeros.
    fn stats(&self) -> GeneratorStats {
        GeneratorStats::default()
    }
}

/// Events a generator counts since it was built; a service exports them as metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GeneratorStats {
    /// Times the generator found the clock behind the last time it issued.
    pub clock_rollbacks: u64,
    /// Times it waited for the next tick because the sequence of the current one ran out.
    pub tick_waits: u64,
}

impl GeneratorStats {
    /// Stats with these counts.
    pub const fn new(clock_rollbacks: u64, tick_waits: u64) -> Self {
        Self {
            clock_rollbacks,
            tick_waits,
        }
    }
}

/// `IdScheme` through a reference or a shared pointer: the pointee's, every method.
macro_rules! forward_id_scheme {
    ($($pointer:ty),*) => {$(
        impl<T: IdScheme + ?Sized> IdScheme for $pointer {
            type Id = T::Id;
            fn next_id(&self) -> Result<T::Id, GenerateError> {
                (**self).next_id()
            }
            fn fill(&self, out: &mut [T::Id]) -> Result<(), GenerateError> {
                (**self).fill(out)
            }
            fn take(&self, n: usize) -> Result<Vec<T::Id>, GenerateError> {
                (**self).take(n)
            }
            fn info(&self) -> SchemeInfo {
                (**self).info()
            }
            fn stats(&self) -> GeneratorStats {
                (**self).stats()
            }
        }
    )*};
}

forward_id_scheme!(&T, Arc<T>);

/// A single-owner generator behind a mutex is a shared one: `Mutex<UuidV7>` can be used
/// from every thread. A poisoned lock is recovered, since generators assign their state
/// whole after an id is decided.
#[cfg(feature = "std")]
impl<G: IdScheme> IdScheme for std::sync::Mutex<G> {
    type Id = G::Id;
    fn next_id(&self) -> Result<G::Id, GenerateError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .next_id()
    }
    fn fill(&self, out: &mut [G::Id]) -> Result<(), GenerateError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .fill(out)
    }
    fn take(&self, n: usize) -> Result<Vec<G::Id>, GenerateError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take(n)
    }
    fn info(&self) -> SchemeInfo {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .info()
    }
    fn stats(&self) -> GeneratorStats {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .stats()
    }
}

/// The alphabet of a scheme's canonical string: a name and the characters it uses. A scheme
/// with an alphabet of its own declares it here, with no edit anywhere else.
///
/// # Examples
///
/// ```
/// use idkit_core::Alphabet;
/// assert!(Alphabet::CROCKFORD32.contains('Z'));
/// assert!(!Alphabet::CROCKFORD32.contains('U'));
/// const TYPEID: Alphabet = Alphabet::new("typeid", "_0123456789abcdefghijklmnopqrstuvwxyz");
/// assert!(TYPEID.contains('_'));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alphabet {
    name: &'static str,
    chars: &'static str,
    variable_length: bool,
}

impl Alphabet {
    /// `0-9`, a decimal integer, as long as its value needs.
    pub const DECIMAL: Self = Self::new("decimal", "0123456789").with_variable_length();
    /// `0-9a-f` in the 8-4-4-4-12 grouping of RFC 9562.
    pub const UUID_HEX: Self = Self::new("uuid-hex", "-0123456789abcdef");
    /// Crockford's base32, `0-9A-Z` without `I L O U`.
    pub const CROCKFORD32: Self = Self::new("crockford-base32", "0123456789ABCDEFGHJKMNPQRSTVWXYZ");
    /// `0-9A-Za-z`.
    pub const BASE62: Self = Self::new(
        "base62",
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    );
    /// `0-9a-f`, lowercase hex.
    pub const HEX: Self = Self::new("hex", "0123456789abcdef");

    /// An alphabet called `name` of the ASCII characters in `chars`; canonical strings have
    /// exactly [`SchemeInfo::string_len`] characters.
    pub const fn new(name: &'static str, chars: &'static str) -> Self {
        Self {
            name,
            chars,
            variable_length: false,
        }
    }

    /// The same alphabet, for strings as long as their value needs, up to
    /// [`SchemeInfo::string_len`] characters.
    #[must_use]
    pub const fn with_variable_length(mut self) -> Self {
        self.variable_length = true;
        self
    }

    /// A short name, e.g. "crockford-base32".
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The characters of canonical strings.
    pub fn chars(self) -> &'static str {
        self.chars
    }

    /// True when `c` is one of them.
    pub fn contains(self, c: char) -> bool {
        self.chars.contains(c)
    }

    /// True when strings are as long as their value needs rather than of one length.
    pub fn variable_length(self) -> bool {
        self.variable_length
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Alphabet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

/// What a deployment must coordinate for the scheme's ids to stay unique.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "kebab-case")
)]
#[non_exhaustive]
pub enum Coordination {
    /// Nothing: uniqueness is probabilistic (random bits).
    None,
    /// Each generator needs a distinct id in this many bits (worker, shard, machine...).
    WorkerId {
        /// Bits available for the generator's identity.
        bits: u32,
    },
    /// A shared store hands out ranges (ticket servers, database sequences).
    Store,
}

impl fmt::Display for Coordination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::WorkerId { bits } => write!(f, "worker id ({bits} bits)"),
            Self::Store => f.write_str("shared store"),
        }
    }
}

/// The facts a scheme publishes about itself; the report and the README print these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct SchemeInfo {
    /// Stable name, e.g. `snowflake-twitter`.
    pub name: &'static str,
    /// Size of an id in bits.
    pub bits: u32,
    /// Size of an id in bytes.
    pub bytes: u32,
    /// Length of the canonical string, in characters (the longest, for decimal).
    pub string_len: u32,
    /// Alphabet of the canonical string.
    pub alphabet: Alphabet,
    /// `Some(precision in ms)` when ids sort by creation time at that precision.
    pub time_precision_ms: Option<u64>,
    /// What must be coordinated between generators.
    pub coordination: Coordination,
    /// Most ids one generator can issue per second, where the layout caps it.
    pub cap_per_sec: Option<u64>,
    /// Unix ms of the last time the time field can represent, where there is one and it
    /// fits in a `u64`.
    pub time_runs_out_ms: Option<u64>,
    /// Bits drawn at random that tell apart the ids two independent generators make in the
    /// same tick (the whole id's random part for uuid-v4, which has no tick). 0 when
    /// uniqueness rests on coordination alone. The report's collision odds come from it.
    pub random_bits: u32,
}

impl SchemeInfo {
    /// Facts for a scheme of `bits` bits with a decimal string and nothing else known yet;
    /// set the other fields with the `with_*` methods.
    pub const fn new(name: &'static str, bits: u32) -> Self {
        Self {
            name,
            bits,
            bytes: bits.div_ceil(8),
            string_len: decimal_len(bits),
            alphabet: Alphabet::DECIMAL,
            time_precision_ms: None,
            coordination: Coordination::None,
            cap_per_sec: None,
            time_runs_out_ms: None,
            random_bits: 0,
        }
    }

    /// Sets the random bits per tick.
    #[must_use]
    pub const fn with_random_bits(mut self, bits: u32) -> Self {
        self.random_bits = bits;
        self
    }

    /// The ids per tick (per second for a scheme without time) at which independent
    /// generators reach a `probability` of any duplicate within `period_ms`, by the birthday
    /// bound: `n` ids a tick over `t` ticks collide with probability about
    /// `t * n^2 / 2^(bits + 1)`. `None` without random bits.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::SchemeInfo;
    /// const YEAR_MS: u64 = 31_557_600_000;
    /// let ulid = SchemeInfo::new("ulid", 128).with_time(1, None).with_random_bits(80);
    /// let per_ms = ulid.ids_per_tick_at_odds(1e-9, YEAR_MS).unwrap();
    /// assert!((276.0..278.0).contains(&per_ms), "{per_ms}");
    /// ```
    #[cfg(feature = "std")]
    pub fn ids_per_tick_at_odds(&self, probability: f64, period_ms: u64) -> Option<f64> {
        if self.random_bits == 0 {
            return None;
        }
        #[allow(clippy::cast_precision_loss)] // a count of ticks, far below 2^52
        let ticks = match self.time_precision_ms {
            Some(tick) => (period_ms / tick.max(1)) as f64,
            // No tick: every id of the period is one draw among the others.
            None => 1.0,
        };
        let space = 2f64.powi(i32::try_from(self.random_bits + 1).unwrap_or(i32::MAX));
        Some((space * probability / ticks).sqrt())
    }

    /// Sets the canonical string's alphabet and length.
    #[must_use]
    pub const fn with_string(mut self, alphabet: Alphabet, len: u32) -> Self {
        self.alphabet = alphabet;
        self.string_len = len;
        self
    }

    /// Marks ids as time-ordered at `precision_ms`, running out at `runs_out_ms`.
    #[must_use]
    pub const fn with_time(mut self, precision_ms: u64, runs_out_ms: Option<u64>) -> Self {
        self.time_precision_ms = Some(precision_ms);
        self.time_runs_out_ms = runs_out_ms;
        self
    }

    /// Sets what must be coordinated.
    #[must_use]
    pub const fn with_coordination(mut self, coordination: Coordination) -> Self {
        self.coordination = coordination;
        self
    }

    /// Sets the cap in ids per second per generator.
    #[must_use]
    pub const fn with_cap(mut self, cap_per_sec: Option<u64>) -> Self {
        self.cap_per_sec = cap_per_sec;
        self
    }
}

/// Longest decimal rendering of an unsigned integer of `bits` bits.
const fn decimal_len(bits: u32) -> u32 {
    match bits {
        0..=3 => 1,
        // log10(2) ~ 0.30103: digits = floor(bits * log10 2) + 1.
        _ => bits * 30_103 / 100_000 + 1,
    }
}

/// One named field of a decoded id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum FieldValue {
    /// An integer field (worker, sequence, version...).
    Int(u64),
    /// A binary field (random bits, payload), shown as lowercase hex.
    Hex(String),
    /// A text field (a TypeID's type prefix).
    Text(String),
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Hex(h) | Self::Text(h) => f.write_str(h),
        }
    }
}

/// An id taken apart: when it was made and its named fields, in layout order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Creation time in Unix milliseconds, for schemes with a time field.
    pub timestamp_ms: Option<u64>,
    /// The named fields, most significant first.
    pub fields: Vec<(&'static str, FieldValue)>,
}

impl Decoded {
    /// The value of the field called `name`, as every scheme gives its fields: a number,
    /// bytes (shown as hex) or text. A scheme's own id type may give a field more directly
    /// (a Snowflake id's `field("worker")` is the number alone).
    ///
    /// ```
    /// use idkit_core::{Decoded, FieldValue};
    /// let decoded = Decoded {
    ///     timestamp_ms: Some(1_462_015_105_796),
    ///     fields: vec![("worker", FieldValue::Int(1))],
    /// };
    /// assert_eq!(decoded.field("worker"), Some(&FieldValue::Int(1)));
    /// assert_eq!(decoded.field("shard"), None);
    /// ```
    pub fn field(&self, name: &str) -> Option<&FieldValue> {
        self.fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The timestamp as RFC 3339 UTC with milliseconds.
    pub fn timestamp_rfc3339(&self) -> Option<String> {
        self.timestamp_ms.map(crate::time::format_rfc3339_ms)
    }
}

/// Capability: the canonical string form, the raw form, and decoding.
///
/// Implemented by a scheme's layout or codec value (not by the generator), so an id can be
/// read without a generator.
pub trait Codec {
    /// The id type.
    type Id: Copy;

    /// The id as big-endian bytes.
    fn to_raw(&self, id: Self::Id) -> RawId;

    /// The id from big-endian bytes.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when the bytes have the wrong length or are not an id of this scheme.
    fn read_raw(&self, raw: &RawId) -> Result<Self::Id, ParseError>;

    /// The canonical string.
    fn format(&self, id: Self::Id) -> String;

    /// Appends the canonical string to `out` (no allocation where the codec can avoid it).
    fn format_into(&self, id: Self::Id, out: &mut String) {
        out.push_str(&self.format(id));
    }

    /// Parses the canonical string.
    ///
    /// # Errors
    ///
    /// [`ParseError`] naming what was wrong (length, character, range, layout).
    fn parse(&self, text: &str) -> Result<Self::Id, ParseError>;

    /// Takes the id apart into its timestamp and named fields.
    fn decode(&self, id: Self::Id) -> Decoded;

    /// The lowest and the highest id this scheme can hold at `timestamp_ms` (Unix ms, taken
    /// to the scheme's precision: the second for KSUID and ObjectId, the tick for a
    /// Snowflake layout), with the named `fields` held at their values and every other part
    /// at its lowest, then its highest. With a time-ordered key, the ids made from `from`
    /// up to (not including) `to` are `id >= lowest(from) AND id < lowest(to)`, an index
    /// range in a database.
    ///
    /// Only Snowflake layouts have fields to hold (a worker id, a shard); other schemes take
    /// none. Time-ordered schemes override this; the default says the scheme has no time.
    ///
    /// # Errors
    ///
    /// [`ComposeError`]: [`NoTime`](crate::ComposeErrorKind::NoTime) for a scheme without
    /// a time field (UUIDv4, range ids); `TimeOutOfRange` for a time before the scheme's
    /// epoch or past its last; `UnknownField` or `FieldOutOfRange` for a field it does not
    /// have or a value that does not fit.
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<Self::Id>, ComposeError> {
        let _ = (timestamp_ms, fields);
        Err(ComposeError::no_time("these"))
    }

    /// The id of `timestamp_ms` (Unix ms, taken to the scheme's precision as
    /// [`bounds_at`](Self::bounds_at) takes it) with the named `fields` at their values and
    /// every field not named at zero: the inverse of [`decode`](Self::decode) for the time
    /// and the parts it gives. Each time-ordered scheme names its parts (a ULID's
    /// `randomness`, a UUIDv7's `rand_a` and `rand_b`, an ObjectId's `random` and
    /// `counter`, a Snowflake layout's fields); the default says the scheme has no time.
    ///
    /// # Errors
    ///
    /// As [`bounds_at`](Self::bounds_at): `NoTime`, `TimeOutOfRange`, `UnknownField` (the
    /// message lists the scheme's parts) or `FieldOutOfRange`.
    fn compose_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<Self::Id, ComposeError> {
        let _ = (timestamp_ms, fields);
        Err(ComposeError::no_time("these"))
    }
}

/// The values of `fields` in the order of `parts` (each a name and a width in bits), zero
/// for a part not given: what a [`Codec::compose_at`] reads its parts with.
///
/// # Errors
///
/// [`ComposeError`]: `UnknownField` for a name not among `parts` (the message lists them),
/// `FieldOutOfRange` for a value wider than its part.
///
/// # Examples
///
/// ```
/// use idkit_core::{ComposeErrorKind, compose_fields};
/// let parts = [("random", 40), ("counter", 24)];
/// assert_eq!(compose_fields(&[("counter", 7)], parts)?, [0, 7]);
/// let wide = compose_fields(&[("counter", 1 << 24)], parts).unwrap_err();
/// assert_eq!(wide.kind(), ComposeErrorKind::FieldOutOfRange);
/// let unknown = compose_fields(&[("worker", 1)], parts).unwrap_err();
/// assert_eq!(unknown.to_string(), "unknown field \"worker\": expected one of random, counter");
/// # Ok::<(), idkit_core::ComposeError>(())
/// ```
pub fn compose_fields<const N: usize>(
    fields: &[(&str, u128)],
    parts: [(&'static str, u32); N],
) -> Result<[u128; N], ComposeError> {
    let mut values = [0; N];
    for &(name, value) in fields {
        let Some(i) = parts.iter().position(|(part, _)| *part == name) else {
            let known: Vec<&str> = parts.iter().map(|(part, _)| *part).collect();
            return Err(ComposeError::unknown_field(name, known.join(", ")));
        };
        let (part, bits) = parts[i];
        let max = if bits >= 128 {
            u128::MAX
        } else {
            (1 << bits) - 1
        };
        if value > max {
            return Err(ComposeError::field_out_of_range(part, value, max));
        }
        values[i] = value;
    }
    Ok(values)
}

/// The lowest and the highest id of one time (see [`Codec::bounds_at`]).
///
/// # Examples
///
/// ```
/// use idkit_core::TimeBounds;
/// let b = TimeBounds::new(3_u64, 7);
/// assert!(b.holds(&5) && !b.holds(&8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeBounds<T> {
    /// The lowest id of the time.
    pub lowest: T,
    /// The highest id of the time.
    pub highest: T,
}

impl<T> TimeBounds<T> {
    /// Bounds from their two ids.
    pub const fn new(lowest: T, highest: T) -> Self {
        Self { lowest, highest }
    }

    /// Both ids through `f`.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> TimeBounds<U> {
        TimeBounds {
            lowest: f(self.lowest),
            highest: f(self.highest),
        }
    }
}

impl<T: PartialOrd> TimeBounds<T> {
    /// Whether `id` lies between the two, both included.
    pub fn holds(&self, id: &T) -> bool {
        self.lowest <= *id && *id <= self.highest
    }
}

/// Capability: build an id from explicit parts (a timestamp and named field values).
pub trait Compose {
    /// The id type.
    type Id: Copy;

    /// Builds the id for `timestamp_ms` (Unix milliseconds) and the named `fields`; fields
    /// not named are zero.
    ///
    /// # Errors
    ///
    /// [`ComposeError`] when a field is unknown or does not fit, or the time is outside the
    /// layout's range.
    fn compose(&self, timestamp_ms: u64, fields: &[(&str, u128)])
    -> Result<Self::Id, ComposeError>;
}

/// The object-safe form of a codec: text and decoding over [`RawId`], with no generator.
/// [`SchemeDef::codec`](crate::definition::SchemeDef::codec) gives one for every scheme, so
/// reading an id never builds a generator or opens a store.
pub trait DynCodec: fmt::Debug {
    /// The scheme's facts.
    fn info(&self) -> SchemeInfo;

    /// The canonical string of `id`.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when `id` is not an id of this scheme.
    fn format_raw(&self, id: &RawId) -> Result<String, ParseError>;

    /// Appends the canonical string of `id` to `out`.
    ///
    /// # Errors
    ///
    /// As [`DynCodec::format_raw`]; `out` is unchanged then.
    fn format_raw_into(&self, id: &RawId, out: &mut String) -> Result<(), ParseError> {
        out.push_str(&self.format_raw(id)?);
        Ok(())
    }

    /// Parses a canonical string.
    ///
    /// # Errors
    ///
    /// As [`Codec::parse`].
    fn parse_raw(&self, text: &str) -> Result<RawId, ParseError>;

    /// Decodes `id`.
    ///
    /// # Errors
    ///
    /// [`ParseError`] when `id` is not an id of this scheme.
    fn decode_raw(&self, id: &RawId) -> Result<Decoded, ParseError>;

    /// Parses and decodes a canonical string. Unlike `decode_raw(parse_raw(text))`, this
    /// keeps what the text carries beyond the raw bytes (a TypeID's prefix).
    ///
    /// # Errors
    ///
    /// As [`Codec::parse`].
    fn decode_text(&self, text: &str) -> Result<Decoded, ParseError>;

    /// The canonical spelling of a string this codec accepts (upper case for ULID, the
    /// prefix kept for TypeID).
    ///
    /// # Errors
    ///
    /// As [`Codec::parse`].
    fn canonical_text(&self, text: &str) -> Result<String, ParseError>;

    /// The lowest and highest ids of a time, as [`Codec::bounds_at`] gives them.
    ///
    /// # Errors
    ///
    /// As [`Codec::bounds_at`].
    fn bounds_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<RawId>, ComposeError>;

    /// The id of a time and its parts, as [`Codec::compose_at`] makes it.
    ///
    /// # Errors
    ///
    /// As [`Codec::compose_at`].
    fn compose_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<RawId, ComposeError>;
}

/// The object-safe form of a scheme: generation, and (through [`DynCodec`]) text and
/// decoding over [`RawId`].
///
/// The CLI, the HTTP service and the harness hold every scheme as
/// `Box<dyn DynScheme + Send + Sync>`; [`Erased`] builds one from a generator and a codec.
pub trait DynScheme: DynCodec {
    /// Issues one id.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::next_id`].
    fn next_raw(&self) -> Result<RawId, GenerateError>;

    /// Fills `out` with consecutive ids.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::fill`].
    fn fill_raw(&self, out: &mut [RawId]) -> Result<(), GenerateError>;

    /// As [`IdScheme::stats`].
    fn stats(&self) -> GeneratorStats;
}

/// A codec and the scheme's facts joined into a [`DynCodec`]: what a scheme's definition
/// hands out to read ids without a generator.
#[derive(Debug, Clone, Copy)]
pub struct CodecOnly<C> {
    codec: C,
    info: SchemeInfo,
}

impl<C> CodecOnly<C> {
    /// Joins `codec` and `info`.
    pub fn new(codec: C, info: SchemeInfo) -> Self {
        Self { codec, info }
    }
}

impl<C: Codec + fmt::Debug> DynCodec for CodecOnly<C> {
    fn info(&self) -> SchemeInfo {
        self.info
    }
    fn format_raw(&self, id: &RawId) -> Result<String, ParseError> {
        self.codec.read_raw(id).map(|id| self.codec.format(id))
    }
    fn format_raw_into(&self, id: &RawId, out: &mut String) -> Result<(), ParseError> {
        self.codec.format_into(self.codec.read_raw(id)?, out);
        Ok(())
    }
    fn parse_raw(&self, text: &str) -> Result<RawId, ParseError> {
        self.codec.parse(text).map(|id| self.codec.to_raw(id))
    }
    fn decode_raw(&self, id: &RawId) -> Result<Decoded, ParseError> {
        self.codec.read_raw(id).map(|id| self.codec.decode(id))
    }
    fn decode_text(&self, text: &str) -> Result<Decoded, ParseError> {
        self.codec.parse(text).map(|id| self.codec.decode(id))
    }
    fn canonical_text(&self, text: &str) -> Result<String, ParseError> {
        self.codec.parse(text).map(|id| self.codec.format(id))
    }
    fn bounds_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<RawId>, ComposeError> {
        match self.codec.bounds_at(timestamp_ms, fields) {
            Ok(b) => Ok(b.map(|id| self.codec.to_raw(id))),
            // The default's error names the scheme from its facts.
            Err(e) => Err(e.naming(self.info.name)),
        }
    }
    fn compose_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<RawId, ComposeError> {
        match self.codec.compose_at(timestamp_ms, fields) {
            Ok(id) => Ok(self.codec.to_raw(id)),
            Err(e) => Err(e.naming(self.info.name)),
        }
    }
}

/// A generator and its codec joined into a [`DynScheme`].
///
/// # Examples
///
/// ```
/// # use idkit_core::*;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # #[derive(Debug, Default)] struct Atomic(AtomicU64);
/// # impl IdScheme for Atomic { type Id = u64;
/// #   fn next_id(&self) -> Result<u64, GenerateError> { Ok(self.0.fetch_add(1, Ordering::Relaxed) + 1) }
/// #   fn info(&self) -> SchemeInfo { SchemeInfo::new("counter", 64) } }
/// # #[derive(Debug)] struct Dec;
/// # impl Codec for Dec { type Id = u64;
/// #   fn to_raw(&self, id: u64) -> RawId { RawId::from_u64(id) }
/// #   fn read_raw(&self, raw: &RawId) -> Result<u64, ParseError> { raw.to_u64() }
/// #   fn format(&self, id: u64) -> String { id.to_string() }
/// #   fn parse(&self, s: &str) -> Result<u64, ParseError> { codec::decimal::parse_u64(s) }
/// #   fn decode(&self, _: u64) -> Decoded { Decoded { timestamp_ms: None, fields: vec![] } } }
/// let scheme: Box<dyn DynScheme + Send + Sync> = Box::new(Erased::new(Atomic::default(), Dec));
/// let id = scheme.next_raw()?;
/// assert_eq!(scheme.format_raw(&id)?, "1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Erased<G, C> {
    generator: G,
    /// The codec with the generator's facts, read once.
    codec: CodecOnly<C>,
}

impl<G: IdScheme, C> Erased<G, C> {
    /// Joins `generator` and `codec`.
    pub fn new(generator: G, codec: C) -> Self {
        let info = generator.info();
        Self {
            generator,
            codec: CodecOnly::new(codec, info),
        }
    }

    /// The generator.
    pub fn generator(&self) -> &G {
        &self.generator
    }
}

/// Ids taken per chunk in [`Erased::fill_raw`]: large enough that the generator's own batch
/// path (one atomic operation per run) dominates, small enough to stay in cache.
const FILL_CHUNK: usize = 256;

impl<G, C> DynCodec for Erased<G, C>
where
    G: IdScheme + fmt::Debug,
    C: Codec<Id = G::Id> + fmt::Debug,
{
    fn info(&self) -> SchemeInfo {
        self.codec.info()
    }
    fn format_raw(&self, id: &RawId) -> Result<String, ParseError> {
        self.codec.format_raw(id)
    }
    fn format_raw_into(&self, id: &RawId, out: &mut String) -> Result<(), ParseError> {
        self.codec.format_raw_into(id, out)
    }
    fn parse_raw(&self, text: &str) -> Result<RawId, ParseError> {
        self.codec.parse_raw(text)
    }
    fn decode_raw(&self, id: &RawId) -> Result<Decoded, ParseError> {
        self.codec.decode_raw(id)
    }
    fn decode_text(&self, text: &str) -> Result<Decoded, ParseError> {
        self.codec.decode_text(text)
    }
    fn canonical_text(&self, text: &str) -> Result<String, ParseError> {
        self.codec.canonical_text(text)
    }
    fn bounds_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<RawId>, ComposeError> {
        self.codec.bounds_raw(timestamp_ms, fields)
    }
    fn compose_raw(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<RawId, ComposeError> {
        self.codec.compose_raw(timestamp_ms, fields)
    }
}

impl<G, C> DynScheme for Erased<G, C>
where
    G: IdScheme + fmt::Debug,
    C: Codec<Id = G::Id> + fmt::Debug,
{
    fn next_raw(&self) -> Result<RawId, GenerateError> {
        self.generator
            .next_id()
            .map(|id| self.codec.codec.to_raw(id))
    }

    fn fill_raw(&self, out: &mut [RawId]) -> Result<(), GenerateError> {
        for chunk in out.chunks_mut(FILL_CHUNK) {
            let ids = self.generator.take(chunk.len())?;
            for (slot, id) in chunk.iter_mut().zip(ids) {
                *slot = self.codec.codec.to_raw(id);
            }
        }
        Ok(())
    }

    fn stats(&self) -> GeneratorStats {
        self.generator.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::decimal_len;

    #[test]
    fn decimal_lengths() {
        let len = |s: String| u32::try_from(s.len()).unwrap();
        assert_eq!(decimal_len(64), len(u64::MAX.to_string()));
        assert_eq!(decimal_len(63), len(i64::MAX.to_string()));
        assert_eq!(decimal_len(128), len(u128::MAX.to_string()));
        assert_eq!(decimal_len(48), len(((1u64 << 48) - 1).to_string()));
    }
}
