//! A thread waiting on a clock sleeps: a generator whose sequence is spent waits for the next
//! millisecond over and over (at its cap it waits most of every millisecond), and a thread
//! that spun through the last millisecond of each wait took a core from everything else on
//! the host. Each clock's waits are timed here by the waiting thread's own CPU time.

#![cfg(target_os = "linux")]

use std::time::Instant;

use idkit_core::clock::{Clock, MonotonicClock, SystemClock, TickerClock};
use idkit_testkit::cpu::thread_cpu_time;

/// Waits for the next millisecond 300 times, as a generator at its cap does; checks each
/// wait got there and returns the share of the wall time the thread was on a CPU.
fn cpu_share_of_millisecond_waits(clock: &dyn Clock) -> f64 {
    let cpu = thread_cpu_time();
    let started = Instant::now();
    for _ in 0..300 {
        let target = clock.now_ms() + 1;
        let reached = clock.wait_until_ms(target);
        assert!(reached >= target, "waited for {target}, reached {reached}");
    }
    let wall = started.elapsed();
    let cpu = thread_cpu_time() - cpu;
    eprintln!("{clock:?}: {cpu:?} of CPU in {wall:?} of waits");
    cpu.as_secs_f64() / wall.as_secs_f64()
}

// Spinning through the last millisecond of each wait measured 100% here; sleeping to
// 100 µs before the boundary measures a few percent. 40% leaves room for a noisy machine.
const MAX_SHARE: f64 = 0.4;

#[test]
fn waiting_on_the_monotonic_clock_sleeps() {
    let share = cpu_share_of_millisecond_waits(&MonotonicClock::new());
    assert!(share < MAX_SHARE, "CPU {:.0}% of the wait", share * 100.0);
}

#[test]
fn waiting_on_the_ticker_clock_sleeps() {
    let share = cpu_share_of_millisecond_waits(&TickerClock::new());
    assert!(share < MAX_SHARE, "CPU {:.0}% of the wait", share * 100.0);
}

#[test]
fn waiting_on_the_system_clock_sleeps() {
    let share = cpu_share_of_millisecond_waits(&SystemClock);
    assert!(share < MAX_SHARE, "CPU {:.0}% of the wait", share * 100.0);
}
