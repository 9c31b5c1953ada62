//! idkit's SQL functions as a loadable SQLite extension: `libidkit.so` (`.dylib` on macOS,
//! `.dll` on Windows), built from the `idkit-sqlite` crate, the same functions a Rust
//! program registers with `idkit_sqlite::register`.
//!
//! ```sql
//! .load ./libidkit
//! SELECT idkit_ulid_text(), idkit_snowflake('snowflake-twitter', 7);
//! ```

use std::os::raw::{c_char, c_int};

use rusqlite::{Connection, ffi};

/// The entry point SQLite calls when it loads `libidkit` (`.load ./libidkit` in the shell,
/// `SELECT load_extension('./libidkit')`, Python's `Connection.load_extension`): registers
/// idkit's functions on the connection that loaded it.
///
/// # Safety
///
/// Called by SQLite only, with the connection, the error message's out-pointer and the API
/// routines of the SQLite that loads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqlite3_idkit_init(
    db: *mut ffi::sqlite3,
    error: *mut *mut c_char,
    api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    // A panic must not unwind into SQLite's C frames: it is an error of the load instead.
    std::panic::catch_unwind(|| {
        // SAFETY: the arguments are SQLite's own, passed on as they came.
        unsafe { Connection::extension_init2(db, error, api, init) }
    })
    .unwrap_or(ffi::SQLITE_ERROR)
}

fn init(conn: Connection) -> rusqlite::Result<bool> {
    idkit_sqlite::register(&conn)?;
    // Registered on this connection only: each connection loads the extension.
    Ok(false)
}
