//! The stateful part: a clock, a (tick, sequence) state and a rollback policy around a
//! [`Layout`]. Three concurrency modes share one decision function, [`Core::step`], so they
//! issue ids under the same rules.

use core::cell::Cell;
use core::fmt;
use std::sync::Mutex;

use idkit_core::{Clock, GenerateError, GeneratorStats, IdScheme, MonotonicClock, SchemeInfo};

use crate::error::ConfigError;
use crate::layout::{FieldKind, Layout, Word};
use crate::sync::{AtomicU64, Ordering};

/// What a generator does when the clock reads earlier than the last tick it used.
///
/// Whatever the policy, a generator never issues a duplicate or an id smaller than one it
/// issued before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "policy"))]
pub enum RollbackPolicy {
    /// Fail at once with [`GenerateErrorKind::ClockMovedBackwards`](idkit_core::GenerateErrorKind::ClockMovedBackwards) saying how far back the clock
    /// went (Twitter's original behaviour).
    FailFast,
    /// Wait for the clock to catch up when it is at most `max_ms` behind; fail when it is
    /// further behind, or still behind after waiting `max_ms` in all (Meituan Leaf waits up
    /// to 5 ms).
    Wait {
        /// Longest total wait, in milliseconds.
        max_ms: u64,
    },
    /// Keep issuing from the last tick used; when its sequence runs out, borrow the next
    /// tick even though the clock has not reached it, as long as the generator stays at most
    /// `max_ahead_ms` ahead of the clock. Past that, wait for the clock if one tick of
    /// waiting is enough, else fail with [`GenerateErrorKind::AheadLimit`](idkit_core::GenerateErrorKind::AheadLimit). The same borrowing
    /// replaces waiting when the sequence runs out on a healthy clock.
    Logical {
        /// How far ahead of the clock ids may run, in milliseconds.
        max_ahead_ms: u64,
    },
}

impl Default for RollbackPolicy {
    /// `Wait { max_ms: 5 }`: absorbs the small steps NTP makes without failing, and fails
    /// fast on a large step instead of blocking.
    fn default() -> Self {
        Self::Wait { max_ms: 5 }
    }
}

/// Where the sequence starts in each new tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SequenceStart {
    /// At 0: at low traffic, most ids end in sequence 0 (even, for layouts whose sequence
    /// is at the bottom), which skews `id % n` sharding.
    #[default]
    Zero,
    /// At a pseudo-random value in `0..below`, derived from the tick and a per-generator
    /// seed (Leaf's fix for all-even ids). Cost: one hash per new tick (a few ns), and a
    /// tick then holds `below / 2` fewer ids on average, lowering the cap by that much.
    Random {
        /// Exclusive upper bound of the start value.
        below: u64,
    },
}

/// What [`Core::step`] decided for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Issue `(tick, seq)`; `room` more sequence values follow it in the same tick.
    Issue { tick: u64, seq: u64, room: u64 },
    /// Wait until the clock reads this Unix ms, then try again.
    Wait { until_ms: u64 },
}

/// The state a generator keeps between ids: the last tick used and the last sequence value
/// issued in it. The initial state (tick 0, sequence full) makes the first id use the
/// clock's tick (tick 0 itself is only reachable through `compose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) tick: u64,
    pub(crate) seq: u64,
}

/// The state of a generator that one caller owns at a time (single-owner, mutex): the
/// shared [`State`] plus the last id, from which the next one in the same tick is one add.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owned<Id> {
    pub(crate) state: State,
    pub(crate) last: Id,
}

/// Everything about a generator except its state: the layout, clock, policy and the values
/// precomputed from them.
pub(crate) struct Core<L: Layout, C> {
    layout: L,
    clock: C,
    policy: RollbackPolicy,
    base: L::Id,
    time_shift: u32,
    pub(crate) seq_shift: u32,
    pub(crate) seq_bits: u32,
    pub(crate) seq_max: u64,
    epoch_ms: u64,
    tick_ms: u64,
    max_tick: u64,
    start_below: u64,
    seed: u64,
    // Counters for `IdScheme::stats`, touched only on the cold path. Plain std atomics even
    // under loom: they never decide an id.
    rollbacks: std::sync::atomic::AtomicU64,
    tick_waits: std::sync::atomic::AtomicU64,
}

impl<L: Layout, C: fmt::Debug> fmt::Debug for Core<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snowflake")
            .field("layout", &self.layout.spec().name())
            .field("base", &self.base)
            .field("clock", &self.clock)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<L: Layout, C: Clock> Core<L, C> {
    pub(crate) fn initial_state(&self) -> State {
        State {
            tick: 0,
            seq: self.seq_max,
        }
    }

    pub(crate) fn initial_owned(&self) -> Owned<L::Id> {
        Owned {
            state: self.initial_state(),
            last: L::Id::default(),
        }
    }

    #[inline(always)]
    fn tick_of(&self, now_ms: u64) -> Result<u64, GenerateError> {
        let Some(since) = now_ms.checked_sub(self.epoch_ms) else {
            return Err(self.before_epoch(now_ms));
        };
        // Skip the division for the common 1 ms tick: it is the most expensive
        // instruction on the hot path otherwise.
        let tick = if self.tick_ms == 1 {
            since
        } else {
            since / self.tick_ms
        };
        if tick > self.max_tick {
            return Err(self.overflow());
        }
        Ok(tick)
    }

    #[cold]
    fn before_epoch(&self, now_ms: u64) -> GenerateError {
        GenerateError::before_epoch(now_ms, self.epoch_ms)
    }

    #[cold]
    fn overflow(&self) -> GenerateError {
        GenerateError::time_overflow(self.layout.spec().last_ms().unwrap_or(u64::MAX))
    }

    fn tick_start(&self, tick: u64) -> u64 {
        // tick <= max_tick, whose start fits u64 for every layout that passes validation
        // with a u64 clock; saturate rather than wrap for exotic custom layouts.
        tick.saturating_mul(self.tick_ms)
            .saturating_add(self.epoch_ms)
    }

    #[inline(always)]
    fn start_seq(&self, tick: u64) -> u64 {
        if self.start_below == 0 {
            return 0;
        }
        // SplitMix64 finaliser: a stateless hash, so the lock-free generator needs no
        // shared random state and every mode picks the same start for the same tick.
        let mut z = tick ^ self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % self.start_below
    }

    #[inline(always)]
    fn fresh(&self, tick: u64) -> Step {
        let seq = self.start_seq(tick);
        Step::Issue {
            tick,
            seq,
            room: self.seq_max - seq,
        }
    }

    /// Decides the next id from the state and a clock reading. Pure: the callers own the
    /// state, the waiting and the atomicity. `waited_ms` is how long this call has already
    /// waited for a rolled-back clock.
    #[inline(always)]
    pub(crate) fn step(
        &self,
        state: State,
        now_ms: u64,
        waited_ms: u64,
    ) -> Result<Step, GenerateError> {
        let now = self.tick_of(now_ms)?;
        let last = state.tick;
        if now > last {
            return Ok(self.fresh(now));
        }
        // The common case, the clock still in the last tick with sequence left, first.
        if now == last && state.seq < self.seq_max {
            return Ok(Step::Issue {
                tick: last,
                seq: state.seq + 1,
                room: self.seq_max - state.seq - 1,
            });
        }
        self.step_slow(state, now, now_ms, waited_ms)
    }

    /// Rollback and exhaustion: everything but the two common cases of [`Core::step`].
    #[cold]
    #[inline(never)]
    fn step_slow(
        &self,
        state: State,
        now: u64,
        now_ms: u64,
        waited_ms: u64,
    ) -> Result<Step, GenerateError> {
        let last = state.tick;
        let behind = now < last;
        if behind {
            self.rollbacks
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let behind_ms = self.tick_start(last).saturating_sub(now_ms);
            match self.policy {
                RollbackPolicy::FailFast => {
                    return Err(GenerateError::clock_moved_backwards(behind_ms, waited_ms));
                }
                RollbackPolicy::Wait { max_ms } => {
                    if waited_ms + behind_ms > max_ms {
                        return Err(GenerateError::clock_moved_backwards(behind_ms, waited_ms));
                    }
                    return Ok(Step::Wait {
                        until_ms: self.tick_start(last),
                    });
                }
                RollbackPolicy::Logical { .. } => {}
            }
        }
        // The clock is at the last tick (or behind it, under the logical policy).
        if state.seq < self.seq_max {
            return Ok(Step::Issue {
                tick: last,
                seq: state.seq + 1,
                room: self.seq_max - state.seq - 1,
            });
        }
        // Sequence exhausted in the last tick.
        let next = last.checked_add(1).filter(|&t| t <= self.max_tick);
        let Some(next) = next else {
            return Err(self.overflow());
        };
        match self.policy {
            RollbackPolicy::Logical { max_ahead_ms } => {
                let ahead_ms = self.tick_start(next).saturating_sub(now_ms);
                if ahead_ms <= max_ahead_ms {
                    return Ok(self.fresh(next));
                }
                // Waiting one tick brings a healthy clock within the bound; a clock that
                // is further behind would block for as long as it went back, so fail.
                if ahead_ms - max_ahead_ms <= self.tick_ms {
                    return Ok(Step::Wait {
                        until_ms: self.tick_start(next) - max_ahead_ms,
                    });
                }
                Err(GenerateError::ahead_limit(ahead_ms, max_ahead_ms))
            }
            _ => {
                self.tick_waits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(Step::Wait {
                    until_ms: self.tick_start(next),
                })
            }
        }
    }

    #[inline]
    pub(crate) fn id(&self, tick: u64, seq: u64) -> L::Id {
        L::Id::pack(self.base, tick, self.time_shift, seq, self.seq_shift)
    }

    /// The fast path, the case [`Core::step`] also checks first: true when the clock is
    /// still in tick `tick` and the sequence `seq` has room, so the next id is the last one
    /// with its sequence field one higher (no carry can leave a field that is not full).
    #[inline(always)]
    pub(crate) fn same_tick_with_room(&self, now_ms: u64, tick: u64, seq: u64) -> bool {
        let Some(since) = now_ms.checked_sub(self.epoch_ms) else {
            return false;
        };
        let now = if self.tick_ms == 1 {
            since
        } else {
            since / self.tick_ms
        };
        now == tick && seq < self.seq_max
    }

    /// Issues one id against a state the caller owns exclusively.
    #[inline(always)]
    pub(crate) fn next(&self, owned: &mut Owned<L::Id>) -> Result<L::Id, GenerateError> {
        let now = self.clock.now_ms();
        if self.same_tick_with_room(now, owned.state.tick, owned.state.seq) {
            owned.state.seq += 1;
            owned.last = owned.last.bump(self.seq_shift);
            return Ok(owned.last);
        }
        self.next_slow(owned, now)
    }

    #[inline(never)]
    pub(crate) fn next_slow(
        &self,
        owned: &mut Owned<L::Id>,
        mut now: u64,
    ) -> Result<L::Id, GenerateError> {
        let mut waited = 0;
        loop {
            match self.step(owned.state, now, waited)? {
                Step::Issue { tick, seq, .. } => {
                    owned.state = State { tick, seq };
                    owned.last = self.id(tick, seq);
                    return Ok(owned.last);
                }
                Step::Wait { until_ms } => waited += self.wait(now, until_ms),
            }
            now = self.clock.now_ms();
        }
    }

    /// Fills `out` against a state the caller owns exclusively, a run of sequence numbers
    /// at a time.
    pub(crate) fn fill(
        &self,
        owned: &mut Owned<L::Id>,
        out: &mut [L::Id],
    ) -> Result<(), GenerateError> {
        let mut done = 0;
        let mut waited = 0;
        while done < out.len() {
            let now = self.clock.now_ms();
            match self.step(owned.state, now, waited)? {
                Step::Issue { tick, seq, room } => {
                    let run = self.run_len(room, out.len() - done);
                    for (slot, s) in out[done..done + run].iter_mut().zip(seq..) {
                        *slot = self.id(tick, s);
                    }
                    owned.state = State {
                        tick,
                        seq: seq + run as u64 - 1,
                    };
                    owned.last = out[done + run - 1];
                    done += run;
                }
                Step::Wait { until_ms } => waited += self.wait(now, until_ms),
            }
        }
        Ok(())
    }

    /// Ids to take from a tick with `room` values left after the first, for `wanted` ids.
    #[inline]
    pub(crate) fn run_len(&self, room: u64, wanted: usize) -> usize {
        usize::try_from(room.saturating_add(1))
            .unwrap_or(usize::MAX)
            .min(wanted)
    }

    /// Waits for the clock; returns the milliseconds asked for. The wait budget of
    /// [`RollbackPolicy::Wait`] is counted in requested time, not in what the clock shows
    /// afterwards, so a clock that keeps slipping back cannot keep a caller waiting forever.
    pub(crate) fn wait(&self, now_ms: u64, until_ms: u64) -> u64 {
        self.clock.wait_until_ms(until_ms);
        until_ms.saturating_sub(now_ms)
    }

    pub(crate) fn clock(&self) -> &C {
        &self.clock
    }

    pub(crate) fn layout(&self) -> &L {
        &self.layout
    }

    /// How far the state's tick runs ahead of the clock, in ms (logical policy).
    pub(crate) fn ahead_ms(&self, state: State) -> u64 {
        if state.tick == 0 {
            return 0;
        }
        self.tick_start(state.tick)
            .saturating_sub(self.clock.now_ms())
    }

    pub(crate) fn info(&self) -> SchemeInfo {
        self.layout.spec().info()
    }

    pub(crate) fn stats(&self) -> GeneratorStats {
        use std::sync::atomic::Ordering::Relaxed;
        GeneratorStats::new(self.rollbacks.load(Relaxed), self.tick_waits.load(Relaxed))
    }
}

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
}

impl<L: Layout> Builder<L, MonotonicClock> {
    /// A builder for `layout`, with every fixed field 0, a [`MonotonicClock`], the default
    /// [`RollbackPolicy`] and sequences starting at 0.
    pub fn new(layout: L) -> Self {
        Self {
            layout,
            clock: MonotonicClock::new(),
            fields: Vec::new(),
            policy: RollbackPolicy::default(),
            start: SequenceStart::Zero,
            seed: None,
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

    /// Uses `clock` instead of a [`MonotonicClock`].
    pub fn clock<C2: Clock>(self, clock: C2) -> Builder<L, C2> {
        Builder {
            layout: self.layout,
            clock,
            fields: self.fields,
            policy: self.policy,
            start: self.start,
            seed: self.seed,
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
    /// through `std`'s `RandomState`), for reproducible tests.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    fn core(self, state_tick_bits: Option<u32>) -> Result<Core<L, C>, ConfigError> {
        let spec = *self.layout.spec();
        let mut base = 0u128;
        for (name, value) in &self.fields {
            let field = spec
                .fields()
                .find(|f| f.name == name && f.kind == FieldKind::Fixed)
                .ok_or_else(|| ConfigError::UnknownField {
                    name: name.clone(),
                    settable: settable(&spec),
                })?;
            if *value > field.max() {
                return Err(ConfigError::FieldOutOfRange {
                    name: name.clone(),
                    value: *value,
                    max: field.max(),
                });
            }
            let mask = u128::from(field.max()) << field.shift;
            base = (base & !mask) | (u128::from(*value) << field.shift);
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
        Ok(Core {
            layout: self.layout,
            clock: self.clock,
            policy: self.policy,
            // Fixed fields lie inside the word, so the base fits it.
            base: L::Id::from_u128(base).unwrap_or_default(),
            time_shift: spec.time().shift,
            seq_shift: seq.shift,
            seq_bits: seq.bits,
            seq_max: seq.max(),
            epoch_ms: spec.epoch_ms(),
            tick_ms: spec.tick_ms(),
            max_tick,
            start_below,
            seed: self.seed.unwrap_or_else(random_seed),
            rollbacks: std::sync::atomic::AtomicU64::new(0),
            tick_waits: std::sync::atomic::AtomicU64::new(0),
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
            tick: Cell::new(init.state.tick),
            seq: Cell::new(init.state.seq),
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
            state: AtomicU64::new(pack(init, core.seq_bits)),
            core,
        })
    }

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

/// `take` through `fill`, so a batch gets the run-at-a-time path of every mode.
fn take_by_fill<G: IdScheme>(generator: &G, n: usize) -> Result<Vec<G::Id>, GenerateError>
where
    G::Id: Default,
{
    let mut out = vec![G::Id::default(); n];
    generator.fill(&mut out)?;
    Ok(out)
}

fn settable(spec: &crate::LayoutSpec) -> String {
    let names: Vec<_> = spec
        .fields()
        .filter(|f| f.kind == FieldKind::Fixed)
        .map(|f| f.name)
        .collect();
    if names.is_empty() {
        "no fields (this layout has none to set)".into()
    } else {
        names.join(", ")
    }
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(0x1d_u64)
}

/// A single-owner Snowflake generator: the fastest mode. Its state lives in a `Cell`, so it
/// is `Send` but not `Sync`; give each thread its own (with distinct worker ids), or use
/// [`AtomicSnowflake`] to share one.
///
/// # Examples
///
/// ```
/// use idkit_snowflake::{Snowflake, Discord};
/// use idkit_core::IdScheme;
/// let generator = Snowflake::builder(Discord).field("worker", 1).build()?;
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(b > a);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Snowflake<L: Layout, C = MonotonicClock> {
    core: Core<L, C>,
    // Three cells rather than one cell of a struct: copying the struct in and out on every
    // id made the compiler reload it with wide loads right after narrow stores, which stalls
    // store forwarding and tripled the cost of an id.
    tick: Cell<u64>,
    seq: Cell<u64>,
    last: Cell<L::Id>,
}

impl<L: Layout> Snowflake<L> {
    /// Starts configuring a generator for `layout`; see [`Builder`].
    pub fn builder(layout: L) -> Builder<L, MonotonicClock> {
        Builder::new(layout)
    }
}

impl<L: Layout, C: Clock> Snowflake<L, C> {
    /// The layout.
    pub fn layout(&self) -> &L {
        self.core.layout()
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        self.core.clock()
    }

    /// How far the last id's timestamp runs ahead of the clock, in ms (non-zero only under
    /// [`RollbackPolicy::Logical`]).
    pub fn ahead_ms(&self) -> u64 {
        self.core.ahead_ms(self.owned().state)
    }

    fn owned(&self) -> Owned<L::Id> {
        Owned {
            state: State {
                tick: self.tick.get(),
                seq: self.seq.get(),
            },
            last: self.last.get(),
        }
    }

    fn store(&self, owned: Owned<L::Id>) {
        self.tick.set(owned.state.tick);
        self.seq.set(owned.state.seq);
        self.last.set(owned.last);
    }
}

impl<L: Layout, C: fmt::Debug> fmt::Debug for Snowflake<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<L: Layout, C: Clock> IdScheme for Snowflake<L, C> {
    type Id = L::Id;

    #[inline]
    fn next_id(&self) -> Result<L::Id, GenerateError> {
        let now = self.core.clock().now_ms();
        let seq = self.seq.get();
        if self.core.same_tick_with_room(now, self.tick.get(), seq) {
            let id = self.last.get().bump(self.core.seq_shift);
            self.seq.set(seq + 1);
            self.last.set(id);
            return Ok(id);
        }
        let mut owned = self.owned();
        let id = self.core.next_slow(&mut owned, now);
        self.store(owned);
        id
    }

    fn fill(&self, out: &mut [L::Id]) -> Result<(), GenerateError> {
        let mut owned = self.owned();
        let done = self.core.fill(&mut owned, out);
        self.store(owned);
        done
    }

    fn take(&self, n: usize) -> Result<Vec<L::Id>, GenerateError> {
        take_by_fill(self, n)
    }

    fn info(&self) -> SchemeInfo {
        self.core.info()
    }

    fn stats(&self) -> GeneratorStats {
        self.core.stats()
    }
}

fn pack(state: State, seq_bits: u32) -> u64 {
    (state.tick << seq_bits) | state.seq
}

fn unpack(word: u64, seq_bits: u32) -> State {
    State {
        tick: word >> seq_bits,
        seq: word & (u64::MAX >> (64 - seq_bits)),
    }
}

/// A lock-free Snowflake generator to share between threads.
///
/// The whole state (last tick and sequence) is one `AtomicU64`, advanced by
/// compare-and-swap; a thread that loses the race re-reads the state and the clock and tries
/// again. A batch ([`IdScheme::fill`]) reserves its whole run of sequence numbers in a tick
/// with one compare-and-swap. Clock rollback and sequence exhaustion follow the same rules
/// as [`Snowflake`] (they share one decision function).
///
/// # Examples
///
/// ```
/// use idkit_snowflake::{Snowflake, Twitter};
/// use idkit_core::IdScheme;
/// use std::sync::Arc;
///
/// let generator = Arc::new(Snowflake::builder(Twitter).field("worker", 7).build_atomic()?);
/// let handles: Vec<_> = (0..2).map(|_| {
///     let generator = Arc::clone(&generator);
///     std::thread::spawn(move || generator.take(1000))
/// }).collect();
/// let mut all = Vec::new();
/// for h in handles { all.extend(h.join().unwrap()?); }
/// all.sort();
/// all.dedup();
/// assert_eq!(all.len(), 2000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AtomicSnowflake<L: Layout, C = MonotonicClock> {
    core: Core<L, C>,
    state: AtomicU64,
}

impl<L: Layout, C: fmt::Debug> fmt::Debug for AtomicSnowflake<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<L: Layout, C: Clock> AtomicSnowflake<L, C> {
    /// The layout.
    pub fn layout(&self) -> &L {
        self.core.layout()
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        self.core.clock()
    }

    /// How far the last id's timestamp runs ahead of the clock, in ms.
    pub fn ahead_ms(&self) -> u64 {
        let state = unpack(self.state.load(Ordering::Acquire), self.core.seq_bits);
        self.core.ahead_ms(state)
    }

    /// One attempt loop shared by `next_id` and `fill`: reserves up to `wanted` consecutive
    /// sequence values in one tick and returns (tick, first seq, count).
    #[inline]
    fn reserve(&self, wanted: usize) -> Result<(u64, u64, usize), GenerateError> {
        let bits = self.core.seq_bits;
        let mut waited = 0;
        let mut backoff = Backoff::default();
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            // Read the clock after the state: the Acquire load orders this read after the
            // clock read of whichever thread stored the state, so a monotonic clock cannot
            // look "behind" merely because another thread read it later.
            let now = self.core.clock().now_ms();
            match self.core.step(unpack(current, bits), now, waited)? {
                Step::Issue { tick, seq, room } => {
                    let run = self.core.run_len(room, wanted);
                    let next = pack(
                        State {
                            tick,
                            seq: seq + run as u64 - 1,
                        },
                        bits,
                    );
                    match self.state.compare_exchange_weak(
                        current,
                        next,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => return Ok((tick, seq, run)),
                        Err(actual) => {
                            // Another thread won. Back off before retrying: under
                            // contention this lets one core keep the cache line for a run
                            // of ids instead of bouncing it on every attempt.
                            backoff.spin();
                            current = actual;
                        }
                    }
                }
                Step::Wait { until_ms } => {
                    waited += self.core.wait(now, until_ms);
                    current = self.state.load(Ordering::Acquire);
                }
            }
        }
    }
}

impl<L: Layout, C: Clock> IdScheme for AtomicSnowflake<L, C> {
    type Id = L::Id;

    #[inline]
    fn next_id(&self) -> Result<L::Id, GenerateError> {
        let (tick, seq, _) = self.reserve(1)?;
        Ok(self.core.id(tick, seq))
    }

    fn fill(&self, out: &mut [L::Id]) -> Result<(), GenerateError> {
        let mut done = 0;
        while done < out.len() {
            let (tick, seq, run) = self.reserve(out.len() - done)?;
            for (slot, s) in out[done..done + run].iter_mut().zip(seq..) {
                *slot = self.core.id(tick, s);
            }
            done += run;
        }
        Ok(())
    }

    fn take(&self, n: usize) -> Result<Vec<L::Id>, GenerateError> {
        take_by_fill(self, n)
    }

    fn info(&self) -> SchemeInfo {
        self.core.info()
    }

    fn stats(&self) -> GeneratorStats {
        self.core.stats()
    }
}

/// Exponential spinning after a lost compare-and-swap: 1, 2, 4 ... 1024 spin-loop hints.
/// The cap is what lets two threads sharing a generator on two cores issue at least as
/// many ids in aggregate as one (measured in `bench-harness`, group `lockfree-threads`);
/// a thread that keeps losing waits at most about 2,000 hints (~100 µs) in all.
#[derive(Default)]
struct Backoff(u32);

impl Backoff {
    #[inline]
    fn spin(&mut self) {
        for _ in 0..(1u32 << self.0) {
            std::hint::spin_loop();
        }
        #[cfg(loom)]
        loom::thread::yield_now();
        self.0 = (self.0 + 1).min(10);
    }
}

/// A Snowflake generator behind a `Mutex`, to share between threads: the classic design
/// (Twitter's `synchronized nextId`), kept as the baseline for [`AtomicSnowflake`].
///
/// The lock is held while waiting for the next tick, as in the original.
pub struct MutexSnowflake<L: Layout, C = MonotonicClock> {
    core: Core<L, C>,
    state: Mutex<Owned<L::Id>>,
}

impl<L: Layout, C: fmt::Debug> fmt::Debug for MutexSnowflake<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<L: Layout, C: Clock> MutexSnowflake<L, C> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Owned<L::Id>> {
        // A panic while holding the lock cannot leave the state half-written (it is
        // assigned whole after an id is decided), so a poisoned lock is safe to reuse.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<L: Layout, C: Clock> IdScheme for MutexSnowflake<L, C> {
    type Id = L::Id;

    fn next_id(&self) -> Result<L::Id, GenerateError> {
        self.core.next(&mut self.lock())
    }

    fn fill(&self, out: &mut [L::Id]) -> Result<(), GenerateError> {
        self.core.fill(&mut self.lock(), out)
    }

    fn take(&self, n: usize) -> Result<Vec<L::Id>, GenerateError> {
        take_by_fill(self, n)
    }

    fn info(&self) -> SchemeInfo {
        self.core.info()
    }

    fn stats(&self) -> GeneratorStats {
        self.core.stats()
    }
}
