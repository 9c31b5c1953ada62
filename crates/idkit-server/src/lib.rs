//! The idkit id service as a library, with two front doors over one [`Service`]: HTTP and
//! gRPC. [`Service`] holds the configured generators, [`Service::router`] is an axum
//! [`Router`](axum::Router) any application can mount, [`serve`] runs it with graceful
//! shutdown, and [`serve_grpc`] runs the gRPC door (package `idkit.v1`, with health and
//! reflection; see [`grpc`]) over the same service. Both generate through
//! [`idkit_core::nonblocking`], so no executor thread waits for a tick or a block, and both
//! take the optional TLS and bearer tokens of the configuration. `idkit serve` is this
//! crate plus flags.
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
//! `application/json`; JSON ids are strings, and new ids carry `Cache-Control: no-store`.
//! Errors are always JSON, `{"error": "..."}`, with 400 for bad input (a query parameter
//! other than `count` among it), 404 for a scheme not served or an unknown
//! route, 413/414 for an oversized request, and 503 when a scheme cannot issue right now.
//!
//! ```
//! use std::io::{Read, Write};
//! use std::sync::Arc;
//! use idkit_server::{Config, Service};
//!
//! let config = Config::from_toml(r#"schemes = ["snowflake-discord"]
//! worker = 1
//! no_state_file = true"#)?;
//! let service = Arc::new(Service::new(&config)?);
//! let app = axum::Router::new().nest("/ids", service.router());
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let reply = runtime.block_on(async {
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     tokio::spawn(async move { axum::serve(listener, app).await });
//!     // Any HTTP client; a raw request here.
//!     tokio::task::spawn_blocking(move || {
//!         let mut stream = std::net::TcpStream::connect(addr)?;
//!         stream.write_all(b"GET /ids/v1/snowflake-discord/next HTTP/1.1\r\n\
//!             Host: localhost\r\nConnection: close\r\n\r\n")?;
//!         let mut reply = String::new();
//!         stream.read_to_string(&mut reply)?;
//!         Ok::<_, std::io::Error>(reply)
//!     })
//!     .await?
//! })?;
//! assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod error;
pub mod grpc;
mod guard;
mod handlers;
mod metrics;
mod security;
mod service;

use std::future::Future;
use std::sync::Arc;

pub use config::{Config, ConfigError, MAX_BATCH_LIMIT, known_keys};
pub use grpc::serve_grpc;
pub use idkit_all::render;
pub use service::Service;

use error::{ApiError, format_error};
use handlers::{decode, healthz, identity_status, next, not_found, readyz, schemes};
use metrics::{Connections, GrpcCalls, Requests, SchemeCounters, error_kind, metrics_text};

/// Longest request path and query accepted, bytes.
const MAX_URI: usize = 2048;
/// Largest request body accepted, bytes (no route takes a body).
const MAX_BODY: u64 = 1024;

/// Runs `service` on `listener` until `shutdown` completes, then lets in-flight requests
/// finish. Logs one line saying what is served, where, and whether TLS and a token are on
/// (and a warning when tokens are asked for without TLS).
///
/// Each connection must send its request headers within the configured `header_timeout_ms`
/// of opening (and of its previous answer), or it is closed; at most `max_connections` are
/// open at once over both doors ([`serve_grpc`]'s count too), and one more is closed as soon
/// as it is accepted. `/metrics` counts both.
/// (A [`Service::router`] mounted in another server has that server's limits.)
///
/// # Errors
///
/// Only reading the listener's address; a failed `accept` (say, out of file descriptors) is
/// logged and retried after a pause.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use std::sync::atomic::Ordering::Relaxed;

    let addr = listener.local_addr()?;
    let (tls, tokens) = (service.tls.is_some(), service.tokens.is_some());
    let url = if tls { "https" } else { "http" };
    tracing::info!(listen = %addr, served = %service.description(), tls, tokens, "idkit serve: listening on {url}://{addr}");
    service.warn_tokens_in_clear("HTTP", addr);
    let app = tower_layer::Layer::layer(
        &service.guard(),
        service.routes().with_state(Arc::clone(&service)),
    );
    let limits = service.limits;
    let connections = Arc::clone(&service.connections);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let tls = service.tls.as_ref().map(security::Tls::acceptor);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            stream = accepted(&listener, "HTTP") => stream,
            () = &mut shutdown => break,
        };
        let Some(slot) = connections.admit() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            app: app.clone(),
            header_timeout: limits.header_timeout,
            connections: Arc::clone(&connections),
            graceful: graceful.watcher(),
        };
        let tls = tls.clone();
        let connections = Arc::clone(&connections);
        tokio::spawn(async move {
            match tls {
                None => connection.serve(stream).await,
                Some(acceptor) => {
                    // The handshake has the headers' time limit: a client that opens a
                    // connection and says nothing is closed either way.
                    let handshake = security::handshake(&acceptor, stream);
                    match tokio::time::timeout(limits.header_timeout, handshake).await {
                        Ok(Ok(stream)) => connection.serve(stream).await,
                        Ok(Err(())) => {
                            connections.tls_failures.fetch_add(1, Relaxed);
                        }
                        Err(_) => {
                            connections.header_timeouts.fetch_add(1, Relaxed);
                        }
                    }
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    tracing::info!("idkit serve: stopped; in-flight requests finished");
    Ok(())
}

/// The next connection `listener` accepts, for either door. A failed `accept` (say, out
/// of file descriptors) is logged and tried again after a pause.
async fn accepted(listener: &tokio::net::TcpListener, door: &str) -> tokio::net::TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return stream,
            Err(e) => {
                tracing::warn!("idkit serve: {door} accept failed: {e}; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}

/// One accepted connection of the HTTP door, to be served over plain TCP or TLS.
struct Connection<A> {
    app: A,
    header_timeout: std::time::Duration,
    connections: Arc<Connections>,
    graceful: hyper_util::server::graceful::Watcher,
}

impl<A> Connection<A>
where
    A: tower_service::Service<
            axum::extract::Request,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
{
    /// Serves HTTP/1.1 on `io` until the client or a graceful shutdown closes it.
    async fn serve<IO>(self, io: IO)
    where
        IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let app = self.app;
        let handler =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let mut app = app.clone();
                // The router is always ready; the guard forwards readiness to it.
                tower_service::Service::call(&mut app, request.map(axum::body::Body::new))
            });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(self.header_timeout)
            .serve_connection(hyper_util::rt::TokioIo::new(io), handler);
        if let Err(e) = self.graceful.watch(connection).await
            && e.is_timeout()
        {
            self.connections
                .header_timeouts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
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
