//! Model check of the lock-free UUIDv6 and method-3 UUIDv7 generators: loom explores the
//! interleavings of threads racing on each one's atomic word (the last time issued). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p idkit-uuid --test loom --release`.
#![cfg(loom)]

use idkit_core::random::SeededRandom;
use idkit_core::{IdScheme, ManualClock};
use idkit_uuid::versions::{self, UuidV6};
use idkit_uuid::{Uuid, UuidV7SubMs};
use loom::sync::Arc;
use loom::thread;

/// Two threads take two ids each from the generator `make` builds on a clock reading 1,000
/// ms; each thread's ids increase and none is taken twice. Returns the generator, the clock
/// and the ids.
fn race<G: IdScheme<Id = Uuid> + Send + Sync + 'static>(
    make: impl FnOnce(std::sync::Arc<ManualClock>) -> G,
) -> (Arc<G>, std::sync::Arc<ManualClock>, Vec<Uuid>) {
    let clock = std::sync::Arc::new(ManualClock::new(1_000));
    let generator = Arc::new(make(std::sync::Arc::clone(&clock)));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || [generator.next_id().unwrap(), generator.next_id().unwrap()])
        })
        .collect();
    let ids: Vec<[Uuid; 2]> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(ids.iter().all(|own| own[0] < own[1]));
    let mut all: Vec<Uuid> = ids.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 4);
    (generator, clock, all)
}

/// The clock stands still: every id of its millisecond; once it moves on, the next id is
/// above them all and of the new millisecond.
#[test]
fn two_threads_share_the_tick_word() {
    loom::model(|| {
        let (generator, clock, all) = race(|clock| UuidV6::with_low(clock, 7));
        assert!(all.iter().all(|&id| versions::unix_ms(id) == Some(1_000)));
        clock.set(1_001);
        let later = generator.next_id().unwrap();
        assert!(all.iter().all(|&id| id < later));
        assert_eq!(versions::unix_ms(later), Some(1_001));
    });
}

/// The same race on UUIDv7 by method 3's time word: the 60-bit times alone are distinct,
/// four steps of the one millisecond.
#[test]
fn two_threads_share_the_sub_millisecond_word() {
    loom::model(|| {
        let (_, _, all) = race(|clock| UuidV7SubMs::with_source(clock, SeededRandom::new(5)));
        assert!(all.iter().all(|id| id.as_u128() >> 80 == 1_000));
        let mut times: Vec<u128> = all.iter().map(|id| id.as_u128() >> 64).collect();
        times.sort_unstable();
        times.dedup();
        assert_eq!(times.len(), 4);
    });
}
