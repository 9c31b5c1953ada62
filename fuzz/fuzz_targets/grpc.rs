//! The gRPC front door's message parsing: any bytes as the request message of each unary
//! method of `idkit.v1.IdService` (`Next`, `Batch`, `Decode`, `Schemes`, `Identity`), in one
//! gRPC frame, through the service's tonic routes.
//!
//! The input's first byte picks the method; the rest is the message. Every call answers with
//! a gRPC status and nothing panics. A message that decodes is never answered INTERNAL or
//! UNKNOWN (a failure inside); one that does not is answered INTERNAL, as tonic (and
//! grpc-go) answer a request they cannot unmarshal.
#![no_main]

mod service;

use std::sync::OnceLock;

use axum::body::Body;
use http::{Request, header};
use idkit_server::grpc::proto::{
    BatchRequest, DecodeRequest, IdentityRequest, NextRequest, SchemesRequest,
};
use libfuzzer_sys::fuzz_target;
use prost::Message;
use tower::ServiceExt;

const METHODS: [&str; 5] = ["Next", "Batch", "Decode", "Schemes", "Identity"];

fn routes() -> axum::Router {
    static CLOSING: OnceLock<tokio::sync::watch::Sender<bool>> = OnceLock::new();
    let closing = CLOSING.get_or_init(|| tokio::sync::watch::channel(false).0);
    idkit_server::grpc::routes(service::service(), closing.subscribe()).into_axum_router()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, message)) = data.split_first() else {
        return;
    };
    let method = METHODS[usize::from(pick) % METHODS.len()];
    let decodes = match method {
        "Next" => NextRequest::decode(message).is_ok(),
        "Batch" => BatchRequest::decode(message).is_ok(),
        "Decode" => DecodeRequest::decode(message).is_ok(),
        "Schemes" => SchemesRequest::decode(message).is_ok(),
        _ => IdentityRequest::decode(message).is_ok(),
    };
    let Ok(len) = u32::try_from(message.len()) else {
        return;
    };
    let mut frame = vec![0];
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(message);
    let request = Request::post(format!("/idkit.v1.IdService/{method}"))
        .header(header::CONTENT_TYPE, "application/grpc")
        .header("te", "trailers")
        .body(Body::from(frame))
        .expect("a request");
    service::runtime().block_on(async {
        let response = routes().oneshot(request).await.expect("the routes answer");
        assert_eq!(response.status(), http::StatusCode::OK, "{method}");
        // A trailers-only answer carries its status in the headers; the others in trailers.
        let status = |v: &http::HeaderValue| {
            let code = v.to_str().unwrap_or("");
            assert_ne!(code, "2", "{method}: UNKNOWN");
            assert!(
                code != "13" || !decodes,
                "{method}: INTERNAL for a message that decodes"
            );
        };
        if let Some(v) = response.headers().get("grpc-status") {
            status(v);
        }
        let body = response.into_body();
        let collected = http_body_util::BodyExt::collect(body)
            .await
            .expect("the body");
        if let Some(v) = collected.trailers().and_then(|t| t.get("grpc-status")) {
            status(v);
        }
    });
});
