//! What the service's test suites share: configurations with their own state directories,
//! and a service whose one Snowflake generator runs on a clock the test moves.

use std::sync::Arc;

use idkit_core::{Erased, ManualClock};
use idkit_server::{Config, Service};
use idkit_snowflake::{RollbackPolicy, Snowflake, SnowflakeCodec, Twitter};

/// A configuration whose static worker ids keep their state files in a directory of its
/// own: tests run in parallel, and two services holding one static worker id in one state
/// directory would (rightly) refuse each other.
pub fn config(toml: &str) -> Config {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut config = Config::from_toml(toml).unwrap();
    config.identity.state_dir =
        Some(std::env::temp_dir().join(format!("idkit-server-state-{}-{n}", std::process::id())));
    config
}

/// The service of [`config`]`(toml)`.
pub fn configured(toml: &str) -> Service {
    Service::new(&config(toml)).unwrap()
}

/// A service with one `snowflake-twitter` generator on `clock` that fails while the clock
/// is behind its last id (so readiness follows the clock).
pub fn on_clock(clock: &Arc<ManualClock>) -> Service {
    let generator = Snowflake::builder(Twitter)
        .clock(Arc::clone(clock))
        .rollback(RollbackPolicy::FailFast)
        .build_atomic()
        .unwrap();
    Service::from_schemes(
        vec![Box::new(Erased::new(generator, SnowflakeCodec(Twitter)))],
        10,
    )
    .unwrap()
}
