//! Model check of the lock-free generator: loom explores the interleavings of threads
//! racing on its one atomic word. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p idkit-snowflake --test loom --release`.
#![cfg(loom)]

use idkit_core::{IdScheme, ManualClock};
use idkit_snowflake::{AtomicSnowflake, Custom, LayoutSpec, Snowflake};
use loom::sync::Arc;
use loom::thread;

/// A tiny layout (2 sequence bits: 4 ids per tick) so the models reach sequence
/// exhaustion and the move to the next tick within a few steps.
fn tiny() -> Custom<u64> {
    let spec = LayoutSpec::builder("tiny", 64)
        .time(40)
        .sequence(2)
        .build()
        .expect("valid layout");
    Custom::new(spec).expect("64-bit")
}

/// A lock-free generator on the tiny layout. The clock is not part of the model (a std
/// `Arc`, std atomics): only the generator's atomic is.
fn shared() -> Arc<AtomicSnowflake<Custom<u64>, std::sync::Arc<ManualClock>>> {
    let clock = std::sync::Arc::new(ManualClock::new(1_000));
    Arc::new(
        Snowflake::builder(tiny())
            .clock(clock)
            .build_atomic()
            .expect("generator"),
    )
}

fn check(ids: &[Vec<u64>]) {
    idkit_testkit::check_threads(ids.to_vec());
}

#[test]
fn two_threads_next_id_across_a_tick_boundary() {
    loom::model(|| {
        let generator = shared();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let generator = Arc::clone(&generator);
                thread::spawn(move || {
                    (0..3)
                        .map(|_| generator.next_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let ids: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // Six ids from a 4-per-tick sequence: the second tick must have been reached.
        check(&ids);
    });
}

#[test]
fn batch_reservation_races_single_ids() {
    loom::model(|| {
        let generator = shared();
        let g1 = Arc::clone(&generator);
        let batch = thread::spawn(move || {
            let mut out = [0u64; 3];
            g1.fill(&mut out).unwrap();
            out.to_vec()
        });
        let g2 = Arc::clone(&generator);
        let single = thread::spawn(move || vec![g2.next_id().unwrap(), g2.next_id().unwrap()]);
        let ids = vec![batch.join().unwrap(), single.join().unwrap()];
        check(&ids);
    });
}
