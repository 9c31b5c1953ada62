//! The mutex mode: the classic design, the lock held while waiting for the next tick.

use core::fmt;
use std::sync::Mutex;

use idkit_core::{Clock, GenerateError, GeneratorStats, IdScheme, SchemeInfo, TickerClock};

use super::*;
use crate::layout::Layout;

/// A Snowflake generator behind a `Mutex`, to share between threads: the classic design
/// (Twitter's `synchronized nextId`), kept as the baseline for [`AtomicSnowflake`].
///
/// The lock is held while waiting for the next tick, as in the original.
pub struct MutexSnowflake<L: Layout, C = TickerClock> {
    pub(super) core: Core<L, C>,
    pub(super) state: Mutex<Owned<L::Id>>,
}

impl<L: Layout, C: fmt::Debug> fmt::Debug for MutexSnowflake<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

impl<L: Layout, C: Clock> MutexSnowflake<L, C> {
    #[inline]
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

    alike_in_every_mode!();
}
