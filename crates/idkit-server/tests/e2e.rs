//! End-to-end: the service on an ephemeral loopback port, driven by a real HTTP client
//! (reqwest): every route, every error case, text and JSON, concurrent clients.

use std::collections::HashSet;
use std::sync::Arc;

use idkit_core::ManualClock;
use idkit_server::{Config, Service};
use reqwest::StatusCode;
use serde_json::Value;

mod common;

use common::{config, configured, on_clock};

struct Running {
    base: String,
    client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    async fn start(service: Service) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(idkit_server::serve(
            listener,
            Arc::new(service),
            async move {
                let _ = stopped.await;
            },
        ));
        Self {
            base,
            client: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// `path`'s status and body; `/metrics` checked by Prometheus's own checker first.
    async fn get(&self, path: &str) -> (StatusCode, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let (status, body) = (r.status(), r.text().await.unwrap());
        if path == "/metrics" {
            common::promtool_check(&body);
        }
        (status, body)
    }

    async fn get_json(&self, path: &str) -> (StatusCode, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("Accept", "application/json")
            .send()
            .await
            .unwrap();
        let status = r.status();
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{path}"
        );
        (status, r.json().await.unwrap())
    }

    /// The raw answer to `method path`.
    async fn send(&self, method: reqwest::Method, path: &str) -> reqwest::Response {
        self.client
            .request(method, format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_in_text_and_json() {
    let s = Running::start(configured(
        r#"schemes = ["twitter", "uuid-v7", "ulid", "discord"]
           worker = 7
           datacenter = 2
           process = 1
           max_batch = 500"#,
    ))
    .await;

    let (status, body) = s.get("/v1/schemes").await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = body
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["snowflake-twitter", "uuid-v7", "ulid", "snowflake-discord"]
    );
    let (_, json) = s.get_json("/v1/schemes").await;
    assert_eq!(json.as_array().unwrap().len(), 4);
    assert_eq!(json[0]["name"], "snowflake-twitter");
    assert_eq!(json[0]["cap_ids_per_sec"], 4_096_000);

    // One id, text: a line; it decodes to the configured worker and datacenter.
    let (status, body) = s.get("/v1/snowflake-twitter/next").await;
    assert_eq!(status, StatusCode::OK);
    let id = body.strip_suffix('\n').unwrap();
    assert!(id.parse::<u64>().is_ok(), "{body:?}");
    let (status, decoded) = s.get_json(&format!("/v1/twitter/decode/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(decoded["scheme"], "snowflake-twitter");
    assert_eq!(decoded["id"], id);
    assert_eq!(decoded["fields"]["worker"], 7);
    assert_eq!(decoded["fields"]["datacenter"], 2);
    assert!(decoded["timestamp"].as_str().unwrap().ends_with('Z'));
    let (status, plain) = s.get(&format!("/v1/twitter/decode/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(plain.contains("worker      7"), "{plain}");

    // Discord gets its own fields from the same config.
    let (_, one) = s.get_json("/v1/discord/next").await;
    let id = one["id"].as_str().unwrap();
    let (_, decoded) = s.get_json(&format!("/v1/discord/decode/{id}")).await;
    assert_eq!(decoded["fields"]["worker"], 7);
    assert_eq!(decoded["fields"]["process"], 1);

    // Batches: text lines, JSON strings, increasing.
    let (status, body) = s.get("/v1/uuid-v7/next?count=500").await;
    assert_eq!(status, StatusCode::OK);
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 500);
    assert!(lines.windows(2).all(|w| w[0] < w[1]));
    let (_, json) = s.get_json("/v1/ulid/next?count=3").await;
    assert_eq!(json["scheme"], "ulid");
    let ids = json["ids"].as_array().unwrap();
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter()
            .all(|v| v.as_str().is_some_and(|s| s.len() == 26))
    );

    let (status, body) = s.get("/healthz").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
    let (status, body) = s.get("/readyz").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ready\n"));

    let (status, metrics) = s.get("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let value = |line_start: &str| -> f64 {
        metrics
            .lines()
            .find(|l| l.starts_with(line_start))
            .unwrap_or_else(|| panic!("no {line_start} in\n{metrics}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // One single id, one from each readyz probe aside (probes are not counted as issued).
    assert_eq!(
        value("idkit_ids_issued_total{scheme=\"snowflake-twitter\"}"),
        1.0
    );
    assert_eq!(value("idkit_ids_issued_total{scheme=\"uuid-v7\"}"), 500.0);
    assert_eq!(value("idkit_ids_issued_total{scheme=\"ulid\"}"), 3.0);
    assert_eq!(
        value("idkit_clock_rollbacks_total{scheme=\"snowflake-twitter\"}"),
        0.0
    );
    assert!(metrics.contains("# TYPE idkit_request_duration_seconds histogram"));
    assert!(value("idkit_request_duration_seconds_count") >= 10.0);
    assert!(value("idkit_requests_total{code=\"2xx\"}") >= 10.0);

    // New ids are never to be stored by a cache, which could hand them to a second client;
    // a decoding may be.
    for accept in ["text/plain", "application/json"] {
        let r = s
            .client
            .get(format!("{}/v1/uuid-v7/next?count=2", s.base))
            .header("Accept", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()["cache-control"], "no-store", "{accept}");
    }
    let r = s.send(reqwest::Method::GET, "/v1/twitter/next").await;
    assert_eq!(r.headers()["cache-control"], "no-store");
    let r = s
        .send(
            reqwest::Method::GET,
            "/v1/twitter/decode/175928847299117063",
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().get("cache-control").is_none());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_typed_errors() {
    let s = Running::start(configured(
        r#"schemes = ["twitter", "ksuid"]
                                          max_batch = 100"#,
    ))
    .await;
    let error = |json: &Value| json["error"].as_str().unwrap().to_owned();

    let (status, json) = s.get_json("/v1/nope/next").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        json["known"],
        serde_json::json!(["snowflake-twitter", "ksuid"])
    );
    assert!(error(&json).contains("unknown scheme \"nope\""));
    // A registered scheme that is not served is not found here either, and said to be so.
    let (status, json) = s.get_json("/v1/uuid-v4/next").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        error(&json).contains(
            "scheme \"uuid-v4\" is not served here: expected one of snowflake-twitter, ksuid"
        ),
        "{json}"
    );
    let (status, json) = s.get_json("/v1/discord/next").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        error(&json).contains("scheme \"discord\" (snowflake-discord) is not served here"),
        "{json}"
    );
    let (status, _) = s.get("/v1/nope/decode/1").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    for (query, needle) in [
        ("count", "needs a value"),
        ("count=", "needs a value"),
        ("count=0", "out of range"),
        ("count=-3", "not a whole number"),
        ("count=ten", "not a whole number"),
        ("count=1.5", "not a whole number"),
        ("count=101", "out of range"),
        ("count=99999999999999999999999", "out of range"),
        ("count=2&count=3", "more than once"),
        (
            "n=5",
            "unknown query parameter \"n\": this route takes only count, 1 to 100",
        ),
        ("count=2&pad=x", "unknown query parameter \"pad\""),
    ] {
        let (status, json) = s.get_json(&format!("/v1/twitter/next?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert!(error(&json).contains(needle), "{query}: {json}");
    }
    let (status, body) = s.get("/v1/twitter/next?count=100").await;
    assert_eq!((status, body.lines().count()), (StatusCode::OK, 100));

    for bad in ["abc", "-1", "18446744073709551616", "9223372036854775808"] {
        let (status, json) = s.get_json(&format!("/v1/twitter/decode/{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            error(&json).starts_with("malformed snowflake-twitter id"),
            "{json}"
        );
    }
    // An id or scheme name longer than any id is repeated by its start and length, not whole.
    let long = "9".repeat(1500);
    for (path, status_wanted) in [
        (
            format!("/v1/twitter/decode/{long}"),
            StatusCode::BAD_REQUEST,
        ),
        (format!("/v1/{long}/next"), StatusCode::NOT_FOUND),
    ] {
        let (status, json) = s.get_json(&path).await;
        assert_eq!(status, status_wanted, "{json}");
        let message = error(&json);
        assert!(
            message.contains(&format!("\"{}\"... (1500 characters)", "9".repeat(40))),
            "{message}"
        );
        assert!(message.len() < 300, "{message}");
    }
    let (status, json) = s
        .get_json("/v1/ksuid/decode/0ujtsYcgvSTl8PAuAdqWYSMnLO")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");

    let (status, json) = s.get_json("/v2/anything").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(error(&json).contains("no route /v2/anything"));
    let (status, _) = s.get("/").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let long = "x".repeat(3000);
    let (status, _) = s.get(&format!("/v1/twitter/decode/{long}")).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    let r = s
        .client
        .post(format!("{}/v1/twitter/next", s.base))
        .body(vec![b'a'; 4096])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let r = s
        .client
        .post(format!("{}/v1/twitter/next", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_get_distinct_decodable_ids() {
    let s = Arc::new(
        Running::start(configured(
            r#"schemes = ["twitter", "uuid-v7", "instagram"]
                                      shard = 9"#,
        ))
        .await,
    );
    let mut tasks = Vec::new();
    for client in 0..16 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            let scheme = ["twitter", "uuid-v7", "instagram"][client % 3];
            let mut ids = Vec::new();
            for _ in 0..20 {
                let (status, body) = s.get(&format!("/v1/{scheme}/next?count=250")).await;
                assert_eq!(status, StatusCode::OK);
                let got: Vec<String> = body.lines().map(str::to_owned).collect();
                assert_eq!(got.len(), 250);
                // Each response is in issue order.
                if scheme != "uuid-v7" {
                    assert!(
                        got.windows(2)
                            .all(|w| w[0].parse::<u64>().unwrap() < w[1].parse::<u64>().unwrap())
                    );
                } else {
                    assert!(got.windows(2).all(|w| w[0] < w[1]));
                }
                ids.extend(got.into_iter().map(|id| (scheme, id)));
            }
            ids
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    assert_eq!(all.len(), 16 * 20 * 250);
    let unique: HashSet<&(&str, String)> = all.iter().collect();
    assert_eq!(
        unique.len(),
        all.len(),
        "duplicate ids across concurrent clients"
    );
    // A sample decodes through the service; every Instagram id carries the shard.
    for (scheme, id) in all.iter().step_by(997) {
        let (status, json) = s.get_json(&format!("/v1/{scheme}/decode/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{scheme} {id}");
        assert_eq!(json["id"], id.as_str());
        if *scheme == "instagram" {
            assert_eq!(json["fields"]["shard"], 9);
        }
    }
    Arc::into_inner(s).unwrap().stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_while_the_clock_is_behind_and_recovers() {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let s = Running::start(on_clock(&clock)).await;
    let (status, _) = s.get("/readyz").await;
    assert_eq!(status, StatusCode::OK);
    s.get("/v1/snowflake-twitter/next").await;

    clock.step_back(50);
    let (status, json) = s.get_json("/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(json["ready"], false);
    assert_eq!(json["schemes"][0]["scheme"], "snowflake-twitter");
    let (status, json) = s.get_json("/v1/snowflake-twitter/next").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("clock moved backwards"),
        "{json}"
    );
    let (_, metrics) = s.get("/metrics").await;
    assert!(metrics.contains(
        "idkit_generate_errors_total{scheme=\"snowflake-twitter\",kind=\"clock_moved_backwards\"} 1"
    ), "{metrics}");
    assert!(!metrics.contains("idkit_clock_rollbacks_total{scheme=\"snowflake-twitter\"} 0"));

    clock.advance(51);
    let (status, _) = s.get("/readyz").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = s.get("/v1/snowflake-twitter/next").await;
    assert_eq!(status, StatusCode::OK);
    s.stop().await;
}

#[test]
fn invalid_configuration_is_refused_with_a_reason() {
    let refuse = |toml: &str| Service::new(&config(toml)).unwrap_err().to_string();
    assert_eq!(
        refuse("listen = \"localhost\""),
        "invalid config: listen: \"localhost\" is not an address: expected IP:PORT, e.g. 127.0.0.1:8080"
    );
    assert_refused(&[("schemes = [\"nope\"]", "unknown scheme \"nope\"")]);
    assert_eq!(
        refuse("listen = \"127.0.0.1:8080\"\ngrpc_listen = \"127.0.0.1:8080\""),
        "invalid config: grpc_listen: 127.0.0.1:8080 is listen's address too: the HTTP and \
         gRPC doors need a port each"
    );
    // Port 0 picks a free port for each door.
    let both_free = "listen = \"127.0.0.1:0\"\ngrpc_listen = \"127.0.0.1:0\"\nworker = 1";
    assert!(Service::new(&config(both_free)).is_ok());
    assert_refused(&[
        ("max_batch = 0", "max_batch: 0 is out of range"),
        (
            "max_batch = 1000001",
            "max_batch: 1000001 is out of range: expected 1 to 1000000",
        ),
        (
            "rollback = \"sometimes\"",
            "expected fail-fast, wait or logical",
        ),
        (
            "schemes = [\"twitter\"]\nworker = 32",
            "worker must be at most 31",
        ),
        (
            "schemes = [\"uuid-v4\"]\nshard = 1",
            "shard: is set but no served scheme has a shard field",
        ),
    ]);
    let toml_error = Config::from_toml("listn = \"x\"").unwrap_err().to_string();
    assert!(toml_error.contains("unknown field `listn`"), "{toml_error}");
    assert!(Config::from_toml("worker = -1").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_range_allocator_is_served_from_the_configured_store() {
    let dir = std::env::temp_dir().join(format!("idkit-server-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("ids.db");
    let toml = format!(
        "schemes = [\"range\"]\nrange_store = {:?}",
        db.display().to_string()
    );
    let s = Running::start(configured(&toml)).await;
    let (status, body) = s.get("/v1/range/next?count=2500").await;
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<u64> = body.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 2500);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let (_, decoded) = s.get_json(&format!("/v1/range/decode/{}", ids[0])).await;
    assert_eq!(decoded["timestamp_ms"], Value::Null);
    let (status, _) = s.get("/readyz").await;
    assert_eq!(status, StatusCode::OK);
    s.stop().await;
    // The configured file is the store: a second service on it continues past these ids.
    let again = Running::start(configured(&toml)).await;
    let (_, body) = again.get("/v1/range/next").await;
    assert!(body.trim().parse::<u64>().unwrap() > *ids.last().unwrap());
    again.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `Service::router` mounted under a prefix in another application keeps the size limits,
/// the metrics and the JSON errors of `serve`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_mounts_under_a_prefix_with_its_checks() {
    let service = Arc::new(configured(r#"schemes = ["uuid-v4", "snowflake-twitter"]"#));
    let app = axum::Router::new()
        .route("/", axum::routing::get(|| async { "the application\n" }))
        .nest("/ids", service.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        let url = format!("{base}{path}");
        async move {
            let r = client.get(url).send().await.unwrap();
            (r.status(), r.text().await.unwrap())
        }
    };

    let (status, body) = get("/".to_owned()).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "the application\n")
    );
    let (status, body) = get("/ids/v1/uuid-v4/next".to_owned()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.trim_end().len(), 36, "{body:?}");
    // Names and aliases in any case.
    let (status, _) = get("/ids/v1/TWITTER/next".to_owned()).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = get("/ids/v1/ulid/next".to_owned()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        body.contains("uuid-v4") && body.contains("snowflake-twitter"),
        "{body}"
    );
    let (status, body) = get(format!(
        "/ids/v1/uuid-v4/next?count=1&pad={}",
        "x".repeat(3_000)
    ))
    .await;
    assert_eq!(status, StatusCode::URI_TOO_LONG, "{body}");
    let (status, body) = get("/ids/metrics".to_owned()).await;
    assert_eq!(status, StatusCode::OK);
    // The four requests above under /ids, answered before this one.
    assert!(
        body.contains("idkit_request_duration_seconds_count 4\n"),
        "{body}"
    );
    assert!(
        body.contains("idkit_requests_total{code=\"4xx\"} 2\n"),
        "{body}"
    );
    assert!(
        body.contains("idkit_ids_issued_total{scheme=\"uuid-v4\"} 1\n"),
        "{body}"
    );
    task.abort();
}

/// Settings come from each scheme's definition: top-level keys apply to every served scheme
/// that takes them, a `[scheme.NAME]` table to one scheme over them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_scheme_tables_override_the_top_level() {
    let s = Running::start(configured(
        r#"schemes = ["twitter", "discord", "typeid", "tsid"]
           worker = 3
           rollback = "fail-fast"
           [scheme.discord]
           worker = 4
           process = 2
           [scheme.typeid]
           prefix = "user"
           [scheme.tsid]
           node_bits = 4
           node = 9"#,
    ))
    .await;
    let decode = |scheme: &'static str| {
        let s = &s;
        async move {
            let (status, id) = s.get(&format!("/v1/{scheme}/next")).await;
            assert_eq!(status, StatusCode::OK, "{id}");
            let (status, d) = s
                .get_json(&format!("/v1/{scheme}/decode/{}", id.trim()))
                .await;
            assert_eq!(status, StatusCode::OK, "{d}");
            d
        }
    };
    assert_eq!(decode("twitter").await["fields"]["worker"], 3);
    let discord = decode("discord").await;
    assert_eq!(discord["fields"]["worker"], 4);
    assert_eq!(discord["fields"]["process"], 2);
    let typeid = decode("typeid").await;
    assert_eq!(typeid["fields"]["prefix"], "user");
    assert!(typeid["id"].as_str().unwrap().starts_with("user_"));
    // Decoding reads a TypeID of any type, as `idkit decode` does; only generation uses
    // the configured prefix.
    let (status, post) = s
        .get_json("/v1/typeid/decode/post_01h455vb4pex5vsknk084sn02q")
        .await;
    assert_eq!(status, StatusCode::OK, "{post}");
    assert_eq!(post["fields"]["prefix"], "post");
    // TSID's node is read back with the service's own node width (4 bits).
    assert_eq!(decode("tsid").await["fields"]["node"], 9);
    s.stop().await;

    assert_refused(&[
        (
            "schemes = [\"twitter\"]\n[scheme.nope]\nworker = 1",
            "unknown scheme \"nope\"",
        ),
        (
            "schemes = [\"twitter\"]\n[scheme.ulid]\nworker = 1",
            "[scheme.ulid] is given but ulid is not served",
        ),
        (
            "schemes = [\"twitter\"]\n[scheme.twitter]\nshard = 1",
            "snowflake-twitter: unknown field \"shard\"",
        ),
        (
            "schemes = [\"typeid\"]\nprefix = \"User\"",
            "typeid: prefix: invalid character 'U'",
        ),
    ]);
}

/// A static worker id (the default for identity fields) holds a lease: `/v1/identity` and
/// `/metrics` show it, a second service with the same worker id and state directory is
/// refused naming the first, and the identity is given once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_route_metrics_and_refusals() {
    let mut c = config("schemes = [\"twitter\", \"uuid-v7\"]\nworker = 3\ndatacenter = 1");
    let service = Service::new(&c).unwrap();
    let s = Running::start(service).await;
    let (status, v) = s.get_json("/v1/identity").await;
    assert_eq!(status, StatusCode::OK);
    let lease = &v["leases"][0];
    assert_eq!(lease["scheme"], "snowflake-twitter");
    assert_eq!(
        lease["worker"], 35,
        "datacenter 1 (times 32) plus worker 3: {v}"
    );
    assert_eq!(lease["state"], "held");
    assert_eq!(
        v["leases"].as_array().unwrap().len(),
        1,
        "uuid-v7 takes no identity"
    );
    let (_, text) = s.get("/v1/identity").await;
    assert!(
        text.starts_with("snowflake-twitter: worker 35 token 1 held"),
        "{text}"
    );
    let (_, metrics) = s.get("/metrics").await;
    for line in [
        "idkit_lease_worker_id{scheme=\"snowflake-twitter\"} 35",
        "idkit_lease_fencing_token{scheme=\"snowflake-twitter\"} 1",
        "idkit_lease_state{scheme=\"snowflake-twitter\",state=\"held\"} 1",
        "idkit_generate_errors_total{scheme=\"snowflake-twitter\",kind=\"fenced\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
    assert!(metrics.contains("idkit_lease_high_water_mark_seconds{scheme=\"snowflake-twitter\"}"));

    // The same static worker id and state directory: refused, naming this process.
    c.schemes = vec!["twitter".into()];
    let second = Service::new(&c).unwrap_err().to_string();
    assert!(
        second.starts_with("invalid config: identity: snowflake-twitter: worker id 35"),
        "{second}"
    );
    assert!(
        second.contains(&format!("pid {}", std::process::id())),
        "{second}"
    );
    s.stop().await;

    assert_refused(&[
        (
            "schemes = [\"twitter\"]\nidentity = \"static:5\"\nworker = 3",
            "worker is set and so is identity static:5: give the identity once",
        ),
        (
            "schemes = [\"twitter\"]\nidentity = \"zk://h\"",
            "unknown source \"zk\"",
        ),
        (
            "schemes = [\"tsid\"]\nidentity = \"static:1\"",
            "cannot be fenced by a lease",
        ),
        (
            "schemes = [\"twitter\"]\nidentity = \"static:1024\"",
            "static worker id 1024 does not fit",
        ),
    ]);
}

/// Asserts that each `(toml, words)` service config is refused with an error containing
/// `words`.
fn assert_refused(cases: &[(&str, &str)]) {
    for (toml, words) in cases {
        let err = Service::new(&config(toml)).unwrap_err().to_string();
        assert!(err.contains(words), "{toml:?} was refused with {err:?}");
    }
}

/// Asserts a JSON error of `status` and returns its message.
async fn json_error(r: reqwest::Response, status: StatusCode, what: &str) -> String {
    assert_eq!(r.status(), status, "{what}");
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "{what}: {content_type}"
    );
    let json: Value = r.json().await.unwrap();
    json["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {json}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_edges_answer_as_any_http_server_and_in_one_shape() {
    let s = Running::start(configured(
        r#"schemes = ["twitter", "typeid"]
           max_batch = 100"#,
    ))
    .await;

    // A percent-encoded query reads as its decoded form.
    let (status, body) = s.get("/v1/snowflake-twitter/next?count=%31%30").await;
    assert_eq!(
        (status, body.lines().count()),
        (StatusCode::OK, 10),
        "{body}"
    );
    let (status, body) = s.get("/v1/twitter/next?%63ount=3").await;
    assert_eq!(
        (status, body.lines().count()),
        (StatusCode::OK, 3),
        "{body}"
    );
    let r = s
        .send(reqwest::Method::GET, "/v1/twitter/next?count=%3")
        .await;
    let message = json_error(r, StatusCode::BAD_REQUEST, "broken escape").await;
    assert!(message.contains("malformed query"), "{message}");

    // Framework errors: bad UTF-8 in the path, a wrong method, all in the JSON shape.
    let r = s
        .send(reqwest::Method::GET, "/v1/snowflake-twitter/decode/%FF%FE")
        .await;
    let message = json_error(r, StatusCode::BAD_REQUEST, "bad UTF-8").await;
    assert!(message.contains("UTF-8"), "{message}");
    let r = s.send(reqwest::Method::GET, "/v1/%FF/next").await;
    let status = r.status();
    assert!(status.is_client_error(), "{status}");
    json_error(r, status, "bad UTF-8 in the scheme").await;
    let r = s.send(reqwest::Method::POST, "/v1/twitter/next").await;
    assert!(
        r.headers().contains_key("allow"),
        "405 keeps its Allow header"
    );
    let message = json_error(r, StatusCode::METHOD_NOT_ALLOWED, "POST").await;
    assert_eq!(message, "method not allowed");
    let r = s.send(reqwest::Method::DELETE, "/metrics").await;
    json_error(r, StatusCode::METHOD_NOT_ALLOWED, "DELETE").await;
    let long = "x".repeat(3000);
    let r = s
        .send(reqwest::Method::GET, &format!("/v1/twitter/decode/{long}"))
        .await;
    json_error(r, StatusCode::URI_TOO_LONG, "long target").await;

    // typeid served without a prefix decodes a TypeID of any type, as `idkit decode` does,
    // and still issues ids without a prefix.
    let (status, json) = s
        .get_json("/v1/typeid/decode/user_01h455vb4pex5vsknk084sn02q")
        .await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(json["fields"]["prefix"], "user");
    assert_eq!(json["id"], "user_01h455vb4pex5vsknk084sn02q");
    let (status, body) = s.get("/v1/typeid/next").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!body.contains('_'), "{body}");
    s.stop().await;
}

/// The value of an unlabelled metric.
async fn metric(s: &Running, name: &str) -> u64 {
    let (_, text) = s.get("/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_closed_and_connections_capped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = Running::start(configured(
        r#"schemes = ["twitter"]
           header_timeout_ms = 300
           max_connections = 20"#,
    ))
    .await;
    let addr = s.base.trim_start_matches("http://").to_owned();

    // Ten clients that open a connection and never finish their headers (one sends half a
    // request line): each is closed after the timeout, and counted.
    let mut slow = Vec::new();
    for i in 0..10 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        if i == 0 {
            stream.write_all(b"GET /v1/twitter/ne").await.unwrap();
        }
        slow.push(stream);
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(metric(&s, "idkit_connections_open").await >= 10);
    for stream in &mut slow {
        let mut buf = [0u8; 256];
        let read = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("the server closes a connection whose headers never came");
        // Closed (0 bytes or a reset), perhaps after a 408 answer.
        if let Ok(n) = read {
            let text = String::from_utf8_lossy(&buf[..n]);
            assert!(n == 0 || text.starts_with("HTTP/1.1 408"), "{text}");
        }
    }
    // The server counts a timeout after it closed the connection: wait for the count.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while metric(&s, "idkit_header_timeouts_total").await < 10
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(metric(&s, "idkit_header_timeouts_total").await >= 10);

    // At the cap, the next connection is closed at once, and the service still answers once
    // there is room again.
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let mut extra = tokio::net::TcpStream::connect(&addr).await.unwrap();
    extra
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .ok();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), extra.read(&mut buf))
        .await
        .expect("refused at once")
        .unwrap_or(0);
    assert_eq!(n, 0, "the 21st connection is closed unanswered");
    drop(held);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(metric(&s, "idkit_connections_refused_total").await >= 1);
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);

    assert_refused(&[
        (
            "max_connections = 0",
            "max_connections: 0 is out of range: expected 1 to 1000000",
        ),
        (
            "max_connections = 1000001",
            "max_connections: 1000001 is out of range: expected 1 to 1000000",
        ),
        (
            "header_timeout_ms = 5",
            "header_timeout_ms: 5 is out of range: expected 100 to 600000",
        ),
        (
            "header_timeout_ms = 600001",
            "header_timeout_ms: 600001 is out of range: expected 100 to 600000",
        ),
    ]);
    s.stop().await;
}

/// A capped layout's large batch awaits its ticks: on a runtime with one executor thread,
/// other requests are answered while it waits (before the async generation API, such a
/// batch slept on the thread, or was moved to a blocking thread).
#[tokio::test(flavor = "current_thread")]
async fn a_capped_batch_awaits_its_ticks_without_holding_the_executor() {
    // Sonyflake: 256 ids per 10 ms tick; 20,000 ids take 78 ticks, about 0.8 s.
    let s = Running::start(configured(
        "schemes = [\"sonyflake\"]\nmachine = 5\nmax_batch = 20000",
    ))
    .await;
    let batch = {
        let client = s.client.clone();
        let url = format!("{}/v1/sonyflake/next?count=20000", s.base);
        tokio::spawn(async move { client.get(url).send().await.unwrap().text().await.unwrap() })
    };
    // Let the batch start, then ask for single ids while it waits.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let mut answered_meanwhile = 0;
    while !batch.is_finished() {
        let (status, _) = s.get("/healthz").await;
        assert_eq!(status, StatusCode::OK);
        answered_meanwhile += 1;
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let body = batch.await.unwrap();
    let ids: Vec<u64> = body.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 20_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "batch not increasing");
    assert!(
        answered_meanwhile >= 10,
        "only {answered_meanwhile} requests answered while the batch waited"
    );
    s.stop().await;
}

/// The README's example `idkit.toml` starts a service as written (its directories moved to
/// a scratch directory of the test's own), and serves what it says.
#[tokio::test]
async fn the_readmes_configuration_starts_a_service() {
    let readme = include_str!("../README.md");
    let toml = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a toml block");
    let mut c = Config::from_toml(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let dir = idkit_testkit::Scratch::new("readme-config");
    c.identity.state_dir = Some(dir.path().to_owned());
    c.settings
        .set_option("range-store", dir.join("ranges.db").to_string_lossy());
    let service = Service::new(&c).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let s = Running::start(service).await;
    let (status, listed) = s.get("/v1/schemes").await;
    assert_eq!(status, StatusCode::OK);
    for scheme in ["snowflake-twitter", "snowflake-discord", "typeid", "range"] {
        assert!(listed.contains(scheme), "{scheme} not served: {listed}");
        let (status, id) = s.get(&format!("/v1/{scheme}/next")).await;
        assert_eq!(status, StatusCode::OK, "{scheme}: {id}");
    }
    // [scheme.typeid]'s prefix, and the top-level worker and datacenter.
    assert!(s.get("/v1/typeid/next").await.1.starts_with("user_"));
    let (_, twitter) = s.get("/v1/snowflake-twitter/next").await;
    let (_, decoded) = s
        .get(&format!("/v1/snowflake-twitter/decode/{}", twitter.trim()))
        .await;
    assert!(
        decoded.contains("worker") && decoded.contains('3'),
        "{decoded}"
    );
    s.stop().await;
}
