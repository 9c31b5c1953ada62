//! The hunt for repeats no one thought of, in the PostgreSQL extension: sessions make ids of
//! every kind of generator into one table (layouts with and without worker bits, with and
//! without a worker argument, the server's `idkit.worker_id`) while an adversary, on a
//! schedule drawn from a seed, terminates sessions, kills backends with SIGKILL (the
//! postmaster then resets shared memory), reloads `idkit.worker_id` with another value,
//! restarts the server cleanly or after an immediate stop, and steps its clock back and
//! forth (libfaketime, up to 3 s behind). Afterwards no column holds an id twice, and each
//! session's ids increase in the order it made them, across its reconnections, for every
//! generator whose ids are one sequence (all but the one that follows `idkit.worker_id`).
//!
//! The server is one of the test's own (crates/idkit-all/tests/pg_server); the seed and
//! the length come from `IDKIT_HUNT_SEED` and `IDKIT_HUNT_SECONDS` (90 and 20 by default;
//! `scripts/hunt.sh --pg --seconds 600` draws a seed and prints it).
#![cfg(feature = "pg-extension")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use idkit_testkit::schedule::{Schedule, env_u64};

mod pg_server;
use pg_server::{Server, message};

/// The table's id columns and the generator of each; `true` where one session's ids must
/// increase (one sequence whatever happens).
const COLUMNS: &[(&str, &str, bool)] = &[
    ("ulid", "idkit_ulid()::text", true),
    ("v7", "idkit_uuidv7()::text", true),
    ("typeid", "idkit_typeid('user')::text", true),
    ("mastodon", "idkit_snowflake('mastodon')", true),
    // The same layout by its fields: one word with `mastodon`'s.
    (
        "mastodon_f",
        "idkit_snowflake_custom('time:48,sequence:16', 0, 1)",
        true,
    ),
    ("twitter5", "idkit_snowflake('twitter', 5)", true),
    (
        "custom",
        "idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, worker => 7)",
        true,
    ),
    // The server's worker id changes under it: another generator each time.
    ("twitter", "idkit_snowflake('twitter')", false),
];

const SESSIONS: u64 = 4;

/// Whether a session's error is one the adversary causes: the session connects again.
fn expected(said: &str) -> bool {
    [
        "terminating connection",
        "connection",
        "shutting down",
        "starting up",
        "the database system is",
        "server closed",
        "in recovery",
        "behind",
        "error communicating",
        "unexpected EOF",
    ]
    .iter()
    .any(|m| said.contains(m))
}

/// One session's loop: batches of 50 rows until `stop`, connecting again after each error
/// the adversary causes. Returns (transactions, errors); panics on any other error.
fn session(port: u16, k: u64, stop: Arc<AtomicBool>) -> (u64, u64) {
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres?application_name=hunt-{k}");
    let columns: Vec<&str> = COLUMNS.iter().map(|c| c.0).collect();
    let generators: Vec<&str> = COLUMNS.iter().map(|c| c.1).collect();
    let sql = format!(
        "INSERT INTO hunt (session, n, {}) SELECT {k}, $1::bigint * 100 + i, {}
         FROM generate_series(1, 50) i",
        columns.join(", "),
        generators.join(", ")
    );
    let (mut done, mut errors, mut n) = (0u64, 0u64, 0i64);
    let mut client: Option<Client> = None;
    while !stop.load(Ordering::Acquire) {
        let c = match &mut client {
            Some(c) => c,
            None => match Client::connect(&url, NoTls) {
                Ok(c) => client.insert(c),
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            },
        };
        n += 1;
        match c.execute(&sql, &[&n]) {
            Ok(_) => done += 1,
            Err(e) => {
                let said = message(&e);
                assert!(expected(&said), "session {k}: {said}");
                errors += 1;
                client = None;
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    (done, errors)
}

#[test]
fn the_hunt_finds_no_repeat_through_kills_reloads_restarts_and_clock_steps() {
    let seed = env_u64("IDKIT_HUNT_SEED", 90);
    let seconds = env_u64("IDKIT_HUNT_SECONDS", 20);
    eprintln!("pg hunt: seed {seed}, {seconds} s (IDKIT_HUNT_SEED={seed} to run it again)");
    let server = Server::start("hunt", "");
    let mut admin = server.client();
    let columns: Vec<String> = COLUMNS
        .iter()
        .map(|(name, generator, _)| {
            let kind = if generator.ends_with("::text") {
                "text COLLATE \"C\""
            } else {
                "bigint"
            };
            format!("{name} {kind}")
        })
        .collect();
    admin
        .batch_execute(&format!(
            "CREATE TABLE hunt (session int, n bigint, {})",
            columns.join(", ")
        ))
        .unwrap();
    drop(admin);
    let stop = Arc::new(AtomicBool::new(false));
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|k| {
            let stop = Arc::clone(&stop);
            let port = server.port;
            std::thread::spawn(move || session(port, k, stop))
        })
        .collect();
    let mut schedule = Schedule::new(seed);
    let mut done = std::collections::BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200 + schedule.below(800)));
        let action = match schedule.below(100) {
            0..25 => "terminate",
            25..35 => "kill -9",
            35..55 => "reload worker_id",
            55..65 => "restart",
            65..72 => "crash",
            _ => "clock",
        };
        *done.entry(action).or_insert(0) += 1;
        match action {
            "terminate" | "kill -9" => {
                let k = schedule.below(SESSIONS);
                let Ok(mut c) = Client::connect(
                    &format!("postgres://postgres@127.0.0.1:{}/postgres", server.port),
                    NoTls,
                ) else {
                    continue;
                };
                let pids: Vec<i32> = c
                    .query(
                        "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                        &[&format!("hunt-{k}")],
                    )
                    .map(|rows| rows.iter().map(|r| r.get(0)).collect())
                    .unwrap_or_default();
                for pid in pids {
                    if action == "terminate" {
                        let _ = c.execute("SELECT pg_terminate_backend($1)", &[&pid]);
                    } else {
                        let _ = std::process::Command::new("kill")
                            .args(["-9", &pid.to_string()])
                            .status();
                    }
                }
            }
            "reload worker_id" => {
                let worker = 3 + 2 * schedule.below(3);
                if let Ok(mut c) = Client::connect(
                    &format!("postgres://postgres@127.0.0.1:{}/postgres", server.port),
                    NoTls,
                ) {
                    let _ =
                        c.batch_execute(&format!("ALTER SYSTEM SET idkit.worker_id = {worker}"));
                    let _ = c.batch_execute("SELECT pg_reload_conf()");
                }
            }
            "restart" | "crash" => {
                // A server the postmaster is still resetting (after a kill -9) may refuse a
                // fast stop for a moment: tried again.
                let how = if action == "restart" { "stop" } else { "crash" };
                for _ in 0..50 {
                    if server.cluster(how).status().unwrap().success() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                server.run("restart-server");
            }
            _ => {
                let offset = schedule.below(4);
                server.set_clock(&format!("-{offset}s"));
            }
        }
    }
    stop.store(true, Ordering::Release);
    let mut totals = (0, 0);
    for s in sessions {
        let (d, e) = s.join().expect("a session failed");
        totals = (totals.0 + d, totals.1 + e);
    }
    let mut c = server.client();
    let rows: i64 = c
        .query_one("SELECT count(*) FROM hunt", &[])
        .unwrap()
        .get(0);
    for (name, _, ordered) in COLUMNS {
        let distinct: i64 = c
            .query_one(&format!("SELECT count(DISTINCT {name}) FROM hunt"), &[])
            .unwrap()
            .get(0);
        assert_eq!(
            distinct,
            rows,
            "seed {seed}: {name}: {} of {rows} ids repeated",
            rows - distinct
        );
        if *ordered {
            let down: i64 = c
                .query_one(
                    &format!(
                        "SELECT count(*) FROM (SELECT {name} AS x,
                            lag({name}) OVER (PARTITION BY session ORDER BY n) AS before
                         FROM hunt) s WHERE x <= before"
                    ),
                    &[],
                )
                .unwrap()
                .get(0);
            assert_eq!(
                down, 0,
                "seed {seed}: {name}: {down} ids at or below their session's id before"
            );
        }
    }
    eprintln!(
        "pg hunt: seed {seed}: {rows} rows of {} generators, none repeated, each session's \
         in order; {} transactions, {} errors the adversary caused; adversary: {done:?}",
        COLUMNS.len(),
        totals.0,
        totals.1
    );
    assert!(rows > 2_000, "seed {seed}: only {rows} rows");
}
