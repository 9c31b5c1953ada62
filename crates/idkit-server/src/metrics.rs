//! Counters and the request-latency histogram, written in the Prometheus text format.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use idkit_core::GenerateError;

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 1.0,
];

/// The kinds of generation error, as the `kind` label shows them.
pub(crate) const ERROR_KINDS: [&str; 7] = [
    "clock_moved_backwards",
    "ahead_limit",
    "time_overflow",
    "before_epoch",
    "exhausted",
    "unavailable",
    "other",
];

pub(crate) fn error_kind(e: &GenerateError) -> usize {
    match e {
        GenerateError::ClockMovedBackwards { .. } => 0,
        GenerateError::AheadLimit { .. } => 1,
        GenerateError::TimeOverflow { .. } => 2,
        GenerateError::BeforeEpoch { .. } => 3,
        GenerateError::Exhausted { .. } => 4,
        GenerateError::Unavailable { .. } => 5,
        _ => 6,
    }
}

/// Per-scheme counters.
#[derive(Debug, Default)]
pub(crate) struct SchemeCounters {
    pub issued: AtomicU64,
    pub errors: [AtomicU64; ERROR_KINDS.len()],
}

/// Service-wide request counters.
#[derive(Debug, Default)]
pub(crate) struct Requests {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
    by_class: [AtomicU64; 5],
}

impl Requests {
    pub fn observe(&self, elapsed: Duration, status: u16) {
        let secs = elapsed.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Relaxed);
            }
        }
        self.count.fetch_add(1, Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Relaxed);
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.by_class[class].fetch_add(1, Relaxed);
    }

    pub fn write(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP idkit_request_duration_seconds Time to answer a request.\n\
             # TYPE idkit_request_duration_seconds histogram"
        );
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "idkit_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Relaxed)
            );
        }
        let count = self.count.load(Relaxed);
        let sum = self.sum_nanos.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(
            out,
            "idkit_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}\n\
             idkit_request_duration_seconds_sum {sum}\n\
             idkit_request_duration_seconds_count {count}\n\
             # HELP idkit_requests_total Requests answered, by status class.\n\
             # TYPE idkit_requests_total counter"
        );
        for (i, n) in self.by_class.iter().enumerate() {
            let _ = writeln!(
                out,
                "idkit_requests_total{{code=\"{}xx\"}} {}",
                i + 1,
                n.load(Relaxed)
            );
        }
    }
}
