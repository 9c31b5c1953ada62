//! The single-owner mode: state in a `Cell`.

use core::cell::Cell;
use core::fmt;

use idkit_core::{Clock, DefaultClock, GenerateError, GeneratorStats, IdScheme, SchemeInfo};

use super::*;
use crate::layout::{Layout, Word};

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
pub struct Snowflake<L: Layout, C = DefaultClock> {
    pub(super) core: Core<L, C>,
    // The state is the last id (its tick and sequence are its own fields) and the Unix ms
    // its tick starts at: the next id in the same tick is one comparison of the clock, one
    // of the sequence field and one add, and one store. Cells rather than one cell of a
    // struct: copying a struct in and out on every id made the compiler reload it with wide
    // loads right after narrow stores, which stalls store forwarding.
    pub(super) start_ms: Cell<u64>,
    pub(super) last: Cell<L::Id>,
}

#[cfg(feature = "std")]
impl<L: Layout> Snowflake<L> {
    /// Starts configuring a generator for `layout` on a
    /// [`TickerClock`](idkit_core::TickerClock); see [`Builder`] (and
    /// [`Builder::with_clock`] for another clock, the way without `std`).
    pub fn builder(layout: L) -> Builder<L, idkit_core::TickerClock> {
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

    #[inline]
    fn owned(&self) -> Owned<L::Id> {
        let last = self.last.get();
        let core = &self.core;
        Owned {
            state: State {
                tick: last.field(core.time_shift, core.time_mask),
                seq: last.field(core.seq_shift, core.seq_max),
            },
            last,
        }
    }

    #[inline]
    fn store(&self, owned: Owned<L::Id>) {
        self.start_ms.set(self.core.tick_start(owned.state.tick));
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
        // The fast path: the clock still in the last id's tick (`now - start` below one
        // tick is both "not before it" and "not past it") and its sequence not full, the
        // same test as `Core::step`'s first case.
        let core = &self.core;
        let now = core.clock().now_ms();
        let last = self.last.get();
        if now.wrapping_sub(self.start_ms.get()) < core.tick_ms
            && last.field(core.seq_shift, core.seq_max) < core.seq_max
        {
            let id = last.bump(core.seq_shift);
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

    alike_in_every_mode!();
}
