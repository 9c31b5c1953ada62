//! [`MsCounter`]: the millisecond-plus-counter state machine that monotonic ULID, UUIDv7 and
//! TSID share. In a new millisecond the counter starts fresh (a random value); in the same
//! millisecond, or when the clock reads earlier than the last millisecond used, it counts on
//! from the last id, so ids from one generator strictly increase. What happens when the
//! counter would pass its maximum is each scheme's choice ([`MsCounter::step`] says so and
//! leaves it to the caller): ULID fails, UUIDv7 moves to the next millisecond, TSID waits
//! for the clock.

use crate::GenerateError;

/// What the next id of a millisecond-and-counter generator is, from the clock reading and
/// the last id: the one decision that [`MsCounter::step`] and [`AtomicMsCounter::step`]
/// (so the single-owner and the lock-free generators of every time-ordered scheme) make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<T> {
    /// The clock is past the last tick: the next id is in the clock's tick, with a fresh
    /// counter.
    Fresh,
    /// The clock reads the last tick, or an earlier one (it went back): the next id is in
    /// the last tick, with this counter (the last plus one).
    Count(T),
    /// As `Count`, but the counter is at its maximum: the scheme decides.
    Full,
}

/// The [`Decision`] at clock reading `now` after an id in tick `last` with `counter`,
/// for counters up to `max`.
///
/// # Examples
///
/// ```
/// use idkit_core::monotonic::{Decision, decide};
/// assert_eq!(decide(1_001, 1_000, 5u64, 9), Decision::Fresh);
/// assert_eq!(decide(1_000, 1_000, 5u64, 9), Decision::Count(6));
/// assert_eq!(decide(990, 1_000, 9u64, 9), Decision::Full);
/// ```
#[inline(always)]
pub fn decide<T>(now: u64, last: u64, counter: T, max: T) -> Decision<T>
where
    T: Copy + PartialOrd + core::ops::Add<Output = T> + From<u8>,
{
    if now > last {
        Decision::Fresh
    } else if counter < max {
        Decision::Count(counter + T::from(1))
    } else {
        Decision::Full
    }
}

/// The last millisecond used and the counter within it.
///
/// # Examples
///
/// ```
/// use idkit_core::monotonic::MsCounter;
/// let mut state = MsCounter::default();
/// let max = 0xff;
/// assert_eq!(state.step(1_000, max, || Ok(0x10)), Ok(Some((1_000, 0x10))));
/// assert_eq!(state.step(1_000, max, || Ok(0x99)), Ok(Some((1_000, 0x11))));
/// // The clock went back: stay on the last millisecond and count on.
/// assert_eq!(state.step(990, max, || Ok(0x99)), Ok(Some((1_000, 0x12))));
/// assert_eq!(state.step(1_001, max, || Ok(0xfe)), Ok(Some((1_001, 0xfe))));
/// assert_eq!(state.step(1_001, max, || Ok(0)), Ok(Some((1_001, 0xff))));
/// // At the maximum: the caller decides.
/// assert_eq!(state.step(1_001, max, || Ok(0)), Ok(None));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsCounter {
    /// The millisecond of the last id issued (0 before the first).
    pub last_ms: u64,
    /// The counter of the last id issued.
    pub counter: u128,
}

impl MsCounter {
    /// The `(millisecond, counter)` of the next id at clock reading `now`, recorded as the
    /// last one: `fresh()` in a millisecond after the last, the last counter plus one
    /// otherwise. `None`, with nothing recorded, when the counter is already at `max` and
    /// the clock has not passed the last millisecond.
    ///
    /// # Errors
    ///
    /// Whatever `fresh` returns (nothing is recorded then).
    #[inline]
    pub fn step(
        &mut self,
        now: u64,
        max: u128,
        fresh: impl FnOnce() -> Result<u128, GenerateError>,
    ) -> Result<Option<(u64, u128)>, GenerateError> {
        let next = match decide(now, self.last_ms, self.counter, max) {
            Decision::Fresh => (now, fresh()?),
            Decision::Count(counter) => (self.last_ms, counter),
            Decision::Full => return Ok(None),
        };
        (self.last_ms, self.counter) = next;
        Ok(Some(next))
    }

    /// Records `(ms, counter)` as the last id, for a scheme that moves on by itself.
    pub fn set(&mut self, ms: u64, counter: u128) {
        (self.last_ms, self.counter) = (ms, counter);
    }
}

#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

/// What [`AtomicMsCounter::step`] issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The next id's tick (a millisecond, or a second for ObjectId) and counter.
    Issued {
        /// The tick.
        tick: u64,
        /// The counter within it.
        counter: u64,
    },
    /// The counter of `tick`, the last tick used, is at its maximum and the clock has not
    /// passed it; nothing was recorded. The caller decides, as with [`MsCounter::step`]:
    /// step again at `tick + 1`, wait for the clock, or fail.
    Exhausted {
        /// The last tick used.
        tick: u64,
    },
}

/// [`MsCounter`] shared by threads without a lock: the last tick (relative to a base fixed
/// at construction) and the counter within it packed in one `AtomicU64`, advanced by
/// compare-and-swap. Each successful swap hands out a `(tick, counter)` pair strictly
/// greater than every pair before it, so no two callers ever get the same pair, and the
/// pairs one thread gets strictly increase. A scheme's random bits below the counter are
/// its own (the time-ordered generators draw them with each new tick's counter start).
///
/// With `counter_bits` bits of counter the word holds `64 - counter_bits` bits of ticks
/// after the base: 2^40 ms (34 years) for the 24-bit counters of UUIDv7 and ULID.
///
/// # Examples
///
/// ```
/// use idkit_core::monotonic::{AtomicMsCounter, Step};
/// let state = AtomicMsCounter::new(1_000, 8);
/// assert_eq!(state.step(1_000, || Ok(0x10))?, Step::Issued { tick: 1_000, counter: 0x10 });
/// assert_eq!(state.step(1_000, || Ok(0x99))?, Step::Issued { tick: 1_000, counter: 0x11 });
/// // The clock went back: stay on the last tick and count on.
/// assert_eq!(state.step(990, || Ok(0x99))?, Step::Issued { tick: 1_000, counter: 0x12 });
/// assert_eq!(state.step(1_001, || Ok(0xff))?, Step::Issued { tick: 1_001, counter: 0xff });
/// assert_eq!(state.step(1_001, || Ok(0))?, Step::Exhausted { tick: 1_001 });
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug)]
pub struct AtomicMsCounter {
    base: u64,
    counter_bits: u32,
    /// `(tick - base) << counter_bits | counter` of the last pair issued; `NONE` before
    /// the first. On a line of its own, away from `base` and `counter_bits`, which every
    /// thread reads on every id.
    word: CachePadded<AtomicU64>,
}

/// The word before the first id: every real word is smaller.
const NONE: u64 = u64::MAX;

impl AtomicMsCounter {
    /// A counter for ticks from `base` on (the clock's reading when the generator is made:
    /// a clock that reads earlier later on counts on from the last tick, as one that went
    /// back does), with `counter_bits` bits of counter.
    ///
    /// # Panics
    ///
    /// When `counter_bits` is 0 or above 32: a scheme's constant, not an input.
    pub fn new(base: u64, counter_bits: u32) -> Self {
        assert!(
            (1..=32).contains(&counter_bits),
            "counter bits: expected 1 to 32, found {counter_bits}"
        );
        Self {
            base,
            counter_bits,
            word: CachePadded(AtomicU64::new(NONE)),
        }
    }

    /// The tick the counter counts from: the clock's reading when it was made.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The largest counter.
    pub fn counter_max(&self) -> u64 {
        (1 << self.counter_bits) - 1
    }

    /// The next `(tick, counter)` at clock reading `now`, as [`MsCounter::step`] makes it:
    /// `fresh()` (masked to the counter's bits) in a tick after the last, the last counter
    /// plus one otherwise. `fresh` may run more than once when other threads win the race;
    /// only the pair recorded is returned.
    ///
    /// # Errors
    ///
    /// Whatever `fresh` returns, and [`GenerateError::time_overflow`] when `now` is more
    /// than `2^(64 - counter_bits) - 2` ticks after the base.
    #[inline]
    pub fn step(
        &self,
        now: u64,
        fresh: impl FnMut() -> Result<u64, GenerateError>,
    ) -> Result<Step, GenerateError> {
        self.step_with(self.counter_bits, now, fresh)
    }

    /// [`step`](Self::step) for a caller that passes the width it made the counter with,
    /// as a constant: the shifts and masks then take no registers, and the shared
    /// generators' loop from one swap to the next keeps its values out of memory.
    #[inline(always)]
    pub(crate) fn step_with(
        &self,
        shift: u32,
        now: u64,
        mut fresh: impl FnMut() -> Result<u64, GenerateError>,
    ) -> Result<Step, GenerateError> {
        debug_assert_eq!(shift, self.counter_bits);
        let max = (1 << shift) - 1;
        let span = (NONE >> shift) - 1;
        let now_rel = now.saturating_sub(self.base);
        if now_rel > span {
            return Err(GenerateError::time_overflow(self.base.saturating_add(span)));
        }
        let mut backoff = Backoff::new(8);
        let mut current = self.word.load(Ordering::Relaxed);
        loop {
            let (last, counter) = (current >> shift, current & max);
            let decision = if current == NONE {
                Decision::Fresh
            } else {
                decide(now_rel, last, counter, max)
            };
            let next = match decision {
                Decision::Fresh => (now_rel << shift) | (fresh()? & max),
                // The counter is below its maximum: the word plus one is the same tick
                // with the next counter, one add between the load and the swap.
                Decision::Count(_) => current + 1,
                Decision::Full => {
                    return Ok(Step::Exhausted {
                        tick: self.base + last,
                    });
                }
            };
            // Relaxed is enough: the word is the only shared state, and its modification
            // order alone makes the pairs distinct and increasing.
            match self.word.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Ok(Step::Issued {
                        tick: self.base + (next >> shift),
                        counter: next & max,
                    });
                }
                Err(seen) => {
                    // Another thread won: back off before retrying, so that under
                    // contention one core keeps the cache line for a few ids instead of
                    // the two bouncing it on every attempt.
                    backoff.spin();
                    current = seen;
                }
            }
        }
    }
}

/// A value alone on its cache line, for the state word of a shared generator: a
/// compare-and-swap then invalidates nothing but the word itself, not the generator's
/// settings that every thread reads on every id, nor whatever sits next to the generator in
/// memory. 128 bytes, two 64-byte lines, as x86's adjacent-line prefetcher fetches them in
/// pairs.
///
/// # Examples
///
/// ```
/// use idkit_core::monotonic::CachePadded;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let word = CachePadded(AtomicU64::new(7));
/// assert_eq!(word.load(Ordering::Relaxed), 7);
/// assert_eq!(core::mem::align_of_val(&word), 128);
/// ```
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CachePadded<T>(pub T);

impl<T> core::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Exponential spinning after a lost compare-and-swap: 1, 2, 4 ... `2^max_exponent`
/// spin-loop hints, then that many each time. Under contention it lets one core keep a
/// cache line for a run of operations instead of two cores bouncing it on every attempt;
/// the lock-free generators of every scheme use it.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    exponent: u32,
    max_exponent: u32,
}

impl Backoff {
    /// A backoff that grows to `2^max_exponent` hints per spin.
    pub const fn new(max_exponent: u32) -> Self {
        Self {
            exponent: 0,
            max_exponent,
        }
    }

    /// Spins once, longer each time.
    #[inline]
    pub fn spin(&mut self) {
        for _ in 0..(1u32 << self.exponent) {
            core::hint::spin_loop();
        }
        #[cfg(loom)]
        loom::thread::yield_now();
        self.exponent = (self.exponent + 1).min(self.max_exponent);
    }
}
