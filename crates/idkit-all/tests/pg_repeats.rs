//! Paths to a repeated id in the PostgreSQL extension that a review found, each walked in
//! the server scripts/test.sh starts (`IDKIT_TEST_PG_URL`: the extension preloaded,
//! `idkit.worker_id = 1`): generators that make ids from one set share one word in shared
//! memory, whatever their fields are called; a layout without worker bits refuses a call's
//! worker argument, which would mean nothing.
#![cfg(feature = "pg-extension")]

use std::time::Duration;

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
fn a_layout_without_worker_bits_is_one_generator_and_refuses_a_worker() {
    let mut c = client();
    // By name, alias and fields (the server's idkit.worker_id, 1, ignored by it).
    let select = "CASE i % 3 WHEN 0 THEN idkit_snowflake('mastodon')
                              WHEN 1 THEN idkit_snowflake('snowflake-mastodon')
                              ELSE idkit_snowflake_custom('time:48,sequence:16', 0, 1) END";
    assert_eq!(counts(&mut c, select), (20_000, 20_000), "{select}");
    // A call's worker would mean nothing (and once made a generator per worker): refused,
    // the message naming the call that works.
    for (select, works) in [
        (
            "idkit_snowflake('snowflake-mastodon', (i % 2) + 1)",
            "idkit_snowflake('snowflake-mastodon')",
        ),
        (
            "CASE i % 2 WHEN 0 THEN idkit_snowflake('mastodon') ELSE idkit_snowflake('mastodon', 3) END",
            "idkit_snowflake('snowflake-mastodon')",
        ),
        (
            "idkit_snowflake_custom('time:48,sequence:16', 0, 1, -5)",
            "idkit_snowflake_custom('time:48,sequence:16', 0, 1)",
        ),
    ] {
        let e = c
            .query_one(
                &format!("SELECT count({select}) FROM generate_series(1, 10) i"),
                &[],
            )
            .unwrap_err();
        let said = e
            .as_db_error()
            .map(|d| d.message().to_owned())
            .unwrap_or_default();
        assert!(
            said.contains("no worker bits") && said.contains(&format!("call {works} without")),
            "{select}: {said}"
        );
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

#[test]
fn reading_ids_of_thousands_of_layouts_keeps_nothing_per_call() {
    // The reading functions are immutable and any role may call them with any layout: one
    // backend reads ids of 6,000 layouts (a backend once kept 4,096 field names, and
    // refused every new layout after them), and names come back.
    let mut c = client();
    let found: i64 = c
        .query_one(
            "SELECT count(*) FROM generate_series(1, 6000) i
             WHERE idkit_field((5::bigint << 23) | (42 << 10) | 7,
                               'time:41,shard' || i || ':13,sequence:10', 0, 1,
                               'shard' || i) = 42",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(found, 6_000);
    let json: String = c
        .query_one(
            "SELECT idkit_decode((5::bigint << 23) | (42 << 10) | 7,
                                 'time:41,shard9:13,sequence:10', 0, 1)::text",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(json.contains("\"shard9\": 42"), "{json}");
    let e = c
        .query_one(
            "SELECT idkit_field(1, 'time:41,shard:13,sequence:10', 0, 1, 'worker')",
            &[],
        )
        .unwrap_err();
    let said = e
        .as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_default();
    assert!(
        said.contains("no field worker: its fields are shard, sequence"),
        "{said}"
    );
}

#[test]
fn a_null_argument_gives_null_from_the_generators_too() {
    // As from the reading functions, and as the SQLite functions' (idkit-sqlite's
    // functions.rs): once an error with a backtrace for idkit_snowflake(NULL).
    let mut c = client();
    for sql in [
        "SELECT idkit_typeid(NULL)::text",
        "SELECT idkit_snowflake(NULL)",
        "SELECT idkit_snowflake(NULL, 7)",
        "SELECT idkit_snowflake_custom(NULL, 0)",
        "SELECT idkit_snowflake_custom('time:41,sequence:22', NULL)",
        "SELECT idkit_snowflake_custom('time:41,sequence:22', 0, NULL)",
        "SELECT idkit_ulid_highest(NULL)::text",
    ] {
        let null: bool = c
            .query_one(&format!("SELECT ({sql}) IS NULL"), &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .get(0);
        assert!(null, "{sql}");
    }
}

#[test]
fn range_and_auto_increment_say_what_their_ids_are() {
    // Listed by `idkit schemes`; the same message as the SQLite functions'.
    let mut c = client();
    for scheme in ["range", "auto-increment"] {
        let e = c
            .query_one(&format!("SELECT idkit_time(5::bigint, '{scheme}')"), &[])
            .unwrap_err();
        let said = e
            .as_db_error()
            .map(|d| d.message().to_owned())
            .unwrap_or_default();
        assert!(
            said.contains("plain integers that a store hands out"),
            "{said}"
        );
    }
}

// ----- the synchronous standby, and the mark across clusters -----

mod pg_server;
use pg_server::{Server, message};

/// Runs `sql` on a session of `server` of its own in a thread, with a deadline: its result,
/// or `None` when it had not ended by then (a backend no cancel reaches).
fn within(
    server: &Server,
    setup: &'static str,
    sql: &'static str,
    deadline: Duration,
) -> Option<Result<(), String>> {
    let mut c = server.client();
    c.batch_execute(setup).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(c.batch_execute(sql).map_err(|e| message(&e)));
    });
    rx.recv_timeout(deadline).ok()
}

#[test]
fn a_mark_no_synchronous_standby_acknowledged_gives_no_id_whatever_the_session_says() {
    // A synchronous standby named but never there: every wait for it waits until cancelled.
    // Named after the extension is created: with it named at the start, every commit
    // (CREATE EXTENSION's among them) would wait.
    let server = Server::start("syncrep", "");
    let mut admin = server.client();
    // One statement a call: ALTER SYSTEM refuses the transaction a batch runs in.
    admin
        .batch_execute("ALTER SYSTEM SET synchronous_standby_names = 'idkit_absent'")
        .unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    // The session's synchronous_commit = off once skipped the wait: the first id after
    // the start (its mark not yet written) came back without the standby.
    let refused = within(
        &server,
        "SET synchronous_commit = off; SET statement_timeout = '1s'",
        "SELECT idkit_ulid()",
        Duration::from_secs(20),
    )
    .expect("a statement timeout ends the wait");
    let said = refused.expect_err("an id past a mark no standby acknowledged");
    assert!(
        said.contains("not acknowledged by the synchronous standbys"),
        "{said}"
    );
    // One backend waits for the standby with no timeout; another, whose id needs the same
    // mark, is still reached by its cancel (the wait does not hold the lock it waits on).
    let mut blocked = server.client();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = blocked.batch_execute("SELECT idkit_uuidv7()");
        let _ = tx.send(result.map_err(|e| message(&e)));
    });
    std::thread::sleep(Duration::from_millis(500));
    let second = within(
        &server,
        "SET statement_timeout = '1s'",
        "SELECT idkit_snowflake('mastodon')",
        Duration::from_secs(20),
    )
    .expect("a second backend waiting for the mark is reached by its statement timeout");
    assert!(second.is_err(), "an id came back without the standby");
    // The first is cancelled too, and says so.
    admin
        .batch_execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
             WHERE query = 'SELECT idkit_uuidv7()' AND pid <> pg_backend_pid()",
        )
        .unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the cancel reached the backend waiting for the standby");
    assert!(first.unwrap_err().contains("not acknowledged"));
    // No mark was published: with the standby taken out of the list, ids start above
    // whatever was written, and the mark is past them.
    let mark: i64 = admin.query_one("SELECT idkit_mark()", &[]).unwrap().get(0);
    assert_eq!(mark, 0, "a mark no standby acknowledged was published");
    admin
        .batch_execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        .unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut c = server.client();
    let ms: i64 = c
        .query_one(
            "SELECT (extract(epoch FROM idkit_time(idkit_ulid())) * 1000)::bigint",
            &[],
        )
        .map(|r| r.get(0))
        .unwrap_or_else(|e| panic!("{}", message(&e)));
    let mark: i64 = c.query_one("SELECT idkit_mark()", &[]).unwrap().get(0);
    assert!(ms > 0 && mark >= ms, "mark {mark}, id at {ms}");
}

#[test]
fn a_new_cluster_given_the_old_ones_mark_starts_above_its_ids() {
    // The old cluster makes ids far ahead of the clock (as after a clock set back), so that
    // the new one, started from the clock, would fall below them.
    let old = Server::start("mark-old", "-c idkit.max_clock_behind_ms=600000");
    let mut c = old.client();
    c.batch_execute("SELECT idkit_ulid()").unwrap();
    old.set_clock("-120s");
    pg_server::wait_for_clock(&mut c, -120.0);
    let last: String = c
        .query_one("SELECT idkit_ulid()::text", &[])
        .unwrap()
        .get(0);
    let mark: i64 = c.query_one("SELECT idkit_mark()", &[]).unwrap().get(0);
    let last_ms = last.parse::<idkit_ulid::Ulid>().unwrap().timestamp_ms();
    assert!(u64::try_from(mark).unwrap() >= last_ms);
    // pg_upgrade, a logical replica, a restore: a new cluster with no mark of its own, its
    // clock 120 s behind the old one's last id.
    let new = Server::start("mark-new", "-c idkit.max_clock_behind_ms=600000");
    let mut n = new.client();
    // Only a superuser raises it.
    n.batch_execute("DROP ROLE IF EXISTS idkit_app; CREATE ROLE idkit_app")
        .unwrap();
    let denied = n
        .batch_execute("SET ROLE idkit_app; SELECT idkit_raise_mark(1)")
        .unwrap_err();
    assert!(
        message(&denied).contains("permission denied"),
        "{}",
        message(&denied)
    );
    n.batch_execute("RESET ROLE").unwrap();
    let raised: i64 = n
        .query_one("SELECT idkit_raise_mark($1)", &[&mark])
        .unwrap()
        .get(0);
    assert_eq!(raised, mark);
    let first: String = n
        .query_one("SELECT idkit_ulid()::text", &[])
        .unwrap()
        .get(0);
    assert!(
        first > last,
        "the new cluster's {first} is not above the old one's {last}"
    );
    // A lower mark leaves it as it is.
    let kept: i64 = n
        .query_one("SELECT idkit_raise_mark(5)", &[])
        .unwrap()
        .get(0);
    assert!(kept >= mark);
}
