//! The PostgreSQL measurements against a real server: `scripts/test.sh` starts one on
//! loopback and sets `IDKIT_TEST_PG_URL` (feature `live-tests`), and a PostgreSQL 18 server
//! (scripts/pg18.sh) for the built-in `uuidv7()`, `IDKIT_TEST_PG18_URL`. The quick profile's
//! PostgreSQL part runs into a temporary directory and every column is checked for a
//! plausible value (not the numbers themselves); Instagram's in-database generator, as
//! `idkit sql` prints it, is loaded and its ids read back with idkit's decoders.
#![cfg(feature = "live-tests")]

use bench_harness::Profile;
use bench_harness::engine::InsertResults as _;
use bench_harness::engine::insert::StorageName as _;
use bench_harness::engines::postgres::{self as pg, PgStorage};
use idkit_core::FieldValue;
use postgres::{Client, NoTls};

mod common;

use common::{assert_roundtrips, assert_run_counts, assert_writer_runs, quick_run, url};

fn pg_url() -> String {
    url("IDKIT_TEST_PG_URL")
}

#[test]
fn quick_profile_fills_every_postgres_column() {
    let (dir, summary, results): (_, _, pg::Pg) = quick_run(
        "idkit-pg-report",
        |c| {
            c.servers.insert("postgres".into(), vec![pg_url()]);
            c.pg18 = Some(url("IDKIT_TEST_PG18_URL"));
        },
        "postgres",
    );
    assert!(summary.runs("postgres") > 0);
    let params = Profile::Quick.params();
    let entries = idkit_all::registry::schemes();

    // Every scheme, keyed by its own binary type, as text and as a unique index.
    for entry in entries {
        let native = match entry.info().bits {
            0..=64 => PgStorage::BigintPk,
            128 => PgStorage::UuidPk,
            _ => PgStorage::ByteaPk,
        };
        for storage in [native, PgStorage::TextPk, PgStorage::UniqueIndex] {
            assert!(
                results
                    .find(entry.name(), storage, "small", 1, false)
                    .is_some(),
                "{} {}",
                entry.name(),
                storage.name()
            );
        }
    }
    for r in &results.runs {
        let what = format!(
            "{} {} {} writers {}",
            r.scheme,
            r.storage.name(),
            r.cache,
            r.writers
        );
        assert_run_counts(r, &params, &what);
        assert!(r.table_bytes > 0 && r.index_bytes > 0, "{what}");
        assert!(r.file_bytes >= r.table_bytes + r.index_bytes, "{what}");
        assert!(r.leaf_pages > 0 && r.own.depth >= 1, "{what}");
        assert!(
            r.leaf_fill > 0.2 && r.leaf_fill <= 1.0,
            "{what}: {}",
            r.leaf_fill
        );
        // A leaf page holds a few hundred keys; thousands of rows must have split pages.
        assert!(r.splits() > 0, "{what}");
        assert!(
            r.splits() + 1 >= r.leaf_pages,
            "{what}: every leaf after the first is a split"
        );
        assert!(
            r.wal_bytes > 0 && r.own.fpi > 0 && r.own.fpi_bytes > 0,
            "{what}"
        );
        // One CHECKPOINT each time the rows pass another tenth-or-so of the run, by one
        // writer or several alike.
        let every = params
            .pg_rows
            .div_ceil(params.pg_checkpoints)
            .max(params.commit_rows);
        assert_eq!(
            usize::try_from(r.own.checkpoints).unwrap(),
            r.rows.div_ceil(every) - 1,
            "{what}"
        );
    }
    assert_writer_runs(
        &results,
        PgStorage::BigintPk,
        PgStorage::UuidPk,
        params.pg_writers,
    );
    assert!(!results.curve.is_empty());

    assert_roundtrips(
        &results.own.roundtrip,
        &["insert_returning", "nextval", "range_allocator"],
        params.pg_writers,
    );
    let d = results.own.in_database.as_ref().unwrap();
    assert_eq!(d.ids, params.pg_in_db_ids);
    assert_eq!(d.per_ms_cap, 1024);
    assert!(d.max_per_ms > 0);
    // Ids repeat exactly when one millisecond asked for more than the sequence holds.
    assert_eq!(d.duplicates > 0, d.max_per_ms > d.per_ms_cap, "{d:?}");

    // Ids made inside the server: scripts/test.sh's server preloads the idkit extension, so
    // every generator is there, the extension's among them; each made and inserted the
    // profile's ids (a generator that repeats an id fails the key, and says so).
    assert_eq!(results.own.generators_missing, None);
    let names: Vec<&str> = results
        .own
        .generators
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    for name in [
        "1",
        "gen_random_uuid()",
        "idkit_ulid()",
        "idkit_uuidv7()",
        "idkit_snowflake()",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for g in &results.own.generators {
        assert_eq!(g.ids, params.pg_in_db_ids, "{}", g.name);
        assert!(g.make_seconds > 0.0, "{}", g.name);
        if g.source.as_str() == "idkit extension" {
            assert!(g.error.is_none() && g.insert_seconds.is_some(), "{g:?}");
        }
        assert_eq!(g.error.is_some(), g.insert_seconds.is_none(), "{g:?}");
        assert!(
            g.index_bytes > 0 && g.leaf_fill > 0.2 && g.leaf_fill <= 1.0,
            "{g:?}"
        );
    }
    let csv = std::fs::read_to_string(dir.0.join("data/pg_generators.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.own.generators.len());
    // PostgreSQL 18's built-in generators, on a server of that version.
    let on_18: Vec<&str> = results
        .own
        .generators
        .iter()
        .filter(|g| g.server.starts_with("18"))
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(on_18, ["1", "gen_random_uuid()", "uuidv7()"]);
    // The order of ids four sessions made at once: every row counted, no id twice.
    let ordered: Vec<&str> = (results.own.generator_order.iter())
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(ordered, ["idkit_uuidv7()", "uuidv7()", "gen_random_uuid()"]);
    for o in &results.own.generator_order {
        assert_eq!(
            o.ids,
            params.pg_in_db_ids / o.sessions * o.sessions,
            "{o:?}"
        );
        assert_eq!(o.duplicates, 0, "{o:?}");
        assert!(o.out_of_order < o.ids, "{o:?}");
    }
    let random = &results.own.generator_order[2];
    assert!(
        random.out_of_order > random.ids / 4,
        "random ids are out of order about half the time: {random:?}"
    );

    assert_eq!(results.own.created_at.len(), 3);
    let checkpoints = results.runs[0].own.checkpoints;
    assert!(checkpoints > 0);
    for c in &results.own.created_at {
        assert_eq!(c.rows, params.pg_rows);
        assert_eq!(c.commit_rows, params.commit_rows);
        assert_eq!(c.own.checkpoints, checkpoints, "the insert runs' schedule");
        assert_eq!(c.queries, params.pg_queries);
        assert!(
            c.rows_per_sec > 0.0 && c.wal_per_1k > 0.0 && c.pk_bytes > 0,
            "{c:?}"
        );
        assert_eq!(
            c.own.created_at_bytes > 0,
            c.setup == "uuid-v4 + created_at index"
        );
        assert!(c.query_us > 0.0 && c.own.query_buffers > 0, "{c:?}");
    }

    // The CSV files and the report's PostgreSQL sections.
    for file in [
        "btree_postgres.csv",
        "btree_postgres_curve.csv",
        "pg_ids.csv",
        "pg_created_at.csv",
        "pg_generator_order.csv",
    ] {
        let csv = std::fs::read_to_string(dir.0.join("data").join(file)).unwrap();
        assert!(csv.lines().count() > 1, "{file}");
    }
    let report = std::fs::read_to_string(dir.0.join("REPORT.md")).unwrap();
    assert!(report.contains("## B-tree insert cost in PostgreSQL"));
}

/// Ids from `sql` (an `idkit sql` function called `function`), made in one statement,
/// with the clock read before and after, in Unix ms.
fn make_ids(client: &mut Client, sql: &str, function: &str, n: i64) -> (Vec<i64>, u64, u64) {
    client
        .batch_execute(&format!(
            "DROP FUNCTION IF EXISTS {function}(); DROP SEQUENCE IF EXISTS {function}_seq;"
        ))
        .unwrap();
    client.batch_execute(sql).unwrap();
    let now = |c: &mut Client| -> u64 {
        let ms: i64 = c
            .query_one(
                "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .unwrap()
            .get(0);
        u64::try_from(ms).unwrap()
    };
    let before = now(client);
    // In the order they were made (ordinality), not sorted.
    let made: Vec<i64> = client
        .query(
            &format!(
                "SELECT id FROM (SELECT {function}() AS id, i FROM generate_series(1, $1::bigint) i) s \
                 ORDER BY i"
            ),
            &[&n],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let after = now(client);
    assert_eq!(made.len(), usize::try_from(n).unwrap());
    client
        .batch_execute(&format!(
            "DROP FUNCTION {function}(); DROP SEQUENCE {function}_seq;"
        ))
        .unwrap();
    (made, before, after)
}

#[test]
fn instagrams_function_makes_ids_idkit_reads() {
    let mut client = Client::connect(&pg_url(), NoTls).unwrap();
    let layout = idkit_snowflake::preset("snowflake-instagram").unwrap();
    let sql = idkit_snowflake::sql::plpgsql(layout, &[("shard", 5)], "idkit_test_next_id").unwrap();
    // 500 ids: well under 1,024 in any millisecond, so none repeat.
    let (ids, before, after) = make_ids(&mut client, &sql, "idkit_test_next_id", 500);
    let codec = idkit_all::registry::find("snowflake-instagram")
        .unwrap()
        .codec();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase");
    for id in &ids {
        let decoded = codec.decode_text(&id.to_string()).unwrap();
        let ms = decoded.timestamp_ms.unwrap();
        assert!(
            ms >= before && ms <= after,
            "{ms} outside {before}..={after}"
        );
        assert_eq!(decoded.field("shard"), Some(&FieldValue::Int(5)));
    }

    // A layout with 10 ms ticks and the sequence above a constant field (Sonyflake's).
    let layout = idkit_snowflake::preset("sonyflake").unwrap();
    let sql = idkit_snowflake::sql::plpgsql(layout, &[("machine", 7)], "idkit_test_sf").unwrap();
    let (ids, before, after) = make_ids(&mut client, &sql, "idkit_test_sf", 200);
    let codec = idkit_all::registry::find("sonyflake").unwrap().codec();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase");
    for id in &ids {
        let decoded = codec.decode_text(&id.to_string()).unwrap();
        let ms = decoded.timestamp_ms.unwrap();
        // Within the 10 ms tick.
        assert!(
            ms + 10 > before && ms <= after,
            "{ms} outside {before}..={after}"
        );
        assert_eq!(decoded.field("machine"), Some(&FieldValue::Int(7)));
    }

    // What cannot be expressed is refused before it reaches the database.
    let e = idkit_snowflake::sql::plpgsql(
        idkit_snowflake::preset("flake-boundary").unwrap(),
        &[("worker", 1)],
        "f",
    )
    .unwrap_err();
    assert!(e.to_string().contains("128-bit layout"), "{e}");
}
