//! Known-answer vectors: one test per file in `tests/data/`, each file naming its source.

use std::collections::BTreeMap;

use idkit_core::{
    Clock, Codec, Compose, Decoded, DynScheme, Erased, FieldValue, IdScheme, ManualClock,
};
use idkit_snowflake::{
    Boundary, Discord, Instagram, LayoutSpec, Mastodon, RollbackPolicy, Snowflake, SnowflakeCodec,
    Sonyflake, Twitter, preset,
};
use idkit_testkit::load_vectors;
use serde::Deserialize;

const DIR: &str = env!("CARGO_MANIFEST_DIR");

/// A codec for a preset by name, through the object-safe form so one test serves all.
fn dyn_codec(scheme: &str) -> Box<dyn DynScheme> {
    fn erased<L: idkit_snowflake::Layout>(l: L) -> Box<dyn DynScheme> {
        let generator = Snowflake::builder(l).build().expect("preset generator");
        Box::new(Erased::new(generator, SnowflakeCodec(l)))
    }
    match scheme {
        "snowflake-twitter" => erased(Twitter),
        "snowflake-discord" => erased(Discord),
        "snowflake-instagram" => erased(Instagram),
        "sonyflake" => erased(Sonyflake),
        "snowflake-mastodon" => erased(Mastodon),
        "flake-boundary" => erased(Boundary),
        other => panic!("no preset {other}"),
    }
}

fn spec(scheme: &str) -> &'static LayoutSpec {
    preset(scheme).unwrap_or_else(|| panic!("no preset {scheme}"))
}

#[derive(Deserialize)]
struct DecodeFile {
    vector: Vec<DecodeVector>,
}

#[derive(Deserialize)]
struct DecodeVector {
    name: String,
    scheme: String,
    id: String,
    timestamp_ms: u64,
    fields: BTreeMap<String, u64>,
}

impl DecodeVector {
    /// `decoded` has the vector's timestamp and the value of each of its fields.
    fn assert_decodes_as(&self, decoded: &Decoded) {
        assert_eq!(
            decoded.timestamp_ms,
            Some(self.timestamp_ms),
            "{}",
            self.name
        );
        for (name, value) in &self.fields {
            assert_eq!(
                decoded.field(name),
                Some(&FieldValue::Int(*value)),
                "{}: field {name}",
                self.name
            );
        }
    }

    /// The id its scheme composes from its timestamp and fields, with the vector's name.
    fn compose(&self) -> u128 {
        let parts: Vec<(&str, u128)> = self
            .fields
            .iter()
            .map(|(k, v)| (k.as_str(), u128::from(*v)))
            .collect();
        spec(&self.scheme)
            .compose_u128(self.timestamp_ms, &parts)
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

#[test]
fn decode() {
    let file: DecodeFile = load_vectors(DIR, "decode");
    for v in file.vector {
        let codec = dyn_codec(&v.scheme);
        let raw = codec
            .parse_raw(&v.id)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        let decoded = codec.decode_raw(&raw).unwrap();
        v.assert_decodes_as(&decoded);
        assert_eq!(decoded.fields.len(), v.fields.len(), "{}", v.name);
        assert_eq!(codec.format_raw(&raw).unwrap(), v.id, "{}: format", v.name);
        // Composing the decoded parts gives the id back.
        assert_eq!(v.compose().to_string(), v.id, "{}: compose", v.name);
    }
}

#[derive(Deserialize)]
struct ComposeFile {
    vector: Vec<DecodeVector>,
}

#[test]
fn compose() {
    let file: ComposeFile = load_vectors(DIR, "compose");
    for v in file.vector {
        let id = v.compose();
        assert_eq!(id.to_string(), v.id, "{}", v.name);
        // And back: the timestamp and every field decode to what was composed.
        v.assert_decodes_as(&spec(&v.scheme).decode_u128(id).unwrap());
    }
    // The typed codec composes the same ids as the spec.
    let typed = SnowflakeCodec(Instagram)
        .compose(1_315_607_284_721, &[("shard", 1341), ("sequence", 905)])
        .unwrap();
    assert_eq!(typed, 11_637_205_501_278_089);
}

#[derive(Deserialize)]
struct InvalidFile {
    vector: Vec<InvalidVector>,
}

#[derive(Deserialize)]
struct InvalidVector {
    name: String,
    scheme: String,
    text: String,
    error: String,
}

#[test]
fn invalid() {
    let file: InvalidFile = load_vectors(DIR, "invalid");
    for v in file.vector {
        let err = dyn_codec(&v.scheme).parse_raw(&v.text).expect_err(&v.name);
        assert_eq!(err.to_string(), v.error, "{}", v.name);
    }
    // The same checks guard raw bytes, not only text.
    let raw = idkit_core::RawId::from_u64(1 << 63);
    assert!(dyn_codec("snowflake-twitter").decode_raw(&raw).is_err());
    assert!(dyn_codec("snowflake-discord").decode_raw(&raw).is_ok());
}

#[derive(Deserialize)]
struct IdWorkerFile {
    step: Vec<IdWorkerStep>,
    rollover: Rollover,
}

#[derive(Deserialize)]
struct IdWorkerStep {
    time: u64,
    id: Option<u64>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Rollover {
    time: u64,
    ids_at_time: usize,
    next_time: u64,
    next_sequence: u64,
}

const TWEPOCH: u64 = 1_288_834_974_657;

#[test]
fn twitter_idworker() {
    let file: IdWorkerFile = load_vectors(DIR, "twitter_idworker");
    let clock = ManualClock::new(TWEPOCH);
    let single = Snowflake::builder(Twitter)
        .clock(&clock)
        .rollback(RollbackPolicy::FailFast)
        .build()
        .unwrap();
    let atomic = Snowflake::builder(Twitter)
        .clock(&clock)
        .rollback(RollbackPolicy::FailFast)
        .build_atomic()
        .unwrap();
    let mutex = Snowflake::builder(Twitter)
        .clock(&clock)
        .rollback(RollbackPolicy::FailFast)
        .build_mutex()
        .unwrap();
    let modes: [&dyn IdScheme<Id = u64>; 3] = [&single, &atomic, &mutex];
    for step in &file.step {
        clock.set(TWEPOCH + step.time);
        for (m, generator) in modes.iter().enumerate() {
            match (&step.id, &step.error, generator.next_id()) {
                (Some(want), None, Ok(got)) => assert_eq!(got, *want, "mode {m}"),
                (None, Some(want), Err(got)) => assert_eq!(&got.to_string(), want, "mode {m}"),
                (_, _, got) => panic!("mode {m}, time {}: unexpected {got:?}", step.time),
            }
        }
    }

    let r = &file.rollover;
    for build in 0..3 {
        let clock = ManualClock::new(TWEPOCH + r.time);
        let builder = Snowflake::builder(Twitter).clock(&clock);
        let ids = match build {
            0 => builder.build().unwrap().take(r.ids_at_time + 1),
            1 => builder.build_atomic().unwrap().take(r.ids_at_time + 1),
            _ => builder.build_mutex().unwrap().take(r.ids_at_time + 1),
        }
        .unwrap();
        assert!(ids[..r.ids_at_time].iter().all(|id| id >> 22 == r.time));
        let last = ids[r.ids_at_time];
        assert_eq!(
            last >> 22,
            r.next_time,
            "mode {build}: waited for the next ms"
        );
        assert_eq!(last & 0xfff, r.next_sequence);
        assert_eq!(clock.waits(), 1, "mode {build}: exactly one wait");
        assert_eq!(clock.now_ms(), TWEPOCH + r.next_time);
    }
}

#[test]
fn aliases_and_custom_layouts_issue_the_same_ids() {
    // The precise generic type, its alias and a runtime layout with the same parameters.
    let spec = LayoutSpec::builder("snowflake-twitter", 64)
        .time(41)
        .field("datacenter", 5)
        .field("worker", 5)
        .sequence(12)
        .epoch_ms(TWEPOCH)
        .build()
        .unwrap();
    let custom = idkit_snowflake::Custom::<u64>::new(spec).unwrap();
    let c1 = ManualClock::new(TWEPOCH + 1_000);
    let c2 = ManualClock::new(TWEPOCH + 1_000);
    let c3 = ManualClock::new(TWEPOCH + 1_000);
    let a: idkit_snowflake::TwitterSnowflake<&ManualClock> = Snowflake::builder(Twitter)
        .field("worker", 3)
        .clock(&c1)
        .build()
        .unwrap();
    let b = Snowflake::builder(Twitter)
        .field("worker", 3)
        .clock(&c2)
        .build()
        .unwrap();
    let c = Snowflake::builder(custom)
        .field("worker", 3)
        .clock(&c3)
        .build()
        .unwrap();
    for _ in 0..10_000 {
        let (x, y, z) = (
            a.next_id().unwrap(),
            b.next_id().unwrap(),
            c.next_id().unwrap(),
        );
        assert_eq!(x, y);
        assert_eq!(x, z);
        c1.advance(1);
        c2.advance(1);
        c3.advance(1);
    }
    assert_eq!(spec, *preset("snowflake-twitter").unwrap());
}

#[test]
fn presets_publish_their_facts() {
    let twitter = Twitter.info();
    assert_eq!(twitter.cap_per_sec, Some(4_096_000));
    assert_eq!(twitter.string_len, 19);
    assert_eq!(twitter.time_runs_out_ms, Some(TWEPOCH + (1 << 41) - 1));
    assert_eq!(
        twitter.coordination,
        idkit_core::Coordination::WorkerId { bits: 10 }
    );
    let sony = Sonyflake.info();
    assert_eq!(sony.cap_per_sec, Some(25_600));
    assert_eq!(sony.time_precision_ms, Some(10));
    assert_eq!(Boundary.info().bits, 128);
    // Epoch 0 and 64 bits of ms: the last millisecond is exactly u64::MAX.
    assert_eq!(Boundary.info().time_runs_out_ms, Some(u64::MAX));
    assert_eq!(Mastodon.info().coordination, idkit_core::Coordination::None);
}

trait InfoExt {
    fn info(&self) -> idkit_core::SchemeInfo;
}

impl<L: idkit_snowflake::Layout> InfoExt for L {
    fn info(&self) -> idkit_core::SchemeInfo {
        self.spec().info()
    }
}

#[test]
fn codec_trait_matches_spec() {
    let codec = SnowflakeCodec(Discord);
    let id = codec.parse("175928847299117063").unwrap();
    assert_eq!(codec.format(id), "175928847299117063");
    assert_eq!(codec.read_raw(&codec.to_raw(id)).unwrap(), id);
}
