//! UUID generators. Randomness comes from a [`RandomSource`]: by default [`ThreadRandom`], a
//! ChaCha8 generator per thread seeded from the operating system once, so no id costs a
//! system call; `with_source` takes a seeded one for tests.

use core::cell::Cell;

use idkit_core::monotonic::{AtomicMsCounter, MsCounter, Step};
use idkit_core::random::{RandomSource, ThreadRandom};
use idkit_core::{Clock, GenerateError, IdScheme, SchemeInfo, TickerClock};
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
pub struct UuidV4<R = ThreadRandom> {
    random: R,
}

impl UuidV4 {
    /// A generator.
    pub fn new() -> Self {
        Self::with_source(ThreadRandom)
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
const COUNTER_MAX: u128 = (1 << COUNTER_BITS) - 1;
/// The last Unix millisecond a 48-bit field holds.
const LAST_MS: u64 = (1 << 48) - 1;

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
/// up.
///
/// `UuidV7` is single-owner (`Send`, not `Sync`); to share one between threads, use
/// [`AtomicUuidV7`] (lock-free: two threads together make ids as fast as one alone).
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
#[derive(Debug)]
pub struct UuidV7<C = TickerClock, R = ThreadRandom> {
    clock: C,
    random: R,
    state: Cell<MsCounter>,
    seeded: Option<u128>,
}

impl UuidV7 {
    /// A generator on a [`TickerClock`].
    pub fn new() -> Self {
        Self::with_clock(TickerClock::new())
    }
}

impl Default for UuidV7 {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock> UuidV7<C> {
    /// A generator on `clock`.
    pub fn with_clock(clock: C) -> Self {
        Self::with_source(clock, ThreadRandom)
    }

    /// A deterministic generator for tests and vectors: every new millisecond's counter
    /// starts at `start` (masked to the counter's 74 bits) instead of a random value. The
    /// rollover guard (top bit clear) applies to random starts; a fixed start near the top
    /// simply reaches the move to the next millisecond sooner.
    pub fn with_fixed_start(clock: C, start: u128) -> Self {
        Self {
            seeded: Some(start & COUNTER_MAX),
            ..Self::with_clock(clock)
        }
    }
}

impl<C: Clock, R: RandomSource> UuidV7<C, R> {
    /// A generator on `clock` drawing its counter starts from `random`: with a
    /// [`SeededRandom`](idkit_core::random::SeededRandom), the same ids every run.
    pub fn with_source(clock: C, random: R) -> Self {
        Self {
            clock,
            random,
            state: Cell::new(MsCounter::default()),
            seeded: None,
        }
    }

    fn fresh_counter(&self) -> Result<u128, GenerateError> {
        match self.seeded {
            Some(start) => Ok(start),
            // Top bit clear: the rollover guard of RFC 9562 section 6.2.
            None => Ok(self.random.u128()? & (COUNTER_MAX >> 1)),
        }
    }
}

/// Lays out a v7 UUID from its millisecond and 74-bit counter.
fn assemble(ms: u64, counter: u128) -> Uuid {
    let rand_a = counter >> 62;
    let rand_b = counter & ((1 << 62) - 1);
    Uuid::from_u128((u128::from(ms) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b)
}

impl<C: Clock, R: RandomSource> IdScheme for UuidV7<C, R> {
    type Id = Uuid;

    fn next_id(&self) -> Result<Uuid, GenerateError> {
        self.issue_at(self.clock.now_ms())
    }

    /// One clock read for the whole batch: the ids are as they would be had the clock not
    /// moved while they were made (microseconds for a batch), and still strictly increasing.
    fn fill(&self, out: &mut [Uuid]) -> Result<(), GenerateError> {
        let now = self.clock.now_ms();
        for slot in out {
            *slot = self.issue_at(now)?;
        }
        Ok(())
    }

    /// As [`fill`](Self::fill): one clock read for the batch.
    fn take(&self, n: usize) -> Result<Vec<Uuid>, GenerateError> {
        let mut out = vec![Uuid::nil(); n];
        self.fill(&mut out)?;
        Ok(out)
    }

    fn info(&self) -> SchemeInfo {
        UuidCodec::V7.info()
    }
}

impl<C: Clock, R: RandomSource> UuidV7<C, R> {
    fn issue_at(&self, now: u64) -> Result<Uuid, GenerateError> {
        let mut state = self.state.get();
        // Same millisecond, or the clock went back: count on from the last id.
        let (ms, counter) = match state.step(now, COUNTER_MAX, || self.fresh_counter())? {
            Some(next) => next,
            // 2^73 ids in one millisecond: move on rather than wrap.
            None => {
                let next = (state.last_ms + 1, self.fresh_counter()?);
                state.set(next.0, next.1);
                next
            }
        };
        if ms > LAST_MS {
            return Err(GenerateError::time_overflow(LAST_MS));
        }
        self.state.set(state);
        Ok(assemble(ms, counter))
    }
}

/// Counter bits of the shared generator's atomic word: the top 24 of the 74 bits after the
/// timestamp. The 50 below are fresh random bits for every id.
const SHARED_COUNTER_BITS: u32 = 24;
const SHARED_RANDOM_BITS: u32 = COUNTER_BITS - SHARED_COUNTER_BITS;

/// Time-ordered UUIDs (version 7) from one generator shared by threads, without a lock:
/// `Sync`, strictly increasing per generator (so per thread), never a duplicate.
///
/// The millisecond and a 24-bit counter live in one atomic word advanced by
/// compare-and-swap ([`AtomicMsCounter`]); the 50 bits below the counter are fresh random
/// bits from the calling thread. That is RFC 9562 section 6.2's method 1 (a dedicated
/// counter) with method 2's rules: in a new millisecond the counter starts at a random
/// value with its top bit clear, so at least 2^23 ids fit in one millisecond, and past the
/// counter's end the generator moves to the next millisecond rather than wrap. A clock that
/// steps back is handled as by [`UuidV7`]: the last millisecond stays, and the counter
/// counts on.
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
#[derive(Debug)]
pub struct AtomicUuidV7<C = TickerClock, R = ThreadRandom> {
    clock: C,
    random: R,
    state: AtomicMsCounter,
}

impl AtomicUuidV7 {
    /// A generator on a [`TickerClock`].
    pub fn new() -> Self {
        Self::with_clock(TickerClock::new())
    }
}

impl Default for AtomicUuidV7 {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock> AtomicUuidV7<C> {
    /// A generator on `clock`.
    pub fn with_clock(clock: C) -> Self {
        Self::with_source(clock, ThreadRandom)
    }
}

impl<C: Clock, R: RandomSource> AtomicUuidV7<C, R> {
    /// A generator on `clock` drawing counter starts and random bits from `random`.
    pub fn with_source(clock: C, random: R) -> Self {
        let base = clock.now_ms();
        Self {
            clock,
            random,
            state: AtomicMsCounter::new(base, SHARED_COUNTER_BITS),
        }
    }

    fn issue_at(&self, now: u64) -> Result<Uuid, GenerateError> {
        let mut at = now;
        loop {
            // Top bit clear: the rollover guard of RFC 9562 section 6.2.
            let fresh = || {
                let r = self.random.u128()?;
                Ok(u64::try_from(r & u128::from(u32::MAX)).unwrap_or(0)
                    & ((1 << (SHARED_COUNTER_BITS - 1)) - 1))
            };
            match self.state.step(at, fresh)? {
                Step::Issued { tick, counter } => {
                    if tick > LAST_MS {
                        return Err(GenerateError::time_overflow(LAST_MS));
                    }
                    let low = self.random.u128()? & ((1 << SHARED_RANDOM_BITS) - 1);
                    return Ok(assemble(
                        tick,
                        (u128::from(counter) << SHARED_RANDOM_BITS) | low,
                    ));
                }
                // 2^23 ids or more in one millisecond: move on rather than wrap.
                Step::Exhausted { tick } => at = tick + 1,
            }
        }
    }
}

impl<C: Clock, R: RandomSource> IdScheme for AtomicUuidV7<C, R> {
    type Id = Uuid;

    #[inline]
    fn next_id(&self) -> Result<Uuid, GenerateError> {
        self.issue_at(self.clock.now_ms())
    }

    /// One clock read for the whole batch, as [`UuidV7`]'s.
    fn fill(&self, out: &mut [Uuid]) -> Result<(), GenerateError> {
        let now = self.clock.now_ms();
        for slot in out {
            *slot = self.issue_at(now)?;
        }
        Ok(())
    }

    /// As [`fill`](Self::fill): one clock read for the batch.
    fn take(&self, n: usize) -> Result<Vec<Uuid>, GenerateError> {
        let mut out = vec![Uuid::nil(); n];
        self.fill(&mut out)?;
        Ok(out)
    }

    fn info(&self) -> SchemeInfo {
        UuidCodec::V7.info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::{Codec, ManualClock};

    #[test]
    fn counter_overflow_moves_to_the_next_millisecond() {
        let clock = ManualClock::new(1_000);
        let generator = UuidV7::with_fixed_start(&clock, 0);
        let first = generator.next_id().unwrap();
        let mut state = generator.state.get();
        state.counter = COUNTER_MAX;
        generator.state.set(state);
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
