//! The stateful part: a clock, a (tick, sequence) state and a rollback policy around a
//! [`Layout`](crate::Layout). Three concurrency modes share one decision function,
//! `Core::step` (in `step.rs`), so they issue ids under the same rules: `single.rs`
//! (single-owner), `atomic.rs` (lock-free), `mutex.rs`; `builder.rs` configures all three,
//! `policy.rs` holds the rollback policy and the sequence start.
//!
//! Small functions that the hot paths of one file call in another carry `#[inline]`: a
//! downstream crate places each module's generic code in its own codegen unit, where an
//! uninlined accessor becomes a call (the single-owner path cost 0.15 ns more per id
//! without it).

/// The `IdScheme` methods every mode answers alike: `take` through `fill` (so a batch gets
/// the run-at-a-time path of every mode), and the facts and counters of its `core`.
macro_rules! alike_in_every_mode {
    () => {
        fn take(&self, n: usize) -> Result<Vec<L::Id>, GenerateError> {
            super::take_by_fill(self, n)
        }

        fn info(&self) -> SchemeInfo {
            self.core.info()
        }

        fn stats(&self) -> GeneratorStats {
            self.core.stats()
        }
    };
}

mod atomic;
mod builder;
#[cfg(feature = "std")]
mod mutex;
mod policy;
mod single;
mod step;

pub use atomic::AtomicSnowflake;
pub use builder::Builder;
pub(crate) use step::{Core, Owned, State, Step};

use crate::prelude::*;
use idkit_core::{GenerateError, IdScheme};

/// `take` through `fill`, so a batch gets the run-at-a-time path of every mode.
fn take_by_fill<G: IdScheme>(generator: &G, n: usize) -> Result<Vec<G::Id>, GenerateError>
where
    G::Id: Default,
{
    let mut out = vec![G::Id::default(); n];
    generator.fill(&mut out)?;
    Ok(out)
}
#[cfg(feature = "std")]
pub use mutex::MutexSnowflake;
pub use policy::{RollbackPolicy, SequenceStart};
pub use single::Snowflake;
