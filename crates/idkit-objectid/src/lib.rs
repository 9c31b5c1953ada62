#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod codec;
mod generator;

pub use idkit_core;
pub use idkit_core::reexports::*;

pub use codec::{ObjectId, ObjectIdCodec};
pub use generator::{AtomicObjectIdGenerator, ObjectIdGenerator};

/// The registry definition of `objectid`: no settings; one generator (one process-unique
/// random value) shared without a lock ([`AtomicObjectIdGenerator`]).
#[cfg(feature = "std")]
pub static DEFINITION: idkit_core::PlainDef<ObjectIdCodec> = idkit_core::PlainDef {
    name: "objectid",
    aliases: &["object-id", "oid"],
    summary: "MongoDB ObjectId: 32-bit seconds, 40-bit process random, 24-bit counter, hex",
    codec: ObjectIdCodec,
    info: || ObjectIdCodec.info(),
    generator: || idkit_core::definition::shared(AtomicObjectIdGenerator::new(), ObjectIdCodec),
};
