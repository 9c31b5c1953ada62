//! The idkit HTTP id service as a library: [`Service`] holds the configured generators,
//! [`Service::router`] is an axum [`Router`] any application can mount, and [`serve`] runs
//! it with graceful shutdown. `idkit serve` is this crate plus flags.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/schemes` | the served schemes and their facts |
//! | `GET /v1/{scheme}/next` | one id |
//! | `GET /v1/{scheme}/next?count=N` | `N` ids, `1 <= N <= max_batch` |
//! | `GET /v1/{scheme}/decode/{id}` | timestamp and fields of `id` |
//! | `GET /healthz` | 200 while the process runs |
//! | `GET /readyz` | 200 when every served scheme can issue an id now, else 503 |
//! | `GET /metrics` | Prometheus text format |
//!
//! Answers are text (one id per line) unless the request's `Accept` names
//! `application/json`; JSON ids are strings. Errors are always JSON,
//! `{"error": "..."}`, with 400 for bad input, 404 for an unknown scheme or route, 413/414 for
//! an oversized request, and 503 when a scheme cannot issue right now.
//!
//! ```no_run
//! use std::sync::Arc;
//! use idkit_server::{Config, Service};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::from_toml(r#"schemes = ["snowflake-discord"]
//! worker = 1"#)?;
//! let service = Arc::new(Service::new(&config)?);
//! let app = axum::Router::new().nest("/ids", service.router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

mod config;
mod guard;
mod metrics;

use std::fmt::Write as _;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use axum::Router;
use axum::extract::FromRequestParts;
use axum::extract::{Path, RawPathParams, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use idkit::registry::{self, Scheme};
use idkit_core::{GenerateError, GenerateErrorKind, RawId, SchemeInfo};
use serde_json::{Value, json};

pub use config::{Config, ConfigError, MAX_BATCH_LIMIT, known_keys};
pub use idkit::render;
use metrics::{Requests, SchemeCounters, error_kind};

/// Batches larger than this are generated on a blocking thread, so a capped layout waiting
/// for its next tick does not hold up the async workers.
const INLINE_BATCH: usize = 256;
/// Longest request path and query accepted, bytes.
const MAX_URI: usize = 2048;
/// Largest request body accepted, bytes (no route takes a body).
const MAX_BODY: u64 = 1024;

/// One served scheme.
#[derive(Debug)]
struct Served {
    /// The scheme's facts, read once: requests consult its name, cap and string length.
    info: SchemeInfo,
    aliases: &'static [&'static str],
    summary: &'static str,
    scheme: Scheme,
    counters: SchemeCounters,
}

impl Served {
    fn new(scheme: Scheme, aliases: &'static [&'static str], summary: &'static str) -> Self {
        Self {
            info: scheme.info(),
            aliases,
            summary,
            scheme,
            counters: SchemeCounters::default(),
        }
    }
}

/// The configured generators and their counters; cheap to share behind an [`Arc`].
#[derive(Debug)]
pub struct Service {
    served: Vec<Served>,
    max_batch: u32,
    requests: Arc<Requests>,
    description: String,
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
    /// is 0 or above [`MAX_BATCH_LIMIT`], or `listen` is not an address.
    pub fn new(config: &Config) -> Result<Self, ConfigError> {
        config.listen_addr()?;
        check_max_batch(config.max_batch)?;
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
            let scheme = entry.build(&options).map_err(invalid("settings"))?;
            served.push(Served::new(scheme, entry.aliases(), entry.summary()));
        }
        let mut described = vec![if settings.is_empty() {
            "no settings (identity fields 0, default options)".to_owned()
        } else {
            settings.describe()
        }];
        for (name, own) in &config.per_scheme {
            described.push(format!("[scheme.{name}] {}", own.describe()));
        }
        let settings = described.join("; ");
        let description = format!(
            "schemes: {}; {settings}; max batch: {}",
            served
                .iter()
                .map(|s| s.info.name)
                .collect::<Vec<_>>()
                .join(", "),
            config.max_batch
        );
        Ok(Self {
            served,
            max_batch: config.max_batch,
            requests: Arc::default(),
            description,
        })
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
        let description = format!(
            "schemes: {}; max batch: {max_batch}",
            served
                .iter()
                .map(|s| s.info.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(Self {
            served,
            max_batch,
            requests: Arc::default(),
            description,
        })
    }

    /// One line saying what is served and how (the start-up log line uses it).
    pub fn description(&self) -> &str {
        &self.description
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

    fn routes(self: &Arc<Self>) -> Router<Arc<Self>> {
        Router::new()
            .route("/v1/schemes", get(schemes))
            .route("/v1/{scheme}/next", get(next))
            .route("/v1/{scheme}/decode/{id}", get(decode))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics_text))
            .fallback(not_found)
    }

    fn guard(&self) -> guard::GuardLayer {
        guard::GuardLayer {
            requests: Arc::clone(&self.requests),
        }
    }

    /// The index of the served scheme with this name or alias.
    fn find(&self, name: &str) -> Result<usize, ApiError> {
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

    /// Issues `count` ids of scheme `index`, counting them and any error.
    fn issue(&self, index: usize, count: usize) -> Result<Vec<RawId>, ApiError> {
        let served = &self.served[index];
        let mut ids = vec![RawId::default(); count];
        if let Err(e) = served.scheme.fill_raw(&mut ids) {
            served.counters.errors[error_kind(&e)].fetch_add(1, Relaxed);
            return Err(ApiError::Unavailable {
                scheme: served.info.name,
                reason: e.to_string(),
            });
        }
        served
            .counters
            .issued
            .fetch_add(u64::try_from(count).unwrap_or(u64::MAX), Relaxed);
        Ok(ids)
    }
}

/// True when `entry` declares an identity field or option called `name`.
fn takes(entry: &registry::Entry, name: &str) -> bool {
    entry.identity().iter().any(|f| f.name == name)
        || entry.options().iter().any(|o| o.name == name)
}

fn check_max_batch(max_batch: u32) -> Result<(), ConfigError> {
    if max_batch == 0 || max_batch > MAX_BATCH_LIMIT {
        return Err(ConfigError::Invalid {
            key: "max_batch",
            message: format!("{max_batch} is out of range: expected 1 to {MAX_BATCH_LIMIT}"),
        });
    }
    Ok(())
}

fn format_error(scheme: &'static str) -> impl Fn(idkit_core::ParseError) -> ApiError {
    move |e| ApiError::Unavailable {
        scheme,
        reason: e.to_string(),
    }
}

/// Runs `service` on `listener` until `shutdown` completes, then lets in-flight requests
/// finish. Logs one line saying what is served and where.
///
/// # Errors
///
/// The listener's I/O errors.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!(listen = %addr, served = %service.description(), "idkit serve: listening on http://{addr}");
    let app = tower_layer::Layer::layer(
        &service.guard(),
        service.routes().with_state(Arc::clone(&service)),
    );
    axum::serve(listener, axum::ServiceExt::into_make_service(app))
        .with_graceful_shutdown(shutdown)
        .await?;
    tracing::info!("idkit serve: stopped; in-flight requests finished");
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("idkit serve: Ctrl-C, shutting down"),
        () = term => tracing::info!("idkit serve: SIGTERM, shutting down"),
    }
}

/// A typed failure of a request; always answered as JSON.
#[derive(Debug)]
enum ApiError {
    UnknownScheme {
        name: String,
        known: Vec<&'static str>,
    },
    BadRequest(String),
    Unavailable {
        scheme: &'static str,
        reason: String,
    },
    NotFound(String),
    TooLarge(StatusCode, String),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            Self::UnknownScheme { name, known } => (
                StatusCode::NOT_FOUND,
                json!({
                    "error": format!("unknown scheme {name:?}: expected one of {}", known.join(", ")),
                    "known": known,
                }),
            ),
            Self::BadRequest(message) => (StatusCode::BAD_REQUEST, json!({ "error": message })),
            Self::Unavailable { scheme, reason } => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({ "error": format!("{scheme} cannot issue ids now: {reason}"), "scheme": scheme }),
            ),
            Self::NotFound(path) => (
                StatusCode::NOT_FOUND,
                json!({ "error": format!("no route {path}: see /v1/schemes, /v1/{{scheme}}/next, /v1/{{scheme}}/decode/{{id}}, /healthz, /readyz, /metrics") }),
            ),
            Self::TooLarge(status, message) => (status, json!({ "error": message })),
        };
        (status, axum::Json(body)).into_response()
    }
}

/// Whether the client asked for JSON (`Accept: application/json`), read from the request
/// without copying its headers.
struct WantsJson(bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsJson {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .headers
                .get_all(header::ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| v.contains("application/json")),
        ))
    }
}

fn text(body: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

/// `count` from the query: absent means one id.
fn parse_count(query: Option<&str>, max: u32) -> Result<Option<usize>, ApiError> {
    let mut count = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key != "count" {
            continue;
        }
        if count.is_some() {
            return Err(ApiError::BadRequest(
                "count is given more than once".to_owned(),
            ));
        }
        if value.is_empty() {
            return Err(ApiError::BadRequest(format!(
                "count needs a value: expected ?count=N with 1 <= N <= {max}"
            )));
        }
        if !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::BadRequest(format!(
                "count {value:?} is not a whole number: expected 1 to {max}"
            )));
        }
        let n: u64 = value.parse().unwrap_or(u64::MAX);
        if n == 0 || n > u64::from(max) {
            return Err(ApiError::BadRequest(format!(
                "count {value} is out of range: expected 1 to {max}"
            )));
        }
        count = Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    Ok(count)
}

async fn next(
    State(service): State<Arc<Service>>,
    params: RawPathParams,
    RawQuery(query): RawQuery,
    WantsJson(json_out): WantsJson,
) -> Result<Response, ApiError> {
    // The name as sent, not percent-decoded: no scheme name needs escaping.
    let name = params.iter().next().map_or("", |(_, v)| v);
    let index = service.find(name)?;
    let served = &service.served[index];
    let scheme = served.info.name;
    let count = parse_count(query.as_deref(), service.max_batch)?;
    let n = count.unwrap_or(1);
    // Only a capped layout can wait for its next tick; its large batches go to a blocking
    // thread so the async workers keep answering.
    let ids = if n > INLINE_BATCH && served.info.cap_per_sec.is_some() {
        let service = Arc::clone(&service);
        tokio::task::spawn_blocking(move || service.issue(index, n))
            .await
            .map_err(|e| ApiError::Unavailable {
                scheme,
                reason: e.to_string(),
            })??
    } else {
        service.issue(index, n)?
    };
    if json_out {
        let strings = ids
            .iter()
            .map(|id| served.scheme.format_raw(id))
            .collect::<Result<Vec<_>, _>>()
            .map_err(format_error(scheme))?;
        let body = match count {
            None => json!({ "scheme": scheme, "id": strings[0] }),
            Some(_) => json!({ "scheme": scheme, "ids": strings }),
        };
        return Ok(axum::Json(body).into_response());
    }
    let width = usize::try_from(served.info.string_len).unwrap_or(0) + 1;
    let mut body = String::with_capacity(ids.len() * width);
    for id in &ids {
        served
            .scheme
            .format_raw_into(id, &mut body)
            .map_err(format_error(scheme))?;
        body.push('\n');
    }
    Ok(text(body))
}

async fn decode(
    State(service): State<Arc<Service>>,
    Path((name, id)): Path<(String, String)>,
    WantsJson(json_out): WantsJson,
) -> Result<Response, ApiError> {
    let served = &service.served[service.find(&name)?];
    let malformed =
        |e| ApiError::BadRequest(format!("malformed {} id {id:?}: {e}", served.info.name));
    let decoded = served.scheme.decode_text(&id).map_err(malformed)?;
    let canonical = served.scheme.canonical_text(&id).map_err(malformed)?;
    if json_out {
        return Ok(
            axum::Json(render::decoded_json(served.info.name, &canonical, &decoded))
                .into_response(),
        );
    }
    Ok(text(
        render::decoded_plain(served.info.name, &canonical, &decoded) + "\n",
    ))
}

async fn schemes(State(service): State<Arc<Service>>, WantsJson(json_out): WantsJson) -> Response {
    if json_out {
        let all: Vec<Value> = service
            .served
            .iter()
            .map(|s| render::info_json(&s.info, s.aliases, s.summary))
            .collect();
        return axum::Json(Value::Array(all)).into_response();
    }
    let width = service
        .served
        .iter()
        .map(|s| s.info.name.len())
        .max()
        .unwrap_or(0);
    let mut body = String::new();
    for s in &service.served {
        let _ = writeln!(body, "{:<width$}  {}", s.info.name, s.summary);
    }
    text(body)
}

async fn healthz() -> Response {
    text("ok\n".to_owned())
}

/// Ready when every served scheme issues an id now (the probe ids are discarded: a gap,
/// never a duplicate).
async fn readyz(State(service): State<Arc<Service>>, WantsJson(json_out): WantsJson) -> Response {
    let failing: Vec<(&str, GenerateError)> = service
        .served
        .iter()
        .filter_map(|s| s.scheme.next_raw().err().map(|e| (s.info.name, e)))
        .collect();
    if failing.is_empty() {
        return if json_out {
            axum::Json(json!({ "ready": true })).into_response()
        } else {
            text("ready\n".to_owned())
        };
    }
    let reasons: Vec<Value> = failing
        .iter()
        .map(|(scheme, e)| json!({ "scheme": scheme, "error": e.to_string() }))
        .collect();
    (
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(json!({
            "ready": false,
            "error": format!("{} of {} schemes cannot issue ids", failing.len(), service.served.len()),
            "schemes": reasons,
        })),
    )
        .into_response()
}

/// Writes one counter family with a sample per served scheme.
fn scheme_counter(
    out: &mut String,
    service: &Service,
    name: &str,
    help: &str,
    value: impl Fn(&Served) -> u64,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
    for s in &service.served {
        let _ = writeln!(out, "{name}{{scheme=\"{}\"}} {}", s.info.name, value(s));
    }
}

async fn metrics_text(State(service): State<Arc<Service>>) -> Response {
    let mut out = String::new();
    scheme_counter(
        &mut out,
        &service,
        "idkit_ids_issued_total",
        "Ids issued.",
        |s| s.counters.issued.load(Relaxed),
    );
    let _ = writeln!(
        out,
        "# HELP idkit_generate_errors_total Requests that could not be served, by error kind.\n\
         # TYPE idkit_generate_errors_total counter"
    );
    for s in &service.served {
        for (kind, n) in GenerateErrorKind::ALL.iter().zip(&s.counters.errors) {
            let _ = writeln!(
                out,
                "idkit_generate_errors_total{{scheme=\"{}\",kind=\"{}\"}} {}",
                s.info.name,
                kind.as_str(),
                n.load(Relaxed)
            );
        }
    }
    scheme_counter(
        &mut out,
        &service,
        "idkit_clock_rollbacks_total",
        "Times a generator found the clock behind its last id.",
        |s| s.scheme.stats().clock_rollbacks,
    );
    scheme_counter(
        &mut out,
        &service,
        "idkit_tick_waits_total",
        "Times a generator waited for the next tick, its sequence spent.",
        |s| s.scheme.stats().tick_waits,
    );
    service.requests.write(&mut out);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response()
}

async fn not_found(request: Request) -> ApiError {
    ApiError::NotFound(request.uri().path().to_owned())
}
