//! The allocator on SQLite: threads, several allocators, OS processes, SIGKILL, an outage
//! (another connection holding the write lock), corrupt state, interleaving, adaptive blocks
//! and configuration errors.

mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::{collect_children, kill_after, outage, run_threads};
use idkit_range::{IdScheme, RangeAllocator, RangeConfigError, SqliteStore};
use idkit_testkit::{Scratch, check_threads};

fn store(path: &std::path::Path) -> SqliteStore {
    SqliteStore::open(path, Duration::from_secs(10)).unwrap()
}

/// A builder on `store` that waits up to 15 s for a block: a lease commits with fsync, and
/// on a shared disk under the parallel tests one took 1.9 s here (the default wait is 2 s).
fn builder(store: SqliteStore) -> idkit_range::RangeBuilder<SqliteStore> {
    RangeAllocator::builder(store).wait(Duration::from_secs(15))
}

fn allocator(path: &std::path::Path, block: u64) -> RangeAllocator {
    builder(store(path))
        .namespace("orders")
        .block_size(block)
        .max_block(block)
        .build()
        .unwrap()
}

/// Entry point of the child processes; does nothing unless the parent set the variables.
#[test]
fn child_process_entry() {
    let (Ok(path), Ok(count)) = (
        std::env::var("IDKIT_RANGE_CHILD_DB"),
        std::env::var("IDKIT_RANGE_CHILD_COUNT"),
    ) else {
        return;
    };
    let count: usize = count.parse().unwrap();
    // An optional common start time (ms since the Unix epoch), so children open together.
    if let Ok(start) = std::env::var("IDKIT_RANGE_CHILD_START") {
        let start = std::time::UNIX_EPOCH + Duration::from_millis(start.parse().unwrap());
        if let Ok(wait) = start.duration_since(std::time::SystemTime::now()) {
            std::thread::sleep(wait);
        }
    }
    let a = allocator(std::path::Path::new(&path), 50);
    let mut out = std::io::stdout().lock();
    for _ in 0..count {
        use std::io::Write;
        writeln!(out, "{}", a.next_id().unwrap()).unwrap();
        out.flush().unwrap();
    }
}

fn spawn_child(db: &std::path::Path, count: usize) -> std::process::Child {
    spawn_child_at(db, count, None)
}

/// A child that starts work at `start` (ms since the Unix epoch) when given.
fn spawn_child_at(db: &std::path::Path, count: usize, start: Option<u128>) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    if let Some(start) = start {
        cmd.env("IDKIT_RANGE_CHILD_START", start.to_string());
    }
    cmd.args([
        "--exact",
        "child_process_entry",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ])
    .env("IDKIT_RANGE_CHILD_DB", db)
    .env("IDKIT_RANGE_CHILD_COUNT", count.to_string())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}

#[test]
fn threads_sharing_one_allocator_never_collide() {
    let dir = Scratch::new("range-threads");
    let a = Arc::new(allocator(&dir.join("ids.db"), 100));
    let seqs = run_threads(&[a], 4, 20_000);
    check_threads(seqs);
}

#[test]
fn allocators_on_one_file_never_collide() {
    let dir = Scratch::new("range-allocators");
    let all: Vec<Arc<RangeAllocator>> = (0..3)
        .map(|_| Arc::new(allocator(&dir.join("ids.db"), 64)))
        .collect();
    let seqs = run_threads(&all, 6, 10_000);
    check_threads(seqs);
}

#[test]
fn processes_on_one_file_never_collide() {
    let dir = Scratch::new("range-processes");
    let children: Vec<_> = (0..4)
        .map(|_| spawn_child(&dir.join("ids.db"), 5_000))
        .collect();
    // The parent draws at the same time.
    let parent = allocator(&dir.join("ids.db"), 50);
    let mine: Vec<u64> = (0..5_000).map(|_| parent.next_id().unwrap()).collect();
    let mut seqs = vec![mine];
    seqs.extend(collect_children(children, 5_000));
    check_threads(seqs);
}

/// Several processes creating one new file at the same moment: each must get WAL mode and
/// the table (SQLite refuses a concurrent switch to WAL at once, without its busy handler).
#[test]
fn processes_opening_one_new_file_at_once() {
    for round in 0..10 {
        let dir = Scratch::new(&format!("range-open-{round}"));
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
            + 300;
        let children: Vec<_> = (0..8)
            .map(|_| spawn_child_at(&dir.join("ids.db"), 3, Some(start)))
            .collect();
        let seqs = collect_children(children, 3);
        check_threads(seqs);
    }
}

#[test]
fn a_killed_process_leaves_gaps_never_reused_ids() {
    let dir = Scratch::new("range-kill");
    // Killed mid-block: 1,234 is not a multiple of the block size of 50.
    let issued = kill_after(spawn_child(&dir.join("ids.db"), 10_000_000), 1_234);
    let dead_max = *issued.iter().max().unwrap();

    let fresh = allocator(&dir.join("ids.db"), 50);
    let new_ids: Vec<u64> = (0..2_000).map(|_| fresh.next_id().unwrap()).collect();
    assert!(new_ids.iter().all(|id| !issued.contains(id)));
    // Stronger: the store had moved past every block the dead process leased.
    assert!(new_ids[0] > dead_max, "{} <= {dead_max}", new_ids[0]);
}

#[test]
fn outage_serves_leased_ids_then_fails_typed_then_recovers() {
    let dir = Scratch::new("range-outage");
    let a = builder(SqliteStore::open(dir.join("ids.db"), Duration::from_millis(50)).unwrap())
        .block_size(100)
        .max_block(100)
        .prefetch_at(0.5)
        .build()
        .unwrap();
    // The outage: another connection holds the write lock.
    let blocker = rusqlite::Connection::open(dir.join("ids.db")).unwrap();
    let err = outage(
        &a,
        Duration::from_secs(10),
        || blocker.execute_batch("BEGIN EXCLUSIVE").unwrap(),
        || blocker.execute_batch("ROLLBACK").unwrap(),
    );
    assert!(err.to_string().contains("every leased id is used"), "{err}");
    assert!(a.stats().store_errors >= 1);
}

#[test]
fn corrupt_state_is_refused() {
    let dir = Scratch::new("range-corrupt");
    {
        let a = allocator(&dir.join("ids.db"), 10);
        a.next_id().unwrap();
    }
    let conn = rusqlite::Connection::open(dir.join("ids.db")).unwrap();
    for bad in ["'seven'", "-5", "1.5"] {
        conn.execute_batch(&format!(
            "UPDATE idkit_ranges SET max_id = {bad} WHERE namespace = 'orders'"
        ))
        .unwrap();
        let a = builder(store(&dir.join("ids.db")))
            .namespace("orders")
            .build()
            .unwrap();
        let err = a.next_id().unwrap_err().to_string();
        assert!(err.contains("is corrupt"), "{bad}: {err}");
        assert!(err.contains("\"orders\""), "{err}");
    }
}

#[test]
fn interleaved_stores_serve_odd_and_even_ids() {
    let (d1, d2) = (Scratch::new("range-odd"), Scratch::new("range-even"));
    let even = builder(store(&d1.join("ids.db")))
        .interleave(2, 0)
        .build()
        .unwrap();
    let odd = builder(store(&d2.join("ids.db")))
        .interleave(2, 1)
        .build()
        .unwrap();
    let e: Vec<u64> = (0..3_000).map(|_| even.next_id().unwrap()).collect();
    let o: Vec<u64> = (0..3_000).map(|_| odd.next_id().unwrap()).collect();
    assert!(e.iter().all(|id| id % 2 == 0));
    assert!(o.iter().all(|id| id % 2 == 1));
    assert_eq!((e[0], o[0]), (2, 3));
    check_threads(vec![e, o]);
}

/// Near 2^64 an interleave's ids run out before the store's counter does: every id that fits
/// is handed out once and in order, from a block cut short where it passes 2^64 - 1, and then
/// the namespace is spent, and said to be (before, a block that passed the end was dropped
/// whole and the error blamed the store's counter).
#[test]
fn an_interleave_hands_out_its_last_ids_then_says_they_are_spent() {
    let dir = Scratch::new("range-last-ids");
    let step = 1 << 62;
    for (offset, block) in [(0, 1), (5, 3), (5, 10)] {
        let path = dir.join(format!("ids-{offset}-{block}.db"));
        let make = || {
            builder(store(&path))
                .block_size(block)
                .max_block(block)
                .interleave(step, offset)
                .build()
                .unwrap()
        };
        // Counters 1, 2 and 3: counter 4's id would be 2^64 + offset.
        let want = [1, 2, 3].map(|c| c * step + offset);
        let a = make();
        let ids: Vec<u64> = std::iter::from_fn(|| a.next_id().ok()).take(10).collect();
        assert_eq!(ids, want, "offset {offset}, block {block}");
        let e = a.next_id().unwrap_err();
        assert_eq!(e.kind(), idkit_core::GenerateErrorKind::Unavailable);
        let spent = format!(
            "has handed out its last id, {}: at interleave step {step}, offset {offset} the \
             next would pass 2^64 - 1",
            want[2]
        );
        assert!(e.to_string().contains(&spent), "{e}");
        // Asked again, and by a batch from a new allocator: refused the same way, and
        // without asking the store again (every later block would start past the end too).
        let leases = a.stats().leases;
        for _ in 0..3 {
            assert!(a.next_id().unwrap_err().to_string().contains(&spent));
        }
        // A lease asked for would be done by now (a SQLite lease takes about a millisecond).
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(a.stats().leases, leases, "the store was asked again");
        let mut batch = [0u64; 2];
        let e = make().fill(&mut batch).unwrap_err();
        assert!(e.to_string().contains(&spent), "{e}");
    }
}

#[test]
fn another_interleave_is_refused_a_kept_namespace() {
    let dir = Scratch::new("range-interleave");
    common::another_interleave_is_refused(|ns, step, offset| {
        builder(store(&dir.join("ids.db")))
            .namespace(ns)
            .block_size(10)
            .interleave(step, offset)
            .build()
            .unwrap()
    });
}

#[test]
fn bad_requests_are_refused() {
    let dir = Scratch::new("range-requests");
    common::bad_requests_are_refused(&store(&dir.join("ids.db")));
}

#[test]
fn block_size_adapts_and_the_lease_records_it() {
    let dir = Scratch::new("range-adaptive");
    // Blocks drain far faster than the target: they grow to the maximum.
    let fast = builder(store(&dir.join("ids.db")))
        .namespace("fast")
        .block_size(10)
        .max_block(640)
        .target_period(Duration::from_secs(3600))
        .build()
        .unwrap();
    for _ in 0..20_000 {
        fast.next_id().unwrap();
    }
    assert_eq!(fast.stats().block_size, 640);
    // Blocks drain slower than twice the target (64 ids every 3 ms, the target 1 ms):
    // they shrink to the minimum and stay there. Blocks hold at least 64 ids, the most a
    // thread takes at once, so every block spans several of those pauses.
    let slow = builder(store(&dir.join("ids.db")))
        .namespace("slow")
        .block_size(256)
        .min_block(128)
        .target_period(Duration::from_millis(1))
        .prefetch_at(1.0)
        .build()
        .unwrap();
    for _ in 0..16 {
        std::thread::sleep(Duration::from_millis(3));
        for _ in 0..64 {
            slow.next_id().unwrap();
        }
    }
    assert_eq!(slow.stats().block_size, 128);
    let conn = rusqlite::Connection::open(dir.join("ids.db")).unwrap();
    let recorded: i64 = conn
        .query_row(
            "SELECT block_size FROM idkit_ranges WHERE namespace = 'fast'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(recorded, 640);
}

#[test]
fn bad_configuration_is_refused_when_built() {
    let dir = Scratch::new("range-config");
    let build = |f: &dyn Fn(
        idkit_range::RangeBuilder<SqliteStore>,
    ) -> idkit_range::RangeBuilder<SqliteStore>| {
        f(builder(store(&dir.join("ids.db")))).build().map(drop)
    };
    let msg = |r: Result<(), RangeConfigError>| r.unwrap_err().to_string();
    assert!(msg(build(&|b| b.block_size(0))).contains("block_size: 0 is out of range"));
    assert!(msg(build(&|b| b.interleave(0, 0))).contains("step: must be at least 1"));
    assert!(msg(build(&|b| b.interleave(2, 2))).contains("offset: 2 must be below step 2"));
    assert!(msg(build(&|b| b.namespace(""))).contains("namespace is empty"));
    assert!(msg(build(&|b| b.namespace(&"n".repeat(129)))).contains("at most 128"));
    assert!(msg(build(&|b| b.prefetch_at(0.0))).contains("prefetch_at"));
    assert!(msg(build(&|b| b.block_size(100).min_block(200))).contains("min_block"));
    assert!(build(&|b| b.namespace(&"n".repeat(128))).is_ok());
}

/// A slow store that records when it is dropped.
#[derive(Debug)]
struct DropFlagged {
    inner: idkit_testkit::range::SlowStore,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for DropFlagged {
    fn drop(&mut self) {
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl idkit_range::Store for DropFlagged {
    fn lease(
        &self,
        namespace: &str,
        size: u64,
    ) -> Result<idkit_range::Lease, idkit_range::StoreError> {
        self.inner.lease(namespace, size)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// Dropping an allocator closes its store before `drop` returns. The leasing thread used to
/// let go of it on its own time, so a process that exited right after (`idkit gen range`)
/// left the SQLite file's `-wal` and `-shm` behind in 14 of 20 runs.
#[test]
fn dropping_the_allocator_closes_its_store() {
    let dir = Scratch::new("range-drop");
    let path = dir.join("ids.db");
    for round in 0..20 {
        let a = allocator(&path, 10);
        a.next_id().unwrap();
        drop(a);
        for end in ["-wal", "-shm"] {
            let left = dir.join(format!("ids.db{end}"));
            assert!(!left.exists(), "round {round}: {} was left", left.display());
        }
    }

    // A lease in flight when the allocator is dropped: drop waits for it (within `wait`).
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let store = DropFlagged {
        inner: idkit_testkit::range::SlowStore::new(Duration::from_millis(200)),
        dropped: Arc::clone(&dropped),
    };
    let a = RangeAllocator::builder(store)
        .block_size(10)
        .max_block(10)
        .wait(Duration::from_secs(10))
        .build()
        .unwrap();
    // The first draw takes the whole block of 10, so the next lease starts at once.
    a.next_id().unwrap();
    drop(a);
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the store outlived its allocator"
    );
}
