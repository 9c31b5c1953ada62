//! The machine the report was measured on, and the cost of the primitives every scheme
//! stands on: reading the clocks and drawing operating-system random bytes.

use std::hint::black_box;
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rand::TryRng;
use rand::rngs::SysRng;
use serde::Serialize;

use crate::{Params, Progress};

/// Facts about the machine and the build, for the report's environment section.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// Operating system and kernel.
    pub os: String,
    /// `rustc --version`.
    pub toolchain: String,
    /// `git rev-parse --short HEAD`, with `-dirty` when the tree has changes.
    pub git_revision: String,
    /// When the run started, RFC 3339 UTC.
    pub date: String,
}

impl Machine {
    /// Reads what Linux and the tools report; a value that cannot be read is `"unknown"`.
    pub fn read() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
            .map_or_else(|| "unknown".to_owned(), |(_, v)| v.trim().to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_bytes = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024);
        let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
        let pretty = release
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map_or("unknown", |v| v.trim_matches('"'));
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        // Changes to tracked files outside reports/ (the output this run rewrites).
        let dirty = command(
            "git",
            &[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":!reports",
            ],
        )
        .is_some_and(|s| !s.is_empty());
        let revision = command("git", &["rev-parse", "--short", "HEAD"])
            .unwrap_or_else(|| "unknown".to_owned());
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_bytes,
            os: format!("{pretty}, Linux {}", kernel.trim()),
            toolchain: command(&rustc, &["--version"]).unwrap_or_else(|| "unknown".to_owned()),
            git_revision: if dirty {
                format!("{revision}-dirty")
            } else {
                revision
            },
            date: idkit_core::time::format_rfc3339_ms(now_ms()),
        }
    }
}

fn command(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Unix time in milliseconds (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The measured cost of one primitive.
#[derive(Debug, Clone, Serialize)]
pub struct Primitive {
    /// What was measured.
    pub name: &'static str,
    /// Median nanoseconds per call.
    pub ns_per_call: f64,
}

/// Measures the system clock, the monotonic clock and 16 bytes of OS randomness.
pub fn measure_primitives(params: &Params, progress: &Progress) -> Vec<Primitive> {
    let bar = progress.bar("primitives", 3);
    let mut out = Vec::new();
    let mut measure = |name: &'static str, f: &mut dyn FnMut()| {
        bar.set_message(name);
        let ns = median_ns_per_call(params, 64, f);
        out.push(Primitive {
            name,
            ns_per_call: ns,
        });
        bar.inc(1);
    };
    measure("system clock read (SystemTime::now)", &mut || {
        black_box(SystemTime::now());
    });
    measure("monotonic clock read (Instant::now)", &mut || {
        black_box(Instant::now());
    });
    let mut buf = [0u8; 16];
    measure("16 OS random bytes (getrandom)", &mut || {
        // A failing OS source would show as an implausibly fast figure; it is not expected
        // on Linux, where getrandom only blocks before the pool is first seeded.
        let _ = SysRng.try_fill_bytes(&mut buf);
        black_box(&buf);
    });
    let summary = out
        .iter()
        .map(|p| format!("{:.1} ns", p.ns_per_call))
        .collect::<Vec<_>>()
        .join(", ");
    progress.done(
        &bar,
        &format!("primitives: system clock, monotonic clock, OS random: {summary}"),
    );
    out
}

/// Median over `params.samples` samples of the time per call of `f`, each sample running
/// `f` in chunks of `chunk` for `params.sample_ms`.
pub(crate) fn median_ns_per_call(params: &Params, chunk: u32, f: &mut dyn FnMut()) -> f64 {
    let mut samples = Vec::with_capacity(params.samples);
    for _ in 0..params.samples {
        let budget = std::time::Duration::from_millis(params.sample_ms);
        let start = Instant::now();
        let mut calls = 0u64;
        loop {
            for _ in 0..chunk {
                f();
            }
            calls += u64::from(chunk);
            if start.elapsed() >= budget {
                break;
            }
        }
        samples.push(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    median(&mut samples)
}

/// The median (mean of the middle two for an even count); 0 for an empty slice.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        f64::midpoint(values[mid - 1], values[mid])
    }
}
