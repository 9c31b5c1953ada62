//! One column form per scheme, shared by the SQL functions and the Rust types' rusqlite
//! impls: a Rust type reads every form the functions write for its scheme, and a value bound
//! from Rust compares with theirs (a TypeID is text in SQLite, prefix and all, as
//! `idkit_typeid()` writes it; a ULID a 16-byte blob, as `idkit_ulid()` writes it, and read
//! from `idkit_ulid_text()`'s text too; a Snowflake id an integer).

use idkit_core::column::AsText;
use idkit_snowflake::{SnowflakeId, Twitter};
use idkit_testkit::Scratch;
use idkit_typeid::{Prefix, TypeId};
use idkit_ulid::Ulid;
use rusqlite::Connection;

fn open(dir: &Scratch) -> Connection {
    let conn = Connection::open(dir.join("app.db")).unwrap();
    idkit_sqlite::register(&conn).unwrap();
    conn
}

#[test]
fn rust_reads_every_form_the_functions_write() {
    let dir = Scratch::new("sqlite-columns-read");
    let conn = open(&dir);
    let (typeid, ulid, ulid_text, flake): (TypeId, Ulid, Ulid, SnowflakeId<Twitter>) = conn
        .query_row(
            "SELECT idkit_typeid('user'), idkit_ulid(), idkit_ulid_text(),
                    idkit_snowflake('twitter', 5)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(typeid.prefix().as_str(), "user");
    // Both ULIDs of one sequence: the second made after the first.
    assert!(ulid < ulid_text, "{ulid} {ulid_text}");
    assert_eq!(flake.field("worker"), Some(5));
}

#[test]
fn a_typeid_bound_from_rust_is_the_text_the_functions_compare_with() {
    // The README's users table: keyed by idkit_typeid('user'), a range by its bounds.
    let dir = Scratch::new("sqlite-columns-typeid");
    let conn = open(&dir);
    conn.execute_batch(
        "CREATE TABLE users (id TEXT PRIMARY KEY DEFAULT (idkit_typeid('user')), name TEXT);
         INSERT INTO users (name) VALUES ('made by SQL');",
    )
    .unwrap();
    // One made in Rust: the type's prefix and a UUIDv7 of now.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let uuid = (now_ms << 80) | (0x7 << 76) | (0b10 << 62) | 0x1234;
    let made = TypeId::new(Prefix::new("user").unwrap(), uuid);
    conn.execute(
        "INSERT INTO users (id, name) VALUES (?1, 'made in Rust')",
        [&made],
    )
    .unwrap();
    let stored: String = conn
        .query_row(
            "SELECT id FROM users WHERE name = 'made in Rust'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, made.to_string(), "stored as its text");
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM users
             WHERE id BETWEEN idkit_typeid_lowest('user', unixepoch('now', '-1 hour') * 1000)
                          AND idkit_typeid_highest('user', datetime('now'))",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 2, "both rows in the range");
    let back: TypeId = conn
        .query_row("SELECT id FROM users WHERE id = ?1", [&made], |r| r.get(0))
        .unwrap();
    assert_eq!(back, made);
}

#[test]
fn a_ulid_bound_from_rust_compares_with_the_blob_the_functions_write() {
    let dir = Scratch::new("sqlite-columns-ulid");
    let conn = open(&dir);
    conn.execute_batch(
        "CREATE TABLE events (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), what TEXT);
         INSERT INTO events (what) VALUES ('one'), ('two');",
    )
    .unwrap();
    let first: Ulid = conn
        .query_row("SELECT min(id) FROM events", [], |r| r.get(0))
        .unwrap();
    let after: i64 = conn
        .query_row("SELECT count(*) FROM events WHERE id > ?1", [&first], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(after, 1);
}

#[test]
fn bounds_of_each_form_find_the_rows_of_a_key_of_that_form() {
    // A blob key and a text key, each with the bounds of its own form; the other form's
    // bounds find nothing (SQLite orders every blob after every text), which is why both
    // exist.
    let dir = Scratch::new("sqlite-columns-bounds");
    let conn = open(&dir);
    conn.execute_batch(
        "CREATE TABLE b (id BLOB PRIMARY KEY DEFAULT (idkit_ulid()), n INTEGER);
         CREATE TABLE t (id TEXT PRIMARY KEY DEFAULT (idkit_ulid_text()), n INTEGER);
         CREATE TABLE vb (id BLOB PRIMARY KEY DEFAULT (idkit_uuidv7()), n INTEGER);
         CREATE TABLE vt (id TEXT PRIMARY KEY DEFAULT (idkit_uuidv7_text()), n INTEGER);
         INSERT INTO b (n) VALUES (1), (2);
         INSERT INTO t (n) VALUES (1), (2);
         INSERT INTO vb (n) VALUES (1), (2);
         INSERT INTO vt (n) VALUES (1), (2);",
    )
    .unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let range = |table: &str, lowest: &str, highest: &str| {
        count(&format!(
            "SELECT count(*) FROM {table}
             WHERE id BETWEEN {lowest}(date('now', '-1 day')) AND {highest}(datetime('now'))"
        ))
    };
    assert_eq!(range("b", "idkit_ulid_lowest", "idkit_ulid_highest"), 2);
    assert_eq!(
        range("t", "idkit_ulid_lowest_text", "idkit_ulid_highest_text"),
        2
    );
    assert_eq!(
        range("vb", "idkit_uuidv7_lowest", "idkit_uuidv7_highest"),
        2
    );
    assert_eq!(
        range(
            "vt",
            "idkit_uuidv7_lowest_text",
            "idkit_uuidv7_highest_text"
        ),
        2
    );
    // The mistake the pairs are there for: a blob bound on a text key.
    assert_eq!(range("t", "idkit_ulid_lowest", "idkit_ulid_highest"), 0);
}

#[test]
fn a_ulid_wrapped_as_text_finds_and_guards_a_text_key() {
    // A key idkit_ulid_text() fills: the ULID read from it, bound back plainly, is a blob
    // no text equals (nothing found, and the same id let in a second time); wrapped in
    // AsText it binds as the text, finds its row and is refused as a duplicate.
    let dir = Scratch::new("sqlite-columns-as-text");
    let conn = open(&dir);
    conn.execute_batch(
        "CREATE TABLE t (id TEXT PRIMARY KEY DEFAULT (idkit_ulid_text()), n INTEGER);
         INSERT INTO t (n) VALUES (1);",
    )
    .unwrap();
    let id: Ulid = conn
        .query_row("SELECT id FROM t", [], |r| r.get(0))
        .unwrap();
    let plain = conn
        .execute("UPDATE t SET n = 2 WHERE id = ?1", [&id])
        .unwrap();
    assert_eq!(plain, 0, "a blob never equals the text");
    let key = AsText(id);
    let updated = conn
        .execute("UPDATE t SET n = 2 WHERE id = ?1", [&key])
        .unwrap();
    assert_eq!(updated, 1);
    let inserted = conn
        .execute(
            "INSERT INTO t (id, n) VALUES (?1, 3) ON CONFLICT (id) DO NOTHING",
            [&key],
        )
        .unwrap();
    assert_eq!(inserted, 0, "the same id is not let in twice");
    let read: AsText<Ulid> = conn
        .query_row("SELECT id FROM t WHERE n = 2", [], |r| r.get(0))
        .unwrap();
    assert_eq!(read, key);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}
