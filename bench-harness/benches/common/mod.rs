//! What the Snowflake benches share: the uncapped layout (sign 1, time 41, sequence 22:
//! 4.2 G ids/s, out of reach, so the cost of the code shows) on both sides, and ferroid's
//! clock on Twitter's epoch.
#![allow(dead_code)] // each bench uses part of it

use ferroid::time::{MonotonicClock as FerroidClock, TWITTER_EPOCH};
use idkit_snowflake::{Custom, LayoutSpec};

/// Twitter's epoch, Unix ms (ferroid's `TWITTER_EPOCH`).
pub const TWEPOCH_MS: u64 = 1_288_834_974_657;

mod wide_id {
    // The macro generates items without docs; they are ferroid's, not ours.
    #![allow(missing_docs)]
    use ferroid::define_snowflake_id;
    define_snowflake_id!(
        /// The uncapped layout for ferroid: sign 1, time 41, no machine bits, sequence 22.
        WideId, u64,
        reserved: 1,
        timestamp: 41,
        machine_id: 0,
        sequence: 22
    );
}
pub use wide_id::WideId;

/// The uncapped layout for idkit.
pub fn wide() -> Custom<u64> {
    let spec = LayoutSpec::builder("wide-sequence", 64)
        .time(41)
        .sequence(22)
        .epoch_ms(TWEPOCH_MS)
        .build()
        .expect("valid layout");
    Custom::new(spec).expect("64-bit layout")
}

/// ferroid's monotonic clock (a ticker thread, 1 ms) on Twitter's epoch.
pub fn ferroid_clock() -> FerroidClock<1> {
    FerroidClock::<1>::with_epoch(TWITTER_EPOCH)
}
