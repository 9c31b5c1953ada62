//! The generators' clock: the operating system's wall clock ([`SystemClock`]), read once
//! per short while rather than once per id.
//!
//! Reading the wall clock was the largest single cost of an id made in SQL (about 40 ns of
//! it here, `clock_gettime` through the vDSO and the conversion to milliseconds), more than
//! the compare-and-swap on the shared word that keeps ids apart. A column default is called
//! row after row, a few hundred nanoseconds apart, so the millisecond read for one id is
//! almost always the next one's too. On x86-64 the processor's time-stamp counter (one
//! instruction, about 15 ns on a virtual machine) tells whether the last reading is still
//! fresh: at most [`FRESH_CYCLES`] cycles old, 50 µs at 1 GHz, less on any faster counter.
//! Past that, or when the counter went back (a thread moved to a processor whose counter
//! is behind), the wall clock is read again. So an id's millisecond lags the wall clock by
//! at most that much, well within the millisecond the id carries; everything the
//! generators promise (no id twice, ids that increase, the high-water mark) rests on the
//! shared word and holds whatever the clock says. Other processors read the wall clock for
//! every id.
//!
//! A wait for a later millisecond (a Snowflake sequence run out) reads the wall clock
//! itself, and the readings after it start from what it read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use idkit_core::{Clock, SystemClock};

/// The most time-stamp counter cycles a wall clock reading is used for.
pub const FRESH_CYCLES: u64 = 50_000;

/// The last wall clock reading, ms, and the counter just before it (its value when the
/// reading is not to be used again: 0, and a counter that moved on).
static LAST_MS: AtomicU64 = AtomicU64::new(0);
static LAST_AT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The wall clock, read at most once per [`FRESH_CYCLES`] on x86-64 (see the module).
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock;

impl WallClock {
    /// The wall clock read now, kept for the readings of the next [`FRESH_CYCLES`] cycles.
    fn read(at: u64) -> u64 {
        let ms = SystemClock.now_ms();
        // The millisecond first: a reader that sees the counter sees this millisecond or
        // a later one. Two threads reading at once may pair one's millisecond with the
        // other's counter: the pair is then at most as old as the two readings are apart.
        LAST_MS.store(ms, Ordering::Release);
        LAST_AT.store(at, Ordering::Release);
        ms
    }
}

#[cfg(target_arch = "x86_64")]
fn counter() -> Option<u64> {
    // SAFETY: RDTSC is on every x86-64 processor and reads a register, nothing else.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
fn counter() -> Option<u64> {
    None
}

impl Clock for WallClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        let Some(now) = counter() else {
            return SystemClock.now_ms();
        };
        let at = LAST_AT.load(Ordering::Acquire);
        // u64::MAX: no reading yet (whatever a counter just past its start would say).
        if at != u64::MAX && now.wrapping_sub(at) < FRESH_CYCLES {
            return LAST_MS.load(Ordering::Acquire);
        }
        Self::read(now)
    }

    fn wait_until_ms(&self, target_ms: u64) -> u64 {
        let reached = SystemClock.wait_until_ms(target_ms);
        match counter() {
            Some(now) => Self::read(now),
            None => reached,
        }
    }

    fn instant_at_ms(&self, target_ms: u64) -> Option<Instant> {
        SystemClock.instant_at_ms(target_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_follows_the_wall_clock() {
        let clock = WallClock;
        let mut last = 0;
        let start = SystemClock.now_ms();
        // Over at least 20 ms of wall time, each reading within a few ms of the wall
        // clock's (the test's own thread may be preempted between the two reads).
        while SystemClock.now_ms() < start + 20 {
            let wall = SystemClock.now_ms();
            let now = clock.now_ms();
            assert!(
                now + 50 >= wall && now <= SystemClock.now_ms(),
                "{now} vs {wall}"
            );
            last = last.max(now);
        }
        // The readings move on (the loop's last ones may have been cut short by a
        // preemption: read on until they reach where the wall clock was, or give up).
        let deadline = start + 5_000;
        while last < start + 19 && SystemClock.now_ms() < deadline {
            last = last.max(clock.now_ms());
        }
        assert!(
            last >= start + 19,
            "the readings moved on: {start} .. {last}"
        );
    }

    #[test]
    fn a_wait_ends_at_the_wall_clock_s_millisecond() {
        let clock = WallClock;
        let target = clock.now_ms() + 3;
        assert!(clock.wait_until_ms(target) >= target);
    }
}
