//! Configuration errors: every invalid layout or generator is refused when built, with a
//! message that names what was wrong and what was expected.

use idkit_snowflake::{ConfigError, Custom, LayoutSpec, SequenceStart, Snowflake, Twitter};

fn msg<T: std::fmt::Debug>(r: Result<T, ConfigError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn invalid_layouts() {
    let base = || LayoutSpec::builder("t", 64);
    assert_eq!(
        msg(base().time(41).sequence(12).field("worker", 12).build()),
        "invalid layout: fields add up to 65 bits, more than the 64-bit word"
    );
    assert_eq!(
        msg(base().sequence(12).build()),
        "invalid layout: expected exactly one time field, found 0"
    );
    assert_eq!(
        msg(base().time(41).build()),
        "invalid layout: expected exactly one sequence field, found 0"
    );
    // A sequence above the time: a later tick's id could be a smaller integer, and a
    // generator's word, which only rises, was once moved back to an earlier tick by each
    // connection that laid it out (ids repeated in the SQLite functions).
    assert_eq!(
        msg(base().sequence(12).time(41).field("worker", 10).build()),
        "invalid layout: the sequence field must come after the time field (fields go from \
         the most significant bit): ids grow with their time, then their sequence"
    );
    assert_eq!(
        msg(LayoutSpec::parse(
            "custom",
            "sequence:12,time:41,worker:10",
            1,
            0
        )),
        msg(base().sequence(12).time(41).field("worker", 10).build())
    );
    assert_eq!(
        msg(base().time(41).field("worker", 0).sequence(12).build()),
        "invalid width for field \"worker\": expected 1 to 64 bits, found 0"
    );
    assert_eq!(
        msg(base()
            .time(40)
            .field("w", 4)
            .field("w", 4)
            .sequence(12)
            .build()),
        "invalid field name \"w\": names must be non-empty, unique and not \"time\""
    );
    assert_eq!(
        msg(base().time(41).sequence(12).tick_ms(0).build()),
        "invalid tick: expected at least 1 ms, found 0"
    );
    assert!(
        msg(base().time(41).sequence(12).epoch_ms(u64::MAX / 2).build())
            .starts_with("epoch in the future: epoch")
    );
    assert_eq!(
        msg(LayoutSpec::builder("t", 96).time(41).sequence(12).build()),
        "unsupported word: expected 64 or 128 bits, found 96"
    );
    assert_eq!(
        msg(base()
            .time(30)
            .field("a", 5)
            .field("b", 5)
            .field("c", 5)
            .field("d", 5)
            .sequence(5)
            .build()),
        "invalid layout: at most 4 fields besides time"
    );
    let spec128 = LayoutSpec::builder("w", 128)
        .time(64)
        .sequence(16)
        .build()
        .unwrap();
    assert_eq!(
        msg(Custom::<u64>::new(spec128)),
        "wrong word size: expected a 64-bit layout, found 128 bits"
    );
}

#[test]
fn custom_field_order_time_need_not_be_first() {
    // Sequence on top, then time: a legal (if odd) layout. Reserved bits are the spare.
    let spec = LayoutSpec::builder("odd", 64)
        .field("node", 8)
        .time(40)
        .sequence(10)
        .build()
        .unwrap();
    assert_eq!(spec.reserved_bits(), 6);
    assert_eq!(spec.time().shift, 10);
    let id = spec
        .compose_u128(5, &[("node", 255), ("sequence", 3)])
        .unwrap();
    assert_eq!(id, (255 << 50) | (5 << 10) | 3);
}

#[test]
fn invalid_generator_settings() {
    assert_eq!(
        msg(Snowflake::builder(Twitter).field("worker", 32).build()),
        "field out of range: worker must be at most 31, found 32"
    );
    assert_eq!(
        msg(Snowflake::builder(Twitter).field("shard", 1).build_atomic()),
        "unknown field \"shard\": expected one of datacenter, worker"
    );
    assert_eq!(
        msg(Snowflake::builder(Twitter)
            .field("sequence", 1)
            .build_mutex()),
        "unknown field \"sequence\": expected one of datacenter, worker"
    );
    assert_eq!(
        msg(Snowflake::builder(idkit_snowflake::Mastodon)
            .field("worker", 1)
            .build()),
        "unknown field \"worker\": this layout has no field to set"
    );
    assert_eq!(
        msg(Snowflake::builder(Twitter)
            .sequence_start(SequenceStart::Random { below: 5000 })
            .build()),
        "invalid random sequence start: expected 1 to 4096, found 5000"
    );
}
