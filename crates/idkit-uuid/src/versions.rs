//! The UUID versions besides 4 and 7 (RFC 9562 section 5): reading the time and fields of
//! versions 1 and 6, making name-based ids (versions 3 and 5), version 6 from a clock, and
//! version 8 from the caller's 122 bits.
//!
//! # Examples
//!
//! ```
//! use idkit_uuid::versions::{self, NAMESPACE_DNS};
//! // RFC 9562 appendix A.4: the DNS namespace and "www.example.com".
//! let id = versions::v5(&NAMESPACE_DNS, b"www.example.com");
//! assert_eq!(id.to_string(), "2ed6657d-e927-568b-95e1-2665a8aea6a2");
//! // Appendix A.1 and A.5: one time, as version 1 and as version 6.
//! let v1: idkit_uuid::Uuid = "c232ab00-9414-11ec-b3c8-9f6bdeced846".parse().unwrap();
//! let v6 = versions::v1_to_v6(v1)?;
//! assert_eq!(v6.to_string(), "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
//! assert_eq!(versions::unix_ms(v6), Some(1_645_557_742_000));
//! # Ok::<(), idkit_core::ParseError>(())
//! ```

// The v6 generator's atomic: loom's under `--cfg loom`, so the model checker explores it.
use alloc::format;

#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

use idkit_core::random::RandomSource;
use idkit_core::{
    Clock, ComposeError, DefaultClock, GenerateError, IdScheme, ParseError, SchemeInfo,
};
use uuid::Uuid;

use crate::codec::UuidCodec;

/// The namespace of fully qualified domain names (RFC 9562 section 6.6).
pub const NAMESPACE_DNS: Uuid = Uuid::from_u128(0x6ba7b810_9dad_11d1_80b4_00c04fd430c8);
/// The namespace of URLs (RFC 9562 section 6.6).
pub const NAMESPACE_URL: Uuid = Uuid::from_u128(0x6ba7b811_9dad_11d1_80b4_00c04fd430c8);
/// The namespace of ISO object identifiers (RFC 9562 section 6.6).
pub const NAMESPACE_OID: Uuid = Uuid::from_u128(0x6ba7b812_9dad_11d1_80b4_00c04fd430c8);
/// The namespace of X.500 distinguished names, in DER or text (RFC 9562 section 6.6).
pub const NAMESPACE_X500: Uuid = Uuid::from_u128(0x6ba7b814_9dad_11d1_80b4_00c04fd430c8);

/// Hundreds of nanoseconds from 1582-10-15T00:00:00Z (the Gregorian reform, versions 1 and
/// 6's epoch) to 1970-01-01T00:00:00Z.
pub const GREGORIAN_TO_UNIX_100NS: u64 = 0x01b2_1dd2_1381_4000;
/// Versions 1 and 6 count time in 60 bits.
const TICKS_MAX: u64 = (1 << 60) - 1;
/// 100 ns ticks in a millisecond.
const TICKS_PER_MS: u64 = 10_000;

/// A namespace by its RFC name (`dns`, `url`, `oid`, `x500`, in any case) or as a UUID in
/// the 8-4-4-4-12 form, of any version.
///
/// # Errors
///
/// A [`ParseError`] when `name` is neither one of the four names nor a UUID.
///
/// ```
/// use idkit_uuid::versions::{namespace, NAMESPACE_URL};
/// assert_eq!(namespace("URL")?, NAMESPACE_URL);
/// assert_eq!(namespace("6ba7b811-9dad-11d1-80b4-00c04fd430c8")?, NAMESPACE_URL);
/// assert!(namespace("example.com").is_err());
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
pub fn namespace(name: &str) -> Result<Uuid, ParseError> {
    match name.to_ascii_lowercase().as_str() {
        "dns" => Ok(NAMESPACE_DNS),
        "url" => Ok(NAMESPACE_URL),
        "oid" => Ok(NAMESPACE_OID),
        "x500" => Ok(NAMESPACE_X500),
        _ => crate::codec::parse_any(name).map_err(|e| {
            ParseError::invalid(format!(
                "a namespace is dns, url, oid, x500 or a UUID (8-4-4-4-12 hex): {e}"
            ))
        }),
    }
}

/// The version 3 UUID of `name` in `namespace`: MD5 of the namespace's 16 bytes then the
/// name's, with the version and variant set (RFC 9562 section 5.3). Prefer [`v5`]: the
/// RFC keeps version 3 for ids that already exist.
pub fn v3(namespace: &Uuid, name: &[u8]) -> Uuid {
    Uuid::new_v3(namespace, name)
}

/// The version 5 UUID of `name` in `namespace`: SHA-1 of the namespace's 16 bytes then the
/// name's, cut to 128 bits, with the version and variant set (RFC 9562 section 5.5). The
/// same namespace and name always give the same id, so it serves as an idempotency key.
pub fn v5(namespace: &Uuid, name: &[u8]) -> Uuid {
    Uuid::new_v5(namespace, name)
}

/// The bits of a version 8 UUID the caller chooses: `custom_a` (48), `custom_b` (12) and
/// `custom_c` (62) of RFC 9562 section 5.8, as one number below 2^122.
pub const V8_CUSTOM_BITS: u32 = 122;

/// The version 8 UUID holding `custom`'s 122 bits: the top 48 in `custom_a`, the next 12
/// in `custom_b`, the low 62 in `custom_c`, around the version and variant.
///
/// # Errors
///
/// [`ComposeErrorKind::FieldOutOfRange`](idkit_core::ComposeErrorKind::FieldOutOfRange)
/// when `custom` does not fit 122 bits: nothing of it is dropped.
///
/// ```
/// use idkit_uuid::versions::{v8, v8_custom};
/// // RFC 9562 appendix B.1's fields: custom_a 0x2489E9AD2EE2, custom_b 0xE00,
/// // custom_c 0x0EC932D5F69181C0.
/// let custom = 0x2489_e9ad_2ee2u128 << 74 | 0xe00 << 62 | 0x0ec9_32d5_f691_81c0;
/// let id = v8(custom)?;
/// assert_eq!(id.to_string(), "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0");
/// assert_eq!(v8_custom(id), Some(custom));
/// assert!(v8(1 << 122).is_err());
/// # Ok::<(), idkit_core::ComposeError>(())
/// ```
pub fn v8(custom: u128) -> Result<Uuid, ComposeError> {
    if custom >> V8_CUSTOM_BITS != 0 {
        return Err(ComposeError::field_out_of_range(
            "custom",
            custom,
            (1 << V8_CUSTOM_BITS) - 1,
        ));
    }
    let a = custom >> 74;
    let b = (custom >> 62) & 0xfff;
    let c = custom & ((1 << 62) - 1);
    Ok(Uuid::from_u128(
        a << 80 | 8 << 76 | b << 64 | 0b10 << 62 | c,
    ))
}

/// The 122 bits a version 8 UUID carries ([`v8`]'s inverse); `None` for another version or
/// variant.
pub fn v8_custom(id: Uuid) -> Option<u128> {
    if id.get_version_num() != 8 || !rfc_variant(id) {
        return None;
    }
    let n = id.as_u128();
    Some((n >> 80) << 74 | ((n >> 64) & 0xfff) << 62 | (n & ((1 << 62) - 1)))
}

fn rfc_variant(id: Uuid) -> bool {
    id.as_bytes()[8] >> 6 == 0b10
}

/// The 60-bit count of 100 ns since 1582-10-15 that a version 1 or 6 UUID holds; `None`
/// for other versions.
pub fn gregorian_ticks(id: Uuid) -> Option<u64> {
    let n = id.as_u128();
    let field = |shift: u32, bits: u32| u64::try_from((n >> shift) & ((1 << bits) - 1)).ok();
    match id.get_version_num() {
        // time_low (32) | time_mid (16) | version | time_high (12).
        1 => Some(field(64, 12)? << 48 | field(80, 16)? << 32 | field(96, 32)?),
        // time_high (32) | time_mid (16) | version | time_low (12).
        6 => Some(field(96, 32)? << 28 | field(80, 16)? << 12 | field(64, 12)?),
        _ => None,
    }
}

/// The Unix millisecond a version 1, 6 or 7 UUID was made in (versions 1 and 6 rounded
/// down from 100 ns); `None` for other versions, and for a version 1 or 6 time before 1970.
pub fn unix_ms(id: Uuid) -> Option<u64> {
    match id.get_version_num() {
        7 => u64::try_from(id.as_u128() >> 80).ok(),
        _ => gregorian_ticks(id)?
            .checked_sub(GREGORIAN_TO_UNIX_100NS)
            .map(|t| t / TICKS_PER_MS),
    }
}

/// A version 1 or 6 UUID's 14-bit clock sequence and 48-bit node.
pub fn clock_seq_and_node(id: Uuid) -> Option<(u16, u64)> {
    matches!(id.get_version_num(), 1 | 6).then(|| {
        let (_, low) = id.as_u64_pair();
        let clock_seq = u16::try_from((low >> 48) & 0x3fff).unwrap_or(0);
        (clock_seq, low & 0xffff_ffff_ffff)
    })
}

/// The version 6 UUID with a version 1 UUID's time, clock sequence and node: the same
/// fields, the time's bits reordered so that the bytes sort by it (RFC 9562 section 5.6).
///
/// # Errors
///
/// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) naming the version when
/// `id` is not a version 1 UUID of the RFC variant.
pub fn v1_to_v6(id: Uuid) -> Result<Uuid, ParseError> {
    let v1 = UuidCodec::V1.validate(id)?;
    Ok(time_based(
        6,
        gregorian_ticks(v1).unwrap_or(0),
        v1.as_u128(),
    ))
}

/// The version 1 UUID with a version 6 UUID's time, clock sequence and node.
///
/// # Errors
///
/// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) naming the version when
/// `id` is not a version 6 UUID of the RFC variant.
pub fn v6_to_v1(id: Uuid) -> Result<Uuid, ParseError> {
    let v6 = UuidCodec::V6.validate(id)?;
    Ok(time_based(
        1,
        gregorian_ticks(v6).unwrap_or(0),
        v6.as_u128(),
    ))
}

/// A version 1 or 6 UUID of 60-bit `ticks`, with the low 64 bits (variant, clock sequence,
/// node) of `low`.
fn time_based(version: u128, ticks: u64, low: u128) -> Uuid {
    let t = u128::from(ticks & TICKS_MAX);
    let high = if version == 1 {
        (t & 0xffff_ffff) << 32 | ((t >> 32) & 0xffff) << 16 | version << 12 | t >> 48
    } else {
        (t >> 12) << 16 | version << 12 | (t & 0xfff)
    };
    Uuid::from_u128(high << 64 | (low & u128::from(u64::MAX)))
}

/// Version 6 UUIDs from a clock: 60 bits of 100 ns since 1582-10-15, then a random 14-bit
/// clock sequence and a random 48-bit node with the multicast bit set (RFC 9562 section
/// 6.10: a node that is not a MAC address), both drawn once per generator.
///
/// The clock reads milliseconds; within one the time field counts up by one 100 ns tick an
/// id, so one generator's ids are distinct and increasing (10,000 a millisecond before it
/// runs ahead of the clock, then the clock catches up). A clock that steps back does not take
/// the time field back. Shared without a lock: the last time is one atomic word.
///
/// ```
/// use idkit_uuid::{IdScheme, versions::{self, UuidV6}};
/// let generator = UuidV6::new()?;
/// let a = generator.next_id()?;
/// let b = generator.next_id()?;
/// assert!(a < b);
/// assert_eq!(a.get_version_num(), 6);
/// assert_eq!(versions::clock_seq_and_node(a), versions::clock_seq_and_node(b));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug)]
pub struct UuidV6<C = DefaultClock> {
    clock: C,
    /// The clock sequence and node, bits 0 to 63 of every id with the variant.
    low: u64,
    /// The last time field issued.
    last: AtomicU64,
}

#[cfg(feature = "std")]
impl UuidV6 {
    /// A generator on a [`TickerClock`](idkit_core::TickerClock), its clock sequence and
    /// node drawn from the thread's random source.
    ///
    /// # Errors
    ///
    /// The random source's error when the operating system gives no random bytes.
    pub fn new() -> Result<Self, GenerateError> {
        Self::with_source(
            idkit_core::TickerClock::new(),
            &idkit_core::random::ThreadRandom,
        )
    }
}

impl<C: Clock> UuidV6<C> {
    /// A generator on `clock`, its clock sequence and node drawn from `random`.
    ///
    /// # Errors
    ///
    /// The random source's error when it cannot draw.
    pub fn with_source(clock: C, random: &impl RandomSource) -> Result<Self, GenerateError> {
        let (_, low) = Uuid::from_u128(random.u128()?).as_u64_pair();
        Ok(Self::with_low(clock, low))
    }

    /// A generator whose clock sequence and node come from `bits`' low 62 bits (the variant
    /// and multicast bit set over them): a fixed pair for tests.
    pub fn with_low(clock: C, bits: u64) -> Self {
        // Variant 10 above a 14-bit clock sequence; the node's first octet's low bit set.
        let low = (bits & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000 | 0x0000_0100_0000_0000;
        Self {
            clock,
            low,
            last: AtomicU64::new(0),
        }
    }
}

impl<C: Clock> IdScheme for UuidV6<C> {
    type Id = Uuid;

    fn next_id(&self) -> Result<Uuid, GenerateError> {
        let now_ms = self.clock.now_ms();
        let now = now_ms
            .checked_mul(TICKS_PER_MS)
            .and_then(|t| t.checked_add(GREGORIAN_TO_UNIX_100NS))
            .filter(|&t| t <= TICKS_MAX)
            .ok_or_else(|| GenerateError::time_overflow(LAST_MS))?;
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 1);
            if next > TICKS_MAX {
                return Err(GenerateError::time_overflow(LAST_MS));
            }
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(time_based(6, next, u128::from(self.low))),
                Err(seen) => last = seen,
            }
        }
    }

    fn info(&self) -> SchemeInfo {
        UuidCodec::V6.info()
    }
}

/// The lowest and highest version 6 UUIDs of the Unix millisecond `ms`: its first 100 ns
/// tick with the clock sequence and node all zeros, its last with them all ones. `fields`
/// must be empty: a generator's clock sequence and node are random.
pub(crate) fn v6_bounds(
    ms: u64,
    fields: &[(&str, u128)],
) -> Result<idkit_core::TimeBounds<Uuid>, ComposeError> {
    ComposeError::refuse_fields(fields)?;
    if ms > LAST_MS {
        return Err(ComposeError::time_out_of_range(ms, 0, LAST_MS));
    }
    let first = ms * TICKS_PER_MS + GREGORIAN_TO_UNIX_100NS;
    let last = (first + TICKS_PER_MS - 1).min(TICKS_MAX);
    let variant = 0b10 << 62;
    Ok(idkit_core::TimeBounds {
        lowest: time_based(6, first, variant),
        highest: time_based(6, last, variant | ((1 << 62) - 1)),
    })
}

/// The version 1 or 6 UUID of the Unix millisecond `ms` (its first 100 ns tick) with the
/// `clock_seq` and `node` of `fields` (zero when not given).
pub(crate) fn time_based_at(
    version: u128,
    ms: u64,
    fields: &[(&str, u128)],
) -> Result<Uuid, ComposeError> {
    let [clock_seq, node] = idkit_core::compose_fields(fields, [("clock_seq", 14), ("node", 48)])?;
    if ms > LAST_MS {
        return Err(ComposeError::time_out_of_range(ms, 0, LAST_MS));
    }
    let ticks = ms * TICKS_PER_MS + GREGORIAN_TO_UNIX_100NS;
    Ok(time_based(
        version,
        ticks,
        0b10 << 62 | clock_seq << 48 | node,
    ))
}

/// The last Unix millisecond a 60-bit count of 100 ns from 1582 holds (in 5236).
pub const LAST_MS: u64 = (TICKS_MAX - GREGORIAN_TO_UNIX_100NS) / TICKS_PER_MS;
