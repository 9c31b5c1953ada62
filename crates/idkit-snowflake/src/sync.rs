//! The atomics the lock-free generator uses: `std`'s, or loom's under `--cfg loom` so the
//! model checker can explore every interleaving.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
