//! Properties over the full field ranges of every preset: compose/decompose round trips,
//! ids strictly increasing under any monotone clock, fields within their widths.

use idkit_core::{Codec, IdScheme, ManualClock};
use idkit_snowflake::{
    Boundary, Discord, Instagram, Layout, Mastodon, SequenceStart, Snowflake, SnowflakeCodec,
    Sonyflake, Twitter, presets,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn compose_decompose_roundtrip(
        preset_index in 0usize..6,
        tick_frac in any::<u64>(),
        values in proptest::array::uniform4(any::<u64>()),
    ) {
        let spec = presets()[preset_index];
        let tick = tick_frac & spec.max_tick();
        let ts = spec.tick_start_ms(tick).unwrap();
        let parts: Vec<(&str, u128)> = spec
            .fields()
            .zip(values)
            .map(|(f, v)| (f.name, u128::from(v & f.max())))
            .collect();
        let id = spec.compose_u128(ts, &parts).unwrap();
        let used = spec.word_bits() - spec.reserved_bits();
        prop_assert!(1u128.checked_shl(used).is_none_or(|limit| id < limit), "reserved bits stay zero");
        let decoded = spec.decode_u128(id).unwrap();
        prop_assert_eq!(decoded.timestamp_ms, Some(ts));
        for (name, value) in &parts {
            prop_assert_eq!(decoded.field(name), Some(&idkit_core::FieldValue::Int(u64::try_from(*value).unwrap())));
        }
    }

    #[test]
    fn too_wide_fields_are_rejected(preset_index in 0usize..6, extra in 1u64..1000) {
        let spec = presets()[preset_index];
        for field in spec.fields() {
            if field.bits < 64 {
                let value = u128::from(field.max()) + u128::from(extra);
                let err = spec.compose_u128(spec.epoch_ms(), &[(field.name, value)]).unwrap_err();
                prop_assert!(err.to_string().starts_with("field out of range"), "{}", err);
            }
        }
    }

    #[test]
    fn ids_strictly_increase_under_a_monotone_clock(
        steps in proptest::collection::vec((0u64..3, 1usize..300), 1..40),
        worker in 0u64..32,
        mode in 0u8..3,
        random_start in any::<bool>(),
    ) {
        let clock = ManualClock::new(Twitter.spec().epoch_ms() + 1_000_000);
        let mut builder = Snowflake::builder(Twitter).field("worker", worker).clock(&clock);
        if random_start {
            builder = builder.sequence_start(SequenceStart::Random { below: 100 }).seed(7);
        }
        let generator: Box<dyn IdScheme<Id = u64>> = match mode {
            0 => Box::new(builder.build().unwrap()),
            1 => Box::new(builder.build_atomic().unwrap()),
            _ => Box::new(builder.build_mutex().unwrap()),
        };
        let mut last = 0u64;
        for (advance, batch) in steps {
            clock.advance(advance);
            let ids = if batch % 2 == 0 { generator.take(batch).unwrap() } else {
                (0..batch).map(|_| generator.next_id().unwrap()).collect()
            };
            for id in ids {
                prop_assert!(id > last, "{} after {}", id, last);
                last = id;
                let d = SnowflakeCodec(Twitter).decode(id);
                prop_assert_eq!(d.field("worker"), Some(&idkit_core::FieldValue::Int(worker)));
                prop_assert_eq!(d.field("datacenter"), Some(&idkit_core::FieldValue::Int(0)));
            }
        }
    }

    #[test]
    fn parse_never_panics(text in "\\PC{0,45}") {
        let _ = SnowflakeCodec(Twitter).parse(&text);
        let _ = SnowflakeCodec(Boundary).parse(&text);
    }

    /// The lock-free generator makes the single-owner generator's ids under the same clock
    /// readings, for every preset: its word is the last id for a 64-bit layout (sequence
    /// above the machine and 10 ms ticks in Sonyflake's) and the last tick and sequence for
    /// Boundary's 128 bits. Batches long enough to spend a tick's sequence make both wait.
    #[test]
    fn the_lock_free_generator_makes_the_single_owners_ids(
        preset_index in 0usize..6,
        steps in proptest::collection::vec((0u64..25, 1usize..600), 1..12),
    ) {
        match preset_index {
            0 => same_ids(Twitter, &steps)?,
            1 => same_ids(Discord, &steps)?,
            2 => same_ids(Instagram, &steps)?,
            3 => same_ids(Sonyflake, &steps)?,
            4 => same_ids(Mastodon, &steps)?,
            _ => same_ids(Boundary, &steps)?,
        }
    }

    #[test]
    fn parse_format_roundtrip(id in any::<u64>()) {
        let text = SnowflakeCodec(Discord).format(id);
        prop_assert_eq!(SnowflakeCodec(Discord).parse(&text).unwrap(), id);
        let masked = id >> 1;
        prop_assert_eq!(SnowflakeCodec(Sonyflake).parse(&masked.to_string()).unwrap(), masked);
        prop_assert_eq!(SnowflakeCodec(Instagram).parse(&id.to_string()).unwrap(), id);
        prop_assert_eq!(SnowflakeCodec(Mastodon).parse(&id.to_string()).unwrap(), id);
    }
}

#[test]
fn random_sequence_start_stays_below_its_bound_and_varies() {
    let clock = ManualClock::new(Twitter.spec().epoch_ms() + 5_000);
    let generator = Snowflake::builder(Twitter)
        .clock(&clock)
        .sequence_start(SequenceStart::Random { below: 100 })
        .build()
        .unwrap();
    let mut starts = std::collections::BTreeSet::new();
    for _ in 0..500 {
        clock.advance(1);
        let seq = generator.next_id().unwrap() & 0xfff;
        assert!(seq < 100);
        starts.insert(seq);
    }
    // Leaf's point: low traffic no longer ends every id in sequence 0.
    assert!(starts.len() > 50, "only {} distinct starts", starts.len());
    let _ = Boundary.spec();
}

/// `steps` (clock advance in ms, then that many ids: a batch when even, one at a time when
/// odd) on a single-owner and a lock-free generator of `layout`, each on its own clock.
fn same_ids<L: Layout>(layout: L, steps: &[(u64, usize)]) -> Result<(), TestCaseError> {
    let start = layout.spec().epoch_ms() + 1_000_000;
    let (one, other) = (ManualClock::new(start), ManualClock::new(start));
    let single = Snowflake::builder(layout).clock(&one).build().unwrap();
    let atomic = Snowflake::builder(layout)
        .clock(&other)
        .build_atomic()
        .unwrap();
    for &(advance, n) in steps {
        one.advance(advance);
        other.advance(advance);
        let (a, b) = if n % 2 == 0 {
            (single.take(n).unwrap(), atomic.take(n).unwrap())
        } else {
            let a = (0..n)
                .map(|_| single.next_id().unwrap())
                .collect::<Vec<_>>();
            (a, (0..n).map(|_| atomic.next_id().unwrap()).collect())
        };
        prop_assert_eq!(a, b);
    }
    Ok(())
}
