//! The stateful part: a clock, a random source and the millisecond-plus-counter state.

use alloc::format;
use alloc::string::String;

use core::cell::Cell;
use core::fmt;

use idkit_core::monotonic::{AtomicMsCounter, MsCounter, Step};
use idkit_core::random::{DefaultRandom, RandomSource};
use idkit_core::{Clock, DefaultClock, GenerateError, IdScheme, SchemeInfo};

use crate::codec::{EPOCH_MS, LAST_MS, RANDOM_BITS, Tsid, TsidCodec};

/// Node bits when none are given: 1,024 nodes, a 12-bit counter (tsid-creator's default).
pub const DEFAULT_NODE_BITS: u32 = 10;
/// The most node bits: the counter keeps at least 2.
pub const MAX_NODE_BITS: u32 = 20;

/// How much longer than the clock's lag a generator waits for the next millisecond before
/// it reports the clock as moved backwards (as the Snowflake generators' default policy).
const WAIT_GRACE_MS: u64 = 5;

/// When a wait for the next millisecond began, in real time (`std`'s `Instant`). Without
/// `std` there is no real time: the clock's own wait, which returns only once the clock gets
/// there, bounds the loop, and no time has passed by this measure.
#[derive(Clone, Copy)]
struct Started(#[cfg(feature = "std")] std::time::Instant);

impl Started {
    #[cfg(feature = "std")]
    fn now() -> Self {
        Self(std::time::Instant::now())
    }

    #[cfg(not(feature = "std"))]
    fn now() -> Self {
        Self()
    }
}

#[cfg(feature = "std")]
fn elapsed_ms(since: Started) -> u64 {
    u64::try_from(since.0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(not(feature = "std"))]
fn elapsed_ms(_: Started) -> u64 {
    0
}

/// What both generators share: `with_node`, `with_parts` (given how the generator's state
/// starts from its parts), `codec` and [`IdScheme`].
macro_rules! generators {
    ($generator:ident, $state:expr) => {
        #[cfg(feature = "std")]
        impl $generator {
            /// A generator for `node` of `node_bits` bits, on a
            /// [`TickerClock`](idkit_core::TickerClock) and the thread's random source.
            ///
            /// # Errors
            ///
            /// [`TsidConfigError`] when `node_bits` is above [`MAX_NODE_BITS`] or `node`
            /// does not fit them.
            pub fn with_node(node_bits: u32, node: u64) -> Result<Self, TsidConfigError> {
                let (clock, random) = (
                    idkit_core::TickerClock::new(),
                    idkit_core::random::ThreadRandom,
                );
                Self::with_parts(clock, random, node_bits, node)
            }
        }

        impl<C: Clock, R: RandomSource> $generator<C, R> {
            /// A generator on `clock` drawing counter starts from `random` (a seeded source
            /// and a manual clock give the same ids every run).
            ///
            /// # Errors
            ///
            /// As `with_node`.
            pub fn with_parts(
                clock: C,
                random: R,
                node_bits: u32,
                node: u64,
            ) -> Result<Self, TsidConfigError> {
                let parts = Parts::new(clock, random, node_bits, node)?;
                let state = $state(&parts);
                Ok(Self { parts, state })
            }

            /// The codec for this generator's node width.
            pub fn codec(&self) -> TsidCodec {
                self.parts.codec
            }
        }

        impl<C: Clock, R: RandomSource> IdScheme for $generator<C, R> {
            type Id = Tsid;

            #[inline]
            fn next_id(&self) -> Result<Tsid, GenerateError> {
                self.issue_at(self.parts.clock.now_ms())
            }

            fn info(&self) -> SchemeInfo {
                self.parts.codec.info()
            }
        }
    };
}

/// Why a generator could not be built: node bits above [`MAX_NODE_BITS`], or a node that
/// does not fit them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsidConfigError(String);

impl fmt::Display for TsidConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for TsidConfigError {}

/// Monotonic TSIDs for one node.
///
/// In a new millisecond the counter starts at a random value in the lower half of its
/// range (so at least half the range is left for that millisecond); within the same
/// millisecond, and when the clock steps back, it counts on from the last id, so ids
/// strictly increase. When the counter runs out within a millisecond the generator waits
/// for the clock's next millisecond, as tsid-creator does; if the clock does not get there
/// (it was stepped back), the call fails with [`GenerateErrorKind::ClockMovedBackwards`](idkit_core::GenerateErrorKind::ClockMovedBackwards): never
/// a wrap, never a duplicate.
///
/// Single-owner (`Send`, not `Sync`); to share one between threads, use
/// [`AtomicTsidGenerator`] (lock-free).
///
/// # Examples
///
/// ```
/// use idkit_tsid::{IdScheme, TsidGenerator};
/// let generator = TsidGenerator::with_node(10, 7)?;
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(b > a);
/// assert_eq!(a.to_string().len(), 13);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TsidGenerator<C = DefaultClock, R = DefaultRandom> {
    parts: Parts<C, R>,
    state: Cell<MsCounter>,
}

/// What both generators hold beside their state: the clock, the random source, the codec
/// for the node's width and the node.
#[derive(Debug)]
struct Parts<C, R> {
    clock: C,
    random: R,
    codec: TsidCodec,
    node: u64,
}

impl<C: Clock, R> Parts<C, R> {
    fn new(clock: C, random: R, node_bits: u32, node: u64) -> Result<Self, TsidConfigError> {
        let codec = node_codec(node_bits, node)?;
        Ok(Self {
            clock,
            random,
            codec,
            node,
        })
    }

    fn counter_bits(&self) -> u32 {
        RANDOM_BITS - self.codec.node_bits()
    }
}

impl<C: Clock, R: RandomSource> TsidGenerator<C, R> {
    fn issue_at(&self, now: u64) -> Result<Tsid, GenerateError> {
        if now > LAST_MS {
            return Err(GenerateError::time_overflow(LAST_MS));
        }
        if now < EPOCH_MS {
            return Err(GenerateError::before_epoch(now, EPOCH_MS));
        }
        let counter_max = (1u128 << self.parts.counter_bits()) - 1;
        // Lower half: the rollover guard, as UUIDv7's.
        let fresh = || Ok(self.parts.random.rare_u128()? & (counter_max >> 1));
        let mut state = self.state.get();
        let (ms, counter) = match state.step(now, counter_max, fresh)? {
            Some(next) => next,
            None => {
                // The counter ran out: wait for the next millisecond. The clock's wait is
                // bounded by real time, so re-read until the clock gets there, for at most
                // how far behind it is plus a grace of WAIT_GRACE_MS.
                let last = state.last_ms;
                let started = Started::now();
                let mut now = self.parts.clock.now_ms();
                let budget = last.saturating_sub(now) + 1 + WAIT_GRACE_MS;
                while now <= last && elapsed_ms(started) < budget {
                    now = idkit_core::nonblocking::wait_for(&self.parts.clock, last + 1)?;
                }
                if now <= last {
                    return Err(GenerateError::clock_moved_backwards(
                        last + 1 - now,
                        elapsed_ms(started),
                    ));
                }
                match state.step(now, counter_max, fresh)? {
                    Some(next) => next,
                    // Not reached: a later millisecond always takes a fresh counter.
                    None => {
                        return Err(GenerateError::exhausted("the counter"));
                    }
                }
            }
        };
        self.state.set(state);
        let counter = u64::try_from(counter).unwrap_or(0);
        Ok(Tsid::from_parts(
            ms - EPOCH_MS,
            (self.parts.node << self.parts.counter_bits()) | counter,
        ))
    }
}

generators!(TsidGenerator, |_| Cell::new(MsCounter::default()));

/// The codec for `node_bits`, once `node` is known to fit them.
fn node_codec(node_bits: u32, node: u64) -> Result<TsidCodec, TsidConfigError> {
    if node_bits > MAX_NODE_BITS {
        return Err(TsidConfigError(format!(
            "node bits out of range: expected 0 to {MAX_NODE_BITS}, found {node_bits}"
        )));
    }
    let max = (1u64 << node_bits) - 1;
    if node > max {
        return Err(TsidConfigError(format!(
            "field out of range: node must be at most {max}, found {node}"
        )));
    }
    Ok(TsidCodec::with_node_bits(node_bits))
}

/// TSIDs from one generator shared by threads, without a lock: `Sync`, strictly increasing
/// per generator (so per thread), never a duplicate.
///
/// The millisecond and the counter (the bits after the node) live in one atomic word
/// advanced by compare-and-swap ([`AtomicMsCounter`]), with [`TsidGenerator`]'s rules: in a
/// new millisecond the counter starts at a random value with its top bit clear; a full
/// counter waits for the next millisecond; a clock that steps back keeps the last one.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use idkit_tsid::{AtomicTsidGenerator, IdScheme};
///
/// let generator = Arc::new(AtomicTsidGenerator::with_node(10, 7)?);
/// let other = Arc::clone(&generator);
/// let theirs = std::thread::spawn(move || other.take(100)).join().unwrap()?;
/// let ours = generator.take(100)?;
/// assert!(ours.windows(2).all(|w| w[0] < w[1]));
/// assert!(ours.iter().all(|id| !theirs.contains(id)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicTsidGenerator<C = DefaultClock, R = DefaultRandom> {
    parts: Parts<C, R>,
    state: AtomicMsCounter,
}

impl<C: Clock, R: RandomSource> AtomicTsidGenerator<C, R> {
    fn issue_at(&self, mut now: u64) -> Result<Tsid, GenerateError> {
        let counter_bits = self.parts.counter_bits();
        let fresh = || {
            let r = self.parts.random.u128()? & ((1u128 << (counter_bits - 1)) - 1);
            Ok(u64::try_from(r).unwrap_or(0))
        };
        let started = Started::now();
        loop {
            if now > LAST_MS {
                return Err(GenerateError::time_overflow(LAST_MS));
            }
            if now < EPOCH_MS {
                return Err(GenerateError::before_epoch(now, EPOCH_MS));
            }
            match self.state.step(now, fresh)? {
                Step::Issued { tick, counter } => {
                    return Ok(Tsid::from_parts(
                        tick - EPOCH_MS,
                        (self.parts.node << counter_bits) | counter,
                    ));
                }
                // A full counter: wait for the next millisecond, as the single-owner
                // generator does, within the same budget.
                Step::Exhausted { tick } => {
                    now = idkit_core::nonblocking::wait_for(&self.parts.clock, tick + 1)?;
                    let budget = tick.saturating_sub(now) + 1 + WAIT_GRACE_MS;
                    if now <= tick && elapsed_ms(started) >= budget {
                        return Err(GenerateError::clock_moved_backwards(
                            tick + 1 - now,
                            elapsed_ms(started),
                        ));
                    }
                }
            }
        }
    }
}

generators!(AtomicTsidGenerator, |parts: &Parts<C, R>| {
    AtomicMsCounter::new(parts.clock.now_ms(), parts.counter_bits())
});

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::ManualClock;
    use idkit_core::random::SeededRandom;

    /// 20 node bits leave a 2-bit counter: at most 4 ids per millisecond, so 40 ids wait
    /// for the clock at least 10 times, in order, every one on node 5.
    fn waits_past_a_full_counter<G: IdScheme<Id = Tsid>>(generator: &G, clock: &ManualClock) {
        let ids = generator.take(40).unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(clock.waits() >= 10, "{} waits", clock.waits());
        assert!(ids.iter().all(|id| id.random() >> 2 == 5));
    }

    #[test]
    fn the_shared_generator_waits_past_a_full_counter() {
        let clock = ManualClock::new(EPOCH_MS + 1_000);
        let generator =
            AtomicTsidGenerator::with_parts(&clock, SeededRandom::new(1), 20, 5).unwrap();
        waits_past_a_full_counter(&generator, &clock);
    }

    #[test]
    fn a_full_counter_waits_for_the_next_millisecond() {
        let clock = ManualClock::new(EPOCH_MS + 1_000);
        let generator = TsidGenerator::with_parts(&clock, SeededRandom::new(1), 20, 5).unwrap();
        waits_past_a_full_counter(&generator, &clock);
    }

    #[test]
    fn a_clock_stepped_back_counts_on_then_refuses_rather_than_repeat() {
        let clock = ManualClock::new(EPOCH_MS + 5_000);
        let generator = TsidGenerator::with_parts(&clock, SeededRandom::new(2), 20, 1).unwrap();
        let first = generator.next_id().unwrap();
        clock.step_back(1_000);
        let mut last = first;
        // Counting on within the last millisecond until the counter runs out; then the
        // manual clock's wait moves it to the next millisecond, still above `first`.
        for _ in 0..8 {
            let next = generator.next_id().unwrap();
            assert!(next > last);
            last = next;
        }
    }

    #[test]
    fn time_bounds_are_errors() {
        let before = ManualClock::new(EPOCH_MS - 1);
        assert_eq!(
            TsidGenerator::with_parts(&before, idkit_core::random::ThreadRandom, 10, 0)
                .unwrap()
                .next_id()
                .unwrap_err()
                .kind(),
            idkit_core::GenerateErrorKind::BeforeEpoch
        );
        let after = ManualClock::new(LAST_MS + 1);
        assert_eq!(
            TsidGenerator::with_parts(&after, idkit_core::random::ThreadRandom, 10, 0)
                .unwrap()
                .next_id(),
            Err(GenerateError::time_overflow(LAST_MS))
        );
    }

    #[test]
    fn configuration_is_checked() {
        assert!(TsidGenerator::with_node(21, 0).is_err());
        assert_eq!(
            TsidGenerator::with_node(4, 16).unwrap_err().to_string(),
            "field out of range: node must be at most 15, found 16"
        );
        assert!(TsidGenerator::with_node(0, 0).is_ok());
        assert!(TsidGenerator::with_node(0, 1).is_err());
    }
}
