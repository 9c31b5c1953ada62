//! UUIDv7 with the millisecond's fraction in `rand_a`: RFC 9562 section 6.2, method 3, the
//! layout PostgreSQL 18's `uuidv7()` makes.

// The generator's atomic: loom's under `--cfg loom`, so the model checker explores it.
#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

use idkit_core::random::{DefaultRandom, RandomSource};
use idkit_core::{Clock, GenerateError, IdScheme, SchemeInfo};
use uuid::Uuid;

use crate::codec::UuidCodec;

/// The clock a method-3 generator reads unless given another: the system clock, to the
/// nanosecond, with `std`; without it, none.
#[cfg(feature = "std")]
pub type SubMsClock = idkit_core::SystemClock;
/// The clock a method-3 generator reads unless given another: none without `std`.
#[cfg(not(feature = "std"))]
pub type SubMsClock = idkit_core::clock::NoClock;

/// Steps of a millisecond in `rand_a`'s 12 bits.
const STEPS_PER_MS: u64 = 1 << 12;
/// The last Unix millisecond 48 bits hold.
const LAST_MS: u64 = (1 << 48) - 1;

/// The 60-bit time of method 3 for `ns` since 1970: the millisecond above 12 bits of its
/// fraction, rounded down (`fraction * 4096 / 1,000,000`, a step of about 244 ns).
pub fn sub_ms_time(ns: u64) -> u64 {
    let ms = ns / 1_000_000;
    let fraction = (ns % 1_000_000) * STEPS_PER_MS / 1_000_000;
    ms << 12 | fraction
}

/// UUIDv7 ids that keep the clock's time to about 244 ns: the Unix millisecond (48 bits),
/// then 12 bits of the millisecond's fraction in `rand_a` (RFC 9562 section 6.2, method 3),
/// then 62 fresh random bits in `rand_b` for every id. PostgreSQL 18's `uuidv7()` makes
/// this layout.
///
/// One generator's ids strictly increase: when the clock has not moved past the last id's
/// time (a fast caller, a coarse clock, or a clock stepped back), the id takes the last
/// time plus one step, so 4,096 ids a millisecond keep pace with the clock and more run
/// ahead of it until it catches up. Ids of two generators in one step differ by their 62
/// random bits. Shared without a lock: the last time is one atomic word.
///
/// Beside [`AtomicUuidV7`](crate::AtomicUuidV7) (method 2, a counter within the
/// millisecond): both sort by time, both are UUIDv7 to any reader. Method 3's time says
/// more of when an id was made, and ids from several writers interleave by that time
/// rather than by each writer's counter.
///
/// ```
/// use idkit_uuid::{IdScheme, UuidV7SubMs};
/// let generator = UuidV7SubMs::new();
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(a < b);
/// assert_eq!(a.get_version_num(), 7);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug)]
pub struct UuidV7SubMs<C = SubMsClock, R = DefaultRandom> {
    clock: C,
    random: R,
    /// The last 60-bit time issued: milliseconds above 12 bits of fraction.
    last: AtomicU64,
}

#[cfg(feature = "std")]
impl UuidV7SubMs {
    /// A generator on the system clock (to the nanosecond) and the thread's random source.
    pub fn new() -> Self {
        Self::with_source(idkit_core::SystemClock, idkit_core::random::ThreadRandom)
    }
}

#[cfg(feature = "std")]
impl Default for UuidV7SubMs {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock, R: RandomSource> UuidV7SubMs<C, R> {
    /// A generator reading `clock`'s nanoseconds ([`Clock::now_ns`]) and drawing from
    /// `random`.
    pub fn with_source(clock: C, random: R) -> Self {
        Self {
            clock,
            random,
            last: AtomicU64::new(0),
        }
    }
}

impl<C: Clock, R: RandomSource> IdScheme for UuidV7SubMs<C, R> {
    type Id = Uuid;

    fn next_id(&self) -> Result<Uuid, GenerateError> {
        let now = sub_ms_time(self.clock.now_ns());
        // Drawn first: a failed draw consumes no time step.
        let random = u128::from(self.random.u64()?) & ((1 << 62) - 1);
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 1);
            if next >> 12 > LAST_MS {
                return Err(GenerateError::time_overflow(LAST_MS));
            }
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    let time = u128::from(next);
                    let bits = (time >> 12) << 80 | 7 << 76 | (time & 0xfff) << 64;
                    return Ok(Uuid::from_u128(bits | 0b10 << 62 | random));
                }
                Err(seen) => last = seen,
            }
        }
    }

    fn info(&self) -> SchemeInfo {
        // rand_b alone tells two generators' ids of one step apart.
        UuidCodec::V7.info().with_random_bits(62)
    }
}
