//! Every scheme by its stable name, with short aliases. The CLI, the service and the harness
//! find schemes only here; adding a scheme to all three is one [`Entry`] in [`ENTRIES`].

use core::fmt;
#[cfg(any(feature = "uuid", feature = "ulid"))]
use std::sync::Mutex;

use idkit_core::{DynScheme, Erased, SchemeInfo};
#[cfg(feature = "snowflake")]
use idkit_snowflake::Layout as _;

use crate::baseline::{AutoIncrement, AutoIncrementCodec};

/// A scheme ready to use from any thread.
pub type Scheme = Box<dyn DynScheme + Send + Sync>;

/// How to build a scheme: values for its fixed fields (worker, datacenter, shard, machine,
/// process) and, for Snowflake layouts, a rollback policy. Unset fields are 0.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Field values by name.
    pub fields: Vec<(String, u64)>,
    /// The clock-rollback policy (Snowflake layouts); `None` for the default.
    #[cfg(feature = "snowflake")]
    pub rollback: Option<idkit_snowflake::RollbackPolicy>,
    /// The range allocator's SQLite file; `None` for `idkit-range.sqlite3` in the system
    /// temporary directory (shared by every process of this host that uses the default).
    pub store: Option<std::path::PathBuf>,
}

impl Options {
    /// Sets a field.
    #[must_use]
    pub fn field(mut self, name: &str, value: u64) -> Self {
        self.fields.push((name.to_owned(), value));
        self
    }
}

/// Why a scheme could not be found or built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// No scheme has this name or alias.
    UnknownScheme {
        /// The name asked for.
        name: String,
        /// The stable names, comma-separated.
        known: String,
    },
    /// The options do not fit the scheme (a field it lacks, a value too wide...).
    Config {
        /// The scheme.
        scheme: &'static str,
        /// What was wrong.
        message: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownScheme { name, known } => {
                write!(f, "unknown scheme {name:?}: expected one of {known}")
            }
            Self::Config { scheme, message } => write!(f, "{scheme}: {message}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// One scheme in the registry.
pub struct Entry {
    /// Stable name, e.g. `snowflake-twitter`.
    pub name: &'static str,
    /// Short names that find it too, e.g. `twitter`.
    pub aliases: &'static [&'static str],
    /// One line for listings.
    pub summary: &'static str,
    build: fn(&Options) -> Result<Scheme, BuildError>,
    identity: fn() -> Vec<(&'static str, u32)>,
    facts: fn() -> SchemeInfo,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Entry {
    /// Builds the scheme with `options`. Shared generators: lock-free for Snowflake layouts,
    /// a mutex around the single-owner generator for UUIDv7 and ULID, stateless for UUIDv4
    /// and KSUID, an atomic counter for auto-increment.
    ///
    /// # Errors
    ///
    /// [`BuildError::Config`] when an option names a field the scheme lacks or a value does
    /// not fit.
    pub fn build(&self, options: &Options) -> Result<Scheme, BuildError> {
        (self.build)(options)
    }

    /// The fields that tell one generator from another (worker, datacenter, shard,
    /// machine, process) with their widths in bits, most significant first. Empty for a
    /// scheme that needs no generator identity.
    pub fn identity_fields(&self) -> Vec<(&'static str, u32)> {
        (self.identity)()
    }

    /// Options giving this generator the identity `n`, spread over
    /// [`identity_fields`](Self::identity_fields) with the low bits in the last field
    /// (for Twitter, `n = 33` is datacenter 1, worker 1).
    ///
    /// # Errors
    ///
    /// [`BuildError::Config`] when `n` does not fit the identity bits, or when the scheme has
    /// no identity and `n` is not 0.
    pub fn with_identity(&self, n: u64) -> Result<Options, BuildError> {
        let mut options = Options::default();
        let mut rest = n;
        for (name, bits) in self.identity_fields().into_iter().rev() {
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            options.fields.insert(0, (name.to_owned(), rest & mask));
            rest = if bits >= 64 { 0 } else { rest >> bits };
        }
        if rest != 0 {
            return Err(BuildError::Config {
                scheme: self.name,
                message: format!("generator identity {n} does not fit the identity bits"),
            });
        }
        Ok(options)
    }

    /// The scheme's facts, without building a generator (building `range` opens its
    /// store and leases a block). The same as the built scheme's `info()` (tested).
    pub fn info(&self) -> SchemeInfo {
        (self.facts)()
    }
}

/// The schemes compiled in, in the order listings show them.
pub static ENTRIES: &[Entry] = &[
    #[cfg(feature = "snowflake")]
    Entry {
        name: "snowflake-twitter",
        aliases: &["twitter"],
        summary: "Twitter Snowflake: 41-bit ms, datacenter 5, worker 5, sequence 12",
        build: |o| snowflake(idkit_snowflake::Twitter, o),
        identity: || identity(&idkit_snowflake::Twitter),
        facts: || idkit_snowflake::Twitter.spec().info(),
    },
    #[cfg(feature = "snowflake")]
    Entry {
        name: "snowflake-discord",
        aliases: &["discord"],
        summary: "Discord: 42-bit ms since 2015, worker 5, process 5, increment 12",
        build: |o| snowflake(idkit_snowflake::Discord, o),
        identity: || identity(&idkit_snowflake::Discord),
        facts: || idkit_snowflake::Discord.spec().info(),
    },
    #[cfg(feature = "snowflake")]
    Entry {
        name: "snowflake-instagram",
        aliases: &["instagram"],
        summary: "Instagram: 41-bit ms, shard 13, sequence 10",
        build: |o| snowflake(idkit_snowflake::Instagram, o),
        identity: || identity(&idkit_snowflake::Instagram),
        facts: || idkit_snowflake::Instagram.spec().info(),
    },
    #[cfg(feature = "snowflake")]
    Entry {
        name: "sonyflake",
        aliases: &["sony"],
        summary: "Sonyflake: 39 bits of 10 ms, sequence 8, machine 16",
        build: |o| snowflake(idkit_snowflake::Sonyflake, o),
        identity: || identity(&idkit_snowflake::Sonyflake),
        facts: || idkit_snowflake::Sonyflake.spec().info(),
    },
    #[cfg(feature = "snowflake")]
    Entry {
        name: "snowflake-mastodon",
        aliases: &["mastodon"],
        summary: "Mastodon: 48-bit Unix ms, sequence 16",
        build: |o| snowflake(idkit_snowflake::Mastodon, o),
        identity: || identity(&idkit_snowflake::Mastodon),
        facts: || idkit_snowflake::Mastodon.spec().info(),
    },
    #[cfg(feature = "snowflake")]
    Entry {
        name: "flake-boundary",
        aliases: &["boundary", "flake"],
        summary: "Boundary flake: 128 bits, 64-bit Unix ms, worker 48, sequence 16",
        build: |o| snowflake(idkit_snowflake::Boundary, o),
        identity: || identity(&idkit_snowflake::Boundary),
        facts: || idkit_snowflake::Boundary.spec().info(),
    },
    #[cfg(feature = "uuid")]
    Entry {
        name: "uuid-v4",
        aliases: &["uuid4", "v4"],
        summary: "UUID version 4: 122 random bits",
        build: |o| {
            no_fields("uuid-v4", o)?;
            Ok(Box::new(Erased::new(
                idkit_uuid::UuidV4::new(),
                idkit_uuid::UuidCodec::V4,
            )))
        },
        identity: Vec::new,
        facts: || idkit_uuid::UuidCodec::V4.info(),
    },
    #[cfg(feature = "uuid")]
    Entry {
        name: "uuid-v7",
        aliases: &["uuid7", "v7"],
        summary: "UUID version 7: 48-bit Unix ms, 74-bit monotonic random counter",
        build: |o| {
            no_fields("uuid-v7", o)?;
            Ok(Box::new(Erased::new(
                Mutex::new(idkit_uuid::UuidV7::new()),
                idkit_uuid::UuidCodec::V7,
            )))
        },
        identity: Vec::new,
        facts: || idkit_uuid::UuidCodec::V7.info(),
    },
    #[cfg(feature = "ulid")]
    Entry {
        name: "ulid",
        aliases: &[],
        summary: "ULID: 48-bit Unix ms, 80 random bits, monotonic, Crockford base32",
        build: |o| {
            no_fields("ulid", o)?;
            Ok(Box::new(Erased::new(
                Mutex::new(idkit_ulid::UlidGenerator::new()),
                idkit_ulid::UlidCodec,
            )))
        },
        identity: Vec::new,
        facts: || idkit_ulid::UlidCodec.info(),
    },
    #[cfg(feature = "ksuid")]
    Entry {
        name: "ksuid",
        aliases: &[],
        summary: "KSUID: 32-bit seconds since 2014, 128-bit payload, base62",
        build: |o| {
            no_fields("ksuid", o)?;
            Ok(Box::new(Erased::new(
                idkit_ksuid::KsuidGenerator::new(),
                idkit_ksuid::KsuidCodec,
            )))
        },
        identity: Vec::new,
        facts: || idkit_ksuid::KsuidCodec.info(),
    },
    #[cfg(feature = "range")]
    Entry {
        name: "range",
        aliases: &["ticket", "segment"],
        summary: "ticket / range allocator: 64-bit ids in blocks leased from a SQLite store",
        build: |o| {
            no_fields("range", o)?;
            let path = o
                .store
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("idkit-range.sqlite3"));
            let config = |message: String| BuildError::Config {
                scheme: "range",
                message,
            };
            let store = idkit_range::SqliteStore::open(&path, std::time::Duration::from_secs(5))
                .map_err(|e| config(e.to_string()))?;
            let allocator = idkit_range::RangeAllocator::builder(store)
                .block_size(1_000)
                .max_block(100_000)
                .build()
                .map_err(|e| config(e.to_string()))?;
            Ok(Box::new(Erased::new(allocator, idkit_range::RangeCodec)))
        },
        identity: Vec::new,
        facts: || idkit_range::RangeCodec.info(),
    },
    Entry {
        name: "auto-increment",
        aliases: &["autoincrement", "serial"],
        summary: "a single counter, as a database sequence gives (baseline)",
        build: |o| {
            no_fields("auto-increment", o)?;
            Ok(Box::new(Erased::new(
                AutoIncrement::new(),
                AutoIncrementCodec,
            )))
        },
        identity: Vec::new,
        facts: || AutoIncrementCodec.info(),
    },
];

/// Every scheme compiled in.
pub fn schemes() -> &'static [Entry] {
    ENTRIES
}

/// The scheme with this stable name or alias (ASCII case-insensitive).
///
/// # Errors
///
/// [`BuildError::UnknownScheme`] listing the stable names.
pub fn find(name: &str) -> Result<&'static Entry, BuildError> {
    ENTRIES
        .iter()
        .find(|e| {
            e.name.eq_ignore_ascii_case(name)
                || e.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| BuildError::UnknownScheme {
            name: name.to_owned(),
            known: ENTRIES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn no_fields(scheme: &'static str, options: &Options) -> Result<(), BuildError> {
    match options.fields.first() {
        None => Ok(()),
        Some((name, _)) => Err(BuildError::Config {
            scheme,
            message: format!("unknown field {name:?}: this scheme has no fields to set"),
        }),
    }
}

#[cfg(feature = "snowflake")]
fn identity<L: idkit_snowflake::Layout>(layout: &L) -> Vec<(&'static str, u32)> {
    layout
        .spec()
        .fields()
        .filter(|f| f.kind == idkit_snowflake::FieldKind::Fixed)
        .map(|f| (f.name, f.bits))
        .collect()
}

#[cfg(feature = "snowflake")]
fn snowflake<L: idkit_snowflake::Layout>(
    layout: L,
    options: &Options,
) -> Result<Scheme, BuildError> {
    let mut builder = idkit_snowflake::Snowflake::builder(layout);
    for (name, value) in &options.fields {
        builder = builder.field(name, *value);
    }
    if let Some(policy) = options.rollback {
        builder = builder.rollback(policy);
    }
    let generator = builder.build_atomic().map_err(|e| BuildError::Config {
        scheme: layout.spec().name(),
        message: e.to_string(),
    })?;
    Ok(Box::new(Erased::new(
        generator,
        idkit_snowflake::SnowflakeCodec(layout),
    )))
}
