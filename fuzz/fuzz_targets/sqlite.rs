//! The SQLite functions' arguments (`idkit-sqlite`): any function of the extension called
//! with any values (integers, reals, text, blobs, NULL) answers a value or an SQL error,
//! never a panic; and what a reading function answers for an id it answers again (they are
//! declared deterministic): the same value, or an error again.
//!
//! The input's first byte picks the function, each further argument is a type byte and,
//! for text and blobs, a length byte and that many bytes. The generators run on an
//! in-memory database, so no state file is written.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use rusqlite::Connection;
use rusqlite::types::Value;

/// Every function, with the numbers of arguments it takes.
const FUNCTIONS: &[(&str, usize)] = &[
    ("idkit_ulid", 0),
    ("idkit_ulid_text", 0),
    ("idkit_uuidv7", 0),
    ("idkit_uuidv7_text", 0),
    ("idkit_typeid", 1),
    ("idkit_snowflake", 2),
    ("idkit_snowflake_custom", 4),
    ("idkit_time", 2),
    ("idkit_time_ms", 2),
    ("idkit_decode", 2),
    ("idkit_field", 3),
    ("idkit_time", 4),
    ("idkit_decode", 4),
    ("idkit_field", 5),
    ("idkit_text", 2),
    ("idkit_blob", 2),
    ("idkit_lowest", 2),
    ("idkit_highest_text", 2),
    ("idkit_ulid_lowest", 1),
    ("idkit_uuidv7_highest", 1),
    ("idkit_snowflake_lowest", 2),
    ("idkit_snowflake_highest", 4),
    ("idkit_typeid_highest", 2),
    ("ulid_to_uuid", 1),
    ("uuid_to_ulid", 1),
];

/// The functions that make ids: each call answers anew.
const GENERATORS: &[&str] = &[
    "idkit_ulid",
    "idkit_ulid_text",
    "idkit_uuidv7",
    "idkit_uuidv7_text",
    "idkit_typeid",
    "idkit_snowflake",
    "idkit_snowflake_custom",
];

/// Scheme names and layouts that the values pick from, so that the fuzzer reaches past
/// "unknown scheme".
const WORDS: &[&str] = &[
    "ulid",
    "uuid-v7",
    "uuid-v4",
    "snowflake-twitter",
    "twitter",
    "sonyflake",
    "snowflake-instagram",
    "ksuid",
    "objectid",
    "typeid",
    "tsid",
    "time:41,shard:13,sequence:10",
    "worker",
    "sequence",
    "user",
];

fn conn() -> &'static Mutex<Connection> {
    static CONN: OnceLock<Mutex<Connection>> = OnceLock::new();
    CONN.get_or_init(|| {
        let conn = Connection::open_in_memory().unwrap();
        idkit_sqlite::register(&conn).unwrap();
        Mutex::new(conn)
    })
}

/// The next value of `data`, or `None` when it is used up.
fn value(data: &mut &[u8]) -> Option<Value> {
    let (&kind, rest) = data.split_first()?;
    *data = rest;
    let take = |data: &mut &[u8]| -> Vec<u8> {
        let n = data.first().map_or(0, |&n| usize::from(n));
        let rest = data.get(1..).unwrap_or(&[]);
        let n = n.min(rest.len());
        let (bytes, rest) = rest.split_at(n);
        *data = rest;
        bytes.to_vec()
    };
    Some(match kind % 6 {
        0 => Value::Null,
        1 => {
            let bytes = take(data);
            let mut word = [0u8; 8];
            word[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
            Value::Integer(i64::from_le_bytes(word))
        }
        2 => Value::Real(f64::from(kind) / 3.0),
        3 => Value::Text(String::from_utf8_lossy(&take(data)).into_owned()),
        4 => Value::Blob(take(data)),
        _ => Value::Text(WORDS[usize::from(kind / 6) % WORDS.len()].to_owned()),
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, mut data)) = data.split_first() else {
        return;
    };
    let (name, arity) = FUNCTIONS[usize::from(pick) % FUNCTIONS.len()];
    let mut args = Vec::with_capacity(arity);
    for _ in 0..arity {
        args.push(value(&mut data).unwrap_or(Value::Null));
    }
    let marks = vec!["?"; arity].join(", ");
    let sql = format!("SELECT {name}({marks})");
    let conn = conn().lock().unwrap();
    let call = || {
        conn.query_row(&sql, rusqlite::params_from_iter(&args), |r| {
            r.get::<_, Value>(0)
        })
    };
    let first = call();
    if let Err(e) = &first {
        assert!(
            !matches!(e, rusqlite::Error::UnwindingPanic),
            "{sql} {args:?}: a panic"
        );
    }
    if !GENERATORS.contains(&name) {
        // A value is answered again; an error is an error again (its message may name the
        // clock: a custom layout whose epoch is still to come is refused until it comes).
        match (&first, &call()) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{sql} {args:?}: not deterministic"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{sql} {args:?}: {a:?}, then {b:?}"),
        }
    }
});
