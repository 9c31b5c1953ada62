//! The gRPC front door: package `idkit.v1` (`proto/idkit/v1/idkit.proto`) over the same
//! [`Service`] as the HTTP routes, with `grpc.health.v1` health checking that follows
//! readiness and server reflection. [`serve_grpc`] runs it; [`routes`] gives the tonic
//! services to mount in another server.
//!
//! The code and the descriptor that reflection serves are compiled from the `.proto` when
//! the crate builds (`build.rs`), by protox, a protobuf compiler in Rust: no `protoc`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use idkit_core::RawId;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::http;
use tonic::{Code, Request, Response, Status};

use crate::metrics::GRPC_STREAM;
use crate::{ApiError, Service};

mod health;
mod incoming;

/// The messages, the client and the server trait generated from `idkit.v1`.
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic
)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/idkit.v1.rs"));

    /// The encoded `FileDescriptorSet` of `idkit/v1/idkit.proto`, as reflection serves it.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/idkit_v1_descriptor.bin"));
}

use proto::id_service_server::{IdService, IdServiceServer};
use proto::{
    BatchRequest, DecodeRequest, DecodeResponse, IdChunk, IdentityRequest, IdentityResponse,
    LeaseStatus, NextRequest, NextResponse, SchemeFacts, SchemesRequest, SchemesResponse,
    StreamRequest,
};

/// The health service name of the id service as a whole (also served as `""`).
pub const HEALTH_SERVICE: &str = "idkit.v1.IdService";
/// Ids per stream chunk when the request leaves `chunk_size` at 0.
const DEFAULT_CHUNK: u32 = 1_000;
/// Largest request message accepted, bytes: no request of this service needs more than a
/// scheme name and an id.
const MAX_REQUEST: usize = 4 * 1024;

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::UnknownScheme { name, known } => {
                Status::invalid_argument(crate::error::not_served(&name, &known))
            }
            ApiError::BadRequest(message) => Status::invalid_argument(message),
            ApiError::Unavailable { scheme, reason } => {
                Status::unavailable(format!("{scheme} cannot issue ids now: {reason}"))
            }
            ApiError::NotFound(path) => Status::not_found(path),
            ApiError::TooLarge(_, message) => Status::resource_exhausted(message),
        }
    }
}

/// The id service of `idkit.v1` over a [`Service`].
#[derive(Debug, Clone)]
struct Door {
    service: Arc<Service>,
    /// Turns true at shutdown: open streams end.
    closing: watch::Receiver<bool>,
}

impl Door {
    /// The served scheme for `name` and a batch count checked against the limit.
    fn count(&self, count: u64) -> Result<usize, Status> {
        let max = self.service.max_batch;
        if count == 0 {
            return Err(Status::invalid_argument(format!(
                "count 0 is out of range: expected 1 to {max}"
            )));
        }
        if count > u64::from(max) {
            return Err(Status::resource_exhausted(format!(
                "count {count} is above this service's max_batch of {max}"
            )));
        }
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// `ids` of scheme `index` as a chunk.
    fn chunk(&self, index: usize, ids: &[RawId], text: bool) -> Result<IdChunk, Status> {
        let served = &self.service.served[index];
        let width = served.info.bytes;
        let mut chunk = IdChunk {
            scheme: served.info.name.to_owned(),
            id_width: width,
            ..IdChunk::default()
        };
        if served.info.bits <= 64 {
            chunk.ids64 = ids
                .iter()
                .map(RawId::to_u64)
                .collect::<Result<_, _>>()
                .map_err(|e| Status::internal(e.to_string()))?;
        } else {
            let mut bytes = Vec::with_capacity(ids.len() * width as usize);
            for id in ids {
                bytes.extend_from_slice(id.as_bytes());
            }
            chunk.ids = bytes;
        }
        if text {
            chunk.text = ids
                .iter()
                .map(|id| served.scheme.format_raw(id))
                .collect::<Result<_, _>>()
                .map_err(|e| Status::internal(e.to_string()))?;
        }
        Ok(chunk)
    }
}

#[tonic::async_trait]
impl IdService for Door {
    async fn next(&self, request: Request<NextRequest>) -> Result<Response<NextResponse>, Status> {
        let request = request.into_inner();
        let index = self.service.find(&request.scheme)?;
        let mut one = [RawId::default()];
        self.service.issue_into(index, &mut one).await?;
        let [id] = one;
        let served = &self.service.served[index];
        let mut reply = NextResponse {
            scheme: served.info.name.to_owned(),
            ..NextResponse::default()
        };
        if served.info.bits <= 64 {
            reply.id64 = id.to_u64().map_err(|e| Status::internal(e.to_string()))?;
        } else {
            reply.id_bytes = id.as_bytes().to_vec();
        }
        if request.text {
            reply.text = served
                .scheme
                .format_raw(&id)
                .map_err(|e| Status::internal(e.to_string()))?;
        }
        Ok(Response::new(reply))
    }

    async fn batch(&self, request: Request<BatchRequest>) -> Result<Response<IdChunk>, Status> {
        let request = request.into_inner();
        let index = self.service.find(&request.scheme)?;
        let count = self.count(request.count)?;
        let ids = self.service.issue(index, count).await?;
        Ok(Response::new(self.chunk(index, &ids, request.text)?))
    }

    type StreamStream = ReceiverStream<Result<IdChunk, Status>>;

    async fn stream(
        &self,
        request: Request<StreamRequest>,
    ) -> Result<Response<Self::StreamStream>, Status> {
        let request = request.into_inner();
        let index = self.service.find(&request.scheme)?;
        let chunk_size = match request.chunk_size {
            0 => DEFAULT_CHUNK.min(self.service.max_batch),
            n => u32::try_from(self.count(u64::from(n))?).unwrap_or(u32::MAX),
        };
        // 0: until the client cancels.
        let mut left = (request.count > 0).then_some(request.count);
        // One chunk in hand at most: the next is made only once the transport took the
        // last (HTTP/2 flow control holds a slow reader's stream there).
        let (tx, rx) = mpsc::channel(1);
        let door = self.clone();
        let mut closing = self.closing.clone();
        tokio::spawn(async move {
            let ended = loop {
                let n = left.map_or(u64::from(chunk_size), |l| l.min(u64::from(chunk_size)));
                if n == 0 {
                    break Code::Ok;
                }
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                let chunk = door
                    .service
                    .issue(index, n)
                    .await
                    .map_err(Status::from)
                    .and_then(|ids| door.chunk(index, &ids, request.text));
                let failed = chunk.as_ref().err().map(Status::code);
                tokio::select! {
                    sent = tx.send(chunk) => if sent.is_err() { break Code::Cancelled },
                    // Cancelled by the client: the stream was dropped.
                    () = tx.closed() => break Code::Cancelled,
                    () = closed(&mut closing) => {
                        let _ = tx.send(Err(Status::unavailable("the server is shutting down"))).await;
                        break Code::Unavailable;
                    }
                }
                if let Some(code) = failed {
                    break code;
                }
                if let Some(l) = &mut left {
                    *l -= n as u64;
                }
            };
            door.service.grpc_calls.ended(GRPC_STREAM, ended);
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn decode(
        &self,
        request: Request<DecodeRequest>,
    ) -> Result<Response<DecodeResponse>, Status> {
        let request = request.into_inner();
        let served = &self.service.served[self.service.find(&request.scheme)?];
        let malformed = |e: idkit_core::ParseError| {
            Status::invalid_argument(format!(
                "malformed {} id {}: {e}",
                served.info.name,
                idkit_all::render::quoted(&request.id)
            ))
        };
        let decoded = served.scheme.decode_text(&request.id).map_err(malformed)?;
        let canonical = served
            .scheme
            .canonical_text(&request.id)
            .map_err(malformed)?;
        let fields: HashMap<String, String> = decoded
            .fields
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.to_string()))
            .collect();
        Ok(Response::new(DecodeResponse {
            scheme: served.info.name.to_owned(),
            id: canonical,
            timestamp_ms: decoded.timestamp_ms,
            timestamp: decoded.timestamp_rfc3339().unwrap_or_default(),
            fields,
        }))
    }

    async fn schemes(
        &self,
        _request: Request<SchemesRequest>,
    ) -> Result<Response<SchemesResponse>, Status> {
        let schemes = self
            .service
            .served
            .iter()
            .map(|s| SchemeFacts {
                name: s.info.name.to_owned(),
                aliases: s.aliases.iter().map(|a| (*a).to_owned()).collect(),
                summary: s.summary.to_owned(),
                bits: s.info.bits,
                bytes: s.info.bytes,
                string_len: s.info.string_len,
                alphabet: s.info.alphabet.name().to_owned(),
                time_precision_ms: s.info.time_precision_ms,
                coordination: s.info.coordination.to_string(),
                cap_ids_per_sec: s.info.cap_per_sec,
                time_runs_out_ms: s.info.time_runs_out_ms,
            })
            .collect();
        Ok(Response::new(SchemesResponse { schemes }))
    }

    async fn identity(
        &self,
        _request: Request<IdentityRequest>,
    ) -> Result<Response<IdentityResponse>, Status> {
        let leases = self
            .service
            .leases()
            .into_iter()
            .map(|(scheme, lease)| {
                let s = lease.status();
                LeaseStatus {
                    scheme: scheme.to_owned(),
                    worker: s.worker,
                    token: s.token,
                    state: s.state.as_str().to_owned(),
                    source: s.source,
                    namespace: s.namespace,
                    holder: s.holder,
                    high_water_mark_ms: s.mark_ms,
                    floor_ms: s.floor_ms,
                    fence_ms: s.fence_ms,
                    renewals: s.renewals,
                    failures: s.failures,
                    regrants: s.regrants,
                    last_error: s.last_error.unwrap_or_default(),
                }
            })
            .collect();
        Ok(Response::new(IdentityResponse { leases }))
    }
}

/// The gRPC services over `service`: `idkit.v1.IdService`, `grpc.health.v1.Health` and
/// reflection (v1 and v1alpha). Once `closing` turns true, open streams end and health
/// says NOT_SERVING.
///
/// With bearer tokens configured, `idkit.v1.IdService` answers UNAUTHENTICATED to a call
/// without a valid `authorization: Bearer TOKEN`; health and reflection stay open (probes
/// carry no token, and the schema is the published `.proto`).
///
/// Health: `""` and [`HEALTH_SERVICE`] are SERVING when every served scheme can issue
/// now (as `/readyz`), and each scheme's name is a service of its own that is SERVING
/// when that scheme can issue (a lost lease or a clock behind the last id make it
/// NOT_SERVING). A check asks the schemes when it comes (each issues one id, discarded: a
/// gap, never a duplicate); the watches of one name share one task that asks every 500 ms
/// while any is open and sends each change. An unknown name is NOT_FOUND.
///
/// # Panics
///
/// If the descriptor compiled into this crate does not decode (the build script writes it
/// from the `.proto` it compiled).
pub fn routes(service: &Arc<Service>, closing: watch::Receiver<bool>) -> tonic::service::Routes {
    let health = tonic_health::pb::health_server::HealthServer::new(health::Health::new(
        Arc::clone(service),
        closing.clone(),
    ));
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection()
        .build_v1()
        .expect("the checked-in descriptor decodes");
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .expect("the checked-in descriptor decodes");
    let ids = IdServiceServer::new(Door {
        service: Arc::clone(service),
        closing,
    })
    .max_decoding_message_size(MAX_REQUEST);
    let tokens = service.tokens.clone();
    let ids =
        tonic::service::interceptor::InterceptedService::new(ids, move |request: Request<()>| {
            match &tokens {
                None => Ok(request),
                Some(tokens) => {
                    let given = request
                        .metadata()
                        .get("authorization")
                        .map(tonic::metadata::MetadataValue::as_bytes);
                    if tokens.accepts(given) {
                        Ok(request)
                    } else {
                        tokens
                            .refused_grpc
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        Err(Status::unauthenticated(
                            "a valid bearer token is required: authorization: Bearer TOKEN",
                        ))
                    }
                }
            }
        });
    let ids = Counted {
        inner: ids,
        calls: Arc::clone(&service.grpc_calls),
    };
    tonic::service::Routes::new(ids)
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
}

/// The id service with each call's method, status and time to answer counted in
/// [`GrpcCalls`](crate::metrics::GrpcCalls): the status is the answer's `grpc-status`
/// header where it has one (a call refused before it began: by the token check, or with
/// an error), else OK; a stream that starts is counted by its producer when it ends.
#[derive(Debug, Clone)]
struct Counted<S> {
    inner: S,
    calls: Arc<crate::metrics::GrpcCalls>,
}

impl<S: tonic::server::NamedService> tonic::server::NamedService for Counted<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B, R> tower_service::Service<http::Request<B>> for Counted<S>
where
    S: tower_service::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future =
        std::pin::Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send + 'static>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.uri().path().rsplit('/').next();
        let method = method.and_then(|m| crate::metrics::GRPC_METHODS.iter().position(|n| *n == m));
        let (calls, started) = (Arc::clone(&self.calls), std::time::Instant::now());
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            if let Some(method) = method {
                calls.started(started.elapsed());
                let code = response
                    .headers()
                    .get("grpc-status")
                    .map_or(Code::Ok, |v| Code::from_bytes(v.as_bytes()));
                if !(method == GRPC_STREAM && code == Code::Ok) {
                    calls.ended(method, code);
                }
            }
            Ok(response)
        })
    }
}

/// Completes once `closing` turns true (or its sender is gone).
async fn closed(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|c| *c).await;
}

/// How often the gRPC door pings a connection that has been quiet, and how long it waits
/// for the answer before it closes the connection.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs the gRPC front door of `service` on `listener` until `shutdown` completes; then
/// open streams end with UNAVAILABLE, in-flight calls finish, and it returns. Logs one line
/// saying where it listens and whether TLS and a token are on (and a warning when tokens are
/// asked for without TLS).
///
/// Its connections take the same limits as [`serve`](crate::serve)'s: at most
/// `max_connections` are open at once over both doors, one more is closed as soon as it is
/// accepted, and each must finish its TLS handshake (when TLS is on) and send HTTP/2's
/// connection preface within `header_timeout_ms`, or it is closed. `/metrics` counts them
/// with the HTTP door's. A connection quiet for 60 s is pinged, and closed when the ping
/// is not answered within 20 s (its peer is gone).
///
/// # Errors
///
/// Reading the listener's address, or a transport error that ends the server.
pub async fn serve_grpc(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let (tls, tokens) = (service.tls.is_some(), service.tokens.is_some());
    tracing::info!(listen = %addr, tls, tokens, "idkit serve: gRPC (idkit.v1) on {addr}");
    service.warn_tokens_in_clear("gRPC", addr);
    let (close, closing) = watch::channel(false);
    let routes = routes(&service, closing);
    let shutdown = async move {
        shutdown.await;
        let _ = close.send(true);
    };
    // TLS, the connection cap and the opening's time limit are `incoming`'s.
    tonic::transport::Server::builder()
        // A connection idle between calls is normal for gRPC; one whose peer is gone (its
        // host lost, no FIN or RST) would hold its slot for good without a ping.
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming::admitted(listener, &service), shutdown)
        .await
        .map_err(std::io::Error::other)?;
    tracing::info!("idkit serve: gRPC stopped; in-flight calls finished");
    Ok(())
}
