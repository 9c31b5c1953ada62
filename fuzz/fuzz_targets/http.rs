//! The HTTP front door's request parsing: the path (scheme names, ids to decode), the query
//! string (`count`, `format` and the rest), headers and body, through the service's axum
//! router as `idkit serve` mounts it.
//!
//! The input's first line is `METHOD TARGET`; the rest is the body. No request makes the
//! service fail inside (500) or panic, and every JSON answer is valid JSON (but the answer to
//! `HEAD`, which has the headers of a `GET` and no body).
#![no_main]

mod service;

use axum::body::Body;
use http::{Method, Request, StatusCode, header};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

fuzz_target!(|data: &[u8]| {
    let (head, body) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let (method, target) = head.split_once(' ').unwrap_or(("GET", &head));
    let Ok(method) = Method::from_bytes(method.as_bytes()) else {
        return;
    };
    let head_only = method == Method::HEAD;
    let Ok(request) = Request::builder()
        .method(method)
        .uri(target)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_vec()))
    else {
        return;
    };
    let router = service::service().router();
    service::runtime().block_on(async {
        let response = router.oneshot(request).await.expect("the router answers");
        let status = response.status();
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{target}");
        let json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body");
        if json && !head_only {
            serde_json::from_slice::<serde_json::Value>(&body).expect("valid JSON");
        }
    });
});
