//! The allocator: a double-buffered pair of block slots read through a seqlock, one atomic
//! word for the cursor, and a background thread that leases.

use std::cell::RefCell;
use std::fmt;

// The cursor and the block slots are the lock-free part; `RUSTFLAGS="--cfg loom"` swaps in
// loom's atomics for the model check in `loom_model` below.
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use idkit_core::{Alphabet, Coordination, GenerateError, IdScheme, SchemeInfo};

use crate::store::{Store, StoreError, check_namespace};

/// Bits of the cursor word for the offset within the current block; the other 24 hold the
/// block's epoch, which wraps after 2^24 block switches. A reader delayed between its draw
/// and its slot read across exactly a multiple of 2^24 switches could take the new block
/// for its own: not reachable in practice (blocks last milliseconds or more).
const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// The largest block: offsets must stay below 2^40 even with every thread overdrawing.
const MAX_BLOCK: u64 = 1 << 36;
/// Where a spent block's cursor is parked: above any block, far below the epoch bits, so
/// draws on a spent block can never carry into the epoch.
const PARKED: u64 = 1 << 39;
/// Most offsets one draw takes.
const MAX_DRAW: u64 = 1 << 20;
/// Ids a thread takes from the shared cursor at once and then hands out from its own cache,
/// so threads sharing an allocator do not contend on the cursor for every id.
const THREAD_CHUNK: u64 = 64;
/// Allocators a thread keeps a cache for.
const THREAD_CACHES: usize = 8;
/// A slot being rewritten.
const WRITING: u64 = u64::MAX;
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

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
    store: S,
    namespace: String,
    block: u64,
    min_block: u64,
    max_block: u64,
    prefetch_at: f64,
    target_period: Duration,
    step: u64,
    offset: u64,
    wait: Duration,
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

    /// Interleaving: ids are `counter * step + offset` (default step 1, offset 0).
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
            changed: Condvar::new(),
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
        std::thread::Builder::new()
            .name("idkit-range-lease".to_owned())
            .spawn(move || worker.lease_loop())
            .map_err(|e| RangeConfigError::Invalid {
                setting: "thread",
                message: format!("cannot start the leasing thread: {e}"),
            })?;
        Ok(RangeAllocator {
            shared,
            key: KEYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }
}

/// Counts since the allocator was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RangeStats {
    /// Blocks leased.
    pub leases: u64,
    /// Failed lease attempts.
    pub store_errors: u64,
    /// Size of the next block to lease.
    pub block_size: u64,
    /// Times a caller found its block spent with the next one not leased yet, and so
    /// waited on the store (0 while double buffering keeps up).
    pub waits: u64,
}

/// Hands out 64-bit ids from leased blocks; see the crate docs. Share it with an `Arc`.
///
/// Each thread takes up to 64 ids from the shared cursor at once and hands them out from a
/// thread-local cache, so threads do not contend per id. Ids a thread has cached but not
/// used when it exits, or when the allocator is dropped, become gaps.
pub struct RangeAllocator {
    shared: Arc<Shared>,
    /// Distinguishes this allocator in the thread-local caches.
    key: u64,
}

/// One thread's cached run of ids of one allocator: `next`, `next + step`, ... (`left` of
/// them).
#[derive(Clone, Copy)]
struct Cached {
    key: u64,
    next: u64,
    left: u64,
    step: u64,
}

thread_local! {
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

static KEYS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl fmt::Debug for RangeAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RangeAllocator")
            .field("store", &self.shared.store.describe())
            .field("namespace", &self.shared.namespace)
            .finish_non_exhaustive()
    }
}

struct Slot {
    /// Epoch of the block held, or [`WRITING`].
    epoch: AtomicU64,
    first_id: AtomicU64,
    len: AtomicU64,
    prefetch_offset: AtomicU64,
}

impl Slot {
    fn empty() -> Self {
        Self {
            epoch: AtomicU64::new(WRITING),
            first_id: AtomicU64::new(0),
            len: AtomicU64::new(0),
            prefetch_offset: AtomicU64::new(u64::MAX),
        }
    }

    /// Seqlock write; callers hold the control lock and never write the current slot.
    fn publish(&self, epoch: u64, first_id: u64, len: u64, prefetch_offset: u64) {
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
    fn read(&self, epoch: u64) -> Option<(u64, u64, u64)> {
        let before = self.epoch.load(Ordering::Acquire);
        let first_id = self.first_id.load(Ordering::Relaxed);
        let len = self.len.load(Ordering::Relaxed);
        let prefetch = self.prefetch_offset.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let after = self.epoch.load(Ordering::Relaxed);
        (before == after && before == epoch).then_some((first_id, len, prefetch))
    }
}

struct Control {
    /// The slot after the current one holds a leased block.
    next_ready: bool,
    /// The leasing thread should lease (prefetch or exhaustion).
    wanted: bool,
    last_error: Option<StoreError>,
    block: u64,
    last_lease: Option<Instant>,
    shutdown: bool,
    leases: u64,
    failures: u64,
    waits: u64,
}

struct Shared {
    /// `epoch << 40 | offset`: the current block's epoch and the next offset to hand out.
    cursor: AtomicU64,
    slots: [Slot; 2],
    control: Mutex<Control>,
    changed: Condvar,
    store: Box<dyn Store>,
    namespace: String,
    step: u64,
    offset: u64,
    min_block: u64,
    max_block: u64,
    prefetch_at: f64,
    target_period: Duration,
    wait: Duration,
}

enum Draw {
    Ids(u64, u64),
    Exhausted(u64),
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes up to `n` offsets from the current block: `(first id, count)`.
    #[inline]
    fn draw(&self, n: u64) -> Draw {
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
    fn switch_from(&self, epoch: u64) {
        let next = (epoch + 1) & ((1 << (64 - OFFSET_BITS)) - 1);
        self.cursor.store(next << OFFSET_BITS, Ordering::Release);
    }

    #[cold]
    fn want_next(&self) {
        let mut c = self.lock();
        if !c.next_ready {
            c.wanted = true;
            self.changed.notify_all();
        }
    }

    /// The current block (epoch `epoch`) is spent: switch to the next one, waiting for it
    /// within `wait`, or fail when the store is unreachable.
    #[cold]
    fn refill(&self, epoch: u64) -> Result<(), GenerateError> {
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
                self.switch_from(epoch);
                c.next_ready = false;
                c.wanted = false;
                self.changed.notify_all();
                return Ok(());
            }
            c.wanted = true;
            self.changed.notify_all();
            if !std::mem::replace(&mut waited, true) {
                c.waits += 1;
            }
            if let Some(error) = &c.last_error {
                return Err(GenerateError::unavailable(format!(
                    "{error}; every leased id is used"
                )));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(GenerateError::unavailable(format!(
                    "range store {} gave no block within {} ms",
                    self.store.describe(),
                    self.wait.as_millis()
                )));
            }
            c = self
                .changed
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The leasing thread: leases whenever asked, retrying with backoff while the store
    /// fails, until the allocator is dropped.
    fn lease_loop(&self) {
        let mut backoff = BACKOFF_MIN;
        let mut c = self.lock();
        loop {
            while !c.shutdown && (!c.wanted || c.next_ready) {
                c = self.changed.wait(c).unwrap_or_else(PoisonError::into_inner);
            }
            if c.shutdown {
                return;
            }
            let size = c.block;
            drop(c);
            let result = self.store.lease(&self.namespace, size);
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
                    match self.first_id(lease.first) {
                        Some(first_id) => {
                            let current = self.cursor.load(Ordering::Acquire) >> OFFSET_BITS;
                            let next = (current + 1) & ((1 << (64 - OFFSET_BITS)) - 1);
                            let len = lease.len();
                            #[allow(
                                clippy::cast_possible_truncation,
                                clippy::cast_sign_loss,
                                clippy::cast_precision_loss
                            )]
                            let prefetch = ((len as f64) * self.prefetch_at) as u64;
                            let prefetch = prefetch.min(len.saturating_sub(1));
                            let last_ok = self.first_id(lease.last).is_some();
                            let len = if last_ok { len } else { 0 };
                            self.slots[usize::from(next % 2 == 1)]
                                .publish(next, first_id, len, prefetch);
                            c.next_ready = len > 0;
                            if len == 0 {
                                c.last_error = Some(StoreError::Exhausted);
                            }
                        }
                        None => c.last_error = Some(StoreError::Exhausted),
                    }
                    c.wanted = false;
                }
                Err(error) => {
                    c.failures += 1;
                    let permanent = !matches!(error, StoreError::Unreachable(_));
                    c.last_error = Some(error);
                    self.changed.notify_all();
                    if permanent {
                        c.wanted = false;
                        continue;
                    }
                    // Retry after the backoff, unless dropped meanwhile.
                    c = self
                        .changed
                        .wait_timeout_while(c, backoff, |c| !c.shutdown)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    continue;
                }
            }
            self.changed.notify_all();
        }
    }

    /// The id of counter value `counter`, if it fits 64 bits.
    fn first_id(&self, counter: u64) -> Option<u64> {
        counter.checked_mul(self.step)?.checked_add(self.offset)
    }
}

impl RangeAllocator {
    /// Starts configuring an allocator over `store`.
    pub fn builder<S: Store>(store: S) -> RangeBuilder<S> {
        RangeBuilder {
            store,
            namespace: "default".to_owned(),
            block: 1_000,
            min_block: 0,
            max_block: 0,
            prefetch_at: 0.2,
            target_period: Duration::from_secs(10),
            step: 1,
            offset: 0,
            wait: Duration::from_secs(2),
        }
    }

    /// Leases, failures and the next block size so far.
    pub fn stats(&self) -> RangeStats {
        let c = self.shared.lock();
        RangeStats {
            leases: c.leases,
            store_errors: c.failures,
            block_size: c.block,
            waits: c.waits,
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// Takes up to `n` ids from this thread's cache: `(first, count)`.
    #[inline]
    fn cached(&self, n: u64) -> Option<(u64, u64)> {
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let entry = cache.iter_mut().find(|c| c.key == self.key)?;
            if entry.left == 0 {
                return None;
            }
            let count = n.min(entry.left);
            let first = entry.next;
            entry.next += count * entry.step;
            entry.left -= count;
            Some((first, count))
        })
    }

    /// Caches `left` ids from `next` for this thread.
    fn keep(&self, next: u64, left: u64) {
        let entry = Cached {
            key: self.key,
            next,
            left,
            step: self.shared.step,
        };
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(slot) = cache.iter_mut().find(|c| c.key == self.key) {
                *slot = entry;
            } else {
                if cache.len() >= THREAD_CACHES {
                    cache.remove(0);
                }
                cache.push(entry);
            }
        });
    }
}

impl Drop for RangeAllocator {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
    }
}

impl IdScheme for RangeAllocator {
    type Id = u64;

    /// The next id: from the current block without touching the store.
    ///
    /// # Errors
    ///
    /// [`GenerateErrorKind::Unavailable`](idkit_core::GenerateErrorKind::Unavailable) when every leased id is used and the store cannot
    /// give another block (the message names the store's error), or gave none within the
    /// configured wait.
    #[inline]
    fn next_id(&self) -> Result<u64, GenerateError> {
        if let Some(id) = self.cached(1).map(|(id, _)| id) {
            return Ok(id);
        }
        loop {
            match self.shared.draw(THREAD_CHUNK) {
                Draw::Ids(first, count) => {
                    if count > 1 {
                        self.keep(first + self.shared.step, count - 1);
                    }
                    return Ok(first);
                }
                Draw::Exhausted(epoch) => self.shared.refill(epoch)?,
            }
        }
    }

    fn fill(&self, out: &mut [u64]) -> Result<(), GenerateError> {
        let step = self.shared.step;
        let mut at = 0;
        let write = |out: &mut [u64], at: &mut usize, first: u64, count: u64| {
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            for (i, slot) in out[*at..].iter_mut().take(count).enumerate() {
                *slot = first + (i as u64) * step;
            }
            *at += count;
        };
        // This thread's cached ids come first, so its ids keep increasing.
        if let Some((first, count)) = self.cached(u64::try_from(out.len()).unwrap_or(u64::MAX)) {
            write(out, &mut at, first, count);
        }
        while at < out.len() {
            let want = u64::try_from(out.len() - at)
                .unwrap_or(u64::MAX)
                .min(MAX_DRAW);
            match self.shared.draw(want) {
                Draw::Ids(first, count) => write(out, &mut at, first, count),
                Draw::Exhausted(epoch) => self.shared.refill(epoch)?,
            }
        }
        Ok(())
    }

    fn info(&self) -> SchemeInfo {
        INFO
    }
}

/// The facts of range ids: 64-bit decimal counters, no time, a shared store.
pub const INFO: SchemeInfo = SchemeInfo::new("range", 64)
    .with_string(Alphabet::DECIMAL, 20)
    .with_coordination(Coordination::Store);

/// Model check of the lock-free part: draws racing a refill (the switch to the next block)
/// and a slot being rewritten under a delayed reader. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p idkit-range --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc as LoomArc;

    #[derive(Debug)]
    struct NoStore;

    impl Store for NoStore {
        fn lease(&self, _: &str, _: u64) -> Result<crate::Lease, StoreError> {
            Err(StoreError::Unreachable("not used by the model".to_owned()))
        }
        fn describe(&self) -> String {
            "none".to_owned()
        }
    }

    /// Epoch 1 current: ids 100 and 101.
    fn shared() -> Shared {
        let s = Shared {
            cursor: AtomicU64::new(1 << OFFSET_BITS),
            slots: [Slot::empty(), Slot::empty()],
            control: Mutex::new(Control {
                next_ready: false,
                wanted: false,
                last_error: None,
                block: 2,
                last_lease: None,
                shutdown: true,
                leases: 0,
                failures: 0,
                waits: 0,
            }),
            changed: Condvar::new(),
            store: Box::new(NoStore),
            namespace: "model".to_owned(),
            step: 1,
            offset: 0,
            min_block: 2,
            max_block: 2,
            prefetch_at: 1.0,
            target_period: Duration::from_secs(1),
            wait: Duration::from_millis(1),
        };
        s.slots[1].publish(1, 100, 2, u64::MAX);
        s
    }

    fn take(s: &Shared) -> Option<u64> {
        match s.draw(1) {
            Draw::Ids(id, _) => Some(id),
            Draw::Exhausted(_) => None,
        }
    }

    #[test]
    fn loom_draws_racing_a_refill_never_duplicate() {
        loom::model(|| {
            let s = LoomArc::new(shared());
            let other = LoomArc::clone(&s);
            let t = loom::thread::spawn(move || [take(&other), take(&other)]);
            // The refiller: the next block (ids 200, 201) is published, and the switch
            // happens once a draw finds block 1 spent, as `refill` does.
            s.slots[0].publish(2, 200, 2, u64::MAX);
            let mut mine = Vec::new();
            loop {
                match s.draw(1) {
                    Draw::Ids(id, _) => mine.push(id),
                    Draw::Exhausted(1) => {
                        s.switch_from(1);
                        break;
                    }
                    Draw::Exhausted(_) => break,
                }
            }
            mine.extend(take(&s));
            let theirs = t.join().unwrap();
            let mut all: Vec<u64> = mine
                .into_iter()
                .chain(theirs.into_iter().flatten())
                .collect();
            assert!(
                all.iter().all(|id| [100, 101, 200, 201].contains(id)),
                "{all:?}"
            );
            let n = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), n, "duplicate id");
        });
    }

    #[test]
    fn loom_a_rewritten_slot_is_never_read_as_the_old_block() {
        loom::model(|| {
            let s = LoomArc::new(shared());
            let reader = LoomArc::clone(&s);
            let t = loom::thread::spawn(move || take(&reader));
            // Block 1 is replaced by block 2 in the other slot, then slot 1 is rewritten
            // with block 3 (ids 300, 301) while the reader may still hold epoch 1.
            s.slots[0].publish(2, 200, 2, u64::MAX);
            s.switch_from(1);
            s.slots[1].publish(3, 300, 2, u64::MAX);
            let got = t.join().unwrap();
            assert!(
                got.is_none() || [100, 200].contains(&got.unwrap()),
                "{got:?}"
            );
        });
    }
}
