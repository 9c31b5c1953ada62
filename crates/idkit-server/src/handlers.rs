//! The route handlers: ids, decoding, scheme facts, health and readiness.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::rejection::{PathRejection, RawPathParamsRejection};
use axum::extract::{Path, RawPathParams, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use idkit_core::RawId;

use crate::*;

/// Whether the client asked for JSON (`Accept: application/json`), read from the request
/// without copying its headers.
pub(crate) struct WantsJson(bool);

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

pub(crate) fn text(body: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

/// A query-string component decoded as HTML forms encode it (`+` is a space, `%XX` a
/// byte), as any HTTP server reads a query; `None` when an escape is malformed or the bytes
/// are not UTF-8.
fn form_decode(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !s.contains(['%', '+']) {
        return Some(std::borrow::Cow::Borrowed(s));
    }
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |b: Option<u8>| char::from(b?).to_digit(16);
                let (hi, lo) = (hex(bytes.next())?, hex(bytes.next())?);
                // Two hex digits: at most 255.
                out.push(u8::try_from(hi * 16 + lo).ok()?);
            }
            _ => out.push(b),
        }
    }
    String::from_utf8(out).ok().map(std::borrow::Cow::Owned)
}

/// `count` from the query: absent means one id. Keys and values are percent-decoded; any
/// other key is refused, so that a misspelt `?n=5` does not quietly give one id.
pub(crate) fn parse_count(query: Option<&str>, max: u32) -> Result<Option<usize>, ApiError> {
    let mut count = None;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let malformed = |part: &str| {
            ApiError::BadRequest(format!(
                "malformed query {part:?}: a percent escape is not two hex digits or the text is not UTF-8"
            ))
        };
        let key = form_decode(key).ok_or_else(|| malformed(key))?;
        if key != "count" {
            return Err(ApiError::BadRequest(format!(
                "unknown query parameter {key:?}: this route takes only count, 1 to {max}"
            )));
        }
        let value = &*form_decode(value).ok_or_else(|| malformed(value))?;
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

pub(crate) async fn next(
    State(service): State<Arc<Service>>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    RawQuery(query): RawQuery,
    WantsJson(json_out): WantsJson,
) -> Result<Response, ApiError> {
    let params = params.map_err(|r| ApiError::BadRequest(r.body_text()))?;
    // The name as sent, not percent-decoded: no scheme name needs escaping.
    let name = params.iter().next().map_or("", |(_, v)| v);
    let index = service.find(name)?;
    let served = &service.served[index];
    let scheme = served.info.name;
    let count = parse_count(query.as_deref(), service.max_batch)?;
    let mut one = [RawId::default()];
    let many;
    let ids: &[RawId] = match count {
        None => {
            service.issue_into(index, &mut one).await?;
            &one
        }
        Some(n) => {
            many = service.issue(index, n).await?;
            &many
        }
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
        return Ok(fresh(axum::Json(body).into_response()));
    }
    let width = usize::try_from(served.info.string_len).unwrap_or(0) + 1;
    let mut body = String::with_capacity(ids.len() * width);
    for id in ids {
        served
            .scheme
            .format_raw_into(id, &mut body)
            .map_err(format_error(scheme))?;
        body.push('\n');
    }
    Ok(fresh(text(body)))
}

/// Marks new ids as never to be stored by a cache (`Cache-Control: no-store`, RFC 9111
/// section 5.2.2.5): a 200 to a GET may otherwise be cached heuristically (section 4.2.2),
/// and a proxy or browser cache that answered a second client from it would hand out the
/// same ids twice.
fn fresh(mut response: Response) -> Response {
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    response
}

pub(crate) async fn decode(
    State(service): State<Arc<Service>>,
    path: Result<Path<(String, String)>, PathRejection>,
    WantsJson(json_out): WantsJson,
) -> Result<Response, ApiError> {
    let Path((name, id)) = path.map_err(|r| ApiError::BadRequest(r.body_text()))?;
    let served = &service.served[service.find(&name)?];
    let malformed = |e| {
        ApiError::BadRequest(format!(
            "malformed {} id {}: {e}",
            served.info.name,
            render::quoted(&id)
        ))
    };
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

pub(crate) async fn schemes(
    State(service): State<Arc<Service>>,
    WantsJson(json_out): WantsJson,
) -> Response {
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

pub(crate) async fn healthz() -> Response {
    text("ok\n".to_owned())
}

/// Ready when every served scheme issues an id now (the probe ids are discarded: a gap,
/// never a duplicate).
pub(crate) async fn readyz(
    State(service): State<Arc<Service>>,
    WantsJson(json_out): WantsJson,
) -> Response {
    let failing = service.readiness().await;
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

pub(crate) async fn not_found(request: Request) -> ApiError {
    ApiError::NotFound(request.uri().path().to_owned())
}

/// `GET /v1/identity`: each served scheme's worker id and lease (text, or JSON on request).
pub(crate) async fn identity_status(
    State(service): State<Arc<Service>>,
    WantsJson(json_out): WantsJson,
) -> Response {
    let leases = service.leases();
    if json_out {
        let list: Vec<Value> = leases
            .iter()
            .map(|(name, lease)| {
                let s = lease.status();
                json!({
                    "scheme": name,
                    "worker": s.worker,
                    "token": s.token,
                    "state": s.state.as_str(),
                    "source": s.source,
                    "namespace": s.namespace,
                    "holder": s.holder,
                    "high_water_mark_ms": s.mark_ms,
                    "floor_ms": s.floor_ms,
                    "fence_ms": s.fence_ms,
                    "now_ms": s.now_ms,
                    "renewals": s.renewals,
                    "failures": s.failures,
                    "regrants": s.regrants,
                    "last_error": s.last_error,
                })
            })
            .collect();
        return axum::Json(json!({ "leases": list })).into_response();
    }
    let mut out = String::new();
    if leases.is_empty() {
        out.push_str("no served scheme holds a worker-id lease\n");
    }
    for (name, lease) in leases {
        let s = lease.status();
        let _ = writeln!(
            out,
            "{name}: worker {} token {} {} from {} (renewals {}, failures {}, high-water mark {} ms)",
            s.worker,
            s.token,
            s.state.as_str(),
            s.source,
            s.renewals,
            s.failures,
            s.mark_ms
        );
    }
    text(out)
}
