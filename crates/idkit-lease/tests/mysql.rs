//! The MySQL / MariaDB backend on a real server on loopback. `scripts/test.sh` starts a
//! throwaway MariaDB (scripts/mariadb-server.sh) and sets `IDKIT_TEST_MYSQL_URL`. Without it
//! this test fails: it never passes by skipping. It builds with the feature `live-tests`.
#![cfg(feature = "live-tests")]

mod common;

#[test]
fn mysql_leases_pass_the_scenario() {
    common::sql_scenario("IDKIT_TEST_MYSQL_URL", "a MariaDB server");
}
