//! What the harness's report tests share: a temporary report directory, and a quick-profile
//! run into it with an engine's results read back from its kept file.
#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;

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
