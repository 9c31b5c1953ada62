#![doc = include_str!("../README.md")]

mod codec;
mod generator;

pub use idkit_core;
pub use idkit_core::{Clock, IdScheme, MonotonicClock};
pub use uuid::Uuid;

pub use codec::UuidCodec;
pub use generator::{UuidV4, UuidV7};
