//! The embedded store: one SQLite file in WAL mode.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::{
    Interleave, Lease, Store, StoreError, check_lease, check_namespace, connection, lock,
    next_lease,
};

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
);
CREATE TABLE IF NOT EXISTS idkit_range_interleave (
    namespace TEXT PRIMARY KEY,
    step      INTEGER NOT NULL,
    id_offset INTEGER NOT NULL
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

    /// The store's error for `e`: unreachable, naming the file once (SQLite's message for a
    /// file it cannot open names it already).
    fn unreachable(&self, e: rusqlite::Error) -> StoreError {
        let (path, message) = (self.path.display().to_string(), e.to_string());
        StoreError::Unreachable(if message.contains(&path) {
            message
        } else {
            format!("{path}: {message}")
        })
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        let unreachable = |e| self.unreachable(e);
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
        check_lease(namespace, size)?;
        let mut guard = lock(&self.conn);
        let conn = connection(&mut guard, || self.connect())?;
        let unreachable = |e| self.unreachable(e);
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

    fn interleave(&self, namespace: &str, asked: Interleave) -> Result<Interleave, StoreError> {
        check_namespace(namespace).map_err(StoreError::Invalid)?;
        let mut guard = lock(&self.conn);
        let conn = connection(&mut guard, || self.connect())?;
        let unreachable = |e| self.unreachable(e);
        // The first allocator's row stays: a later one only reads it.
        conn.execute(
            "INSERT INTO idkit_range_interleave(namespace, step, id_offset) VALUES (?1, ?2, ?3) \
             ON CONFLICT(namespace) DO NOTHING",
            rusqlite::params![
                namespace,
                asked.step.cast_signed(),
                asked.offset.cast_signed()
            ],
        )
        .map_err(unreachable)?;
        conn.query_row(
            "SELECT step, id_offset FROM idkit_range_interleave WHERE namespace = ?1",
            [namespace],
            |r| {
                Ok(Interleave {
                    step: r.get::<_, i64>(0)?.cast_unsigned(),
                    offset: r.get::<_, i64>(1)?.cast_unsigned(),
                })
            },
        )
        .map_err(unreachable)
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}
