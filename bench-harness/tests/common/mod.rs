//! What the harness's report tests share: a temporary report directory, and a quick-profile
//! run into it with an engine's results read back from its kept file.
#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};

use bench_harness::Params;
use bench_harness::engine::roundtrip::RoundTrip;
use bench_harness::engine::{InsertResults, Run};
use bench_harness::{Config, Profile, Summary, run};
use serde::de::DeserializeOwned;

/// A directory under the system's temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `<tmp>/<name>-<pid>`.
    pub fn new(name: &str) -> Self {
        Self(std::env::temp_dir().join(format!("{name}-{}", std::process::id())))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CSV file's header and rows, split at the commas outside double quotes; every row has
/// as many fields as the header.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let split = |line: &str| {
        let mut fields = vec![String::new()];
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    fields.push(String::new());
                    continue;
                }
                _ => {}
            }
            fields.last_mut().unwrap().push(c);
        }
        fields
    };
    let mut lines = text.lines();
    let header = split(lines.next().unwrap());
    let rows: Vec<_> = lines.map(split).collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{}: {row:?}", path.display());
    }
    (header, rows)
}

/// The server URL `scripts/test.sh` puts in `var` after starting the server.
pub fn url(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var}: scripts/test.sh starts the server and sets it"))
}

/// The quick profile into a fresh directory (`configure` adds the servers), and the
/// results the run kept in `data/<kept>.json`.
pub fn quick_run<T: DeserializeOwned>(
    name: &str,
    configure: impl FnOnce(&mut Config),
    kept: &str,
) -> (TempDir, Summary, T) {
    let dir = TempDir::new(name);
    let mut config = Config::new(Profile::Quick, dir.0.clone());
    configure(&mut config);
    let summary = run(&config).unwrap();
    let text = std::fs::read_to_string(dir.0.join(format!("data/{kept}.json"))).unwrap();
    let results = serde_json::from_str(&text).unwrap();
    (dir, summary, results)
}

/// The time-ordered schemes every engine runs at one writer and at `writers`: each run is
/// there, Snowflake's in the engine's 64-bit column (`bigint`), the others in its 16-byte
/// one (`wide`), with the small cache.
pub fn assert_writer_runs<R: InsertResults>(
    results: &R,
    bigint: R::Storage,
    wide: R::Storage,
    writers: usize,
) where
    R::Storage: Copy,
{
    for scheme in [
        "snowflake-twitter",
        "uuid-v7",
        bench_harness::engine::UUID_V7_RANDOM,
        "ulid",
        "uuid-v4",
    ] {
        let storage = if scheme == "snowflake-twitter" {
            bigint
        } else {
            wide
        };
        for w in [1, writers] {
            assert!(
                results.find(scheme, storage, "small", w, true).is_some(),
                "{scheme} {w}"
            );
        }
    }
}

/// A run of an engine with a server holds the rows and commits the profile sets (each
/// writer its share of the rows, in commits of the profile's size), and a time and a rate.
pub fn assert_run_counts<S, O>(r: &Run<S, O>, params: &Params, what: &str) {
    assert_eq!(r.rows, params.pg_rows / r.writers * r.writers, "{what}");
    let per_writer = r.rows / r.writers;
    assert_eq!(
        usize::try_from(r.commits).unwrap(),
        r.writers * per_writer.div_ceil(params.commit_rows),
        "{what}"
    );
    assert!(r.rows_per_sec > 0.0 && r.seconds > 0.0, "{what}");
}

/// Each of `methods` has a round trip at one client and at `clients`, with ids, a rate and
/// no duplicate.
pub fn assert_roundtrips(rows: &[RoundTrip], methods: &[&str], clients: usize) {
    for method in methods {
        for c in [1, clients] {
            let t = rows
                .iter()
                .find(|t| t.method == *method && t.clients == c)
                .unwrap_or_else(|| panic!("{method} {c}"));
            assert!(t.ids > 0 && t.ids_per_sec > 0.0, "{method}");
            assert_eq!(t.duplicates, 0, "{method}");
        }
    }
}
