// The README's links, as paths of the crate: defined before the README, whose own
// definitions (to the source, for a forge) then give way.
#![doc = "[`SchemeDef`]: crate::SchemeDef\n[`registry`]: crate::registry\n"]
#![doc = include_str!("../README.md")]

pub mod baseline;
pub mod convert;
#[cfg(feature = "lease")]
pub mod identity;
#[cfg(feature = "render")]
pub mod inspect;
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
