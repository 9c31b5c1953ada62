//! The ticker thread behind `TickerClock` rests while nothing reads the time: an idle process
//! (an `idkit serve` between requests) wakes it about ten times a second instead of a
//! thousand. Its wake-ups are counted from `/proc` (the thread's voluntary context switches:
//! each sleep is one), not timed. A read during the rest takes the monotonic clock, so it is
//! never late; the thread then ticks again.
//!
//! One test in a binary of its own: any other test reading the clock would keep the ticker
//! awake.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use idkit_core::clock::{Clock, TickerClock};

/// The ticker thread's `/proc/self/task/<tid>` directory (the thread names itself once it
/// runs, so it is looked for until it has).
fn ticker_task() -> std::path::PathBuf {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let found = std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .map(|entry| entry.expect("a task").path())
            .find(|task| {
                std::fs::read_to_string(task.join("comm")).is_ok_and(|c| c.trim() == "idkit-ticker")
            });
        if let Some(task) = found {
            return task;
        }
        assert!(Instant::now() < give_up, "no idkit-ticker thread");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How many times the thread has gone to sleep.
fn sleeps(task: &std::path::Path) -> u64 {
    let status = std::fs::read_to_string(task.join("status")).expect("its status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .expect("voluntary_ctxt_switches")
        .trim()
        .parse()
        .expect("a count")
}

/// The ticker thread's sleeps during `window`, while `during` runs (or the caller sleeps).
fn sleeps_during(task: &std::path::Path, window: Duration, mut during: impl FnMut()) -> u64 {
    let before = sleeps(task);
    let end = Instant::now() + window;
    while Instant::now() < end {
        during();
    }
    sleeps(task) - before
}

#[test]
fn the_ticker_rests_while_nothing_reads_the_time_and_a_read_is_never_late() {
    let clock = TickerClock::new();
    let task = ticker_task();
    let window = Duration::from_secs(1);

    // Read all the time: the thread ticks, a sleep a millisecond.
    let mut last = clock.now_ms();
    let reading = sleeps_during(&task, window, || {
        let t = clock.now_ms();
        assert!(t >= last, "went back from {last} to {t}");
        last = t;
    });

    // Nothing reads: it rests once its ticking time is up (at most about a second, as it
    // grew while the time was read), and its pauses grow to 100 ms within a quarter second.
    std::thread::sleep(Duration::from_secs(2));
    let idle = sleeps_during(&task, window, || {
        std::thread::sleep(Duration::from_millis(10))
    });
    eprintln!("ticker sleeps in {window:?}: {reading} while read, {idle} while idle");
    // Ticking: about 1,000 a second (fewer where the thread waits for a CPU). Resting:
    // about 10, more if the pauses had not yet grown.
    assert!(reading > 200, "{reading} sleeps while the time was read");
    assert!(idle < 60, "{idle} sleeps while nothing read the time");

    // The first read of the rest reads the monotonic clock: the time it returns turns the
    // next millisecond after the read began, however long the rest.
    let started = Instant::now();
    let t = clock.now_ms();
    assert!(t >= last, "went back from {last} to {t}");
    let next = clock.instant_at_ms(t + 1).expect("the ticker's anchor");
    assert!(next > started, "{t} was already over when the read began");

    // Reading again wakes it within its longest pause.
    let again = sleeps_during(&task, window, || {
        let now = clock.now_ms();
        assert!(now >= last, "went back from {last} to {now}");
        last = now;
    });
    assert!(again > 200, "{again} sleeps once the time was read again");
}
