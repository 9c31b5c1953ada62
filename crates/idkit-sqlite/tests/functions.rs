//! The SQL functions on a rusqlite connection: ids made in SQL read back by idkit's Rust
//! types and the reverse, the bounds as an index search, bad input as SQL errors, and the
//! promise across processes: 4 processes writing one WAL database, a restart with the
//! clock behind (libfaketime), a machine that started again. The processes are this test
//! binary, run again as the ignored test `child` with its task in the environment.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use idkit_core::{Clock, Codec};
use idkit_snowflake::{SnowflakeId, Twitter};
use idkit_testkit::Scratch;
use idkit_typeid::TypeId;
use idkit_ulid::Ulid;
use rusqlite::{Connection, params};

fn open(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    idkit_sqlite::register(&conn).unwrap();
    conn
}

fn one<T: rusqlite::types::FromSql>(conn: &Connection, sql: &str) -> T {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn error(conn: &Connection, sql: &str) -> String {
    match conn.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0)) {
        Ok(v) => panic!("{sql} gave {v:?}, not an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn ids_made_in_sql_are_read_by_the_rust_types_and_the_reverse() {
    let dir = Scratch::new("sqlite-functions");
    let conn = open(&dir.join("ids.db"));

    // ULID: the blob and the text of one sequence, increasing.
    let a: Vec<u8> = one(&conn, "SELECT idkit_ulid()");
    let b: String = one(&conn, "SELECT idkit_ulid_text()");
    let a = Ulid(u128::from_be_bytes(a.try_into().unwrap()));
    let b: Ulid = idkit_ulid::UlidCodec.parse(&b).unwrap();
    assert!(a < b);
    let now = idkit_core::SystemClock.now_ms();
    assert!(now.abs_diff(b.timestamp_ms()) < 5_000);

    // UUIDv7, and a TypeID of the same sequence.
    let v: Vec<u8> = one(&conn, "SELECT idkit_uuidv7()");
    let v = idkit_uuid::Uuid::from_slice(&v).unwrap();
    assert_eq!(v.get_version_num(), 7);
    let t: String = one(&conn, "SELECT idkit_typeid('user')");
    let t: TypeId = t.parse().unwrap();
    assert_eq!(t.prefix().as_str(), "user");
    assert!(t.uuid() > v.as_u128());
    let text: String = one(&conn, "SELECT idkit_uuidv7_text()");
    assert!(idkit_uuid::Uuid::parse_str(&text).unwrap().as_u128() > t.uuid());

    // Snowflake: worker and time read back by SnowflakeId.
    let id: i64 = one(&conn, "SELECT idkit_snowflake('twitter', 7)");
    let flake = SnowflakeId::<Twitter>::new(id as u64).unwrap();
    assert_eq!(flake.field("worker"), Some(7));
    let id2: i64 = one(&conn, "SELECT idkit_snowflake('snowflake-twitter', 7)");
    assert!(id2 > id, "one sequence by name and alias");

    // Reading, by SQL, ids the Rust types made.
    let rust = idkit_ulid::Ulid(0x0188_0000_0000_0000_0000_0000_0000_0001);
    let text = rust.to_string();
    let ms: i64 = conn
        .query_row("SELECT idkit_time_ms(?1, 'ulid')", [&text], |r| r.get(0))
        .unwrap();
    assert_eq!(ms as u64, rust.timestamp_ms());
    let same: i64 = conn
        .query_row(
            "SELECT idkit_time_ms(?1, 'ulid') = idkit_time_ms(idkit_blob(?1, 'ulid'), 'ulid')",
            [&text],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(same, 1);
    let made = idkit_snowflake::preset("snowflake-twitter")
        .unwrap()
        .compose_u128(
            1_700_000_000_123,
            &[("datacenter", 3), ("worker", 9), ("sequence", 42)],
        )
        .unwrap();
    let made = SnowflakeId::<Twitter>::new(made as u64).unwrap();
    let json: String = conn
        .query_row(
            "SELECT idkit_decode(?1, 'snowflake-twitter')",
            [made.word() as i64],
            |r| r.get(0),
        )
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["timestamp_ms"], 1_700_000_000_123u64);
    // SQLite's JSON functions read it.
    let datacenter: i64 = conn
        .query_row(
            "SELECT json_extract(idkit_decode(?1, 'snowflake-twitter'), '$.fields.datacenter')",
            [made.word() as i64],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(datacenter, 3);
    let time: String = conn
        .query_row(
            "SELECT idkit_time(?1, 'snowflake-twitter')",
            [made.word() as i64],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(time, "2023-11-14T22:13:20.123Z");
    let unix: i64 = conn
        .query_row(
            "SELECT unixepoch(idkit_time(?1, 'snowflake-twitter'))",
            [made.word() as i64],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unix, 1_700_000_000);

    // ULID <-> UUID: the same 128 bits. The ULID is the ulid spec's README example
    // (github.com/ulid/spec); its UUID is its 128 bits in RFC 9562's hex form.
    let uuid: String = one(&conn, "SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV')");
    assert_eq!(uuid, "01563e3a-b5d3-d676-4c61-efb99302bd5b");
    let back: String = conn
        .query_row("SELECT uuid_to_ulid(?1)", [&uuid], |r| r.get(0))
        .unwrap();
    assert_eq!(back, "01ARZ3NDEKTSV4RRFFQ69G5FAV");

    // NULL in, NULL out.
    let null: Option<String> = one(&conn, "SELECT idkit_time(NULL, 'ulid')");
    assert_eq!(null, None);
}

/// The shard of `id`, an id of Instagram's layout given by its fields, read by SQL.
fn instagram_shard(conn: &Connection, id: i64) -> i64 {
    conn.query_row(
        "SELECT idkit_field(?1, 'time:41,shard:13,sequence:10', 1314220021721, 1, 'shard')",
        [id],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn custom_layouts_are_made_and_read_back() {
    let dir = Scratch::new("sqlite-custom");
    let conn = open(&dir.join("ids.db"));
    let id: i64 = one(
        &conn,
        "SELECT idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, 1, 42)",
    );
    assert_eq!(instagram_shard(&conn, id), 42);
    let ms: i64 = conn
        .query_row(
            "SELECT idkit_time_ms(?1, 'time:41,shard:13,sequence:10', 1314220021721, 1)",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    assert!((ms as u64).abs_diff(idkit_core::SystemClock.now_ms()) < 5_000);
}

/// A statement keeps the generator and the TypeID prefix its first row found while the
/// argument is a constant; arguments that change from row to row are read on every row.
#[test]
fn arguments_that_change_per_row_are_read_per_row() {
    let dir = Scratch::new("sqlite-per-row");
    let conn = open(&dir.join("ids.db"));
    let rows = "(VALUES (1, 'a', 'twitter'), (2, 'b', 'twitter'), (1, '', 'instagram'), \
                (3, 'a', 'twitter'), (2, 'user', 'instagram'))";
    let mut stmt = conn
        .prepare(&format!(
            "SELECT column1, column2, column3, idkit_snowflake(column3, column1), \
                    idkit_typeid(column2), idkit_snowflake('twitter', column1 + 10), \
                    idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, 1, \
                                           column1 + 20) FROM {rows}"
        ))
        .unwrap();
    let got: Vec<(i64, String, String, i64, String, i64, i64)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got.len(), 5);
    let field = |id: i64, layout: &str, name: &str| -> i64 {
        conn.query_row(
            "SELECT idkit_field(?1, ?2, ?3)",
            params![id, layout, name],
            |r| r.get(0),
        )
        .unwrap()
    };
    for (worker, prefix, layout, id, typeid, twitter, custom) in got {
        let fixed = if layout == "twitter" {
            "worker"
        } else {
            "shard"
        };
        assert_eq!(field(id, &layout, fixed), worker, "{layout} {id}");
        let typeid: TypeId = typeid.parse().unwrap();
        assert_eq!(typeid.prefix().as_str(), prefix);
        assert_eq!(field(twitter, "twitter", "worker"), worker + 10);
        assert_eq!(instagram_shard(&conn, custom), worker + 20);
    }
    // The empty prefix: the suffix alone, as the specification writes it.
    let bare: String = one(&conn, "SELECT idkit_typeid('')");
    assert_eq!(bare.len(), 26, "{bare}");
    assert_eq!(bare.parse::<TypeId>().unwrap().prefix().as_str(), "");
}

#[test]
fn a_range_of_time_on_the_bounds_is_an_index_search_and_holds_the_rows() {
    let dir = Scratch::new("sqlite-bounds");
    let conn = open(&dir.join("ids.db"));
    conn.execute_batch(
        "CREATE TABLE events (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), n INTEGER);
         -- An INTEGER PRIMARY KEY is the rowid, which SQLite numbers itself when no value is
         -- given (a DEFAULT does not apply): its id is given in the INSERT.
         CREATE TABLE flakes (id INTEGER PRIMARY KEY, n INTEGER);
         CREATE TABLE shards (id INTEGER PRIMARY KEY, n INTEGER);
         CREATE TABLE users (id TEXT PRIMARY KEY DEFAULT (idkit_typeid('user')), n INTEGER);",
    )
    .unwrap();
    for n in 0..300 {
        for table in ["events", "users"] {
            conn.execute(&format!("INSERT INTO {table} (n) VALUES (?1)"), [n])
                .unwrap();
        }
        conn.execute(
            "INSERT INTO flakes (id, n) VALUES (idkit_snowflake('twitter', 1), ?1)",
            [n],
        )
        .unwrap();
        // Instagram's layout given by its fields, as the README's shards table has it.
        conn.execute(
            "INSERT INTO shards (id, n)
             VALUES (idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, 1, 42), ?1)",
            [n],
        )
        .unwrap();
    }
    let now = idkit_core::SystemClock.now_ms() as i64;
    for (table, lowest, highest) in [
        ("events", "idkit_ulid_lowest(?1)", "idkit_ulid_highest(?2)"),
        (
            "events",
            "idkit_lowest('ulid', ?1)",
            "idkit_highest('ulid', ?2)",
        ),
        (
            "flakes",
            "idkit_snowflake_lowest(?1)",
            "idkit_snowflake_highest(?2, 'twitter')",
        ),
        (
            "flakes",
            "idkit_lowest('snowflake-twitter', ?1)",
            "idkit_highest('twitter', ?2)",
        ),
        (
            "shards",
            "idkit_snowflake_lowest(?1, 'time:41,shard:13,sequence:10', 1314220021721)",
            "idkit_snowflake_highest(?2, 'time:41,shard:13,sequence:10', 1314220021721, 1)",
        ),
        (
            "users",
            "idkit_typeid_lowest('user', ?1)",
            "idkit_typeid_highest('user', ?2)",
        ),
    ] {
        let sql = format!("SELECT count(*) FROM {table} WHERE id BETWEEN {lowest} AND {highest}");
        let all: i64 = conn
            .query_row(&sql, params![now - 60_000, now + 60_000], |r| r.get(0))
            .unwrap();
        assert_eq!(all, 300, "{sql}");
        let none: i64 = conn
            .query_row(&sql, params![now + 60_000, now + 120_000], |r| r.get(0))
            .unwrap();
        assert_eq!(none, 0, "{sql}");
        let plan: String = conn
            .query_row(&format!("EXPLAIN QUERY PLAN {sql}"), params![1, 2], |r| {
                r.get(3)
            })
            .unwrap();
        assert!(plan.starts_with("SEARCH"), "{sql}: {plan}");
        assert!(
            plan.contains("id>? AND ") && plan.contains("id<?)"),
            "{sql}: {plan}"
        );
    }
    // The time as text, SQLite's own form (UTC) among them.
    let all: i64 = one(
        &conn,
        "SELECT count(*) FROM events WHERE id >= idkit_ulid_lowest(datetime('now', '-1 hour'))
         AND id <= idkit_ulid_highest('2100-01-01')",
    );
    assert_eq!(all, 300);
}

#[test]
fn the_reading_functions_sit_in_indexes_and_checks_and_the_generators_do_not() {
    let dir = Scratch::new("sqlite-deterministic");
    let conn = open(&dir.join("ids.db"));
    conn.execute_batch(
        "CREATE TABLE t (id INTEGER PRIMARY KEY,
                         CHECK (idkit_field(id, 'twitter', 'worker') = 1));
         CREATE INDEX t_time ON t (idkit_time_ms(id, 'twitter'));
         INSERT INTO t VALUES (idkit_snowflake('twitter', 1));",
    )
    .unwrap();
    let refused = conn
        .execute("INSERT INTO t VALUES (idkit_snowflake('twitter', 2))", [])
        .unwrap_err();
    assert!(refused.to_string().contains("CHECK"), "{refused}");
    let e = conn
        .execute_batch("CREATE INDEX bad ON t (idkit_ulid())")
        .unwrap_err();
    assert!(e.to_string().contains("non-deterministic"), "{e}");
}

#[test]
fn reading_ids_of_layouts_given_by_their_fields_keeps_nothing_per_call() {
    // The reading functions are innocuous: a schema from elsewhere may call them with any
    // layout. Each call reads its layout for itself, so 6,000 distinct layouts (past the
    // 4,096 names and 1,024 layouts a process once kept) all read, and names come back.
    let dir = Scratch::new("sqlite-unkept");
    let conn = open(&dir.join("ids.db"));
    for i in 0..6_000 {
        let fields = format!("time:41,shard{i}:13,sequence:10");
        let id: i64 = (5 << 23) | (42 << 10) | 7;
        let shard: i64 = conn
            .query_row(
                "SELECT idkit_field(?1, ?2, 0, 1, ?3)",
                rusqlite::params![id, fields, format!("shard{i}")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(shard, 42);
        if i % 1_000 == 0 {
            let json: String = conn
                .query_row(
                    "SELECT idkit_decode(?1, ?2, 0, 1)",
                    rusqlite::params![id, fields],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(json.contains(&format!("\"shard{i}\":42")), "{json}");
            let low: i64 = conn
                .query_row(
                    "SELECT idkit_snowflake_lowest(0, ?1, 0, 1)",
                    rusqlite::params![fields],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(low, 0);
        }
    }
    let e = error(
        &conn,
        "SELECT idkit_field(1, 'time:41,shard:13,sequence:10', 0, 1, 'worker')",
    );
    assert!(
        e.contains("no field worker: its fields are shard, sequence"),
        "{e}"
    );
}

#[test]
fn until_now_finds_the_rows_of_this_second() {
    // datetime('now') is to the whole second: as a highest bound it stands for that whole
    // second, so the row made a moment ago is found (its millisecond past the second's
    // start, 999 times in 1,000).
    let dir = Scratch::new("sqlite-until-now");
    let conn = open(&dir.join("ids.db"));
    conn.execute_batch(
        "CREATE TABLE events (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), body TEXT);
         CREATE TABLE posts (id INTEGER PRIMARY KEY, body TEXT);",
    )
    .unwrap();
    for _ in 0..5 {
        conn.execute("INSERT INTO events (body) VALUES ('x')", [])
            .unwrap();
        conn.execute(
            "INSERT INTO posts VALUES (idkit_snowflake('twitter', 1), 'x')",
            [],
        )
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(7));
    }
    for (sql, what) in [
        (
            "SELECT count(*) FROM events WHERE id BETWEEN idkit_ulid_lowest('2026-01-01') \
             AND idkit_ulid_highest(datetime('now'))",
            "ulid",
        ),
        (
            "SELECT count(*) FROM posts WHERE id BETWEEN idkit_snowflake_lowest('2026-01-01') \
             AND idkit_snowflake_highest(datetime('now'))",
            "snowflake",
        ),
    ] {
        let n: i64 = one(&conn, sql);
        assert_eq!(n, 5, "{what}");
    }
    // A time to the millisecond is that millisecond; a lowest bound is the second's start.
    let a: i64 = one(
        &conn,
        "SELECT idkit_snowflake_highest('2026-12-06 10:30:00')",
    );
    let b: i64 = one(
        &conn,
        "SELECT idkit_snowflake_highest('2026-12-06 10:30:00.999')",
    );
    let c: i64 = one(
        &conn,
        "SELECT idkit_snowflake_lowest('2026-12-06 10:30:00')",
    );
    let d: i64 = one(
        &conn,
        "SELECT idkit_snowflake_lowest('2026-12-06T10:30:00.000Z')",
    );
    assert_eq!(a, b);
    assert_eq!(c, d);
}

#[test]
fn a_custom_layout_reads_with_the_tick_left_out_and_messages_name_calls_that_work() {
    let dir = Scratch::new("sqlite-custom-messages");
    let conn = open(&dir.join("ids.db"));
    let id: i64 = one(
        &conn,
        "SELECT idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, 1, 7)",
    );
    // The tick left out is 1 ms, as when the ids are made.
    for f in ["idkit_time_ms", "idkit_time", "idkit_decode"] {
        let three: String = conn
            .query_row(
                &format!(
                    "SELECT CAST({f}(?1, 'time:41,shard:13,sequence:10', 1314220021721) AS TEXT)"
                ),
                [id],
                |r| r.get(0),
            )
            .unwrap();
        let four: String = conn
            .query_row(
                &format!(
                    "SELECT CAST({f}(?1, 'time:41,shard:13,sequence:10', 1314220021721, 1) AS TEXT)"
                ),
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(three, four, "{f}");
    }
    // Each message names a call that works, and that call does.
    let said = error(
        &conn,
        "SELECT idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721)",
    );
    let call = "idkit_snowflake_custom('time:41,shard:13,sequence:10', 1314220021721, 1, 1)";
    assert!(said.contains(call), "{said}");
    let _: i64 = one(&conn, &format!("SELECT {call}"));
    let said = error(&conn, "SELECT idkit_snowflake()");
    assert!(
        said.contains("idkit_snowflake('snowflake-twitter', 1)"),
        "{said}"
    );
    let _: i64 = one(&conn, "SELECT idkit_snowflake('snowflake-twitter', 1)");
    for scheme in ["range", "auto-increment"] {
        let said = error(&conn, &format!("SELECT idkit_time(5, '{scheme}')"));
        assert!(
            said.contains("plain integers that a store hands out"),
            "{said}"
        );
    }
    let said = error(&conn, "SELECT idkit_snowflake('ulid')");
    assert!(
        said.contains("not a Snowflake layout") && !said.contains("uuid-v4"),
        "{said}"
    );
    assert!(said.contains("snowflake-mastodon"), "{said}");
    // Layouts given by their fields to the function of presets: the call named works,
    // with a worker id that fits, or none where the layout has no worker bits.
    for (layout, call) in [
        (
            "time:41,shard:13,sequence:10",
            "idkit_snowflake_custom('time:41,shard:13,sequence:10', 1288834974657, 1, 1)",
        ),
        (
            "time:41,shard:2,sequence:12",
            "idkit_snowflake_custom('time:41,shard:2,sequence:12', 1288834974657, 1, 1)",
        ),
        (
            "time:41,sequence:22",
            "idkit_snowflake_custom('time:41,sequence:22', 1288834974657, 1)",
        ),
    ] {
        let said = error(&conn, &format!("SELECT idkit_snowflake('{layout}', 7)"));
        assert!(said.contains(call), "{said}");
        let _: i64 = one(&conn, &format!("SELECT {call}"));
    }
    // The bounds of any scheme refuse TypeID, whose keys carry a prefix they cannot hold,
    // and name the bounds that can.
    for f in [
        "idkit_lowest",
        "idkit_highest",
        "idkit_lowest_text",
        "idkit_highest_text",
    ] {
        let said = error(&conn, &format!("SELECT {f}('typeid', '2026-12-07')"));
        assert!(said.contains("idkit_typeid_"), "{said}");
    }
    let _: String = one(
        &conn,
        "SELECT idkit_typeid_lowest('user', '2026-12-07') || idkit_typeid_highest('user', '2026-12-07')",
    );
}

#[test]
fn a_null_argument_gives_null_from_the_generators_too() {
    // As from the reading functions, and as the PostgreSQL extension's (pg_repeats.rs);
    // a NULL worker is no worker given.
    let dir = Scratch::new("sqlite-nulls");
    let conn = open(&dir.join("ids.db"));
    for sql in [
        "SELECT idkit_typeid(NULL)",
        "SELECT idkit_snowflake(NULL)",
        "SELECT idkit_snowflake(NULL, 7)",
        "SELECT idkit_snowflake_custom(NULL, 0)",
        "SELECT idkit_snowflake_custom('time:41,sequence:22', NULL)",
        "SELECT idkit_snowflake_custom('time:41,sequence:22', 0, NULL)",
        "SELECT idkit_ulid_highest(NULL)",
        "SELECT idkit_time(NULL, 'twitter')",
    ] {
        let null: Option<i64> = conn
            .query_row(&format!("SELECT ({sql}) IS NULL"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(null, Some(1), "{sql}");
    }
    let said = error(&conn, "SELECT idkit_snowflake('twitter', NULL)");
    assert!(said.contains("needs a worker id"), "{said}");
}

#[test]
fn an_untrusted_schema_cannot_make_ids_and_a_trusted_one_can() {
    // The generators are not SQLITE_INNOCUOUS: with trusted_schema off (a database from
    // elsewhere), its views, triggers and defaults cannot call them, while the reading
    // functions (innocuous) still work there. They are not SQLITE_DIRECTONLY, so that a
    // trusted schema's DEFAULT (idkit_ulid()) works, as the README shows.
    let dir = Scratch::new("sqlite-untrusted");
    let conn = open(&dir.join("ids.db"));
    conn.execute_batch(
        "CREATE TABLE t (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), n INTEGER);
         CREATE VIEW made AS SELECT idkit_snowflake('mastodon') AS id;
         CREATE VIEW read AS SELECT idkit_time_ms(n, 'twitter') AS ms FROM t;
         INSERT INTO t (n) VALUES (1);",
    )
    .unwrap();
    let n: i64 = one(&conn, "SELECT count(*) FROM made");
    assert_eq!(n, 1);
    conn.execute_batch("PRAGMA trusted_schema = OFF").unwrap();
    for sql in ["SELECT id FROM made", "INSERT INTO t (n) VALUES (2)"] {
        let e = error(&conn, sql);
        assert!(e.contains("unsafe use of"), "{sql}: {e}");
    }
    let rows: i64 = one(&conn, "SELECT count(*) FROM read");
    assert_eq!(rows, 1);
}

#[test]
fn bad_input_is_an_sql_error_that_says_what_is_wrong() {
    let dir = Scratch::new("sqlite-bad-input");
    let conn = open(&dir.join("ids.db"));
    for (sql, says) in [
        (
            "SELECT idkit_time(x'0102', 'ulid')",
            "a blob of 2 bytes, where its ids are 16",
        ),
        ("SELECT idkit_time('not a ulid', 'ulid')", "ulid"),
        ("SELECT idkit_time(1, 'no-such-scheme')", "no-such-scheme"),
        ("SELECT idkit_time(1, 'ulid')", "not an integer"),
        ("SELECT idkit_time(1.5, 'twitter')", "an id is not a real"),
        (
            "SELECT idkit_snowflake('no-such-layout', 1)",
            "no-such-layout",
        ),
        (
            "SELECT idkit_snowflake('ulid', 1)",
            "not a Snowflake layout",
        ),
        ("SELECT idkit_snowflake('twitter')", "needs a worker id"),
        ("SELECT idkit_snowflake('twitter', 1024)", "does not fit"),
        ("SELECT idkit_snowflake('twitter', -1)", "negative"),
        ("SELECT idkit_snowflake_custom('time:41,oops', 0)", "layout"),
        ("SELECT idkit_typeid('Not A Prefix')", "typeid prefix"),
        ("SELECT idkit_ulid_lowest(-1)", "before 1970"),
        ("SELECT idkit_ulid_lowest('2026-13-01')", "time"),
        ("SELECT idkit_ulid_highest(281474976710656)", "ulid"),
        ("SELECT idkit_lowest('uuid-v4', 0)", "uuid-v4"),
        (
            "SELECT idkit_snowflake_lowest(0, 'time:41,shard:13,sequence:10', 1314220021721)",
            "custom",
        ),
        (
            "SELECT idkit_snowflake_highest(0, 'time:41,oops', 0, 1)",
            "layout",
        ),
        (
            "SELECT idkit_field(idkit_snowflake('twitter', 1), 'twitter', 'shard')",
            "no field shard",
        ),
        ("SELECT idkit_time(idkit_uuidv7(), 'uuid-v4')", "uuid-v4"),
        (
            "SELECT idkit_decode(x'00', 'objectid')",
            "a blob of 1 bytes",
        ),
    ] {
        let message = error(&conn, sql);
        assert!(message.contains(says), "{sql}: {message}");
    }
}

#[test]
fn an_in_memory_database_makes_ulids_and_refuses_snowflake_ids() {
    let conn = Connection::open_in_memory().unwrap();
    idkit_sqlite::register(&conn).unwrap();
    let a: Vec<u8> = one(&conn, "SELECT idkit_ulid()");
    let b: Vec<u8> = one(&conn, "SELECT idkit_ulid()");
    assert!(a < b);
    let message = error(&conn, "SELECT idkit_snowflake('twitter', 1)");
    assert!(
        message.contains("need the database's state file"),
        "{message}"
    );
}

/// The worker id in `idkit_snowflake('twitter', 'lease')`'s id on `conn`.
fn leased_worker(conn: &Connection) -> i64 {
    one(
        conn,
        "SELECT idkit_field(idkit_snowflake('twitter', 'lease'), 'twitter', 'worker')",
    )
}

#[test]
fn each_open_connection_leases_a_worker_id_of_its_own() {
    let dir = Scratch::new("sqlite-lease");
    let db = dir.join("ids.db");
    let conns: Vec<Connection> = (0..3).map(|_| open(&db)).collect();
    let workers: Vec<i64> = conns.iter().map(leased_worker).collect();
    let distinct: HashSet<_> = workers.iter().collect();
    assert_eq!(distinct.len(), 3, "{workers:?}");
    // A connection keeps its worker id for the statements that follow.
    for (conn, worker) in conns.iter().zip(&workers) {
        assert_eq!(leased_worker(conn), *worker);
    }
    assert!(dir.join("ids.db-idkit-leases").exists());
    // Taken inside a write transaction: the leases' own file is not the database, so the
    // lease does not wait for the lock that the transaction holds.
    let conn = open(&db);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let fourth = leased_worker(&conn);
    conn.execute_batch("COMMIT").unwrap();
    assert!(!workers.contains(&fourth), "{fourth} in {workers:?}");
    // A closed connection gives its worker id back at once, not after the lease's TTL.
    let mut conns = conns;
    let gone = workers[0];
    conns.remove(0).close().unwrap();
    // (The lowest free worker id is granted first.)
    let heir = open(&db);
    assert_eq!(leased_worker(&heir), gone, "not granted again at once");
    // A worker id given by number is not leased, and a word is not a worker id.
    let conn = open(&db);
    let given: i64 = one(
        &conn,
        "SELECT idkit_field(idkit_snowflake('twitter', 9), 'twitter', 'worker')",
    );
    assert_eq!(given, 9);
    let message = error(&conn, "SELECT idkit_snowflake('twitter', 'leased')");
    assert!(
        message.contains("expected an integer or 'lease'"),
        "{message}"
    );
}

// ----- across processes -----

/// Runs this test binary's `child` with `task` on `db`, and optionally under libfaketime
/// with the clock at `offset`; returns what it printed.
fn spawn(task: &str, db: &Path, faketime: Option<&str>) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("IDKIT_SQLITE_TASK", task)
        .env("IDKIT_SQLITE_DB", db)
        .stdout(std::process::Stdio::piped());
    if let Some(offset) = faketime {
        command
            .env("LD_PRELOAD", idkit_testkit::faketime::libfaketime())
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    command.spawn().unwrap()
}

fn wait(child: std::process::Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "child: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The rows of `db` in the order they were committed (rowid), as (ulid, v7, snowflake).
fn rows(db: &Path) -> Vec<(Vec<u8>, Vec<u8>, i64)> {
    let conn = open(db);
    let mut stmt = conn
        .prepare("SELECT ulid, v7, flake FROM ids ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn schema(db: &Path) {
    open(db)
        .execute_batch(
            "CREATE TABLE IF NOT EXISTS ids (seq INTEGER PRIMARY KEY, ulid BLOB, v7 BLOB,
                                             flake INTEGER, writer INTEGER)",
        )
        .unwrap();
}

/// Every column increases strictly in commit order: no id twice, none out of order.
fn check_increasing(rows: &[(Vec<u8>, Vec<u8>, i64)]) {
    for pair in rows.windows(2) {
        assert!(pair[0].0 < pair[1].0, "ULIDs out of commit order");
        assert!(pair[0].1 < pair[1].1, "UUIDv7s out of commit order");
        assert!(pair[0].2 < pair[1].2, "Snowflake ids out of commit order");
    }
    let distinct: HashSet<_> = rows.iter().map(|r| r.2).collect();
    assert_eq!(distinct.len(), rows.len());
}

#[test]
fn four_processes_on_one_wal_database_repeat_nothing_and_commit_in_id_order() {
    let dir = Scratch::new("sqlite-processes");
    let db = dir.join("ids.db");
    schema(&db);
    let children: Vec<_> = (0..4)
        .map(|_| spawn("insert together", &db, None))
        .collect();
    // All at once: each waits for this file before its first transaction.
    std::fs::write(dir.join("start"), b"").unwrap();
    children.into_iter().for_each(wait);
    let rows = rows(&db);
    assert_eq!(rows.len(), 4 * TRANSACTIONS * ROWS);
    check_increasing(&rows);
    let conn = open(&db);
    let writers: i64 = one(&conn, "SELECT count(DISTINCT writer) FROM ids");
    assert_eq!(writers, 4);
    // The writers took turns: the commit order interleaves them.
    let turns: i64 = one(
        &conn,
        "SELECT count(*) FROM (SELECT writer, lag(writer) OVER (ORDER BY seq) AS before FROM ids)
         WHERE writer != before",
    );
    assert!(turns > 4, "the writers never interleaved ({turns} turns)");
}

#[test]
fn a_restart_with_the_clock_behind_reissues_nothing() {
    let dir = Scratch::new("sqlite-restart");
    let db = dir.join("ids.db");
    schema(&db);
    wait(spawn("insert", &db, None));
    let before = rows(&db);
    // 3 s behind: ULIDs and UUIDv7s run ahead of the clock above the last ones, Snowflake
    // ids wait for the clock to pass the last tick.
    wait(spawn("insert", &db, Some("-3s")));
    let after = rows(&db);
    assert_eq!(after.len(), 2 * before.len());
    check_increasing(&after);
    // 30 s behind, past the bound: refused, nothing written.
    let refused = spawn("insert", &db, Some("-30s"))
        .wait_with_output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stdout);
    assert!(said.contains("behind the last id"), "{said}");
    assert_eq!(rows(&db).len(), after.len());
    // A Snowflake layout alone waits for the clock (10 s), then names it and the last id.
    let refused = spawn("one snowflake", &db, Some("-30s"))
        .wait_with_output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stdout);
    let last = after.last().unwrap().2;
    let last_ms = (last >> 22) as u64 + 1_288_834_974_657;
    assert!(
        said.contains("snowflake-twitter: the clock (")
            && said.contains(&format!(
                "behind the last id ({})",
                idkit_core::time::format_rfc3339_ms(last_ms)
            )),
        "{said}"
    );
}

#[test]
fn after_the_machine_starts_again_ids_start_above_the_mark_on_disk() {
    let dir = Scratch::new("sqlite-reboot");
    let db = dir.join("ids.db");
    schema(&db);
    wait(spawn("insert", &db, None));
    let before = rows(&db);
    // What a crash of the machine can leave: the words' last writes lost (here: every word
    // set back to zero), and another boot id. Only the mark, synced ahead, is left.
    let state = dir.join("ids.db-idkit");
    let mut bytes = std::fs::read(&state).unwrap();
    let mark = u64::from_ne_bytes(bytes[32..40].try_into().unwrap());
    assert!(mark > 0, "no mark written");
    bytes[8..24].fill(0xAB);
    for slot in bytes[64..].chunks_mut(64) {
        slot[16..24].fill(0);
    }
    std::fs::write(&state, &bytes).unwrap();
    wait(spawn("insert", &db, None));
    let after = rows(&db);
    check_increasing(&after);
    let first_new = &after[before.len()];
    let ms = Ulid(u128::from_be_bytes(first_new.0.clone().try_into().unwrap())).timestamp_ms();
    assert!(ms > mark, "a ULID at {ms}, not above the mark {mark}");
}

const TRANSACTIONS: usize = 200;
const ROWS: usize = 10;

/// Run by the tests above as a process of its own.
#[test]
fn four_processes_lease_four_worker_ids_and_repeat_nothing() {
    let dir = Scratch::new("sqlite-lease-processes");
    let db = dir.join("ids.db");
    open(&db)
        .execute_batch(
            "CREATE TABLE leased (seq INTEGER PRIMARY KEY, flake INTEGER, writer INTEGER)",
        )
        .unwrap();
    let mut children: Vec<_> = (0..4).map(|_| spawn("lease together", &db, None)).collect();
    // All four hold their leases before any writes (a child that ended before is a failure,
    // with what it printed).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("leased-")
        })
        .count()
        < 4
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the children never leased"
        );
        if let Some(at) = children
            .iter_mut()
            .position(|c| c.try_wait().unwrap().is_some())
        {
            wait(children.swap_remove(at));
            panic!("a child ended before the start");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::write(dir.join("start"), b"").unwrap();
    children.into_iter().for_each(wait);
    let conn = open(&db);
    let rows: i64 = one(&conn, "SELECT count(*) FROM leased");
    let distinct: i64 = one(&conn, "SELECT count(DISTINCT flake) FROM leased");
    assert_eq!(rows, i64::try_from(4 * TRANSACTIONS * ROWS).unwrap());
    assert_eq!(distinct, rows, "an id made twice");
    let workers: i64 = one(
        &conn,
        "SELECT count(DISTINCT idkit_field(flake, 'twitter', 'worker')) FROM leased",
    );
    assert_eq!(workers, 4, "four processes, four worker ids");
    let per_writer: i64 = one(
        &conn,
        "SELECT max(n) FROM (SELECT count(DISTINCT idkit_field(flake, 'twitter', 'worker')) AS n
                            FROM leased GROUP BY writer)",
    );
    assert_eq!(per_writer, 1, "a process changed worker ids");
    // Each process's ids increase in the order it committed them.
    let back: i64 = one(
        &conn,
        "SELECT count(*) FROM (SELECT flake, lag(flake) OVER (PARTITION BY writer ORDER BY seq)
                              AS before FROM leased) WHERE flake <= before",
    );
    assert_eq!(back, 0);
}

/// `TRANSACTIONS` transactions of `ROWS` rows of `select` inserted into `into`, each taking
/// the write lock first, then the ids: commit order is id order.
fn write_turns(conn: &Connection, into: &str, select: &str) {
    for _ in 0..TRANSACTIONS {
        let result = conn.execute_batch(&format!(
            "BEGIN IMMEDIATE;
             INSERT INTO {into}
                SELECT {select}
                FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                                              WHERE i < {ROWS}) SELECT i FROM n);
             COMMIT;"
        ));
        if let Err(e) = result {
            println!("{e}");
            std::process::exit(1);
        }
        // Out of the lock for a moment: the others' turn (SQLite's busy handler sleeps, and
        // a writer that takes the lock again at once would keep it).
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
#[ignore = "a child process of the tests above, which run it with its task"]
fn child() {
    let db = std::env::var("IDKIT_SQLITE_DB").unwrap();
    let conn = open(Path::new(&db));
    // The test that runs several writes a start file once all of them are running.
    let start = Path::new(&db).with_file_name("start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    if std::env::var("IDKIT_SQLITE_TASK").as_deref() == Ok("lease together") {
        // The lease first, said by a file: the test opens the start once all four hold one.
        conn.execute_batch("SELECT idkit_snowflake('twitter', 'lease')")
            .unwrap();
        let pid = std::process::id();
        std::fs::write(start.with_file_name(format!("leased-{pid}")), b"").unwrap();
    }
    let together = matches!(
        std::env::var("IDKIT_SQLITE_TASK").as_deref(),
        Ok("insert together" | "lease together")
    );
    while together && !start.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    if std::env::var("IDKIT_SQLITE_TASK").as_deref() == Ok("one snowflake") {
        // What a Snowflake layout says, alone: an id, or the error.
        match conn.query_row("SELECT idkit_snowflake('twitter', 5)", [], |r| {
            r.get::<_, i64>(0)
        }) {
            Ok(id) => println!("{id}"),
            Err(e) => {
                println!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let writer = std::process::id();
    if std::env::var("IDKIT_SQLITE_TASK").as_deref() == Ok("lease together") {
        // Snowflake ids made on the worker id the connection leased.
        let select = format!("idkit_snowflake('twitter', 'lease'), {writer}");
        write_turns(&conn, "leased (flake, writer)", &select);
    } else {
        let select =
            format!("idkit_ulid(), idkit_uuidv7(), idkit_snowflake('twitter', 5), {writer}");
        write_turns(&conn, "ids (ulid, v7, flake, writer)", &select);
    }
}

/// A row as the README shows it: its values joined by ` | `, NULL as `NULL`, a blob as a
/// hex literal.
fn shown(row: &rusqlite::Row<'_>, columns: usize) -> String {
    use rusqlite::types::ValueRef;
    (0..columns)
        .map(|i| match row.get_ref(i).unwrap() {
            ValueRef::Null => "NULL".to_owned(),
            ValueRef::Integer(n) => n.to_string(),
            ValueRef::Real(x) => x.to_string(),
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Blob(b) => {
                let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
                format!("x'{hex}'")
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Every query of the README's SQL blocks shows something (a row, its first value not
/// NULL), today and on any later day (the examples' times are relative to now); and where
/// the README shows what a query gives, the next line after it (`-- → ROW` the row exactly,
/// `-- ≈ ROW` a row of the same shape: another id, another time), the query gives that.
#[test]
fn every_sql_block_of_the_readme_runs_and_shows_what_the_readme_says() {
    let readme = include_str!("../README.md");
    let blocks: Vec<&str> = readme
        .split("```sql\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap())
        .collect();
    assert!(!blocks.is_empty());
    let dir = Scratch::new("sqlite-readme");
    let conn = open(&dir.join("app.db"));
    let mut shown_rows = 0;
    for block in blocks {
        let pieces = idkit_testkit::readme::pieces(block);
        for (sql, expected) in pieces {
            use fallible_iterator::FallibleIterator as _;
            let mut batch = rusqlite::Batch::new(&conn, &sql);
            let mut last = None;
            while let Some(mut stmt) = batch.next().unwrap_or_else(|e| panic!("{e}\n{sql}")) {
                if stmt.column_count() == 0 {
                    stmt.raw_execute().unwrap_or_else(|e| panic!("{e}\n{sql}"));
                    continue;
                }
                let text = stmt.expanded_sql().unwrap_or_default();
                let columns = stmt.column_count();
                let mut rows = stmt.raw_query();
                let row = rows
                    .next()
                    .unwrap_or_else(|e| panic!("{e}\n{text}"))
                    .unwrap_or_else(|| panic!("the README's query shows nothing: {text}"));
                let first: rusqlite::types::Value = row.get(0).unwrap();
                assert_ne!(
                    first,
                    rusqlite::types::Value::Null,
                    "the README's query shows NULL: {text}"
                );
                last = Some((text, shown(row, columns)));
            }
            let Some(expected) = expected else { continue };
            let (text, got) = last.unwrap_or_else(|| panic!("{expected} follows no query"));
            let (exact, want) = match expected.strip_prefix("-- →") {
                Some(want) => (true, want.trim()),
                None => (false, expected.trim_start_matches("-- ≈").trim()),
            };
            if exact {
                assert_eq!(got, want, "the README shows another row for {text}");
            } else {
                assert_eq!(
                    idkit_testkit::readme::shape(&got),
                    idkit_testkit::readme::shape(want),
                    "the README shows a row of another shape for {text}: {got}"
                );
            }
            shown_rows += 1;
        }
    }
    assert!(shown_rows >= 8, "the README shows {shown_rows} rows");
    let posts: i64 = one(&conn, "SELECT count(*) FROM posts WHERE id > 1000000");
    assert_eq!(posts, 1);
}
