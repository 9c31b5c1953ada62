//! Several threads on one shared generator: millions of ids, zero duplicates, each thread's
//! ids strictly increasing. Real clocks, real threads.

use idkit_core::{MonotonicClock, TickerClock};
use idkit_snowflake::{Mastodon, Snowflake, Twitter};
use idkit_testkit::{check_contention, check_mixed_contention, check_threads, together};

#[test]
fn lock_free_twitter_four_threads_three_million_ids() {
    let generator = Snowflake::builder(Twitter).build_atomic().unwrap();
    assert_eq!(check_contention(generator, 4, 750_000, 1), 3_000_000);
}

#[test]
fn lock_free_batches_reserve_runs_without_overlap() {
    let generator = Snowflake::builder(Mastodon)
        .clock(TickerClock::new())
        .build_atomic()
        .unwrap();
    assert_eq!(check_contention(generator, 4, 500_000, 1000), 2_000_000);
}

#[test]
fn lock_free_mixed_single_and_batch_callers() {
    let generator = Snowflake::builder(Twitter)
        .clock(MonotonicClock::new())
        .build_atomic()
        .unwrap();
    assert_eq!(
        check_mixed_contention(generator, &[1, 1, 37, 37], 300_000),
        1_200_000
    );
}

#[test]
fn mutex_twitter_four_threads_two_million_ids() {
    let generator = Snowflake::builder(Twitter).build_mutex().unwrap();
    assert_eq!(check_contention(generator, 4, 500_000, 1), 2_000_000);
}

#[test]
fn lock_free_generators_of_their_own_on_one_shared_word() {
    // As the PostgreSQL extension's backends: each thread builds its own generator (on the
    // wall clock, as separate processes read it) over one word they share.
    use idkit_core::{IdScheme, SystemClock};
    use std::sync::atomic::AtomicU64;
    let settings = || {
        Snowflake::builder(Twitter)
            .clock(SystemClock)
            .field("worker", 3)
            .build_atomic()
            .unwrap()
    };
    let word: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(settings().initial_word())));
    let threads = together(4, move |_| {
        let generator = settings().on_word(word);
        // One at a time: the fast path, as a column default takes them.
        (0..400_000)
            .map(|_| generator.next_id().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(check_threads(threads), 1_600_000);
}
