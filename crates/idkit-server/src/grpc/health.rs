//! `grpc.health.v1.Health` over the service's readiness. A check asks the schemes when it
//! comes, as `/readyz` does; a watch asks them every [`WATCH_PERIOD`] while it is open and
//! sends each change. Nothing runs while nobody asks.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;
use tokio_stream::{Stream, StreamExt as _};
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::{HEALTH_SERVICE, closed};
use crate::Service;

/// How often an open watch asks the schemes again.
const WATCH_PERIOD: Duration = Duration::from_millis(500);

/// The health service: `""` and [`HEALTH_SERVICE`] stand for every served scheme, and each
/// scheme's name for itself; all are NOT_SERVING once `closing` turns true.
#[derive(Debug, Clone)]
pub(super) struct Health {
    pub(super) service: Arc<Service>,
    pub(super) closing: watch::Receiver<bool>,
}

/// What a health service name stands for.
#[derive(Debug, Clone, Copy)]
enum Target {
    Every,
    Scheme(usize),
}

impl Health {
    fn target(&self, name: &str) -> Result<Target, Status> {
        if name.is_empty() || name == HEALTH_SERVICE {
            return Ok(Target::Every);
        }
        let names = self.service.scheme_names();
        match names.iter().position(|n| *n == name) {
            Some(index) => Ok(Target::Scheme(index)),
            None => Err(Status::not_found(format!(
                "unknown health service {}: expected \"\", {HEALTH_SERVICE} or a served \
                 scheme ({})",
                idkit_all::render::quoted(name),
                names.join(", ")
            ))),
        }
    }

    /// The target's status now: NOT_SERVING while draining, else whether it can issue.
    async fn status(&self, target: Target) -> ServingStatus {
        if *self.closing.borrow() {
            return ServingStatus::NotServing;
        }
        let ready = match target {
            Target::Every => self.service.readiness().await.is_empty(),
            Target::Scheme(index) => self.service.probe(index).await.is_ok(),
        };
        if ready {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        }
    }
}

fn response(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status.into(),
    }
}

#[tonic::async_trait]
impl tonic_health::pb::health_server::Health for Health {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let target = self.target(&request.get_ref().service)?;
        Ok(Response::new(response(self.status(target).await)))
    }

    type WatchStream = Pin<Box<dyn Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

    /// The status now, then each change, until the client drops the stream; at shutdown,
    /// NOT_SERVING and the end of the stream.
    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let target = self.target(&request.get_ref().service)?;
        let (tx, rx) = watch::channel(self.status(target).await);
        let health = self.clone();
        tokio::spawn(async move {
            let mut closing = health.closing.clone();
            loop {
                tokio::select! {
                    () = tokio::time::sleep(WATCH_PERIOD) => {}
                    () = tx.closed() => return,
                    () = closed(&mut closing) => {
                        // The stream ends once this is read (the sender is dropped).
                        tx.send_if_modified(|last| {
                            std::mem::replace(last, ServingStatus::NotServing)
                                != ServingStatus::NotServing
                        });
                        return;
                    }
                }
                let now = health.status(target).await;
                tx.send_if_modified(|last| std::mem::replace(last, now) != now);
            }
        });
        Ok(Response::new(Box::pin(
            WatchStream::new(rx).map(|status| Ok(response(status))),
        )))
    }
}
