//! Every idkit scheme behind one dependency, and a [`registry`] of schemes by their
//! stable names, which the `idkit` command line, the HTTP service and the benchmark harness
//! use to find schemes.
//!
//! Each scheme family is a feature (all on by default): `snowflake`, `uuid`, `ulid`,
//! `ksuid`, `range`, `tsid`, `objectid`, `typeid`. The `auto-increment` baseline is always
//! there. The `render` feature (off by default) adds `idkit_all::render`: decoded ids and scheme
//! facts as text and JSON.
//!
//! Every scheme crate defines its scheme once ([`SchemeDef`]); the [`registry`] lists those
//! definitions, and reading an id needs only a definition's codec:
//!
//! ```
//! let typeid = idkit_all::registry::find("typeid")?;
//! let decoded = typeid.codec().decode_text("user_01h455vb4pex5vsknk084sn02q")?;
//! assert_eq!(decoded.field("prefix").unwrap().to_string(), "user");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Examples
//!
//! ```
//! let scheme = idkit_all::registry::find("discord")?.build(&idkit_all::registry::Options::default())?;
//! let id = scheme.next_raw()?;
//! let text = scheme.format_raw(&id)?;
//! assert_eq!(scheme.parse_raw(&text)?, id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod baseline;
#[cfg(feature = "lease")]
pub mod identity;
pub mod registry;
#[cfg(feature = "render")]
pub mod render;

pub use idkit_core as core;
#[cfg(feature = "ksuid")]
pub use idkit_ksuid as ksuid;
#[cfg(feature = "objectid")]
pub use idkit_objectid as objectid;
#[cfg(feature = "range")]
pub use idkit_range as range;
#[cfg(feature = "snowflake")]
pub use idkit_snowflake as snowflake;
#[cfg(feature = "tsid")]
pub use idkit_tsid as tsid;
#[cfg(feature = "typeid")]
pub use idkit_typeid as typeid;
#[cfg(feature = "ulid")]
pub use idkit_ulid as ulid;
#[cfg(feature = "uuid")]
pub use idkit_uuid as uuid;

pub use idkit_core::id::{Id, IdType, Marker};
pub use idkit_core::{
    DynCodec, DynScheme, GenerateError, IdScheme, ParseError, RawId, SchemeDef, SchemeInfo,
};
