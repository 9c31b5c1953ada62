//! CPU time read from `/proc` (Linux), for tests that check a waiting thread sleeps.

use std::time::Duration;

/// User + system CPU time from a `/proc/.../stat` file: fields 14 and 15, in clock ticks
/// (USER_HZ, 100 on Linux).
fn stat_cpu_time(path: &str) -> Duration {
    let stat = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The command name (field 2) may hold spaces; the fields after its ')' are fixed.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// CPU time of this process, every thread.
///
/// # Panics
///
/// Where `/proc/self/stat` cannot be read (not Linux).
pub fn process_cpu_time() -> Duration {
    stat_cpu_time("/proc/self/stat")
}

/// CPU time of the calling thread.
///
/// # Panics
///
/// Where `/proc/thread-self/stat` cannot be read (not Linux).
pub fn thread_cpu_time() -> Duration {
    stat_cpu_time("/proc/thread-self/stat")
}
