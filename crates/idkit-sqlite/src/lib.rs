//! idkit inside SQLite: SQL functions that make ids (ULID, UUIDv7, TypeID, every Snowflake
//! layout), read them (time, fields as JSON, text and bytes), and give the lowest and
//! highest id of a time for range queries, registered on a [`rusqlite::Connection`] by one
//! call. The loadable extension (`extensions/idkit-sqlite`, for the `sqlite3` shell,
//! Python and any program that loads extensions) is built from this crate. The functions
//! are named as idkit's PostgreSQL extension names them, so SQL moves between the two.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("idkit-sqlite-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let conn = rusqlite::Connection::open(dir.join("app.db"))?;
//! idkit_sqlite::register(&conn)?;
//! conn.execute_batch(
//!     "CREATE TABLE events (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), body TEXT);
//!      INSERT INTO events (body) VALUES ('a'), ('b');",
//! )?;
//! // The ids of one millisecond increase too: every connection of every process on this
//! // database takes the next id from one word in `app.db-idkit`.
//! let (first, last): (Vec<u8>, Vec<u8>) =
//!     conn.query_row("SELECT min(id), max(id) FROM events", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
//! assert!(first < last);
//! // Read back: the time, and the rows of a time range, an index search on the key.
//! let n: i64 = conn.query_row(
//!     "SELECT count(*) FROM events
//!      WHERE id BETWEEN idkit_ulid_lowest('2020-01-01') AND idkit_ulid_highest('2100-01-01')",
//!     [],
//!     |r| r.get(0),
//! )?;
//! assert_eq!(n, 2);
//! let twitter: i64 = conn.query_row("SELECT idkit_snowflake('snowflake-twitter', 7)", [], |r| r.get(0))?;
//! let worker: i64 = conn.query_row(
//!     "SELECT idkit_field(?1, 'snowflake-twitter', 'worker')", [twitter], |r| r.get(0))?;
//! assert_eq!(worker, 7);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! # What holds where
//!
//! - **A database file** (`Connection::open(path)`): ids of every generator are unique and
//!   increase across every connection of every process that opens the file, and across
//!   restarts of those processes, the clock behind or not (see [`state`]). The state lives
//!   in `DATABASE-idkit` (256 KiB), made beside the database on first use; keep it with
//!   the database, as SQLite's `-wal` and `-shm` files (a copy of the database without it
//!   starts its generators over from the clock).
//! - **In memory, a temporary database, or a read-only one whose state file cannot be
//!   written**: ULID, UUIDv7 and TypeID ids are unique and increase within the process
//!   (their random bits keep them apart from other processes'); Snowflake layouts, whose
//!   ids have no random bits, refuse with an error that says so.
//! - The time in an id lags the wall clock by at most 50,000 processor cycles (see
//!   [`clock`]): the clock is read again only when its last reading is older.
//! - A clock behind the ids already issued: ULID, UUIDv7 and TypeID run ahead of it by up
//!   to [`MAX_BEHIND_MS`], Snowflake layouts wait for it as long; past it, an error.

pub mod clock;
mod functions;
mod leaked;
mod made;
pub mod state;
mod users;

pub use functions::register;
pub use state::{MAX_BEHIND_MS, WINDOW_MS};

use std::fmt;

/// What went wrong with a generator's state.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The clock reads further behind the last id than [`MAX_BEHIND_MS`].
    ClockBehind {
        /// The clock, Unix ms.
        now_ms: u64,
        /// The last id's millisecond.
        last_ms: u64,
    },
    /// A generator that needs a state file (a Snowflake layout) on a database without one.
    NoStateFile {
        /// The generator.
        what: String,
        /// Why the database has none.
        why: &'static str,
    },
    /// Every slot of the state file holds another generator.
    Full {
        /// The slots there are.
        slots: usize,
    },
    /// The state file is not one of this version.
    State(String),
    /// The state file could not be opened, mapped or synced.
    Io(String),
    /// The random source failed.
    Random(idkit_core::GenerateError),
}

impl Error {
    fn io(path: &std::path::Path, doing: &str, e: std::io::Error) -> Self {
        Self::Io(format!("cannot {doing} {}: {e}", path.display()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ClockBehind { now_ms, last_ms } => write!(
                f,
                "the clock ({}) is {} ms behind the last id ({}), more than the {} ms idkit \
                 runs ahead of it (ULID, UUIDv7, TypeID) or waits for it (Snowflake layouts); \
                 ids resume once the clock is right",
                idkit_core::time::format_rfc3339_ms(*now_ms),
                last_ms.saturating_sub(*now_ms),
                idkit_core::time::format_rfc3339_ms(*last_ms),
                MAX_BEHIND_MS
            ),
            Self::NoStateFile { what, why } => write!(
                f,
                "{what} ids carry no random bits, so they need the database's state file to \
                 stay unique across processes and restarts, and {why}; open a database file \
                 that can be written"
            ),
            Self::Full { slots } => write!(
                f,
                "every one of the database's {slots} generators is taken by another layout \
                 or worker id, and a generator's place is never given to another (its last \
                 id keeps the next ones apart); make ids of these layouts and workers in \
                 another database, or stop every process on this one, move its state file \
                 (DATABASE-idkit) aside and wait 10 s (the most ids run ahead of the clock) \
                 before starting them again"
            ),
            Self::State(message) | Self::Io(message) => f.write_str(message),
            Self::Random(e) => write!(f, "the random source: {e}"),
        }
    }
}

impl std::error::Error for Error {}
