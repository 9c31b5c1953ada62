// The README's links, as paths of the crate: defined before the README, whose own
// definitions (to the source, for a forge) then give way.
#![doc = "[`AtomicSnowflake`]: crate::AtomicSnowflake\n[`Boundary`]: crate::Boundary\n[`Custom`]: crate::Custom\n[`Discord`]: crate::Discord\n[`Instagram`]: crate::Instagram\n[`LayoutSpec`]: crate::LayoutSpec\n[`Mastodon`]: crate::Mastodon\n[`MutexSnowflake`]: crate::MutexSnowflake\n[`RollbackPolicy`]: crate::RollbackPolicy\n[`SequenceStart::Random`]: crate::SequenceStart::Random\n[`Snowflake`]: crate::Snowflake\n[`SnowflakeCodec`]: crate::SnowflakeCodec\n[`Sonyflake`]: crate::Sonyflake\n[`Twitter`]: crate::Twitter\n[`sql::plpgsql`]: crate::sql::plpgsql\n"]
#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

/// The names of `alloc` that the standard library's prelude holds, for builds without `std`.
mod prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec::Vec;
    pub(crate) use alloc::{format, vec};
}

#[cfg(feature = "std")]
pub mod definition;
mod error;
mod generator;
mod id;
mod layout;
#[cfg(feature = "std")]
pub mod sql;
mod sync;

pub use idkit_core;
pub use idkit_core::reexports::*;
pub use idkit_core::{Clock, ManualClock};

pub use error::ConfigError;
#[cfg(feature = "std")]
pub use generator::MutexSnowflake;
pub use generator::{AtomicSnowflake, Builder, RollbackPolicy, SequenceStart, Snowflake};
pub use id::SnowflakeId;
pub use layout::{
    Boundary, Custom, Discord, FieldKind, FieldNames, FieldSpec, Instagram, Layout, LayoutBuilder,
    LayoutSpec, MAX_FIELDS, MAX_NAME, MAX_TEXT, Mastodon, SnowflakeCodec, Sonyflake, Twitter, Word,
    preset, presets,
};

/// Twitter's layout, single-owner.
pub type TwitterSnowflake<C = DefaultClock> = Snowflake<Twitter, C>;
/// Discord's layout, single-owner.
pub type DiscordSnowflake<C = DefaultClock> = Snowflake<Discord, C>;
/// Instagram's layout, single-owner.
pub type InstagramSnowflake<C = DefaultClock> = Snowflake<Instagram, C>;
/// Sony's layout (10 ms ticks), single-owner.
pub type SonyflakeGenerator<C = DefaultClock> = Snowflake<Sonyflake, C>;
/// Mastodon's layout, single-owner.
pub type MastodonSnowflake<C = DefaultClock> = Snowflake<Mastodon, C>;
/// Boundary's 128-bit flake, single-owner.
pub type BoundaryFlake<C = DefaultClock> = Snowflake<Boundary, C>;

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
