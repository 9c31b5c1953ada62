//! The atomics the lock-free generator uses: `core`'s, or loom's under `--cfg loom` so the
//! model checker can explore every interleaving.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
