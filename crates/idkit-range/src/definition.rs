//! The registry definition of `range`: its store (a SQLite file, or a PostgreSQL or MySQL
//! URL) as its one option.

use std::path::{Path, PathBuf};
use std::time::Duration;

use idkit_core::codec::decimal::DecimalCodec;
use idkit_core::definition::{BuildError, BuildErrorKind, OptionSpec, Options, Scheme, SchemeDef};
use idkit_core::{CodecOnly, DynCodec, Erased, SchemeInfo};

use crate::{INFO, RangeAllocator, SqliteStore};

/// The `range` scheme: blocks leased from a SQLite file shared by the processes of a host, or
/// from PostgreSQL or MySQL / MariaDB shared by many hosts (features `postgres`, `mysql`).
/// Reading an id ([`SchemeDef::codec`]) opens no store; only [`SchemeDef::build`] does.
#[derive(Debug)]
pub struct RangeDef;

/// The registry definition of `range`.
pub static DEFINITION: RangeDef = RangeDef;

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "range-store",
    value: "PATH|URL",
    help: "the range allocator's store: a SQLite file or sqlite:///PATH (default: \
           idkit-range.sqlite3 in idkit's state directory, $IDKIT_STATE_DIR or \
           ~/.local/state/idkit, shared by every process of this host that uses the default), \
           or postgres://... or mysql://... shared by many hosts",
    reads: false,
}];

/// The default store's file name, in idkit's state directory
/// ([`idkit_core::state::state_dir`]).
pub const DEFAULT_STORE: &str = "idkit-range.sqlite3";

impl RangeDef {
    /// The store file `options` name (a path, or `sqlite:///PATH`), or the default: [`DEFAULT_STORE`] in idkit's state
    /// directory, which outlives a reboot (a counter that starts again reissues ids).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidValue`] for a `range-store` that names no file (empty, or
    /// `sqlite://` alone); [`BuildErrorKind::Unavailable`] for the default when idkit has no
    /// state directory
    /// that outlives a reboot ([`idkit_core::state::lasting_state_dir`]: no
    /// `IDKIT_STATE_DIR`, `XDG_STATE_HOME` or home directory, as for a system service): the
    /// temporary directory may be emptied at boot, or at every restart of a service with a
    /// private one.
    pub fn store_path(options: &Options) -> Result<PathBuf, BuildError> {
        if let Some(path) = options.get("range-store") {
            // `sqlite:///PATH`, as `--identity` takes a SQLite file, is the file PATH.
            let path = path.strip_prefix("sqlite://").unwrap_or(path);
            if path.is_empty() {
                // SQLite would open a private temporary database: a counter of its own.
                return Err(BuildError::invalid(
                    "range",
                    "range-store names no store: expected a SQLite file, sqlite:///PATH, \
                     postgres://... or mysql://...",
                ));
            }
            return Ok(PathBuf::from(path));
        }
        let dir = idkit_core::state::lasting_state_dir().ok_or_else(|| {
            BuildError::new(
                BuildErrorKind::Unavailable,
                "range",
                format!(
                    "no place for the default store that outlives a reboot: neither \
                     IDKIT_STATE_DIR, XDG_STATE_HOME nor a home directory is set, and the \
                     temporary directory may be emptied at boot (a counter that starts again \
                     reissues ids); set IDKIT_STATE_DIR, or name a store with range-store \
                     (for example /var/lib/idkit/{DEFAULT_STORE})"
                ),
            )
        })?;
        Ok(dir.join(DEFAULT_STORE))
    }
}

/// Makes the default store's directory, and refuses to start a new counter there while the
/// default store of earlier versions, in the temporary directory, holds one: ids from a new
/// counter would repeat the ones it handed out.
///
/// # Errors
///
/// [`BuildErrorKind::Unavailable`] naming both files, or the directory that cannot be made.
fn prepare_default(path: &Path) -> Result<(), BuildError> {
    let unavailable = |message| BuildError::new(BuildErrorKind::Unavailable, "range", message);
    let old = std::env::temp_dir().join(DEFAULT_STORE);
    if old != path && old.exists() && !path.exists() {
        return Err(unavailable(format!(
            "{} holds a range counter: the default store of earlier versions, in the \
             temporary directory, which a reboot may empty. The default is now {}; move the \
             file there with its -wal and -shm files (SQLite's log holds the latest leases), \
             with no process using them, so that its counter goes on, or name a store with \
             range-store",
            old.display(),
            path.display()
        )));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| unavailable(format!("cannot create {}: {e}", dir.display())))?;
    }
    Ok(())
}

impl SchemeDef for RangeDef {
    fn name(&self) -> &'static str {
        "range"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["ticket", "segment"]
    }
    fn summary(&self) -> &'static str {
        "ticket / range allocator: 64-bit ids in blocks leased from a SQLite store"
    }
    fn info(&self) -> SchemeInfo {
        INFO
    }
    fn codec(&self) -> Box<dyn DynCodec + Send + Sync> {
        Box::new(CodecOnly::new(DecimalCodec, INFO))
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    /// Opens the store (SQLite: 5 s busy timeout; a server is connected at the first lease)
    /// and builds an allocator leasing blocks of 1,000 growing to 100,000 as traffic asks.
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        options.check_against(self)?;
        let url = options.get("range-store").unwrap_or("");
        if url.starts_with("mysql://") {
            #[cfg(feature = "mysql")]
            return allocator(crate::MySqlStore::new(url));
            #[cfg(not(feature = "mysql"))]
            return Err(needs(url, "mysql"));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return allocator(crate::PostgresStore::new(url));
            #[cfg(not(feature = "postgres"))]
            return Err(needs(url, "postgres"));
        }
        let path = Self::store_path(options)?;
        if options.get("range-store").is_none() {
            prepare_default(&path)?;
        }
        let store = SqliteStore::open(path, Duration::from_secs(5))
            .map_err(|e| BuildError::new(BuildErrorKind::Unavailable, "range", e.to_string()))?;
        allocator(store)
    }
}

/// The error for a store URL whose feature is off.
#[cfg_attr(all(feature = "mysql", feature = "postgres"), allow(dead_code))]
fn needs(url: &str, feature: &str) -> BuildError {
    BuildError::invalid(
        "range",
        format!("range-store {url:?} needs idkit-range's feature {feature}"),
    )
}

/// An allocator on `store`, leasing blocks of 1,000 growing to 100,000 as traffic asks.
fn allocator<S: crate::Store>(store: S) -> Result<Scheme, BuildError> {
    let allocator = RangeAllocator::builder(store)
        .block_size(1_000)
        .max_block(100_000)
        .build()
        .map_err(|e| BuildError::invalid("range", e.to_string()))?;
    Ok(Box::new(Erased::new(allocator, DecimalCodec)))
}
