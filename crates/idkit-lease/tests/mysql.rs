//! The MySQL / MariaDB backend on a real server on loopback. `scripts/test.sh` starts a
//! throwaway MariaDB (scripts/mariadb-server.sh) and sets `IDKIT_TEST_MYSQL_URL`. Without it
//! this test fails: it never passes by skipping. It builds with the feature `live-tests`.
#![cfg(feature = "live-tests")]

mod common;

#[test]
fn mysql_leases_pass_the_scenario() {
    let url = std::env::var("IDKIT_TEST_MYSQL_URL").expect(
        "IDKIT_TEST_MYSQL_URL is not set: run scripts/test.sh, which starts a MariaDB server",
    );
    let ns = common::unique("t");
    common::scenario(&format!("{url}?namespace={ns}&ttl_ms=1500"));
}
