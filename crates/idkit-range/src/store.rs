//! Where blocks come from: a [`Store`] keeps, per namespace, the highest counter value handed
//! out, and advances it atomically by a block at a time.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

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
        }
    }
}

impl std::error::Error for StoreError {}

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
    /// when the counter would overflow.
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError>;

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

fn next_lease(namespace: &str, current: i64, size: u64) -> Result<(Lease, i64), StoreError> {
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

/// The embedded store: one SQLite file in WAL mode; each lease is one `BEGIN IMMEDIATE`
/// transaction, so processes on one host can share the file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
    busy_timeout: Duration,
}

const SQLITE_SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_ranges (
    namespace  TEXT PRIMARY KEY,
    max_id     INTEGER NOT NULL,
    block_size INTEGER NOT NULL,
    leased_ms  INTEGER NOT NULL
)";

impl SqliteStore {
    /// A store in the file at `path` (created with its table on first use). A lease waits
    /// up to `busy_timeout` for another process's lease to finish.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unreachable`] when the file cannot be opened or set up.
    pub fn open(path: impl AsRef<Path>, busy_timeout: Duration) -> Result<Self, StoreError> {
        let store = Self {
            path: path.as_ref().to_owned(),
            conn: Mutex::new(None),
            busy_timeout,
        };
        let mut guard = store
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *guard = Some(store.connect()?);
        drop(guard);
        Ok(store)
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        let unreachable =
            |e: rusqlite::Error| StoreError::Unreachable(format!("{}: {e}", self.path.display()));
        let conn = Connection::open(&self.path).map_err(unreachable)?;
        conn.busy_timeout(self.busy_timeout).map_err(unreachable)?;
        // Switching a new file to WAL needs every other connection out of it, and SQLite
        // answers "database is locked" at once rather than calling the busy handler, so
        // several processes opening one new file at the same moment retry here.
        let deadline = std::time::Instant::now() + self.busy_timeout;
        loop {
            match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
                Ok(mode) if mode.eq_ignore_ascii_case("wal") => break,
                Ok(mode) if std::time::Instant::now() >= deadline => {
                    return Err(StoreError::Unreachable(format!(
                        "{}: cannot switch to WAL mode (still {mode})",
                        self.path.display()
                    )));
                }
                Err(e) if !is_busy(&e) || std::time::Instant::now() >= deadline => {
                    return Err(unreachable(e));
                }
                _ => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        conn.execute_batch("PRAGMA synchronous = FULL")
            .map_err(unreachable)?;
        // In one write transaction: an autocommit `CREATE TABLE IF NOT EXISTS` reads the
        // schema first and cannot upgrade to a write if another process created it meanwhile.
        conn.execute_batch(&format!("BEGIN IMMEDIATE; {SQLITE_SCHEMA}; COMMIT"))
            .map_err(unreachable)?;
        Ok(conn)
    }
}

/// `SQLITE_BUSY` or `SQLITE_LOCKED`, with any extended code.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl Store for SqliteStore {
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError> {
        let mut guard = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(self.connect()?);
        }
        let Some(conn) = guard.as_mut() else {
            unreachable!("connected above");
        };
        let unreachable =
            |e: rusqlite::Error| StoreError::Unreachable(format!("{}: {e}", self.path.display()));
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unreachable)?;
        let row: Option<(String, Option<i64>)> = tx
            .query_row(
                "SELECT typeof(max_id), CASE typeof(max_id) WHEN 'integer' THEN max_id END \
                 FROM idkit_ranges WHERE namespace = ?1",
                [namespace],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(unreachable)?;
        let current = match row {
            None => {
                tx.execute(
                    "INSERT INTO idkit_ranges(namespace, max_id, block_size, leased_ms) VALUES (?1, 0, 0, 0)",
                    [namespace],
                )
                .map_err(unreachable)?;
                0
            }
            Some((kind, Some(v))) if kind == "integer" => v,
            Some((kind, _)) => {
                return Err(StoreError::Corrupt {
                    namespace: namespace.to_owned(),
                    found: format!("a value of type {kind}"),
                });
            }
        };
        let (lease, new_max) = next_lease(namespace, current, size)?;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        tx.execute(
            "UPDATE idkit_ranges SET max_id = ?2, block_size = ?3, leased_ms = ?4 WHERE namespace = ?1",
            rusqlite::params![namespace, new_max, i64::try_from(size).unwrap_or(i64::MAX), now_ms],
        )
        .map_err(unreachable)?;
        tx.commit().map_err(unreachable)?;
        Ok(lease)
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

#[cfg(feature = "postgres")]
pub use pg::PostgresStore;

#[cfg(feature = "postgres")]
mod pg {
    use super::{Lease, Store, StoreError, next_lease};
    use std::sync::Mutex;

    /// The PostgreSQL store: each lease is one `INSERT ... ON CONFLICT DO UPDATE ...
    /// RETURNING` statement, atomic for every host that shares the database.
    pub struct PostgresStore {
        params: String,
        client: Mutex<Option<postgres::Client>>,
    }

    impl std::fmt::Debug for PostgresStore {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("PostgresStore").finish_non_exhaustive()
        }
    }

    const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_ranges (
        namespace  TEXT PRIMARY KEY,
        max_id     BIGINT NOT NULL,
        block_size BIGINT NOT NULL,
        leased_at  TIMESTAMPTZ NOT NULL DEFAULT now()
    )";

    impl PostgresStore {
        /// A store reached with libpq-style `params` (`host=127.0.0.1 port=5432 user=ids`).
        /// Connects lazily: a store that is down now is not an error until a lease.
        pub fn new(params: &str) -> Self {
            Self {
                params: params.to_owned(),
                client: Mutex::new(None),
            }
        }

        fn connect(&self) -> Result<postgres::Client, StoreError> {
            let mut client = postgres::Client::connect(&self.params, postgres::NoTls)
                .map_err(|e| StoreError::Unreachable(format!("postgres: {e}")))?;
            // Concurrent `CREATE TABLE IF NOT EXISTS` can race in PostgreSQL (a unique
            // violation in the catalog); the table then exists, which is all we need.
            if let Err(e) = client.batch_execute(SCHEMA) {
                let exists: Option<String> = client
                    .query_one("SELECT to_regclass('idkit_ranges')::text", &[])
                    .ok()
                    .and_then(|row| row.get(0));
                if exists.is_none() {
                    return Err(StoreError::Unreachable(format!("postgres: {e}")));
                }
            }
            Ok(client)
        }
    }

    impl Store for PostgresStore {
        fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError> {
            let size_i = i64::try_from(size).map_err(|_| StoreError::Exhausted)?;
            let mut guard = self
                .client
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if guard.is_none() {
                *guard = Some(self.connect()?);
            }
            let Some(client) = guard.as_mut() else {
                unreachable!("connected above");
            };
            let result = client.query_one(
                "INSERT INTO idkit_ranges AS r (namespace, max_id, block_size) VALUES ($1, $2, $2) \
                 ON CONFLICT (namespace) DO UPDATE \
                 SET max_id = r.max_id + EXCLUDED.block_size, block_size = EXCLUDED.block_size, \
                     leased_at = now() \
                 RETURNING max_id",
                &[&namespace, &size_i],
            );
            match result {
                Ok(row) => {
                    let new_max: i64 = row.get(0);
                    let (lease, _) = next_lease(namespace, new_max - size_i, size)?;
                    Ok(lease)
                }
                Err(e) => {
                    if e.code() == Some(&postgres::error::SqlState::NUMERIC_VALUE_OUT_OF_RANGE) {
                        return Err(StoreError::Exhausted);
                    }
                    // A broken connection is dropped; the next lease reconnects.
                    if e.is_closed() || e.as_db_error().is_none() {
                        *guard = None;
                    }
                    Err(StoreError::Unreachable(format!("postgres: {e}")))
                }
            }
        }

        fn describe(&self) -> String {
            "postgres".to_owned()
        }
    }
}
