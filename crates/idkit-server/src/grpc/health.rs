//! `grpc.health.v1.Health` over the service's readiness. A check asks the schemes when it
//! comes, as `/readyz` does. Watches of one name share one task that asks every
//! [`WATCH_PERIOD`] while any of them is open and sends each change to all. Nothing runs
//! while nobody asks.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
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
    service: Arc<Service>,
    closing: watch::Receiver<bool>,
    /// The status of each watched name, kept by its task while anyone watches it.
    watched: Arc<Mutex<HashMap<Target, Arc<watch::Sender<ServingStatus>>>>>,
}

/// What a health service name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Every,
    Scheme(usize),
}

impl Health {
    pub(super) fn new(service: Arc<Service>, closing: watch::Receiver<bool>) -> Self {
        Self {
            service,
            closing,
            watched: Arc::default(),
        }
    }

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

    fn watched(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<Target, Arc<watch::Sender<ServingStatus>>>> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The statuses of `target` from the task that already follows it, if one does.
    fn subscribe(&self, target: Target) -> Option<watch::Receiver<ServingStatus>> {
        self.watched().get(&target).map(|tx| tx.subscribe())
    }

    /// The statuses of `target`, `first` and then each change: from the task that follows
    /// it, started here unless another watch started one meanwhile. While draining, `first`
    /// and the end.
    fn follow(&self, target: Target, first: ServingStatus) -> watch::Receiver<ServingStatus> {
        let (tx, rx) = watch::channel(first);
        if *self.closing.borrow() {
            // The sender dropped here: the stream ends once `first` is read.
            return rx;
        }
        let mut watched = self.watched();
        if let Some(tx) = watched.get(&target) {
            return tx.subscribe();
        }
        let tx = Arc::new(tx);
        watched.insert(target, Arc::clone(&tx));
        tokio::spawn(self.clone().ask(target, tx));
        rx
    }

    /// The task that follows `target`: asks every [`WATCH_PERIOD`] and sends each change,
    /// until nobody watches or the server drains (then it sends NOT_SERVING). Its sender is
    /// forgotten as it ends, so that the streams end too.
    async fn ask(self, target: Target, tx: Arc<watch::Sender<ServingStatus>>) {
        let mut closing = self.closing.clone();
        let set = |now: ServingStatus| {
            tx.send_if_modified(|last| std::mem::replace(last, now) != now);
        };
        loop {
            tokio::select! {
                () = tokio::time::sleep(WATCH_PERIOD) => {}
                () = tx.closed() => {}
                () = closed(&mut closing) => {
                    set(ServingStatus::NotServing);
                    self.watched().remove(&target);
                    return;
                }
            }
            {
                // A watch that subscribes does so under this lock: none is missed.
                let mut watched = self.watched();
                if tx.receiver_count() == 0 {
                    watched.remove(&target);
                    return;
                }
            }
            set(self.status(target).await);
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
        let statuses = match self.subscribe(target) {
            Some(statuses) => statuses,
            None => self.follow(target, self.status(target).await),
        };
        Ok(Response::new(Box::pin(
            WatchStream::new(statuses).map(|status| Ok(response(status))),
        )))
    }
}
