//! [`Service`]: the configured generators, their counters, and the router over them.

use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use axum::Router;
use axum::routing::get;
use idkit_all::identity::{self, Lease};
use idkit_all::registry::{self, Scheme};
use idkit_core::{RawId, SchemeInfo};

use crate::security::{Tls, Tokens};
use crate::*;

/// One served scheme.
#[derive(Debug)]
pub(crate) struct Served {
    /// The scheme's facts, read once: requests consult its name, cap and string length.
    pub(crate) info: SchemeInfo,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) summary: &'static str,
    pub(crate) scheme: Scheme,
    pub(crate) counters: SchemeCounters,
    /// The worker-id lease guarding the generator, when it takes an identity.
    pub(crate) lease: Option<Lease>,
}

impl Served {
    fn new(scheme: Scheme, aliases: &'static [&'static str], summary: &'static str) -> Self {
        Self {
            info: scheme.info(),
            aliases,
            summary,
            scheme,
            counters: SchemeCounters::default(),
            lease: None,
        }
    }
}

/// The configured generators and their counters; cheap to share behind an [`Arc`].
#[derive(Debug)]
pub struct Service {
    pub(crate) served: Vec<Served>,
    pub(crate) max_batch: u32,
    pub(crate) requests: Arc<Requests>,
    /// Calls of the gRPC door's id service.
    pub(crate) grpc_calls: Arc<GrpcCalls>,
    pub(crate) description: String,
    pub(crate) limits: Limits,
    pub(crate) connections: Arc<Connections>,
    /// Bearer tokens, when calls need one.
    pub(crate) tokens: Option<Arc<Tokens>>,
    /// TLS for both front doors, when configured.
    pub(crate) tls: Option<Tls>,
}

/// What [`serve`](crate::serve) allows each connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub header_timeout: std::time::Duration,
    pub max_connections: usize,
}

impl Limits {
    fn of(config: &Config) -> Result<Self, ConfigError> {
        let header_timeout_ms =
            in_range("header_timeout_ms", config.header_timeout_ms, 100..=600_000)?;
        Ok(Self {
            header_timeout: std::time::Duration::from_millis(header_timeout_ms),
            max_connections: in_range("max_connections", config.max_connections, 1..=1_000_000)?,
        })
    }
}

impl Service {
    /// Builds every configured scheme, each with the top-level settings it takes and its
    /// own `[scheme.NAME]` table over them.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when a scheme is unknown, a setting is taken by no served
    /// scheme, a value does not fit or is refused by a served scheme (an identity value too
    /// wide, an unknown rollback policy...), a scheme's store cannot be opened, `max_batch`
    /// is 0 or above [`MAX_BATCH_LIMIT`], `header_timeout_ms` or `max_connections` is out
    /// of range, `listen` or `grpc_listen` is not an address (or both are one, port 0 aside),
    /// `tls_cert` and `tls_key` are not both given or do not hold a certificate and its key,
    /// or `tokens_file` cannot be read or holds no token or a weak one.
    pub fn new(config: &Config) -> Result<Self, ConfigError> {
        config.listen_addr()?;
        config.grpc_listen_addr()?;
        check_max_batch(config.max_batch)?;
        let limits = Limits::of(config)?;
        let tls = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => Some(Tls::from_files(cert, key)?),
            (None, None) => None,
            (Some(_), None) | (None, Some(_)) => {
                return Err(ConfigError::Invalid {
                    key: if config.tls_cert.is_some() {
                        "tls_key"
                    } else {
                        "tls_cert"
                    },
                    message: "TLS needs both tls_cert and tls_key".to_owned(),
                });
            }
        };
        let tokens = match &config.tokens_file {
            Some(path) => Some(Arc::new(Tokens::from_file(path)?)),
            None => None,
        };
        let invalid = |key: &'static str| {
            move |e: registry::BuildError| ConfigError::Invalid {
                key,
                message: e.to_string(),
            }
        };
        let entries: Vec<&'static registry::Entry> = if config.schemes.is_empty() {
            registry::schemes().to_vec()
        } else {
            let mut found: Vec<&'static registry::Entry> = Vec::new();
            for name in &config.schemes {
                let entry = registry::find(name).map_err(invalid("schemes"))?;
                if !found.iter().any(|e| e.name() == entry.name()) {
                    found.push(entry);
                }
            }
            found
        };
        let served_names = || {
            entries
                .iter()
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let settings = &config.settings;
        let names = settings.fields.iter().map(|(n, _)| n);
        for name in names.chain(settings.options.iter().map(|(n, _)| n)) {
            if !entries.iter().copied().any(|e| takes(e, name)) {
                let key = name.replace('-', "_");
                return Err(ConfigError::Invalid {
                    key: "settings",
                    message: format!(
                        "{key}: is set but no served scheme has a {key} field (served: {})",
                        served_names()
                    ),
                });
            }
        }
        for (name, _) in &config.per_scheme {
            let entry = registry::find(name).map_err(invalid("scheme"))?;
            if !entries.iter().any(|e| e.name() == entry.name()) {
                return Err(ConfigError::Invalid {
                    key: "scheme",
                    message: format!(
                        "[scheme.{name}] is given but {} is not served (served: {})",
                        entry.name(),
                        served_names()
                    ),
                });
            }
        }
        let mut served = Vec::new();
        for entry in entries {
            let mut options = registry::Options::default();
            for (name, value) in &settings.fields {
                if takes(entry, name) {
                    options.set_field(name, *value);
                }
            }
            for (name, value) in &settings.options {
                if takes(entry, name) {
                    options.set_option(name, value.clone());
                }
            }
            for (_, own) in config.per_scheme.iter().filter(|(n, _)| entry.is_called(n)) {
                for (name, value) in &own.fields {
                    options.set_field(name, *value);
                }
                for (name, value) in &own.options {
                    options.set_option(name, value.clone());
                }
            }
            let built = identity::build(entry, options, &config.identity);
            // By default every registered scheme that makes ids is served; one the registry
            // makes none of (auto-increment, whose counter would start again at every
            // restart) is left out, and named in the log. Asked for by name, it is an error.
            if let Err(e) = &built
                && e.kind() == registry::BuildErrorKind::NoGenerator
                && config.schemes.is_empty()
            {
                tracing::info!("{}: not served: {}", entry.name(), e.message());
                continue;
            }
            let built = built.map_err(|e| {
                let key =
                    if entry.takes_guard() && e.kind() == registry::BuildErrorKind::Unavailable {
                        "identity"
                    } else {
                        "settings"
                    };
                invalid(key)(e)
            })?;
            if let Some(warning) = &built.warning {
                tracing::warn!("{warning}");
            }
            if let Some(lease) = &built.lease {
                let s = lease.status();
                // A worker id never used before has no high-water mark yet (0): say so,
                // rather than print 1970.
                let mark = if s.floor_ms == 0 {
                    "none yet: its first use".to_owned()
                } else {
                    idkit_core::time::format_rfc3339_ms(s.floor_ms)
                };
                tracing::info!(
                    "{}: worker id {} of {} granted by {} to {} in {} ms (token {}, high-water mark {mark})",
                    entry.name(),
                    s.worker,
                    s.namespace,
                    s.source,
                    s.holder,
                    s.acquired_in.as_millis(),
                    s.token,
                );
                if s.floor_ms > s.now_ms {
                    tracing::warn!(
                        "{}: the clock is {} ms behind the high-water mark of worker id {}: \
                         ids wait or fail as the rollback policy says until it catches up",
                        entry.name(),
                        s.floor_ms - s.now_ms,
                        s.worker
                    );
                }
            }
            let mut one = Served::new(built.scheme, entry.aliases(), entry.summary());
            one.lease = built.lease;
            served.push(one);
        }
        let mut described = vec![if settings.is_empty() {
            "no settings (identity fields 0, default options)".to_owned()
        } else {
            settings.describe()
        }];
        for (name, own) in &config.per_scheme {
            described.push(format!("[scheme.{name}] {}", own.describe()));
        }
        let settings = Some(described.join("; "));
        Ok(Self::assemble(
            served,
            config.max_batch,
            settings,
            limits,
            tokens,
            tls,
        ))
    }

    /// A service for generators built by the caller (custom layouts, test clocks), each
    /// served under its [`SchemeInfo`] name.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when `schemes` is empty, two share a name, or `max_batch`
    /// is 0 or above [`MAX_BATCH_LIMIT`].
    pub fn from_schemes(schemes: Vec<Scheme>, max_batch: u32) -> Result<Self, ConfigError> {
        check_max_batch(max_batch)?;
        if schemes.is_empty() {
            return Err(ConfigError::Invalid {
                key: "schemes",
                message: "no scheme to serve".to_owned(),
            });
        }
        let mut served: Vec<Served> = Vec::new();
        for scheme in schemes {
            let name = scheme.info().name;
            if served.iter().any(|s| s.info.name == name) {
                return Err(ConfigError::Invalid {
                    key: "schemes",
                    message: format!("{name} is given twice"),
                });
            }
            served.push(Served::new(scheme, &[], ""));
        }
        let limits = Limits::of(&Config::default())?;
        Ok(Self::assemble(served, max_batch, None, limits, None, None))
    }

    /// The service of `served`, described by their names, the `settings` they were built
    /// with (from a configuration) and `max_batch`.
    fn assemble(
        served: Vec<Served>,
        max_batch: u32,
        settings: Option<String>,
        limits: Limits,
        tokens: Option<Arc<Tokens>>,
        tls: Option<Tls>,
    ) -> Self {
        let names: Vec<&str> = served.iter().map(|s| s.info.name).collect();
        let settings = settings.map(|s| s + "; ").unwrap_or_default();
        Self {
            description: format!(
                "schemes: {}; {settings}max batch: {max_batch}",
                names.join(", ")
            ),
            served,
            max_batch,
            requests: Arc::default(),
            grpc_calls: Arc::default(),
            connections: Arc::new(Connections::new(limits.max_connections)),
            limits,
            tokens,
            tls,
        }
    }

    /// Releases every worker-id lease at once (graceful shutdown): each generator stops
    /// issuing, the time it issued up to is recorded, and its worker id is free for the
    /// next holder without waiting for the TTL. Idempotent.
    pub fn release_leases(&self) {
        for served in &self.served {
            if let Some(lease) = &served.lease {
                lease.release();
            }
        }
    }

    /// The lease of each served scheme that holds one, by scheme name.
    pub fn leases(&self) -> Vec<(&'static str, &Lease)> {
        self.served
            .iter()
            .filter_map(|s| s.lease.as_ref().map(|l| (s.info.name, l)))
            .collect()
    }

    /// One line saying what is served and how (the start-up log line uses it).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Warns at start-up when the front door on `addr` asks for bearer tokens but has no TLS:
    /// every call would carry a token readable on the network. (Behind a proxy that
    /// terminates TLS that is expected, and the warning says so.)
    pub(crate) fn warn_tokens_in_clear(&self, door: &str, addr: std::net::SocketAddr) {
        if self.tokens.is_some() && self.tls.is_none() {
            tracing::warn!(
                "idkit serve: {door} on {addr} asks for bearer tokens without TLS, so they \
                 cross the network in clear text; set tls_cert and tls_key (--tls-cert, \
                 --tls-key) unless a proxy in front terminates TLS"
            );
        }
    }

    /// Names of the served schemes.
    pub fn scheme_names(&self) -> Vec<&'static str> {
        self.served.iter().map(|s| s.info.name).collect()
    }

    /// The routes, with request metrics and size limits on each, to mount in an application
    /// (`Router::nest`, `Router::merge`). [`serve`] puts the same checks around the whole
    /// router once instead, which saves two allocations per request.
    pub fn router(self: &Arc<Self>) -> Router {
        self.routes()
            .layer(self.guard())
            .with_state(Arc::clone(self))
    }

    pub(crate) fn routes(self: &Arc<Self>) -> Router<Arc<Self>> {
        Router::new()
            .route("/v1/schemes", get(schemes))
            .route("/v1/{scheme}/next", get(next))
            .route("/v1/{scheme}/decode/{id}", get(decode))
            .route("/v1/identity", get(identity_status))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics_text))
            .fallback(not_found)
    }

    pub(crate) fn guard(&self) -> guard::GuardLayer {
        guard::GuardLayer {
            requests: Arc::clone(&self.requests),
            tokens: self.tokens.clone(),
        }
    }

    /// The index of the served scheme with this name or alias.
    pub(crate) fn find(&self, name: &str) -> Result<usize, ApiError> {
        let named = |s: &Served| {
            s.info.name.eq_ignore_ascii_case(name)
                || s.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        };
        self.served
            .iter()
            .position(named)
            // Schemes given to `from_schemes` carry no aliases: ask the registry.
            .or_else(|| {
                let stable = registry::find(name).ok()?.name();
                self.served.iter().position(|s| s.info.name == stable)
            })
            .ok_or_else(|| ApiError::UnknownScheme {
                name: name.to_owned(),
                known: self.scheme_names(),
            })
    }

    /// The served schemes that cannot issue an id now, and why (each is asked for one id,
    /// awaited; the probe ids are discarded: a gap, never a duplicate). Empty when ready.
    pub(crate) async fn readiness(&self) -> Vec<(&'static str, idkit_core::GenerateError)> {
        let mut failing = Vec::new();
        for (index, served) in self.served.iter().enumerate() {
            if let Err(e) = self.probe(index).await {
                failing.push((served.info.name, e));
            }
        }
        failing
    }

    /// Whether scheme `index` can issue an id now: it is asked for one, awaited, and the id
    /// is discarded (a gap, never a duplicate).
    pub(crate) async fn probe(&self, index: usize) -> Result<(), idkit_core::GenerateError> {
        let mut probe = [RawId::default()];
        idkit_core::nonblocking::fill_raw(&*self.served[index].scheme, &mut probe).await
    }

    /// Issues `count` ids of scheme `index`, counting them and any error. A capped layout
    /// whose sequence is spent, or a range allocator whose block is, is awaited
    /// ([`idkit_core::nonblocking`]): no executor thread is held while it waits.
    pub(crate) async fn issue(&self, index: usize, count: usize) -> Result<Vec<RawId>, ApiError> {
        let mut ids = vec![RawId::default(); count];
        self.issue_into(index, &mut ids).await?;
        Ok(ids)
    }

    /// [`issue`](Self::issue) into `ids` (a single id needs no allocation).
    pub(crate) async fn issue_into(&self, index: usize, ids: &mut [RawId]) -> Result<(), ApiError> {
        let served = &self.served[index];
        if let Err(e) = idkit_core::nonblocking::fill_raw(&*served.scheme, ids).await {
            served.counters.errors[error_kind(&e)].fetch_add(1, Relaxed);
            return Err(ApiError::Unavailable {
                scheme: served.info.name,
                reason: e.to_string(),
            });
        }
        served
            .counters
            .issued
            .fetch_add(u64::try_from(ids.len()).unwrap_or(u64::MAX), Relaxed);
        Ok(())
    }
}

/// True when `entry` declares an identity field or option called `name`.
pub(crate) fn takes(entry: &registry::Entry, name: &str) -> bool {
    entry.identity().iter().any(|f| f.name == name)
        || entry.options().iter().any(|o| o.name == name)
}

pub(crate) fn check_max_batch(max_batch: u32) -> Result<(), ConfigError> {
    in_range("max_batch", max_batch, 1..=MAX_BATCH_LIMIT).map(drop)
}

/// `value`, the setting `key`, when `range` holds it.
///
/// # Errors
///
/// [`ConfigError::Invalid`] naming `key`, the value and the range, when it is outside.
fn in_range<T: PartialOrd + fmt::Display>(
    key: &'static str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<T, ConfigError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(ConfigError::Invalid {
        key,
        message: format!(
            "{value} is out of range: expected {} to {}",
            range.start(),
            range.end()
        ),
    })
}
