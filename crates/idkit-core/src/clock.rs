//! Clocks: where generators read the time.
//!
//! Every clock reports Unix milliseconds. Which one to use:
//!
//! | clock | cost of a read | immune to the wall clock stepping back | notes |
//! |---|---|---|---|
//! | [`SystemClock`] | one vDSO `clock_gettime` (~20 ns, no system call on Linux) | no | follows NTP steps, both ways |
//! | [`MonotonicClock`] | one vDSO `clock_gettime` | yes | anchored to the wall clock once, at construction |
//! | [`TickerClock`] (the default) | one relaxed atomic load (~1 ns) | yes | a background thread advances it every millisecond; readings lag by up to a millisecond, more while that thread waits for a CPU |
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

use std::fmt::Debug;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

    /// False for a clock whose wait takes no real time ([`ManualClock`] moves itself
    /// forward): the async API ([`nonblocking`](crate::nonblocking)) then lets a generator
    /// wait on it as usual instead of awaiting real time it does not follow.
    fn wait_blocks(&self) -> bool {
        true
    }

    /// The `Instant` at which this clock will read `target_ms`, where the clock knows it
    /// (the clocks of this module do; `None` by default). The async API
    /// ([`nonblocking`](crate::nonblocking)) uses it to end a short wait on time.
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
            fn wait_until_ms(&self, target_ms: u64) -> u64 {
                (**self).wait_until_ms(target_ms)
            }
            fn wait_blocks(&self) -> bool {
                (**self).wait_blocks()
            }
            fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
                (**self).instant_at_ms(target_ms)
            }
        }
    )*};
}

forward_clock!(Arc<C>, &C);

fn wall_ms() -> u64 {
    // A wall clock before 1970 is a broken machine, not an input: treat it as the epoch.
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    duration_ms(since)
}

fn duration_ms(d: Duration) -> u64 {
    // u64 milliseconds last 584 million years; saturate rather than wrap past that.
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The operating system's wall clock (`SystemTime::now`).
///
/// It follows every adjustment of the wall clock, including steps backwards; pair it with a
/// rollback policy, or prefer [`MonotonicClock`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        wall_ms()
    }

    /// Sleeps for as long as the wall clock says is left (to the microsecond), spinning
    /// only for the last 100 µs; a wall clock stepped meanwhile is the caller's
    /// to re-read.
    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        let left = Duration::from_millis(target_ms).checked_sub(since);
        if let Some(deadline) = left.and_then(|left| Instant::now().checked_add(left)) {
            sleep_until(deadline);
        }
        wall_ms()
    }

    fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        let left = Duration::from_millis(target_ms).saturating_sub(since);
        Instant::now().checked_add(left)
    }
}

/// The wall clock read once at construction, then advanced by the monotonic clock
/// (`Instant`).
///
/// While the process runs it never goes backwards, whatever NTP or an operator does to the
/// wall clock; it can drift from the wall clock by as much as the wall clock is stepped.
/// A restarted process re-anchors, so a wall clock that went back between runs is still
/// visible across restarts: persist the last id, or use a rollback policy, if that matters.
///
/// # Examples
///
/// ```
/// use idkit_core::clock::{Clock, MonotonicClock};
/// let clock = MonotonicClock::new();
/// let a = clock.now_ms();
/// assert!(clock.now_ms() >= a);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    anchor_ms: u64,
    anchor: Instant,
}

impl MonotonicClock {
    /// Anchors a new clock to the wall clock now.
    pub fn new() -> Self {
        Self {
            anchor_ms: wall_ms(),
            anchor: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        self.anchor_ms
            .saturating_add(duration_ms(self.anchor.elapsed()))
    }

    /// Sleeps until the instant the reading turns `target_ms` (it is known exactly: the
    /// anchor plus the difference), spinning only for the last 100 µs.
    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        sleep_until_ms(self.anchor_ms, self.anchor, target_ms);
        self.now_ms()
    }

    fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
        instant_at_ms(self.anchor_ms, self.anchor, target_ms)
    }
}

/// How long before a deadline a waiting thread stops sleeping and spins: a sleep on Linux
/// wakes up to the timer slack (50 µs by default) plus a wake-up's latency late, and a
/// generator at its cap that wakes late loses that part of the next tick's ids. Spinning
/// only this long keeps a waiting thread's CPU at about a tenth of the wait at most.
const SPIN_BEFORE: Duration = Duration::from_micros(100);

/// Waits until the `Instant` at which a clock anchored at (`anchor_ms`, `anchor`) reads
/// `target_ms`.
fn sleep_until_ms(anchor_ms: u64, anchor: Instant, target_ms: u64) {
    if let Some(deadline) = instant_at_ms(anchor_ms, anchor, target_ms) {
        sleep_until(deadline);
    }
}

/// The `Instant` at which a clock anchored at (`anchor_ms`, `anchor`) reads `target_ms`.
fn instant_at_ms(anchor_ms: u64, anchor: Instant, target_ms: u64) -> Option<Instant> {
    anchor.checked_add(Duration::from_millis(target_ms.saturating_sub(anchor_ms)))
}

/// Waits until `deadline`: asleep until [`SPIN_BEFORE`] ahead of it, then spinning.
pub(crate) fn sleep_until(deadline: Instant) {
    loop {
        let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
        else {
            return;
        };
        if left > SPIN_BEFORE {
            std::thread::sleep(left - SPIN_BEFORE);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Unix ms as last stored by the ticker thread; 0 until it starts.
static TICKER_NOW_MS: AtomicU64 = AtomicU64::new(0);
/// The ticker's anchor, set once when the ticker starts: the wall clock's Unix ms and the
/// `Instant` it was read at.
static TICKER_ANCHOR: OnceLock<(u64, Instant)> = OnceLock::new();

/// Brings the ticker's time up to the monotonic clock read against the anchor and returns
/// it: what the ticker thread does every millisecond, and what a waiting generator does
/// itself, so that a wait ends when the time has come even while the ticker thread waits
/// for a CPU.
fn advance(anchor_ms: u64, anchor: Instant) -> u64 {
    let now = anchor_ms.saturating_add(duration_ms(anchor.elapsed()));
    // fetch_max: the stored time never goes back, whoever stores it.
    TICKER_NOW_MS.fetch_max(now, Ordering::Relaxed).max(now)
}

/// [`advance`] from the ticker's anchor; the stored time if the ticker has not started.
fn tick_now() -> u64 {
    TICKER_ANCHOR.get().map_or_else(
        || TICKER_NOW_MS.load(Ordering::Relaxed),
        |&(anchor_ms, anchor)| advance(anchor_ms, anchor),
    )
}

fn start_ticker() {
    TICKER_ANCHOR.get_or_init(|| {
        let anchor_ms = wall_ms();
        let anchor = Instant::now();
        TICKER_NOW_MS.store(anchor_ms, Ordering::Relaxed);
        if let Err(e) = spawn_ticker(anchor_ms, anchor) {
            panic!("idkit: cannot start the ticker thread: {e}");
        }
        (anchor_ms, anchor)
    });
}

/// The process the ticker thread runs in (0 before it starts): a forked child finds its
/// parent's here and has no ticker thread.
static TICKER_PROCESS: AtomicU32 = AtomicU32::new(0);

/// Starts the ticker thread of this process on the anchor.
fn spawn_ticker(anchor_ms: u64, anchor: Instant) -> std::io::Result<()> {
    // One thread per process, for the life of the process: it wakes once a millisecond,
    // which costs far less than a clock read per id at millions of ids per second.
    std::thread::Builder::new()
        .name("idkit-ticker".into())
        .spawn(move || {
            loop {
                let elapsed = advance(anchor_ms, anchor).saturating_sub(anchor_ms);
                // Sleep to the next millisecond boundary, not for a fixed 1 ms, so the
                // ticker does not drift behind by the scheduler's overshoot.
                let next = Duration::from_millis(elapsed + 1);
                std::thread::sleep(next.saturating_sub(anchor.elapsed()));
            }
        })?;
    TICKER_PROCESS.store(std::process::id(), Ordering::Relaxed);
    Ok(())
}

/// Starts a ticker thread in a child process made by `fork`, which has its parent's ticker
/// time but not its thread (only the thread that called `fork` is copied); nothing when the
/// ticker was never started or already runs in this process. See [`crate::after_fork`].
///
/// # Errors
///
/// The operating system refused to start the thread.
pub(crate) fn restart_ticker_after_fork() -> std::io::Result<()> {
    static RESTART: Mutex<()> = Mutex::new(());
    let _one_at_a_time = RESTART.lock().unwrap_or_else(PoisonError::into_inner);
    match TICKER_ANCHOR.get() {
        Some(&(anchor_ms, anchor))
            if TICKER_PROCESS.load(Ordering::Relaxed) != std::process::id() =>
        {
            // The parent's last reading may be old: bring the time up to now first.
            advance(anchor_ms, anchor);
            spawn_ticker(anchor_ms, anchor)
        }
        _ => Ok(()),
    }
}

/// A monotonic millisecond clock read from memory: a background thread (one per process,
/// started by the first [`TickerClock::new`]) stores the time in an atomic, and a read is
/// one relaxed load.
///
/// It is anchored to the wall clock once, like [`MonotonicClock`], and never goes
/// backwards. A reading can lag the true time by up to a millisecond plus however long the
/// ticker thread waits for a CPU; a generator only ever sees time slow down, never step back.
/// A wait ([`Clock::wait_until_ms`]) does not depend on the thread: the waiting caller reads
/// the monotonic clock itself and moves the shared time forward, so a generator whose
/// sequence ran out moves on when the millisecond has really passed.
///
/// It is the default clock of every idkit generator: a read costs about a nanosecond against
/// about 20 for [`MonotonicClock`] (`bench-harness`'s `scaling` group), for one thread per
/// process that wakes once a millisecond. A child process made by `fork` has no ticker
/// thread (only the thread that called `fork` is copied), so its time would stand still:
/// [`crate::after_fork`] starts one there.
///
/// # Panics
///
/// The first [`TickerClock::new`] panics if the operating system refuses to start a thread.
#[derive(Debug, Clone, Copy)]
pub struct TickerClock {
    // Private, so every value went through `new` and the ticker is running.
    _started: (),
}

impl TickerClock {
    /// The clock, starting the process-wide ticker thread if it is not running yet.
    pub fn new() -> Self {
        start_ticker();
        Self { _started: () }
    }
}

impl Default for TickerClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TickerClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        TICKER_NOW_MS.load(Ordering::Relaxed)
    }

    /// Waits on the monotonic clock (moving the shared time forward as it passes), not on
    /// the ticker thread.
    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        if let Some(&(anchor_ms, anchor)) = TICKER_ANCHOR.get() {
            sleep_until_ms(anchor_ms, anchor, target_ms);
        }
        tick_now()
    }

    fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
        let &(anchor_ms, anchor) = TICKER_ANCHOR.get()?;
        instant_at_ms(anchor_ms, anchor, target_ms)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_ticker_track_the_wall_clock() {
        let wall = SystemClock.now_ms();
        let mono = MonotonicClock::new().now_ms();
        let tick = TickerClock::new().now_ms();
        // Anchored to the same wall clock within a generous margin (shared CI machines).
        assert!(mono.abs_diff(wall) < 5_000, "{mono} vs {wall}");
        assert!(tick.abs_diff(wall) < 5_000, "{tick} vs {wall}");
    }

    #[test]
    fn ticker_advances_and_never_goes_back() {
        let clock = TickerClock::new();
        let first = clock.now_ms();
        let mut last = first;
        // A wait is bounded by real time and the ticker thread may lag on a busy machine,
        // so wait again, as callers do, until it gets there (5 s is far beyond any lag).
        let give_up = Instant::now() + Duration::from_secs(5);
        let mut reached = clock.wait_until_ms(first + 3);
        while reached < first + 3 {
            assert!(Instant::now() < give_up, "ticker stuck at {reached}");
            reached = clock.wait_until_ms(first + 3);
        }
        for _ in 0..1000 {
            let now = clock.now_ms();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn manual_clock_waits_by_moving_forward() {
        let clock = ManualClock::new(100);
        assert_eq!(
            clock.wait_until_ms(50),
            100,
            "waiting for the past returns now"
        );
        assert_eq!(clock.wait_until_ms(150), 150);
        assert_eq!(clock.now_ms(), 150);
        assert_eq!(clock.waits(), 2);
        clock.step_back(1_000);
        assert_eq!(clock.now_ms(), 0);
    }
}
