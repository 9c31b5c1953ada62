//! Counters and the request-latency histogram, written in the Prometheus text format.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use idkit_core::{GenerateError, GenerateErrorKind};

use crate::Service;
use crate::service::Served;

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 1.0,
];

/// The kinds of generation error, as the `kind` label shows them.
/// The index of `e`'s kind in [`GenerateErrorKind::ALL`], whose `as_str` names label the
/// error counters.
pub(crate) fn error_kind(e: &GenerateError) -> usize {
    GenerateErrorKind::ALL
        .iter()
        .position(|k| *k == e.kind())
        .unwrap_or(0)
}

/// Per-scheme counters.
#[derive(Debug, Default)]
pub(crate) struct SchemeCounters {
    pub issued: AtomicU64,
    pub errors: [AtomicU64; GenerateErrorKind::ALL.len()],
}

/// A latency histogram over [`BUCKETS`].
#[derive(Debug, Default)]
struct Latency {
    /// Answers per bucket alone (the last one: above every bound); summed when written,
    /// so an answer costs one add here.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Latency {
    fn observe(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let bucket = BUCKETS.partition_point(|bound| *bound < secs);
        self.buckets[bucket].fetch_add(1, Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Relaxed);
    }

    /// The histogram as the family `name`, described by `help`.
    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += bucket.load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        // The count is the buckets' total, so `+Inf` is never below a finite bucket.
        let count = cumulative + self.buckets[BUCKETS.len()].load(Relaxed);
        let sum = self.sum_nanos.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(
            out,
            "{name}_bucket{{le=\"+Inf\"}} {count}\n{name}_sum {sum}\n{name}_count {count}"
        );
    }
}

/// Service-wide request counters of the HTTP door.
#[derive(Debug, Default)]
pub(crate) struct Requests {
    latency: Latency,
    by_class: [AtomicU64; 5],
}

impl Requests {
    pub fn observe(&self, elapsed: Duration, status: u16) {
        self.latency.observe(elapsed);
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.by_class[class].fetch_add(1, Relaxed);
    }

    pub fn write(&self, out: &mut String) {
        self.latency.write(
            out,
            "idkit_request_duration_seconds",
            "Time to answer a request.",
        );
        let _ = writeln!(
            out,
            "# HELP idkit_requests_total Requests answered, by status class.\n\
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

/// The id service's methods on the gRPC door, as the `method` label shows them.
pub(crate) const GRPC_METHODS: [&str; 6] =
    ["Next", "Batch", "Stream", "Decode", "Schemes", "Identity"];
/// `Stream`'s place in [`GRPC_METHODS`]: a stream that starts is counted when it ends.
pub(crate) const GRPC_STREAM: usize = 2;

/// gRPC's status codes by number, as the `code` label shows them (the names of the gRPC
/// status code list).
const GRPC_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// Calls to the gRPC door's id service: the time to each answer's start (its response
/// headers; for `Stream`, the stream's start) and its status, by method.
#[derive(Debug, Default)]
pub(crate) struct GrpcCalls {
    latency: Latency,
    by_code: [[AtomicU64; GRPC_CODES.len()]; GRPC_METHODS.len()],
}

impl GrpcCalls {
    /// A call that started answering after `elapsed`.
    pub fn started(&self, elapsed: Duration) {
        self.latency.observe(elapsed);
    }

    /// A call of `GRPC_METHODS[method]` that ended with `code`.
    pub fn ended(&self, method: usize, code: tonic::Code) {
        // tonic's codes are 0 to 16; one it could not read is UNKNOWN's, 2.
        let code = usize::try_from(i32::from(code)).unwrap_or(2);
        if let Some(n) = self.by_code[method].get(code) {
            n.fetch_add(1, Relaxed);
        }
    }

    /// The histogram, and a count per method and status seen so far.
    pub fn write(&self, out: &mut String) {
        self.latency.write(
            out,
            "idkit_grpc_call_duration_seconds",
            "Time to start answering a call of the gRPC door (for Stream, to the stream's start).",
        );
        let _ = writeln!(
            out,
            "# HELP idkit_grpc_calls_total Calls of the gRPC door's id service ended, by method and status code.\n\
             # TYPE idkit_grpc_calls_total counter"
        );
        for (method, codes) in GRPC_METHODS.iter().zip(&self.by_code) {
            for (code, n) in GRPC_CODES.iter().zip(codes) {
                let n = n.load(Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "idkit_grpc_calls_total{{method=\"{method}\",code=\"{code}\"}} {n}"
                    );
                }
            }
        }
    }
}

/// Writes one metric family of type `kind` with a sample per scheme.
fn family<'a, V: std::fmt::Display>(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    samples: impl IntoIterator<Item = (&'a str, V)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (scheme, value) in samples {
        let _ = writeln!(out, "{name}{{scheme=\"{scheme}\"}} {value}");
    }
}

/// Writes one counter family with a sample per served scheme.
pub(crate) fn scheme_counter(
    out: &mut String,
    service: &Service,
    name: &str,
    help: &str,
    value: impl Fn(&Served) -> u64,
) {
    let samples = service.served.iter().map(|s| (s.info.name, value(s)));
    family(out, name, "counter", help, samples);
}

/// A sample's value: a count, or a time kept in milliseconds and written in seconds,
/// Prometheus's base unit.
enum Sample {
    Count(u64),
    Millis(u64),
}

impl std::fmt::Display for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Count(n) => write!(f, "{n}"),
            Self::Millis(ms) => write!(f, "{}.{:03}", ms / 1000, ms % 1000),
        }
    }
}

/// The worker-id lease of each served scheme that holds one.
fn write_leases(out: &mut String, service: &Service) {
    let leases: Vec<_> = service
        .leases()
        .into_iter()
        .map(|(name, lease)| (name, lease.status()))
        .collect();
    if leases.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "# HELP idkit_lease_state The worker-id lease's state (1 for the current one).\n\
         # TYPE idkit_lease_state gauge"
    );
    for (name, s) in &leases {
        for state in ["held", "unproven", "lost", "released"] {
            let on = u8::from(s.state.as_str() == state);
            let _ = writeln!(
                out,
                "idkit_lease_state{{scheme=\"{name}\",state=\"{state}\"}} {on}"
            );
        }
    }
    type Read = fn(&idkit_all::identity::Status) -> Sample;
    let series: [(&str, &str, &str, Read); 7] = [
        (
            "idkit_lease_worker_id",
            "gauge",
            "The worker id granted.",
            |s| Sample::Count(s.worker),
        ),
        (
            "idkit_lease_fencing_token",
            "gauge",
            "The fencing token of the current grant.",
            |s| Sample::Count(s.token),
        ),
        (
            "idkit_lease_renewals_total",
            "counter",
            "Successful lease renewals.",
            |s| Sample::Count(s.renewals),
        ),
        (
            "idkit_lease_renewal_failures_total",
            "counter",
            "Failed lease renewals.",
            |s| Sample::Count(s.failures),
        ),
        (
            "idkit_lease_regrants_total",
            "counter",
            "Worker ids granted again after an expiry nobody else used.",
            |s| Sample::Count(s.regrants),
        ),
        (
            "idkit_lease_high_water_mark_seconds",
            "gauge",
            "The high-water mark last recorded, Unix seconds (to the millisecond).",
            |s| Sample::Millis(s.mark_ms),
        ),
        (
            "idkit_lease_fence_remaining_seconds",
            "gauge",
            "How long the generator may issue without another renewal, seconds.",
            |s| Sample::Millis(s.fence_ms.saturating_sub(s.now_ms)),
        ),
    ];
    for (metric, kind, help, read) in series {
        family(
            out,
            metric,
            kind,
            help,
            leases.iter().map(|(name, s)| (*name, read(s))),
        );
    }
}

/// `GET /metrics`: the Prometheus text of every counter.
pub(crate) async fn metrics_text(State(service): State<Arc<Service>>) -> Response {
    let mut out = String::new();
    scheme_counter(
        &mut out,
        &service,
        "idkit_ids_issued_total",
        "Ids issued.",
        |s| s.counters.issued.load(Relaxed),
    );
    let _ = writeln!(
        out,
        "# HELP idkit_generate_errors_total Requests that could not be served, by error kind.\n\
         # TYPE idkit_generate_errors_total counter"
    );
    for s in &service.served {
        for (kind, n) in GenerateErrorKind::ALL.iter().zip(&s.counters.errors) {
            let _ = writeln!(
                out,
                "idkit_generate_errors_total{{scheme=\"{}\",kind=\"{}\"}} {}",
                s.info.name,
                kind.as_str(),
                n.load(Relaxed)
            );
        }
    }
    scheme_counter(
        &mut out,
        &service,
        "idkit_clock_rollbacks_total",
        "Times a generator found the clock behind its last id.",
        |s| s.scheme.stats().clock_rollbacks,
    );
    scheme_counter(
        &mut out,
        &service,
        "idkit_tick_waits_total",
        "Times a generator waited for the next tick, its sequence spent.",
        |s| s.scheme.stats().tick_waits,
    );
    write_leases(&mut out, &service);
    service.requests.write(&mut out);
    service.grpc_calls.write(&mut out);
    service.connections.write(&mut out);
    if let Some(tokens) = &service.tokens {
        let _ = writeln!(
            out,
            "# HELP idkit_unauthenticated_total Requests and calls refused for want of a valid bearer token.\n\
             # TYPE idkit_unauthenticated_total counter\n\
             idkit_unauthenticated_total{{door=\"http\"}} {}\n\
             idkit_unauthenticated_total{{door=\"grpc\"}} {}",
            tokens.refused_http.load(Relaxed),
            tokens.refused_grpc.load(Relaxed)
        );
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_index_names_stream() {
        assert_eq!(GRPC_METHODS[GRPC_STREAM], "Stream");
    }

    fn bucket_line(text: &str, le: &str) -> u64 {
        let prefix = format!("idkit_request_duration_seconds_bucket{{le=\"{le}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no bucket {le} in {text}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn buckets_are_cumulative_and_bounds_inclusive() {
        let r = Requests::default();
        r.observe(Duration::from_micros(30), 200); // le 0.00005
        r.observe(Duration::from_micros(100), 200); // exactly on 0.0001: counted there
        r.observe(Duration::from_micros(101), 404); // le 0.00025
        r.observe(Duration::from_secs(2), 503); // above every bound: +Inf only
        let mut out = String::new();
        r.write(&mut out);
        assert_eq!(bucket_line(&out, "0.00005"), 1);
        assert_eq!(bucket_line(&out, "0.0001"), 2);
        assert_eq!(bucket_line(&out, "0.00025"), 3);
        assert_eq!(bucket_line(&out, "1"), 3);
        assert_eq!(bucket_line(&out, "+Inf"), 4);
        assert!(
            out.contains("idkit_request_duration_seconds_count 4\n"),
            "{out}"
        );
        assert!(
            out.contains("idkit_requests_total{code=\"2xx\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("idkit_requests_total{code=\"4xx\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("idkit_requests_total{code=\"5xx\"} 1\n"),
            "{out}"
        );
        let sum: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix("idkit_request_duration_seconds_sum "))
            .unwrap()
            .parse()
            .unwrap();
        assert!((sum - 2.000_231).abs() < 1e-9, "{sum}");
    }
}

/// The connections of both front doors: the `max_connections` slots they share, how many
/// are open, and how many were closed for the limits.
#[derive(Debug)]
pub(crate) struct Connections {
    /// Free slots: `max_connections` less the connections open.
    slots: tokio::sync::Semaphore,
    pub open: AtomicU64,
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    pub header_timeouts: AtomicU64,
    /// TLS handshakes that failed (a plaintext client on a TLS port among them).
    pub tls_failures: AtomicU64,
}

impl Connections {
    /// `max` slots, nothing counted yet.
    pub fn new(max: usize) -> Self {
        Self {
            slots: tokio::sync::Semaphore::new(max),
            open: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            header_timeouts: AtomicU64::new(0),
            tls_failures: AtomicU64::new(0),
        }
    }

    /// A slot for a connection either door just accepted, counted as accepted and open
    /// until the slot is dropped; `None`, counted as refused, when every slot is taken (the
    /// caller closes the connection at once).
    pub fn admit(self: &Arc<Self>) -> Option<Slot> {
        let Ok(permit) = self.slots.try_acquire() else {
            self.refused.fetch_add(1, Relaxed);
            return None;
        };
        permit.forget();
        self.accepted.fetch_add(1, Relaxed);
        self.open.fetch_add(1, Relaxed);
        Some(Slot(Arc::clone(self)))
    }

    pub fn write(&self, out: &mut String) {
        let families = [
            (
                "idkit_connections_open",
                "gauge",
                "Connections open now.",
                &self.open,
            ),
            (
                "idkit_connections_accepted_total",
                "counter",
                "Connections accepted and served.",
                &self.accepted,
            ),
            (
                "idkit_connections_refused_total",
                "counter",
                "Connections closed at once: max_connections were open.",
                &self.refused,
            ),
            (
                "idkit_header_timeouts_total",
                "counter",
                "Connections closed because their request headers (gRPC: TLS handshake and HTTP/2 preface) did not arrive within header_timeout_ms.",
                &self.header_timeouts,
            ),
            (
                "idkit_tls_handshake_failures_total",
                "counter",
                "Connections closed because their TLS handshake failed (a plaintext client on the TLS port among them).",
                &self.tls_failures,
            ),
        ];
        for (name, kind, help, value) in families {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}",
                value.load(Relaxed)
            );
        }
    }
}

/// One connection's slot ([`Connections::admit`]): dropping it frees the slot and counts
/// the connection closed.
#[derive(Debug)]
pub(crate) struct Slot(Arc<Connections>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Relaxed);
        self.0.slots.add_permits(1);
    }
}
