#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod codec;
#[cfg(feature = "std")]
mod definition;
mod generator;

pub use idkit_core;
pub use idkit_core::reexports::*;

pub use codec::{EPOCH_MS, RANDOM_BITS, Tsid, TsidCodec};
#[cfg(feature = "std")]
pub use definition::{DEFINITION, TsidDef};
pub use generator::{
    AtomicTsidGenerator, DEFAULT_NODE_BITS, MAX_NODE_BITS, TsidConfigError, TsidGenerator,
};
