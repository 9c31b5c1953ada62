//! The PostgreSQL backend on a real server on loopback. `scripts/test.sh` starts a
//! throwaway cluster (scripts/pg-cluster.sh) and sets `IDKIT_TEST_PG_URL`. Without it
//! this test fails: it never passes by skipping. It builds with the feature `live-tests`,
//! which `scripts/test.sh` turns on.
#![cfg(feature = "live-tests")]

mod common;

#[test]
fn postgres_leases_pass_the_scenario() {
    common::sql_scenario("IDKIT_TEST_PG_URL", "a PostgreSQL cluster");
}
