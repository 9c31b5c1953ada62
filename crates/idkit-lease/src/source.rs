//! [`IdentitySource`]: where a generator's worker id comes from, parsed from one string.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::LeaseError;

/// The default lease TTL of the coordination backends.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

/// How far ahead a static worker id reserves time in its state file, and so the longest a
/// restart after a crash waits for the reservation to pass.
pub const STATIC_WINDOW: Duration = Duration::from_secs(3);

/// The namespace of leases when the source names none.
pub const DEFAULT_NAMESPACE: &str = "idkit";

/// Where a generator's identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A worker id given by the operator; `state_dir` holds its high-water file (`None`:
    /// no file, no guard).
    Static {
        worker: u64,
        state_dir: Option<PathBuf>,
    },
    /// One SQLite file shared by the processes of one host.
    Sqlite { path: PathBuf },
    /// A PostgreSQL table; `params` as the `postgres` crate takes them.
    Postgres { params: String },
    /// A MySQL / MariaDB table; `url` as the `mysql` crate takes it.
    MySql { url: String },
    /// etcd's v3 JSON gateway at `host:port`.
    Etcd { endpoint: String },
}

/// Where a generator's worker id comes from, parsed from the one option the CLI and the
/// service take (`--identity`, `identity = "..."`):
///
/// | text | source |
/// |---|---|
/// | `static:7` | worker id 7, guarded by a state file under the state directory |
/// | `sqlite:///var/lib/idkit/ids.db` | a lease in a SQLite file shared by one host's processes |
/// | `postgres://user@host:5432/db` | a lease in a PostgreSQL table, timed by the database |
/// | `mysql://user@host:3306/db` | a lease in a MySQL / MariaDB table, timed by the database |
/// | `etcd://127.0.0.1:2379/orders` | an etcd lease under the key prefix `orders` |
///
/// Query parameters: `namespace=NAME` (sqlite, postgres and mysql; etcd takes the path),
/// `ttl_ms=N` (the lease's time to live, default 10 s, at least 1 s) and `max_workers=N`
/// (lease only worker ids `0..N`, e.g. to leave the rest to static ids).
///
/// # Examples
///
/// ```
/// use idkit_lease::IdentitySource;
///
/// let source = IdentitySource::parse("etcd://127.0.0.1:2379/orders?ttl_ms=3000")?;
/// assert_eq!(source.namespace(), "orders");
/// assert_eq!(source.ttl().as_millis(), 3000);
/// assert_eq!(IdentitySource::parse("static:7")?.static_worker(), Some(7));
/// assert!(IdentitySource::parse("zookeeper://h:2181").is_err());
/// # Ok::<(), idkit_lease::LeaseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentitySource {
    pub(crate) kind: Kind,
    pub(crate) namespace: String,
    pub(crate) ttl: Duration,
    /// At most this many worker ids, `0..max_workers`, even where the layout has more.
    pub(crate) max_workers: Option<u64>,
    text: String,
}

impl IdentitySource {
    /// Parses an identity source.
    ///
    /// # Errors
    ///
    /// [`LeaseErrorKind::Invalid`](crate::LeaseErrorKind::Invalid) naming what is malformed:
    /// an unknown scheme, a worker id that is not a number (or one past 2^64 - 1), an empty
    /// path or host, an unknown or malformed parameter, a TTL under one second.
    pub fn parse(text: &str) -> Result<Self, LeaseError> {
        let bad = |why: &str| {
            LeaseError::invalid(format!(
                "identity {text:?}: {why} (expected static:N, sqlite:///PATH, \
                 postgres://..., mysql://..., or etcd://HOST:PORT/PREFIX)"
            ))
        };
        // A whole number; one past u64 is named as too large, not as no number.
        let number = |v: &str, what: &str| -> Result<u64, LeaseError> {
            v.parse().map_err(|e: std::num::ParseIntError| {
                bad(&if *e.kind() == std::num::IntErrorKind::PosOverflow {
                    format!("{what} {v} is past the largest, {}", u64::MAX)
                } else {
                    format!("{what} is not a number")
                })
            })
        };
        let (scheme, rest) = text.split_once(':').ok_or_else(|| bad("no scheme"))?;
        let (body, query) = match rest.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (rest, None),
        };
        let mut namespace = None;
        let mut ttl = DEFAULT_TTL;
        let mut max_workers = None;
        let mut passed = Vec::new();
        for pair in query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "namespace" if !v.is_empty() => namespace = Some(v.to_owned()),
                "ttl_ms" => {
                    let ms = number(v, "ttl_ms")?;
                    if ms < 1000 {
                        return Err(bad("ttl_ms must be at least 1000"));
                    }
                    ttl = Duration::from_millis(ms);
                }
                "max_workers" => {
                    let n = number(v, "max_workers")?;
                    if n == 0 {
                        return Err(bad("max_workers must be at least 1"));
                    }
                    max_workers = Some(n);
                }
                _ if scheme.starts_with("postgres") || scheme == "mysql" => {
                    passed.push(pair.to_owned());
                }
                _ => return Err(bad(&format!("unknown parameter {k:?}"))),
            }
        }
        let kind = match scheme {
            "static" => {
                let worker = number(body, "the worker id")?;
                Kind::Static {
                    worker,
                    state_dir: Some(default_state_dir()),
                }
            }
            "sqlite" => {
                let path = body.strip_prefix("//").unwrap_or(body);
                if path.is_empty() {
                    return Err(bad("no file"));
                }
                Kind::Sqlite {
                    path: PathBuf::from(path),
                }
            }
            "postgres" | "postgresql" => {
                let mut params = format!("{scheme}:{body}");
                if !passed.is_empty() {
                    params = format!("{params}?{}", passed.join("&"));
                }
                Kind::Postgres { params }
            }
            "mysql" => {
                let mut url = format!("{scheme}:{body}");
                if !passed.is_empty() {
                    url = format!("{url}?{}", passed.join("&"));
                }
                Kind::MySql { url }
            }
            "etcd" => {
                let rest = body
                    .strip_prefix("//")
                    .ok_or_else(|| bad("expected etcd://"))?;
                let (endpoint, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if endpoint.is_empty() {
                    return Err(bad("no host"));
                }
                if !prefix.is_empty() {
                    namespace = Some(prefix.trim_end_matches('/').to_owned());
                }
                Kind::Etcd {
                    endpoint: endpoint.to_owned(),
                }
            }
            other => return Err(bad(&format!("unknown source {other:?}"))),
        };
        Ok(Self {
            kind,
            namespace: namespace.unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned()),
            ttl,
            max_workers,
            text: text.to_owned(),
        })
    }

    /// A static worker id, guarded by a state file in the platform's state directory
    /// (what `static:N` parses to).
    pub fn fixed(worker: u64) -> Self {
        Self {
            kind: Kind::Static {
                worker,
                state_dir: Some(default_state_dir()),
            },
            namespace: DEFAULT_NAMESPACE.to_owned(),
            ttl: STATIC_WINDOW,
            max_workers: None,
            text: format!("static:{worker}"),
        }
    }

    /// Leases in the SQLite file at `path`, in `namespace`, at the default TTL (what
    /// `sqlite:///PATH?namespace=NAMESPACE` parses to), for a path that is not text or holds
    /// a `?`, which the text form cannot carry.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_lease::IdentitySource;
    /// let source = IdentitySource::sqlite(std::path::Path::new("/var/lib/app/ids.db"), "orders");
    /// assert_eq!(source.namespace(), "orders");
    /// assert_eq!(source.display(), "sqlite:///var/lib/app/ids.db");
    /// ```
    pub fn sqlite(path: &Path, namespace: &str) -> Self {
        Self {
            kind: Kind::Sqlite {
                path: path.to_path_buf(),
            },
            namespace: namespace.to_owned(),
            ttl: DEFAULT_TTL,
            max_workers: None,
            text: format!("sqlite://{}", path.display()),
        }
    }

    /// For a static source, keeps the state file in `dir` (`None`: keep no file, and so
    /// guard nothing across restarts). No effect on other sources.
    #[must_use]
    pub fn with_state_dir(mut self, dir: Option<&Path>) -> Self {
        if let Kind::Static { state_dir, .. } = &mut self.kind {
            *state_dir = dir.map(Path::to_path_buf);
        }
        self
    }

    /// The worker id of a static source.
    pub fn static_worker(&self) -> Option<u64> {
        match self.kind {
            Kind::Static { worker, .. } => Some(worker),
            _ => None,
        }
    }

    /// True for a static source that keeps no state file (nothing guards it).
    pub fn is_unguarded(&self) -> bool {
        matches!(
            &self.kind,
            Kind::Static {
                state_dir: None,
                ..
            }
        )
    }

    /// The namespace leases are taken in (a scheme's leases are under `NAMESPACE/SCHEME`).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The lease's time to live (for a static source, how far ahead it reserves time).
    pub fn ttl(&self) -> Duration {
        match self.kind {
            Kind::Static { .. } => STATIC_WINDOW,
            _ => self.ttl,
        }
    }

    /// The text it was parsed from, with any password hidden.
    pub fn display(&self) -> String {
        match &self.kind {
            Kind::Postgres { .. } | Kind::MySql { .. } => hide_password(&self.text),
            _ => self.text.clone(),
        }
    }
}

/// `postgres://user:secret@host` as `postgres://user:***@host`.
fn hide_password(text: &str) -> String {
    let Some((head, tail)) = text.split_once("://") else {
        return text.to_owned();
    };
    match tail.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("{head}://{name}:***@{host}")
        }
        _ => text.to_owned(),
    }
}

/// The platform's directory for a program's state: `$XDG_STATE_HOME/idkit`, else
/// `~/.local/state/idkit` on Unix; `%LOCALAPPDATA%\idkit` on Windows;
/// `~/Library/Application Support/idkit` on macOS. `IDKIT_STATE_DIR` overrides it
/// ([`idkit_core::state::state_dir`], which the `range` scheme's default store shares).
pub fn default_state_dir() -> PathBuf {
    idkit_core::state::state_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_source_and_refuses_the_rest() {
        let s = IdentitySource::parse("sqlite:///tmp/ids.db?namespace=orders&ttl_ms=2000").unwrap();
        assert_eq!(
            s.kind,
            Kind::Sqlite {
                path: "/tmp/ids.db".into()
            }
        );
        assert_eq!((s.namespace(), s.ttl()), ("orders", Duration::from_secs(2)));
        let p =
            IdentitySource::parse("postgres://u:pw@h:5/db?namespace=n&connect_timeout=3").unwrap();
        assert_eq!(
            p.kind,
            Kind::Postgres {
                params: "postgres://u:pw@h:5/db?connect_timeout=3".into()
            }
        );
        assert_eq!(p.namespace(), "n");
        let m = IdentitySource::parse(
            "mysql://u:pw@h:3306/db?namespace=m&ttl_ms=3000&prefer_socket=false",
        )
        .unwrap();
        assert_eq!(
            m.kind,
            Kind::MySql {
                url: "mysql://u:pw@h:3306/db?prefer_socket=false".into()
            }
        );
        assert_eq!((m.namespace(), m.ttl()), ("m", Duration::from_secs(3)));
        assert_eq!(
            m.display(),
            "mysql://u:***@h:3306/db?namespace=m&ttl_ms=3000&prefer_socket=false"
        );
        assert_eq!(
            p.display(),
            "postgres://u:***@h:5/db?namespace=n&connect_timeout=3"
        );
        let e = IdentitySource::parse("etcd://127.0.0.1:2379").unwrap();
        assert_eq!(e.namespace(), DEFAULT_NAMESPACE);
        assert_eq!(e.ttl(), DEFAULT_TTL);
        let st = IdentitySource::parse("static:7").unwrap();
        assert_eq!(st.static_worker(), Some(7));
        assert_eq!(st.ttl(), STATIC_WINDOW);
        assert!(st.clone().with_state_dir(None).is_unguarded());
        for bad in [
            "static:x",
            "static",
            "sqlite://",
            "etcd:/h",
            "etcd:///p",
            "zk://h",
            "sqlite:///a?ttl_ms=10",
            "sqlite:///a?ttl_ms=ten",
            "sqlite:///a?color=red",
            "etcd://h:1/p?max_workers=0",
        ] {
            let err = IdentitySource::parse(bad).unwrap_err();
            assert_eq!(err.kind(), crate::LeaseErrorKind::Invalid, "{bad}");
            assert!(err.to_string().contains(bad), "{err}");
        }
        // A number too large is named as one; something else as no number.
        for (bad, says) in [
            (
                "static:18446744073709551616",
                "the worker id 18446744073709551616 is past the largest, 18446744073709551615",
            ),
            ("static:-1", "the worker id is not a number"),
            (
                "etcd://h:1/p?ttl_ms=99999999999999999999",
                "ttl_ms 99999999999999999999 is past the largest",
            ),
            (
                "etcd://h:1/p?max_workers=four",
                "max_workers is not a number",
            ),
        ] {
            let err = IdentitySource::parse(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
