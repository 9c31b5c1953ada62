//! TLS and bearer tokens on both front doors over loopback: a certificate made here for
//! `localhost` (rcgen), a tokens file with two tokens (one being rotated out), real TLS
//! clients (tokio-rustls for HTTP/1.1, tonic's for gRPC), and a plaintext client on the
//! TLS port.

use idkit_server::grpc::proto::NextRequest;
use idkit_server::grpc::proto::id_service_client::IdServiceClient;
use idkit_server::{Config, Service};
use idkit_testkit::{Scratch, http};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

mod common;

use common::Doors;

const OLD_TOKEN: &str = "old-token-5f2a9c41d7e8b036";
const NEW_TOKEN: &str = "new-token-0c8e27b9a4d1f653";

/// Both doors with TLS and tokens, and the certificate a client trusts.
struct Secured {
    doors: Doors,
    ca_pem: String,
    /// The certificate, key and tokens files, removed with the service.
    _files: Scratch,
}

async fn start() -> Secured {
    start_with("").await
}

/// [`start`] with more of the configuration file.
async fn start_with(more_toml: &str) -> Secured {
    let dir = Scratch::new("security");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    let tokens_path = dir.join("tokens");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    std::fs::write(
        &tokens_path,
        format!("# the old one goes at the end of the month\n{OLD_TOKEN}\n{NEW_TOKEN}\n"),
    )
    .unwrap();
    let mut config = Config::from_toml(&format!(
        "schemes = [\"snowflake-twitter\"]\nworker = 2\nno_state_file = true\n\
         tls_cert = {:?}\ntls_key = {:?}\ntokens_file = {:?}\n{more_toml}",
        cert_path, key_path, tokens_path
    ))
    .unwrap();
    config.identity.state_dir = Some(dir.join("state"));
    Secured {
        doors: Doors::open(Service::new(&config).unwrap()).await,
        ca_pem: cert.cert.pem(),
        _files: dir,
    }
}

impl Secured {
    /// One HTTP/1.1 request over TLS with `Authorization: Bearer TOKEN`; the status code and
    /// body.
    async fn https(&self, path: &str, token: Option<&str>) -> (u16, String) {
        self.https_authorized(path, token.map(|t| format!("Bearer {t}")).as_deref())
            .await
    }

    /// One HTTP/1.1 request over TLS with this `Authorization` value.
    async fn https_authorized(&self, path: &str, authorization: Option<&str>) -> (u16, String) {
        let connector = tokio_rustls::TlsConnector::from(http::client_config(&self.ca_pem));
        let tcp = tokio::net::TcpStream::connect(self.doors.http)
            .await
            .unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = connector.connect(name, tcp).await.unwrap();
        let auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
        tls.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut reply = String::new();
        tls.read_to_string(&mut reply).await.unwrap_or_default();
        http::status_and_body(&reply)
    }

    async fn grpc_client(&self) -> IdServiceClient<Channel> {
        let tls = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&self.ca_pem))
            .domain_name("localhost");
        let channel = Channel::from_shared(format!("https://localhost:{}", self.doors.grpc.port()))
            .unwrap()
            .tls_config(tls)
            .unwrap()
            .connect()
            .await
            .unwrap();
        IdServiceClient::new(channel)
    }

    async fn stop(self) {
        self.doors.stop().await;
    }
}

/// What the server at `addr` answers to `bytes` sent in plaintext, until it closes the
/// connection (or resets it); it must within 5 s.
async fn plaintext_reply(addr: std::net::SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(bytes).await;
    let mut reply = Vec::new();
    let read = stream.read_to_end(&mut reply);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), read)
        .await
        .expect("closed within 5 s");
    reply
}

/// The value of the unlabelled metric `name` in the text of `/metrics`.
fn counted(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
        .parse()
        .unwrap()
}

fn next(token: Option<&str>) -> tonic::Request<NextRequest> {
    next_authorized(token.map(|t| format!("Bearer {t}")).as_deref())
}

/// A call with this `authorization` value.
fn next_authorized(authorization: Option<&str>) -> tonic::Request<NextRequest> {
    let mut request = tonic::Request::new(NextRequest {
        scheme: "twitter".into(),
        text: true,
    });
    if let Some(value) = authorization {
        request
            .metadata_mut()
            .insert("authorization", value.parse().unwrap());
    }
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_doors_need_tls_and_a_token() {
    let s = start().await;

    // HTTP over TLS: either token works; none, a wrong one or a truncated one is 401.
    for token in [OLD_TOKEN, NEW_TOKEN] {
        let (status, body) = s.https("/v1/snowflake-twitter/next", Some(token)).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.trim().parse::<u64>().is_ok(), "{body}");
    }
    for token in [None, Some("wrong-token-0000000000"), Some(&NEW_TOKEN[..20])] {
        let (status, body) = s.https("/v1/snowflake-twitter/next", token).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        assert!(body.contains("bearer token"), "{body}");
    }
    // Probes and the scrape stay open.
    for open in ["/healthz", "/readyz", "/metrics"] {
        let (status, _) = s.https(open, None).await;
        assert_eq!(status, 200, "{open}");
    }

    // gRPC over TLS: the same tokens.
    let mut c = s.grpc_client().await;
    let one = c.next(next(Some(NEW_TOKEN))).await.unwrap().into_inner();
    assert_eq!(one.text, one.id64.to_string());
    for token in [None, Some("wrong-token-0000000000")] {
        let refused = c.next(next(token)).await.unwrap_err();
        assert_eq!(refused.code(), Code::Unauthenticated, "{token:?}");
    }
    // Health stays open.
    let mut health = tonic_health::pb::health_client::HealthClient::new(
        Channel::from_shared(format!("https://localhost:{}", s.doors.grpc.port()))
            .unwrap()
            .tls_config(
                ClientTlsConfig::new()
                    .ca_certificate(Certificate::from_pem(&s.ca_pem))
                    .domain_name("localhost"),
            )
            .unwrap()
            .connect()
            .await
            .unwrap(),
    );
    health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();

    // Plaintext against the TLS ports: refused, no panic, and both doors keep serving.
    let reply = plaintext_reply(
        s.doors.http,
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
    )
    .await;
    assert!(!reply.starts_with(b"HTTP/1.1 200"), "plaintext was served");
    // It is told why, in its own protocol, instead of getting the bytes of a TLS alert.
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{reply}");
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        json["error"],
        "this port speaks TLS: ask for https:// instead"
    );
    // A plaintext gRPC client's first bytes (HTTP/2's preface and its SETTINGS), by hand:
    // tonic's own client reconnects for as long as each connection is refused (19 times
    // in one run here, and in one run it never stopped). The door closes the connection
    // without a word.
    let reply = plaintext_reply(
        s.doors.grpc,
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
    )
    .await;
    // Closed, perhaps after a TLS alert (0x15): never an HTTP/2 frame (its length's 0 first).
    assert_ne!(reply.first(), Some(&0), "{reply:?}");
    let (status, _) = s.https("/v1/snowflake-twitter/next", Some(OLD_TOKEN)).await;
    assert_eq!(status, 200);
    c.next(next(Some(OLD_TOKEN))).await.unwrap();

    // Refusals are counted per door.
    let (_, metrics) = s.https("/metrics", None).await;
    common::promtool_check(&metrics);
    assert!(
        metrics.contains("idkit_unauthenticated_total{door=\"http\"} 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("idkit_unauthenticated_total{door=\"grpc\"} 2"),
        "{metrics}"
    );
    // The gRPC calls by status: the refused ones too.
    assert!(
        metrics.contains("idkit_grpc_calls_total{method=\"Next\",code=\"UNAUTHENTICATED\"} 2"),
        "{metrics}"
    );
    // Both doors count their failed handshakes: the plaintext HTTP client's and the
    // plaintext gRPC client's.
    assert_eq!(
        counted(&metrics, "idkit_tls_handshake_failures_total"),
        2,
        "{metrics}"
    );
    // The scheme's name in any case (RFC 7235 section 2.1), on both doors; another scheme
    // is refused (after the counts above).
    for scheme in ["bearer", "BEARER", "Bearer "] {
        let value = format!("{scheme} {NEW_TOKEN}");
        let (status, body) = s
            .https_authorized("/v1/snowflake-twitter/next", Some(&value))
            .await;
        assert_eq!(status, 200, "{value}: {body}");
        c.next(next_authorized(Some(&value))).await.unwrap();
    }
    let basic = format!("Basic {NEW_TOKEN}");
    let (status, _) = s
        .https_authorized("/v1/snowflake-twitter/next", Some(&basic))
        .await;
    assert_eq!(status, 401);
    let refused = c.next(next_authorized(Some(&basic))).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grpc_door_closes_a_tls_client_that_stalls() {
    let s = start_with("header_timeout_ms = 500").await;
    let mut c = s.grpc_client().await;
    c.next(next(Some(NEW_TOKEN))).await.unwrap();

    // A client that says nothing, and one that stops inside its ClientHello (a handshake
    // record's header announcing 512 bytes, then nothing): each is closed after
    // header_timeout_ms and counted, not left holding a connection.
    let mut silent = tokio::net::TcpStream::connect(s.doors.grpc).await.unwrap();
    let mut stalled = tokio::net::TcpStream::connect(s.doors.grpc).await.unwrap();
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00])
        .await
        .unwrap();
    for stream in [&mut silent, &mut stalled] {
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("closed within 5 s");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut timeouts = 0;
    while timeouts < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        timeouts = counted(
            &s.https("/metrics", None).await.1,
            "idkit_header_timeouts_total",
        );
    }
    assert_eq!(timeouts, 2);
    // The client that finished its handshake in time still calls.
    c.next(next(Some(NEW_TOKEN))).await.unwrap();
    s.stop().await;
}

#[test]
fn half_a_tls_configuration_or_a_weak_token_is_refused() {
    let dir = Scratch::new("security-cfg");
    let weak = dir.join("weak");
    std::fs::write(&weak, "secret\n").unwrap();
    for (toml, key) in [
        ("tls_cert = \"/nonexistent/cert.pem\"", "tls_key"),
        (
            "tls_cert = \"/nonexistent/cert.pem\"\ntls_key = \"/nonexistent/key.pem\"",
            "tls_cert",
        ),
        (&format!("tokens_file = {weak:?}"), "tokens_file"),
        ("tokens_file = \"/nonexistent/tokens\"", "tokens_file"),
    ] {
        let config = Config::from_toml(&format!("schemes = [\"uuid-v7\"]\n{toml}")).unwrap();
        match Service::new(&config) {
            Err(idkit_server::ConfigError::Invalid { key: got, .. }) => {
                assert_eq!(got, key, "{toml}");
            }
            other => panic!("{toml}: {other:?}"),
        }
    }
}
