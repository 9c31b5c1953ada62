//! The etcd backend on a real server on loopback. `scripts/test.sh` starts a throwaway
//! etcd (scripts/etcd-server.sh) and sets `IDKIT_TEST_ETCD` (`host:port`). Without it this
//! test fails: it never passes by skipping. It builds with the feature `live-tests`, which
//! `scripts/test.sh` turns on.
#![cfg(feature = "live-tests")]

mod common;

#[test]
fn etcd_leases_pass_the_scenario() {
    let endpoint = std::env::var("IDKIT_TEST_ETCD")
        .expect("IDKIT_TEST_ETCD is not set: run scripts/test.sh, which starts an etcd server");
    let ns = common::unique("t");
    // etcd's TTLs are whole seconds: 2 s.
    common::scenario(&format!("etcd://{endpoint}/{ns}?ttl_ms=2000"));
}
