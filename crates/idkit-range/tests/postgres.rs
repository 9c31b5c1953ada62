//! The allocator on a real PostgreSQL server on loopback. `scripts/test.sh` starts a
//! throwaway cluster (scripts/pg-cluster.sh) and sets `IDKIT_TEST_PG` (connection
//! parameters) and `IDKIT_TEST_PG_DIR` (the cluster, for the outage test). Without them
//! these tests fail: they never pass by skipping. They build with the feature `live-tests`,
//! which `scripts/test.sh` turns on. The tests themselves are `server_suite!`'s, shared
//! with the MySQL store.
#![cfg(feature = "live-tests")]

mod common;
mod server_suite;

use idkit_range::PostgresStore;

fn params() -> String {
    std::env::var("IDKIT_TEST_PG")
        .expect("IDKIT_TEST_PG is not set: run scripts/test.sh, which starts a PostgreSQL cluster")
}

fn store() -> PostgresStore {
    PostgresStore::new(&params())
}

fn corrupt(ns: &str) {
    let mut client = postgres::Client::connect(&params(), postgres::NoTls).unwrap();
    client
        .execute(
            "UPDATE idkit_ranges SET max_id = -500 WHERE namespace = $1",
            &[&ns],
        )
        .unwrap();
}

fn cluster(action: &str) {
    let dir = std::env::var("IDKIT_TEST_PG_DIR").expect("IDKIT_TEST_PG_DIR is not set");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/pg-cluster.sh");
    let status = Command::new(script).args([action, &dir]).status().unwrap();
    assert!(status.success(), "pg-cluster.sh {action} failed");
}

/// The server's port, from `IDKIT_TEST_PG`'s `port=`.
fn port() -> u16 {
    let params = params();
    let port = params
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("port="))
        .expect("IDKIT_TEST_PG names no port");
    port.parse().expect("IDKIT_TEST_PG's port")
}

server_suite!(
    child: pg_child_process_entry,
    store: store,
    corrupt: corrupt,
    server: cluster,
    port: port
);
