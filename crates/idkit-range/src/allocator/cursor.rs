//! The lock-free part: two block slots read through a seqlock, the cursor word, and the
//! leasing state the background thread shares with the callers.

// The cursor and the block slots are the lock-free part; `RUSTFLAGS="--cfg loom"` swaps in
// loom's atomics for the model check in `loom_model` below.
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use idkit_core::GenerateError;

use crate::store::{Interleave, Store, StoreError};

use super::*;

pub(super) struct Slot {
    /// Epoch of the block held, or [`WRITING`].
    pub(super) epoch: AtomicU64,
    pub(super) first_id: AtomicU64,
    pub(super) len: AtomicU64,
    pub(super) prefetch_offset: AtomicU64,
}

impl Slot {
    pub(super) fn empty() -> Self {
        Self {
            epoch: AtomicU64::new(WRITING),
            first_id: AtomicU64::new(0),
            len: AtomicU64::new(0),
            prefetch_offset: AtomicU64::new(u64::MAX),
        }
    }

    /// Seqlock write; callers hold the control lock and never write the current slot.
    pub(super) fn publish(&self, epoch: u64, first_id: u64, len: u64, prefetch_offset: u64) {
        self.epoch.store(WRITING, Ordering::Relaxed);
        fence(Ordering::Release);
        self.first_id.store(first_id, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.prefetch_offset
            .store(prefetch_offset, Ordering::Relaxed);
        self.epoch.store(epoch, Ordering::Release);
    }

    /// Seqlock read: `(first_id, len, prefetch_offset)` if the slot holds `epoch`.
    #[inline]
    pub(super) fn read(&self, epoch: u64) -> Option<(u64, u64, u64)> {
        let before = self.epoch.load(Ordering::Acquire);
        let first_id = self.first_id.load(Ordering::Relaxed);
        let len = self.len.load(Ordering::Relaxed);
        let prefetch = self.prefetch_offset.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let after = self.epoch.load(Ordering::Relaxed);
        (before == after && before == epoch).then_some((first_id, len, prefetch))
    }
}

pub(super) struct Control {
    /// The slot after the current one holds a leased block.
    pub(super) next_ready: bool,
    /// The leasing thread should lease (prefetch or exhaustion).
    pub(super) wanted: bool,
    pub(super) last_error: Option<StoreError>,
    pub(super) block: u64,
    pub(super) last_lease: Option<Instant>,
    pub(super) shutdown: bool,
    pub(super) leases: u64,
    pub(super) failures: u64,
    pub(super) waits: u64,
}

pub(super) struct Shared {
    /// `epoch << 40 | offset`: the current block's epoch and the next offset to hand out.
    pub(super) cursor: AtomicU64,
    pub(super) slots: [Slot; 2],
    pub(super) control: Mutex<Control>,
    /// The leasing thread sleeps here until a lease is wanted or the allocator is dropped;
    /// notified once per request (when `wanted` turns true).
    pub(super) to_leaser: Condvar,
    /// Callers waiting for a block sleep here until the block they wait on is no longer
    /// current or the leasing thread has news: a block published, a failure, the end.
    /// Waiters never notify each other, except the one that switches blocks.
    pub(super) to_waiters: Condvar,
    pub(super) store: Box<dyn Store>,
    pub(super) namespace: String,
    pub(super) step: u64,
    pub(super) offset: u64,
    pub(super) min_block: u64,
    pub(super) max_block: u64,
    pub(super) prefetch_at: f64,
    pub(super) target_period: Duration,
    pub(super) wait: Duration,
}

pub(super) enum Draw {
    Ids(u64, u64),
    Exhausted(u64),
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes up to `n` offsets from the current block: `(first id, count)`.
    #[inline]
    pub(super) fn draw(&self, n: u64) -> Draw {
        let word = self.cursor.fetch_add(n, Ordering::Acquire);
        let epoch = word >> OFFSET_BITS;
        let off = word & OFFSET_MASK;
        let Some((first_id, len, prefetch)) = self.slots[usize::from(epoch % 2 == 1)].read(epoch)
        else {
            return Draw::Exhausted(epoch);
        };
        if off >= len {
            return Draw::Exhausted(epoch);
        }
        if off <= prefetch && prefetch < off + n {
            self.want_next();
        }
        let count = n.min(len - off);
        Draw::Ids(first_id + off * self.step, count)
    }

    /// Makes the block after `epoch` current (its slot is published).
    pub(super) fn switch_from(&self, epoch: u64) {
        let next = (epoch + 1) & ((1 << (64 - OFFSET_BITS)) - 1);
        self.cursor.store(next << OFFSET_BITS, Ordering::Release);
    }

    #[cold]
    pub(super) fn want_next(&self) {
        let mut c = self.lock();
        self.ask_leaser(&mut c);
    }

    /// Asks the leasing thread for the next block, unless it has it or was asked already:
    /// one notification per request, however many threads find the block spent. Once the
    /// interleave's ids are spent it asks no more: the store's counter only grows, so every
    /// later block would start past the last id too.
    fn ask_leaser(&self, c: &mut Control) {
        let spent = matches!(c.last_error, Some(StoreError::IdsSpent { .. }));
        if !c.next_ready && !c.wanted && !spent {
            c.wanted = true;
            self.to_leaser.notify_one();
        }
    }

    /// The allocator is dropped: the leasing thread ends and no one waits any longer.
    pub(super) fn shut_down(&self) {
        self.lock().shutdown = true;
        self.to_leaser.notify_one();
        self.to_waiters.notify_all();
    }

    /// The current block (epoch `epoch`) is spent: switch to the next one, waiting for it
    /// within `wait`, or fail when the store is unreachable.
    #[cold]
    pub(super) fn refill(&self, epoch: u64) -> Result<(), GenerateError> {
        let deadline = Instant::now() + self.wait;
        let mut waited = false;
        let mut c = self.lock();
        loop {
            let current = self.cursor.load(Ordering::Acquire) >> OFFSET_BITS;
            if current != epoch {
                return Ok(());
            }
            // Every draw on this block from now on misses; keep the offset low.
            self.cursor
                .store((epoch << OFFSET_BITS) | PARKED, Ordering::Release);
            if c.next_ready {
                // The next slot was published under this lock before `next_ready` was set.
                // The others waiting on this block wake to find it switched.
                self.switch_from(epoch);
                c.next_ready = false;
                c.wanted = false;
                self.to_waiters.notify_all();
                return Ok(());
            }
            self.ask_leaser(&mut c);
            if !std::mem::replace(&mut waited, true) {
                c.waits += 1;
            }
            if let Some(error) = &c.last_error {
                return Err(GenerateError::unavailable(format!(
                    "{error}; every leased id is used"
                )));
            }
            let give_up = || {
                format!(
                    "range store {} gave no block within {} ms",
                    self.store.describe(),
                    self.wait.as_millis()
                )
            };
            if idkit_core::nonblocking::deferring() {
                // An async caller: it awaits and asks again (the leasing thread is asked),
                // and gives up after the same wait.
                return Err(GenerateError::would_wait(
                    DEFERRED_POLL,
                    Some((self.wait, give_up())),
                ));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(GenerateError::unavailable(give_up()));
            }
            // Sleeps until the leasing thread publishes, fails or ends, another waiter
            // switches blocks, or the deadline passes.
            c = self
                .to_waiters
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The leasing thread: leases whenever asked, retrying with backoff while the store
    /// fails, until the allocator is dropped.
    pub(super) fn lease_loop(&self) {
        let mut backoff = BACKOFF_MIN;
        // The store agreed to this allocator's interleave (asked before the first lease).
        let mut agreed = false;
        let mut c = self.lock();
        loop {
            while !c.shutdown && (!c.wanted || c.next_ready) {
                c = self
                    .to_leaser
                    .wait(c)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if c.shutdown {
                return;
            }
            let size = c.block;
            drop(c);
            let result = self
                .agree(&mut agreed)
                .and_then(|()| self.store.lease(&self.namespace, size));
            c = self.lock();
            match result {
                Ok(lease) => {
                    backoff = BACKOFF_MIN;
                    c.last_error = None;
                    c.leases += 1;
                    let now = Instant::now();
                    if let Some(previous) = c.last_lease {
                        let took = now - previous;
                        if took < self.target_period / 2 {
                            c.block = (c.block.saturating_mul(2)).min(self.max_block);
                        } else if took > self.target_period.saturating_mul(2) {
                            c.block = (c.block / 2).max(self.min_block);
                        }
                    }
                    c.last_lease = Some(now);
                    // A block that passes the last counter whose id fits 64 bits is cut
                    // there; one that starts past it leaves the namespace's ids spent.
                    let last = self.last_counter().min(lease.last);
                    if lease.first <= last {
                        // At most the last id that fits.
                        let first_id = lease.first * self.step + self.offset;
                        let current = self.cursor.load(Ordering::Acquire) >> OFFSET_BITS;
                        let next = (current + 1) & ((1 << (64 - OFFSET_BITS)) - 1);
                        let len = last - lease.first + 1;
                        #[allow(
                            clippy::cast_possible_truncation,
                            clippy::cast_sign_loss,
                            clippy::cast_precision_loss
                        )]
                        let prefetch = ((len as f64) * self.prefetch_at) as u64;
                        let prefetch = prefetch.min(len.saturating_sub(1));
                        self.slots[usize::from(next % 2 == 1)]
                            .publish(next, first_id, len, prefetch);
                        c.next_ready = true;
                    } else {
                        c.last_error = Some(StoreError::IdsSpent {
                            namespace: self.namespace.clone(),
                            interleave: Interleave {
                                step: self.step,
                                offset: self.offset,
                            },
                            last_id: self.last_counter() * self.step + self.offset,
                        });
                    }
                    c.wanted = false;
                }
                Err(error) => {
                    c.failures += 1;
                    let permanent = !matches!(error, StoreError::Unreachable(_));
                    c.last_error = Some(error);
                    self.to_waiters.notify_all();
                    if permanent {
                        c.wanted = false;
                        continue;
                    }
                    // Retry after the backoff, unless dropped meanwhile.
                    c = self
                        .to_leaser
                        .wait_timeout_while(c, backoff, |c| !c.shutdown)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    continue;
                }
            }
            self.to_waiters.notify_all();
        }
    }

    /// Asks the store for the namespace's interleave until it answers once with this
    /// allocator's ([`Store::interleave`]).
    fn agree(&self, agreed: &mut bool) -> Result<(), StoreError> {
        if *agreed {
            return Ok(());
        }
        let asked = Interleave {
            step: self.step,
            offset: self.offset,
        };
        let kept = self.store.interleave(&self.namespace, asked)?;
        if kept != asked {
            return Err(StoreError::Interleave {
                namespace: self.namespace.clone(),
                kept,
                asked,
            });
        }
        *agreed = true;
        Ok(())
    }

    /// The last counter value whose id, `counter * step + offset`, fits 64 bits (the builder
    /// keeps `offset < step`).
    fn last_counter(&self) -> u64 {
        (u64::MAX - self.offset) / self.step
    }
}
