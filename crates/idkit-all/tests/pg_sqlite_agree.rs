//! The two SQL doors agree: the same call, by the same name with the same arguments, gives
//! the same answer in the PostgreSQL extension (the server scripts/test.sh starts,
//! `IDKIT_TEST_PG_URL`) and in the SQLite functions (`idkit-sqlite`, registered on a
//! connection here): the time and the fields read out of an id, the bounds of a time, the
//! conversions, NULL in and NULL out, and the same refusal of a call that would mean
//! nothing. Where the doors differ on purpose (a column's type: PostgreSQL's `ulid`,
//! `uuid`, `typeid` and `timestamptz` against SQLite's blobs, text and Unix ms), the table in
//! ARCHITECTURE.md ("The SQL doors side by side") says so, and the calls compare their text.
//!
//! Ids from their specs and upstream: the ULID of the ULID spec's README
//! (github.com/ulid/spec), the UUIDv7 of RFC 9562 appendix A.6, the TypeID of the TypeID
//! spec's README (github.com/jetify-com/typeid), a Twitter Snowflake id of 2022.
#![cfg(feature = "pg-extension")]

use postgres::{Client, NoTls};
use rusqlite::Connection;

fn pg() -> Client {
    let url = std::env::var("IDKIT_TEST_PG_URL")
        .unwrap_or_else(|_| panic!("IDKIT_TEST_PG_URL is not set: run scripts/test.sh"));
    let mut c = Client::connect(&url, NoTls).unwrap();
    // The tests here run at once: one of two creating it may lose the race, which is fine.
    if let Err(e) = c.batch_execute("CREATE EXTENSION IF NOT EXISTS idkit") {
        let there: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_extension WHERE extname = 'idkit'",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(there, 1, "CREATE EXTENSION idkit: {e}");
    }
    c
}

/// A database file (a Snowflake layout needs its state file), and its scratch directory.
fn sqlite() -> (Connection, idkit_testkit::Scratch) {
    let dir = idkit_testkit::Scratch::new("pg-sqlite-agree");
    let conn = Connection::open(dir.join("ids.db")).unwrap();
    idkit_sqlite::register(&conn).unwrap();
    (conn, dir)
}

/// One text answer from PostgreSQL (`None` for NULL, the message for an error).
fn pg_text(c: &mut Client, sql: &str) -> Result<Option<String>, String> {
    c.query_one(&format!("SELECT ({sql})::text"), &[])
        .map(|row| row.get(0))
        .map_err(|e| {
            e.as_db_error()
                .map(|d| d.message().to_owned())
                .unwrap_or_else(|| e.to_string())
        })
}

/// One answer from SQLite as text (`None` for NULL, the message for an error).
fn sqlite_text(conn: &Connection, sql: &str) -> Result<Option<String>, String> {
    conn.query_row(&format!("SELECT {sql}"), [], |r| {
        use rusqlite::types::ValueRef;
        Ok(match r.get_ref(0)? {
            ValueRef::Null => None,
            ValueRef::Integer(n) => Some(n.to_string()),
            ValueRef::Real(x) => Some(x.to_string()),
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Some(format!("blob of {} bytes", b.len())),
        })
    })
    .map_err(|e| e.to_string())
}

const ULID: &str = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const UUID_V7: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
const TYPEID: &str = "prefix_01h455vb4pex5vsknk084sn02q";
const TWEET: i64 = 1_541_815_603_606_036_480;

#[test]
fn reading_an_id_gives_the_same_time_and_fields_at_both_doors() {
    let (mut p, (s, _dir)) = (pg(), sqlite());
    for (id, scheme) in [(ULID, "ulid"), (UUID_V7, "uuid-v7"), (TYPEID, "typeid")] {
        // The time, as Unix ms.
        let at_pg = pg_text(
            &mut p,
            &format!("(extract(epoch from idkit_time('{id}'::text, '{scheme}')) * 1000)::bigint"),
        );
        let at_sqlite = sqlite_text(&s, &format!("idkit_time_ms('{id}', '{scheme}')"));
        assert_eq!(at_pg, at_sqlite, "the time of {scheme} {id}");
        assert!(at_pg.as_ref().is_ok_and(Option::is_some), "{at_pg:?}");
        // What the id holds, as JSON.
        let json = |text: Result<Option<String>, String>| -> serde_json::Value {
            serde_json::from_str(&text.unwrap().unwrap()).unwrap()
        };
        assert_eq!(
            json(pg_text(
                &mut p,
                &format!("idkit_decode('{id}'::text, '{scheme}')")
            )),
            json(sqlite_text(
                &s,
                &format!("idkit_decode('{id}', '{scheme}')")
            )),
            "idkit_decode of {scheme} {id}"
        );
    }
    // A Snowflake id: its time, a field, and the whole of it.
    assert_eq!(
        pg_text(
            &mut p,
            &format!(
                "(extract(epoch from idkit_time({TWEET}::bigint, 'snowflake-twitter')) * 1000)::bigint"
            )
        ),
        sqlite_text(&s, &format!("idkit_time_ms({TWEET}, 'snowflake-twitter')"))
    );
    for field in ["datacenter", "worker", "sequence"] {
        assert_eq!(
            pg_text(
                &mut p,
                &format!("idkit_field({TWEET}::bigint, 'snowflake-twitter', '{field}')")
            ),
            sqlite_text(
                &s,
                &format!("idkit_field({TWEET}, 'snowflake-twitter', '{field}')")
            ),
            "{field}"
        );
    }
    // The other text of the same 128 bits.
    assert_eq!(
        pg_text(&mut p, &format!("ulid_to_uuid('{ULID}'::ulid)")),
        sqlite_text(&s, &format!("ulid_to_uuid('{ULID}')"))
    );
}

#[test]
fn both_doors_refuse_typeid_in_the_bounds_of_any_scheme() {
    // A TypeID key is its prefix and suffix: bounds without the prefix would find nothing.
    // Both name the bounds that take a prefix, and those work.
    let (mut p, (s, _dir)) = (pg(), sqlite());
    let at = "2026-01-02T03:04:05.678Z";
    for bound in ["idkit_lowest", "idkit_highest"] {
        let pg = pg_text(&mut p, &format!("{bound}('typeid', '{at}'::timestamptz)"));
        let sqlite = sqlite_text(&s, &format!("{bound}_text('typeid', '{at}')"));
        for said in [pg, sqlite] {
            let said = said.unwrap_err();
            assert!(said.contains("idkit_typeid_"), "{said}");
        }
    }
    assert_eq!(
        pg_text(
            &mut p,
            &format!("idkit_typeid_lowest('user', '{at}'::timestamptz)::text")
        ),
        sqlite_text(&s, &format!("idkit_typeid_lowest('user', '{at}')"))
    );
}

#[test]
fn the_bounds_of_a_time_are_the_same_ids_at_both_doors() {
    let (mut p, (s, _dir)) = (pg(), sqlite());
    let at = "2026-01-02T03:04:05.678Z";
    for scheme in ["ulid", "uuid-v7", "ksuid", "snowflake-twitter"] {
        for bound in ["idkit_lowest", "idkit_highest"] {
            // PostgreSQL's idkit_lowest is text; SQLite's text is idkit_lowest_text.
            assert_eq!(
                pg_text(&mut p, &format!("{bound}('{scheme}', '{at}'::timestamptz)")),
                sqlite_text(&s, &format!("{bound}_text('{scheme}', '{at}')")),
                "{bound} of {scheme}"
            );
        }
    }
    for (pg_call, sqlite_call) in [
        (
            format!("idkit_ulid_lowest('{at}'::timestamptz)"),
            format!("idkit_ulid_lowest_text('{at}')"),
        ),
        (
            format!("idkit_uuidv7_highest('{at}'::timestamptz)"),
            format!("idkit_uuidv7_highest_text('{at}')"),
        ),
        (
            format!("idkit_typeid_lowest('user', '{at}'::timestamptz)"),
            format!("idkit_typeid_lowest('user', '{at}')"),
        ),
        (
            format!("idkit_snowflake_highest('{at}'::timestamptz, 'snowflake-discord')"),
            format!("idkit_snowflake_highest('{at}', 'snowflake-discord')"),
        ),
        (
            format!(
                "idkit_snowflake_lowest('{at}'::timestamptz, 'time:41,shard:13,sequence:10', 1314220021721, 1)"
            ),
            format!(
                "idkit_snowflake_lowest('{at}', 'time:41,shard:13,sequence:10', 1314220021721, 1)"
            ),
        ),
    ] {
        let (a, b) = (pg_text(&mut p, &pg_call), sqlite_text(&s, &sqlite_call));
        assert!(a.as_ref().is_ok_and(Option::is_some), "{pg_call}: {a:?}");
        assert_eq!(a, b, "{pg_call} / {sqlite_call}");
    }
}

#[test]
fn null_in_is_null_out_and_a_call_that_means_nothing_is_refused_at_both_doors() {
    let (mut p, (s, _dir)) = (pg(), sqlite());
    for call in [
        "idkit_typeid(NULL)",
        "idkit_snowflake(NULL)",
        "idkit_snowflake_custom(NULL, 0)",
        "idkit_snowflake_custom('time:41,shard:13,sequence:10', NULL)",
        "idkit_time(NULL::text, 'ulid')",
        "idkit_field(NULL::bigint, 'snowflake-twitter', 'worker')",
        "idkit_lowest('ulid', NULL::timestamptz)",
    ] {
        // SQLite has no casts to those types; NULL is NULL there.
        let sqlite_call = call
            .replace("NULL::text", "NULL")
            .replace("NULL::bigint", "NULL")
            .replace("NULL::timestamptz", "NULL");
        assert_eq!(pg_text(&mut p, call), Ok(None), "{call}");
        assert_eq!(sqlite_text(&s, &sqlite_call), Ok(None), "{sqlite_call}");
    }
    // A worker on a layout without worker bits: refused at both, naming the call that works.
    let (a, b) = (
        pg_text(&mut p, "idkit_snowflake('snowflake-mastodon', 3)"),
        sqlite_text(&s, "idkit_snowflake('snowflake-mastodon', 3)"),
    );
    for said in [a, b] {
        let said = said.unwrap_err();
        assert!(
            said.contains("no worker bits")
                && said.contains("call idkit_snowflake('snowflake-mastodon') without one"),
            "{said}"
        );
    }
    // A scheme that is not read: the same words at both.
    for said in [
        pg_text(&mut p, "idkit_time('5'::text, 'range')"),
        sqlite_text(&s, "idkit_time('5', 'range')"),
    ] {
        let said = said.unwrap_err();
        assert!(said.contains("range"), "{said}");
    }
}
