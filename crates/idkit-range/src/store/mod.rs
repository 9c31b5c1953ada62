//! Where blocks come from: a [`Store`] keeps, per namespace, the highest counter value handed
//! out, and advances it atomically by a block at a time: [`SqliteStore`] (`sqlite.rs`) for
//! the processes of one host, [`PostgresStore`] (`postgres.rs`, feature `postgres`) and
//! [`MySqlStore`] (`mysql.rs`, feature `mysql`, MySQL or MariaDB) for many.

use std::fmt;

/// Longest namespace, bytes.
pub const MAX_NAMESPACE: usize = 128;

/// A leased block of counter values, `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// First counter value of the block.
    pub first: u64,
    /// Last counter value of the block (inclusive).
    pub last: u64,
}

impl Lease {
    /// Counter values in the block.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// Never true: a lease holds at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Why a lease failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached or is busy past its timeout; retrying may succeed.
    Unreachable(String),
    /// The namespace's stored state is not a valid counter (negative, not an integer...).
    Corrupt {
        /// The namespace.
        namespace: String,
        /// What was found.
        found: String,
    },
    /// The counter would pass the largest value the store holds (2^63 - 1).
    Exhausted,
    /// The request is not one a store takes: a lease of 0 values, or a namespace that
    /// [`check_namespace`] refuses. Asking again the same way fails again.
    Invalid(String),
    /// The namespace is kept with another interleave than the allocator's: allocators that
    /// map one counter to ids differently hand out the same ids, so the lease is refused.
    Interleave {
        /// The namespace.
        namespace: String,
        /// The interleave the store keeps for it (its first allocator's).
        kept: Interleave,
        /// The allocator's.
        asked: Interleave,
    },
    /// The namespace's ids are spent at the allocator's interleave: the store leased counter
    /// values past the last one whose id, `counter * step + offset`, fits 64 bits. The
    /// allocator's, not a store's: the store's counter may go on.
    IdsSpent {
        /// The namespace.
        namespace: String,
        /// The allocator's interleave.
        interleave: Interleave,
        /// The largest id at that interleave, the last one handed out.
        last_id: u64,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable(reason) => write!(f, "range store unreachable: {reason}"),
            Self::Corrupt { namespace, found } => write!(
                f,
                "range store state of namespace {namespace:?} is corrupt: {found} (expected a counter >= 0)"
            ),
            Self::Exhausted => f.write_str("range store counter exhausted (2^63 - 1 reached)"),
            Self::Invalid(reason) => write!(f, "range store request refused: {reason}"),
            Self::Interleave {
                namespace,
                kept,
                asked,
            } => write!(
                f,
                "namespace {namespace:?} of this range store is leased with interleave {kept}, \
                 not {asked}: allocators of one namespace that interleave differently hand out \
                 the same ids (give each interleave a namespace or a store of its own)"
            ),
            Self::IdsSpent {
                namespace,
                interleave,
                last_id,
            } => write!(
                f,
                "namespace {namespace:?} has handed out its last id, {last_id}: at interleave \
                 {interleave} the next would pass 2^64 - 1"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// How an allocator maps its namespace's counter to ids: `counter * step + offset`
/// ([`RangeBuilder::interleave`](crate::RangeBuilder::interleave); step 1, offset 0 unless
/// set). Stores of the same `step` and different `offset`s never hand out the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interleave {
    /// Ids per counter value: the number of stores that take turns (1: no interleaving).
    pub step: u64,
    /// Added to every id; below `step`.
    pub offset: u64,
}

impl fmt::Display for Interleave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}, offset {}", self.step, self.offset)
    }
}

/// A place that hands out blocks. Implementations must make `lease` atomic across every
/// process and host that shares the store.
pub trait Store: Send + Sync + fmt::Debug + 'static {
    /// Advances `namespace`'s counter by `size` and returns the block it passed over,
    /// creating the namespace (at 0) on first use.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unreachable`] when the store cannot be used now,
    /// [`StoreError::Corrupt`] when the stored state is invalid, [`StoreError::Exhausted`]
    /// when the counter would overflow, [`StoreError::Invalid`] for a `size` of 0 or a
    /// namespace [`check_namespace`] refuses (the stores of this crate; see [`check_lease`]).
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError>;

    /// Keeps `asked` as `namespace`'s interleave if the namespace has none yet, and returns
    /// the one it keeps. An allocator asks before its first lease and leases only when the
    /// answer is its own interleave: two allocators that share a namespace's counter but map
    /// it to ids differently would hand out the same ids (the counter's value 25 is id 25 at
    /// step 1 and id 51 at step 2, offset 1, which is counter 51 at step 1).
    ///
    /// The stores of this crate keep it in a table of their own, `idkit_range_interleave`.
    /// This provided method keeps nothing and answers `asked`: a store that does not
    /// override it leaves it to its users to give every allocator of a namespace the same
    /// interleave.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unreachable`] when the store cannot be used now,
    /// [`StoreError::Invalid`] for a namespace [`check_namespace`] refuses.
    fn interleave(&self, namespace: &str, asked: Interleave) -> Result<Interleave, StoreError> {
        let _ = namespace;
        Ok(asked)
    }

    /// Where the store is, for messages.
    fn describe(&self) -> String;
}

/// Checks a namespace: 1 to [`MAX_NAMESPACE`] bytes, no control characters.
///
/// # Errors
///
/// A message saying what is wrong.
pub fn check_namespace(namespace: &str) -> Result<(), String> {
    if namespace.is_empty() {
        return Err("namespace is empty".to_owned());
    }
    if namespace.len() > MAX_NAMESPACE {
        return Err(format!(
            "namespace is {} bytes: at most {MAX_NAMESPACE}",
            namespace.len()
        ));
    }
    if namespace.chars().any(char::is_control) {
        return Err("namespace contains a control character".to_owned());
    }
    Ok(())
}

/// What a store checks before it leases: `namespace` (as [`check_namespace`]) and `size`,
/// returned as the database's integer.
///
/// # Errors
///
/// [`StoreError::Invalid`] for a refused namespace or a `size` of 0 (no block: its last
/// value would come before its first), [`StoreError::Exhausted`] for a `size` past 2^63 - 1.
pub fn check_lease(namespace: &str, size: u64) -> Result<i64, StoreError> {
    check_namespace(namespace).map_err(StoreError::Invalid)?;
    if size == 0 {
        return Err(StoreError::Invalid(
            "a lease of 0 values: a block holds at least one".to_owned(),
        ));
    }
    i64::try_from(size).map_err(|_| StoreError::Exhausted)
}

/// A server store's address and its one connection (made and made again by
/// [`connection`]). `Debug` shows neither: an address may hold a password.
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) struct Remote<C> {
    pub(crate) address: String,
    pub(crate) conn: std::sync::Mutex<Option<C>>,
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
impl<C> Remote<C> {
    pub(crate) fn new(address: &str) -> Self {
        Self {
            address: address.to_owned(),
            conn: std::sync::Mutex::new(None),
        }
    }
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
impl<C> fmt::Debug for Remote<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").finish_non_exhaustive()
    }
}

/// The connection slot of a store, locked. A poisoned lock is taken over: the slot holds a
/// connection or none, never half of one.
pub(crate) fn lock<C>(slot: &std::sync::Mutex<Option<C>>) -> std::sync::MutexGuard<'_, Option<C>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The store's connection: made at the first lease, and again at the first lease after an
/// error set the slot back to `None`.
pub(crate) fn connection<C>(
    slot: &mut Option<C>,
    connect: impl FnOnce() -> Result<C, StoreError>,
) -> Result<&mut C, StoreError> {
    if slot.is_none() {
        *slot = Some(connect()?);
    }
    slot.as_mut()
        .ok_or_else(|| StoreError::Unreachable("no connection".to_owned()))
}

pub(crate) fn next_lease(
    namespace: &str,
    current: i64,
    size: u64,
) -> Result<(Lease, i64), StoreError> {
    let first = u64::try_from(current).map_err(|_| StoreError::Corrupt {
        namespace: namespace.to_owned(),
        found: current.to_string(),
    })? + 1;
    let new_max = i64::try_from(size)
        .ok()
        .and_then(|s| current.checked_add(s))
        .ok_or(StoreError::Exhausted)?;
    let last = u64::try_from(new_max).map_err(|_| StoreError::Exhausted)?;
    Ok((Lease { first, last }, new_max))
}

/// Checks that the store `at(port)` gives up a server that never answers: a loopback
/// listener whose listen queue is full (connections it never accepts), so that the kernel
/// drops each new connection request, as for a host behind a network that drops packets.
/// The client's connect would wait for the system's TCP timeout (about two minutes on
/// Linux); the lease must fail [`StoreError::Unreachable`] well within a minute. Returns
/// the error.
#[cfg(all(
    test,
    target_os = "linux",
    any(feature = "postgres", feature = "mysql")
))]
pub(crate) fn gives_up_a_silent_server<S: Store>(at: impl Fn(u16) -> S) -> StoreError {
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // The queue is full once requests go unanswered; one unanswered request alone can be a
    // request the kernel dropped on a loaded machine, with room left in the queue (a client
    // let in would then wait for ever for the server to speak), so three in a row.
    let mut held: Vec<TcpStream> = Vec::new();
    let mut unanswered = 0;
    while unanswered < 3 && held.len() < 1024 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(500)) {
            Ok(stream) => {
                held.push(stream);
                unanswered = 0;
            }
            Err(_) => unanswered += 1,
        }
    }
    assert!(held.len() < 1024, "the listen queue never filled");
    let store = at(addr.port());
    let started = Instant::now();
    // On its own thread, so that a lease that never returns fails the test, not hangs it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(store.lease("orders", 10)));
    let e = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the lease still waits after 60 s")
        .unwrap_err();
    let took = started.elapsed();
    assert!(matches!(e, StoreError::Unreachable(_)), "{e:?}");
    // The stores' connect timeout is 2 s; the system's would be two minutes.
    assert!(
        took < Duration::from_secs(60),
        "gave up after {took:?}: {e}"
    );
    e
}

#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "mysql")]
pub use mysql::MySqlStore;
pub use sqlite::SqliteStore;
