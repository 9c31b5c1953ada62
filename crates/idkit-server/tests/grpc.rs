//! The gRPC front door end to end over loopback, driven by the generated tonic client:
//! every call, streams checked for order and uniqueness, a slow reader, a cancelled
//! stream, a deadline, hostile input, health following readiness, reflection, and both
//! front doors over one service (the HTTP metrics count what gRPC issued).

use std::sync::Arc;
use std::time::Duration;

use idkit_core::ManualClock;
use idkit_server::Service;
use idkit_server::grpc::proto::id_service_client::IdServiceClient;
use idkit_server::grpc::proto::{
    BatchRequest, DecodeRequest, IdChunk, IdentityRequest, NextRequest, SchemesRequest,
    StreamRequest,
};
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus::{self, NotServing, Serving};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

mod common;

use common::{Doors, configured, on_clock};

/// Both front doors of one service, with a gRPC channel open to one.
struct Running {
    doors: Doors,
    grpc: Channel,
}

impl Running {
    async fn start(service: Service) -> Self {
        let doors = Doors::open(service).await;
        let grpc = Channel::from_shared(format!("http://{}", doors.grpc))
            .unwrap()
            .connect()
            .await
            .unwrap();
        Self { doors, grpc }
    }

    /// A client whose receive window is HTTP/2's default 64 KiB (hyper's client asks
    /// for 2 MiB).
    async fn small_window_client(&self) -> IdServiceClient<Channel> {
        let channel = Channel::from_shared(format!("http://{}", self.doors.grpc))
            .unwrap()
            .initial_stream_window_size(65_535)
            .initial_connection_window_size(65_535)
            .connect()
            .await
            .unwrap();
        IdServiceClient::new(channel)
    }

    fn client(&self) -> IdServiceClient<Channel> {
        IdServiceClient::new(self.grpc.clone()).max_decoding_message_size(64 << 20)
    }

    /// Ids issued so far, per the HTTP door's metrics.
    async fn issued(&self, scheme: &str) -> u64 {
        self.metric(&format!("idkit_ids_issued_total{{scheme=\"{scheme}\"}}"))
            .await
    }

    /// The text of `/metrics` (asked again for up to 5 s while the HTTP door refuses the
    /// connection: every slot may be taken).
    async fn metrics(&self) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match reqwest::get(format!("http://{}/metrics", self.doors.http)).await {
                Ok(reply) => {
                    let text = reply.text().await.unwrap();
                    common::promtool_check(&text);
                    return text;
                }
                Err(e) if std::time::Instant::now() > deadline => panic!("{e}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    /// The value of one series of `/metrics`: its name and labels.
    async fn metric(&self, series: &str) -> u64 {
        let text = self.metrics().await;
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in {text}"))
            .parse()
            .unwrap()
    }

    /// Asks the health service about `service` until it answers `want`, every 100 ms for up
    /// to 10 s; whether it did.
    async fn health_becomes(&self, service: &str, want: ServingStatus) -> bool {
        let mut health = HealthClient::new(self.grpc.clone());
        for _ in 0..100 {
            let request = HealthCheckRequest {
                service: service.to_owned(),
            };
            if health.check(request).await.unwrap().into_inner().status == want as i32 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    async fn stop(self) {
        self.doors.stop().await;
    }
}

/// Waits for a stop begun with `tokio::spawn(s.stop())`: the server must stop within 10 s.
async fn stopped(stopping: tokio::task::JoinHandle<()>) {
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the server did not stop")
        .unwrap();
}

/// A request for one id of `scheme`, with or without its text.
fn next_request(scheme: &str, text: bool) -> NextRequest {
    NextRequest {
        scheme: scheme.into(),
        text,
    }
}

/// A request for `count` ids of `scheme` in one answer.
fn batch_request(scheme: &str, count: u64, text: bool) -> BatchRequest {
    BatchRequest {
        scheme: scheme.into(),
        count,
        text,
    }
}

/// A stream of `count` ids of `scheme` (0: until the client cancels) in chunks of
/// `chunk_size` (0: the default), without their text.
fn stream_request(scheme: &str, count: u64, chunk_size: u32) -> StreamRequest {
    StreamRequest {
        scheme: scheme.into(),
        count,
        chunk_size,
        text: false,
    }
}

/// A stream of `scheme` until the client cancels, in chunks of `chunk_size` (0: the
/// default), opened on `c`, and its first chunk.
async fn endless_stream(
    c: &mut IdServiceClient<Channel>,
    scheme: &str,
    chunk_size: u32,
) -> (tonic::Streaming<IdChunk>, IdChunk) {
    let mut stream = c
        .stream(stream_request(scheme, 0, chunk_size))
        .await
        .unwrap()
        .into_inner();
    let first = stream.message().await.unwrap().unwrap();
    (stream, first)
}

fn default_service() -> Service {
    configured(
        "schemes = [\"snowflake-twitter\", \"uuid-v7\", \"ksuid\", \"objectid\", \"sonyflake\"]\n\
         worker = 3\ndatacenter = 1\nmachine = 7\nmax_batch = 100000",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_answers() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();

    // One id, 64-bit: a fixed64 and its decimal text.
    let one = c
        .next(next_request("twitter", true))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(one.scheme, "snowflake-twitter");
    assert!(one.id_bytes.is_empty());
    assert_eq!(one.text, one.id64.to_string());
    // Twitter's layout: sequence in the low 12 bits, the worker id in the 5 above.
    assert_eq!((one.id64 >> 12) & 0x1f, 3);

    // One id, 128-bit: 16 bytes, version 7, the same as its canonical text.
    let v7 = c
        .next(next_request("uuid-v7", true))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(v7.id_bytes.len(), 16);
    assert_eq!(v7.id_bytes[6] >> 4, 7, "version nibble");
    let hex: String = v7.id_bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(v7.text.replace('-', ""), hex);

    // A batch of wider ids: packed, in order.
    let batch = c
        .batch(batch_request("ksuid", 50, true))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(batch.id_width, 20);
    assert_eq!(batch.ids.len(), 50 * 20);
    assert_eq!(batch.text.len(), 50);
    let objectids = c
        .batch(batch_request("objectid", 1000, false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(objectids.id_width, 12);
    let ids: Vec<&[u8]> = objectids.ids.chunks(12).collect();
    assert_eq!(ids.len(), 1000);
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ObjectIds out of order"
    );
    assert!(objectids.text.is_empty());

    // Decode: the same fields as `idkit decode`.
    let d = c
        .decode(DecodeRequest {
            scheme: "snowflake-twitter".into(),
            id: one.id64.to_string(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(d.id, one.id64.to_string());
    assert_eq!(d.fields["worker"], "3");
    assert_eq!(d.fields["datacenter"], "1");
    assert!(d.timestamp_ms.is_some());
    assert!(d.timestamp.ends_with('Z'));

    // The served schemes and their facts.
    let schemes = c.schemes(SchemesRequest {}).await.unwrap().into_inner();
    let names: Vec<&str> = schemes.schemes.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "snowflake-twitter",
            "uuid-v7",
            "ksuid",
            "objectid",
            "sonyflake"
        ]
    );
    assert_eq!(schemes.schemes[0].cap_ids_per_sec, Some(4_096_000));
    assert_eq!(schemes.schemes[1].bits, 128);

    // Identity: a static worker id, guarded by its state file, as `GET /v1/identity`.
    let identity = c.identity(IdentityRequest {}).await.unwrap().into_inner();
    let twitter = identity
        .leases
        .iter()
        .find(|l| l.scheme == "snowflake-twitter")
        .expect("the Twitter layout's identity");
    // The identity is the layout's whole 10-bit worker id: datacenter 1, worker 3.
    assert_eq!(twitter.worker, (1 << 5) | 3);
    assert_eq!(twitter.state, "held");

    // Both doors count into one service's metrics.
    assert_eq!(s.issued("snowflake-twitter").await, 1);
    assert_eq!(s.issued("objectid").await, 1000);
    s.stop().await;
}

/// Reads a whole stream; checks every chunk's shape.
async fn read_stream(c: &mut IdServiceClient<Channel>, request: StreamRequest) -> Vec<u64> {
    let mut stream = c.stream(request).await.unwrap().into_inner();
    let mut ids = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        assert_eq!(chunk.id_width, 8);
        ids.extend(chunk.ids64);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_of_one_to_a_million_ids_are_ordered_and_unique() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();
    for (count, chunk_size) in [
        (1, 0),
        (999, 100),
        (1_000, 0),
        (12_345, 1_000),
        (1_000_000, 10_000),
    ] {
        let ids = read_stream(
            &mut c,
            stream_request("snowflake-twitter", count, chunk_size),
        )
        .await;
        assert_eq!(ids.len() as u64, count);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{count} ids: not strictly increasing"
        );
    }
    // A capped layout's stream awaits its ticks: 2,000 Sonyflake ids span 8 of them.
    let ids = read_stream(
        &mut c,
        StreamRequest {
            scheme: "sonyflake".into(),
            count: 2_000,
            chunk_size: 500,
            text: true,
        },
    )
    .await;
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_holds_the_server_back_and_a_cancel_stops_it() {
    let s = Running::start(default_service()).await;
    let mut c = s.small_window_client().await;
    // Unbounded: the server would make millions of ids a second if it generated ahead.
    let (mut stream, first) = endless_stream(&mut c, "snowflake-twitter", 1_000).await;
    assert_eq!(first.ids64.len(), 1_000);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let while_paused = s.issued("snowflake-twitter").await;
    // What flow control lets through: the client's 64 KiB window, the server's HTTP/2
    // send buffer (400 KiB in hyper) and a chunk in hand, about 60,000 8-byte ids; far
    // below the 2 M ids half a second would make.
    assert!(
        while_paused <= 100_000,
        "{while_paused} ids made for a reader that took 1,000"
    );
    let mut read = 1_000;
    for _ in 0..20 {
        read += stream.message().await.unwrap().unwrap().ids64.len();
    }
    assert_eq!(read, 21_000);
    // Cancel: drop the stream; generation stops.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after_cancel = s.issued("snowflake-twitter").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        s.issued("snowflake-twitter").await,
        after_cancel,
        "ids still made after the client cancelled"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_ends_a_call_that_waits() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();
    // 100,000 Sonyflake ids take about 4 s at 25.6 k/s; the client allows 100 ms.
    let mut request = tonic::Request::new(batch_request("sonyflake", 100_000, false));
    request.set_timeout(Duration::from_millis(100));
    let started = std::time::Instant::now();
    let status = c.batch(request).await.unwrap_err();
    // tonic's server ends a call past its `grpc-timeout` with CANCELLED ("Timeout
    // expired"); a client's own deadline shows as DEADLINE_EXCEEDED.
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Still serving.
    let one = c.next(next_request("sonyflake", false)).await.unwrap();
    assert_ne!(one.into_inner().id64, 0);
    s.stop().await;
}

/// A message whose field 1 is a number where `scheme` (a string) is expected: malformed
/// for the server's decoder.
#[derive(Clone, PartialEq, prost::Message)]
struct Malformed {
    #[prost(uint64, tag = "1")]
    scheme: u64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_gets_a_status_and_the_server_keeps_serving() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();
    let code = |r: Result<tonic::Response<_>, tonic::Status>| match r {
        Ok(_) => panic!("accepted"),
        Err::<tonic::Response<()>, _>(status) => status.code(),
    };
    let unknown = c
        .next(next_request("no-such-scheme", false))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
    assert!(
        unknown.message().contains("snowflake-twitter"),
        "{unknown:?}"
    );
    let unserved = c.next(next_request("ulid", false)).await.unwrap_err();
    assert_eq!(unserved.code(), Code::InvalidArgument);
    assert!(
        unserved
            .message()
            .starts_with("scheme \"ulid\" is not served here: expected one of"),
        "{unserved:?}"
    );
    for (count, expected) in [
        (0, Code::InvalidArgument),
        (1 << 63, Code::ResourceExhausted),
        (100_001, Code::ResourceExhausted),
    ] {
        let batch = c
            .batch(BatchRequest {
                scheme: "twitter".into(),
                count,
                text: false,
            })
            .await
            .map(|_| tonic::Response::new(()));
        assert_eq!(code(batch), expected, "count {count}");
    }
    let stream = c
        .stream(stream_request("twitter", 10, 200_000))
        .await
        .map(|_| tonic::Response::new(()));
    assert_eq!(code(stream), Code::ResourceExhausted);
    let bad_id = c
        .decode(DecodeRequest {
            scheme: "uuid-v7".into(),
            id: "not-a-uuid".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_id.code(), Code::InvalidArgument);
    // An id or scheme name longer than any id, yet within the request limit, is repeated in
    // the status by its start and length: the message travels in the trailers, which
    // clients may limit ("a default of 8 KiB each suggested", gRPC's PROTOCOL-HTTP2.md), and
    // an 'é' is six bytes there once percent-encoded.
    let long = "é".repeat(1500);
    for (scheme, id) in [("uuid-v7", long.as_str()), (long.as_str(), "1")] {
        let status = c
            .decode(DecodeRequest {
                scheme: scheme.into(),
                id: id.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(
            status
                .message()
                .contains(&format!("\"{}\"... (1500 characters)", "é".repeat(40))),
            "{status:?}"
        );
        assert!(status.message().len() < 400, "{status:?}");
    }
    // Larger than any request of this service needs.
    let oversized = c
        .decode(DecodeRequest {
            scheme: "uuid-v7".into(),
            id: "x".repeat(64 * 1024),
        })
        .await
        .unwrap_err();
    assert_ne!(oversized.code(), Code::Ok);
    // Bytes that are not a NextRequest.
    let mut raw = tonic::client::Grpc::new(s.grpc.clone());
    raw.ready().await.unwrap();
    let malformed = raw
        .unary::<Malformed, idkit_server::grpc::proto::NextResponse, _>(
            tonic::Request::new(Malformed { scheme: 7 }),
            "/idkit.v1.IdService/Next".parse().unwrap(),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(malformed.code(), Code::Internal, "{malformed:?}");
    // Still serving after all of it.
    let one = c.next(next_request("twitter", false)).await.unwrap();
    assert_ne!(one.into_inner().id64, 0);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_readiness() {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let s = Running::start(on_clock(&clock)).await;
    assert!(s.health_becomes("", Serving).await);
    assert!(s.health_becomes("idkit.v1.IdService", Serving).await);
    assert!(s.health_becomes("snowflake-twitter", Serving).await);

    clock.step_back(50);
    assert!(s.health_becomes("snowflake-twitter", NotServing).await);
    assert!(s.health_becomes("", NotServing).await);
    let refused = s
        .client()
        .next(next_request("snowflake-twitter", false))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains("clock moved backwards"));

    clock.advance(51);
    assert!(s.health_becomes("snowflake-twitter", Serving).await);
    assert!(s.health_becomes("idkit.v1.IdService", Serving).await);
    let unknown = HealthClient::new(s.grpc.clone())
        .check(HealthCheckRequest {
            service: "nothing".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_watch_sends_each_change_then_ends_at_shutdown() {
    use tonic_health::pb::HealthCheckResponse;

    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let s = Running::start(on_clock(&clock)).await;
    let mut health = HealthClient::new(s.grpc.clone());
    let mut watch = async |service: &str| {
        health
            .watch(HealthCheckRequest {
                service: service.to_owned(),
            })
            .await
    };
    let mut scheme = watch("snowflake-twitter").await.unwrap().into_inner();
    let mut every = watch("").await.unwrap().into_inner();
    let unknown = watch("nothing").await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    assert!(
        unknown.message().contains("snowflake-twitter"),
        "{unknown:?}"
    );
    /// The next status sent (None: the stream ended), within 10 s.
    async fn next(stream: &mut tonic::Streaming<HealthCheckResponse>) -> Option<i32> {
        tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("no status within 10 s")
            .unwrap()
            .map(|r| r.status)
    }
    let (serving, not_serving) = (Some(Serving as i32), Some(NotServing as i32));
    assert_eq!(next(&mut scheme).await, serving);
    assert_eq!(next(&mut every).await, serving);

    // Each change once: the clock behind the last id, then caught up.
    clock.step_back(50);
    assert_eq!(next(&mut scheme).await, not_serving);
    assert_eq!(next(&mut every).await, not_serving);
    clock.advance(51);
    assert_eq!(next(&mut scheme).await, serving);
    assert_eq!(next(&mut every).await, serving);

    // Shutdown: NOT_SERVING, then the end of each stream, and the server stops.
    let stopping = tokio::spawn(s.stop());
    for stream in [&mut scheme, &mut every] {
        assert_eq!(next(stream).await, not_serving);
        assert_eq!(next(stream).await, None);
    }
    stopped(stopping).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_watches_of_one_name_share_their_probes() {
    // The clock stands still, so every id issued, probes among them, takes the next
    // sequence number of one millisecond: the sequence counts the probes.
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let s = Running::start(on_clock(&clock)).await;
    let health = HealthClient::new(s.grpc.clone());
    const WATCHES: u64 = 20;
    let mut streams = Vec::new();
    for _ in 0..WATCHES {
        let mut health = health.clone();
        let request = HealthCheckRequest {
            service: "snowflake-twitter".into(),
        };
        let mut stream = health.watch(request).await.unwrap().into_inner();
        assert!(stream.message().await.unwrap().is_some());
        streams.push(stream);
    }
    let sequence = async || {
        let mut client = s.client();
        let next = client.next(next_request("snowflake-twitter", false)).await;
        next.unwrap().into_inner().id64 & 0xfff
    };
    let started = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let probes = sequence().await;
    // One probe for the first watch and one a period since, for all 20 watches; a probe per
    // watch would be 20 at least.
    let periods = u64::try_from(started.elapsed().as_millis() / 500).unwrap() + 1;
    assert!(
        probes <= 1 + periods,
        "{probes} probes in {periods} periods"
    );
    assert!(probes < WATCHES, "{probes} probes for {WATCHES} watches");

    // Every watch closed: once the server has seen them go, nothing probes. While the task
    // runs, 600 ms hold a probe at least.
    drop(streams);
    let mut quiet = false;
    for _ in 0..20 {
        let before = sequence().await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        if sequence().await == before + 1 {
            quiet = true;
            break;
        }
    }
    assert!(quiet, "probes went on after every watch closed");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let s = Running::start(default_service()).await;
    let mut client = ServerReflectionClient::new(s.grpc.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = client
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
        panic!("{answer:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"idkit.v1.IdService".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"grpc.health.v1.Health".to_owned()),
        "{names:?}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_open_streams() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();
    let (mut stream, _) = endless_stream(&mut c, "snowflake-twitter", 100).await;
    let stopping = tokio::spawn(s.stop());
    // The stream ends (an UNAVAILABLE status, or the end of the stream) and the server stops.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.message().await {
                Ok(Some(_)) => continue,
                Ok(None) => return None,
                Err(status) => return Some(status.code()),
            }
        }
    })
    .await
    .expect("the stream did not end at shutdown");
    assert!(matches!(ended, None | Some(Code::Unavailable)), "{ended:?}");
    stopped(stopping).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_a_worker_id_lease_lost_and_regained() {
    // A leased worker id on SQLite with a 1 s TTL: renewed every third of it, proven up to
    // four fifths of it after each renewal.
    let db = std::env::temp_dir().join(format!("idkit-grpc-lease-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let service = configured(&format!(
        "schemes = [\"snowflake-twitter\"]\nidentity = \"sqlite://{}?ttl_ms=1000\"",
        db.display()
    ));
    let s = Running::start(service).await;
    assert!(s.health_becomes("snowflake-twitter", Serving).await);

    // Another connection holds the store's write lock for 3 s: no renewal gets through,
    // the proof runs out, the generator fences itself and health says so.
    let locked = db.clone();
    let outage = std::thread::spawn(move || {
        let connection = rusqlite::Connection::open(&locked).unwrap();
        connection.execute_batch("BEGIN EXCLUSIVE").unwrap();
        std::thread::sleep(Duration::from_secs(3));
        connection.execute_batch("COMMIT").unwrap();
    });
    assert!(s.health_becomes("snowflake-twitter", NotServing).await);
    assert!(s.health_becomes("", NotServing).await);
    let refused = s
        .client()
        .next(next_request("snowflake-twitter", false))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");

    // The store back: the lease is renewed (or granted again, nobody having held it since)
    // and the scheme serves again.
    outage.join().unwrap();
    assert!(s.health_becomes("snowflake-twitter", Serving).await);
    assert!(s.health_becomes("idkit.v1.IdService", Serving).await);
    s.client()
        .next(next_request("snowflake-twitter", false))
        .await
        .unwrap();
    s.stop().await;
    let _ = std::fs::remove_file(&db);
}

/// True when the server closes `stream` (end of file or a reset) within 5 s, having sent
/// nothing.
async fn closed_unanswered(stream: &mut tokio::net::TcpStream) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
        Ok(Ok(n)) => n == 0,
        Ok(Err(_)) => true,
        Err(_) => false,
    }
}

/// True when a new connection to the gRPC door at `addr` gets HTTP/2's SETTINGS back
/// for its preface within 5 s; false when it is closed unanswered.
async fn http2_answers(addr: std::net::SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _ = stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await;
    let mut frame = [0u8; 9];
    match tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut frame)).await {
        // A frame header: length (3 bytes), then the type, 4 for SETTINGS.
        Ok(Ok(_)) => frame[3] == 4,
        Ok(Err(_)) => false,
        Err(_) => panic!("neither served nor closed within 5 s"),
    }
}

/// Both doors serving `snowflake-twitter` with `limits` (TOML), their first gRPC channel
/// checked with a call.
async fn serving_twitter(limits: &str) -> Running {
    let s = Running::start(configured(&format!(
        "schemes = [\"snowflake-twitter\"]\nworker = 3\n{limits}"
    )))
    .await;
    s.client()
        .next(next_request("twitter", false))
        .await
        .unwrap();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_and_the_cap_spans_both_doors() {
    use tokio::io::AsyncWriteExt;
    let s = serving_twitter("header_timeout_ms = 500\nmax_connections = 4").await;

    // A client that opens a connection and says nothing, and one that stops halfway
    // through HTTP/2's preface: each is closed after header_timeout_ms, and counted.
    let mut silent = tokio::net::TcpStream::connect(s.doors.grpc).await.unwrap();
    let mut halfway = tokio::net::TcpStream::connect(s.doors.grpc).await.unwrap();
    halfway.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    assert!(closed_unanswered(&mut silent).await);
    assert!(closed_unanswered(&mut halfway).await);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while s.metric("idkit_header_timeouts_total").await < 2 && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.metric("idkit_header_timeouts_total").await, 2);
    // The channel opened first sent its preface in time and still serves.
    s.client()
        .next(next_request("twitter", false))
        .await
        .unwrap();

    s.stop().await;

    // The slots span both doors: a gRPC channel and two HTTP connections that have not sent
    // their headers yet (the timeout is long here) fill three, and the next connection to
    // either door is closed at once, unanswered.
    let s = serving_twitter("header_timeout_ms = 20000\nmax_connections = 3").await;
    let mut waiting = Vec::new();
    for _ in 0..2 {
        waiting.push(tokio::net::TcpStream::connect(s.doors.http).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!http2_answers(s.doors.grpc).await, "the gRPC door is full");
    let mut http = tokio::net::TcpStream::connect(s.doors.http).await.unwrap();
    http.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .ok();
    assert!(closed_unanswered(&mut http).await, "the HTTP door is full");
    // A slot freed, a new connection to the gRPC door is served; so are the scrapes.
    waiting.pop();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !http2_answers(s.doors.grpc).await {
        assert!(std::time::Instant::now() < deadline, "no slot came free");
    }
    drop(waiting);
    assert!(s.metric("idkit_connections_refused_total").await >= 2);
    s.client()
        .next(next_request("twitter", false))
        .await
        .unwrap();
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_counted_by_method_and_status() {
    let s = Running::start(default_service()).await;
    let mut c = s.client();
    for _ in 0..3 {
        c.next(next_request("twitter", false)).await.unwrap();
    }
    let unknown = c.next(next_request("nope", false)).await.unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
    let too_many = c
        .batch(batch_request("twitter", 1_000_000, false))
        .await
        .unwrap_err();
    assert_eq!(too_many.code(), Code::ResourceExhausted);
    let mut stream = c
        .stream(stream_request("twitter", 10, 0))
        .await
        .unwrap()
        .into_inner();
    while stream.message().await.unwrap().is_some() {}
    c.schemes(SchemesRequest {}).await.unwrap();
    // A stream is counted when it ends: one the client drops is CANCELLED.
    let (endless, _) = endless_stream(&mut c, "twitter", 0).await;
    drop(endless);
    let cancelled = r#"idkit_grpc_calls_total{method="Stream",code="CANCELLED"}"#;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !s.metrics().await.contains(cancelled) {
        assert!(
            std::time::Instant::now() < deadline,
            "the dropped stream is not counted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let text = s.metrics().await;
    for (labels, calls) in [
        (r#"method="Next",code="OK""#, 3),
        (r#"method="Next",code="INVALID_ARGUMENT""#, 1),
        (r#"method="Batch",code="RESOURCE_EXHAUSTED""#, 1),
        (r#"method="Stream",code="OK""#, 1),
        (r#"method="Stream",code="CANCELLED""#, 1),
        (r#"method="Schemes",code="OK""#, 1),
    ] {
        let line = format!("idkit_grpc_calls_total{{{labels}}} {calls}\n");
        assert!(text.contains(&line), "no {line:?} in {text}");
    }
    // Only what was seen is listed, and every call is in the histogram once.
    assert_eq!(text.matches("idkit_grpc_calls_total{").count(), 6, "{text}");
    assert!(
        text.contains("idkit_grpc_call_duration_seconds_count 8\n"),
        "{text}"
    );
    s.stop().await;
}
