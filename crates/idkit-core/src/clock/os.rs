//! The operating system's clocks (with `std`): the wall clock, the monotonic clock anchored
//! to it, and the ticker that most generators read.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Clock;
use crate::monotonic::CachePadded;

fn wall_ms() -> u64 {
    // A wall clock before 1970 is a broken machine, not an input: treat it as the epoch.
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    duration_ms(since)
}

fn duration_ms(d: Duration) -> u64 {
    // u64 milliseconds last 584 million years; saturate rather than wrap past that. In
    // 64-bit steps: a wall clock is read once per id.
    d.as_secs()
        .saturating_mul(1_000)
        .saturating_add(u64::from(d.subsec_millis()))
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

    /// The wall clock to the nanosecond (as the operating system keeps it), saturating past
    /// the year 2554.
    fn now_ns(&self) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
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

/// The ticker's word: Unix ms, with the top bit ([`RESTING`]) set while the ticker thread
/// rests; 0 until it starts. Every id reads it, so it has a cache line of its own: a static
/// beside it that another thread writes (the linker put `uuid`'s process-wide UUIDv7 context
/// eight bytes after it in the `scaling` bench) would make each of those reads a miss.
static TICKER_WORD: CachePadded<AtomicU64> = CachePadded(AtomicU64::new(0));
/// The ticker's anchor, set once when the ticker starts: the wall clock's Unix ms and the
/// `Instant` it was read at.
static TICKER_ANCHOR: OnceLock<(u64, Instant)> = OnceLock::new();

/// The bit of the ticker's word that says the ticker thread rests: it stores no time, and a
/// reader reads the monotonic clock itself. Only the ticker thread sets and clears it.
const RESTING: u64 = 1 << 63;
/// The latest time the word holds (the top bit is [`RESTING`]): 292 million years past 1970.
const MAX_MS: u64 = RESTING - 1;
/// How long the ticker ticks, after it was last woken, before it rests: the first time, and
/// again after a rest that no read ended within a millisecond.
const ACTIVE_MIN: Duration = Duration::from_millis(10);
/// The longest it ticks between two rests: a rest that a read ends within a millisecond
/// doubles the time to the next one up to this, so a process that reads all the time pays
/// reads of the monotonic clock for about a millisecond in a second.
const ACTIVE_MAX: Duration = Duration::from_millis(1024);
/// The longest a resting ticker sleeps between two looks at the word: its pauses double
/// from a millisecond to this, so an idle process wakes it ten times a second.
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// The operations on the ticker's word: on std's atomic here, on loom's in the model check
/// of the rest (`RUSTFLAGS="--cfg loom" cargo test -p idkit-core --lib --release loom`).
/// Relaxed throughout: the time and the rest bit share one word, so its modification order
/// is the only order that matters.
trait Word {
    fn get(&self) -> u64;
    fn replace(&self, current: u64, new: u64) -> Result<u64, u64>;
    fn set_bits(&self, bits: u64) -> u64;
    fn clear_bits(&self, bits: u64) -> u64;
}

macro_rules! word {
    ($($atomic:ty),*) => {$(
        impl Word for $atomic {
            #[inline]
            fn get(&self) -> u64 {
                self.load(Ordering::Relaxed)
            }
            fn replace(&self, current: u64, new: u64) -> Result<u64, u64> {
                self.compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
            }
            fn set_bits(&self, bits: u64) -> u64 {
                self.fetch_or(bits, Ordering::Relaxed)
            }
            fn clear_bits(&self, bits: u64) -> u64 {
                self.fetch_and(!bits, Ordering::Relaxed)
            }
        }
    )*};
}

word!(AtomicU64);
#[cfg(loom)]
word!(loom::sync::atomic::AtomicU64);

/// The time in `word`; while the ticker rests, `now()`, stored first ([`store`]).
#[inline]
fn read<W: Word>(word: &W, now: impl FnOnce() -> u64) -> u64 {
    let w = word.get();
    if w & RESTING == 0 {
        w
    } else {
        read_while_resting(word, now)
    }
}

/// [`read`]'s path while the ticker rests, kept out of line.
#[cold]
#[inline(never)]
fn read_while_resting<W: Word>(word: &W, now: impl FnOnce() -> u64) -> u64 {
    store(word, now())
}

/// Moves the time in `word` up to `now` (never back) and returns the time it holds; the
/// rest bit stays as it is.
fn store(word: &impl Word, now: u64) -> u64 {
    let now = now.min(MAX_MS);
    let mut w = word.get();
    loop {
        let new = (w & MAX_MS).max(now) | (w & RESTING);
        if new == w {
            return w & MAX_MS;
        }
        match word.replace(w, new) {
            Ok(_) => return new & MAX_MS,
            Err(actual) => w = actual,
        }
    }
}

/// The ticker thread's rest: marks the word resting and looks at it after each `pause`
/// (1 ms, then twice the last, up to [`MAX_PAUSE`]) until a reader has moved its time on;
/// then stores `now()` and clears the mark, so that no reader finds the word unmarked with
/// an old time. Returns the pauses it took (1: a read ended the rest within a millisecond).
fn rest(word: &impl Word, now: impl Fn() -> u64, pause: impl Fn(Duration)) -> u32 {
    let rested_at = word.set_bits(RESTING) & MAX_MS;
    let (mut wait, mut pauses) = (Duration::from_millis(1), 0);
    loop {
        pause(wait);
        pauses += 1;
        if word.get() & MAX_MS > rested_at {
            break;
        }
        wait = (wait * 2).min(MAX_PAUSE);
    }
    store(word, now());
    word.clear_bits(RESTING);
    pauses
}

/// Brings the ticker's time up to the monotonic clock read against the anchor and returns
/// it: what the ticker thread does every millisecond, what a waiting generator does itself,
/// so that a wait ends when the time has come even while the ticker thread waits for a
/// CPU, and what a read does while the ticker rests.
fn advance(anchor_ms: u64, anchor: Instant) -> u64 {
    store(&TICKER_WORD.0, anchor_now(anchor_ms, anchor))
}

/// The monotonic clock read against an anchor, in Unix ms.
fn anchor_now(anchor_ms: u64, anchor: Instant) -> u64 {
    anchor_ms.saturating_add(duration_ms(anchor.elapsed()))
}

/// [`advance`] from the ticker's anchor; the stored time if the ticker has not started.
fn tick_now() -> u64 {
    store(&TICKER_WORD.0, monotonic_now())
}

fn start_ticker() {
    TICKER_ANCHOR.get_or_init(|| {
        let anchor_ms = wall_ms();
        let anchor = Instant::now();
        store(&TICKER_WORD.0, anchor_ms);
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
    // One thread per process, for the life of the process: while the time is read it wakes
    // once a millisecond, which costs far less than a clock read per id at millions of ids
    // per second; while nothing reads it, it rests.
    std::thread::Builder::new()
        .name("idkit-ticker".into())
        .spawn(move || {
            // A forked child's word may hold its parent's rest: this thread is the one that
            // ends rests now, with the time brought up to date first.
            advance(anchor_ms, anchor);
            TICKER_WORD.clear_bits(RESTING);
            let (mut active, mut woken) = (ACTIVE_MIN, Instant::now());
            loop {
                let elapsed = advance(anchor_ms, anchor).saturating_sub(anchor_ms);
                if woken.elapsed() >= active {
                    let pauses = rest(
                        &TICKER_WORD.0,
                        || anchor_now(anchor_ms, anchor),
                        |d| {
                            std::thread::sleep(d);
                        },
                    );
                    active = if pauses == 1 {
                        (active * 2).min(ACTIVE_MAX)
                    } else {
                        ACTIVE_MIN
                    };
                    woken = Instant::now();
                    continue;
                }
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
/// process that wakes once a millisecond while the time is read.
///
/// While nothing reads the time, the thread rests, so that an idle process (an `idkit serve`
/// between requests) costs no CPU: after ticking for 10 ms to a second since it was last
/// woken, it marks the time as resting and sleeps, looking again after 1 ms, then 2, 4, and
/// so on up to 100 ms. A read that finds the mark reads the monotonic clock itself (the cost
/// of [`MonotonicClock`]) and stores what it read; the thread, finding the time moved at its
/// next look, stores the time, clears the mark and ticks again; a read during a rest is as
/// fresh as one of [`MonotonicClock`], and the time never goes back. A rest that a read ends
/// at the first look doubles the ticking time before the next one (up to a second), so a
/// process that reads the time all the time pays monotonic reads for about a millisecond a
/// second.
///
/// A child process made by `fork` has no ticker thread (only the thread that called `fork`
/// is copied), so its time would stand still (or, if the parent's ticker rested at the fork,
/// every read would take the monotonic clock): [`crate::after_fork`] starts one there.
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

/// The monotonic clock read against the ticker's anchor (0 before the ticker starts): what a
/// read takes while the ticker rests.
fn monotonic_now() -> u64 {
    TICKER_ANCHOR
        .get()
        .map_or(0, |&(anchor_ms, anchor)| anchor_now(anchor_ms, anchor))
}

impl Default for TickerClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TickerClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        read(&TICKER_WORD.0, monotonic_now)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

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

    #[test]
    fn a_read_while_the_ticker_rests_takes_and_stores_the_time_given() {
        let word = AtomicU64::new(1_000);
        assert_eq!(read(&word, || unreachable!("no rest")), 1_000);
        word.set_bits(RESTING);
        assert_eq!(read(&word, || 1_007), 1_007);
        assert_eq!(word.get(), 1_007 | RESTING, "the mark stays for the ticker");
        // A reader whose monotonic read is older than the word's time gets the word's.
        assert_eq!(read(&word, || 1_003), 1_007);
    }

    #[test]
    fn the_time_never_goes_back_and_never_wraps() {
        let word = AtomicU64::new(0);
        assert_eq!(store(&word, 50), 50);
        assert_eq!(store(&word, 40), 50);
        assert_eq!(
            store(&word, u64::MAX),
            MAX_MS,
            "held at the last time the word holds"
        );
        assert_eq!(word.get() & MAX_MS, MAX_MS);
        assert_eq!(word.get() & RESTING, 0);
    }

    #[test]
    fn a_rest_doubles_its_pauses_until_a_read_moves_the_time() {
        let word = AtomicU64::new(2_000);
        let pauses = std::cell::RefCell::new(Vec::new());
        let taken = rest(
            &word,
            || 2_500,
            |d| {
                pauses.borrow_mut().push(d.as_millis());
                assert_eq!(word.get() & RESTING, RESTING, "marked while it rests");
                // Nothing reads for ten pauses; then a reader's monotonic read.
                if pauses.borrow().len() == 10 {
                    assert_eq!(read(&word, || 2_400), 2_400);
                }
            },
        );
        assert_eq!(taken, 10);
        assert_eq!(*pauses.borrow(), [1, 2, 4, 8, 16, 32, 64, 100, 100, 100]);
        assert_eq!(
            word.get(),
            2_500,
            "the ticker's own time stored, then the mark cleared"
        );
    }

    #[test]
    fn a_read_at_the_first_look_ends_the_rest_after_one_pause() {
        let word = AtomicU64::new(7);
        let taken = rest(&word, || 9, |_| assert_eq!(read(&word, || 8), 8));
        assert_eq!(taken, 1);
        assert_eq!(word.get(), 9);
    }
}

/// Model check of the ticker's rest: loom explores every interleaving of the ticker thread
/// resting and the reads around it. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p idkit-core --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_rest {
    use super::{RESTING, Word, read, rest};
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use loom::thread;

    /// The time the ticker last stored before it rests.
    const BEFORE: u64 = 100;
    /// The true time when the rest begins: what the monotonic clock reads; the reader moves
    /// it on by a millisecond between its two reads.
    const NOW: u64 = 105;

    #[test]
    fn loom_a_read_while_the_ticker_rests_is_never_late() {
        loom::model(|| {
            let word = Arc::new(AtomicU64::new(BEFORE));
            let real = Arc::new(AtomicU64::new(NOW));
            // Set inside each pause, for the reads to know the rest has begun; and when the
            // ticker reads the time to end it.
            let marked = Arc::new(AtomicBool::new(false));
            let ending = Arc::new(AtomicBool::new(false));
            let ticker = {
                let (word, real) = (word.clone(), real.clone());
                let (marked, ending) = (marked.clone(), ending.clone());
                // Each pause lasts until a read is done (a sleep outlasts any number of
                // reads, or none).
                thread::spawn(move || {
                    rest(
                        &*word,
                        || {
                            ending.store(true, Ordering::SeqCst);
                            real.load(Ordering::SeqCst)
                        },
                        |_| {
                            marked.store(true, Ordering::SeqCst);
                            thread::park();
                        },
                    )
                })
            };
            let reader = {
                let (word, real) = (word.clone(), real.clone());
                let (marked, ending) = (marked.clone(), ending.clone());
                let ticker = ticker.thread().clone();
                thread::spawn(move || {
                    let mut last = 0;
                    for _ in 0..2 {
                        let now = real.load(Ordering::SeqCst);
                        let resting =
                            marked.load(Ordering::SeqCst) && !ending.load(Ordering::SeqCst);
                        let t = read(&*word, || real.load(Ordering::SeqCst));
                        assert!(t >= last, "went back from {last} to {t}");
                        if resting {
                            assert!(t >= now, "read {t} while the ticker rested at {now}");
                        }
                        last = t;
                        real.store(NOW + 1, Ordering::SeqCst);
                        ticker.unpark();
                    }
                })
            };
            reader.join().unwrap();
            // A read after the mark ends the rest, whatever the reader did.
            while !marked.load(Ordering::SeqCst) {
                thread::yield_now();
            }
            assert_eq!(read(&*word, || NOW + 1), NOW + 1);
            ticker.thread().unpark();
            ticker.join().unwrap();
            assert_eq!(word.get(), NOW + 1, "the time stored, the mark cleared");
            assert_eq!(word.get() & RESTING, 0);
        });
    }
}
