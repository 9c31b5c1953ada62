//! The cost of HTTP alone, for `scripts/load.sh`: a minimal axum handler that returns an
//! atomic counter, on the same runtime settings as `idkit serve`.
//!
//! `bare_http 127.0.0.1:18081` serves `GET /` until killed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::routing::get;

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18081".to_owned());
    let counter = Arc::new(AtomicU64::new(0));
    let app = Router::new()
        .route(
            "/",
            get(|State(c): State<Arc<AtomicU64>>| async move {
                (c.fetch_add(1, Ordering::Relaxed) + 1).to_string() + "\n"
            }),
        )
        .with_state(counter);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            eprintln!("bare_http: listening on http://{addr}");
            axum::serve(listener, app).await
        })
}
