//! The registry definition of `range`: a SQLite store file as its one option.

use std::path::PathBuf;
use std::time::Duration;

use idkit_core::codec::decimal::DecimalCodec;
use idkit_core::definition::{BuildError, BuildErrorKind, OptionSpec, Options, Scheme, SchemeDef};
use idkit_core::{CodecOnly, DynCodec, Erased, SchemeInfo};

use crate::{INFO, RangeAllocator, SqliteStore};

/// The `range` scheme: blocks leased from a SQLite file shared by the processes of a host.
/// Reading an id ([`SchemeDef::codec`]) opens no store; only [`SchemeDef::build`] does.
#[derive(Debug)]
pub struct RangeDef;

/// The registry definition of `range`.
pub static DEFINITION: RangeDef = RangeDef;

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "range-store",
    value: "PATH",
    help: "the range allocator's SQLite file (default: idkit-range.sqlite3 in the system \
           temporary directory, shared by every process of this host that uses the default)",
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
    /// Opens the store (5 s busy timeout) and builds an allocator leasing blocks of 1,000
    /// growing to 100,000 as traffic asks.
    fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        options.check_against(self)?;
        let path = Self::store_path(options);
        let store = SqliteStore::open(&path, Duration::from_secs(5))
            .map_err(|e| BuildError::new(BuildErrorKind::Unavailable, "range", e.to_string()))?;
        let allocator = RangeAllocator::builder(store)
            .block_size(1_000)
            .max_block(100_000)
            .build()
            .map_err(|e| BuildError::invalid("range", e.to_string()))?;
        Ok(Box::new(Erased::new(allocator, DecimalCodec)))
    }
}
