//! The loadable extension in the programs SQLite users load it into: Python's `sqlite3`
//! module and the `sqlite3` shell (Debian's `python3` and `sqlite3`, which
//! scripts/test.sh installs when missing). Ids they make are read back by idkit's Rust
//! types, ids the Rust types make are read by them, 4 Python processes writing one WAL
//! database repeat nothing, and bad input is an SQL error, never a crash.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

use idkit_core::Codec;
use idkit_snowflake::{SnowflakeId, Twitter};
use idkit_testkit::Scratch;

/// `libidkit.so`, which `cargo build` put beside this test's directory (`cargo test` alone
/// builds no cdylib: `cargo build && cargo test`, as scripts/test.sh runs them).
fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let lib = dir.join(format!(
        "{}idkit{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.exists(),
        "{} is not built: run `cargo build` before `cargo test`",
        lib.display()
    );
    lib
}

/// Runs `script` with Python 3, `db` and the library as its arguments; its output, or the
/// error output when it failed.
fn python(script: &str, db: &str) -> Result<String, String> {
    let prelude = "import sqlite3, sys\n\
                   con = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)\n\
                   con.enable_load_extension(True)\n\
                   con.load_extension(sys.argv[2])\n";
    // Debian's Python, built to load extensions (a Python of pyenv's may not be).
    let out = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .arg(db)
        .arg(library())
        .output()
        .expect("/usr/bin/python3, Debian's python3 (scripts/test.sh installs it)");
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn python_makes_ids_that_the_rust_types_read_and_reads_theirs() {
    let dir = Scratch::new("sqlite-ext-python");
    let db = dir.join("ids.db");
    let out = python(
        "row = con.execute(\"SELECT hex(idkit_ulid()), idkit_ulid_text(), hex(idkit_uuidv7()), \
                  idkit_typeid('user'), idkit_snowflake('snowflake-twitter', 7)\").fetchone()\n\
         print('\\n'.join(str(v) for v in row))",
        db.to_str().unwrap(),
    )
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let ulid = idkit_ulid::Ulid(u128::from_str_radix(lines[0], 16).unwrap());
    let text: idkit_ulid::Ulid = idkit_ulid::UlidCodec.parse(lines[1]).unwrap();
    assert!(ulid < text);
    let now = idkit_core::Clock::now_ms(&idkit_core::SystemClock);
    assert!(text.timestamp_ms().abs_diff(now) < 10_000);
    let v7 = idkit_uuid::Uuid::from_u128(u128::from_str_radix(lines[2], 16).unwrap());
    assert_eq!(v7.get_version_num(), 7);
    let typeid: idkit_typeid::TypeId = lines[3].parse().unwrap();
    assert_eq!(typeid.prefix().as_str(), "user");
    assert!(typeid.uuid() > v7.as_u128(), "one sequence for both");
    let flake = SnowflakeId::<Twitter>::new(lines[4].parse().unwrap()).unwrap();
    assert_eq!(flake.field("worker"), Some(7));

    // The reverse: ids the Rust types made, read in Python.
    let word = idkit_snowflake::preset("snowflake-twitter")
        .unwrap()
        .compose_u128(1_700_000_000_123, &[("datacenter", 3), ("worker", 9)])
        .unwrap();
    let ulid = idkit_ulid::Ulid((1_700_000_000_456u128 << 80) | 12_345);
    let out = python(
        &format!(
            "print(con.execute(\"SELECT idkit_time_ms({word}, 'twitter'), \
                 idkit_field({word}, 'twitter', 'datacenter'), idkit_time('{ulid}', 'ulid'), \
                 json_extract(idkit_decode('{ulid}', 'ulid'), '$.timestamp_ms')\").fetchone())"
        ),
        db.to_str().unwrap(),
    )
    .unwrap();
    assert_eq!(
        out.trim(),
        "(1700000000123, 3, '2023-11-14T22:13:20.456Z', 1700000000456)"
    );
}

#[test]
fn the_sqlite3_shell_loads_it() {
    let dir = Scratch::new("sqlite-ext-shell");
    let db = dir.join("ids.db");
    let out = Command::new("sqlite3")
        .arg(&db)
        .arg(format!(".load {}", library().display()))
        .arg("SELECT idkit_ulid_text(); SELECT idkit_snowflake('sonyflake', 3);")
        .output()
        .expect("sqlite3 (scripts/test.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = String::from_utf8(out.stdout).unwrap();
    let mut lines = out.lines();
    let ulid: idkit_ulid::Ulid = idkit_ulid::UlidCodec.parse(lines.next().unwrap()).unwrap();
    assert!(ulid.0 > 0);
    let sonyflake: u64 = lines.next().unwrap().parse().unwrap();
    assert_eq!(
        sonyflake & 0xFFFF,
        3,
        "the machine id, Sonyflake's low 16 bits"
    );
}

#[test]
fn four_python_processes_on_one_wal_database_repeat_nothing_in_commit_order() {
    let dir = Scratch::new("sqlite-ext-processes");
    let db = dir.join("ids.db");
    let db = db.to_str().unwrap();
    python(
        "con.execute('PRAGMA journal_mode=wal')\n\
         con.execute('CREATE TABLE ids (seq INTEGER PRIMARY KEY, ulid BLOB, flake INTEGER)')",
        db,
    )
    .unwrap();
    let writer = "for _ in range(300):\n\
                  \x20   con.execute('BEGIN IMMEDIATE')\n\
                  \x20   for _ in range(10):\n\
                  \x20       con.execute(\"INSERT INTO ids (ulid, flake) VALUES (idkit_ulid(), idkit_snowflake('twitter', 2))\")\n\
                  \x20   con.execute('COMMIT')\n";
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let writer = writer.to_owned();
            let db = db.to_owned();
            std::thread::spawn(move || python(&writer, &db))
        })
        .collect();
    for w in writers {
        w.join().unwrap().unwrap();
    }
    let out = python(
        "for row in con.execute('SELECT hex(ulid), flake FROM ids ORDER BY seq'):\n\
         \x20   print(row[0], row[1])",
        db,
    )
    .unwrap();
    let rows: Vec<(u128, u64)> = out
        .lines()
        .map(|l| {
            let (ulid, flake) = l.split_once(' ').unwrap();
            (
                u128::from_str_radix(ulid, 16).unwrap(),
                flake.parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 12_000);
    for pair in rows.windows(2) {
        assert!(pair[0].0 < pair[1].0, "ULIDs out of commit order");
        assert!(pair[0].1 < pair[1].1, "Snowflake ids out of commit order");
    }
    let distinct: HashSet<_> = rows.iter().map(|r| r.1).collect();
    assert_eq!(distinct.len(), rows.len());
}

/// Leased worker ids from inside the loaded library: the lease opens a connection of its
/// own on the SQLite that loaded it (the file `ids.db-idkit-leases`), and gives the id back
/// when the connection that took it closes.
#[test]
fn python_connections_lease_worker_ids_of_their_own() {
    let dir = Scratch::new("sqlite-ext-lease");
    let db = dir.join("ids.db");
    let out = python(
        "def conn():\n\
         \x20   c = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)\n\
         \x20   c.enable_load_extension(True)\n\
         \x20   c.load_extension(sys.argv[2])\n\
         \x20   return c\n\
         def worker(c):\n\
         \x20   sql = \"SELECT idkit_field(idkit_snowflake('twitter', 'lease'), 'twitter', 'worker')\"\n\
         \x20   return c.execute(sql).fetchone()[0]\n\
         con.execute('PRAGMA journal_mode=wal')\n\
         con.execute('BEGIN IMMEDIATE')\n\
         a = worker(con)\n\
         con.execute('COMMIT')\n\
         other = conn()\n\
         b = worker(other)\n\
         other.close()\n\
         print(a, b, worker(conn()))",
        db.to_str().unwrap(),
    )
    .unwrap();
    let workers: Vec<u64> = out.split_whitespace().map(|w| w.parse().unwrap()).collect();
    assert_eq!(workers.len(), 3, "{out}");
    assert_ne!(
        workers[0], workers[1],
        "two open connections, one worker id"
    );
    assert_eq!(
        workers[2], workers[1],
        "the closed connection's id granted again at once"
    );
    assert!(dir.join("ids.db-idkit-leases").exists());
}

#[test]
fn bad_input_is_an_sql_error_in_python_never_a_crash() {
    let dir = Scratch::new("sqlite-ext-bad");
    let db = dir.join("ids.db");
    let out = python(
        "for sql in [\"SELECT idkit_time(x'01', 'ulid')\", \"SELECT idkit_snowflake('nope', 1)\",\n\
         \x20           \"SELECT idkit_ulid_lowest('not a time')\", \"SELECT idkit_typeid(1)\"]:\n\
         \x20   try:\n\
         \x20       con.execute(sql).fetchone()\n\
         \x20       print('no error:', sql)\n\
         \x20   except sqlite3.Error as e:\n\
         \x20       print(type(e).__name__, e)",
        db.to_str().unwrap(),
    )
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].contains("a blob of 1 bytes"), "{out}");
    assert!(lines[1].contains("nope"), "{out}");
    assert!(lines[2].contains("time"), "{out}");
    assert!(lines[3].contains("expected text"), "{out}");
    assert!(
        lines.iter().all(|l| l.starts_with("OperationalError")),
        "{out}"
    );
}

/// A database written by a Python connection that ATTACHed it and by one that opened it
/// directly, at once: the ids of each generator are unique in it (the loaded library looks
/// up the attached files with `PRAGMA database_list`, once a statement).
#[test]
fn python_through_attach_and_directly_repeat_nothing() {
    let dir = Scratch::new("sqlite-ext-attach");
    let shared = dir.join("shared.db");
    let shared = shared.to_str().unwrap().to_owned();
    let own = dir.join("own.db");
    let own = own.to_str().unwrap().to_owned();
    python("con.execute('PRAGMA journal_mode=wal')", &shared).unwrap();
    // Each prints its ids, one statement of 500 a round for 40 rounds.
    let make = "for _ in range(40):\n\
                \x20   for row in con.execute(\"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT hex(idkit_ulid()), hex(idkit_uuidv7()), idkit_snowflake('mastodon') FROM n\"):\n\
                \x20       print(*row)\n";
    let attaching = {
        let script = format!("con.execute('ATTACH ? AS x', ({shared:?},))\n{make}");
        std::thread::spawn(move || python(&script, &own))
    };
    let direct = {
        let (make, shared) = (make.to_owned(), shared.clone());
        std::thread::spawn(move || python(&make, &shared))
    };
    let mut all = String::new();
    for writer in [attaching, direct] {
        all.push_str(&writer.join().unwrap().unwrap());
    }
    let rows: Vec<Vec<&str>> = all.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(rows.len(), 2 * 40 * 500);
    for column in 0..3 {
        let distinct: HashSet<_> = rows.iter().map(|r| r[column]).collect();
        assert_eq!(
            distinct.len(),
            rows.len(),
            "column {column}: {} repeated",
            rows.len() - distinct.len()
        );
    }
}
