//! [`ApiError`]: a request's typed failure, always answered as JSON.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A typed failure of a request; always answered as JSON.
#[derive(Debug)]
pub(crate) enum ApiError {
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
                json!({ "error": not_served(&name, &known), "known": known }),
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

/// What both front doors say of a scheme name this service does not serve: a scheme of the
/// registry that this service was not configured with is "not served here", any other name
/// unknown; either way, with the names it does serve.
pub(crate) fn not_served(name: &str, known: &[&str]) -> String {
    let known = known.join(", ");
    let quoted = idkit_all::render::quoted(name);
    match idkit_all::registry::find(name) {
        Ok(entry) if entry.name() == name => {
            format!("scheme {quoted} is not served here: expected one of {known}")
        }
        Ok(entry) => format!(
            "scheme {quoted} ({}) is not served here: expected one of {known}",
            entry.name()
        ),
        Err(_) => format!("unknown scheme {quoted}: expected one of {known}"),
    }
}

/// The error for a stored id the scheme's codec cannot format (not reachable for ids the
/// scheme itself issued).
pub(crate) fn format_error(scheme: &'static str) -> impl Fn(idkit_core::ParseError) -> ApiError {
    move |e| ApiError::Unavailable {
        scheme,
        reason: e.to_string(),
    }
}
