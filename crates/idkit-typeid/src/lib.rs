#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod codec;
#[cfg(feature = "std")]
mod definition;
mod generator;
mod prefix;

pub use idkit_core;
pub use idkit_core::reexports::*;

pub use codec::{TypeId, TypeIdCodec};
#[cfg(feature = "std")]
pub use definition::{DEFINITION, TypeIdDef};
pub use generator::{AtomicTypeIdGenerator, TypeIdGenerator, Typed};
pub use prefix::{MAX_PREFIX, Prefix};
