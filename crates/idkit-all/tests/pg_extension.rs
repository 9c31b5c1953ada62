//! The PostgreSQL extension (extensions/idkit-pg) in a real PostgreSQL 15 server: the
//! throwaway server scripts/test.sh starts (`IDKIT_TEST_PG_URL`, its files in
//! `IDKIT_TEST_PG_DIR`), with the extension installed (scripts/pg-extension.sh), preloaded
//! and `idkit.worker_id = 1`; and servers of these tests' own for what that one cannot show
//! (no worker id, no preload).
//!
//! Ids the extension makes are read by idkit's Rust types over the binary protocol (sqlx and
//! postgres), ids Rust makes are read by the extension, and both agree byte for byte.
#![cfg(feature = "pg-extension")]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use idkit_core::{Codec, IdScheme};
use idkit_snowflake::{Snowflake, SnowflakeId, Twitter};
use idkit_ulid::Ulid;
use postgres::{Client, NoTls};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/test.sh"))
}

fn client() -> Client {
    let mut c = Client::connect(&env("IDKIT_TEST_PG_URL"), NoTls).unwrap();
    // Once per run: CREATE EXTENSION IF NOT EXISTS in two sessions at once can collide.
    static CREATED: std::sync::Once = std::sync::Once::new();
    CREATED.call_once(|| {
        c.batch_execute("CREATE EXTENSION IF NOT EXISTS idkit")
            .unwrap();
    });
    c
}

/// A schema of the test's own, dropped first if an earlier run left it.
fn schema(c: &mut Client, name: &str) {
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}; SET search_path = {name}, public"
    ))
    .unwrap();
}

#[test]
fn ids_of_eight_sessions_are_distinct_and_each_sessions_increase() {
    client();
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (function, scheme) in [
        ("idkit_ulid()", "ulid"),
        ("idkit_uuidv7()", "uuid-v7"),
        ("idkit_snowflake()", "snowflake-twitter"),
        ("idkit_snowflake('instagram')", "snowflake-instagram"),
        ("idkit_typeid('user')", "typeid"),
    ] {
        let sessions: Vec<Vec<Vec<u8>>> = rt.block_on(async {
            let tasks: Vec<_> = (0..8)
                .map(|_| {
                    let url = env("IDKIT_TEST_PG_URL");
                    tokio::spawn(async move {
                        use sqlx::Connection;
                        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
                        let mut out = Vec::new();
                        // Statements of 2,000 ids, interleaved with the other sessions'.
                        for _ in 0..10 {
                            let sql = format!(
                                "SELECT {function}::text FROM generate_series(1, 2000) g ORDER BY g"
                            );
                            let rows: Vec<(String,)> =
                                sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                                    .fetch_all(&mut conn)
                                    .await
                                    .unwrap();
                            out.extend(rows.into_iter().map(|(text,)| text));
                        }
                        out
                    })
                })
                .collect();
            let mut all = Vec::new();
            for t in tasks {
                let texts = t.await.unwrap();
                all.push(texts.iter().map(|t| sortable(scheme, t)).collect());
            }
            all
        });
        let mut seen = HashSet::new();
        for ids in &sessions {
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "{function}: one session's ids increase"
            );
            for id in ids {
                assert!(seen.insert(id.clone()), "{function}: a duplicate");
            }
        }
        assert_eq!(seen.len(), 8 * 20_000, "{function}");
    }
}

/// An id's text as bytes that sort as the ids do, read with idkit's own codecs.
fn sortable(scheme: &str, text: &str) -> Vec<u8> {
    let codec = idkit_all::registry::find(scheme).unwrap().codec();
    let raw = codec
        .parse_raw(text)
        .unwrap_or_else(|e| panic!("{scheme} {text}: {e}"));
    raw.as_bytes().to_vec()
}

#[test]
fn rust_reads_the_extensions_ids_and_the_extension_reads_rusts() {
    let mut c = client();
    schema(&mut c, "readback");
    c.batch_execute(
        "CREATE TABLE made (u ulid, v uuid, s bigint, t text);
         INSERT INTO made SELECT idkit_ulid(), idkit_uuidv7(), idkit_snowflake(), idkit_typeid('user')
         FROM generate_series(1, 500)",
    )
    .unwrap();
    // The extension's ids through sqlx, binary protocol, into idkit's column types; their
    // text and time as the extension gives them.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&env("IDKIT_TEST_PG_URL"))
            .await
            .unwrap();
        type Row = (
            Ulid,
            uuid::Uuid,
            SnowflakeId<Twitter>,
            String,
            String,
            String,
            i64,
            i64,
            i64,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT u, v, s, u::text, v::text, t,
                    (extract(epoch FROM idkit_time(u)) * 1000)::bigint,
                    (extract(epoch FROM idkit_time(v)) * 1000)::bigint,
                    (extract(epoch FROM idkit_time(s, 'twitter')) * 1000)::bigint
             FROM readback.made",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap();
        assert_eq!(rows.len(), 500);
        for (u, v, s, u_text, v_text, t, u_ms, v_ms, s_ms) in rows {
            assert_eq!(u.to_string(), u_text);
            assert_eq!(v.hyphenated().to_string(), v_text);
            let ms = |n: i64| u64::try_from(n).unwrap();
            assert_eq!(u.timestamp_ms(), ms(u_ms));
            let v7 = idkit_uuid::UuidCodec::V7.decode(v);
            assert_eq!(v7.timestamp_ms, Some(ms(v_ms)));
            assert_eq!(s.timestamp_ms(), ms(s_ms));
            // Worker 1 of the server's idkit.worker_id: Twitter's worker field, datacenter 0.
            assert_eq!(s.field("worker"), Some(1), "{s:?}");
            let typeid: idkit_typeid::TypeId = t.parse().unwrap();
            assert_eq!(typeid.prefix().as_str(), "user");
        }
    });
    // Rust's ids into the extension's types (binary parameters, postgres crate), read back
    // as text, time and fields by the extension.
    let ulids = idkit_ulid::AtomicUlid::new().take(300).unwrap();
    let v7s = idkit_uuid::AtomicUuidV7::new().take(300).unwrap();
    let twitter = Snowflake::builder(Twitter)
        .field("worker", 9)
        .build_atomic()
        .unwrap();
    c.batch_execute("CREATE TABLE theirs (u ulid PRIMARY KEY, v uuid, s bigint)")
        .unwrap();
    for (i, (u, v)) in ulids.iter().zip(&v7s).enumerate() {
        let s = twitter.next_id().unwrap();
        c.execute(
            "INSERT INTO theirs VALUES ($1, $2, $3)",
            &[u, v, &SnowflakeId::<Twitter>::new(s).unwrap()],
        )
        .unwrap();
        let row = c
            .query_one(
                "SELECT u::text, (extract(epoch FROM idkit_time(u)) * 1000)::bigint,
                        (extract(epoch FROM idkit_time(v)) * 1000)::bigint,
                        idkit_decode(s, 'snowflake-twitter')::text, u
                 FROM theirs WHERE u = $1",
                &[u],
            )
            .unwrap();
        assert_eq!(row.get::<_, String>(0), u.to_string(), "row {i}");
        let ms = |column: usize| u64::try_from(row.get::<_, i64>(column)).unwrap();
        assert_eq!(ms(1), u.timestamp_ms());
        let v7 = idkit_uuid::UuidCodec::V7.decode(*v);
        assert_eq!(Some(ms(2)), v7.timestamp_ms);
        let fields: serde_json::Value = serde_json::from_str(&row.get::<_, String>(3)).unwrap();
        assert_eq!(fields["fields"]["worker"], 9);
        assert_eq!(fields["id"], s.to_string());
        assert_eq!(row.get::<_, Ulid>(4), *u);
    }
    // ORDER BY on the ulid column is the order Rust made them in.
    let ordered: Vec<Ulid> = first_column(&mut c, "SELECT u FROM theirs ORDER BY u");
    assert_eq!(ordered, ulids);
    // 16 bytes in a row.
    let size: i32 = c
        .query_one("SELECT max(pg_column_size(u)) FROM theirs", &[])
        .unwrap()
        .get(0);
    assert_eq!(size, 16);
}

#[test]
fn copy_in_binary_carries_the_sixteen_bytes_and_round_trips() {
    use std::io::{Read, Write};
    let mut c = client();
    schema(&mut c, "copying");
    c.batch_execute(
        "CREATE TABLE a (id ulid PRIMARY KEY DEFAULT idkit_ulid(), n int);
         INSERT INTO a (n) SELECT g FROM generate_series(1, 1000) g;
         CREATE TABLE b (LIKE a)",
    )
    .unwrap();
    let mut out = Vec::new();
    c.copy_out("COPY copying.a (id) TO STDOUT (FORMAT binary)")
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    // PostgreSQL's binary COPY: an 11-byte signature, flags and extension length (4 + 4),
    // then per row a 16-bit field count and each field's 32-bit length and bytes.
    let ids: Vec<Ulid> = first_column(&mut c, "SELECT id FROM copying.a");
    let mut at = 19;
    for id in &ids {
        assert_eq!(&out[at..at + 2], &1_i16.to_be_bytes());
        assert_eq!(&out[at + 2..at + 6], &16_i32.to_be_bytes());
        assert_eq!(&out[at + 6..at + 22], &id.0.to_be_bytes());
        at += 22;
    }
    copy_back(&mut c, &out, "copying.a", "copying.b");
    // The hash class: a hash index answers an equality, a hash join joins the two tables.
    c.batch_execute(
        "CREATE INDEX a_hash ON copying.a USING hash (id);
         SET enable_seqscan = off; SET enable_bitmapscan = off",
    )
    .unwrap();
    let probe = "SELECT n FROM copying.a WHERE id = (SELECT min(id) FROM copying.b)";
    assert!(
        explain(&mut c, probe).contains("a_hash"),
        "{}",
        explain(&mut c, probe)
    );
    assert_eq!(c.query_one(probe, &[]).unwrap().get::<_, i32>(0), 1);
    c.batch_execute(
        "RESET enable_seqscan; RESET enable_bitmapscan;
         SET enable_mergejoin = off; SET enable_nestloop = off",
    )
    .unwrap();
    let join = "SELECT count(*) FROM copying.a JOIN copying.b USING (id)";
    assert!(explain(&mut c, join).contains("Hash Join"));
    assert_eq!(c.query_one(join, &[]).unwrap().get::<_, i64>(0), 1000);
    c.batch_execute("RESET enable_mergejoin; RESET enable_nestloop")
        .unwrap();
    // A value of the wrong width is an error naming it, and the session goes on.
    let mut bad = out[..19].to_vec();
    bad.extend(1_i16.to_be_bytes());
    bad.extend(15_i32.to_be_bytes());
    bad.extend([7; 15]);
    bad.extend((-1_i16).to_be_bytes());
    let mut writer = c
        .copy_in("COPY copying.b (id) FROM STDIN (FORMAT binary)")
        .unwrap();
    writer.write_all(&bad).unwrap();
    let e = writer.finish().unwrap_err();
    assert!(
        e.to_string().contains("15 bytes, expected 16") || format!("{e:?}").contains("15 bytes"),
        "{e:?}"
    );
    c.query_one("SELECT 1", &[]).unwrap();
}

/// Copies `binary` (what `COPY from (id) TO STDOUT (FORMAT binary)` wrote) into table `to`,
/// and checks that the two tables hold the same ids.
fn copy_back(c: &mut Client, binary: &[u8], from: &str, to: &str) {
    use std::io::Write;
    let mut writer = c
        .copy_in(&format!("COPY {to} (id) FROM STDIN (FORMAT binary)"))
        .unwrap();
    writer.write_all(binary).unwrap();
    writer.finish().unwrap();
    let differ: i64 = c
        .query_one(
            &format!(
                "SELECT count(*) FROM {from} a FULL JOIN {to} b USING (id)
                 WHERE a.id IS NULL OR b.id IS NULL"
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(differ, 0, "{from} and {to} differ");
}

/// PostgreSQL 15's client programs, Debian's.
fn pg_bin(name: &str) -> PathBuf {
    let bin = Path::new("/usr/lib/postgresql/15/bin").join(name);
    assert!(bin.exists(), "{} is missing", bin.display());
    bin
}

/// `IDKIT_TEST_PG_URL`'s port.
fn port() -> String {
    let url = env("IDKIT_TEST_PG_URL");
    url.rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .unwrap()
        .to_owned()
}

#[test]
fn pg_dump_and_restore_keep_every_id() {
    let mut c = client();
    for sql in [
        "DROP DATABASE IF EXISTS dumped",
        "DROP DATABASE IF EXISTS restored",
        "CREATE DATABASE dumped",
        "CREATE DATABASE restored",
    ] {
        c.batch_execute(sql).unwrap();
    }
    let url = env("IDKIT_TEST_PG_URL");
    let db = |name: &str| format!("{}/{name}", url.rsplit_once('/').unwrap().0);
    let mut d = Client::connect(&db("dumped"), NoTls).unwrap();
    d.batch_execute(
        "CREATE EXTENSION idkit;
         CREATE TABLE t (id ulid PRIMARY KEY DEFAULT idkit_ulid(), v uuid DEFAULT idkit_uuidv7(),
                         s bigint DEFAULT idkit_snowflake());
         INSERT INTO t SELECT FROM generate_series(1, 2000)",
    )
    .unwrap();
    let dump = std::env::temp_dir().join(format!("idkit-dump-{}.sql", std::process::id()));
    let status = Command::new(pg_bin("pg_dump"))
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port(),
            "-U",
            "postgres",
            "-d",
            "dumped",
            "-f",
        ])
        .arg(&dump)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new(pg_bin("psql"))
        .args([
            "-X",
            "-q",
            "-o",
            "/dev/null",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            &port(),
        ])
        .args(["-U", "postgres", "-d", "restored", "-f"])
        .arg(&dump)
        .status()
        .unwrap();
    assert!(status.success());
    let _ = std::fs::remove_file(&dump);
    let rows = |client: &mut Client| -> Vec<(String, uuid::Uuid, i64)> {
        client
            .query("SELECT id::text, v, s FROM t ORDER BY id", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
    };
    let mut r = Client::connect(&db("restored"), NoTls).unwrap();
    let (before, after) = (rows(&mut d), rows(&mut r));
    assert_eq!(before.len(), 2000);
    assert_eq!(before, after);
    // The restored table makes more ids with its default, after the ones it holds.
    r.batch_execute("INSERT INTO t SELECT FROM generate_series(1, 10)")
        .unwrap();
    assert_eq!(rows(&mut r).len(), 2010);
}

/// The plan of `query`, one line per node.
fn explain(c: &mut Client, query: &str) -> String {
    c.query(&format!("EXPLAIN {query}"), &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn time_ranges_are_index_ranges_and_rows_land_in_their_months_partition() {
    let mut c = client();
    schema(&mut c, "ranges");
    // Ids of known times, made in Rust: a row every six hours from 2026-09-01 for 90 days.
    let start = idkit_core::time::parse_time_ms("2026-09-01").unwrap();
    let times: Vec<u64> = (0..360).map(|i| start + i * 6 * 3_600_000).collect();
    c.batch_execute(
        "CREATE TABLE u (id ulid PRIMARY KEY, at timestamptz);
         CREATE TABLE v (id uuid PRIMARY KEY, at timestamptz);
         CREATE TABLE s (id bigint PRIMARY KEY, at timestamptz);
         CREATE TABLE p (id ulid PRIMARY KEY, at timestamptz) PARTITION BY RANGE (id);
         CREATE TABLE p_2026_09 PARTITION OF p
             FOR VALUES FROM (idkit_ulid_lowest('2026-09-01')) TO (idkit_ulid_lowest('2026-10-01'));
         CREATE TABLE p_2026_10 PARTITION OF p
             FOR VALUES FROM (idkit_ulid_lowest('2026-10-01')) TO (idkit_ulid_lowest('2026-11-01'));
         CREATE TABLE p_2026_11 PARTITION OF p
             FOR VALUES FROM (idkit_ulid_lowest('2026-11-01')) TO (idkit_ulid_lowest('2026-12-01'));
         CREATE TABLE pv (id uuid PRIMARY KEY) PARTITION BY RANGE (id);
         CREATE TABLE pv_2026_09 PARTITION OF pv
             FOR VALUES FROM (idkit_uuidv7_lowest('2026-09-01')) TO (idkit_uuidv7_lowest('2026-10-01'));
         CREATE TABLE pv_rest PARTITION OF pv DEFAULT",
    )
    .unwrap();
    for (i, &ms) in times.iter().enumerate() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        let u = Ulid::from_parts(ms, i as u128 * 7919);
        let v = uuid::Uuid::from_u128((u128::from(ms) << 80) | (7 << 76) | (2 << 62) | i as u128);
        // Twitter's layout: ms since its epoch above 22 bits of datacenter, worker, sequence.
        let s = i64::try_from(((ms - 1_288_834_974_657) << 22) | i as u64).unwrap();
        c.execute("INSERT INTO u VALUES ($1, $2)", &[&u, &at])
            .unwrap();
        c.execute("INSERT INTO v VALUES ($1, $2)", &[&v, &at])
            .unwrap();
        c.execute("INSERT INTO s VALUES ($1, $2)", &[&s, &at])
            .unwrap();
        c.execute("INSERT INTO p VALUES ($1, $2)", &[&u, &at])
            .unwrap();
        c.execute("INSERT INTO pv VALUES ($1)", &[&v]).unwrap();
    }
    c.batch_execute("ANALYZE").unwrap();
    // The ids of October by their key alone count as the rows of October by their time.
    for (table, lowest) in [
        ("u", "idkit_ulid_lowest"),
        ("v", "idkit_uuidv7_lowest"),
        ("s", "idkit_snowflake_lowest"),
    ] {
        let by_id = format!(
            "SELECT count(*) FROM {table} WHERE id >= {lowest}('2026-10-01') AND id < {lowest}('2026-11-01')"
        );
        let n: i64 = c.query_one(&by_id, &[]).unwrap().get(0);
        let expected: i64 = c
            .query_one(
                &format!(
                    "SELECT count(*) FROM {table} WHERE at >= '2026-10-01' AND at < '2026-11-01'"
                ),
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!((n, expected), (124, 124), "{table}");
        // The bounds are constants to the planner: an index range scan on the key.
        c.batch_execute("SET enable_seqscan = off").unwrap();
        let plan = explain(&mut c, &by_id);
        c.batch_execute("RESET enable_seqscan").unwrap();
        assert!(plan.contains("Index Cond: ((id >= "), "{table}:\n{plan}");
        assert!(plan.contains(&format!("{table}_pkey")), "{table}:\n{plan}");
    }
    // The highest id of a time is the last of its millisecond.
    let last: bool = c
        .query_one(
            "SELECT idkit_ulid_highest('2026-10-01') < idkit_ulid_lowest('2026-10-01 00:00:00.001+00')
                AND idkit_ulid_highest('2026-10-01') > idkit_ulid_lowest('2026-10-01')",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(last);
    // Every row landed in the partition of its time's month, and a query for a month reads
    // that partition alone.
    let misplaced: i64 = c
        .query_one(
            "SELECT count(*) FROM p
             WHERE tableoid::regclass::text <> 'p_' || to_char(at AT TIME ZONE 'UTC', 'YYYY_MM')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(misplaced, 0);
    let in_september: i64 = c
        .query_one("SELECT count(*) FROM pv_2026_09", &[])
        .unwrap()
        .get(0);
    assert_eq!(in_september, 120);
    let plan = explain(
        &mut c,
        "SELECT * FROM p WHERE id >= idkit_ulid_lowest('2026-10-01') AND id < idkit_ulid_lowest('2026-11-01')",
    );
    assert!(
        plan.contains("p_2026_10") && !plan.contains("p_2026_09") && !plan.contains("p_2026_11"),
        "{plan}"
    );
}

#[test]
fn a_snowflake_layout_past_its_cap_waits_and_repeats_nothing() {
    let mut c = client();
    // 16 ids a millisecond: 20,000 ids in one statement need 1,250 of them.
    let row = c
        .query_one(
            "SELECT count(DISTINCT id), count(*), max(id) - min(id) > 0,
                    (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::bigint
             FROM (SELECT idkit_snowflake_custom('time:41,worker:10,sequence:4', 1288834974657) id
                   FROM generate_series(1, 20000)) ids",
            &[],
        )
        .unwrap();
    let (distinct, all, _, took_ms): (i64, i64, bool, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!((distinct, all), (20_000, 20_000));
    assert!(
        took_ms >= 1_200,
        "the cap waits for the next tick: {took_ms} ms"
    );
}

/// A generator of bad text: lengths around each form's, characters inside and outside its
/// alphabet (xorshift, seeded, so a failure repeats).
fn bad_inputs(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabet: Vec<char> =
        "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijklmnopqrstuvwxyzILOU_-:.,+ \u{e9}\u{1f600}\\'\""
            .chars()
            .collect();
    (0..n)
        .map(|_| {
            let len = [0, 1, 25, 26, 27, 36, 40, 100][usize::try_from(next() % 8).unwrap()];
            (0..len)
                .map(|_| alphabet[usize::try_from(next() % alphabet.len() as u64).unwrap()])
                .collect()
        })
        .collect()
}

#[test]
fn bad_input_is_an_sql_error_never_a_crash() {
    use idkit_all::registry::find;
    let mut c = client();
    // Each call with what idkit's Rust crates say of the same text: SQL accepts exactly
    // what they accept (a ULID, a TypeID's prefix, a layout), and refuses the rest with an
    // error, never a crash. PostgreSQL reads timestamps itself ('today', 'epoch'): that one
    // is only held to an answer or an error.
    type Accepts = fn(&str) -> Option<bool>;
    fn decodes(scheme: &str, t: &str) -> bool {
        find(scheme)
            .unwrap()
            .codec()
            .decode_text(t)
            .is_ok_and(|d| d.timestamp_ms.is_some())
    }
    let calls: [(&str, Accepts); 7] = [
        ("SELECT $1::text::ulid::text", |t| {
            Some(idkit_ulid::UlidCodec.parse(t).is_ok())
        }),
        ("SELECT idkit_time($1, 'typeid')::text", |t| {
            Some(decodes("typeid", t))
        }),
        ("SELECT idkit_decode($1, 'ksuid')::text", |t| {
            Some(decodes("ksuid", t))
        }),
        ("SELECT idkit_snowflake($1)::text", |t| {
            Some(find(t).is_ok_and(|e| {
                idkit_snowflake::preset(e.name()).is_some_and(|p| p.word_bits() == 64)
            }))
        }),
        ("SELECT idkit_snowflake_custom($1, 0)::text", |t| {
            Some(idkit_snowflake::LayoutSpec::parse("custom", t, 1, 0).is_ok())
        }),
        ("SELECT idkit_typeid($1)", |t| {
            Some(idkit_typeid::Prefix::new(t).is_ok())
        }),
        (
            "SELECT idkit_ulid_lowest($1::text::timestamptz)::text",
            |_| None,
        ),
    ];
    let mut accepted = 0;
    for text in bad_inputs(3_000) {
        for (sql, rust) in calls {
            let answer = c.query_one(sql, &[&text]);
            if let Err(e) = &answer {
                let db = e
                    .as_db_error()
                    .unwrap_or_else(|| panic!("{sql} {text:?}: {e}"));
                assert!(!db.message().is_empty());
            }
            if let Some(ok) = rust(&text) {
                assert_eq!(answer.is_ok(), ok, "{sql} {text:?}: {answer:?}");
            }
            accepted += usize::from(answer.is_ok());
        }
    }
    // Some random texts are valid (an empty or one-letter TypeID prefix), most are not.
    assert!(accepted > 0 && accepted < 3_000, "{accepted}");
    for sql in [
        "SELECT idkit_ulid_lowest('infinity')",
        "SELECT idkit_ulid_lowest('1969-12-31')",
        "SELECT idkit_uuidv7_lowest('12000-01-01')",
        "SELECT idkit_snowflake_lowest('2000-01-01', 'twitter')",
        "SELECT idkit_snowflake_lowest(now(), 'ulid')",
        "SELECT idkit_time(gen_random_uuid())",
        "SELECT idkit_time(-1::bigint, 'twitter')",
        "SELECT idkit_decode(1::bigint, 'nope')",
        "SELECT idkit_typeid('User')",
        "SELECT idkit_snowflake('flake-boundary')",
        "SELECT idkit_snowflake_custom('time:41,worker:10,sequence:12', 0, 0)",
        "SELECT idkit_snowflake_custom('time:41', -1)",
        "SELECT 'user_01h455vb4pex5vsknk084sn02q'::text::ulid",
    ] {
        let e = c.query_one(sql, &[]).unwrap_err();
        assert!(e.as_db_error().is_some(), "{sql}: {e}");
    }
    // Bytes of the wrong width in binary receive.
    for width in [0, 15, 17, 32] {
        let e = c
            .query_one("SELECT $1::ulid", &[&Raw(vec![7; width])])
            .unwrap_err();
        let message = e
            .as_db_error()
            .map(|d| d.message().to_owned())
            .unwrap_or_default();
        assert!(
            message.contains(&format!("{width} bytes, expected 16")),
            "{e:?}"
        );
    }
    // The server is up, and its log shows no backend that died.
    c.query_one("SELECT 1", &[]).unwrap();
    let log = std::fs::read_to_string(Path::new(&env("IDKIT_TEST_PG_DIR")).join("log")).unwrap();
    for crash in ["terminated by signal", "server process (PID", "PANIC"] {
        assert!(!log.contains(crash), "the server log shows {crash:?}");
    }
}

/// Bytes sent as a parameter of whatever type the server asks for, as a client of another
/// language might.
#[derive(Debug)]
struct Raw(Vec<u8>);

impl postgres::types::ToSql for Raw {
    fn to_sql(
        &self,
        _: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(postgres::types::IsNull::No)
    }
    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
    postgres::types::to_sql_checked!();
}

/// A throwaway server of the test's own (scripts/pg-cluster.sh), stopped when dropped.
struct Server {
    dir: PathBuf,
    port: u16,
}

impl Server {
    fn start(name: &str, opts: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("idkit-pg-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A port free now: the system's pick for a listener, closed again.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let status = Command::new(scripts().join("pg-cluster.sh"))
            .arg("start")
            .arg(&dir)
            .arg(port.to_string())
            .env("PG_OPTS", opts)
            .status()
            .unwrap();
        assert!(status.success());
        Self { dir, port }
    }

    fn client(&self) -> Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        let mut c = Client::connect(&url, NoTls).unwrap();
        c.batch_execute("CREATE EXTENSION IF NOT EXISTS idkit")
            .unwrap();
        c
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(scripts().join("pg-cluster.sh"))
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

/// The error's message and hint.
fn message(e: &postgres::Error) -> String {
    let db = e.as_db_error().unwrap_or_else(|| panic!("{e}"));
    format!("{} {}", db.message(), db.hint().unwrap_or(""))
}

/// The first column of every row `sql` returns.
fn first_column<T: for<'a> postgres::types::FromSql<'a>>(c: &mut Client, sql: &str) -> Vec<T> {
    let rows = c.query(sql, &[]).unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

/// Asserts that the server refuses `sql` with a message (or hint) that holds `expected`.
#[track_caller]
fn assert_refused(
    c: &mut Client,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
    expected: &str,
) {
    let e = c
        .query(sql, params)
        .err()
        .unwrap_or_else(|| panic!("{sql} was accepted"));
    let text = message(&e);
    assert!(text.contains(expected), "{sql}: {text}");
}

#[test]
fn without_a_worker_id_or_the_preload_the_generators_say_what_to_set() {
    let preloaded = Server::start("noworker", "-c shared_preload_libraries=idkit");
    let mut c = preloaded.client();
    assert_refused(
        &mut c,
        "SELECT idkit_snowflake()",
        &[],
        "idkit.worker_id is not set",
    );
    // A layout with no worker field needs none; the time-ordered ones never do.
    c.query_one(
        "SELECT idkit_snowflake('mastodon'), idkit_ulid(), idkit_uuidv7()",
        &[],
    )
    .unwrap();
    drop(preloaded);

    let plain = Server::start("nopreload", "");
    let mut c = plain.client();
    for generator in [
        "idkit_ulid()",
        "idkit_uuidv7()",
        "idkit_typeid('user')",
        "idkit_snowflake('mastodon')",
    ] {
        let sql = format!("SELECT {generator}");
        assert_refused(&mut c, &sql, &[], "shared_preload_libraries");
    }
    // Types, reading and bounds need no shared memory.
    let row = c
        .query_one(
            "SELECT '01ARZ3NDEKTSV4RRFFQ69G5FAV'::ulid::timestamptz = '2016-07-30 23:54:10.259+00',
                    idkit_ulid_lowest('2016-07-30 23:54:10.259+00')::text",
            &[],
        )
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, String>(1), "01ARZ3NDEK0000000000000000");
}

#[test]
fn typeids_keep_their_prefix_in_text_binary_and_order() {
    use std::io::Read;
    let mut c = client();
    schema(&mut c, "typeids");
    c.batch_execute(
        "CREATE TABLE users (id typeid PRIMARY KEY DEFAULT idkit_typeid('user'), n int);
         INSERT INTO users (n) SELECT g FROM generate_series(1, 500) g;
         CREATE TABLE copied (LIKE users);
         CREATE DOMAIN user_id AS typeid CHECK (idkit_typeid_prefix(VALUE) = 'user');
         CREATE TABLE only_users (id user_id PRIMARY KEY)",
    )
    .unwrap();
    // Text: the canonical string, read by idkit's Rust TypeId, prefix and all; in the order
    // they were made; the time as Rust reads it.
    let rows = c
        .query(
            "SELECT id::text AS text, (extract(epoch FROM id::timestamptz) * 1000)::bigint, id::uuid,
                    pg_column_size(id)
             FROM users ORDER BY id",
            &[],
        )
        .unwrap();
    let mut last = None;
    for row in &rows {
        let id: idkit_typeid::TypeId = row.get::<_, String>(0).parse().unwrap();
        assert_eq!(id.prefix().as_str(), "user");
        assert_eq!(
            id.timestamp_ms(),
            Some(u64::try_from(row.get::<_, i64>(1)).unwrap())
        );
        assert_eq!(row.get::<_, uuid::Uuid>(2).as_u128(), id.uuid());
        // A short varlena: a byte of header, the UUID, the prefix.
        assert_eq!(row.get::<_, i32>(3), 1 + 16 + 4);
        assert!(
            last.is_none_or(|l| l < id.uuid()),
            "ORDER BY id is the order made"
        );
        last = Some(id.uuid());
    }
    // Binary COPY: the UUID's 16 bytes then the prefix, and back whole.
    let mut out = Vec::new();
    c.copy_out("COPY typeids.users (id) TO STDOUT (FORMAT binary)")
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(&out[21..25], &20_i32.to_be_bytes());
    assert_eq!(&out[41..45], b"user");
    copy_back(&mut c, &out, "typeids.users", "typeids.copied");
    // idkit's Rust TypeId reads the column over the binary protocol, prefix and all, with
    // sqlx and with postgres; a typed id checks the prefix against its marker's.
    struct UserMarker;
    impl idkit_core::id::Marker for UserMarker {
        const PREFIX: &'static str = "user";
    }
    struct OrderMarker;
    impl idkit_core::id::Marker for OrderMarker {
        const PREFIX: &'static str = "order";
    }
    type UserId = idkit_core::id::Id<UserMarker, idkit_typeid::TypeId>;
    type OrderId = idkit_core::id::Id<OrderMarker, idkit_typeid::TypeId>;
    let texts: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let read: Vec<idkit_typeid::TypeId> =
        first_column(&mut c, "SELECT id FROM typeids.users ORDER BY id");
    assert_eq!(
        read.iter().map(ToString::to_string).collect::<Vec<_>>(),
        texts
    );
    let typed: UserId = c
        .query_one("SELECT id FROM typeids.users ORDER BY id LIMIT 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(typed.to_string(), texts[0]);
    let wrong = c
        .query_one("SELECT id FROM typeids.users LIMIT 1", &[])
        .unwrap()
        .try_get::<_, OrderId>(0)
        .unwrap_err();
    assert!(format!("{wrong:?}").contains("order"), "{wrong:?}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&env("IDKIT_TEST_PG_URL"))
            .await
            .unwrap();
        let ids: Vec<(idkit_typeid::TypeId, UserId)> =
            sqlx::query_as("SELECT id, id FROM typeids.users ORDER BY id")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        for ((plain, typed), text) in ids.iter().zip(&texts) {
            assert_eq!(
                (plain.to_string(), typed.to_string()),
                (text.clone(), text.clone())
            );
        }
        let wrong = sqlx::query_as::<_, (OrderId,)>("SELECT id FROM typeids.users LIMIT 1")
            .fetch_one(&mut conn)
            .await
            .unwrap_err();
        assert!(wrong.to_string().contains("order"), "{wrong}");
        // An id of another scheme refuses a typeid value, with a typed error.
        let ulid = sqlx::query_as::<_, (Ulid,)>("SELECT id FROM typeids.users LIMIT 1")
            .fetch_one(&mut conn)
            .await
            .unwrap_err();
        assert!(ulid.to_string().contains("typeid value"), "{ulid}");
    });
    // A TypeID of another type where a column wants users' is refused, with a message.
    c.execute(
        "INSERT INTO typeids.only_users VALUES (idkit_typeid('user'))",
        &[],
    )
    .unwrap();
    assert_refused(
        &mut c,
        "INSERT INTO typeids.only_users VALUES (idkit_typeid('order'))",
        &[],
        "user_id",
    );
    for bad in [
        "User_01h455vb4pex5vsknk084sn02q",
        "user_01h455vb4pex5vsknk084sn02",
        "user_",
    ] {
        assert_refused(
            &mut c,
            "SELECT $1::text::typeid",
            &[&bad],
            "invalid input syntax for type typeid",
        );
    }
    // The bounds of a time are a range within one type.
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM typeids.users
             WHERE id >= idkit_typeid_lowest('user', now() - interval '1 hour')
               AND id < idkit_typeid_lowest('user', now() + interval '1 hour')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 500);
    // Any scheme's bounds as text: KSUID's second, as Rust gives it.
    let row = c
        .query_one(
            "SELECT idkit_lowest('ksuid', '2017-10-10 04:00:47+00'),
                    idkit_highest('ksuid', '2017-10-10 04:00:47+00')",
            &[],
        )
        .unwrap();
    let codec = idkit_all::registry::find("ksuid").unwrap().codec();
    let b = codec.bounds_raw(1_507_608_047_000, &[]).unwrap();
    assert_eq!(
        row.get::<_, String>(0),
        codec.format_raw(&b.lowest).unwrap()
    );
    assert_eq!(
        row.get::<_, String>(1),
        codec.format_raw(&b.highest).unwrap()
    );
}

/// `idkit_time(uuid)` and `idkit_decode(uuid)` read a UUID by its own version: RFC 9562's
/// version 1 and 6 examples (appendices A.1 and A.5, 2022-02-22T19:22:22Z) and version 7's
/// (A.6) give their times and fields; a version 4 has none.
#[test]
fn uuids_are_read_by_their_own_version() {
    let mut c = client();
    for (uuid, scheme) in [
        ("c232ab00-9414-11ec-b3c8-9f6bdeced846", "uuid-v1"),
        ("1ec9414c-232a-6b00-b3c8-9f6bdeced846", "uuid-v6"),
    ] {
        let row = c
            .query_one(
                "SELECT (extract(epoch FROM idkit_time($1::text::uuid)) * 1000)::bigint,
                        idkit_decode($1::text::uuid)::text",
                &[&uuid],
            )
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 1_645_557_742_000, "{uuid}");
        let decoded: serde_json::Value = serde_json::from_str(&row.get::<_, String>(1)).unwrap();
        assert_eq!(decoded["scheme"], scheme);
        assert_eq!(decoded["fields"]["clock_seq"], 0x33C8);
        assert_eq!(decoded["fields"]["node"], "9f6bdeced846");
    }
    let row = c
        .query_one(
            "SELECT (extract(epoch FROM idkit_time('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid))
                     * 1000)::bigint",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 0x017F_22E2_79B0);
    assert_refused(
        &mut c,
        "SELECT idkit_time('919108f7-52d1-4320-9bac-f847db4148a8'::uuid)",
        &[],
        "uuid-v4",
    );
}

/// Every `sql` block of the extension's README and of the root README runs as written, in
/// order, through psql against a fresh database of its own (the server preloads the
/// extension with a worker id, as the READMEs say to): the docs cannot drift from the SQL.
/// Every SQL block of the READMEs runs, each in a database of its own README, and every
/// query in it shows something (a row, its first value not NULL), today and on any later
/// day; where the README shows what a query gives, on the line after it (`-- → ROW` the row
/// exactly, its values joined by ` | `; `-- ≈ ROW` a row of the same shape: another id,
/// another time), the query gives that.
#[test]
fn every_sql_example_of_the_readmes_runs_and_shows_what_the_readme_says() {
    use postgres::SimpleQueryMessage;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut c = client();
    let mut shown_rows = 0;
    for (readme, database) in [
        ("extensions/idkit-pg/README.md", "readme_extension"),
        ("README.md", "readme_root"),
    ] {
        let text = std::fs::read_to_string(root.join(readme)).unwrap();
        let blocks: Vec<&str> = text
            .split("```sql\n")
            .skip(1)
            .filter_map(|rest| rest.split("```").next())
            .collect();
        assert!(!blocks.is_empty(), "{readme} has no sql block");
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {database}"))
            .unwrap();
        c.batch_execute(&format!("CREATE DATABASE {database}"))
            .unwrap();
        let url = env("IDKIT_TEST_PG_URL");
        let (base, _) = url.rsplit_once('/').unwrap();
        let mut db = Client::connect(&format!("{base}/{database}"), NoTls).unwrap();
        for block in blocks {
            let pieces = idkit_testkit::readme::pieces(block);
            for (sql, expected) in pieces {
                if sql.trim().is_empty() {
                    assert!(
                        expected.is_none(),
                        "{readme}: {expected:?} follows no query"
                    );
                    continue;
                }
                let messages = db
                    .simple_query(&sql)
                    .unwrap_or_else(|e| panic!("{readme}: {e}\n{sql}"));
                // Each query's first row (None: it showed none), in order.
                let mut queries: Vec<Option<String>> = Vec::new();
                let mut in_query = false;
                for message in messages {
                    match message {
                        SimpleQueryMessage::RowDescription(_) => {
                            queries.push(None);
                            in_query = true;
                        }
                        SimpleQueryMessage::Row(row) if in_query => {
                            let last = queries.last_mut().unwrap();
                            if last.is_none() {
                                let values: Vec<&str> = (0..row.len())
                                    .map(|i| row.get(i).unwrap_or("NULL"))
                                    .collect();
                                assert_ne!(
                                    values[0], "NULL",
                                    "{readme}: a query shows NULL\n{sql}"
                                );
                                *last = Some(values.join(" | "));
                            }
                        }
                        SimpleQueryMessage::CommandComplete(_) => in_query = false,
                        _ => {}
                    }
                }
                assert!(
                    queries.iter().all(Option::is_some),
                    "{readme}: a query shows nothing\n{sql}"
                );
                let Some(expected) = expected else { continue };
                let got = queries
                    .last()
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| panic!("{readme}: {expected} follows no query"));
                // To write a README's rows: IDKIT_README_SHOW=1 prints each, checking none.
                if std::env::var_os("IDKIT_README_SHOW").is_some() {
                    eprintln!("{readme}: {got}");
                    continue;
                }
                match expected.strip_prefix("-- →") {
                    Some(want) => assert_eq!(got, want.trim(), "{readme}: another row for\n{sql}"),
                    None => assert_eq!(
                        idkit_testkit::readme::shape(&got),
                        idkit_testkit::readme::shape(expected.trim_start_matches("-- ≈").trim()),
                        "{readme}: a row of another shape for\n{sql}{got}"
                    ),
                }
                shown_rows += 1;
            }
        }
        drop(db);
        c.batch_execute(&format!("DROP DATABASE {database}"))
            .unwrap();
    }
    assert!(shown_rows >= 12, "the READMEs show {shown_rows} rows");
}
