//! Model check of the lock-free UUIDv6 and method-3 UUIDv7 generators: loom explores the
//! interleavings of threads racing on each one's atomic word (the last time issued). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p idkit-uuid --test loom --release`.
#![cfg(loom)]

use idkit_core::{IdScheme, ManualClock};
use idkit_uuid::versions::{self, UuidV6};
use loom::sync::Arc;
use loom::thread;

/// Two threads take two ids each while the clock stands still, then one more each after it
/// moves on: every id distinct, each thread's increasing, and no id below the clock's time.
#[test]
fn two_threads_share_the_tick_word() {
    loom::model(|| {
        let clock = std::sync::Arc::new(ManualClock::new(1_000));
        let generator = Arc::new(UuidV6::with_low(std::sync::Arc::clone(&clock), 7));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let generator = Arc::clone(&generator);
                thread::spawn(move || {
                    (0..2)
                        .map(|_| generator.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let ids: Vec<Vec<_>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for own in &ids {
            assert!(own[0] < own[1]);
            assert_eq!(versions::unix_ms(own[0]), Some(1_000));
        }
        let mut all: Vec<_> = ids.concat();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4);
        clock.set(1_001);
        let later = generator.next_id().unwrap();
        assert!(all.iter().all(|&id| id < later));
        assert_eq!(versions::unix_ms(later), Some(1_001));
    });
}

/// The same race on UUIDv7 by method 3's time word: every id distinct, each thread's
/// increasing, all of the clock's millisecond.
#[test]
fn two_threads_share_the_sub_millisecond_word() {
    use idkit_core::random::SeededRandom;
    use idkit_uuid::UuidV7SubMs;
    loom::model(|| {
        let clock = std::sync::Arc::new(ManualClock::new(1_000));
        let generator = Arc::new(UuidV7SubMs::with_source(
            std::sync::Arc::clone(&clock),
            SeededRandom::new(5),
        ));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let generator = Arc::clone(&generator);
                thread::spawn(move || {
                    (0..2)
                        .map(|_| generator.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let ids: Vec<Vec<_>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let mut all = Vec::new();
        for own in ids {
            assert!(own[0] < own[1]);
            assert!(own.iter().all(|id| id.as_u128() >> 80 == 1_000));
            all.extend(own);
        }
        // The 60-bit times alone are distinct: four steps of the one millisecond.
        let mut times: Vec<u128> = all.iter().map(|id| id.as_u128() >> 64).collect();
        times.sort_unstable();
        times.dedup();
        assert_eq!(times.len(), 4);
    });
}
