#![doc = include_str!("../README.md")]

#[cfg(not(feature = "std"))]
compile_error!("idkit-snowflake needs its `std` feature for now (it is on by default)");

pub mod definition;
mod error;
mod generator;
mod id;
mod layout;
pub mod sql;
mod sync;

pub use idkit_core;
pub use idkit_core::id::{Id, Marker};
pub use idkit_core::{Clock, IdScheme, ManualClock, MonotonicClock, TickerClock};

pub use error::ConfigError;
pub use generator::{
    AtomicSnowflake, Builder, MutexSnowflake, RollbackPolicy, SequenceStart, Snowflake,
};
pub use id::SnowflakeId;
pub use layout::{
    Boundary, Custom, Discord, FieldKind, FieldSpec, Instagram, Layout, LayoutBuilder, LayoutSpec,
    MAX_FIELDS, Mastodon, SnowflakeCodec, Sonyflake, Twitter, Word, preset, presets,
};

/// Twitter's layout, single-owner.
pub type TwitterSnowflake<C = TickerClock> = Snowflake<Twitter, C>;
/// Discord's layout, single-owner.
pub type DiscordSnowflake<C = TickerClock> = Snowflake<Discord, C>;
/// Instagram's layout, single-owner.
pub type InstagramSnowflake<C = TickerClock> = Snowflake<Instagram, C>;
/// Sony's layout (10 ms ticks), single-owner.
pub type SonyflakeGenerator<C = TickerClock> = Snowflake<Sonyflake, C>;
/// Mastodon's layout, single-owner.
pub type MastodonSnowflake<C = TickerClock> = Snowflake<Mastodon, C>;
/// Boundary's 128-bit flake, single-owner.
pub type BoundaryFlake<C = TickerClock> = Snowflake<Boundary, C>;

/// A Twitter Snowflake id.
pub type TwitterId = SnowflakeId<Twitter>;
/// A Discord snowflake.
pub type DiscordId = SnowflakeId<Discord>;
/// An Instagram id.
pub type InstagramId = SnowflakeId<Instagram>;
/// A Sonyflake id.
pub type SonyflakeId = SnowflakeId<Sonyflake>;
/// A Mastodon id.
pub type MastodonId = SnowflakeId<Mastodon>;
/// A Boundary flake id (128 bits).
pub type BoundaryId = SnowflakeId<Boundary>;
