//! Paths to a repeated id in the PostgreSQL extension that a review found, each walked in
//! the server scripts/test.sh starts (`IDKIT_TEST_PG_URL`: the extension preloaded,
//! `idkit.worker_id = 1`): generators that make ids from one set share one word in shared
//! memory, whatever the worker argument of a layout without worker bits and whatever its
//! fields are called.
#![cfg(feature = "pg-extension")]

use postgres::{Client, NoTls};

fn client() -> Client {
    let url = std::env::var("IDKIT_TEST_PG_URL")
        .unwrap_or_else(|_| panic!("IDKIT_TEST_PG_URL is not set: run scripts/test.sh"));
    let mut c = Client::connect(&url, NoTls).unwrap();
    c.batch_execute("CREATE EXTENSION IF NOT EXISTS idkit")
        .unwrap();
    c
}

/// (distinct ids, all ids) of `select` over `i` from 1 to 20,000, in one statement.
fn counts(c: &mut Client, select: &str) -> (i64, i64) {
    let row = c
        .query_one(
            &format!(
                "SELECT count(DISTINCT id), count(*)
                 FROM (SELECT {select} AS id FROM generate_series(1, 20000) i) ids"
            ),
            &[],
        )
        .unwrap_or_else(|e| panic!("{select}: {e}"));
    (row.get(0), row.get(1))
}

#[test]
fn a_layout_without_worker_bits_is_one_generator_whatever_the_worker() {
    let mut c = client();
    for select in [
        "idkit_snowflake('snowflake-mastodon', (i % 2) + 1)",
        // The server's idkit.worker_id (1) beside a call's worker.
        "CASE i % 2 WHEN 0 THEN idkit_snowflake('mastodon') ELSE idkit_snowflake('mastodon', 3) END",
    ] {
        assert_eq!(counts(&mut c, select), (20_000, 20_000), "{select}");
    }
}

#[test]
fn layouts_that_make_the_same_ids_under_other_names_share_one_word() {
    let mut c = client();
    for select in [
        // Twitter's worker 33 is datacenter 1, worker 1.
        "CASE i % 2 WHEN 0 THEN idkit_snowflake('snowflake-twitter', 33)
         ELSE idkit_snowflake_custom('time:41,dc:5,node:5,sequence:12', 1288834974657, 1, 33) END",
        // Discord calls its sequence `increment`.
        "CASE i % 2 WHEN 0 THEN idkit_snowflake('snowflake-discord', 5)
         ELSE idkit_snowflake_custom('time:42,worker:5,process:5,sequence:12', 1420070400000, 1, 5) END",
    ] {
        assert_eq!(counts(&mut c, select), (20_000, 20_000), "{select}");
    }
}
