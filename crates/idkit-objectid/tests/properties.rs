//! Round trips, the spec's counter rule, uniqueness under contention and the deterministic
//! constructor.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use idkit_core::{Codec, IdScheme, ManualClock};
use idkit_objectid::{ObjectId, ObjectIdCodec, ObjectIdGenerator};
use proptest::prelude::*;

proptest! {
    #[test]
    fn text_and_bytes_roundtrip(bytes in any::<[u8; 12]>()) {
        let id = ObjectId(bytes);
        let text = ObjectIdCodec.format(id);
        prop_assert_eq!(text.len(), 24);
        prop_assert_eq!(ObjectIdCodec.parse(&text).unwrap(), id);
        prop_assert_eq!(ObjectIdCodec.parse(&text.to_uppercase()).unwrap(), id);
        prop_assert_eq!(ObjectIdCodec.read_raw(&ObjectIdCodec.to_raw(id)).unwrap(), id);
        prop_assert_eq!(ObjectId::from_parts(id.timestamp_secs(), id.random(), id.counter()), id);
    }

    #[test]
    fn every_id_of_a_generator_adds_one_to_the_counter(first in 0u32..(1 << 24), n in 1usize..200) {
        let clock = ManualClock::new(1_700_000_000_000);
        let generator = ObjectIdGenerator::with_parts(&clock, 42, first);
        let ids = generator.take(n).unwrap();
        for (i, id) in ids.iter().enumerate() {
            let want = (u64::from(first) + i as u64) % (1 << 24);
            prop_assert_eq!(u64::from(id.counter()), want);
            prop_assert_eq!(id.random(), 42);
            prop_assert_eq!(id.timestamp_secs(), 1_700_000_000);
        }
    }

    #[test]
    fn parse_never_panics(text in "\\PC{0,30}") {
        let _ = ObjectIdCodec.parse(&text);
    }
}

#[test]
fn no_duplicates_across_threads() {
    let generator = Arc::new(Mutex::new(ObjectIdGenerator::new()));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || generator.take(20_000).unwrap())
        })
        .collect();
    let mut all = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), 80_000);
}

#[test]
fn seeded_generators_repeat_themselves() {
    idkit_testkit::check_seeded(
        |clock, random| ObjectIdGenerator::with_source(clock, &random).unwrap(),
        100,
    );
}
