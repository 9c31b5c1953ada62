//! The cost of HTTP alone, for `scripts/load.sh`: a minimal axum handler that returns an
//! atomic counter, on the same runtime settings as `idkit serve`.
//!
//! `bare_http 127.0.0.1:18081 [WORKERS]` serves `GET /` until killed (WORKERS: runtime
//! worker threads, default one per core, as `idkit serve --workers`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::routing::get;

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18081".to_owned());
    let workers: Option<usize> = std::env::args().nth(2).and_then(|w| w.parse().ok());
    let counter = Arc::new(AtomicU64::new(0));
    let app = Router::new()
        .route(
            "/",
            get(|State(c): State<Arc<AtomicU64>>| async move {
                (c.fetch_add(1, Ordering::Relaxed) + 1).to_string() + "\n"
            }),
        )
        .with_state(counter);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder.enable_all().build()?.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("bare_http: listening on http://{addr}");
        axum::serve(listener, app).await
    })
}
