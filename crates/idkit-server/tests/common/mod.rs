//! What the service's test suites share: configurations with their own state directories,
//! a service whose one Snowflake generator runs on a clock the test moves, and both front
//! doors of a service on loopback.
#![allow(dead_code)] // each test file uses part of it

use std::net::SocketAddr;
use std::sync::Arc;

use idkit_core::{Erased, ManualClock};
use idkit_server::{Config, Service};
use idkit_snowflake::{RollbackPolicy, Snowflake, SnowflakeCodec, Twitter};

/// A configuration whose static worker ids keep their state files in a directory of its
/// own: tests run in parallel, and two services holding one static worker id in one state
/// directory would (rightly) refuse each other. The `range` scheme, when served without a
/// store, gets one in the same directory (its default is the user's own counter). The
/// directories are under Cargo's `target/tmp` (a service may outlive the configuration),
/// not the system's temp directory.
pub fn config(toml: &str) -> Config {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut config = Config::from_toml(toml).unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("idkit-server-state-{}-{n}", std::process::id()));
    let serves_range = config.schemes.is_empty()
        || (config.schemes.iter())
            .any(|s| idkit_all::registry::find(s).is_ok_and(|e| e.name() == "range"));
    if serves_range && config.settings.get("range-store").is_none() {
        std::fs::create_dir_all(&dir).unwrap();
        let store = dir.join("range.sqlite3");
        config.settings =
            std::mem::take(&mut config.settings).option("range-store", store.to_string_lossy());
    }
    config.identity.state_dir = Some(dir);
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

/// Both front doors of one service, HTTP and gRPC, on ephemeral loopback ports, serving
/// until [`Doors::stop`].
pub struct Doors {
    pub http: SocketAddr,
    pub grpc: SocketAddr,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Doors {
    /// Binds both ports and starts serving `service` on them.
    pub async fn open(service: Service) -> Self {
        let service = Arc::new(service);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let on_stop = || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            }
        };
        let http_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let grpc_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self {
            http: http_listener.local_addr().unwrap(),
            grpc: grpc_listener.local_addr().unwrap(),
            stop,
            tasks: vec![
                tokio::spawn(idkit_server::serve(
                    http_listener,
                    Arc::clone(&service),
                    on_stop(),
                )),
                tokio::spawn(idkit_server::serve_grpc(grpc_listener, service, on_stop())),
            ],
        }
    }

    /// Signals both doors to stop and waits until each has ended, without an error.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            task.await.unwrap().unwrap();
        }
    }
}

/// Asserts that `text` passes `promtool check metrics` (Debian's `prometheus` package,
/// which scripts/test.sh installs) with no finding: the exposition format and Prometheus's
/// naming conventions (base units, `_total` counters).
#[track_caller]
pub fn promtool_check(text: &str) {
    use std::io::Write as _;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("promtool: {e} (Debian's prometheus package; scripts/test.sh installs it)")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let findings = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && findings.trim().is_empty(),
        "promtool check metrics: {findings}\n{text}"
    );
}
