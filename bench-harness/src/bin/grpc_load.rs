//! A gRPC load client for `scripts/grpc-load.sh`: drives `idkit serve --grpc-listen` (its
//! unary, batch and streaming calls) or `ferroid-tonic-server` (its one streaming call) from
//! `--connections` HTTP/2 connections for `--seconds`, and prints one line:
//!
//! ```text
//! GRPC_LOAD target=idkit mode=stream calls=12 ids=48000000 seconds=5.001 p50_us=... p99_us=...
//! ```
//!
//! Latencies are per call (for a stream: the whole stream). Every id is counted from the
//! answers, not from what was asked for.

use std::time::{Duration, Instant};

use clap::Parser;
use idkit_server::grpc::proto::id_service_client::IdServiceClient;
use idkit_server::grpc::proto::{BatchRequest, NextRequest, StreamRequest};
use tonic::transport::Channel;

#[derive(Parser, Debug)]
struct Args {
    /// `idkit` or `ferroid`.
    #[arg(long)]
    target: String,
    /// The server, `host:port`.
    #[arg(long)]
    addr: String,
    /// `unary`, `batch` or `stream` (ferroid: `stream` only).
    #[arg(long)]
    mode: String,
    /// idkit's scheme.
    #[arg(long, default_value = "snowflake-twitter")]
    scheme: String,
    /// Ids per batch call, and per stream chunk.
    #[arg(long, default_value_t = 1_000)]
    batch: u32,
    /// Ids per stream call.
    #[arg(long, default_value_t = 1_000_000)]
    stream_ids: u64,
    /// Connections, one client task each.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
}

/// `ferroid.IdGenerator/StreamIds`: a count in, chunks of packed little-endian ids out.
#[derive(Clone, PartialEq, prost::Message)]
struct PeerRequest {
    #[prost(uint64, tag = "1")]
    count: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PeerChunk {
    #[prost(bytes = "vec", tag = "1")]
    packed_ids: Vec<u8>,
}

/// One call; the ids it brought back.
async fn call(args: &Args, channel: &Channel) -> Result<u64, tonic::Status> {
    match (args.target.as_str(), args.mode.as_str()) {
        ("idkit", "unary") => {
            let mut client = IdServiceClient::new(channel.clone());
            let reply = client
                .next(NextRequest {
                    scheme: args.scheme.clone(),
                    text: false,
                })
                .await?;
            Ok(u64::from(reply.into_inner().id64 != 0))
        }
        ("idkit", "batch") => {
            let mut client = IdServiceClient::new(channel.clone());
            let reply = client
                .batch(BatchRequest {
                    scheme: args.scheme.clone(),
                    count: u64::from(args.batch),
                    text: false,
                })
                .await?
                .into_inner();
            Ok(reply.ids64.len() as u64 + reply.ids.len() as u64 / 16)
        }
        ("idkit", "stream") => {
            let mut client =
                IdServiceClient::new(channel.clone()).max_decoding_message_size(64 << 20);
            let mut stream = client
                .stream(StreamRequest {
                    scheme: args.scheme.clone(),
                    count: args.stream_ids,
                    chunk_size: args.batch,
                    text: false,
                })
                .await?
                .into_inner();
            let mut ids = 0;
            while let Some(chunk) = stream.message().await? {
                ids += chunk.ids64.len() as u64 + chunk.ids.len() as u64 / 16;
            }
            Ok(ids)
        }
        ("ferroid", "stream") => {
            let mut grpc = tonic::client::Grpc::new(channel.clone());
            grpc.ready()
                .await
                .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
            let mut stream = grpc
                .server_streaming::<PeerRequest, PeerChunk, _>(
                    tonic::Request::new(PeerRequest {
                        count: args.stream_ids,
                    }),
                    "/ferroid.IdGenerator/StreamIds".parse().expect("a path"),
                    tonic_prost::ProstCodec::default(),
                )
                .await?
                .into_inner();
            let mut ids = 0;
            while let Some(chunk) = stream.message().await? {
                ids += chunk.packed_ids.len() as u64 / 8;
            }
            Ok(ids)
        }
        (target, mode) => Err(tonic::Status::invalid_argument(format!(
            "no {mode} calls for {target}"
        ))),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = std::sync::Arc::new(Args::parse());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let until = Instant::now() + Duration::from_secs_f64(args.seconds);
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..args.connections {
            let channel = Channel::from_shared(format!("http://{}", args.addr))?
                .connect()
                .await?;
            let args = std::sync::Arc::clone(&args);
            tasks.push(tokio::spawn(async move {
                let (mut ids, mut latencies, mut errors) = (0u64, Vec::new(), 0u64);
                while Instant::now() < until {
                    let t = Instant::now();
                    match call(&args, &channel).await {
                        Ok(n) => {
                            ids += n;
                            latencies.push(t.elapsed());
                        }
                        Err(e) => {
                            errors += 1;
                            if errors == 1 {
                                eprintln!("grpc_load: {e}");
                            }
                        }
                    }
                }
                (ids, latencies, errors)
            }));
        }
        let (mut ids, mut latencies, mut errors) = (0, Vec::new(), 0);
        for task in tasks {
            let (n, l, e) = task.await?;
            ids += n;
            latencies.extend(l);
            errors += e;
        }
        let seconds = started.elapsed().as_secs_f64();
        latencies.sort_unstable();
        println!(
            "GRPC_LOAD target={} mode={} calls={} ids={ids} seconds={seconds:.3} errors={errors} p50_us={:.0} p99_us={:.0}",
            args.target,
            args.mode,
            latencies.len(),
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.99)
        );
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
