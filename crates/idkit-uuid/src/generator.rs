//! UUID generators. Randomness comes from a [`RandomSource`]: by default
//! [`ThreadRandom`](idkit_core::random::ThreadRandom), a
//! ChaCha8 generator per thread seeded from the operating system once, so no id costs a
//! system call; `with_source` takes a seeded one for tests.

use alloc::vec;
use alloc::vec::Vec;

use idkit_core::random::{DefaultRandom, RandomSource};
use idkit_core::time_ordered::{self, AtomicTimeOrdered, TimeOrdered, WhenFull};
use idkit_core::{DefaultClock, GenerateError, IdScheme, SchemeInfo};
use uuid::Uuid;

use crate::codec::UuidCodec;

/// Version 4 and RFC variant bits, set over 128 random bits.
const V4_MASK: u128 = 0xffff_ffff_ffff_0fff_3fff_ffff_ffff_ffff;
const V4_BITS: u128 = 0x0000_0000_0000_4000_8000_0000_0000_0000;

/// Random UUIDs (version 4): 122 random bits. Stateless, so one value can be shared by
/// every thread.
///
/// # Examples
///
/// ```
/// use idkit_uuid::{IdScheme, UuidV4};
/// let id = UuidV4::new().next_id()?;
/// assert_eq!(id.get_version_num(), 4);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidV4<R = DefaultRandom> {
    random: R,
}

#[cfg(feature = "std")]
impl UuidV4 {
    /// A generator.
    pub fn new() -> Self {
        Self::with_source(idkit_core::random::ThreadRandom)
    }
}

impl<R: RandomSource> UuidV4<R> {
    /// A generator drawing from `random`: with a
    /// [`SeededRandom`](idkit_core::random::SeededRandom), the same ids every run.
    pub fn with_source(random: R) -> Self {
        Self { random }
    }
}

impl<R: RandomSource> IdScheme for UuidV4<R> {
    type Id = Uuid;

    #[inline]
    fn next_id(&self) -> Result<Uuid, GenerateError> {
        Ok(Uuid::from_u128((self.random.u128()? & V4_MASK) | V4_BITS))
    }

    /// The thread's random generator is looked up once for the whole batch.
    fn fill(&self, out: &mut [Uuid]) -> Result<(), GenerateError> {
        self.random
            .fill_with_u128(out, |r| Uuid::from_u128((r & V4_MASK) | V4_BITS))
    }

    /// As [`fill`](Self::fill): one generator lookup for the batch.
    fn take(&self, n: usize) -> Result<Vec<Uuid>, GenerateError> {
        let mut out = vec![Uuid::nil(); n];
        self.fill(&mut out)?;
        Ok(out)
    }

    fn info(&self) -> SchemeInfo {
        UuidCodec::V4.info()
    }
}

/// Bits of the monotonic counter: `rand_a` (12) and `rand_b` (62).
const COUNTER_BITS: u32 = 74;
#[cfg(test)]
const COUNTER_MAX: u128 = (1 << COUNTER_BITS) - 1;
/// The last Unix millisecond a 48-bit field holds.
#[cfg(test)]
const LAST_MS: u64 = time_ordered::LAST_MS;

/// UUIDv7's layout for idkit's time-ordered generators: `rand_a` and `rand_b` are one
/// 74-bit counter, started with its top bit clear (RFC 9562 section 6.2's rollover guard),
/// and a full one moves to the next millisecond.
#[derive(Debug, Clone, Copy, Default)]
pub struct V7Layout;

impl time_ordered::Layout for V7Layout {
    type Id = Uuid;
    const COUNTER_BITS: u32 = COUNTER_BITS;
    const WHEN_FULL: WhenFull = WhenFull::NextMillisecond;
    const GUARD_BIT: bool = true;
    /// Lays out a v7 UUID from its millisecond and 74-bit counter.
    #[inline]
    fn assemble(ms: u64, counter: u128) -> Uuid {
        let rand_a = counter >> 62;
        let rand_b = counter & ((1 << 62) - 1);
        Uuid::from_u128(
            (u128::from(ms) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b,
        )
    }
    fn info() -> SchemeInfo {
        UuidCodec::V7.info()
    }
}

/// Time-ordered UUIDs (version 7), strictly increasing from one generator.
///
/// Monotonicity follows RFC 9562 section 6.2, **method 2 ("monotonic random")**: the 74 bits
/// after the timestamp (`rand_a` and `rand_b`) are one counter. In a new millisecond it
/// starts at a random value with its top bit clear (the rollover guard of section 6.2);
/// every further id in the same millisecond adds one. So a generator can issue 2^73 ids in
/// one millisecond before the counter could run out, and if it ever did, the generator moves
/// to the next millisecond rather than wrap.
///
/// When the clock steps back, the generator keeps the last millisecond it used and goes on
/// counting, so ids still increase; they carry that later timestamp until the clock catches
/// up. `fill` and `take` read the clock once for the batch.
///
/// `UuidV7` is single-owner (`Send`, not `Sync`); to share one between threads, use
/// [`AtomicUuidV7`] (lock-free: two threads together make ids as fast as one alone). Both
/// are idkit's time-ordered generator ([`idkit_core::time_ordered`]) over [`V7Layout`];
/// `with_fixed_start` gives every new millisecond's counter a fixed start, for vectors.
///
/// # Examples
///
/// ```
/// use idkit_uuid::{IdScheme, UuidV7};
/// let generator = UuidV7::new();
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(b > a);
/// assert_eq!(a.get_version_num(), 7);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
pub type UuidV7<C = DefaultClock, R = DefaultRandom> = TimeOrdered<V7Layout, C, R>;

/// Time-ordered UUIDs (version 7) from one generator shared by threads, without a lock:
/// `Sync`, strictly increasing per generator (so per thread), never a duplicate.
///
/// The millisecond and a 24-bit counter live in one atomic word advanced by
/// compare-and-swap; the 50 bits below the counter are random, drawn with each new
/// millisecond's counter start. That is RFC 9562 section 6.2's method 1 (a dedicated
/// counter) with method 2's rules: in a new millisecond the counter starts at a random
/// value with its top bit clear, so at least 2^23 ids fit in one millisecond, each id
/// within it counts one up (73 random bits a millisecond, as in [`UuidV7`]), and past the
/// counter's end the generator moves to the next millisecond rather than wrap. A clock
/// that steps back is handled as by [`UuidV7`]: the last millisecond stays, and the
/// counter counts on.
///
/// The word counts milliseconds from the generator's creation: 2^40 ms, 34 years, after
/// which ids fail with a time-overflow error (make a new generator).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use idkit_uuid::{AtomicUuidV7, IdScheme};
///
/// let generator = Arc::new(AtomicUuidV7::new());
/// let handles: Vec<_> = (0..2)
///     .map(|_| {
///         let generator = Arc::clone(&generator);
///         std::thread::spawn(move || generator.take(1_000))
///     })
///     .collect();
/// for h in handles {
///     let ids = h.join().unwrap()?;
///     assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// }
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
pub type AtomicUuidV7<C = DefaultClock, R = DefaultRandom> = AtomicTimeOrdered<V7Layout, C, R>;

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::{Codec, ManualClock};

    #[test]
    fn counter_overflow_moves_to_the_next_millisecond() {
        let clock = ManualClock::new(1_000);
        let generator = UuidV7::with_fixed_start(&clock, COUNTER_MAX);
        let first = generator.next_id().unwrap();
        assert_eq!(first.as_u128() >> 80, 1_000);
        let next = generator.next_id().unwrap();
        assert!(next > first);
        assert_eq!(next.as_u128() >> 80, 1_001);
    }

    #[test]
    fn a_batch_reads_the_clock_once_and_stays_increasing() {
        let clock = ManualClock::new(5_000);
        let generator = UuidV7::with_clock(&clock);
        let mut batch = [Uuid::nil(); 100];
        generator.fill(&mut batch).unwrap();
        assert!(batch.windows(2).all(|w| w[0] < w[1]));
        assert!(batch.iter().all(|u| u.as_u128() >> 80 == 5_000));
        // The next batch, a millisecond later, sorts after it; the same text as one by one.
        clock.advance(1);
        let next = generator.next_id().unwrap();
        assert!(next > batch[99]);
        assert_eq!(next.as_u128() >> 80, 5_001);
        assert_eq!(UuidCodec::V7.format(next), {
            let mut s = String::new();
            UuidCodec::V7.format_into(next, &mut s);
            s
        });
    }

    #[test]
    fn the_shared_generator_moves_on_past_a_full_counter_and_keeps_order() {
        use idkit_core::random::SeededRandom;
        let clock = ManualClock::new(7_000);
        let generator = AtomicUuidV7::with_source(&clock, SeededRandom::new(3));
        let first = generator.next_id().unwrap();
        assert_eq!(first.get_version_num(), 7);
        assert_eq!(first.as_u128() >> 80, 7_000);
        // The counter is the top 24 of the 74 bits, started with its top bit clear.
        let counter = (first.as_u128() >> 64 & 0xfff) << 12 | (first.as_u128() >> 50 & 0xfff);
        assert!(counter < 1 << 23, "{counter:#x}");
        // Fill the rest of the millisecond: the next id moves to 7_001 without a wait.
        let left = (1u64 << 24) - 1 - u64::try_from(counter).unwrap();
        let mut last = first;
        for _ in 0..left {
            let id = generator.next_id().unwrap();
            assert!(id > last);
            last = id;
        }
        assert_eq!(last.as_u128() >> 80, 7_000);
        let next = generator.next_id().unwrap();
        assert_eq!(next.as_u128() >> 80, 7_001);
        assert!(next > last);
        assert_eq!(clock.waits(), 0);
        // The clock stepped back: the last millisecond stays.
        clock.step_back(500);
        let after = generator.next_id().unwrap();
        assert!(after > next);
        assert_eq!(after.as_u128() >> 80, 7_001);
    }

    #[test]
    fn time_past_48_bits_is_an_error() {
        let clock = ManualClock::new(LAST_MS + 1);
        assert_eq!(
            UuidV7::with_clock(&clock).next_id(),
            Err(GenerateError::time_overflow(LAST_MS))
        );
    }
}
