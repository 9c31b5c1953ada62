#![doc = include_str!("../README.md")]

mod codec;
mod definition;
mod generator;

pub use idkit_core;
pub use idkit_core::id::{Id, Marker};
pub use idkit_core::{IdScheme, MonotonicClock, TickerClock};

pub use codec::{EPOCH_MS, RANDOM_BITS, Tsid, TsidCodec};
pub use definition::{DEFINITION, TsidDef};
pub use generator::{
    AtomicTsidGenerator, DEFAULT_NODE_BITS, MAX_NODE_BITS, TsidConfigError, TsidGenerator,
};
