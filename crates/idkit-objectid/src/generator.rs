//! The stateful part: a clock, the process-unique random value and the counter.

use core::cell::Cell;

use idkit_core::monotonic::{AtomicMsCounter, Step};
use idkit_core::random::RandomSource;
use idkit_core::{Clock, DefaultClock, GenerateError, IdScheme, SchemeInfo};

use crate::codec::{LAST_MS, ObjectId, ObjectIdCodec};

/// Counter values: 2^24.
const COUNTER_SPAN: u64 = 1 << 24;

/// The counter and how many ids the current second has had.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    /// The second of the last id.
    secs: u64,
    /// The counter of the last id.
    counter: u32,
    /// Ids issued within `secs`.
    in_second: u64,
}

/// The process-unique value (40 bits) and the first counter (24 bits) from `random`.
fn seed(random: &impl RandomSource) -> Result<(u64, u32), GenerateError> {
    let bits = random.u128()?;
    Ok((
        u64::try_from(bits & 0xff_ffff_ffff).unwrap_or(0),
        u32::try_from((bits >> 64) & 0xff_ffff).unwrap_or(0),
    ))
}

/// Both generators' constructors from a random source (`with_parts` is each one's own).
macro_rules! constructors {
    ($generator:ident) => {
        #[cfg(feature = "std")]
        impl $generator {
            /// A generator on a [`TickerClock`](idkit_core::TickerClock), its process-unique
            /// value and first counter
            /// from this thread's random source.
            ///
            /// # Panics
            ///
            /// Never in practice: only if the operating system's random source fails when
            /// the thread's generator is first seeded (use
            /// [`with_source`](Self::with_source) to handle that as an error).
            pub fn new() -> Self {
                Self::with_source(
                    idkit_core::TickerClock::new(),
                    &idkit_core::random::ThreadRandom,
                )
                .unwrap_or_else(|e| panic!("cannot seed the ObjectId generator: {e}"))
            }
        }

        #[cfg(feature = "std")]
        impl Default for $generator {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<C: Clock> $generator<C> {
            /// A generator on `clock` whose process-unique value and first counter come from
            /// `random` (a seeded source and a manual clock give the same ids every run).
            ///
            /// # Errors
            ///
            /// [`GenerateErrorKind::Unavailable`](idkit_core::GenerateErrorKind::Unavailable)
            /// when `random` cannot give bits.
            pub fn with_source(
                clock: C,
                random: &impl RandomSource,
            ) -> Result<Self, GenerateError> {
                let (value, first_counter) = seed(random)?;
                Ok(Self::with_parts(clock, value, first_counter))
            }
        }
    };
}

/// ObjectIds as the BSON ObjectId specification says: the 5-byte random value drawn once
/// when the generator is made, the 3-byte counter started at a random value and increased
/// by one for every id, wrapping from `0xffffff` to `0`.
///
/// **No duplicates.** The spec notes that more than 2^24 ids in one second of one process
/// would repeat one; this generator counts the ids of each second and, at 2^24, waits for
/// the next second instead. When the clock steps back it stays on its last second (ids keep
/// that timestamp) and goes on counting there, so it never repeats an id; if that second's
/// 2^24 ids are used up while the clock is still behind, the call fails with
/// [`GenerateErrorKind::ClockMovedBackwards`](idkit_core::GenerateErrorKind::ClockMovedBackwards).
///
/// **Order.** Ids sort by second; within a second they increase except where the counter
/// wraps, once per 2^24 ids (the spec's rule, kept for compatibility).
///
/// Single-owner (`Send`, not `Sync`); to share one between threads (one per process, as the
/// spec intends), use [`AtomicObjectIdGenerator`] (lock-free).
///
/// # Examples
///
/// ```
/// use idkit_objectid::{IdScheme, ObjectIdGenerator};
/// let generator = ObjectIdGenerator::new();
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert_eq!(a.random(), b.random());
/// assert_eq!(b.counter(), (a.counter() + 1) % (1 << 24));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug)]
pub struct ObjectIdGenerator<C = DefaultClock> {
    clock: C,
    random: u64,
    state: Cell<State>,
}

constructors!(ObjectIdGenerator);

impl<C: Clock> ObjectIdGenerator<C> {
    /// A generator with this random value (low 40 bits) whose first id has counter
    /// `first_counter` (low 24 bits).
    pub fn with_parts(clock: C, random: u64, first_counter: u32) -> Self {
        let counter = first_counter & 0xff_ffff;
        Self {
            clock,
            random: random & 0xff_ffff_ffff,
            state: Cell::new(State {
                secs: 0,
                // The counter before the first id.
                counter: counter.wrapping_sub(1) & 0xff_ffff,
                in_second: 0,
            }),
        }
    }

    fn issue_at(&self, now_ms: u64) -> Result<ObjectId, GenerateError> {
        if now_ms > LAST_MS {
            return Err(GenerateError::time_overflow(LAST_MS));
        }
        let mut state = self.state.get();
        let mut secs = (now_ms / 1000).max(state.secs);
        if secs == state.secs && state.in_second >= COUNTER_SPAN {
            // 2^24 ids this second: one more would repeat the first. Wait for the next,
            // unless the clock is behind this second (it could be behind by hours).
            let target = (state.secs + 1) * 1000;
            if now_ms / 1000 < state.secs {
                return Err(GenerateError::clock_moved_backwards(target - now_ms, 0));
            }
            let now = idkit_core::nonblocking::wait_for(&self.clock, target)?;
            if now < target {
                return Err(GenerateError::clock_moved_backwards(target - now, 0));
            }
            secs = now / 1000;
        }
        if secs > state.secs {
            state.secs = secs;
            state.in_second = 0;
        }
        state.counter = (state.counter + 1) & 0xff_ffff;
        state.in_second += 1;
        self.state.set(state);
        // secs <= LAST_MS / 1000 = u32::MAX, checked above.
        let secs32 = u32::try_from(secs).unwrap_or(u32::MAX);
        Ok(ObjectId::from_parts(secs32, self.random, state.counter))
    }
}

impl<C: Clock> IdScheme for ObjectIdGenerator<C> {
    type Id = ObjectId;

    fn next_id(&self) -> Result<ObjectId, GenerateError> {
        self.issue_at(self.clock.now_ms())
    }

    fn info(&self) -> SchemeInfo {
        ObjectIdCodec.info()
    }
}

/// ObjectIds from one generator shared by threads, without a lock: `Sync`, never a
/// duplicate.
///
/// The second and the count of ids issued in it live in one atomic word advanced by
/// compare-and-swap ([`AtomicMsCounter`], counting seconds); an id's counter is the
/// process's random starting value plus that count, so within a second the counters are
/// consecutive (wrapping past `0xffffff`) and each second starts again from the random
/// value. As with [`ObjectIdGenerator`], 2^24 ids in one second wait for the next, and a
/// clock that steps back keeps the last second.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use idkit_objectid::{AtomicObjectIdGenerator, IdScheme};
///
/// let generator = Arc::new(AtomicObjectIdGenerator::new());
/// let other = Arc::clone(&generator);
/// let theirs = std::thread::spawn(move || other.take(100)).join().unwrap()?;
/// let ours = generator.take(100)?;
/// assert!(ours.iter().all(|id| !theirs.contains(id)));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug)]
pub struct AtomicObjectIdGenerator<C = DefaultClock> {
    clock: C,
    random: u64,
    first_counter: u32,
    state: AtomicMsCounter,
}

constructors!(AtomicObjectIdGenerator);

impl<C: Clock> AtomicObjectIdGenerator<C> {
    /// A generator with a fixed process-unique value (40 bits kept) and first counter
    /// (24 bits kept), for tests and vectors.
    pub fn with_parts(clock: C, random: u64, first_counter: u32) -> Self {
        let base = clock.now_ms() / 1000;
        Self {
            clock,
            random: random & 0xff_ffff_ffff,
            first_counter: first_counter & 0xff_ffff,
            state: AtomicMsCounter::new(base, 24),
        }
    }

    fn issue_at(&self, now_ms: u64) -> Result<ObjectId, GenerateError> {
        if now_ms > LAST_MS {
            return Err(GenerateError::time_overflow(LAST_MS));
        }
        let mut now = now_ms;
        loop {
            match self.state.step(now / 1000, || Ok(0))? {
                Step::Issued { tick, counter } => {
                    // tick <= LAST_MS / 1000 = u32::MAX, checked above.
                    let secs = u32::try_from(tick).unwrap_or(u32::MAX);
                    let counter = (self
                        .first_counter
                        .wrapping_add(u32::try_from(counter).unwrap_or(0)))
                        & 0xff_ffff;
                    return Ok(ObjectId::from_parts(secs, self.random, counter));
                }
                // 2^24 ids this second: wait for the next, unless the clock is behind
                // this second (it could be behind by hours).
                Step::Exhausted { tick } => {
                    let target = (tick + 1) * 1000;
                    if now / 1000 < tick {
                        return Err(GenerateError::clock_moved_backwards(target - now, 0));
                    }
                    now = idkit_core::nonblocking::wait_for(&self.clock, target)?;
                    if now < target {
                        return Err(GenerateError::clock_moved_backwards(target - now, 0));
                    }
                }
            }
        }
    }
}

impl<C: Clock> IdScheme for AtomicObjectIdGenerator<C> {
    type Id = ObjectId;

    #[inline]
    fn next_id(&self) -> Result<ObjectId, GenerateError> {
        self.issue_at(self.clock.now_ms())
    }

    fn info(&self) -> SchemeInfo {
        ObjectIdCodec.info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::ManualClock;

    /// The counters of the next three ids `next` makes.
    fn three_counters(next: impl Fn() -> ObjectId) -> [u32; 3] {
        [(); 3].map(|()| next().counter())
    }

    #[test]
    fn the_shared_generator_counts_within_a_second_and_waits_after_2_pow_24() {
        let clock = ManualClock::new(5_000_500);
        let generator = AtomicObjectIdGenerator::with_parts(&clock, 1, 0xff_fffe);
        let counters = three_counters(|| generator.next_id().unwrap());
        assert_eq!(counters, [0xff_fffe, 0xff_ffff, 0]);
        let mut seen = std::collections::HashSet::new();
        for _ in 3..COUNTER_SPAN {
            let id = generator.next_id().unwrap();
            assert_eq!(id.timestamp_secs(), 5_000);
            assert!(seen.insert(id.counter()));
        }
        assert_eq!(clock.waits(), 0);
        let next = generator.next_id().unwrap();
        assert_eq!(next.timestamp_secs(), 5_001, "moved to the next second");
        assert_eq!(clock.waits(), 1);
        assert_eq!(
            next.counter(),
            0xff_fffe,
            "each second starts from the first counter"
        );
    }

    #[test]
    fn the_counter_wraps_from_the_top_to_zero() {
        let clock = ManualClock::new(1_000_000);
        let generator = ObjectIdGenerator::with_parts(&clock, 0xab, 0xff_fffe);
        let counters = three_counters(|| generator.next_id().unwrap());
        assert_eq!(counters, [0xff_fffe, 0xff_ffff, 0]);
    }

    #[test]
    fn a_second_full_of_ids_waits_for_the_next_instead_of_repeating() {
        let clock = ManualClock::new(5_000_500);
        let generator = ObjectIdGenerator::with_parts(&clock, 1, 0);
        let mut state = generator.state.get();
        state.secs = 5_000;
        state.in_second = COUNTER_SPAN - 1;
        state.counter = 0xff_fffe;
        generator.state.set(state);
        let last_of_second = generator.next_id().unwrap();
        assert_eq!(last_of_second.timestamp_secs(), 5_000);
        let next = generator.next_id().unwrap();
        assert_eq!(next.timestamp_secs(), 5_001, "moved to the next second");
        assert_eq!(clock.waits(), 1);
        assert_ne!(next, last_of_second);
    }

    #[test]
    fn a_clock_stepped_back_keeps_the_last_second() {
        let clock = ManualClock::new(9_000_000);
        let generator = ObjectIdGenerator::with_parts(&clock, 1, 10);
        let a = generator.next_id().unwrap();
        clock.step_back(10_000);
        let b = generator.next_id().unwrap();
        assert_eq!(b.timestamp_secs(), a.timestamp_secs());
        assert!(b > a);
    }

    #[test]
    fn time_past_2106_is_an_error() {
        let clock = ManualClock::new(LAST_MS + 1);
        assert_eq!(
            ObjectIdGenerator::with_parts(&clock, 0, 0).next_id(),
            Err(GenerateError::time_overflow(LAST_MS))
        );
    }
}
