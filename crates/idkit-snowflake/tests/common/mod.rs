//! What the Snowflake integration tests share: the three ways a generator is built.

use idkit_core::{Clock, IdScheme};
use idkit_snowflake::{Builder, Layout};

/// A concurrency mode: single-owner, lock-free, or behind a mutex.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    Single,
    Atomic,
    Mutex,
}

/// Every mode.
pub const MODES: [Mode; 3] = [Mode::Single, Mode::Atomic, Mode::Mutex];

impl Mode {
    /// The generator `builder` makes in this mode, boxed.
    pub fn build<'a, L, C>(self, builder: Builder<L, C>) -> Box<dyn IdScheme<Id = u64> + Send + 'a>
    where
        L: Layout<Id = u64> + 'a,
        C: Clock + 'a,
    {
        match self {
            Self::Single => Box::new(builder.build().unwrap()),
            Self::Atomic => Box::new(builder.build_atomic().unwrap()),
            Self::Mutex => Box::new(builder.build_mutex().unwrap()),
        }
    }
}
