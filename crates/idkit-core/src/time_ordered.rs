//! The 128-bit time-ordered generators in one place: a 48-bit Unix millisecond, then a
//! counter that starts at a random value in each new millisecond and counts up within it.
//! UUIDv7 (RFC 9562 section 6.2, method 2), ULID (its spec's monotonic mode) and TypeID
//! (through UUIDv7) are this generator with their own [`Layout`]: how many bits count, what
//! a full counter does, and where the bits go in the id.
//!
//! Two generators share one step ([`MsCounter::step`] and [`AtomicMsCounter::step`] make
//! the same decision, [`monotonic::decide`](crate::monotonic::decide)):
//!
//! * [`TimeOrdered`]: single-owner (`Send`, not `Sync`), the state in a `Cell`. Within a
//!   millisecond each id is the last plus one.
//! * [`AtomicTimeOrdered`]: shared by threads without a lock. The millisecond and the top
//!   24 bits of the counter sit in one atomic word ([`AtomicMsCounter`]); the bits below
//!   are random, drawn with each new millisecond's counter start. Within a millisecond
//!   each id's counter is the last plus one, as in the single-owner generator.
//!
//! # Examples
//!
//! A layout of one's own: a 48-bit millisecond and an 80-bit counter, as ULID lays them.
//!
//! ```
//! use idkit_core::random::RandomSource;
//! use idkit_core::time_ordered::{Layout, TimeOrdered, WhenFull};
//! use idkit_core::{GenerateError, IdScheme, ManualClock, SchemeInfo};
//!
//! #[derive(Debug)]
//! struct Plain;
//! impl Layout for Plain {
//!     type Id = u128;
//!     const COUNTER_BITS: u32 = 80;
//!     const WHEN_FULL: WhenFull = WhenFull::Fail("the 80-bit counter within one millisecond");
//!     const GUARD_BIT: bool = false;
//!     fn assemble(ms: u64, counter: u128) -> u128 {
//!         u128::from(ms) << 80 | counter
//!     }
//!     fn info() -> SchemeInfo {
//!         SchemeInfo::new("plain", 128)
//!     }
//! }
//!
//! // A random source of one's own (a platform's, without `std`); this one always draws 7.
//! #[derive(Debug)]
//! struct Sevens;
//! impl RandomSource for Sevens {
//!     fn u128(&self) -> Result<u128, GenerateError> {
//!         Ok(7)
//!     }
//!     fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
//!         dest.fill(7);
//!         Ok(())
//!     }
//! }
//!
//! let clock = ManualClock::new(1_000);
//! let generator = TimeOrdered::<Plain, _, _>::with_source(&clock, Sevens);
//! assert_eq!(generator.next_id()?, 1_000 << 80 | 7);
//! assert_eq!(generator.next_id()?, 1_000 << 80 | 8);
//! # Ok::<(), idkit_core::GenerateError>(())
//! ```

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::monotonic::{AtomicMsCounter, MsCounter, Step};
use crate::prelude::*;
use crate::random::{DefaultRandom, RandomSource};
use crate::{Clock, ComposeError, DefaultClock, GenerateError, IdScheme, SchemeInfo, TimeBounds};

/// The last Unix millisecond a 48-bit field holds.
pub const LAST_MS: u64 = (1 << 48) - 1;

/// Counter bits of the shared generator's atomic word, the top of the layout's counter: at
/// least 2^23 ids in a millisecond (a new millisecond's counter starts with its top bit
/// clear). The bits below them are random, drawn once a millisecond.
pub const SHARED_COUNTER_BITS: u32 = 24;

/// What a full counter does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// Take the next millisecond with a fresh counter (UUIDv7: "rather than wrap").
    NextMillisecond,
    /// Fail with [`GenerateErrorKind::Exhausted`](crate::GenerateErrorKind::Exhausted),
    /// naming what ran out, until the clock passes the millisecond (ULID: "the generation
    /// MUST fail").
    Fail(&'static str),
}

/// What a time-ordered scheme supplies: its counter's width, its rule for a full counter,
/// and how a millisecond and a counter make its id.
pub trait Layout: fmt::Debug + Send + Sync + 'static {
    /// The scheme's id.
    type Id: Copy;
    /// Bits after the 48-bit millisecond that the single-owner generator counts with (74
    /// for UUIDv7's `rand_a` and `rand_b`, 80 for ULID's random part). At least
    /// [`SHARED_COUNTER_BITS`] + 1 and at most 80.
    const COUNTER_BITS: u32;
    /// What a full counter does.
    const WHEN_FULL: WhenFull;
    /// Whether a new millisecond's random counter starts with its top bit clear in the
    /// single-owner generator, RFC 9562's rollover guard (the shared generator always
    /// clears it).
    const GUARD_BIT: bool;
    /// The id of millisecond `ms` (at most [`LAST_MS`]) and `counter` (below
    /// `2^COUNTER_BITS`).
    fn assemble(ms: u64, counter: u128) -> Self::Id;
    /// The scheme's facts.
    fn info() -> SchemeInfo;
}

/// The lowest and highest ids of millisecond `ms` in layout `L`: the counter (and the random
/// bits below it) all zeros, then all ones. What the time-ordered codecs' `bounds_at` give.
///
/// # Errors
///
/// [`ComposeError`]: `TimeOutOfRange` past [`LAST_MS`], `UnknownField` for any field (these
/// ids hold only a time and counted bits).
pub fn bounds<L: Layout>(
    ms: u64,
    fields: &[(&str, u128)],
) -> Result<TimeBounds<L::Id>, ComposeError> {
    ComposeError::refuse_fields(fields)?;
    if ms > LAST_MS {
        return Err(ComposeError::time_out_of_range(ms, 0, LAST_MS));
    }
    Ok(TimeBounds::new(
        L::assemble(ms, 0),
        L::assemble(ms, counter_max::<L>()),
    ))
}

/// The id of millisecond `ms` and `counter` in layout `L`: what the time-ordered codecs'
/// `compose_at` give once they have read their parts into the counter.
///
/// # Errors
///
/// [`ComposeError`]: `TimeOutOfRange` past [`LAST_MS`]; `FieldOutOfRange` for a counter
/// wider than the layout's, named `part`.
pub fn compose<L: Layout>(
    ms: u64,
    counter: u128,
    part: &'static str,
) -> Result<L::Id, ComposeError> {
    if ms > LAST_MS {
        return Err(ComposeError::time_out_of_range(ms, 0, LAST_MS));
    }
    if counter > counter_max::<L>() {
        return Err(ComposeError::field_out_of_range(
            part,
            counter,
            counter_max::<L>(),
        ));
    }
    Ok(L::assemble(ms, counter))
}

const fn counter_max<L: Layout>() -> u128 {
    (1 << L::COUNTER_BITS) - 1
}

/// Time-ordered ids from one owner: the layout's counter, started at a random value in
/// each new millisecond (top bit clear when the layout asks for the guard) and counted up
/// within it. A clock that steps back keeps the last millisecond and counts on, so the ids
/// strictly increase. `fill` and `take` read the clock once for the batch.
///
/// Randomness comes from a [`RandomSource`]: by default [`ThreadRandom`](crate::random::ThreadRandom), a ChaCha8
/// generator per thread seeded from the operating system once.
pub struct TimeOrdered<L, C = DefaultClock, R = DefaultRandom> {
    clock: C,
    random: R,
    state: Cell<MsCounter>,
    fixed: Option<u128>,
    layout: PhantomData<fn() -> L>,
}

#[cfg(feature = "rand")]
impl<L: Layout, C: Clock> TimeOrdered<L, C> {
    /// A deterministic generator for tests and vectors: every new millisecond's counter
    /// starts at `start` (masked to the layout's counter bits) instead of a random value.
    /// The rollover guard applies to random starts; a fixed start near the top reaches
    /// the full counter sooner.
    pub fn with_fixed_start(clock: C, start: u128) -> Self {
        Self {
            fixed: Some(start & counter_max::<L>()),
            ..Self::with_clock(clock)
        }
    }

    /// [`with_fixed_start`](Self::with_fixed_start) under ULID's name: its counter is the
    /// random part.
    pub fn with_fixed_random(clock: C, random: u128) -> Self {
        Self::with_fixed_start(clock, random)
    }
}

impl<L: Layout, C: Clock, R: RandomSource> TimeOrdered<L, C, R> {
    /// A generator on `clock` drawing its counter starts from `random`: with a
    /// [`SeededRandom`](crate::random::SeededRandom), the same ids every run.
    pub fn with_source(clock: C, random: R) -> Self {
        Self {
            clock,
            random,
            state: Cell::new(MsCounter::default()),
            fixed: None,
            layout: PhantomData,
        }
    }

    /// A new millisecond's counter. Inlined: out of line it took the generator's address,
    /// and the loop making ids then kept the state in memory instead of in registers (1 ns
    /// an id for ULID in `scaling`); the draw itself stays a call
    /// ([`RandomSource::rare_u128`]): inlined, it made `issue_at` too large to inline, and
    /// each id came back through memory (7.4 ns an id for UUIDv7 where 2.3).
    #[inline]
    fn fresh(&self) -> Result<u128, GenerateError> {
        match self.fixed {
            Some(start) => Ok(start),
            None if L::GUARD_BIT => Ok(self.random.rare_u128()? & (counter_max::<L>() >> 1)),
            None => Ok(self.random.rare_u128()? & counter_max::<L>()),
        }
    }

    #[inline]
    fn issue_at(&self, now: u64) -> Result<L::Id, GenerateError> {
        if now > LAST_MS {
            return Err(past_last_ms());
        }
        let mut state = self.state.get();
        let (ms, counter) = match state.step(now, counter_max::<L>(), || self.fresh())? {
            Some(next) => next,
            None => match L::WHEN_FULL {
                WhenFull::Fail(what) => return Err(GenerateError::exhausted(what)),
                WhenFull::NextMillisecond => {
                    let next = (state.last_ms + 1, self.fresh()?);
                    state.set(next.0, next.1);
                    next
                }
            },
        };
        if ms > LAST_MS {
            return Err(past_last_ms());
        }
        self.state.set(state);
        Ok(L::assemble(ms, counter))
    }
}

/// Time-ordered ids from one generator shared by threads, without a lock: `Sync`, strictly
/// increasing per generator (so per thread), never a duplicate.
///
/// The millisecond and the top [`SHARED_COUNTER_BITS`] of the layout's counter live in one
/// atomic word advanced by compare-and-swap ([`AtomicMsCounter`]). In a new millisecond the
/// counter starts at a random value with its top bit clear, so at least 2^23 ids fit in one
/// millisecond; past the counter's end the layout's [`WhenFull`] applies. The bits below
/// the counter are random, drawn with the counter's start: a millisecond's ids carry as
/// many random bits as the single-owner generator's (its start), and as there, each id
/// within a millisecond is the last plus one in the counter. A clock that steps back keeps
/// the last millisecond.
///
/// The word counts milliseconds from the generator's creation: 2^40 ms, 34 years, after
/// which ids fail with a time-overflow error (make a new generator).
pub struct AtomicTimeOrdered<L, C = DefaultClock, R = DefaultRandom> {
    clock: C,
    random: R,
    state: AtomicMsCounter,
    /// The random bits below the counter, replaced with each new millisecond's start. They
    /// decide no id's uniqueness or order (the counter above them does), so a thread that
    /// still reads the last millisecond's bits for a moment after another thread started a
    /// new one makes a correct id, and the word needs no ordering and no model check.
    low: AtomicU64,
    layout: PhantomData<fn() -> L>,
}

/// Bits below the shared counter.
const fn low_bits<L: Layout>() -> u32 {
    L::COUNTER_BITS - SHARED_COUNTER_BITS
}

impl<L: Layout, C: Clock, R: RandomSource> AtomicTimeOrdered<L, C, R> {
    /// A generator on `clock` drawing counter starts and random bits from `random`.
    pub fn with_source(clock: C, random: R) -> Self {
        const { assert!(L::COUNTER_BITS > SHARED_COUNTER_BITS && L::COUNTER_BITS <= 80) };
        let base = clock.now_ms();
        Self {
            clock,
            random,
            state: AtomicMsCounter::new(base, SHARED_COUNTER_BITS),
            low: AtomicU64::new(0),
            layout: PhantomData,
        }
    }

    /// A generator whose ids all come after millisecond `floor_ms`, whatever the clock
    /// reads: the first id is in millisecond `floor_ms + 1` or the clock's, whichever is
    /// later. For a generator that takes over from one whose ids reached `floor_ms` (a
    /// persisted high-water mark, read back after a restart): while the clock is still
    /// behind, ids count on in the millisecond after the mark, above every earlier one, as
    /// when a running generator's clock steps back.
    ///
    /// ```
    /// use idkit_core::time_ordered::AtomicTimeOrdered;
    /// use idkit_core::{IdScheme, ManualClock};
    /// # use idkit_core::random::RandomSource;
    /// # use idkit_core::time_ordered::{Layout, WhenFull};
    /// # use idkit_core::{GenerateError, SchemeInfo};
    /// # #[derive(Debug)]
    /// # struct Sevens;
    /// # impl RandomSource for Sevens {
    /// #     fn u128(&self) -> Result<u128, GenerateError> { Ok(7) }
    /// #     fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> { dest.fill(7); Ok(()) }
    /// # }
    /// # #[derive(Debug)]
    /// # struct Plain;
    /// # impl Layout for Plain {
    /// #     type Id = u128;
    /// #     const COUNTER_BITS: u32 = 80;
    /// #     const WHEN_FULL: WhenFull = WhenFull::NextMillisecond;
    /// #     const GUARD_BIT: bool = false;
    /// #     fn assemble(ms: u64, counter: u128) -> u128 { u128::from(ms) << 80 | counter }
    /// #     fn info() -> SchemeInfo { SchemeInfo::new("plain", 128) }
    /// # }
    /// // The clock reads 1,000 ms; ids up to millisecond 4,000 were issued before.
    /// let clock = ManualClock::new(1_000);
    /// let generator = AtomicTimeOrdered::<Plain, _, _>::starting_after(&clock, Sevens, 4_000);
    /// assert_eq!(generator.next_id()? >> 80, 4_001);
    /// clock.set(5_000);
    /// assert_eq!(generator.next_id()? >> 80, 5_000);
    /// # Ok::<(), idkit_core::GenerateError>(())
    /// ```
    pub fn starting_after(clock: C, random: R, floor_ms: u64) -> Self {
        let mut generator = Self::with_source(clock, random);
        let base = generator.state.base().max(floor_ms.saturating_add(1));
        generator.state = AtomicMsCounter::new(base, SHARED_COUNTER_BITS);
        generator
    }

    // Always inlined: out of line, the id came back through memory and the caller's
    // 16-byte read of it stalled on the store (3 to 5 ns an id, measured in `scaling`).
    // The low bits are read before the compare-and-swap: after it, every load waits for
    // the swap to finish, and the id would wait for the load.
    #[inline(always)]
    fn issue_at(&self, now: u64) -> Result<L::Id, GenerateError> {
        if now > LAST_MS {
            return Err(past_last_ms());
        }
        let mut low = self.low.load(Ordering::Relaxed);
        match self
            .state
            .step_with(SHARED_COUNTER_BITS, now, || self.fresh(&mut low))?
        {
            Step::Issued { tick, counter } if tick <= LAST_MS => {
                Ok(Self::assemble(tick, counter, low))
            }
            // The step's parts go on in registers: the cold paths take no `Step`, which
            // would be written to memory before every id.
            Step::Issued { .. } => Err(past_last_ms()),
            Step::Exhausted { tick } => self.full(tick, low),
        }
    }

    /// A new millisecond's counter, top bit clear, and the bits below it (stored, and
    /// written to `low`). Runs before the compare-and-swap that may record the counter, so
    /// a thread that loses the race may store its bits after the winner's: both draws are
    /// random, and either serves.
    #[inline(always)]
    fn fresh(&self, low: &mut u64) -> Result<u64, GenerateError> {
        let (bits, start) = self.draw()?;
        self.low.store(bits, Ordering::Relaxed);
        *low = bits;
        Ok(start)
    }

    /// The two random draws of a new millisecond: the bits below the counter, and the
    /// counter's start.
    #[inline(never)]
    fn draw(&self) -> Result<(u64, u64), GenerateError> {
        let bits = self.random.u64()?;
        Ok((
            bits,
            self.random.u64()? & ((1 << (SHARED_COUNTER_BITS - 1)) - 1),
        ))
    }

    #[inline(always)]
    fn assemble(tick: u64, counter: u64, low: u64) -> L::Id {
        let low = u128::from(low) & ((1 << low_bits::<L>()) - 1);
        L::assemble(tick, (u128::from(counter) << low_bits::<L>()) | low)
    }

    /// The counter of millisecond `tick`, the last one used, is full.
    #[cold]
    #[inline(never)]
    fn full(&self, mut tick: u64, mut low: u64) -> Result<L::Id, GenerateError> {
        if let WhenFull::Fail(_) = L::WHEN_FULL {
            return Err(GenerateError::exhausted(
                "the shared generator's 24-bit counter within one millisecond",
            ));
        }
        loop {
            match self
                .state
                .step_with(SHARED_COUNTER_BITS, tick + 1, || self.fresh(&mut low))?
            {
                Step::Issued { tick, counter } if tick <= LAST_MS => {
                    return Ok(Self::assemble(tick, counter, low));
                }
                Step::Issued { .. } => return Err(past_last_ms()),
                Step::Exhausted { tick: last } => tick = last,
            }
        }
    }
}

/// The error of an id whose millisecond is past 48 bits.
#[cold]
fn past_last_ms() -> GenerateError {
    GenerateError::time_overflow(LAST_MS)
}

/// What both generators have alike: their constructors on a clock, and `IdScheme`, whose
/// `next_id` reads the clock for each id, `fill` and `take` once for the batch (the ids are
/// as they would be had the clock not moved while they were made, microseconds for a batch,
/// and still strictly increasing).
macro_rules! generator_impls {
    ($generator:ident) => {
        #[cfg(feature = "rand")]
        impl<L: Layout> $generator<L> {
            /// A generator on a [`TickerClock`](crate::TickerClock).
            pub fn new() -> Self {
                Self::with_clock(crate::TickerClock::new())
            }
        }

        #[cfg(feature = "rand")]
        impl<L: Layout> Default for $generator<L> {
            fn default() -> Self {
                Self::new()
            }
        }

        #[cfg(feature = "rand")]
        impl<L: Layout, C: Clock> $generator<L, C> {
            /// A generator on `clock`, drawing from the thread's random source
            /// ([`ThreadRandom`](crate::random::ThreadRandom)).
            pub fn with_clock(clock: C) -> Self {
                Self::with_source(clock, crate::random::ThreadRandom)
            }
        }

        impl<L: Layout, C: Clock, R: RandomSource> IdScheme for $generator<L, C, R> {
            type Id = L::Id;

            #[inline]
            fn next_id(&self) -> Result<L::Id, GenerateError> {
                self.issue_at(self.clock.now_ms())
            }

            fn fill(&self, out: &mut [L::Id]) -> Result<(), GenerateError> {
                let now = self.clock.now_ms();
                for slot in out {
                    *slot = self.issue_at(now)?;
                }
                Ok(())
            }

            fn take(&self, n: usize) -> Result<Vec<L::Id>, GenerateError> {
                let now = self.clock.now_ms();
                (0..n).map(|_| self.issue_at(now)).collect()
            }

            fn info(&self) -> SchemeInfo {
                L::info()
            }
        }

        impl<L: Layout, C: fmt::Debug, R: fmt::Debug> fmt::Debug for $generator<L, C, R> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($generator))
                    .field("scheme", &L::info().name)
                    .field("clock", &self.clock)
                    .field("random", &self.random)
                    .finish_non_exhaustive()
            }
        }
    };
}

generator_impls!(TimeOrdered);
generator_impls!(AtomicTimeOrdered);

#[cfg(all(test, feature = "rand"))]
mod tests {
    use super::*;
    use crate::ManualClock;
    use crate::random::SeededRandom;

    /// A small counter, so that a full one is a few ids away (or `BITS` of them: 80 for
    /// ULID's widths, 56 random bits below the shared generator's 24-bit counter).
    #[derive(Debug)]
    struct Small<const FAIL: bool, const BITS: u32 = 26>;
    impl<const FAIL: bool, const BITS: u32> Layout for Small<FAIL, BITS> {
        type Id = (u64, u128);
        const COUNTER_BITS: u32 = BITS;
        const WHEN_FULL: WhenFull = if FAIL {
            WhenFull::Fail("the small counter")
        } else {
            WhenFull::NextMillisecond
        };
        const GUARD_BIT: bool = true;
        fn assemble(ms: u64, counter: u128) -> (u64, u128) {
            (ms, counter)
        }
        fn info() -> SchemeInfo {
            SchemeInfo::new("small", 128)
        }
    }

    #[test]
    fn a_full_counter_moves_on_or_fails_as_the_layout_says() {
        let clock = ManualClock::new(1_000);
        let max = (1 << 26) - 1;
        let moves = TimeOrdered::<Small<false>, _>::with_fixed_start(&clock, max - 1);
        assert_eq!(
            moves.take(3).unwrap(),
            [(1_000, max - 1), (1_000, max), (1_001, max - 1)]
        );
        let fails = TimeOrdered::<Small<true>, _>::with_fixed_start(&clock, max);
        assert_eq!(fails.next_id(), Ok((1_000, max)));
        assert_eq!(
            fails.next_id(),
            Err(GenerateError::exhausted("the small counter"))
        );
        clock.advance(1);
        assert_eq!(fails.next_id(), Ok((1_001, max)));
    }

    #[test]
    fn random_starts_keep_the_guard_bit_clear() {
        let clock = ManualClock::new(1_000);
        let generator =
            TimeOrdered::<Small<false>, _, _>::with_source(&clock, SeededRandom::new(1));
        for _ in 0..200 {
            let (_, counter) = generator.next_id().unwrap();
            assert!(counter < 1 << 25, "{counter:#x}");
            clock.advance(1);
        }
    }

    #[test]
    fn the_shared_generator_fills_its_counter_then_follows_the_layout() {
        let clock = ManualClock::new(2_000);
        let generator =
            AtomicTimeOrdered::<Small<true>, _, _>::with_source(&clock, SeededRandom::new(2));
        let (ms, first) = generator.next_id().unwrap();
        assert_eq!(ms, 2_000);
        // 24 counter bits above 2 random ones; the counter starts below 2^23.
        let start = first >> 2;
        assert!(start < 1 << 23);
        let mut last = (ms, first);
        for _ in start..(1 << 24) - 1 {
            let id = generator.next_id().unwrap();
            assert!(id > last);
            last = id;
        }
        assert_eq!(last.1 >> 2, (1 << 24) - 1);
        assert!(
            generator
                .next_id()
                .unwrap_err()
                .to_string()
                .contains("24-bit counter")
        );
        clock.step_back(5);
        assert!(generator.next_id().is_err(), "a clock behind does not help");
        clock.set(2_001);
        assert!(generator.next_id().unwrap() > last);
    }

    #[test]
    fn the_shared_generator_draws_its_low_bits_once_a_millisecond() {
        let clock = ManualClock::new(3_000);
        let generator =
            AtomicTimeOrdered::<Small<true, 80>, _, _>::with_source(&clock, SeededRandom::new(4));
        let low = |counter: u128| counter & ((1 << 56) - 1);
        let ids = generator.take(3).unwrap();
        // Within a millisecond the counter above counts one up and the bits below stay.
        for pair in ids.windows(2) {
            assert_eq!(pair[1].1 >> 56, (pair[0].1 >> 56) + 1, "{ids:x?}");
            assert_eq!(low(pair[1].1), low(pair[0].1), "{ids:x?}");
        }
        assert_ne!(low(ids[0].1), 0, "drawn, not the initial word");
        clock.advance(1);
        let next = generator.next_id().unwrap();
        assert_eq!(next.0, 3_001);
        assert_ne!(
            low(next.1),
            low(ids[0].1),
            "a new millisecond draws new bits"
        );
    }

    #[test]
    fn time_past_48_bits_is_an_error_in_both() {
        let clock = ManualClock::new(LAST_MS + 1);
        let want = Err(GenerateError::time_overflow(LAST_MS));
        assert_eq!(
            TimeOrdered::<Small<false>, _>::with_clock(&clock).next_id(),
            want
        );
        let shared =
            AtomicTimeOrdered::<Small<false>, _, _>::with_source(&clock, SeededRandom::new(3));
        assert_eq!(shared.next_id(), want);
    }
}
