//! The hunt for repeats no one thought of: writers in processes of their own make ids of
//! every generator into one table of one database while an adversary, on a schedule drawn
//! from a seed, kills writers with SIGKILL (and starts others), removes the state file,
//! replaces it with a copy (an rsync, a restore) or with an empty file, steps the clock of every writer back and
//! forth (libfaketime, up to 8 s behind), starts writers that write through `ATTACH` from a
//! database of their own, starts writers that `fork` and go on in both processes, and fills
//! the file system the database is on (a tmpfs of the test's own) for a while. After every
//! round the rows committed since the last are read in commit order: each generator's ids
//! must increase from row to row, across every process (the writers make their ids inside
//! `BEGIN IMMEDIATE`, so commit order is the order they were made in), which also means no
//! id is there twice.
//!
//! It mounts a file system (root) and preloads libfaketime: `scripts/hunt.sh` runs it, with
//! a fixed seed for a bounded time from scripts/test.sh, or for as long as asked with a
//! random seed (`scripts/hunt.sh --seconds 600`), which every failure prints. The writers
//! are this test binary's `hunt_writer`.
//!
//! Left to other tests: databases in memory, whose words are their process's own
//! (tests/repeats.rs forks one), and a state file truncated or written over in place under
//! running processes (tests/repeats.rs and the state module's tests, with the writers idle
//! meanwhile: an access to a truncated mapping is a `SIGBUS`, as with SQLite's own `-shm`
//! file, and ids made in the millisecond the file is written over may come again; see the
//! crate's README).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use idkit_testkit::Scratch;
use idkit_testkit::schedule::{Schedule, env_u64};
use rusqlite::Connection;

/// The generators every writer calls, one column each.
const COLUMNS: [&str; 6] = ["ulid", "v7", "typeid", "mastodon", "twitter", "custom"];

/// Rows a writer makes per transaction.
const BATCH: usize = 20;

/// The most writers (direct, attaching, forking, and children made by fork) the adversary
/// keeps running.
const MAX_WRITERS: usize = 5;

/// The longest the writers may commit nothing: a Snowflake layout waits up to
/// `MAX_BEHIND_MS` (10 s) for a clock stepped back, a full disk holds them a moment.
const STUCK: Duration = Duration::from_secs(15);

// ----- the writers -----

/// How a writer makes its ids.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Opens the shared database.
    Direct,
    /// Opens a database of its own and writes the shared one through `ATTACH`.
    Attaching,
    /// As `Direct`, and forks after a few transactions; both processes go on.
    Forking,
}

struct Writer {
    child: Child,
    kind: Kind,
    /// Where a forking writer's child writes its process id (removed when it ends).
    forked: Option<PathBuf>,
}

/// A child made by fork whose parent the adversary killed: it goes on writing (as a
/// process whose parent a supervisor killed would) until the adversary kills it too, or
/// the hunt ends. The hunt is the subreaper of such children, so its process id is not
/// used again before the hunt reaps it.
struct Orphan {
    pid: libc::pid_t,
    marker: PathBuf,
}

/// The processes writing: the writers the hunt started, and the children made by fork of
/// those it killed.
#[derive(Default)]
struct Crew {
    writers: Vec<Writer>,
    orphans: Vec<Orphan>,
}

impl Crew {
    fn len(&self) -> usize {
        self.writers.len() + self.orphans.len()
    }

    /// The process id of the writer or orphan `i` (writers first).
    fn pid(&self, i: usize) -> u32 {
        match self.writers.get(i) {
            Some(w) => w.child.id(),
            None => self.orphans[i - self.writers.len()].pid as u32,
        }
    }

    /// Whether the writer or orphan `i` is the last process that uses the newest state
    /// file: the last holding idkit's lock on `db`, or the last mapping a state file no
    /// process carried over yet (one that maps only files carried into newer ones cannot
    /// know how far those went). Killed, it would leave the state file to no one, and a
    /// state file removed or replaced while no process uses it leaves only the clock to
    /// keep new ids above the old ones (crates/idkit-sqlite/README.md, "What holds
    /// where"), which the adversary, stepping the clock back, would break by design: it
    /// spares the last user instead.
    fn last_user(&self, i: usize, db: &Path) -> bool {
        let victim = self.pid(i);
        let users: Vec<u32> = locks_on(db).into_iter().map(|(pid, _)| pid).collect();
        if users == [victim] {
            return true;
        }
        let current: Vec<u32> = users
            .into_iter()
            .filter(|&pid| maps_a_current_state_file(pid))
            .collect();
        current == [victim]
    }

    /// Kills the writer or orphan `i` (writers first) with SIGKILL.
    fn kill(&mut self, i: usize) {
        if i < self.writers.len() {
            let mut w = self.writers.swap_remove(i);
            w.child.kill().unwrap();
            w.child.wait().unwrap();
            // Its child made by fork, if it made one and it runs, goes on.
            if let Some(marker) = w.forked
                && let Some(pid) = read_pid(&marker)
            {
                self.orphans.push(Orphan { pid, marker });
            }
        } else {
            let o = self.orphans.swap_remove(i - self.writers.len());
            // SAFETY: signals and reaps a child of this process (its subreaper): the
            // process id is not used again before it is reaped, here.
            unsafe {
                libc::kill(o.pid, libc::SIGKILL);
                libc::waitpid(o.pid, std::ptr::null_mut(), 0);
            }
            // What it would have removed had it ended by itself.
            let _ = std::fs::remove_file(&o.marker);
        }
    }

    /// Makes room for one more process: kills orphans first, then the oldest writers,
    /// never the last user of the database (see [`Crew::last_user`]).
    fn make_room(&mut self, db: &Path) {
        while self.len() >= MAX_WRITERS {
            let victim = if self.orphans.is_empty() {
                usize::from(self.last_user(0, db))
            } else {
                let orphan = self.writers.len();
                if self.last_user(orphan, db) {
                    0
                } else {
                    orphan
                }
            };
            if victim < self.writers.len() {
                let w = self.writers.remove(victim);
                self.writers.push(w);
                self.kill(self.writers.len() - 1);
            } else {
                self.kill(victim);
            }
        }
    }
}

/// The process id a child made by fork wrote to its marker; `None` once it ended (the
/// marker removed) or before it wrote one.
fn read_pid(marker: &Path) -> Option<libc::pid_t> {
    for _ in 0..50 {
        match std::fs::read_to_string(marker) {
            Ok(text) => match text.trim().parse() {
                Ok(pid) => return Some(pid),
                // Being written.
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            },
            Err(_) => return None,
        }
    }
    None
}

/// What the test shares with its writers: the directory of the shared database (on the
/// tmpfs), the scratch directory, and the clock file libfaketime reads.
struct Place {
    db: PathBuf,
    scratch: PathBuf,
    clock: PathBuf,
    stop: PathBuf,
}

fn spawn(place: &Place, kind: Kind, seed: u64, n: u64) -> Writer {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "hunt_writer",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("IDKIT_HUNT_DB", &place.db)
        .env("IDKIT_HUNT_STOP", &place.stop)
        .env("IDKIT_HUNT_SEED", seed.to_string())
        .env("LD_PRELOAD", idkit_testkit::faketime::libfaketime())
        .env("FAKETIME_TIMESTAMP_FILE", &place.clock)
        .env("FAKETIME_CACHE_DURATION", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut forked = None;
    match kind {
        Kind::Direct => {}
        Kind::Attaching => {
            command.env("IDKIT_HUNT_MAIN", place.scratch.join(format!("own-{n}.db")));
        }
        Kind::Forking => {
            let marker = place.scratch.join(format!("forked-{n}"));
            command
                .env("IDKIT_HUNT_FORK_AFTER", (1 + seed % 20).to_string())
                .env("IDKIT_HUNT_FORKED", &marker);
            forked = Some(marker);
        }
    }
    Writer {
        child: command.spawn().unwrap(),
        kind,
        forked,
    }
}

/// The SQL of one transaction's ids.
fn insert_sql() -> String {
    // With the trace (`scripts/hunt.sh --trace`), each row says which state files its ids
    // went to, read after they were made.
    let who = if cfg!(feature = "trace") {
        "'{who} ' || idkit_trace_state()"
    } else {
        "'{who}'"
    };
    format!(
        "INSERT INTO {{db}}.ids (ulid, v7, typeid, mastodon, twitter, custom, who)
         SELECT idkit_ulid(), idkit_uuidv7(), idkit_typeid('user'),
                idkit_snowflake('mastodon'), idkit_snowflake('twitter', 5),
                idkit_snowflake_custom('time:41,node:10,sequence:12', 1288834974657, 1, 7),
                {who}
         FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {BATCH})
               SELECT i FROM n)"
    )
}

/// Whether an error is one the adversary causes and idkit answers with a message: the
/// writer goes on (opening the database again where the message says so).
fn expected(message: &str) -> bool {
    [
        "open the database again",
        "is missing while other processes",
        "cannot be written now",
        "behind the last id",
        "database or disk is full",
        "No space left",
        "database is locked",
        "disk I/O error",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Opens the writer's connection: the shared database, or its own with the shared one
/// attached as `x`.
fn open_writer(db: &str, main: Option<&str>) -> rusqlite::Result<Connection> {
    let conn = Connection::open(main.unwrap_or(db))?;
    conn.busy_timeout(Duration::from_secs(60))?;
    // The WAL cut back to 4 MiB when it starts again, so that it does not fill the tmpfs.
    conn.execute_batch("PRAGMA journal_size_limit = 4194304")?;
    idkit_sqlite::register(&conn)?;
    if main.is_some() {
        conn.execute("ATTACH ?1 AS x", [db])?;
    }
    Ok(conn)
}

/// Makes ids until the stop file appears; returns what it saw.
fn write_until_stopped(
    db: &str,
    main: Option<&str>,
    stop: &Path,
    seed: u64,
    mut fork_after: Option<u64>,
    forked: Option<&str>,
) -> BTreeMap<String, u64> {
    let schema = if main.is_some() { "x" } else { "main" };
    // Who made a row, for the message of a finding.
    let who = format!(
        "{} writer {}",
        match (main.is_some(), fork_after.is_some(), forked.is_some()) {
            (true, _, _) => "an attaching",
            (false, true, _) => "a forking",
            (false, false, true) => "a forked",
            _ => "a direct",
        },
        std::process::id()
    );
    let sql = insert_sql().replace("{db}", schema).replace("{who}", &who);
    let mut schedule = Schedule::new(seed);
    let mut seen = BTreeMap::new();
    let mut conn = None;
    let mut batches = 0u64;
    while !stop.exists() {
        if fork_after == Some(batches) {
            fork_after = None;
            // No SQLite connection goes across fork (SQLite's rule, and the child's copy of
            // its lock state let a forked writer write beside another: ids out of commit
            // order, seed 2169941416); idkit's state, used by it, does.
            drop(conn.take());
            // SAFETY: this process runs one thread (the harness with --test-threads 1 runs
            // the test on its main thread); the child opens connections of its own.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let marker = forked.unwrap();
                std::fs::write(marker, std::process::id().to_string()).unwrap();
                // What it says goes to a file of its own: its parent's pipe ends with the
                // parent, which the adversary may kill first.
                let log = std::fs::File::create(format!("{marker}.log")).unwrap();
                // SAFETY: fd 2 made a copy of the log file's descriptor.
                unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&log), 2) };
                let code = match std::panic::catch_unwind(|| {
                    write_until_stopped(db, main, stop, seed ^ 0xf0f0, None, Some(marker))
                }) {
                    Ok(_) => 0,
                    Err(e) => {
                        let said = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_default();
                        std::fs::write(format!("{marker}.failed"), said).unwrap();
                        1
                    }
                };
                let _ = std::fs::remove_file(marker);
                // SAFETY: ends the child without the parent's exit handlers.
                unsafe { libc::_exit(code) };
            }
            *seen.entry("forked".to_owned()).or_insert(0) += 1;
        }
        let c = match &conn {
            Some(c) => c,
            None => match open_writer(db, main) {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    let said = e.to_string();
                    assert!(expected(&said), "opening: {said}");
                    note(&mut seen, &said);
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
            },
        };
        let result = c
            .execute_batch("BEGIN IMMEDIATE")
            .and_then(|()| c.execute(&sql, []))
            .and_then(|_| c.execute_batch("COMMIT"));
        match result {
            Ok(()) => batches += 1,
            Err(e) => {
                let said = e.to_string();
                let _ = c.execute_batch("ROLLBACK");
                assert!(expected(&said), "writing: {said}");
                note(&mut seen, &said);
                if said.contains("open the database again") || said.contains("missing") {
                    conn = None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        std::thread::sleep(Duration::from_micros(500 + schedule.below(3_000)));
    }
    seen.insert("transactions".to_owned(), batches);
    seen
}

/// The first words of an error, to count it by.
fn short(said: &str) -> String {
    said.chars().take(60).collect()
}

/// Counts an error, and prints it whole the first time and at each power of two (what a
/// stuck hunt shows).
fn note(seen: &mut BTreeMap<String, u64>, said: &str) {
    let count = seen.entry(short(said)).or_insert(0);
    if count.is_power_of_two() || *count == 0 {
        // Not eprintln!: a child made by fork shares its parent's pipe, which the test may
        // have closed, and a failed write is no finding.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{:?} (seen {count} times before): {said}",
            std::time::SystemTime::now()
        );
    }
    *count += 1;
}

#[test]
#[ignore = "a child process of the hunt, which runs it"]
fn hunt_writer() {
    let db = std::env::var("IDKIT_HUNT_DB").unwrap();
    let stop = PathBuf::from(std::env::var("IDKIT_HUNT_STOP").unwrap());
    let main = std::env::var("IDKIT_HUNT_MAIN").ok();
    let seed = env_u64("IDKIT_HUNT_SEED", 0);
    let fork_after = std::env::var("IDKIT_HUNT_FORK_AFTER")
        .ok()
        .map(|v| v.parse().unwrap());
    let forked = std::env::var("IDKIT_HUNT_FORKED").ok();
    let seen = write_until_stopped(
        &db,
        main.as_deref(),
        &stop,
        seed,
        fork_after,
        forked.as_deref(),
    );
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{seen:?}");
}

// ----- the adversary -----

/// The rows committed since `after` in commit order, each generator's ids checked to
/// increase from `last`; returns the last row read.
struct Checker {
    conn: Connection,
    after: i64,
    last: Option<(Vec<Vec<u8>>, String)>,
    rows: u64,
}

impl Checker {
    fn new(db: &Path) -> Self {
        let conn = Connection::open(db).unwrap();
        conn.busy_timeout(Duration::from_secs(60)).unwrap();
        conn.execute_batch("PRAGMA journal_size_limit = 4194304")
            .unwrap();
        Self {
            conn,
            after: 0,
            last: None,
            rows: 0,
        }
    }

    /// Reads the rows committed since the last round; a repeat or a step down is an
    /// error naming the seed.
    fn round(&mut self, seed: u64) -> Result<(), String> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT rowid, ulid, v7, CAST(typeid AS BLOB), mastodon, twitter, custom, who
                 FROM ids WHERE rowid > ?1 ORDER BY rowid",
            )
            .unwrap();
        let rows: Vec<(i64, Vec<Vec<u8>>, String)> = stmt
            .query_map([self.after], |r| {
                let mut values = vec![r.get::<_, Vec<u8>>(1)?, r.get(2)?, r.get(3)?];
                for i in 4..7 {
                    // Positive 63-bit integers: big-endian bytes sort as the numbers do.
                    values.push(r.get::<_, i64>(i)?.to_be_bytes().to_vec());
                }
                Ok((r.get(0)?, values, r.get(7)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        drop(stmt);
        for (rowid, values, who) in rows {
            if let Some((last, last_who)) = &self.last {
                for (i, column) in COLUMNS.iter().enumerate() {
                    if values[i] <= last[i] {
                        return Err(format!(
                            "seed {seed}: {column} at row {rowid} is not above the row before \
                             it ({} by {who} after {} by {last_who}): {}",
                            hex(&values[i]),
                            hex(&last[i]),
                            if values[i] == last[i] {
                                "a repeat"
                            } else {
                                "out of order"
                            }
                        ));
                    }
                }
            }
            self.last = Some((values, who));
            self.after = rowid;
            self.rows += 1;
        }
        // The rows checked go (the last one stays, so that rowids are not used again);
        // on a full disk they wait for the next round.
        let _ = self
            .conn
            .execute("DELETE FROM ids WHERE rowid < ?1", [self.after]);
        Ok(())
    }
}

/// The processes holding a `flock` on `db` (from each process's `/proc/PID/fdinfo`: a lock
/// made before a `fork` is held by the child too), each with its kind (from its
/// environment), its parent, its state and where it waits: what a stuck hunt shows first.
fn holders(db: &Path) -> String {
    let mut said = String::from("processes holding a lock of idkit's on the database:\n");
    for (pid, locks) in locks_on(db) {
        let proc = |what: &str| std::fs::read_to_string(format!("/proc/{pid}/{what}"));
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let kind = if env.windows(17).any(|w| w == b"IDKIT_HUNT_FORKED") {
            "forking (or forked)"
        } else if env.windows(15).any(|w| w == b"IDKIT_HUNT_MAIN") {
            "attaching"
        } else {
            "direct"
        };
        let stat = proc("stat").unwrap_or_default();
        let stat: Vec<&str> = stat.split_whitespace().collect();
        said.push_str(&format!(
            "  pid {pid} (parent {}), a {kind} writer, state {}, waiting in {}: {}\n    {}\n",
            stat.get(3).unwrap_or(&"?"),
            stat.get(2).unwrap_or(&"?"),
            proc("wchan").unwrap_or_default(),
            locks.join("; "),
            proc("stack").unwrap_or_default().replace('\n', "\n    "),
        ));
    }
    said
}

/// Whether process `pid` maps a state file of the shared database (`ids.db-idkit`, or one
/// removed or replaced at that path) that no process stamped carried over (`SUPERSEDED`
/// in its header's `own`, the 7th word): read through `/proc/PID/map_files`, which root
/// may open, removed files too.
fn maps_a_current_state_file(pid: u32) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return false;
    };
    maps.lines()
        .filter(|l| l.contains("/ids.db-idkit"))
        .filter_map(|l| l.split_whitespace().next())
        .any(|range| {
            let Ok(mut file) = std::fs::File::open(format!("/proc/{pid}/map_files/{range}")) else {
                return false;
            };
            let mut own = [0u8; 8];
            file.seek(SeekFrom::Start(48)).is_ok()
                && file.read_exact(&mut own).is_ok()
                && u64::from_ne_bytes(own) != u64::MAX
        })
}

/// Each process holding idkit's lock on `db` (the users' lock), with the lines of its
/// `/proc/PID/fdinfo` that show it.
fn locks_on(db: &Path) -> Vec<(u32, Vec<String>)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(db) else {
        return Vec::new();
    };
    let inode = format!(":{} ", meta.ino());
    let mut found = Vec::new();
    let pids = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    for pid in pids.filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fdinfo"));
        let locks: Vec<String> = fds
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_to_string(fd.path()).ok())
            .flat_map(|info| {
                info.lines()
                    // The users' lock: an OFD lock on Linux (a flock elsewhere).
                    .filter(|l| (l.contains("OFDLCK") || l.contains("FLOCK")) && l.contains(&inode))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        if !locks.is_empty() {
            found.push((pid, locks));
        }
    }
    found
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Fills the file system of `dir` with a file of its own: the bytes it wrote.
fn fill(ballast: &Path) -> u64 {
    use std::io::Write;
    let mut file = std::fs::File::create(ballast).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    let mut written = 0;
    while let Ok(n) = file.write(&chunk) {
        if n == 0 {
            break;
        }
        written += n as u64;
    }
    written
}

struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
#[ignore = "mounts a tmpfs (root) and preloads libfaketime: scripts/hunt.sh runs it"]
fn hunt() {
    let seed = env_u64("IDKIT_HUNT_SEED", 90);
    let seconds = env_u64("IDKIT_HUNT_SECONDS", 20);
    eprintln!("hunt: seed {seed}, {seconds} s (IDKIT_HUNT_SEED={seed} to run it again)");
    let scratch = Scratch::new("sqlite-hunt");
    let disk = scratch.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = Command::new("mount")
        // Room for the database and its WAL over a long run (a full disk that stays full is
        // SQLite's stall, not idkit's: seed 1694996744 filled 32 MiB in 8 minutes).
        .args(["-t", "tmpfs", "-o", "size=96m", "tmpfs"])
        .arg(&disk)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount failed: the hunt runs as root");
    let _mount = Mount(disk.clone());
    let place = Place {
        db: disk.join("ids.db"),
        scratch: scratch.path().to_owned(),
        clock: scratch.join("clock"),
        stop: scratch.join("stop"),
    };
    let state = disk.join("ids.db-idkit");
    std::fs::write(&place.clock, "+0\n").unwrap();
    {
        let conn = Connection::open(&place.db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE ids (who TEXT, ulid BLOB, v7 BLOB, typeid TEXT, mastodon INTEGER,
                               twitter INTEGER, custom INTEGER)",
        )
        .unwrap();
    }
    let mut schedule = Schedule::new(seed);
    let mut checker = Checker::new(&place.db);
    // Children made by fork whose parent is killed become the hunt's, to be killed and
    // reaped by it.
    // SAFETY: sets a flag of this process.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) }, 0);
    let mut crew = Crew::default();
    let mut spawned = 0u64;
    let mut done: BTreeMap<&str, u64> = BTreeMap::new();
    let mut start = |schedule: &mut Schedule, crew: &mut Crew, kind: Kind| {
        crew.make_room(&place.db);
        spawned += 1;
        let w = spawn(&place, kind, schedule.next_u64(), spawned);
        let pid = w.child.id();
        crew.writers.push(w);
        pid
    };
    // The adversary's last actions, for a finding's message.
    let began = Instant::now();
    let mut recent: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut log = |what: String| {
        if recent.len() == 64 {
            recent.pop_front();
        }
        recent.push_back(format!("  {:>9.3} s {what}", began.elapsed().as_secs_f64()));
    };
    for _ in 0..3 {
        let pid = start(&mut schedule, &mut crew, Kind::Direct);
        log(format!("started a direct writer {pid}"));
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut next_round = Instant::now() + Duration::from_secs(2);
    let mut progress = Instant::now();
    while Instant::now() < deadline {
        let action = match schedule.below(100) {
            0..30 => "kill",
            30..39 => "remove",
            39..44 => "empty",
            44..54 => "replace",
            54..70 => "clock",
            70..80 => "attach",
            80..88 => "fork",
            _ => "fill",
        };
        *done.entry(action).or_insert(0) += 1;
        match action {
            "kill" => {
                if crew.len() > 0 {
                    let i = schedule.below(crew.len() as u64) as usize;
                    let pid = crew.pid(i);
                    if crew.last_user(i, &place.db) {
                        *done.entry("spared the last user").or_insert(0) += 1;
                        log(format!("spared {pid}, the last user"));
                    } else {
                        crew.kill(i);
                        log(format!("killed {pid}"));
                    }
                }
                let pid = start(&mut schedule, &mut crew, Kind::Direct);
                log(format!("started a direct writer {pid}"));
            }
            "remove" => {
                let _ = std::fs::remove_file(&state);
                log("removed the state file".to_owned());
            }
            "empty" => {
                // `rm` then `touch`: an empty file at the path, as another program leaves.
                let _ = std::fs::remove_file(&state);
                let _ = std::fs::File::create(&state);
                log("put an empty file in place of the state file".to_owned());
            }
            "replace" => {
                // As rsync does: a copy beside it, renamed over it.
                let copy = disk.join(".ids.db-idkit.copy");
                if std::fs::copy(&state, &copy).is_ok() {
                    let _ = std::fs::rename(&copy, &state);
                    log("replaced the state file by a copy".to_owned());
                }
                let _ = std::fs::remove_file(&copy);
            }
            "clock" => {
                let offset = match schedule.below(10) {
                    0..4 => 0,
                    4..9 => schedule.below(3) + 1,
                    _ => 8,
                };
                std::fs::write(&place.clock, format!("-{offset}s\n")).unwrap();
                log(format!("set the clock {offset} s behind"));
            }
            "attach" | "fork" => {
                let kind = if action == "attach" {
                    Kind::Attaching
                } else {
                    Kind::Forking
                };
                let pid = start(&mut schedule, &mut crew, kind);
                log(format!("started a {kind:?} writer {pid}"));
            }
            _ => {
                let ballast = disk.join("ballast");
                fill(&ballast);
                log("filled the disk".to_owned());
                std::thread::sleep(Duration::from_millis(100 + schedule.below(400)));
                std::fs::remove_file(&ballast).unwrap();
                log("emptied the disk".to_owned());
            }
        }
        // A writer that ended by itself failed: what it said is the finding.
        for w in &mut crew.writers {
            if let Some(status) = w.child.try_wait().unwrap() {
                let mut said = String::new();
                use std::io::Read;
                let _ = w.child.stderr.take().unwrap().read_to_string(&mut said);
                panic!(
                    "seed {seed}: a {:?} writer ended by itself ({status}): {said}",
                    w.kind
                );
            }
        }
        std::thread::sleep(Duration::from_millis(50 + schedule.below(250)));
        if Instant::now() >= next_round {
            let before = checker.rows;
            if let Err(finding) = checker.round(seed) {
                let recent: Vec<String> = recent.iter().cloned().collect();
                panic!(
                    "{finding}\nthe adversary's last actions (seconds into the hunt):\n{}\n{}",
                    recent.join("\n"),
                    holders(&place.db)
                );
            }
            if checker.rows > before {
                progress = Instant::now();
            }
            // A Snowflake layout waits up to 10 s for a clock stepped back; past that,
            // writers that make nothing are stuck (a state file no one can make again).
            if progress.elapsed() >= STUCK {
                let mut said = holders(&place.db);
                let df = Command::new("df").arg("-k").arg(&disk).output().unwrap();
                said.push_str(&String::from_utf8_lossy(&df.stdout));
                for file in std::fs::read_dir(&disk).unwrap().flatten() {
                    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                    said.push_str(&format!("  {:?}: {len} bytes\n", file.file_name()));
                }
                for log in std::fs::read_dir(scratch.path()).unwrap().flatten() {
                    let name = log.file_name().to_string_lossy().into_owned();
                    if name.starts_with("forked-") && name.ends_with(".log") {
                        said.push_str(&format!("{name}:\n"));
                        said.push_str(&std::fs::read_to_string(log.path()).unwrap_or_default());
                    }
                }
                // Children made by fork end at the stop file.
                std::fs::write(&place.stop, "").unwrap();
                while !crew.orphans.is_empty() {
                    crew.kill(crew.writers.len());
                }
                for w in &mut crew.writers {
                    let _ = w.child.kill();
                    let _ = w.child.wait();
                    use std::io::Read;
                    let _ = w.child.stderr.take().unwrap().read_to_string(&mut said);
                }
                panic!(
                    "seed {seed}: no row committed for {STUCK:?}: the writers are stuck; they \
                     said:\n{said}"
                );
            }
            next_round = Instant::now() + Duration::from_secs(2);
        }
    }
    std::fs::write(&place.stop, "").unwrap();
    std::fs::write(&place.clock, "+0\n").unwrap();
    for w in crew.writers {
        let out = w.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "seed {seed}: a {:?} writer failed: {}",
            w.kind,
            String::from_utf8_lossy(&out.stderr)
        );
        // Its last line: what it saw, counted (the lines before: each error the first time).
        let said = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "hunt: a {:?} writer: {}",
            w.kind,
            said.trim().lines().last().unwrap_or("")
        );
    }
    // Children made by fork end at the stop file too, each removing its marker.
    let wait = Instant::now() + Duration::from_secs(60);
    let forked = || -> Vec<PathBuf> {
        std::fs::read_dir(scratch.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("forked-")
            })
            .collect()
    };
    while forked().iter().any(|p| p.extension().is_none()) {
        assert!(
            Instant::now() < wait,
            "seed {seed}: a forked writer did not end"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Some(failed) = forked()
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "failed"))
    {
        panic!(
            "seed {seed}: a writer made by fork failed: {}",
            std::fs::read_to_string(failed).unwrap()
        );
    }
    if let Err(finding) = checker.round(seed) {
        panic!("{finding}");
    }
    eprintln!(
        "hunt: seed {seed}: {} rows of {} generators in commit order, none repeated or out \
         of order; {spawned} writers; adversary: {done:?}",
        checker.rows,
        COLUMNS.len()
    );
    assert!(
        checker.rows > 1_000,
        "seed {seed}: only {} rows",
        checker.rows
    );
}
