//! What the HTTP and gRPC fuzz targets share: one service of a few schemes, and a runtime to
//! call it on.

use std::sync::{Arc, OnceLock};

use idkit_all::registry::{self, Options};
use idkit_server::Service;

/// Most ids one request may ask for: small, so that a request is quick.
const MAX_BATCH: u32 = 64;

/// The service: a Snowflake layout (worker 1), UUIDv7, UUIDv6, ULID, TypeID, KSUID and
/// ObjectId.
pub fn service() -> &'static Arc<Service> {
    static SERVICE: OnceLock<Arc<Service>> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let schemes = [
            "snowflake-twitter",
            "uuid-v7",
            "uuid-v6",
            "ulid",
            "typeid",
            "ksuid",
            "objectid",
        ]
        .into_iter()
        .map(|name| {
            let entry = registry::find(name).expect("a registered scheme");
            let options = if entry.identity_fields().is_empty() {
                Options::default()
            } else {
                entry.with_identity(1).expect("worker 1")
            };
            entry.build(&options).expect("the scheme builds")
        })
        .collect();
        Arc::new(Service::from_schemes(schemes, MAX_BATCH).expect("the service"))
    })
}

/// A current-thread runtime with timers (a capped layout awaits its next tick).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}
