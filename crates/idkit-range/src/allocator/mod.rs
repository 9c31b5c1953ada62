//! The allocator: a double-buffered pair of block slots read through a seqlock, one atomic
//! word for the cursor, and a background thread that leases. `builder.rs` checks the
//! settings and starts the thread; `cursor.rs` holds the slots, the cursor and the leasing.

use std::cell::RefCell;
use std::fmt;

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use idkit_core::{Alphabet, Coordination, GenerateError, IdScheme, SchemeInfo};

use crate::store::Store;

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
/// How often an async caller ([`idkit_core::nonblocking`]) whose block is spent looks
/// again while the leasing thread works (it holds no thread meanwhile).
const DEFERRED_POLL: Duration = Duration::from_millis(2);
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

mod builder;
mod cursor;

pub use builder::{RangeBuilder, RangeConfigError};
use cursor::{Control, Draw, Shared, Slot};

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
/// used when it exits, or when the allocator is dropped, become gaps. Dropping it closes
/// its store before `drop` returns (waiting at most the configured `wait` for a lease in
/// flight).
pub struct RangeAllocator {
    shared: Arc<Shared>,
    /// Distinguishes this allocator in the thread-local caches.
    key: u64,
    /// Disconnected once the leasing thread has let go of the store: dropping the allocator
    /// waits for it.
    leaser_gone: Mutex<Receiver<()>>,
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
            entry.left -= count;
            // Past the last id there may be no 64-bit id: move on only to one still held.
            if entry.left > 0 {
                entry.next += count * entry.step;
            }
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
    /// Stops the leasing thread and waits until it has let go of the store (at most the
    /// configured wait, for a lease in flight), so that the store closes with the allocator:
    /// a SQLite file is checkpointed and its `-wal` file removed before `drop` returns,
    /// rather than while the process exits.
    fn drop(&mut self) {
        self.shared.shut_down();
        let gone = self
            .leaser_gone
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // Disconnected (or timed out, with a lease still in flight): either way, done.
        let _ = gone.recv_timeout(self.shared.wait);
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
    use std::sync::{Condvar, Mutex};

    use loom::sync::atomic::AtomicU64;

    use super::*;
    use crate::store::StoreError;
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
            to_leaser: Condvar::new(),
            to_waiters: Condvar::new(),
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
