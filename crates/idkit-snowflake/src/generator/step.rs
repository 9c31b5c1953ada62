//! The decision every mode shares: [`Core::step`] turns the clock reading and the last
//! state into the next (tick, sequence), a wait, or an error.

use core::fmt;

use idkit_core::{Clock, GenerateError, GeneratorStats, SchemeInfo};

use super::*;
use crate::layout::{Layout, Word};

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
    pub(super) layout: L,
    pub(super) clock: C,
    pub(super) policy: RollbackPolicy,
    pub(super) base: L::Id,
    pub(crate) time_shift: u32,
    /// The time field's largest value (its mask once shifted down).
    pub(crate) time_mask: u64,
    pub(crate) seq_shift: u32,
    pub(crate) seq_bits: u32,
    pub(crate) seq_max: u64,
    /// One in the sequence field of a 64-bit id (`1 << seq_shift`).
    pub(crate) seq_one: u64,
    /// The sequence field of a 64-bit id, full (`seq_max << seq_shift`).
    pub(crate) seq_field: u64,
    pub(super) epoch_ms: u64,
    pub(super) tick_ms: u64,
    pub(super) max_tick: u64,
    pub(super) start_below: u64,
    pub(super) seed: u64,
    /// The lease guard, when the worker id is leased: its fence is checked once per tick.
    pub(super) guard: Option<Guard>,
    // Counters for `IdScheme::stats`, touched only on the cold path. Plain atomics even
    // under loom: they never decide an id.
    pub(super) rollbacks: core::sync::atomic::AtomicU64,
    pub(super) tick_waits: core::sync::atomic::AtomicU64,
}

/// A lease guard (`idkit_core::guard`, which needs `std`).
#[cfg(feature = "std")]
pub(super) type Guard = idkit_core::guard::Guard;

/// Without `std` there are no leases: a guard type with no values, so `Core::guard` is
/// always `None` and the guarded paths are never taken.
#[cfg(not(feature = "std"))]
#[derive(Debug, Clone)]
pub(super) enum Guard {}

#[cfg(not(feature = "std"))]
impl Guard {
    fn floor_ms(&self) -> u64 {
        match *self {}
    }

    fn allows(&self, _: u64, _: u64) -> bool {
        match *self {}
    }

    fn refusal(&self, _: u64) -> GenerateError {
        match *self {}
    }
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
        // Under a guard, start as if the last id had been issued in the tick of the
        // high-water mark: the first id is in a later tick, and a clock behind the mark is
        // a clock that went back, for the rollback policy to handle.
        self.state_after(self.guard.as_ref().map_or(0, |g| g.floor_ms()))
    }

    /// The state of a generator whose last id was the last of the tick holding Unix ms
    /// `floor_ms` (tick 0 before the epoch): its next id is in a later tick.
    pub(crate) fn state_after(&self, floor_ms: u64) -> State {
        let tick = floor_ms
            .checked_sub(self.epoch_ms)
            .map_or(0, |since| (since / self.tick_ms).min(self.max_tick));
        State {
            tick,
            seq: self.seq_max,
        }
    }

    pub(crate) fn initial_owned(&self) -> Owned<L::Id> {
        let state = self.initial_state();
        Owned {
            state,
            last: self.id(state.tick, state.seq),
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

    pub(crate) fn tick_start(&self, tick: u64) -> u64 {
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
            if self.guard.is_some() {
                return self.fresh_guarded(now, now_ms);
            }
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

    /// A new tick under a lease guard: out of line, so that a generator without a guard
    /// pays one pointer test on a new tick and nothing else.
    #[inline(never)]
    fn fresh_guarded(&self, tick: u64, now_ms: u64) -> Result<Step, GenerateError> {
        self.check_guard(now_ms)?;
        Ok(self.fresh(tick))
    }

    /// Under a lease guard, refuses a new tick that would not end before the fence.
    #[inline(always)]
    fn check_guard(&self, now_ms: u64) -> Result<(), GenerateError> {
        match &self.guard {
            Some(guard) if !guard.allows(now_ms, self.tick_ms) => Err(guard.refusal(now_ms)),
            _ => Ok(()),
        }
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
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
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
                    // A borrowed tick must end before the fence too.
                    self.check_guard(self.tick_start(next).max(now_ms))?;
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
                    .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
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
        self.fast_tick(now_ms) == Some(tick) && seq < self.seq_max
    }

    /// The tick of clock reading `now_ms` for the single-owner fast path (`None` before the
    /// epoch; no check of the layout's last tick, which the state's tick never passes).
    #[inline(always)]
    fn fast_tick(&self, now_ms: u64) -> Option<u64> {
        let since = now_ms.checked_sub(self.epoch_ms)?;
        // Skip the division for the common 1 ms tick, as `tick_of` does.
        Some(if self.tick_ms == 1 {
            since
        } else {
            since / self.tick_ms
        })
    }

    /// [`Core::same_tick_with_room`] read off a 64-bit id (`word`): its time field is the
    /// clock's tick and its sequence field is not full, so the next id is `word +
    /// seq_one`.
    #[inline(always)]
    pub(crate) fn id_in_tick_with_room(&self, now_ms: u64, word: u64) -> bool {
        // The tick's first millisecond, from the word alone: the clock reading then takes
        // one subtraction and one comparison (no division for a longer tick, no test for a
        // clock before the epoch, which wraps to a difference past any tick's length). A
        // state's tick starts at or before a clock reading already taken, so it fits.
        let tick = (word >> self.time_shift) & self.time_mask;
        let start = tick.wrapping_mul(self.tick_ms).wrapping_add(self.epoch_ms);
        now_ms.wrapping_sub(start) < self.tick_ms && word & self.seq_field != self.seq_field
    }

    /// Issues one id against a state the caller owns exclusively (the mutex mode's step).
    #[cfg(feature = "std")]
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
                Step::Wait { until_ms } => waited += self.wait(now, until_ms)?,
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
                Step::Wait { until_ms } => waited += self.wait(now, until_ms)?,
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
    ///
    /// # Errors
    ///
    /// A deferred wait, inside the async API ([`idkit_core::nonblocking`]).
    pub(crate) fn wait(&self, now_ms: u64, until_ms: u64) -> Result<u64, GenerateError> {
        idkit_core::nonblocking::wait_for(&self.clock, until_ms)?;
        Ok(until_ms.saturating_sub(now_ms))
    }

    #[inline]
    pub(crate) fn clock(&self) -> &C {
        &self.clock
    }

    #[inline]
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
        use core::sync::atomic::Ordering::Relaxed;
        GeneratorStats::new(self.rollbacks.load(Relaxed), self.tick_waits.load(Relaxed))
    }
}
