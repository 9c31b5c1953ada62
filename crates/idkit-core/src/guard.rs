//! [`Guard`]: what a worker-id lease tells a generator, read without a lock or a system call.
//!
//! A generator whose worker id comes from a lease must stop issuing before anyone else can
//! be granted the same worker id, and must never issue an id at or below the high-water mark
//! recorded for it. The lease holder (the `idkit-lease` crate) and the generator share a
//! `Guard`:
//!
//! - the **fence**, one atomic: the generator's clock reading (Unix ms) before which the
//!   holder has proven the lease is its own. The holder raises it after each renewal; the
//!   generator checks it once per new tick, so ids of the same tick cost nothing more.
//! - the **floor**: the high-water mark found when the lease was granted. The generator
//!   starts as if its last id had been issued at the floor, so its first id is above it and
//!   a clock behind the floor is a clock that went back (its rollback policy decides: wait
//!   or fail).
//! - the **clock** the generator must read, a [`MonotonicClock`], so that the fence is
//!   judged on the monotonic clock: stepping the wall clock back cannot extend it, and a
//!   process paused (`SIGSTOP`, a VM freeze) past the fence finds it closed when it resumes.
//!
//! Guarantee: every id a guarded generator issues in tick `t` was issued while
//! `end(t) <= fence` held at the start of tick `t`. An id therefore carries a time below the
//! fence, and was issued before the fence in monotonic time.
//!
//! Why one relaxed-enough atomic suffices: the fence holds a time, not a permission. Every
//! value the holder ever stores was proven by a renewal (it ends before the grantor could
//! expire the lease, and the high-water mark was recorded at or above it first), so a
//! generator that reads a value a moment stale, even one stored just before a
//! [`close`](Guard::close), issues only in ticks that lease covered. Memory ordering decides
//! which proven value a generator sees, never whether what it issues is safe; the
//! lock-free generator's own atomic, which does decide ids, is model-checked with loom.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::{Clock, MonotonicClock};

/// The shared state between a lease holder and one generator. Cheap to clone (an [`Arc`]).
///
/// # Examples
///
/// ```
/// use idkit_core::guard::Guard;
/// use idkit_core::Clock;
///
/// let guard = Guard::new(0);
/// let now = guard.clock().now_ms();
/// assert!(!guard.allows(now, 1), "closed until the holder proves the lease");
/// guard.open_until(now + 10_000);
/// assert!(guard.allows(now, 1));
/// guard.close();
/// assert!(!guard.allows(now, 1));
/// ```
#[derive(Clone)]
pub struct Guard {
    state: Arc<State>,
    clock: MonotonicClock,
}

struct State {
    /// Clock reading (Unix ms) up to which issuing is proven safe; 0 when closed.
    fence_ms: AtomicU64,
    /// High-water mark at grant time (Unix ms): ids must carry a later time.
    floor_ms: u64,
    /// How far ahead of its clock the generator may issue (a logical-clock policy), so the
    /// holder can bound the times issued when it releases the lease.
    max_ahead_ms: AtomicU64,
    /// The generator's tick length in ms (its builder records it), so that the holder
    /// knows when a tick started before a close has ended.
    tick_ms: AtomicU64,
}

impl Guard {
    /// A closed guard over a new [`MonotonicClock`], whose generator must issue only ids
    /// with a time after `floor_ms` (Unix ms; 0 for none).
    pub fn new(floor_ms: u64) -> Self {
        Self::with_clock(floor_ms, MonotonicClock::new())
    }

    /// A closed guard over `clock` (so that a holder can time a grant on the same clock
    /// before it knows the floor).
    pub fn with_clock(floor_ms: u64, clock: MonotonicClock) -> Self {
        Self {
            state: Arc::new(State {
                fence_ms: AtomicU64::new(0),
                floor_ms,
                max_ahead_ms: AtomicU64::new(0),
                tick_ms: AtomicU64::new(1),
            }),
            clock,
        }
    }

    /// The clock the guarded generator must read (the fence is in its milliseconds).
    #[inline]
    pub fn clock(&self) -> MonotonicClock {
        self.clock
    }

    /// The high-water mark found at grant time (Unix ms).
    pub fn floor_ms(&self) -> u64 {
        self.state.floor_ms
    }

    /// The fence: clock reading up to which issuing is proven safe (0 when closed).
    pub fn fence_ms(&self) -> u64 {
        self.state.fence_ms.load(Ordering::Acquire)
    }

    /// Moves the fence to `fence_ms` (the holder calls this after a successful renewal).
    pub fn open_until(&self, fence_ms: u64) {
        self.state.fence_ms.store(fence_ms, Ordering::Release);
    }

    /// Closes the fence: the generator issues nothing until [`open_until`](Self::open_until)
    /// is called again.
    pub fn close(&self) {
        self.state.fence_ms.store(0, Ordering::Release);
    }

    /// Closes the fence and returns once the generator can start nothing more: the tick it
    /// was in when the fence closed has ended (its tick length after the close, plus how
    /// far a logical clock may run ahead), or the old fence has passed, whichever is
    /// sooner. Returns the fence it closed (0 if it was closed already).
    ///
    /// The generator checks the fence once per tick, so after a plain [`close`](Self::close)
    /// it may finish the tick it is in; after `close_and_drain` returns, a caller that asks
    /// for an id gets [`GenerateErrorKind::Fenced`](crate::GenerateErrorKind::Fenced). (A
    /// thread that computed an id in the old tick and was descheduled before publishing it
    /// may still return it; its time is before the close plus the ahead bound, so a holder
    /// that records that as the high-water mark stays above it.) The lease holder calls
    /// this on release.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::guard::Guard;
    /// use idkit_core::Clock;
    ///
    /// let guard = Guard::new(0);
    /// guard.set_tick_ms(10);
    /// let opened = guard.clock().now_ms();
    /// guard.open_until(opened + 10_000);
    /// let closed_at = guard.clock().now_ms();
    /// assert_eq!(guard.close_and_drain(), opened + 10_000);
    /// assert!(guard.clock().now_ms() >= closed_at + 10, "waited out a 10 ms tick");
    /// assert_eq!(guard.close_and_drain(), 0, "closed already: no wait");
    /// ```
    pub fn close_and_drain(&self) -> u64 {
        let fence = self.state.fence_ms.swap(0, Ordering::AcqRel);
        if fence == 0 {
            return 0;
        }
        let until = self
            .clock
            .now_ms()
            .saturating_add(self.max_ahead_ms())
            .saturating_add(self.tick_ms())
            .min(fence);
        self.clock.wait_until_ms(until);
        fence
    }

    /// True when a generator whose clock reads `now_ms` may start a tick of `tick_ms`: the
    /// whole tick ends at or before the fence.
    #[inline]
    pub fn allows(&self, now_ms: u64, tick_ms: u64) -> bool {
        now_ms.saturating_add(tick_ms) <= self.state.fence_ms.load(Ordering::Acquire)
    }

    /// The error a generator returns when [`allows`](Self::allows) is false at `now_ms`.
    #[cold]
    pub fn refusal(&self, now_ms: u64) -> crate::GenerateError {
        match self.fence_ms() {
            0 => crate::GenerateError::fenced(0),
            fence => crate::GenerateError::fenced(now_ms.saturating_sub(fence).max(1)),
        }
    }

    /// Records that the generator may issue ids up to `ms` ahead of its clock (its
    /// builder calls this for a logical-clock policy).
    pub fn set_max_ahead_ms(&self, ms: u64) {
        self.state.max_ahead_ms.store(ms, Ordering::Release);
    }

    /// Records the generator's tick length in ms (its builder calls this).
    pub fn set_tick_ms(&self, ms: u64) {
        self.state.tick_ms.store(ms.max(1), Ordering::Release);
    }

    /// The generator's tick length in ms (1 until a builder records it).
    pub fn tick_ms(&self) -> u64 {
        self.state.tick_ms.load(Ordering::Acquire)
    }

    /// How far ahead of its clock the generator may issue, in ms.
    pub fn max_ahead_ms(&self) -> u64 {
        self.state.max_ahead_ms.load(Ordering::Acquire)
    }

    /// True when `self` and `other` are the same guard.
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field("fence_ms", &self.fence_ms())
            .field("floor_ms", &self.state.floor_ms)
            .field("now_ms", &self.clock.now_ms())
            .finish()
    }
}

impl PartialEq for Guard {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

impl Eq for Guard {}
