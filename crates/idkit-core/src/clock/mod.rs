//! Clocks: where generators read the time.
//!
//! Every clock reports Unix milliseconds. Which one to use:
//!
//! | clock | cost of a read | immune to the wall clock stepping back | notes |
//! |---|---|---|---|
//! | [`SystemClock`] | one vDSO `clock_gettime` (~20 ns, no system call on Linux) | no | follows NTP steps, both ways |
//! | [`MonotonicClock`] | one vDSO `clock_gettime` | yes | anchored to the wall clock once, at construction |
//! | [`TickerClock`] (the default) | one relaxed atomic load (~1 ns); a monotonic read while its thread rests | yes | a background thread advances it every millisecond while it is read, and rests while it is not; readings lag by up to a millisecond, more while that thread waits for a CPU |
//! | [`ManualClock`] | one atomic load | n/a | tests set, advance and step it back by hand |
//!
//! Every generator reads a [`TickerClock`] unless given another clock (`with_clock`, or
//! `.clock(...)` on a Snowflake builder): one thread per process buys a clock read of about
//! a nanosecond, where [`MonotonicClock`]'s costs about 20 and was most of the cost of an
//! id. A generator under a worker-id lease reads the lease guard's [`MonotonicClock`]
//! instead, so that the lease is judged on a clock that never lags.
//!
//! A clock also knows how to *wait* until a given millisecond, so that a generator whose
//! sequence is exhausted, or whose clock went back, can wait without knowing the clock's
//! kind. [`ManualClock`] waits by moving itself forward, so tests never sleep.

use core::fmt::Debug;
use core::sync::atomic::{AtomicU64, Ordering};

use alloc::sync::Arc;
#[cfg(feature = "std")]
use std::time::{Duration, Instant};

#[cfg(feature = "std")]
mod os;
#[cfg(feature = "std")]
pub(crate) use os::restart_ticker_after_fork;
#[cfg(feature = "tokio")]
pub(crate) use os::sleep_until;
#[cfg(feature = "std")]
pub use os::{MonotonicClock, SystemClock, TickerClock};

/// The clock a generator reads unless given another: [`TickerClock`] with `std`.
#[cfg(feature = "std")]
pub type DefaultClock = TickerClock;
/// The clock a generator reads unless given another: none without `std` ([`NoClock`], a type
/// with no values: a generator is given its platform's clock).
#[cfg(not(feature = "std"))]
pub type DefaultClock = NoClock;

/// No clock: a type with no values, the default type of a generator's clock where the crate
/// has none of its own (without `std`). A generator that names it cannot be made; one given
/// a clock of the caller's does not name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoClock {}

impl Clock for NoClock {
    fn now_ms(&self) -> u64 {
        match *self {}
    }
}

/// A source of Unix-millisecond timestamps.
pub trait Clock: Send + Sync + Debug {
    /// The current time, in milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;

    /// Waits until [`Clock::now_ms`] reads at least `target_ms`, and returns the last
    /// reading.
    ///
    /// The wait is also bounded by real time: it returns after `target_ms - now` ms (plus
    /// one) even if the clock has not got there, so a clock stepped back during the wait
    /// cannot block the caller for as long as it went back. Callers re-read and re-decide.
    ///
    /// The default, for a clock that only reads whole milliseconds, sleeps for all but the
    /// last millisecond and spins for that one. The clocks of this module know the instant
    /// their reading turns, so they sleep until just before it and spin at most
    /// 100 µs: a sleep wakes late by the timer slack, which would cost a generator at its
    /// cap part of the next tick's ids, while a waiting thread that spins for a whole
    /// millisecond takes a core from whatever else runs.
    #[cfg(feature = "std")]
    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        let start = self.now_ms();
        if start >= target_ms {
            return start;
        }
        let deadline = Instant::now() + Duration::from_millis(target_ms - start + 1);
        loop {
            let now = self.now_ms();
            if now >= target_ms {
                return now;
            }
            let real_now = Instant::now();
            if real_now >= deadline {
                // Read again: this thread may have been descheduled between the two reads.
                return self.now_ms();
            }
            let left = Duration::from_millis(target_ms - now).min(deadline - real_now);
            if left > Duration::from_millis(1) {
                std::thread::sleep(left - Duration::from_millis(1));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Without `std` there is no sleep and no real time to bound the wait by: the default
    /// reads the clock until it gets there, hinting the processor that it spins. A clock of
    /// a platform that can sleep or wait for an interrupt should say so here.
    #[cfg(not(feature = "std"))]
    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        loop {
            let now = self.now_ms();
            if now >= target_ms {
                return now;
            }
            core::hint::spin_loop();
        }
    }

    /// False for a clock whose wait takes no real time ([`ManualClock`] moves itself
    /// forward): the async API ([`nonblocking`](crate::nonblocking)) then lets a generator
    /// wait on it as usual instead of awaiting real time it does not follow.
    fn wait_blocks(&self) -> bool {
        true
    }

    /// The current time in nanoseconds since 1970-01-01T00:00:00Z, for a layout that keeps
    /// part of the millisecond (UUIDv7's RFC 9562 method 3). By default [`now_ms`]'s
    /// millisecond with no fraction; [`SystemClock`] reads the wall clock's nanoseconds.
    ///
    /// [`now_ms`]: Clock::now_ms
    fn now_ns(&self) -> u64 {
        self.now_ms().saturating_mul(1_000_000)
    }

    /// The `Instant` at which this clock will read `target_ms`, where the clock knows it
    /// (the clocks of this module do; `None` by default). The async API
    /// ([`nonblocking`](crate::nonblocking)) uses it to end a short wait on time.
    #[cfg(feature = "std")]
    fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
        let _ = target_ms;
        None
    }
}

/// `Clock` through a shared pointer or a reference: the pointee's, every method.
macro_rules! forward_clock {
    ($($pointer:ty),*) => {$(
        impl<C: Clock + ?Sized> Clock for $pointer {
            #[inline]
            fn now_ms(&self) -> u64 {
                (**self).now_ms()
            }
            #[inline]
            fn now_ns(&self) -> u64 {
                (**self).now_ns()
            }
            fn wait_until_ms(&self, target_ms: u64) -> u64 {
                (**self).wait_until_ms(target_ms)
            }
            fn wait_blocks(&self) -> bool {
                (**self).wait_blocks()
            }
            #[cfg(feature = "std")]
            fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
                (**self).instant_at_ms(target_ms)
            }
        }
    )*};
}

forward_clock!(Arc<C>, &C);

/// A clock that only moves when told to: for tests and deterministic vectors.
///
/// Waiting on it ([`Clock::wait_until_ms`]) moves it forward to the target at once and
/// counts the wait, so code that would sleep on a real clock runs instantly and tests can
/// check that it waited.
///
/// # Examples
///
/// ```
/// use idkit_core::clock::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(5);
/// assert_eq!(clock.now_ms(), 1_005);
/// clock.step_back(10);
/// assert_eq!(clock.now_ms(), 995);
/// assert_eq!(clock.wait_until_ms(1_000), 1_000);
/// assert_eq!(clock.waits(), 1);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
    waits: AtomicU64,
}

impl ManualClock {
    /// A clock reading `unix_ms`.
    pub fn new(unix_ms: u64) -> Self {
        Self {
            now: AtomicU64::new(unix_ms),
            waits: AtomicU64::new(0),
        }
    }

    /// Sets the time.
    pub fn set(&self, unix_ms: u64) {
        self.now.store(unix_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms` (saturating at `u64::MAX`).
    pub fn advance(&self, ms: u64) {
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(ms))
            });
    }

    /// Moves the time backwards by `ms` (saturating at 0).
    pub fn step_back(&self, ms: u64) {
        let _ = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_sub(ms))
            });
    }

    /// How many times a caller waited on this clock.
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        self.waits.fetch_add(1, Ordering::SeqCst);
        let before = self.now.fetch_max(target_ms, Ordering::SeqCst);
        before.max(target_ms)
    }

    /// Its wait moves it forward at once: nothing to defer.
    fn wait_blocks(&self) -> bool {
        false
    }
}
