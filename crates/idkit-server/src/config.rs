//! The service's configuration: a TOML file, then flags on top (the command line applies
//! them to [`Config`] before [`Service::new`](crate::Service::new) checks it).

use std::fmt;
use std::net::SocketAddr;
use std::path::Path;

use idkit_snowflake::RollbackPolicy;
use serde::Deserialize;

/// Largest batch a configuration may allow per request.
pub const MAX_BATCH_LIMIT: u32 = 1_000_000;

/// Everything `idkit serve` can be told.
///
/// ```
/// use idkit_server::Config;
///
/// let config = Config::from_toml(r#"
///     listen = "127.0.0.1:9000"
///     schemes = ["snowflake-twitter", "uuid-v7"]
///     worker = 3
///     datacenter = 1
///     rollback = "wait"
///     rollback_max_ms = 10
///     max_batch = 5000
/// "#)?;
/// assert_eq!(config.worker, Some(3));
/// # Ok::<(), idkit_server::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address to listen on, `host:port` (default `127.0.0.1:8080`).
    pub listen: String,
    /// Schemes to serve, by name or alias; empty serves every registered scheme.
    pub schemes: Vec<String>,
    /// Most ids one `?count=` request may ask for (default 10,000; at most 1,000,000).
    pub max_batch: u32,
    /// Worker id (Twitter, Discord, Boundary).
    pub worker: Option<u64>,
    /// Datacenter id (Twitter).
    pub datacenter: Option<u64>,
    /// Shard id (Instagram).
    pub shard: Option<u64>,
    /// Machine id (Sonyflake).
    pub machine: Option<u64>,
    /// Process id (Discord).
    pub process: Option<u64>,
    /// Clock-rollback policy of Snowflake layouts: `fail-fast`, `wait` (default) or
    /// `logical`.
    pub rollback: String,
    /// For `wait`: the longest wait for the clock, ms; for `logical`: how far ahead of the
    /// clock ids may run, ms (default 5).
    pub rollback_max_ms: u64,
    /// The range allocator's SQLite file (default: `idkit-range.sqlite3` in the system
    /// temporary directory).
    pub range_store: Option<std::path::PathBuf>,
    /// Runtime worker threads for `idkit serve` (default: one per core). When clients run
    /// on the same cores, fewer workers cut the latency tail.
    pub workers: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".to_owned(),
            schemes: Vec::new(),
            max_batch: 10_000,
            worker: None,
            datacenter: None,
            shard: None,
            machine: None,
            process: None,
            rollback: "wait".to_owned(),
            rollback_max_ms: 5,
            range_store: None,
            workers: None,
        }
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    Read {
        /// The file.
        path: String,
        /// The operating system's message.
        reason: String,
    },
    /// The TOML is malformed or has an unknown key or a wrong type.
    Toml(String),
    /// A value is out of its range or does not fit the schemes served.
    Invalid {
        /// The setting.
        key: &'static str,
        /// What was wrong and what is expected.
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, reason } => write!(f, "cannot read config {path}: {reason}"),
            Self::Toml(message) => write!(f, "invalid config: {message}"),
            Self::Invalid { key, message } => write!(f, "invalid config: {key}: {message}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Parses a TOML document; keys not given keep their defaults.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Toml`] for malformed TOML, unknown keys and wrong types.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Toml(e.message().to_owned()))
    }

    /// Reads and parses a TOML file.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when the file cannot be read, else as [`Config::from_toml`].
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::from_toml(&text)
    }

    /// The listen address.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when `listen` is not `host:port` with a numeric host.
    pub fn listen_addr(&self) -> Result<SocketAddr, ConfigError> {
        self.listen.parse().map_err(|_| ConfigError::Invalid {
            key: "listen",
            message: format!(
                "{:?} is not an address: expected IP:PORT, e.g. 127.0.0.1:8080",
                self.listen
            ),
        })
    }

    /// The rollback policy.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] for a name other than `fail-fast`, `wait`, `logical`.
    pub fn rollback_policy(&self) -> Result<RollbackPolicy, ConfigError> {
        let max_ms = self.rollback_max_ms;
        match self.rollback.as_str() {
            "fail-fast" => Ok(RollbackPolicy::FailFast),
            "wait" => Ok(RollbackPolicy::Wait { max_ms }),
            "logical" => Ok(RollbackPolicy::Logical {
                max_ahead_ms: max_ms,
            }),
            other => Err(ConfigError::Invalid {
                key: "rollback",
                message: format!("{other:?}: expected fail-fast, wait or logical"),
            }),
        }
    }

    /// The identity fields that are set, by name.
    pub fn identity(&self) -> Vec<(&'static str, u64)> {
        [
            ("worker", self.worker),
            ("datacenter", self.datacenter),
            ("shard", self.shard),
            ("machine", self.machine),
            ("process", self.process),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}
