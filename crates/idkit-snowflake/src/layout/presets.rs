//! The preset layouts: Twitter, Discord, Instagram, Sonyflake, Mastodon, Boundary. Each is a
//! `static` built in `const` (no lazy initialization, and no `std`); the tests check each
//! against [`LayoutBuilder::build`]'s rules.

use core::fmt::Debug;

use super::spec::{fixed, sequence, time};
use super::*;

macro_rules! preset {
    ($(#[$doc:meta])* $ty:ident, $word:ty, $spec:ident = $name:literal, $bits:literal,
     [$($part:expr),+ $(,)?], tick $tick:expr, epoch $epoch:expr) => {
        static $spec: LayoutSpec = LayoutSpec::packed($name, $bits, &[$($part),+], $tick, $epoch);

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
    Twitter, u64, TWITTER = "snowflake-twitter", 64,
    [time(41), fixed("datacenter", 5), fixed("worker", 5), sequence("sequence", 12)],
    tick 1, epoch 1_288_834_974_657
);

preset!(
    /// Discord's snowflakes: time 42, worker 5, process 5, increment 12, all 64 bits;
    /// 1 ms ticks from 2015-01-01T00:00:00Z (Discord API reference, "Snowflakes").
    Discord, u64, DISCORD = "snowflake-discord", 64,
    [time(42), fixed("worker", 5), fixed("process", 5), sequence("increment", 12)],
    tick 1, epoch 1_420_070_400_000
);

preset!(
    /// Instagram's sharded ids (2012): time 41, shard 13, sequence 10; 1 ms ticks from
    /// 1314220021721.
    Instagram, u64, INSTAGRAM = "snowflake-instagram", 64,
    [time(41), fixed("shard", 13), sequence("sequence", 10)],
    tick 1, epoch 1_314_220_021_721
);

preset!(
    /// Sony's Sonyflake: sign 1, time 39 in 10 ms units, sequence 8, machine 16 (sequence
    /// above machine), from 2014-09-01T00:00:00Z. For another start time, build a
    /// [`Custom`] layout with the same fields.
    Sonyflake, u64, SONYFLAKE = "sonyflake", 64,
    [time(39), sequence("sequence", 8), fixed("machine", 16)],
    tick 10, epoch 1_409_529_600_000
);

preset!(
    /// Mastodon's ids: time 48, sequence 16; 1 ms ticks from the Unix epoch.
    Mastodon, u64, MASTODON = "snowflake-mastodon", 64,
    [time(48), sequence("sequence", 16)],
    tick 1, epoch 0
);

preset!(
    /// Boundary's flake: 128 bits, time 64, worker 48, sequence 16; 1 ms ticks from the
    /// Unix epoch.
    Boundary, u128, BOUNDARY = "flake-boundary", 128,
    [time(64), fixed("worker", 48), sequence("sequence", 16)],
    tick 1, epoch 0
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each preset, packed in `const` without checks, is the layout the builder makes of
    /// the same parts after checking them.
    #[test]
    fn the_presets_pass_the_builders_checks() {
        for spec in presets() {
            let mut parts: Vec<FieldSpec> = spec.fields().chain([spec.time()]).collect();
            parts.sort_by_key(|f| core::cmp::Reverse(f.shift));
            let mut builder = LayoutSpec::builder(spec.name(), spec.word_bits())
                .tick_ms(spec.tick_ms())
                .epoch_ms(spec.epoch_ms());
            for f in parts {
                builder = match f.kind {
                    FieldKind::Time => builder.time(f.bits),
                    FieldKind::Sequence => builder.sequence_named(f.name, f.bits),
                    FieldKind::Fixed => builder.field(f.name, f.bits),
                };
            }
            assert_eq!(builder.build().as_ref(), Ok(spec), "{}", spec.name());
        }
    }
}
