//! Paths to a repeated id that a review of the SQL functions found, each walked: generators
//! that make ids from one set must share one word whatever their layouts' field names, and
//! the state file must survive what happens to files (see also tests/functions.rs for the
//! processes, restarts and clock steps, and tests/hunt.rs for the seeded adversary).

use std::collections::HashSet;
use std::path::Path;

use idkit_testkit::Scratch;
use rusqlite::Connection;

fn open(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    idkit_sqlite::register(&conn).unwrap();
    conn
}

/// The ids of `select` over `rows` rows in one statement, `i` running from 1.
fn ids(conn: &Connection, select: &str, rows: usize) -> Vec<i64> {
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
         SELECT {select} FROM n"
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn assert_distinct(what: &str, ids: &[i64]) {
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "{what}: {} of {} ids repeated",
        ids.len() - distinct.len(),
        ids.len()
    );
}

#[test]
fn layouts_that_make_the_same_ids_under_other_names_share_one_word() {
    let dir = Scratch::new("sqlite-word-keys");
    let conn = open(&dir.join("ids.db"));
    // Twitter's worker 33 is datacenter 1, worker 1: the same bits as a custom layout that
    // calls its fields otherwise.
    let twitter_epoch = 1_288_834_974_657_i64;
    let ids_of = ids(
        &conn,
        &format!(
            "CASE i % 2 WHEN 0 THEN idkit_snowflake('snowflake-twitter', 33)
             ELSE idkit_snowflake_custom('time:41,dc:5,node:5,sequence:12', {twitter_epoch}, 1, 33)
             END"
        ),
        20_000,
    );
    assert_distinct("Twitter beside its renamed twin", &ids_of);
    // Discord calls its sequence `increment`; the same bits written as `sequence`.
    let discord_epoch = 1_420_070_400_000_i64;
    let ids_of = ids(
        &conn,
        &format!(
            "CASE i % 2 WHEN 0 THEN idkit_snowflake('snowflake-discord', 5)
             ELSE idkit_snowflake_custom('time:42,worker:5,process:5,sequence:12', {discord_epoch}, 1, 5)
             END"
        ),
        20_000,
    );
    assert_distinct("Discord beside its renamed twin", &ids_of);
    // A layout without worker bits, by its name, its alias and its fields (custom's name):
    // one generator.
    let ids_of = ids(
        &conn,
        "CASE i % 3 WHEN 0 THEN idkit_snowflake('mastodon')
                    WHEN 1 THEN idkit_snowflake('snowflake-mastodon')
                    ELSE idkit_snowflake_custom('time:48,sequence:16', 0, 1) END",
        20_000,
    );
    assert_distinct(
        "Mastodon by name, alias and fields (a custom layout)",
        &ids_of,
    );
    // A worker argument on it would mean nothing (and once made two generators of it):
    // refused, and the message names the call that works.
    for (call, works) in [
        (
            "idkit_snowflake('snowflake-mastodon', (i % 2) + 1)",
            "idkit_snowflake('snowflake-mastodon')",
        ),
        (
            "CASE i % 2 WHEN 0 THEN idkit_snowflake('mastodon') ELSE idkit_snowflake('mastodon', 3) END",
            "idkit_snowflake('snowflake-mastodon')",
        ),
        (
            "idkit_snowflake('mastodon', 'lease')",
            "idkit_snowflake('snowflake-mastodon')",
        ),
        (
            "idkit_snowflake_custom('time:48,sequence:16', 0, 1, -5)",
            "idkit_snowflake_custom('time:48,sequence:16', 0, 1)",
        ),
    ] {
        let said = conn
            .query_row(
                &format!(
                    "SELECT count({call}) FROM
                     (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
                      SELECT i FROM n)"
                ),
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("no worker bits") && said.contains(&format!("call {works} without")),
            "{call}: {said}"
        );
    }
}

// ----- the state file removed, or the disk full -----

/// This test binary's ignored test `name`, to run as a process of its own.
fn child(name: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    command
}

/// Runs this test binary's `writer` on `db` for `ms` milliseconds, as a process of its own.
fn spawn_writer(db: &Path, ms: u64) -> std::process::Child {
    spawn_attached_writer(db, None, ms)
}

/// [`spawn_writer`], the writer's connection with `attach` attached (`ATTACH ... AS x`).
fn spawn_attached_writer(db: &Path, attach: Option<&Path>, ms: u64) -> std::process::Child {
    let mut command = child("writer");
    if let Some(other) = attach {
        command.env("IDKIT_REPEATS_ATTACH", other);
    }
    command
        .env("IDKIT_REPEATS_DB", db)
        .env("IDKIT_REPEATS_MS", ms.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// What a writer printed: its reopen count last.
fn finish(child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "writer: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// The ids of one round of a writer: (ulid, v7, mastodon, twitter) per row.
type Row = (Vec<u8>, Vec<u8>, i64, i64);

#[test]
#[ignore = "a child process of the tests above, which run it"]
fn writer() {
    let db = std::env::var("IDKIT_REPEATS_DB").unwrap();
    let ms: u64 = std::env::var("IDKIT_REPEATS_MS").unwrap().parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let attach = std::env::var("IDKIT_REPEATS_ATTACH").ok();
    let open_attached = || {
        let conn = open(Path::new(&db));
        if let Some(other) = &attach {
            conn.execute("ATTACH ?1 AS x", [other]).unwrap();
        }
        conn
    };
    let mut conn = open_attached();
    // What it made goes to a database of its own: no lock of the database whose state
    // makes the ids keeps the writers apart in time.
    let out =
        Connection::open(Path::new(&db).with_file_name(format!("out-{}.db", std::process::id())))
            .unwrap();
    out.execute_batch("CREATE TABLE ids (ulid BLOB, v7 BLOB, mastodon INTEGER, twitter INTEGER)")
        .unwrap();
    let mut reopened = 0;
    while std::time::Instant::now() < deadline {
        let rows: rusqlite::Result<Vec<Row>> = conn
            .prepare_cached(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
                 SELECT idkit_ulid(), idkit_uuidv7(), idkit_snowflake('mastodon'),
                        idkit_snowflake('twitter', 5)
                 FROM n",
            )
            .and_then(|mut stmt| {
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                    .collect()
            });
        match rows {
            Ok(rows) => {
                out.execute_batch("BEGIN").unwrap();
                for row in rows {
                    out.execute(
                        "INSERT INTO ids VALUES (?1, ?2, ?3, ?4)",
                        rusqlite::params![row.0, row.1, row.2, row.3],
                    )
                    .unwrap();
                }
                out.execute_batch("COMMIT").unwrap();
            }
            Err(e) if e.to_string().contains("open the database again") => {
                conn = open_attached();
                reopened += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    println!("reopened {reopened}");
}

/// Every column of every writer's ids holds no value twice; the number of rows.
fn assert_no_repeat(dir: &Path) -> usize {
    let mut seen: [HashSet<Vec<u8>>; 4] = Default::default();
    let mut rows = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("out-") && name.ends_with(".db")) {
            continue;
        }
        let conn = Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT ulid, v7, mastodon, twitter FROM ids")
            .unwrap();
        let all: Vec<Row> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows += all.len();
        for (ulid, v7, mastodon, twitter) in all {
            let values = [
                ulid,
                v7,
                mastodon.to_be_bytes().to_vec(),
                twitter.to_be_bytes().to_vec(),
            ];
            for (set, value) in seen.iter_mut().zip(values) {
                set.insert(value);
            }
        }
    }
    for (column, set) in ["ulid", "v7", "mastodon", "twitter"].iter().zip(&seen) {
        assert_eq!(
            set.len(),
            rows,
            "{column}: {} of {rows} repeated",
            rows - set.len()
        );
    }
    rows
}

#[test]
fn a_state_file_removed_while_a_process_makes_ids_is_carried_over_not_started_again() {
    let dir = Scratch::new("sqlite-state-removed");
    let db = dir.join("ids.db");
    let state = dir.join("ids.db-idkit");
    let first = spawn_writer(&db, 1_500);
    // Removed while the first writes (a restore, an rsync, a cleanup of unknown files).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !state.exists() {
        assert!(std::time::Instant::now() < deadline, "no state file made");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::remove_file(&state).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    // A second process on the database: it finds the file the first made again above the
    // removed one's mark.
    let second = spawn_writer(&db, 800);
    let said = finish(first);
    finish(second);
    let rows = assert_no_repeat(dir.path());
    assert!(rows > 1_000, "{rows} rows");
    assert!(said.contains("reopened 1"), "the first writer: {said}");
}

#[test]
fn a_state_file_missing_under_a_process_that_still_uses_one_is_not_made_from_nothing() {
    let dir = Scratch::new("sqlite-state-missing");
    let db = dir.join("ids.db");
    let state = dir.join("ids.db-idkit");
    // This process maps the state and then makes no id: it never sees the file go.
    let idle = open(&db);
    let _: Vec<u8> = idle
        .query_row("SELECT idkit_ulid()", [], |r| r.get(0))
        .unwrap();
    std::fs::remove_file(&state).unwrap();
    // Another process refuses to start the generators over beside it.
    let out = spawn_writer(&db, 100).wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("is missing while other processes"), "{said}");
    assert!(!state.exists());
    // This process's next id carries the file over; the other then starts above it.
    let err = idle
        .query_row("SELECT idkit_ulid()", [], |r| r.get::<_, Vec<u8>>(0))
        .unwrap_err();
    assert!(err.to_string().contains("open the database again"), "{err}");
    assert!(state.exists());
    drop(idle);
    finish(spawn_writer(&db, 300));
    assert_no_repeat(dir.path());
}

// ----- fork -----

/// The ids a process made after the fork, one text line each, written to `path`.
fn write_lines(path: &Path, ids: &[String]) {
    std::fs::write(path, ids.join("\n")).unwrap();
}

#[test]
#[ignore = "a child process of the tests above, which run it"]
fn forker() {
    let dir = std::path::PathBuf::from(std::env::var("IDKIT_REPEATS_DIR").unwrap());
    // A database in memory (its words in process memory) and one on disk (in the mapped
    // state file), each used once before the fork.
    let memory = Connection::open_in_memory().unwrap();
    idkit_sqlite::register(&memory).unwrap();
    let file = open(&dir.join("ids.db"));
    let make = |who: &str| {
        let mut ids = Vec::new();
        for _ in 0..20_000 {
            let ulid: String = memory
                .query_row("SELECT idkit_ulid_text()", [], |r| r.get(0))
                .unwrap();
            let v7: String = memory
                .query_row("SELECT idkit_uuidv7_text()", [], |r| r.get(0))
                .unwrap();
            let flake: i64 = file
                .query_row("SELECT idkit_snowflake('mastodon')", [], |r| r.get(0))
                .unwrap();
            ids.extend([ulid, v7, flake.to_string()]);
        }
        write_lines(&dir.join(format!("ids-{who}")), &ids);
    };
    let _: String = memory
        .query_row("SELECT idkit_ulid_text()", [], |r| r.get(0))
        .unwrap();
    let _: i64 = file
        .query_row("SELECT idkit_snowflake('mastodon')", [], |r| r.get(0))
        .unwrap();
    // SAFETY: this process runs one thread (the harness with --test-threads 1 runs the test
    // on its main thread); the child only makes ids and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        make("child");
        // SAFETY: ends the child without running the parent's exit handlers twice.
        unsafe { libc::_exit(0) };
    }
    make("parent");
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(status, 0, "the child failed");
}

#[test]
#[ignore = "a child process of the tests above, which run it"]
fn sibling_forker() {
    let dir = std::path::PathBuf::from(std::env::var("IDKIT_REPEATS_DIR").unwrap());
    // A database in memory (its words in process memory), used before the forks.
    let memory = Connection::open_in_memory().unwrap();
    idkit_sqlite::register(&memory).unwrap();
    fn ulid(conn: &Connection) -> String {
        conn.query_row("SELECT idkit_ulid_text()", [], |r| r.get(0))
            .unwrap()
    }
    ulid(&memory);
    let mut children = Vec::new();
    for n in 0..2 {
        // SAFETY: this process runs one thread (the harness with --test-threads 1 runs the
        // test on its main thread); the child makes ids and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // The child's first id on a thread of its own (a pool's), then the rest on the
            // thread that forked, whose random source was its parent's.
            std::thread::spawn(|| {
                let other = Connection::open_in_memory().unwrap();
                idkit_sqlite::register(&other).unwrap();
                ulid(&other);
            })
            .join()
            .unwrap();
            // The random words the ULIDs' bits come from, on the thread that forked: the
            // same in both children, their ids of one millisecond would be the same.
            let words: Vec<String> = (0..8)
                .map(|_| idkit_core::random::u64().unwrap().to_string())
                .collect();
            write_lines(&dir.join(format!("random-{n}")), &words);
            let ids: Vec<String> = (0..2_000).map(|_| ulid(&memory)).collect();
            write_lines(&dir.join(format!("ids-{n}")), &ids);
            // SAFETY: ends the child without running the parent's exit handlers twice.
            unsafe { libc::_exit(0) };
        }
        children.push(pid);
    }
    for pid in children {
        let mut status = 0;
        // SAFETY: waits for a child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(status, 0, "a child failed");
    }
}

#[test]
#[ignore = "a child process of the tests above, which run it"]
fn lock_keeper() {
    let dir = std::path::PathBuf::from(std::env::var("IDKIT_REPEATS_DIR").unwrap());
    let db = dir.join("ids.db");
    let parent = open(&db);
    parent
        .execute_batch("PRAGMA journal_mode = DELETE; CREATE TABLE t (who TEXT, id BLOB)")
        .unwrap();
    // Used before the fork: the state file mapped, the database open for its users' lock.
    let _: Vec<u8> = parent
        .query_row("SELECT idkit_ulid()", [], |r| r.get(0))
        .unwrap();
    let (mut to_child, mut to_parent) = ([0; 2], [0; 2]);
    // SAFETY: two pipes into arrays of two descriptors.
    unsafe {
        assert_eq!(libc::pipe(to_child.as_mut_ptr()), 0);
        assert_eq!(libc::pipe(to_parent.as_mut_ptr()), 0);
    }
    let say = |fd: i32, b: u8| {
        // SAFETY: one byte into a pipe of this process.
        unsafe { libc::write(fd, std::ptr::from_ref(&b).cast(), 1) };
    };
    let hear = |fd: i32| {
        let mut b = 0u8;
        // SAFETY: one byte from a pipe of this process.
        unsafe { libc::read(fd, std::ptr::from_mut(&mut b).cast(), 1) };
    };
    // SAFETY: this process runs one thread (the harness with --test-threads 1); the child
    // writes in a transaction of its own connection and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let c = open(&db);
        c.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES ('child, before', NULL)")
            .unwrap();
        say(to_parent[1], b'r');
        hear(to_child[0]);
        // Its first id, inside its write transaction.
        c.execute("INSERT INTO t VALUES ('child', idkit_ulid())", [])
            .unwrap();
        say(to_parent[1], b'i');
        hear(to_child[0]);
        let code = i32::from(c.execute_batch("COMMIT").is_err());
        // SAFETY: ends the child without the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let other = Connection::open(&db).unwrap();
    hear(to_parent[0]);
    let before = other.execute_batch("BEGIN IMMEDIATE").is_err();
    say(to_child[1], b'g');
    hear(to_parent[0]);
    // The child's first id must not have dropped SQLite's locks of its transaction.
    let after = other.execute_batch("BEGIN IMMEDIATE").is_err();
    if !after {
        other.execute_batch("ROLLBACK").unwrap();
    }
    drop(other);
    say(to_child[1], b'g');
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let rows: i64 = parent
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    println!("busy before {before}, busy after {after}, child status {status}, rows {rows}");
}

/// A child made by fork opens the database again for its own users' lock at its first id:
/// it once closed the descriptor it inherited, and closing any descriptor of a file drops
/// every POSIX lock the process holds on it, SQLite's own: another connection could then
/// write in the middle of the child's transaction.
#[test]
fn a_childs_first_id_keeps_sqlites_locks_of_its_transaction() {
    let dir = Scratch::new("sqlite-fork-locks");
    let out = child("lock_keeper")
        .env("IDKIT_REPEATS_DIR", dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("busy before true, busy after true, child status 0, rows 2"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two children of one parent, each making its first id on a new thread: the thread that
/// forked had its parent's random source, which only the thread making a child's first id
/// was once seeded anew on, and the two children made the same ULIDs.
#[test]
fn children_made_by_fork_repeat_none_of_each_others_ids_whichever_thread_goes_first() {
    let dir = Scratch::new("sqlite-fork-siblings");
    let out = child("sibling_forker")
        .env("IDKIT_REPEATS_DIR", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read =
        |what: &str, n: u32| std::fs::read_to_string(dir.join(format!("{what}-{n}"))).unwrap();
    assert_ne!(
        read("random", 0),
        read("random", 1),
        "the children drew their parent's random words"
    );
    let (one, two) = (read("ids", 0), read("ids", 1));
    let one: HashSet<&str> = one.lines().collect();
    let two: HashSet<&str> = two.lines().collect();
    assert_eq!((one.len(), two.len()), (2_000, 2_000));
    let both = one.intersection(&two).count();
    assert_eq!(both, 0, "{both} ULIDs made by both children");
}

#[test]
fn a_child_made_by_fork_repeats_none_of_its_parents_ids() {
    let dir = Scratch::new("sqlite-fork");
    let out = child("forker")
        .env("IDKIT_REPEATS_DIR", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |who: &str| std::fs::read_to_string(dir.join(format!("ids-{who}"))).unwrap();
    let (parent, child) = (read("parent"), read("child"));
    let mine: HashSet<&str> = parent.lines().collect();
    assert_eq!(mine.len(), 60_000, "the parent repeated itself");
    let theirs: HashSet<&str> = child.lines().collect();
    assert_eq!(theirs.len(), 60_000, "the child repeated itself");
    let both = mine.intersection(&theirs).count();
    assert_eq!(both, 0, "{both} ids made by both the parent and its child");
}

// ----- the state file's owner and mode -----

#[test]
fn the_state_file_takes_the_database_files_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = Scratch::new("sqlite-state-mode");
    let db = dir.join("ids.db");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (id INTEGER)")
        .unwrap();
    // Group-writable, as a database shared by a group is: the umask (022) would have left
    // the state file writable by its owner only.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o660)).unwrap();
    let conn = open(&db);
    let _: i64 = conn
        .query_row("SELECT idkit_snowflake('mastodon')", [], |r| r.get(0))
        .unwrap();
    let mode = std::fs::metadata(dir.join("ids.db-idkit")).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o660, "{mode:o}");
}

/// A database shared by the users of a group (as SQLite shares its `-wal` and `-shm` files):
/// the state file is theirs too, made by root or by any of them; one that another user
/// cannot write is an error, not generators of that process's own (which kept no order with
/// the others' and failed every Snowflake layout).
#[test]
#[ignore = "runs processes as other users (root): scripts/test.sh runs it"]
fn as_root_another_user_of_the_group_shares_the_state_file() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    let dir = Scratch::new("sqlite-state-group");
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let db = shared.join("ids.db");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (id INTEGER)")
        .unwrap();
    for path in [dir.path(), &shared, &db] {
        std::os::unix::fs::chown(path, Some(1000), Some(1000)).unwrap();
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o2775)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o664)).unwrap();
    // Root makes the state file: it is the database's user's, and the group's.
    let conn = open(&db);
    let _: i64 = conn
        .query_row("SELECT idkit_snowflake('mastodon')", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let state = shared.join("ids.db-idkit");
    let meta = std::fs::metadata(&state).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o777),
        (1000, 1000, 0o664)
    );
    // Another user of the group makes ids of the file (a Snowflake layout needs it).
    let as_other = || {
        let out = child("opener")
            .env("IDKIT_REPEATS_DB", &db)
            .uid(1001)
            .gid(1000)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = as_other();
    assert!(said.contains("made Ok("), "{said}");
    // A state file the group cannot write: an error that says what to do.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
    let said = as_other();
    assert!(
        said.contains("cannot be opened for writing")
            && said.contains("give it the database file's owner and mode"),
        "{said}"
    );
}

// ----- a full disk -----

#[test]
#[ignore = "a child process of the tests above, which run it"]
fn opener() {
    let db = std::env::var("IDKIT_REPEATS_DB").unwrap();
    let conn = Connection::open(&db).unwrap();
    match idkit_sqlite::register(&conn) {
        Ok(()) => {
            let made: rusqlite::Result<i64> =
                conn.query_row("SELECT idkit_snowflake('mastodon')", [], |r| r.get(0));
            println!("made {made:?}");
        }
        Err(e) => println!("refused: {e}"),
    }
}

#[test]
#[ignore = "mounts a file system of 64 KiB (root): scripts/test.sh runs it"]
fn a_full_disk_is_an_error_when_the_state_file_is_made_never_a_sigbus() {
    let dir = Scratch::new("sqlite-full-disk");
    let mount = dir.join("small");
    std::fs::create_dir(&mount).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mount)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount failed: this test runs as root");
    let db = mount.join("ids.db");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        .unwrap();
    let out = child("opener")
        .env("IDKIT_REPEATS_DB", &db)
        .output()
        .unwrap();
    let listing: Vec<String> = std::fs::read_dir(&mount)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    std::process::Command::new("umount")
        .arg(&mount)
        .status()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the process died ({:?}): {said}",
        out.status
    );
    assert!(
        said.contains("refused: ") && said.contains("No space left"),
        "{said}"
    );
    // Nothing half made is left at the state file's name.
    assert!(
        listing.iter().all(|name| !name.contains("-idkit")),
        "{listing:?}"
    );
}

// ----- ATTACH -----

#[test]
fn a_database_attached_by_one_connection_and_opened_by_another_repeats_nothing() {
    let dir = Scratch::new("sqlite-attach");
    let shared = dir.join("shared.db");
    // Made first, so that both writers find its state.
    open(&shared);
    // One writer's main database is its own; it writes the shared one through ATTACH. The
    // other opens the shared one directly. Each makes every generator's ids.
    let attaching = spawn_attached_writer(&dir.join("own.db"), Some(&shared), 800);
    let direct = spawn_writer(&shared, 800);
    finish(attaching);
    finish(direct);
    let rows = assert_no_repeat(dir.path());
    assert!(rows > 1_000, "{rows} rows");
}

// ----- a copy put in place of the state file -----

/// `select`'s ids for `ms` milliseconds, one statement of 50 rows at a time, into
/// `out-NAME.db` (the writer's table): the ids `conn` made.
fn write_for(conn: &Connection, dir: &Path, name: &str, ms: u64) {
    let out = Connection::open(dir.join(format!("out-{name}.db"))).unwrap();
    out.execute_batch(
        "CREATE TABLE IF NOT EXISTS ids (ulid BLOB, v7 BLOB, mastodon INTEGER, twitter INTEGER)",
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    while std::time::Instant::now() < deadline {
        out.execute_batch("BEGIN").unwrap();
        let mut stmt = conn
            .prepare_cached(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
                 SELECT idkit_ulid(), idkit_uuidv7(), idkit_snowflake('mastodon'),
                        idkit_snowflake('twitter', 5)
                 FROM n",
            )
            .unwrap();
        let rows: Vec<Row> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for row in rows {
            out.execute(
                "INSERT INTO ids VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![row.0, row.1, row.2, row.3],
            )
            .unwrap();
        }
        out.execute_batch("COMMIT").unwrap();
    }
}

/// This process writes ids, then `replace` puts another file at its state file's path
/// (`replace(conn, dir, state)`), and a process is started on it with its clock 0.3 s
/// behind, so that its ids fall on the milliseconds of this one's: it waits until this
/// process, at its next id, carries its ids in (or lays the file out above them) and asks
/// for the database to be opened again; then both write and nothing repeats.
fn a_process_started_on_another_file_waits(
    name: &str,
    replace: impl FnOnce(&Connection, &Path, &Path),
) {
    let dir = Scratch::new(name);
    let db = dir.join("ids.db");
    let state = dir.join("ids.db-idkit");
    let conn = open(&db);
    replace(&conn, dir.path(), &state);
    let fresh = child("writer")
        .env("IDKIT_REPEATS_DB", &db)
        .env("IDKIT_REPEATS_MS", "2500")
        .env("LD_PRELOAD", idkit_testkit::faketime::libfaketime())
        .env("FAKETIME", "-0.3s")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let said = conn
        .query_row("SELECT idkit_snowflake('mastodon')", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap_err()
        .to_string();
    assert!(said.contains("open the database again"), "{said}");
    drop(conn);
    write_for(&open(&db), dir.path(), "reopened", 300);
    finish(fresh);
    let rows = assert_no_repeat(dir.path());
    assert!(rows > 1_000, "{rows} rows");
}

#[test]
fn a_copy_put_in_place_of_the_state_file_waits_for_the_ids_of_the_one_it_replaced() {
    a_process_started_on_another_file_waits("sqlite-state-copied", |conn, dir, state| {
        write_for(conn, dir, "before", 200);
        // A copy taken now (a backup), and ids made after it: the copy does not have them.
        let copy = dir.join("copy-of-state");
        std::fs::copy(state, &copy).unwrap();
        write_for(conn, dir, "after-copy", 300);
        // The copy put back in the file's place (a restore, an rsync).
        std::fs::rename(&copy, state).unwrap();
    });
}

/// An empty file put at the path (`rm` then `touch`, another program's file) is a copy of
/// nothing: a process started on it waits for this one to carry its ids into it, as for a
/// copy. Found by a review: it was laid out as a new file, its generators from zero.
#[test]
fn an_empty_file_put_in_place_of_the_state_file_waits_for_the_ids_of_the_one_it_replaced() {
    a_process_started_on_another_file_waits("sqlite-state-emptied", |conn, dir, state| {
        write_for(conn, dir, "before", 300);
        std::fs::remove_file(state).unwrap();
        std::fs::File::create(state).unwrap();
    });
}

/// The state file truncated in place (`: > FILE`) and made whole again with zeros while
/// this process, which uses it, makes no id (any access to the mapping in between is a
/// `SIGBUS`, as with SQLite's `-shm` file): a process started on the zeros waits; this
/// one, at its next id, finds its words gone and refuses, and opened again, alone on the
/// database (the waiting process holds no lock yet), lays the file out above what it gave
/// and above the clock. Found by a review: the zeros were laid out as a new file, the
/// generators from zero.
#[test]
fn a_state_file_truncated_under_a_process_is_laid_out_above_its_ids() {
    a_process_started_on_another_file_waits("sqlite-state-truncated", |conn, dir, state| {
        write_for(conn, dir, "before", 300);
        let file = std::fs::OpenOptions::new().write(true).open(state).unwrap();
        let len = file.metadata().unwrap().len();
        file.set_len(0).unwrap();
        file.set_len(len).unwrap();
    });
}

#[test]
fn a_state_file_written_over_in_place_with_an_older_copy_is_refused_then_goes_on_above() {
    let dir = Scratch::new("sqlite-state-written-over");
    let db = dir.join("ids.db");
    let state = dir.join("ids.db-idkit");
    // A layout of one-second ticks: a copy taken earlier in a tick would give that tick's
    // ids again.
    let slow = "idkit_snowflake_custom('time:41,sequence:22', 1288834974657, 1000, NULL)";
    let mut conn = open(&db);
    let mut made: Vec<i64> = Vec::new();
    let mut make = |conn: &Connection, n: usize| -> Result<(), String> {
        for _ in 0..n {
            let (a, b): (i64, i64) = conn
                .query_row(
                    &format!("SELECT {slow}, idkit_snowflake('twitter', 3)"),
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(|e| e.to_string())?;
            made.extend([a, b]);
        }
        Ok(())
    };
    make(&conn, 10).unwrap();
    // A backup of the file, taken now.
    let backup = std::fs::read(&state).unwrap();
    // Ids for long enough that the mark moves on past the backup's.
    let until = std::time::Instant::now() + std::time::Duration::from_millis(800);
    while std::time::Instant::now() < until {
        make(&conn, 100).unwrap();
    }
    // The backup written over the file in place (`cp`, `rsync --inplace`), not truncated.
    {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&state)
            .unwrap();
        file.write_all_at(&backup, 0).unwrap();
    }
    let said = make(&conn, 1).unwrap_err();
    assert!(said.contains("open the database again"), "{said}");
    conn = open(&db);
    let until = std::time::Instant::now() + std::time::Duration::from_millis(300);
    while std::time::Instant::now() < until {
        make(&conn, 100).unwrap();
    }
    assert_distinct("ids before and after the file was written over", &made);
}
