//! The lock-free shared generators of the time-ordered schemes under contention: real
//! threads, real clocks, one generator shared by all of them. Each thread's ids strictly
//! increase and no id appears twice across threads (ObjectId, whose counter wraps within a
//! second, is checked for duplicates only). The registry's shared generators are these.

use std::collections::HashSet;

use idkit_all::core::{IdScheme, TickerClock};
use idkit_all::objectid::AtomicObjectIdGenerator;
use idkit_all::tsid::AtomicTsidGenerator;
use idkit_all::typeid::{AtomicTypeIdGenerator, Prefix};
use idkit_all::ulid::AtomicUlid;
use idkit_all::uuid::AtomicUuidV7;
use idkit_testkit::{check_contention, check_mixed_contention, together};

#[test]
fn uuid_v7_four_threads_two_million_ids() {
    let generator = AtomicUuidV7::new();
    assert_eq!(check_contention(generator, 4, 500_000, 1), 2_000_000);
}

#[test]
fn uuid_v7_batches_and_single_ids_on_a_ticker_clock() {
    let generator = AtomicUuidV7::with_clock(TickerClock::new());
    assert_eq!(
        check_mixed_contention(generator, &[1, 1, 64, 64], 300_000),
        1_200_000
    );
}

#[test]
fn ulid_four_threads_two_million_ids() {
    let generator = AtomicUlid::new();
    assert_eq!(check_contention(generator, 4, 500_000, 1), 2_000_000);
}

#[test]
fn typeid_four_threads_one_million_ids() {
    let generator = AtomicTypeIdGenerator::new(Prefix::new("user").unwrap());
    assert_eq!(check_contention(generator, 4, 250_000, 1), 1_000_000);
}

#[test]
fn tsid_four_threads_waiting_on_a_small_counter() {
    // 20 node bits leave 2 counter bits: four ids a millisecond, so the threads spend most
    // of the run waiting for the clock together.
    let generator = AtomicTsidGenerator::with_node(20, 9).unwrap();
    assert_eq!(check_contention(generator, 4, 500, 1), 2_000);
    let generator = AtomicTsidGenerator::with_node(10, 9).unwrap();
    assert_eq!(check_contention(generator, 4, 250_000, 1), 1_000_000);
}

#[test]
fn objectid_four_threads_one_million_distinct_ids() {
    let generator = AtomicObjectIdGenerator::new();
    let threads = together(4, move |_| {
        (0..250_000)
            .map(|_| generator.next_id().unwrap())
            .collect::<Vec<_>>()
    });
    let mut all = HashSet::new();
    for ids in threads {
        // Within a thread the seconds never go back.
        assert!(
            ids.windows(2)
                .all(|w| w[0].timestamp_secs() <= w[1].timestamp_secs())
        );
        for id in ids {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), 1_000_000);
}

#[test]
fn the_registry_shares_these_generators_across_threads() {
    for name in ["uuid-v7", "ulid", "typeid", "tsid", "objectid"] {
        let entry = idkit_all::registry::find(name).unwrap();
        let identity = u64::from(!entry.identity().is_empty());
        let scheme = entry
            .build(&entry.with_identity(identity).unwrap())
            .unwrap();
        let threads = together(4, move |_| {
            let mut ids = vec![idkit_all::core::RawId::default(); 50_000];
            scheme.fill_raw(&mut ids).unwrap();
            ids
        });
        let mut all = HashSet::new();
        for id in threads.into_iter().flatten() {
            assert!(all.insert(id), "{name}: duplicate");
        }
        assert_eq!(all.len(), 200_000, "{name}");
    }
}
