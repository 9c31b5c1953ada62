//! [`Builder`]: one configuration, three concurrency modes.

use core::cell::Cell;
#[cfg(feature = "std")]
use std::sync::Mutex;

use idkit_core::Clock;
#[cfg(feature = "std")]
use idkit_core::{MonotonicClock, TickerClock};

use super::step::Guard;
use super::*;
use crate::error::ConfigError;
use crate::layout::{Layout, Word};
use crate::prelude::*;
use crate::sync::AtomicU64;

/// Configures and builds a generator of any of the three modes.
///
/// # Examples
///
/// ```
/// use idkit_snowflake::{RollbackPolicy, Snowflake, Twitter};
/// use idkit_core::{IdScheme, ManualClock};
///
/// let snowflake = Snowflake::builder(Twitter)
///     .field("datacenter", 1)
///     .field("worker", 3)
///     .clock(ManualClock::new(1_288_834_974_657 + 1))
///     .rollback(RollbackPolicy::FailFast)
///     .build()?;
/// let id = snowflake.next_id()?;
/// assert_eq!(id, (1 << 22) | (1 << 17) | (3 << 12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder<L, C> {
    layout: L,
    clock: C,
    fields: Vec<(String, u64)>,
    policy: RollbackPolicy,
    start: SequenceStart,
    seed: Option<u64>,
    guard: Option<Guard>,
}

#[cfg(feature = "std")]
impl<L: Layout> Builder<L, TickerClock> {
    /// A builder for `layout`, with every fixed field 0, a
    /// [`TickerClock`](idkit_core::TickerClock), the default [`RollbackPolicy`] and
    /// sequences starting at 0.
    pub fn new(layout: L) -> Self {
        Self::with_clock(layout, TickerClock::new())
    }
}

impl<L: Layout, C: Clock> Builder<L, C> {
    /// A builder for `layout` on `clock` (without `std`, the way to start one: a clock of
    /// the platform's), with every fixed field 0, the default [`RollbackPolicy`] and
    /// sequences starting at 0.
    pub fn with_clock(layout: L, clock: C) -> Self {
        Self {
            layout,
            clock,
            fields: Vec::new(),
            policy: RollbackPolicy::default(),
            start: SequenceStart::Zero,
            seed: None,
            guard: None,
        }
    }
}

impl<L: Layout, C: Clock> Builder<L, C> {
    /// Sets a fixed field (worker, datacenter, shard, machine...).
    #[must_use]
    pub fn field(mut self, name: &str, value: u64) -> Self {
        self.fields.push((name.to_owned(), value));
        self
    }

    /// Uses `clock` instead of the one given before.
    pub fn clock<C2: Clock>(self, clock: C2) -> Builder<L, C2> {
        Builder {
            layout: self.layout,
            clock,
            fields: self.fields,
            policy: self.policy,
            start: self.start,
            seed: self.seed,
            guard: None,
        }
    }

    #[cfg(feature = "std")]
    /// Puts the generator under a lease guard: it reads the guard's clock, issues only
    /// while the guard's fence is ahead (checked once per tick), and starts above the
    /// guard's high-water mark, so a clock behind the mark is handled by the rollback
    /// policy like any clock that went back. The `idkit-lease` crate makes guards.
    ///
    /// ```
    /// use idkit_snowflake::{RollbackPolicy, Snowflake, Twitter};
    /// use idkit_core::{guard::Guard, Clock, GenerateErrorKind, IdScheme};
    ///
    /// let guard = Guard::new(0);
    /// let snowflake = Snowflake::builder(Twitter).field("worker", 1).guard(guard.clone()).build()?;
    /// assert_eq!(snowflake.next_id().unwrap_err().kind(), GenerateErrorKind::Fenced);
    /// guard.open_until(guard.clock().now_ms() + 10_000);
    /// assert!(snowflake.next_id().is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn guard(self, guard: Guard) -> Builder<L, MonotonicClock> {
        Builder {
            layout: self.layout,
            clock: guard.clock(),
            fields: self.fields,
            policy: self.policy,
            start: self.start,
            seed: self.seed,
            guard: Some(guard),
        }
    }

    /// Sets the clock-rollback policy.
    #[must_use]
    pub fn rollback(mut self, policy: RollbackPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets where the sequence starts in each tick.
    #[must_use]
    pub fn sequence_start(mut self, start: SequenceStart) -> Self {
        self.start = start;
        self
    }

    /// Seeds [`SequenceStart::Random`] (default: from the operating system's randomness,
    /// through `std`'s `RandomState`; without `std`, from the clock), for reproducible
    /// tests.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    fn core(self, state_tick_bits: Option<u32>) -> Result<Core<L, C>, ConfigError> {
        let spec = *self.layout.spec();
        let mut base = 0u128;
        for (name, value) in &self.fields {
            let field = spec.fixed_field(name, *value)?;
            let mask = u128::from(field.max()) << field.shift;
            base = (base & !mask) | (u128::from(*value) << field.shift);
        }
        #[cfg(feature = "std")]
        if let Some(guard) = &self.guard {
            guard.set_tick_ms(spec.tick_ms());
            if let RollbackPolicy::Logical { max_ahead_ms } = self.policy {
                guard.set_max_ahead_ms(max_ahead_ms);
            }
        }
        let seq = spec.sequence();
        let start_below = match self.start {
            SequenceStart::Zero => 0,
            SequenceStart::Random { below } => {
                let values = seq.max().saturating_add(1);
                if below == 0 || below > values {
                    return Err(ConfigError::SequenceStart {
                        below,
                        sequence_values: values,
                    });
                }
                below
            }
        };
        // The lock-free generator packs (tick, sequence) in one u64: its ticks are limited
        // to the bits the sequence leaves free.
        let max_tick = match state_tick_bits {
            Some(bits) if bits < 64 => spec.max_tick().min((1u64 << bits) - 1),
            _ => spec.max_tick(),
        };
        let seed = self.seed.unwrap_or_else(|| random_seed(&self.clock));
        Ok(Core {
            layout: self.layout,
            clock: self.clock,
            policy: self.policy,
            // Fixed fields lie inside the word, so the base fits it.
            base: L::Id::from_u128(base).unwrap_or_default(),
            time_shift: spec.time().shift,
            time_mask: spec.time().max(),
            seq_shift: seq.shift,
            seq_bits: seq.bits,
            seq_max: seq.max(),
            // Meaningful for a 64-bit word only, where the sequence field fits.
            seq_one: 1u64.checked_shl(seq.shift).unwrap_or(0),
            seq_field: seq.max().checked_shl(seq.shift).unwrap_or(0),
            epoch_ms: spec.epoch_ms(),
            tick_ms: spec.tick_ms(),
            max_tick,
            start_below,
            seed,
            guard: self.guard,
            rollbacks: core::sync::atomic::AtomicU64::new(0),
            tick_waits: core::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Builds a single-owner generator (fastest; `Send`, not `Sync`).
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownField`] for a field the layout lacks (or `time`, or the
    /// sequence); [`ConfigError::FieldOutOfRange`] for a value too wide;
    /// [`ConfigError::SequenceStart`] for a random start range of 0 or wider than the
    /// sequence.
    pub fn build(self) -> Result<Snowflake<L, C>, ConfigError> {
        let core = self.core(None)?;
        let init = core.initial_owned();
        Ok(Snowflake {
            start_ms: Cell::new(core.tick_start(init.state.tick)),
            last: Cell::new(init.last),
            core,
        })
    }

    /// Builds a lock-free generator to share between threads.
    ///
    /// Its state is one `u64` holding the tick above the sequence, so its ticks are limited
    /// to `64 - sequence bits` bits (`2^48` ms, year 10889, for Boundary's flake); past that
    /// it reports [`GenerateErrorKind::TimeOverflow`](idkit_core::GenerateErrorKind::TimeOverflow).
    ///
    /// # Errors
    ///
    /// As [`Builder::build`].
    pub fn build_atomic(self) -> Result<AtomicSnowflake<L, C>, ConfigError> {
        let seq_bits = self.layout.spec().sequence().bits;
        let core = self.core(Some(64 - seq_bits))?;
        let init = core.initial_state();
        Ok(AtomicSnowflake {
            state: idkit_core::monotonic::CachePadded(AtomicU64::new(
                AtomicSnowflake::<L, C>::word_of(&core, init),
            )),
            core,
        })
    }

    #[cfg(feature = "std")]
    /// Builds a mutex-guarded generator to share between threads (the baseline the
    /// lock-free one is measured against).
    ///
    /// # Errors
    ///
    /// As [`Builder::build`].
    pub fn build_mutex(self) -> Result<MutexSnowflake<L, C>, ConfigError> {
        let core = self.core(None)?;
        Ok(MutexSnowflake {
            state: Mutex::new(core.initial_owned()),
            core,
        })
    }
}

/// The seed of [`SequenceStart::Random`] when none is given: from the operating system's
/// randomness, through `std`'s `RandomState`.
#[cfg(feature = "std")]
fn random_seed(_: &impl Clock) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(0x1d_u64)
}

/// Without `std` there is no randomness to read: the seed is the clock's millisecond,
/// mixed (SplitMix64's finalizer), so generators built at different times differ; give
/// [`Builder::seed`] one of the platform's randomness for more.
#[cfg(not(feature = "std"))]
fn random_seed(clock: &impl Clock) -> u64 {
    let mut z = clock.now_ms().wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
