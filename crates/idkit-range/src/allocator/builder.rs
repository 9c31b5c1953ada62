//! [`RangeBuilder`]: the allocator's settings, checked, and the start of its leasing thread.

use std::fmt;

// The cursor and the block slots are the lock-free part; `RUSTFLAGS="--cfg loom"` swaps in
// loom's atomics for the model check in `loom_model` below.
#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::store::{Store, check_namespace};

use super::*;

/// Why a [`RangeBuilder`] refused its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeConfigError {
    /// The namespace is empty, too long or has control characters.
    Namespace(String),
    /// A setting is out of range.
    Invalid {
        /// The setting.
        setting: &'static str,
        /// What was wrong and what is expected.
        message: String,
    },
}

impl fmt::Display for RangeConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Namespace(m) => write!(f, "invalid range config: {m}"),
            Self::Invalid { setting, message } => {
                write!(f, "invalid range config: {setting}: {message}")
            }
        }
    }
}

impl std::error::Error for RangeConfigError {}

/// Settings of a [`RangeAllocator`], checked by [`RangeBuilder::build`].
#[derive(Debug)]
pub struct RangeBuilder<S> {
    pub(super) store: S,
    pub(super) namespace: String,
    pub(super) block: u64,
    pub(super) min_block: u64,
    pub(super) max_block: u64,
    pub(super) prefetch_at: f64,
    pub(super) target_period: Duration,
    pub(super) step: u64,
    pub(super) offset: u64,
    pub(super) wait: Duration,
}

impl<S: Store> RangeBuilder<S> {
    /// The namespace (Leaf's "biz tag"); default `default`.
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> Self {
        namespace.clone_into(&mut self.namespace);
        self
    }

    /// First block size, and the bounds of adaptive sizing unless set (default 1,000).
    #[must_use]
    pub fn block_size(mut self, size: u64) -> Self {
        self.block = size;
        self
    }

    /// Smallest block adaptive sizing may choose (default: the first block size).
    #[must_use]
    pub fn min_block(mut self, size: u64) -> Self {
        self.min_block = size;
        self
    }

    /// Largest block adaptive sizing may choose (default: 100 times the first block size).
    #[must_use]
    pub fn max_block(mut self, size: u64) -> Self {
        self.max_block = size;
        self
    }

    /// Fraction of a block used before the next is leased in the background, in
    /// `(0, 1]`; 1 leases only when the block is spent (default 0.2).
    #[must_use]
    pub fn prefetch_at(mut self, fraction: f64) -> Self {
        self.prefetch_at = fraction;
        self
    }

    /// How long a block should last; sizing adapts toward it (default 10 s).
    #[must_use]
    pub fn target_period(mut self, period: Duration) -> Self {
        self.target_period = period;
        self
    }

    /// Interleaving: ids are `counter * step + offset` (default step 1, offset 0). The
    /// store keeps the interleave of a namespace's first allocator; one built with another
    /// leases nothing from that namespace, and its `next_id` fails naming both
    /// ([`StoreError::Interleave`](crate::StoreError::Interleave)). The ids end where
    /// `counter * step + offset` would pass 2^64 - 1
    /// ([`StoreError::IdsSpent`](crate::StoreError::IdsSpent)); from then on `next_id`
    /// fails at once, asking the store nothing.
    #[must_use]
    pub fn interleave(mut self, step: u64, offset: u64) -> Self {
        self.step = step;
        self.offset = offset;
        self
    }

    /// How long `next_id` waits for a block when none is leased (default 2 s).
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Checks the settings and starts the background leasing thread, which leases the
    /// first block at once.
    ///
    /// # Errors
    ///
    /// [`RangeConfigError`] for an empty or too long namespace, a block size of 0 or above
    /// 2^36, `min_block > block_size > max_block`, a prefetch fraction outside `(0, 1]`,
    /// `step` 0 or `offset >= step`.
    pub fn build(self) -> Result<RangeAllocator, RangeConfigError> {
        check_namespace(&self.namespace).map_err(RangeConfigError::Namespace)?;
        let invalid =
            |setting, message: String| Err(RangeConfigError::Invalid { setting, message });
        if self.block == 0 || self.block > MAX_BLOCK {
            return invalid(
                "block_size",
                format!("{} is out of range: expected 1 to {MAX_BLOCK}", self.block),
            );
        }
        let min = if self.min_block == 0 {
            self.block
        } else {
            self.min_block
        };
        let max = if self.max_block == 0 {
            self.block.saturating_mul(100).min(MAX_BLOCK)
        } else {
            self.max_block
        };
        if !(min <= self.block && self.block <= max && max <= MAX_BLOCK) {
            return invalid(
                "min_block/max_block",
                format!(
                    "need min_block <= block_size <= max_block <= {MAX_BLOCK}, got {min}, {}, {max}",
                    self.block
                ),
            );
        }
        if !(self.prefetch_at > 0.0 && self.prefetch_at <= 1.0) {
            return invalid(
                "prefetch_at",
                format!("{} is out of range: expected (0, 1]", self.prefetch_at),
            );
        }
        if self.step == 0 {
            return invalid("step", "must be at least 1".to_owned());
        }
        if self.offset >= self.step {
            return invalid(
                "offset",
                format!("{} must be below step {}", self.offset, self.step),
            );
        }
        let shared = Arc::new(Shared {
            cursor: AtomicU64::new(0),
            slots: [Slot::empty(), Slot::empty()],
            control: Mutex::new(Control {
                next_ready: false,
                wanted: true,
                last_error: None,
                block: self.block,
                last_lease: None,
                shutdown: false,
                leases: 0,
                failures: 0,
                waits: 0,
            }),
            to_leaser: Condvar::new(),
            to_waiters: Condvar::new(),
            store: Box::new(self.store),
            namespace: self.namespace,
            step: self.step,
            offset: self.offset,
            min_block: min,
            max_block: max,
            prefetch_at: self.prefetch_at,
            target_period: self.target_period,
            wait: self.wait,
        });
        // Epoch 0 is an empty block: the first draw switches to epoch 1 once leased.
        shared.slots[0].publish(0, 0, 0, 0);
        let worker = Arc::clone(&shared);
        let (leaser_done, leaser_gone) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("idkit-range-lease".to_owned())
            .spawn(move || {
                worker.lease_loop();
                // Let go of the store first: the allocator's drop waits for the second.
                drop(worker);
                drop(leaser_done);
            })
            .map_err(|e| RangeConfigError::Invalid {
                setting: "thread",
                message: format!("cannot start the leasing thread: {e}"),
            })?;
        Ok(RangeAllocator {
            shared,
            key: KEYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            leaser_gone: Mutex::new(leaser_gone),
        })
    }
}
