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

/// Another connection with the namespace's row locked in a transaction left open; dropped,
/// it closes its connection and the server rolls the transaction back.
fn row_locked(ns: &str) -> postgres::Client {
    let mut holder = postgres::Client::connect(&params(), postgres::NoTls).unwrap();
    holder.batch_execute("BEGIN").unwrap();
    let locked = holder
        .execute(
            "SELECT 1 FROM idkit_ranges WHERE namespace = $1 FOR UPDATE",
            &[&ns],
        )
        .unwrap();
    assert_eq!(locked, 1, "the namespace has no row to lock");
    holder
}

/// Another connection holds the namespace's row locked while a lease is out: PostgreSQL
/// waits for such a lock for ever by default (`lock_timeout` 0), so the store sets 10 s on
/// its connection. The lease is given up then, the allocator's next id fails at once naming
/// the lock, and once the transaction ends the allocator recovers by itself.
#[test]
fn a_lease_behind_a_locked_row_is_given_up_then_recovered() {
    let ns = namespace("locked");
    let a = common::small_blocks(store(), &ns);
    let (took, named) = common::cut_off(&a, || row_locked(&ns));
    assert!(named.to_string().contains("lock timeout"), "{named}");
    assert!(
        took >= Duration::from_secs(9),
        "given up after {took:?}: {named}"
    );
    eprintln!("the lease behind the locked row was given up after {took:?}: {named}");
}

/// A `lock_timeout` the connection parameters set is kept (here 1 s, through `options`).
#[test]
fn a_lock_timeout_the_parameters_set_is_kept() {
    let ns = namespace("locked-1s");
    let store = PostgresStore::new(&format!("{} options='-c lock_timeout=1s'", params()));
    let a = common::small_blocks(store, &ns);
    let (took, named) = common::cut_off(&a, || row_locked(&ns));
    assert!(named.to_string().contains("lock timeout"), "{named}");
    assert!(
        took < Duration::from_secs(9),
        "given up after {took:?}: {named}"
    );
}
