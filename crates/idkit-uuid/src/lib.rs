#![doc = include_str!("../README.md")]

mod codec;
mod generator;

pub use idkit_core;
pub use idkit_core::id::{Id, Marker};
pub use idkit_core::{Clock, IdScheme, MonotonicClock, TickerClock};
pub use uuid::Uuid;

pub use codec::UuidCodec;
pub use generator::{AtomicUuidV7, UuidV4, UuidV7, V7Layout};

/// The registry definitions: `uuid-v4` and `uuid-v7`.
pub mod definition {
    use idkit_core::{Erased, PlainDef};

    use crate::{AtomicUuidV7, UuidCodec, UuidV4};

    /// UUID version 4.
    pub static UUID_V4: PlainDef<UuidCodec> = PlainDef {
        name: "uuid-v4",
        aliases: &["uuid4", "v4"],
        summary: "UUID version 4: 122 random bits",
        codec: UuidCodec::V4,
        info: || UuidCodec::V4.info(),
        generator: || Box::new(Erased::new(UuidV4::new(), UuidCodec::V4)),
    };

    /// UUID version 7, monotonic; shared without a lock ([`AtomicUuidV7`]).
    pub static UUID_V7: PlainDef<UuidCodec> = PlainDef {
        name: "uuid-v7",
        aliases: &["uuid7", "v7"],
        summary: "UUID version 7: 48-bit Unix ms, 74-bit monotonic random counter",
        codec: UuidCodec::V7,
        info: || UuidCodec::V7.info(),
        generator: || Box::new(Erased::new(AtomicUuidV7::new(), UuidCodec::V7)),
    };
}
