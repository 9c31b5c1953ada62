//! [`Lease`]: a granted worker id, renewed in the background, fencing its generator.

use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use idkit_core::Clock;
use idkit_core::guard::Guard;

use crate::backend::{Backend, Grant, Want};
use crate::source::Kind;
use crate::{IdentitySource, LeaseError, LeaseErrorKind};

/// The state of a lease, as `/metrics` and `/v1/identity` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// Renewed in time: the generator issues.
    Held,
    /// Not renewed in time (the source is unreachable): the generator is fenced until a
    /// renewal succeeds.
    Unproven,
    /// Lost for good (granted to someone else, or revoked): the generator never issues
    /// again under this worker id.
    Lost,
    /// Released at shutdown.
    Released,
}

impl LeaseState {
    /// A stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Unproven => "unproven",
            Self::Lost => "lost",
            Self::Released => "released",
        }
    }
}

const HELD: u8 = 0;
const LOST: u8 = 2;
const RELEASED: u8 = 3;

/// What a lease looks like now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Status {
    /// The worker id.
    pub worker: u64,
    /// The fencing token of the current grant.
    pub token: u64,
    /// The lease's state.
    pub state: LeaseState,
    /// Successful renewals since the grant.
    pub renewals: u64,
    /// Failed renewals (unreachable source, expiry, loss).
    pub failures: u64,
    /// Re-grants of the same worker id after an expiry nobody else used.
    pub regrants: u64,
    /// The high-water mark last recorded (Unix ms).
    pub mark_ms: u64,
    /// The high-water mark found at grant time (Unix ms).
    pub floor_ms: u64,
    /// The fence: the generator issues while its clock is before this (Unix ms; 0 closed).
    pub fence_ms: u64,
    /// The generator's clock now (Unix ms), to compare with the fence.
    pub now_ms: u64,
    /// How long acquiring took.
    pub acquired_in: Duration,
    /// Who granted it, e.g. `etcd at 127.0.0.1:2379`.
    pub source: String,
    /// The namespace.
    pub namespace: String,
    /// This holder, as recorded with the lease.
    pub holder: String,
    /// The last renewal error, if the last renewal failed.
    pub last_error: Option<String>,
}

struct Shared {
    worker: u64,
    token: AtomicU64,
    state: AtomicU8,
    renewals: AtomicU64,
    failures: AtomicU64,
    regrants: AtomicU64,
    mark_ms: AtomicU64,
    acquired_in: Duration,
    source: String,
    namespace: String,
    holder: String,
    last_error: Mutex<Option<String>>,
}

/// Renewal timing: renew every third of the TTL; fence `margin` before the TTL runs out
/// (measured from the start of the last successful renewal, on the monotonic clock).
#[derive(Debug, Clone, Copy)]
struct Timing {
    ttl_ms: u64,
    margin_ms: u64,
}

impl Timing {
    fn interval(self) -> Duration {
        Duration::from_millis(self.ttl_ms / 3)
    }
    fn retry(self) -> Duration {
        self.interval().min(Duration::from_millis(250))
    }
    /// The fence for a renewal that started at `start_ms`.
    fn fence(self, start_ms: u64) -> u64 {
        start_ms + self.ttl_ms - self.margin_ms
    }
}

/// A worker id held for one generator: granted by an identity source, renewed by a
/// background thread, released on [`release`](Self::release) or drop.
///
/// The generator built with [`guard`](Self::guard) (see
/// [`SchemeDef::takes_guard`](idkit_core::SchemeDef::takes_guard)) issues only while the
/// lease is proven: from the start of the last successful renewal, for the TTL less a
/// margin of a fifth of it, on the monotonic clock. A grant is alive at the source for at
/// least the TTL from when the source handled the renewal, which is after it started, so
/// the generator falls silent before anyone else can be granted the same worker id.
///
/// # Examples
///
/// ```
/// use idkit_lease::{IdentitySource, Lease};
/// use idkit_snowflake::{Snowflake, Twitter};
/// use idkit_core::IdScheme;
///
/// let dir = std::env::temp_dir().join(format!("idkit-lease-doc-{}", std::process::id()));
/// let source = IdentitySource::parse("static:3")?.with_state_dir(Some(&dir));
/// let lease = Lease::acquire(&source, "snowflake-twitter", 1 << 10)?;
/// assert_eq!(lease.worker(), 3);
/// let generator = Snowflake::builder(Twitter)
///     .field("worker", lease.worker())
///     .guard(lease.guard())
///     .build()?;
/// generator.next_id()?;
/// lease.release();
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Lease {
    shared: Arc<Shared>,
    guard: Guard,
    stop: Mutex<Option<mpsc::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("worker", &self.shared.worker)
            .field("source", &self.shared.source)
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl Lease {
    /// Acquires a worker id in `0..slots` for `scope` (a scheme name; the lease is taken in
    /// `NAMESPACE/scope`), and starts renewing it.
    ///
    /// A static source takes its worker id (which must be below `slots`) and locks its
    /// state file. When the previous holder crashed holding a reservation of time still
    /// ahead of the clock (at most one TTL), this waits it out and then renews, so that the
    /// generator starts with a whole TTL proven; a clock further behind the recorded mark is
    /// left to the generator's rollback policy (it waits or fails).
    ///
    /// # Errors
    ///
    /// `Invalid` for `slots` 0 or a static worker id not below `slots`; `AllTaken`, `Held`,
    /// `Unreachable` as the backend reports them (for the grant, or for the renewal after
    /// such a wait); `Invalid` for a source whose backend this build lacks (a cargo
    /// feature).
    pub fn acquire(source: &IdentitySource, scope: &str, slots: u64) -> Result<Self, LeaseError> {
        let started = Instant::now();
        if slots == 0 {
            return Err(LeaseError::invalid(format!(
                "{scope} has no worker ids to lease (slots 0)"
            )));
        }
        let slots = source.max_workers.map_or(slots, |n| n.min(slots));
        let holder = holder_name();
        let (mut backend, timing) = open(source, scope, slots)?;
        let want = Want {
            namespace: format!("{}/{scope}", source.namespace),
            slots,
            holder: holder.clone(),
            ttl_ms: timing.ttl_ms,
        };
        let clock = idkit_core::MonotonicClock::new();
        let mut start_ms = clock.now_ms();
        let grant: Grant = backend.acquire(&want, timing.fence(start_ms))?;
        let now = clock.now_ms();
        if !grant.released && grant.mark_ms > now && grant.mark_ms - now <= timing.ttl_ms {
            // The previous holder stopped without releasing: its reservation of time is
            // still ahead. Wait it out rather than fail the first requests.
            tracing::info!(
                worker = grant.worker,
                wait_ms = grant.mark_ms - now,
                "waiting for the previous holder's reserved time to pass"
            );
            clock.wait_until_ms(grant.mark_ms + 1);
            // The wait used up what the grant proved: prove a whole TTL from now, or the
            // generator would open fenced until the first renewal, a third of a TTL away.
            start_ms = clock.now_ms();
            backend.renew(timing.fence(start_ms))?;
        }
        let guard = Guard::with_clock(grant.mark_ms, clock);
        // The fence counts from the start of the grant request (after a wait, of the
        // renewal that followed it).
        guard.open_until(timing.fence(start_ms));
        let shared = Arc::new(Shared {
            worker: grant.worker,
            token: AtomicU64::new(grant.token),
            state: AtomicU8::new(HELD),
            renewals: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            regrants: AtomicU64::new(0),
            mark_ms: AtomicU64::new(timing.fence(start_ms).max(grant.mark_ms)),
            acquired_in: started.elapsed(),
            source: backend.describe(),
            namespace: want.namespace.clone(),
            holder,
            last_error: Mutex::new(None),
        });
        let (tx, rx) = mpsc::channel();
        let thread = {
            let shared = Arc::clone(&shared);
            let guard = guard.clone();
            std::thread::Builder::new()
                .name(format!("idkit-lease-{}", grant.worker))
                .spawn(move || renew_loop(backend, &shared, &guard, timing, &rx))
                .map_err(|e| {
                    LeaseError::unreachable(format!("cannot start the renewal thread: {e}"))
                })?
        };
        Ok(Self {
            shared,
            guard,
            stop: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The worker id granted.
    pub fn worker(&self) -> u64 {
        self.shared.worker
    }

    /// The fencing token of the current grant (grows with every grant of this worker id).
    pub fn token(&self) -> u64 {
        self.shared.token.load(Ordering::Acquire)
    }

    /// The guard to build the generator with.
    pub fn guard(&self) -> Guard {
        self.guard.clone()
    }

    /// True while the generator may issue (the lease is proven now).
    pub fn is_proven(&self) -> bool {
        self.state(self.guard.clock().now_ms(), self.guard.fence_ms()) == LeaseState::Held
    }

    fn state(&self, now_ms: u64, fence_ms: u64) -> LeaseState {
        match self.shared.state.load(Ordering::Acquire) {
            LOST => LeaseState::Lost,
            RELEASED => LeaseState::Released,
            _ if now_ms < fence_ms => LeaseState::Held,
            _ => LeaseState::Unproven,
        }
    }

    /// The lease's state and counters.
    pub fn status(&self) -> Status {
        let s = &self.shared;
        let now_ms = self.guard.clock().now_ms();
        let fence_ms = self.guard.fence_ms();
        let state = self.state(now_ms, fence_ms);
        Status {
            worker: s.worker,
            token: s.token.load(Ordering::Acquire),
            state,
            renewals: s.renewals.load(Ordering::Relaxed),
            failures: s.failures.load(Ordering::Relaxed),
            regrants: s.regrants.load(Ordering::Relaxed),
            mark_ms: s.mark_ms.load(Ordering::Acquire),
            floor_ms: self.guard.floor_ms(),
            fence_ms,
            now_ms,
            acquired_in: s.acquired_in,
            source: s.source.clone(),
            namespace: s.namespace.clone(),
            holder: s.holder.clone(),
            last_error: s.last_error.lock().map(|e| e.clone()).unwrap_or(None),
        }
    }

    /// Closes the fence, records the time actually issued up to, and frees the worker id at
    /// once (rather than after the TTL). When it returns, the generator issues nothing more
    /// (it waits out the generator's current tick, [`Guard::close_and_drain`]).
    /// Idempotent; drop calls it too.
    pub fn release(&self) {
        let sender = self.stop.lock().ok().and_then(|mut s| s.take());
        drop(sender);
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.release();
    }
}

fn renew_loop(
    mut backend: Box<dyn Backend>,
    shared: &Shared,
    guard: &Guard,
    timing: Timing,
    stop: &mpsc::Receiver<()>,
) {
    let clock = guard.clock();
    let mut next = Instant::now() + timing.interval();
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match stop.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let started = Instant::now();
        let fence = timing.fence(clock.now_ms());
        let result = match backend.renew(fence) {
            Err(e) if e.kind() == LeaseErrorKind::Expired => {
                shared.failures.fetch_add(1, Ordering::Relaxed);
                backend.regrant(fence).map(|token| {
                    shared.token.store(token, Ordering::Release);
                    shared.regrants.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        worker = shared.worker,
                        token,
                        "lease expired while unreachable; granted again (nobody held it since)"
                    );
                })
            }
            other => other,
        };
        match result {
            Ok(()) => {
                shared.mark_ms.store(fence, Ordering::Release);
                guard.open_until(fence);
                shared.renewals.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut e) = shared.last_error.lock() {
                    *e = None;
                }
                next = started + timing.interval();
            }
            Err(e) => {
                shared.failures.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut last) = shared.last_error.lock() {
                    *last = Some(e.to_string());
                }
                if e.kind() == LeaseErrorKind::Lost {
                    guard.close();
                    shared.state.store(LOST, Ordering::Release);
                    tracing::error!(
                        worker = shared.worker,
                        "worker-id lease lost: {e}; issuing stops for good under this worker id"
                    );
                    // Nothing more to renew, and nothing to release: wait for the holder
                    // to let go.
                    let _ = stop.recv();
                    return;
                }
                tracing::warn!(worker = shared.worker, "lease renewal failed: {e}");
                next = Instant::now() + timing.retry();
            }
        }
    }
    // Release: close the fence and wait out the generator's current tick (so that nothing
    // issues once release returns), then record what was actually issued: ids carry times
    // at or before now (plus how far a logical clock may run ahead), and below the fence in
    // any case; never below the mark found at grant time.
    let fence = guard.close_and_drain();
    let issued = clock.now_ms().saturating_add(guard.max_ahead_ms() + 1);
    let mark = issued.min(fence).max(guard.floor_ms());
    match backend.release(mark) {
        Ok(()) => shared.mark_ms.store(mark, Ordering::Release),
        Err(e) => tracing::warn!(
            worker = shared.worker,
            "lease release failed ({e}); it frees itself when its TTL runs out"
        ),
    }
    shared.state.store(RELEASED, Ordering::Release);
}

/// `pid N on HOST`.
fn holder_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("pid {} on {host}", std::process::id())
}

/// `$open` in a build with the backend's cargo `feature`; without it, `$missing(feature)`,
/// the error that names it (and the arguments `$open` would have used, unused).
macro_rules! built_with {
    ($missing:ident, $feature:literal, ($($unused:ident),*), $open:block) => {{
        #[cfg(feature = $feature)]
        $open
        #[cfg(not(feature = $feature))]
        {
            let _ = ($($unused),*);
            Err($missing($feature))
        }
    }};
}

/// The backend for `source`, and its timing.
fn open(
    source: &IdentitySource,
    scope: &str,
    slots: u64,
) -> Result<(Box<dyn Backend>, Timing), LeaseError> {
    let ttl_ms = u64::try_from(source.ttl().as_millis()).unwrap_or(u64::MAX);
    let remote = Timing {
        ttl_ms,
        margin_ms: ttl_ms / 5,
    };
    let missing = |feature: &str| {
        LeaseError::invalid(format!(
            "identity {}: this build lacks the {feature} backend (cargo feature `{feature}` of idkit-lease)",
            source.display()
        ))
    };
    let _ = (&missing, scope, slots);
    match &source.kind {
        Kind::Static { worker, state_dir } => {
            built_with!(missing, "static", (worker, state_dir), {
                if *worker >= slots {
                    return Err(LeaseError::invalid(format!(
                        "static worker id {worker} does not fit: {scope} has {slots} worker ids (0 to {})",
                        slots - 1
                    )));
                }
                let Some(dir) = state_dir else {
                    return Err(LeaseError::invalid(
                        "a static identity without a state file has nothing to lease",
                    ));
                };
                let backend = crate::file::FileBackend::new(dir, scope, *worker);
                // No one else can be granted a static worker id: no margin needed.
                Ok((
                    Box::new(backend),
                    Timing {
                        ttl_ms,
                        margin_ms: 0,
                    },
                ))
            })
        }
        Kind::Sqlite { path } => built_with!(missing, "sqlite", (path, remote), {
            Ok((Box::new(crate::sql::SqliteBackend::open(path)?), remote))
        }),
        Kind::Postgres { params } => built_with!(missing, "postgres", (params, remote), {
            Ok((Box::new(crate::sql::PostgresBackend::open(params)?), remote))
        }),
        Kind::MySql { url } => built_with!(missing, "mysql", (url, remote), {
            Ok((Box::new(crate::sql::MySqlBackend::open(url)?), remote))
        }),
        Kind::Etcd { endpoint } => built_with!(missing, "etcd", (endpoint, remote), {
            Ok((Box::new(crate::etcd::EtcdBackend::new(endpoint)), remote))
        }),
    }
}
