//! The preset layouts: Twitter, Discord, Instagram, Sonyflake, Mastodon, Boundary.

use core::fmt::Debug;
use std::sync::LazyLock;

use super::*;

macro_rules! preset {
    ($(#[$doc:meta])* $ty:ident, $word:ty, $spec:ident = $build:expr) => {
        static $spec: LazyLock<LayoutSpec> = LazyLock::new(|| LayoutSpec::preset($build));

        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $ty;

        impl Layout for $ty {
            type Id = $word;
            fn spec(&self) -> &LayoutSpec {
                &$spec
            }
        }
    };
}

preset!(
    /// Twitter's Snowflake (2010): sign 1, time 41, datacenter 5, worker 5, sequence 12;
    /// 1 ms ticks from 2010-11-04T01:42:54.657Z (`twepoch` = 1288834974657).
    Twitter, u64, TWITTER = LayoutSpec::builder("snowflake-twitter", 64)
        .time(41).field("datacenter", 5).field("worker", 5).sequence(12)
        .epoch_ms(1_288_834_974_657)
);

preset!(
    /// Discord's snowflakes: time 42, worker 5, process 5, increment 12, all 64 bits;
    /// 1 ms ticks from 2015-01-01T00:00:00Z (Discord API reference, "Snowflakes").
    Discord, u64, DISCORD = LayoutSpec::builder("snowflake-discord", 64)
        .time(42).field("worker", 5).field("process", 5).sequence_named("increment", 12)
        .epoch_ms(1_420_070_400_000)
);

preset!(
    /// Instagram's sharded ids (2012): time 41, shard 13, sequence 10; 1 ms ticks from
    /// 1314220021721.
    Instagram, u64, INSTAGRAM = LayoutSpec::builder("snowflake-instagram", 64)
        .time(41).field("shard", 13).sequence(10)
        .epoch_ms(1_314_220_021_721)
);

preset!(
    /// Sony's Sonyflake: sign 1, time 39 in 10 ms units, sequence 8, machine 16 (sequence
    /// above machine), from 2014-09-01T00:00:00Z. For another start time, build a
    /// [`Custom`] layout with the same fields.
    Sonyflake, u64, SONYFLAKE = LayoutSpec::builder("sonyflake", 64)
        .time(39).sequence(8).field("machine", 16)
        .tick_ms(10).epoch_ms(1_409_529_600_000)
);

preset!(
    /// Mastodon's ids: time 48, sequence 16; 1 ms ticks from the Unix epoch.
    Mastodon, u64, MASTODON = LayoutSpec::builder("snowflake-mastodon", 64)
        .time(48).sequence(16)
);

preset!(
    /// Boundary's flake: 128 bits, time 64, worker 48, sequence 16; 1 ms ticks from the
    /// Unix epoch.
    Boundary, u128, BOUNDARY = LayoutSpec::builder("flake-boundary", 128)
        .time(64).field("worker", 48).sequence(16)
);

/// The preset layouts, in the order the README lists them.
pub fn presets() -> [&'static LayoutSpec; 6] {
    [
        &TWITTER, &DISCORD, &INSTAGRAM, &SONYFLAKE, &MASTODON, &BOUNDARY,
    ]
}

/// The preset layout called `name` (e.g. `snowflake-discord`).
pub fn preset(name: &str) -> Option<&'static LayoutSpec> {
    presets().into_iter().find(|p| p.name() == name)
}
