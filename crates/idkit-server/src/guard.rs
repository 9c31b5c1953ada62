//! The layer in front of every route: refuses oversized requests and records each answer's
//! latency and status in the service's metrics.
//!
//! Written as a plain tower layer rather than `axum::middleware::from_fn`, which clones the
//! inner service and boxes two futures per request: on a single-id request that was about a
//! tenth of the server's time.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;

use std::sync::atomic::Ordering::Relaxed;

use crate::metrics::Requests;
use crate::security::{OPEN_PATHS, Tokens};
use crate::{ApiError, MAX_BODY, MAX_URI};

/// Wraps every route in a [`Guard`].
#[derive(Debug, Clone)]
pub(crate) struct GuardLayer {
    pub requests: Arc<Requests>,
    pub tokens: Option<Arc<Tokens>>,
}

impl<S> tower_layer::Layer<S> for GuardLayer {
    type Service = Guard<S>;

    fn layer(&self, inner: S) -> Guard<S> {
        Guard {
            inner,
            requests: Arc::clone(&self.requests),
            tokens: self.tokens.clone(),
        }
    }
}

/// One route behind the size checks and the latency record.
#[derive(Debug, Clone)]
pub(crate) struct Guard<S> {
    inner: S,
    requests: Arc<Requests>,
    tokens: Option<Arc<Tokens>>,
}

/// The answer for a request without a valid bearer token, when tokens are configured
/// and the path is not one of the open ones.
fn unauthenticated(request: &Request, tokens: &Tokens) -> Option<Response> {
    let path = request.uri().path();
    if OPEN_PATHS.iter().any(|open| path.ends_with(open)) {
        return None;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(axum::http::HeaderValue::as_bytes);
    if tokens.accepts(given) {
        return None;
    }
    tokens.refused_http.fetch_add(1, Relaxed);
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({
            "error": "a valid bearer token is required: Authorization: Bearer TOKEN"
        })),
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer"),
    );
    Some(response)
}

/// The answer for a request that is too large, if it is.
fn refusal(request: &Request) -> Option<Response> {
    let uri_len = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if uri_len > MAX_URI {
        return Some(
            ApiError::TooLarge(
                StatusCode::URI_TOO_LONG,
                format!("request target of {uri_len} bytes: at most {MAX_URI}"),
            )
            .into_response(),
        );
    }
    let headers = request.headers();
    let body_len = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if body_len.is_some_and(|n| n > MAX_BODY) || headers.contains_key(header::TRANSFER_ENCODING) {
        return Some(
            ApiError::TooLarge(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body too large: no route takes more than {MAX_BODY} bytes"),
            )
            .into_response(),
        );
    }
    None
}

/// Every error in one shape: an error answer that is not JSON (one the framework made: a
/// method not allowed, an extractor's rejection) becomes `{"error": "..."}` with its status's
/// reason, keeping its status and its `Allow` header.
fn json_error(response: Response) -> Response {
    let status = response.status();
    // Most answers are successes: no header lookup for them.
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let reason = status.canonical_reason().unwrap_or("error").to_lowercase();
    let mut json = (status, axum::Json(serde_json::json!({ "error": reason }))).into_response();
    if let Some(allow) = response.headers().get(header::ALLOW) {
        json.headers_mut().insert(header::ALLOW, allow.clone());
    }
    json
}

impl<S> tower_service::Service<Request> for Guard<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = GuardFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let started = Instant::now();
        let refused = refusal(&request).or_else(|| {
            self.tokens
                .as_deref()
                .and_then(|tokens| unauthenticated(&request, tokens))
        });
        let state = match refused {
            Some(response) => State::Refused {
                response: Some(response),
            },
            None => State::Inner {
                future: self.inner.call(request),
            },
        };
        GuardFuture {
            state,
            started,
            requests: Arc::clone(&self.requests),
        }
    }
}

pin_project! {
    #[project = StateProj]
    #[derive(Debug)]
    enum State<F> {
        Inner { #[pin] future: F },
        Refused { response: Option<Response> },
    }
}

pin_project! {
    /// The route's answer, recorded when it is ready.
    #[derive(Debug)]
    pub(crate) struct GuardFuture<F> {
        #[pin]
        state: State<F>,
        started: Instant,
        requests: Arc<Requests>,
    }
}

impl<F> Future for GuardFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.state.project() {
            StateProj::Inner { future } => match future.poll(cx) {
                Poll::Ready(Ok(response)) => response,
                Poll::Ready(Err(never)) => match never {},
                Poll::Pending => return Poll::Pending,
            },
            // Polled again after it answered (a caller's bug): answer 500, record nothing.
            StateProj::Refused { response } => match response.take() {
                Some(response) => response,
                None => return Poll::Ready(Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response())),
            },
        };
        let response = json_error(response);
        this.requests
            .observe(this.started.elapsed(), response.status().as_u16());
        Poll::Ready(Ok(response))
    }
}
