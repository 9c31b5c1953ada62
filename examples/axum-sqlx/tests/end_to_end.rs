//! The example service as a user runs it: the built binary on a loopback port, against
//! SQLite (a file) and PostgreSQL (`IDKIT_TEST_PG_URL`, feature `live-tests`; scripts/test.sh
//! starts the server), requests over HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The service, killed on drop.
struct Service {
    child: Child,
    base: String,
}

impl Service {
    fn start(database_url: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idkit-example-axum-sqlx"))
            .args([
                "--database-url",
                database_url,
                "--listen",
                "127.0.0.1:0",
                "--worker",
                "7",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self { child, base }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn run(database_url: &str) {
    let service = Service::start(database_url);
    let http = reqwest::Client::new();
    let create = |name: &'static str| {
        http.post(format!("{}/users", service.base))
            .json(&serde_json::json!({ "name": name }))
            .send()
    };
    let get = |path: String| http.get(format!("{}{path}", service.base)).send();

    let res = create("ada").await.unwrap();
    assert_eq!(res.status(), 201);
    let ada: Value = res.json().await.unwrap();
    // The id is a JSON string, every digit kept, above 2^53 where a number would lose some.
    let id = ada["id"]
        .as_str()
        .unwrap_or_else(|| panic!("id not a string: {ada}"));
    let word: u64 = id.parse().unwrap();
    assert!(word > 1 << 53, "{word}");
    // Worker 7 as configured: bits 12..17 of a Twitter id.
    assert_eq!((word >> 12) & 0x1f, 7);

    let got: Value = get(format!("/users/{id}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got, ada, "read back from the database");

    let grace: Value = create("grace").await.unwrap().json().await.unwrap();
    let list: Value = get("/users".into()).await.unwrap().json().await.unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap())
        .collect();
    let (first, second) = (ada["id"].as_str().unwrap(), grace["id"].as_str().unwrap());
    let (a, b) = (
        ids.iter().position(|i| *i == first).unwrap(),
        ids.iter().position(|i| *i == second).unwrap(),
    );
    assert!(
        a < b,
        "ORDER BY id lists users in the order they were made: {list}"
    );

    let res = get("/users/not-an-id".into()).await.unwrap();
    assert_eq!(res.status(), 400);
    let res = get("/users/12345".into()).await.unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn sqlite_end_to_end() {
    let dir = std::env::temp_dir().join(format!("idkit-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("users.db").display());
    run(&url).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "live-tests")]
#[tokio::test]
async fn postgres_end_to_end() {
    let url = std::env::var("IDKIT_TEST_PG_URL")
        .expect("IDKIT_TEST_PG_URL is not set: scripts/test.sh starts PostgreSQL and sets it");
    run(&url).await;
}
