#![doc = include_str!("../README.md")]

mod codec;
mod definition;
mod generator;
mod prefix;

pub use idkit_core;
pub use idkit_core::id::{Id, Marker};
pub use idkit_core::{IdScheme, MonotonicClock, TickerClock};

pub use codec::{TypeId, TypeIdCodec};
pub use definition::{DEFINITION, TypeIdDef};
pub use generator::{AtomicTypeIdGenerator, TypeIdGenerator, Typed};
pub use prefix::{MAX_PREFIX, Prefix};
