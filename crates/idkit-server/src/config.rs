//! The service's configuration: a TOML file, then flags on top (the command line applies
//! them to [`Config`] before [`Service::new`](crate::Service::new) checks it).

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use idkit_all::identity::IdentityConfig;
use idkit_all::registry::{self, Options};

/// Largest batch a configuration may allow per request.
pub const MAX_BATCH_LIMIT: u32 = 1_000_000;

/// The keys of the service itself; every other top-level key is a scheme setting.
const SERVICE_KEYS: [&str; 14] = [
    "listen",
    "grpc_listen",
    "tls_cert",
    "tls_key",
    "tokens_file",
    "schemes",
    "max_batch",
    "header_timeout_ms",
    "max_connections",
    "workers",
    "identity",
    "state_dir",
    "no_state_file",
    "scheme",
];

/// Everything `idkit serve` can be told.
///
/// Besides the service's own keys, the file takes every identity field and option that a
/// registered scheme declares (`worker`, `shard`, `node`, `rollback`, `rollback_max_ms`,
/// `range_store`, `prefix`...; `idkit serve --help` lists them): at the top level they
/// apply to every served scheme that takes them, and in a `[scheme.NAME]` table to that
/// scheme only, over the top-level value.
///
/// ```
/// use idkit_server::Config;
///
/// let config = Config::from_toml(r#"
///     listen = "127.0.0.1:9000"
///     schemes = ["snowflake-twitter", "snowflake-discord", "uuid-v7"]
///     worker = 3
///     datacenter = 1
///     rollback = "wait"
///     rollback_max_ms = 10
///     max_batch = 5000
///
///     [scheme.discord]
///     worker = 4
/// "#)?;
/// assert_eq!(config.settings.get_field("worker"), Some(3));
/// assert_eq!(config.settings.get("rollback-max-ms"), Some("10"));
/// assert_eq!(config.per_scheme[0].1.get_field("worker"), Some(4));
/// # Ok::<(), idkit_server::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Address to listen on, `host:port` (default `127.0.0.1:8080`).
    pub listen: String,
    /// Address of the gRPC front door (`idkit.v1`), `host:port`; none by default. A port of
    /// its own: the HTTP door speaks HTTP/1.1 and gRPC needs HTTP/2. Both take the
    /// connection limits below.
    pub grpc_listen: Option<String>,
    /// TLS on both front doors: a PEM certificate chain and its PEM private key (both or
    /// neither; default: plaintext).
    pub tls_cert: Option<PathBuf>,
    /// See [`tls_cert`](Self::tls_cert).
    pub tls_key: Option<PathBuf>,
    /// Bearer tokens, one per line (`#` comments and blank lines skipped; at least 16
    /// characters each): with it, every call but the probes and metrics (`/healthz`,
    /// `/readyz`, `/metrics`, gRPC health and reflection) needs `authorization: Bearer
    /// TOKEN`. Several tokens may be valid at once, so one can be rotated. Default: none.
    pub tokens_file: Option<PathBuf>,
    /// Schemes to serve, by name or alias; empty serves every registered scheme.
    pub schemes: Vec<String>,
    /// Most ids one `?count=` request may ask for (default 10,000; at most 1,000,000).
    pub max_batch: u32,
    /// A connection whose request headers have not all arrived this many ms after it
    /// opened (or after its previous answer) is closed; on the gRPC door, one that has not
    /// finished its TLS handshake and sent HTTP/2's connection preface by then (default
    /// 5,000; 100 to 600,000).
    pub header_timeout_ms: u64,
    /// Most connections open at once, over both doors; one more is closed as soon as it is
    /// accepted (default 1,000; 1 to 1,000,000). Each holds a file descriptor: keep it
    /// below the process's limit on open files (`ulimit -n`), which `idkit serve` raises
    /// to fit as far as the hard limit allows.
    pub max_connections: usize,
    /// Runtime worker threads for `idkit serve` (default: one per core). When clients run
    /// on the same cores, fewer workers cut the latency tail.
    pub workers: Option<usize>,
    /// Identity fields and options for every served scheme that takes them.
    pub settings: Options,
    /// Settings of one scheme each (`[scheme.NAME]` tables), over [`settings`](Self::settings).
    pub per_scheme: Vec<(String, Options)>,
    /// Where generators get their worker ids: `identity = "etcd://127.0.0.1:2379/orders"`
    /// (or `static:N`, `sqlite:///PATH`, `postgres://...`), `state_dir = "/var/lib/idkit"`,
    /// `no_state_file = true`. By default the identity fields given are a static worker id
    /// guarded by a state file under the platform's state directory.
    pub identity: IdentityConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".to_owned(),
            grpc_listen: None,
            tls_cert: None,
            tls_key: None,
            tokens_file: None,
            schemes: Vec::new(),
            max_batch: 10_000,
            header_timeout_ms: 5_000,
            max_connections: 1_000,
            workers: None,
            settings: Options::default(),
            per_scheme: Vec::new(),
            identity: IdentityConfig::default(),
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
        let table: toml::Table =
            toml::from_str(text).map_err(|e| ConfigError::Toml(e.message().to_owned()))?;
        let mut config = Self::default();
        for (key, value) in table {
            match key.as_str() {
                "listen" => config.listen = typed(&key, value)?,
                "grpc_listen" => config.grpc_listen = Some(typed(&key, value)?),
                "tls_cert" => config.tls_cert = Some(typed::<String>(&key, value)?.into()),
                "tls_key" => config.tls_key = Some(typed::<String>(&key, value)?.into()),
                "tokens_file" => config.tokens_file = Some(typed::<String>(&key, value)?.into()),
                "schemes" => config.schemes = typed(&key, value)?,
                "max_batch" => config.max_batch = typed(&key, value)?,
                "header_timeout_ms" => config.header_timeout_ms = typed(&key, value)?,
                "max_connections" => config.max_connections = typed(&key, value)?,
                "workers" => config.workers = Some(typed(&key, value)?),
                "identity" => config.identity.identity = Some(typed(&key, value)?),
                "state_dir" => config.identity.state_dir = Some(typed(&key, value)?),
                "no_state_file" => config.identity.no_state_file = typed(&key, value)?,
                "scheme" => {
                    let tables: toml::Table = typed(&key, value)?;
                    for (name, value) in tables {
                        let settings: toml::Table = typed(&format!("scheme.{name}"), value)?;
                        let mut options = Options::default();
                        for (key, value) in settings {
                            setting(&mut options, &key, value)?;
                        }
                        config.per_scheme.push((name, options));
                    }
                }
                _ => setting(&mut config.settings, &key, value)?,
            }
        }
        Ok(config)
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

    /// The gRPC front door's address, if one is configured.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when `grpc_listen` is not `host:port` with a numeric host, or
    /// is `listen`'s own address (port 0, a free port for each, aside).
    pub fn grpc_listen_addr(&self) -> Result<Option<SocketAddr>, ConfigError> {
        let Some(text) = self.grpc_listen.as_deref() else {
            return Ok(None);
        };
        let invalid = |message: String| ConfigError::Invalid {
            key: "grpc_listen",
            message,
        };
        let addr: SocketAddr = text.parse().map_err(|_| {
            invalid(format!(
                "{text:?} is not an address: expected IP:PORT, e.g. 127.0.0.1:50051"
            ))
        })?;
        if addr.port() != 0 && self.listen_addr().is_ok_and(|listen| listen == addr) {
            return Err(invalid(format!(
                "{addr} is listen's address too: the HTTP and gRPC doors need a port each"
            )));
        }
        Ok(Some(addr))
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
}

/// `value` as a `T`, or the TOML error naming `key`.
fn typed<T: serde::de::DeserializeOwned>(key: &str, value: toml::Value) -> Result<T, ConfigError> {
    value
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Toml(format!("{key}: {}", e.message())))
}

/// Records `key = value` as an identity field or option of some registered scheme.
fn setting(options: &mut Options, key: &str, value: toml::Value) -> Result<(), ConfigError> {
    let name = key.replace('_', "-");
    if registry::identity_fields()
        .iter()
        .any(|(f, _)| f.name == name)
    {
        options.set_field(&name, typed(key, value)?);
        return Ok(());
    }
    if registry::options().iter().any(|(o, _)| o.name == name) {
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(_) | toml::Value::Boolean(_) | toml::Value::Float(_) => {
                value.to_string()
            }
            other => {
                return Err(ConfigError::Toml(format!(
                    "{key}: invalid type: {}, expected a string or a number",
                    other.type_str()
                )));
            }
        };
        options.set_option(&name, text);
        return Ok(());
    }
    Err(ConfigError::Toml(format!(
        "unknown field `{key}`, expected one of {}",
        known_keys().join(", ")
    )))
}

/// Every key the file takes: the service's own, then each scheme setting.
pub fn known_keys() -> Vec<String> {
    let fields = registry::identity_fields().into_iter().map(|(f, _)| f.name);
    let options = registry::options().into_iter().map(|(o, _)| o.name);
    SERVICE_KEYS
        .iter()
        .copied()
        .chain(fields)
        .chain(options)
        .map(|k| k.replace('-', "_"))
        .collect()
}
