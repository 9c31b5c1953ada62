//! The lock-free mode: the whole state in one `AtomicU64`.

use core::fmt;
use core::ops::Deref;

use idkit_core::monotonic::{Backoff, CachePadded};
use idkit_core::{Clock, DefaultClock, GenerateError, GeneratorStats, IdScheme, SchemeInfo};

use super::*;
use crate::layout::{Layout, Word};
use crate::sync::{AtomicU64, Ordering};

/// `(tick, sequence)` packed into the word of a generator whose ids are wider than it:
/// the tick above the sequence.
fn pack(state: State, seq_bits: u32) -> u64 {
    (state.tick << seq_bits) | state.seq
}

fn unpack(word: u64, seq_bits: u32) -> State {
    State {
        tick: word >> seq_bits,
        seq: word & (u64::MAX >> (64 - seq_bits)),
    }
}

/// Spinning after a lost swap, up to 1,024 hints: the cap at which two threads sharing a
/// generator on two cores issue at least as many ids in aggregate as one (`bench-harness`,
/// group `scaling`); a thread that keeps losing waits at most about 2,000 hints in all.
const BACKOFF: Backoff = Backoff::new(10);

/// A lock-free Snowflake generator to share between threads.
///
/// The whole state is one `AtomicU64`, advanced by compare-and-swap; a thread that loses
/// the race re-reads the state and the clock and tries again. For a 64-bit layout the word
/// is the last id issued: the next id in the same tick is the word with its sequence field
/// one higher, and the word swapped in is the id returned. A 128-bit layout keeps the last
/// tick and sequence in the word instead. A batch ([`IdScheme::fill`]) reserves its whole
/// run of sequence numbers in a tick with one compare-and-swap. Clock rollback and sequence exhaustion follow the same rules
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
///
/// The word can live elsewhere: `W` is whatever holds it. By default the generator owns it;
/// [`on_word`](Self::on_word) moves the generator onto a word of the caller's, such as one
/// in memory that several processes share (the PostgreSQL extension's backends), so that
/// every generator on that word issues from one sequence.
pub struct AtomicSnowflake<L: Layout, C = DefaultClock, W = CachePadded<AtomicU64>> {
    pub(super) core: Core<L, C>,
    /// On a cache line of its own: a swap then leaves the `core`'s settings, read on every
    /// id, in every thread's cache.
    pub(super) state: W,
}

impl<L: Layout, C: fmt::Debug, W> fmt::Debug for AtomicSnowflake<L, C, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<L: Layout, C: Clock> AtomicSnowflake<L, C> {
    /// The word a generator of these settings starts from: what a shared word holds before
    /// its first id (see [`on_word`](Self::on_word)).
    pub fn initial_word(&self) -> u64 {
        Self::word_of(&self.core, self.core.initial_state())
    }

    /// The word of a generator that takes over from one whose ids reached Unix ms
    /// `floor_ms` (a high-water mark persisted before a restart): its first id is in a tick
    /// after the one holding `floor_ms`, and a clock still behind that tick is a clock that
    /// went back, for the rollback policy. The same as [`initial_word`](Self::initial_word)
    /// when that is later.
    ///
    /// ```
    /// use idkit_core::{IdScheme, ManualClock};
    /// use idkit_snowflake::{RollbackPolicy, Snowflake, SnowflakeId, Twitter};
    /// use std::sync::atomic::AtomicU64;
    ///
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let generator = Snowflake::builder(Twitter)
    ///     .clock(&clock)
    ///     .rollback(RollbackPolicy::FailFast)
    ///     .build_atomic()?;
    /// // Ids up to 5 s ahead of the clock were issued before: the clock is behind them.
    /// let word = AtomicU64::new(generator.initial_word_after(1_700_000_005_000));
    /// let generator = generator.on_word(&word);
    /// assert!(generator.next_id().is_err());
    /// clock.set(1_700_000_005_001);
    /// let id: SnowflakeId<Twitter> = generator.next_as()?;
    /// assert_eq!(id.timestamp_ms(), 1_700_000_005_001);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn initial_word_after(&self, floor_ms: u64) -> u64 {
        let (initial, after) = (self.core.initial_state(), self.core.state_after(floor_ms));
        let state = if after.tick > initial.tick {
            after
        } else {
            initial
        };
        Self::word_of(&self.core, state)
    }

    /// This generator's settings over `word`, which holds the last id of every generator
    /// on it (or [`initial_word`](Self::initial_word) before the first): generators of one
    /// layout and one set of fields that share a word issue distinct, increasing ids
    /// between them, as threads sharing one generator do. The word must only ever be
    /// written by generators of the same settings.
    ///
    /// ```
    /// use idkit_core::{IdScheme, SystemClock};
    /// use idkit_snowflake::{Snowflake, Twitter};
    /// use std::sync::atomic::AtomicU64;
    ///
    /// let settings = || Snowflake::builder(Twitter).clock(SystemClock).field("worker", 7);
    /// let first = settings().build_atomic()?;
    /// let word = AtomicU64::new(first.initial_word());
    /// let (a, b) = (first.on_word(&word), settings().build_atomic()?.on_word(&word));
    /// let (x, y, z) = (a.next_id()?, b.next_id()?, a.next_id()?);
    /// assert!(x < y && y < z);
    /// assert_eq!(word.load(std::sync::atomic::Ordering::Relaxed), z);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_word<W: Deref<Target = AtomicU64>>(self, word: W) -> AtomicSnowflake<L, C, W> {
        AtomicSnowflake {
            core: self.core,
            state: word,
        }
    }
}

impl<L: Layout, C: Clock, W: Deref<Target = AtomicU64>> AtomicSnowflake<L, C, W> {
    /// Whether the word is the last id (a 64-bit layout), not a packed `(tick, sequence)`.
    const ID_IN_WORD: bool = <L::Id as Word>::BITS == 64;

    /// The word holding `state`: the id of its tick and sequence, or the two packed.
    #[inline(always)]
    pub(super) fn word_of(core: &Core<L, C>, state: State) -> u64 {
        if Self::ID_IN_WORD {
            u64::try_from(core.id(state.tick, state.seq).to_u128()).unwrap_or_default()
        } else {
            pack(state, core.seq_bits)
        }
    }

    /// The tick and sequence of `word`.
    #[inline(always)]
    fn state_of(&self, word: u64) -> State {
        let core = &self.core;
        if Self::ID_IN_WORD {
            State {
                tick: (word >> core.time_shift) & core.time_mask,
                seq: (word >> core.seq_shift) & core.seq_max,
            }
        } else {
            unpack(word, core.seq_bits)
        }
    }

    /// The id a word holds, for a 64-bit layout.
    #[inline(always)]
    fn id_in(word: u64) -> L::Id {
        L::Id::from_u128(u128::from(word)).unwrap_or_default()
    }

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
        let state = self.state_of(self.state.load(Ordering::Acquire));
        self.core.ahead_ms(state)
    }

    /// One attempt loop shared by `next_id` and `fill`: reserves up to `wanted` consecutive
    /// sequence values in one tick and returns (tick, first seq, count). `backoff` goes on
    /// from where the caller left it (`next_id` arrives here after losing a swap).
    ///
    /// Out of line: `next_id` takes it once a tick or after a lost race, and inlined it
    /// made the fast path save and restore six registers on every id.
    #[inline(never)]
    fn reserve(
        &self,
        wanted: usize,
        mut backoff: Backoff,
    ) -> Result<(u64, u64, usize), GenerateError> {
        let mut waited = 0;
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            // Read the clock after the state: the Acquire load orders this read after the
            // clock read of whichever thread stored the state, so a monotonic clock cannot
            // look "behind" merely because another thread read it later.
            let now = self.core.clock().now_ms();
            match self.core.step(self.state_of(current), now, waited)? {
                Step::Issue { tick, seq, room } => {
                    let run = self.core.run_len(room, wanted);
                    let last = State {
                        tick,
                        seq: seq + run as u64 - 1,
                    };
                    let next = Self::word_of(&self.core, last);
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
                    waited += self.core.wait(now, until_ms)?;
                    current = self.state.load(Ordering::Acquire);
                }
            }
        }
    }
}

impl<L: Layout, C: Clock, W: Deref<Target = AtomicU64>> IdScheme for AtomicSnowflake<L, C, W> {
    type Id = L::Id;

    #[inline]
    fn next_id(&self) -> Result<L::Id, GenerateError> {
        // The common case first, as the single-owner generator takes it: still in the last
        // id's tick with room in its sequence. The state is read before the clock, as in
        // `reserve`. A lost race, a new tick or a full sequence takes the general path.
        let mut backoff = BACKOFF;
        let current = self.state.load(Ordering::Acquire);
        let now = self.core.clock().now_ms();
        if Self::ID_IN_WORD {
            // The word is the last id: the next is the word plus one in the sequence field,
            // and the word swapped in is the id returned. Between the load and the swap: the
            // clock reading against the start of the word's tick, the sequence field against
            // full, one add.
            if self.core.id_in_tick_with_room(now, current) {
                let next = current.wrapping_add(self.core.seq_one);
                if self
                    .state
                    .compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Ok(Self::id_in(next));
                }
                backoff.spin();
            }
        } else {
            let last = unpack(current, self.core.seq_bits);
            if self.core.same_tick_with_room(now, last.tick, last.seq) {
                // The id is made before the swap, off the swap's latency.
                let id = self.core.id(last.tick, last.seq + 1);
                if self
                    .state
                    .compare_exchange_weak(
                        current,
                        current + 1,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
                {
                    return Ok(id);
                }
                // Lost the race: back off, as `reserve` does after each loss.
                backoff.spin();
            }
        }
        let (tick, seq, _) = self.reserve(1, backoff)?;
        Ok(self.core.id(tick, seq))
    }

    fn fill(&self, out: &mut [L::Id]) -> Result<(), GenerateError> {
        let mut done = 0;
        while done < out.len() {
            let (tick, seq, run) = self.reserve(out.len() - done, BACKOFF)?;
            for (slot, s) in out[done..done + run].iter_mut().zip(seq..) {
                *slot = self.core.id(tick, s);
            }
            done += run;
        }
        Ok(())
    }

    alike_in_every_mode!();
}
