//! The extension's ids across what servers go through: a clean restart and an immediate
//! stop (crash recovery) with the host's clock behind, by less than and by more than the
//! mark's window and the generators' bound; a crashed backend (the postmaster resets
//! shared memory); the clock stepped back while the server runs; and failover to a
//! streaming standby (`pg_basebackup -R` on loopback) whose clock is behind the primary's.
//!
//! Each server is a throwaway one of these tests' own (scripts/pg-cluster.sh) with the
//! extension preloaded and libfaketime (Debian's `faketime`, which scripts/test.sh
//! installs) preloaded into PostgreSQL, its offset read from a file that a test rewrites.
//! Every case asserts that no id repeats and none sorts at or below the last id the server
//! issued before, for every generator: ULID, UUIDv7, TypeID and every Snowflake layout.
#![cfg(feature = "pg-extension")]

use std::process::Command;
use std::time::Duration;

use postgres::{Client, NoTls};

mod pg_server;
use pg_server::{Server, free_port, message, scripts, wait_for_clock};

/// Every generator of the extension, as an SQL expression, with the expression that makes
/// its id a text that sorts as the ids do (`COLLATE "C"`, byte order).
const GENERATORS: &[(&str, &str)] = &[
    ("idkit_ulid()", "x::text"),
    ("idkit_uuidv7()", "x::text"),
    ("idkit_typeid('user')", "x::text"),
    (
        "idkit_snowflake('snowflake-twitter')",
        "lpad(x::text, 20, '0')",
    ),
    (
        "idkit_snowflake('snowflake-discord')",
        "lpad(x::text, 20, '0')",
    ),
    (
        "idkit_snowflake('snowflake-instagram')",
        "lpad(x::text, 20, '0')",
    ),
    (
        "idkit_snowflake('snowflake-instagram', worker => 4321)",
        "lpad(x::text, 20, '0')",
    ),
    ("idkit_snowflake('sonyflake')", "lpad(x::text, 20, '0')"),
    (
        "idkit_snowflake('snowflake-mastodon')",
        "lpad(x::text, 20, '0')",
    ),
    (
        "idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, worker => 7)",
        "lpad(x::text, 20, '0')",
    ),
];

/// Ids each generator makes in one batch: enough to span many ticks of every layout
/// (Sonyflake makes 256 ids in 10 ms).
const BATCH: u32 = 5_000;

/// The lowest, the highest and the count of distinct ids of one batch of each generator
/// (in the order of [`GENERATORS`]), made in one session.
fn batch(c: &mut Client) -> Vec<(String, String, i64)> {
    GENERATORS
        .iter()
        .map(|(generator, key)| {
            let sql = format!(
                "SELECT min(k COLLATE \"C\"), max(k COLLATE \"C\"), count(DISTINCT k)
                 FROM (SELECT {key} k FROM (SELECT {generator} x
                       FROM generate_series(1, {BATCH})) ids) keys"
            );
            let row = c
                .query_one(&sql, &[])
                .unwrap_or_else(|e| panic!("{generator}: {}", message(&e)));
            (row.get(0), row.get(1), row.get(2))
        })
        .collect()
}

/// Asserts that every generator's batch `after` is distinct and starts above `before`'s
/// highest id: nothing repeated, nothing at or below an id issued before.
#[track_caller]
fn assert_above(case: &str, before: &[(String, String, i64)], after: &[(String, String, i64)]) {
    for (((generator, _), old), new) in GENERATORS.iter().zip(before).zip(after) {
        assert_eq!(
            new.2,
            i64::from(BATCH),
            "{case}: {generator} repeated ids in its batch"
        );
        assert!(
            new.0 > old.1,
            "{case}: {generator} issued {} after {}: an id at or below one issued before",
            new.0,
            old.1
        );
    }
}

#[test]
fn restarts_and_crashes_with_the_clock_behind_repeat_nothing() {
    let server = Server::start("restart", "");
    let mut c = server.client();
    let mut last = batch(&mut c);
    drop(c);
    // (how the server goes down, the clock's offset when it comes back): behind by more
    // than the mark's 1 s window and by less, within the generators' 10 s bound.
    for (stop, offset) in [
        ("stop", "-3s"),
        ("crash", "-3s"),
        ("crash", "-0.4s"),
        ("stop", "-0.4s"),
    ] {
        server.run(stop);
        server.set_clock(offset);
        server.run("restart-server");
        let mut c = server.client();
        wait_for_clock(&mut c, offset.trim_end_matches('s').parse().unwrap());
        let next = batch(&mut c);
        assert_above(&format!("{stop}, clock {offset}"), &last, &next);
        last = next;
    }

    // A crashed backend: the postmaster ends every session, resets shared memory and
    // recovers from the WAL; the clock is behind by less than a window.
    server.set_clock("-0.5s");
    let mut c = server.client();
    wait_for_clock(&mut c, -0.5);
    let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    drop(c);
    std::thread::sleep(Duration::from_millis(500));
    let mut c = server.client();
    let next = batch(&mut c);
    assert_above("a backend killed, clock -0.5s", &last, &next);
    assert!(server.log().contains("terminated by signal 9"));
}

#[test]
fn a_clock_stepped_back_while_running_repeats_nothing() {
    let server = Server::start("step", "");
    let mut c = server.client();
    let before = batch(&mut c);
    server.set_clock("-2s");
    wait_for_clock(&mut c, -2.0);
    let after = batch(&mut c);
    assert_above("clock stepped back 2 s", &before, &after);
}

#[test]
fn a_clock_behind_past_the_bound_is_refused_and_then_nothing_repeats() {
    let server = Server::start("bound", "-c idkit.max_clock_behind_ms=5000");
    let mut c = server.client();
    let before = batch(&mut c);
    drop(c);
    server.run("stop");
    server.set_clock("-30s");
    server.run("restart-server");
    let mut c = server.client();
    wait_for_clock(&mut c, -30.0);
    for (generator, _) in GENERATORS {
        let e = c
            .query_one(&format!("SELECT {generator}"), &[])
            .err()
            .unwrap_or_else(|| panic!("{generator} made an id with the clock 30 s behind"));
        let text = message(&e);
        assert!(
            text.contains("the clock reads") && text.contains("high-water mark"),
            "{generator}: {text}"
        );
    }
    // The clock set right: ids start above the mark.
    server.set_clock("+0");
    wait_for_clock(&mut c, 0.0);
    let after = batch(&mut c);
    assert_above("after the clock was set right", &before, &after);
}

#[test]
fn a_promoted_standby_with_its_clock_behind_starts_above_the_primary() {
    let primary = Server::start("primary", "");
    let mut c = primary.client();
    c.query_one("SELECT 1", &[]).unwrap();

    // The standby: a base backup of the primary, streaming from it, its clock 6 s behind.
    let standby = Server {
        dir: std::env::temp_dir().join(format!("idkit-pgd-standby-{}", std::process::id())),
        port: free_port(),
    };
    let _ = std::fs::remove_dir_all(&standby.dir);
    std::fs::create_dir_all(&standby.dir).unwrap();
    let status = Command::new(scripts().join("pg-cluster.sh"))
        .arg("standby")
        .arg(&standby.dir)
        .arg(standby.port.to_string())
        .arg(&primary.dir)
        .status()
        .unwrap();
    assert!(status.success(), "the standby was not made");
    standby.set_clock("-6s");
    standby.run("restart-server");
    let mut s = standby.client_in_recovery();

    // On the standby the generators refuse, saying why.
    let e = s.query_one("SELECT idkit_ulid()", &[]).unwrap_err();
    assert!(message(&e).contains("standby"), "{}", message(&e));

    // The primary makes ids, then is killed; the standby is promoted.
    let last = batch(&mut c);
    let lsn: String = c
        .query_one("SELECT pg_current_wal_flush_lsn()::text", &[])
        .unwrap()
        .get(0);
    wait_for_replay(&mut s, &lsn);
    drop(c);
    primary.run("crash");
    s.query_one("SELECT pg_promote()", &[]).unwrap();
    drop(s);
    let mut p = standby.client();
    wait_for_clock(&mut p, -6.0);
    let next = batch(&mut p);
    assert_above("promoted standby, clock -6s", &last, &next);
}

impl Server {
    /// A session on a standby (no CREATE EXTENSION: it is read-only and has the primary's).
    fn client_in_recovery(&self) -> Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        for _ in 0..100 {
            if let Ok(c) = Client::connect(&url, NoTls) {
                return c;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("cannot connect to the standby on port {}", self.port);
    }
}

/// Waits until the standby has replayed the primary's WAL up to `lsn`: what an
/// asynchronous standby on loopback has within milliseconds.
fn wait_for_replay(s: &mut Client, lsn: &str) {
    for _ in 0..200 {
        let done: bool = s
            .query_one(
                "SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn",
                &[&lsn],
            )
            .unwrap()
            .get(0);
        if done {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the standby did not replay up to {lsn}");
}

#[test]
fn logical_shards_as_schemas_and_thousands_of_shards_and_a_full_table_is_refused() {
    let server = Server::start("shards", "");
    let mut c = server.client();
    // 5,000 logical shards on one server, Instagram's way: each id names its shard.
    let row = c
        .query_one(
            "SELECT count(*), count(DISTINCT id),
                    bool_and(idkit_field(id, 'snowflake-instagram', 'shard') = shard)
             FROM (SELECT shard, idkit_snowflake('instagram', worker => shard) id
                   FROM generate_series(0, 4999) shard, generate_series(1, 3)) ids",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 15_000);
    assert_eq!(row.get::<_, i64>(1), 15_000);
    assert!(row.get::<_, bool>(2));
    // Three logical shards as three schemas, each table's default naming its own shard, as
    // Instagram laid them out; four sessions insert into all three at once.
    for shard in 1..=3 {
        c.batch_execute(&format!(
            "CREATE SCHEMA shard_{shard};
             CREATE TABLE shard_{shard}.likes (
                 id bigint PRIMARY KEY
                     DEFAULT idkit_snowflake('snowflake-instagram', worker => {shard}),
                 n int NOT NULL)"
        ))
        .unwrap();
    }
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let mut c = server.client();
                for shard in 1..=3 {
                    c.batch_execute(&format!(
                        "INSERT INTO shard_{shard}.likes (n) SELECT g FROM generate_series(1, 5000) g"
                    ))
                    .unwrap();
                }
            });
        }
    });
    for shard in 1..=3_i64 {
        let row = c
            .query_one(
                &format!(
                    "SELECT count(*), count(DISTINCT id),
                            bool_and(idkit_field(id, 'snowflake-instagram', 'shard') = $1)
                     FROM shard_{shard}.likes"
                ),
                &[&shard],
            )
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 20_000, "shard {shard}");
        assert_eq!(row.get::<_, i64>(1), 20_000, "shard {shard}: an id twice");
        assert!(
            row.get::<_, bool>(2),
            "shard {shard}: an id names another shard"
        );
    }
    drop(c);

    let small = Server::start("fewslots", "-c idkit.max_generators=4");
    let mut c = small.client();
    for shard in 0..4_i64 {
        c.query_one(
            "SELECT idkit_snowflake('instagram', worker => $1)",
            &[&shard],
        )
        .unwrap();
    }
    let e = c
        .query_one("SELECT idkit_snowflake('instagram', worker => 4)", &[])
        .unwrap_err();
    assert!(
        message(&e).contains("idkit.max_generators"),
        "{}",
        message(&e)
    );
}
