//! A throwaway PostgreSQL server of a test's own (scripts/pg-cluster.sh), the extension
//! preloaded and libfaketime preloaded into PostgreSQL: shared by the extension's tests
//! that start servers of their own (`pg_durability.rs`, `pg_repeats.rs`).
#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use idkit_testkit::faketime::libfaketime;
use postgres::{Client, NoTls};

/// A throwaway server of the test's own, the extension preloaded, its clock offset by
/// libfaketime from the file `faketime` in its directory.
pub struct Server {
    pub dir: PathBuf,
    pub port: u16,
}

impl Server {
    pub fn start(name: &str, opts: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("idkit-pgd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let server = Self {
            dir,
            port: free_port(),
        };
        server.set_clock("+0");
        let status = server
            .cluster("start")
            .arg(server.port.to_string())
            .env(
                "PG_OPTS",
                format!(
                    "-c shared_preload_libraries=idkit -c idkit.worker_id=3 \
                     -c max_wal_senders=4 -c wal_level=replica {opts}"
                ),
            )
            .status()
            .unwrap();
        assert!(status.success(), "{name}: the server did not start");
        server
    }

    /// scripts/pg-cluster.sh `cmd` on this server, libfaketime preloaded into its programs.
    pub fn cluster(&self, cmd: &str) -> Command {
        let mut command = Command::new(scripts().join("pg-cluster.sh"));
        command
            .arg(cmd)
            .arg(&self.dir)
            .env("PG_PRELOAD", libfaketime())
            .env("FAKETIME_TIMESTAMP_FILE", self.dir.join("faketime"))
            .env("FAKETIME_CACHE_DURATION", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        command
    }

    /// Sets the server's clock `offset` from the host's (libfaketime's form: "-3s"); a
    /// running server reads it within a second.
    pub fn set_clock(&self, offset: &str) {
        std::fs::write(self.dir.join("faketime"), format!("{offset}\n")).unwrap();
    }

    pub fn run(&self, cmd: &str) {
        let status = self.cluster(cmd).status().unwrap();
        assert!(status.success(), "pg-cluster.sh {cmd} failed");
    }

    pub fn client(&self) -> Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        for _ in 0..100 {
            if let Ok(mut c) = Client::connect(&url, NoTls) {
                c.batch_execute("CREATE EXTENSION IF NOT EXISTS idkit")
                    .unwrap();
                return c;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("cannot connect to the server on port {}", self.port);
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.cluster("stop").status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free now, below the ephemeral range (32768 and up on Linux): a port the system
/// picked for a listener is one it may hand to the next outgoing connection (these tests'
/// own sessions), and a server restarted on it would then fail to bind.
pub fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let seed = std::process::id() % 4_000;
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = u16::try_from(20_000 + (seed * 3 + n) % 12_000).unwrap();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

/// Waits until the server's clock, as a session reads it, is `offset_s` seconds off the
/// host's: libfaketime reads its file again at most once a second in each process.
#[track_caller]
pub fn wait_for_clock(c: &mut Client, offset_s: f64) {
    for _ in 0..100 {
        let server: f64 = c
            .query_one("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
            .unwrap()
            .get(0);
        let host = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        if (server - host - offset_s).abs() < 0.25 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server's clock did not move {offset_s} s off the host's");
}

/// The error's message and hint.
pub fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}", db.message(), db.hint().unwrap_or("")),
        None => e.to_string(),
    }
}
