//! The registry definition of `range`: its store (a SQLite file, or a PostgreSQL or MySQL
//! URL) as its one option.

use std::path::PathBuf;
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
    help: "the range allocator's store: a SQLite file (default: idkit-range.sqlite3 in the \
           system temporary directory, shared by every process of this host that uses the \
           default), or postgres://... or mysql://... shared by many hosts",
}];

impl RangeDef {
    /// The store file `options` name, or the default.
    pub fn store_path(options: &Options) -> PathBuf {
        options.get("range-store").map_or_else(
            || std::env::temp_dir().join("idkit-range.sqlite3"),
            PathBuf::from,
        )
    }
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
        let store = SqliteStore::open(Self::store_path(options), Duration::from_secs(5))
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
