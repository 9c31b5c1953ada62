//! B-tree insert cost in SQLite: every scheme's ids, generated before timing starts, are
//! inserted into a fresh database file in each storage form, commit size and page-cache
//! size; the run records the insert rate as the table grows and the tree it left behind.

mod report;

use std::path::{Path, PathBuf};
use std::time::Instant;

use idkit_all::registry::Entry;
use idkit_core::RawId;
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::engine::insert::{Ended, RunSpec, Sizes, StorageName};
use crate::engine::{BarPair, BarPanel, ByUrl, Charts, Engine, Job, Label, Run, Server};
use crate::{Error, Params, Progress};

/// How the id is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// A 64-bit id as `INTEGER PRIMARY KEY` (the rowid itself).
    IntegerPk,
    /// A wider id's bytes as `BLOB PRIMARY KEY` in a `WITHOUT ROWID` table.
    BlobPk,
    /// The id (integer or blob) in a `UNIQUE` index beside a rowid table.
    UniqueIndex,
    /// The canonical string as `TEXT PRIMARY KEY` in a `WITHOUT ROWID` table.
    TextPk,
}

impl StorageName for Storage {
    fn name(self) -> &'static str {
        match self {
            Self::IntegerPk => "integer_pk",
            Self::BlobPk => "blob_pk",
            Self::UniqueIndex => "unique_index",
            Self::TextPk => "text_pk",
        }
    }

    /// `INTEGER PRIMARY KEY` up to 64 bits, else `BLOB PRIMARY KEY`.
    fn native(bits: u32) -> Self {
        if bits <= 64 {
            Self::IntegerPk
        } else {
            Self::BlobPk
        }
    }
}

impl Storage {
    fn schema(self, wide: bool) -> String {
        let id_type = if wide { "BLOB" } else { "INTEGER" };
        match self {
            Self::IntegerPk => "CREATE TABLE t(id INTEGER PRIMARY KEY)".to_owned(),
            Self::BlobPk => "CREATE TABLE t(id BLOB PRIMARY KEY) WITHOUT ROWID".to_owned(),
            Self::UniqueIndex => format!(
                "CREATE TABLE t(n INTEGER PRIMARY KEY, id {id_type} NOT NULL);\
                 CREATE UNIQUE INDEX t_id ON t(id)"
            ),
            Self::TextPk => "CREATE TABLE t(id TEXT PRIMARY KEY) WITHOUT ROWID".to_owned(),
        }
    }

    /// The b-tree whose shape the id order decides.
    fn key_tree(self) -> &'static str {
        match self {
            Self::UniqueIndex => "t_id",
            _ => "t",
        }
    }
}

/// One insert run (a row of `btree.csv`): one writer, with ids made before the run.
pub type BtreeRun = Run<Storage, SqliteCounters>;

/// SQLite's own counters of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SqliteCounters {
    /// Levels of the key b-tree (1: the root is a leaf).
    pub depth: u64,
    /// Pages written out of the page cache (`SQLITE_DBSTATUS_CACHE_WRITE`).
    pub pages_written: u64,
    /// Page-cache misses (`SQLITE_DBSTATUS_CACHE_MISS`).
    pub cache_misses: u64,
    /// Pages the database grew by.
    pub pages_allocated: u64,
}

impl BtreeRun {
    /// Pages written per committed transaction.
    pub fn pages_per_commit(&self) -> f64 {
        self.own.pages_written as f64 / self.commits.max(1) as f64
    }
}

/// The columns of `btree.csv` (no engine column: SQLite's file came first): the shared
/// figures of [`Run`] and SQLite's counters ([`own_cell`]). `wal_bytes` is pages written x
/// (page size + 24-byte frame header).
pub const RUN_COLUMNS: &str = "scheme,storage,cache,commit_rows,rows,seconds,rows_per_sec,\
    file_bytes,bytes_per_row,leaf_pages,leaf_fill,depth,pages_written,cache_misses,\
    pages_allocated,wal_bytes,commits,cache_kib,repeats,rows_per_sec_min,rows_per_sec_max,\
    leaf_fill_min,leaf_fill_max,file_bytes_min,file_bytes_max";

/// The cell of one of SQLite's own columns of `btree.csv`.
pub fn own_cell(run: &BtreeRun, column: &str) -> Option<String> {
    let own = &run.own;
    Some(match column {
        "depth" => own.depth.to_string(),
        "pages_written" => own.pages_written.to_string(),
        "cache_misses" => own.cache_misses.to_string(),
        "pages_allocated" => own.pages_allocated.to_string(),
        _ => return None,
    })
}

/// One point of an insert-rate curve (a row of `btree_curve.csv`).
pub type CurvePoint = crate::engine::insert::CurvePoint<Storage>;

/// Everything the insert runs measured (always by this run): SQLite has nothing of its own
/// beside its runs.
pub type Btree = crate::engine::Results<Storage, SqliteCounters, ()>;

impl Btree {
    /// The run of this scheme, storage, cache and commit size.
    pub fn find(
        &self,
        scheme: &str,
        storage: Storage,
        cache: &str,
        commit_rows: usize,
    ) -> Option<&BtreeRun> {
        self.runs.iter().find(|r| {
            r.scheme == scheme
                && r.storage == storage
                && r.cache == cache
                && r.commit_rows == commit_rows
        })
    }

    /// Every scheme's run under its own key with `cache` and `commit_rows` rows per
    /// commit, in registry order.
    pub fn native_runs(&self, cache: &str, commit_rows: usize) -> Vec<&BtreeRun> {
        idkit_all::registry::schemes()
            .iter()
            .filter_map(|e| self.find(e.name(), Storage::native(e.info().bits), cache, commit_rows))
            .collect()
    }
}

/// SQLite as an engine of the report: in process (rusqlite's bundled build), measured by
/// every run, with the profile's small and large page caches as its two servers.
#[derive(Debug)]
pub struct Sqlite;

impl Engine for Sqlite {
    const NAME: &'static str = "sqlite";
    const BY_URL: Option<ByUrl<Self>> = None;
    const RUNS_FILE: &'static str = "btree";
    type ServerOwn = ();
    type Results = Btree;

    const CHARTS: Charts<BtreeRun> = Charts {
        curve_stem: "btree_insert_curve",
        curve_title: |commit_rows, kib| {
            format!(
                "SQLite insert rate as the table grows: key b-tree, {commit_rows} rows per \
                 commit, {kib} KiB page cache"
            )
        },
        curve_panel: "insert rate as the table grows (small page cache)",
        first: BarPair {
            stem: "btree_size_fill",
            title: |_| "Database bytes per row and leaf-page fill of the key b-tree".to_owned(),
            panels: [
                BarPanel::linear("file bytes per row", "bytes per row", |b| b.bytes_per_row),
                BarPanel::percent("leaf page fill", "used fraction of leaf pages", |b| {
                    b.leaf_fill
                }),
            ],
        },
        second: BarPair {
            stem: "btree_pages_per_commit",
            title: |commit_rows| {
                format!(
                    "Pages written per commit of {commit_rows} rows, small and large page cache"
                )
            },
            panels: [
                BarPanel::log(
                    "pages written per commit, small cache",
                    "pages (log scale)",
                    BtreeRun::pages_per_commit,
                ),
                BarPanel::log(
                    "pages written per commit, large cache",
                    "pages (log scale)",
                    BtreeRun::pages_per_commit,
                )
                .large(),
            ],
        },
    };

    const RUN_COLUMNS: &'static str = RUN_COLUMNS;

    fn own_cell(run: &BtreeRun, column: &str) -> Option<String> {
        own_cell(run, column)
    }

    fn more_files(_: &Btree) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The profile's two page caches (SQLite takes no URL: the run refuses servers given
    /// for it before this is asked).
    fn servers(_: &[String], params: &Params) -> Result<Vec<Server<Self>>, Error> {
        let cache = |name, kib| Server {
            cache: name,
            ..Server::new("", kib, Self::TITLE, rusqlite::version().to_owned(), ())
        };
        Ok(vec![
            cache("small", params.small_cache_kib),
            cache("large", params.large_cache_kib),
        ])
    }

    const TITLE: &'static str = "SQLite";
    const CACHE_SETTING: &'static str = "cache_size";

    fn settings(_: &Server<Self>) -> Result<Vec<String>, Error> {
        Ok(pragmas())
    }

    /// Every scheme's insert runs ([`measure`]); the page caches are the profile's, as
    /// [`Engine::servers`] gave them.
    ///
    /// # Errors
    ///
    /// Those of [`measure`].
    fn measure(job: &Job<'_>, _: &Server<Self>, _: &[Server<Self>]) -> Result<Btree, Error> {
        measure(job.entries, job.params, job.out, job.progress)
    }
}

/// Page size of every database.
pub const PAGE_SIZE: u64 = 4096;

fn pragmas() -> Vec<String> {
    vec![
        format!("PRAGMA page_size = {PAGE_SIZE}"),
        "PRAGMA journal_mode = WAL".to_owned(),
        "PRAGMA synchronous = NORMAL".to_owned(),
        "PRAGMA wal_autocheckpoint = 1000".to_owned(),
    ]
}

enum Keys {
    Int(Vec<i64>),
    Blob(Vec<RawId>),
    Text(Vec<String>),
}

/// Runs the insert matrix for every entry; databases live in a scratch directory under
/// `out` that is removed at the end.
///
/// # Errors
///
/// [`Error::Sqlite`], [`Error::Io`], or a scheme's error while generating the ids.
pub fn measure(
    entries: &[&Entry],
    params: &Params,
    out: &Path,
    progress: &Progress,
) -> Result<Btree, Error> {
    let work = out.join(format!(".btree-work-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(Error::io(&work))?;
    let result = measure_in(entries, params, &work, progress);
    // The scratch files are large; remove them whatever happened.
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn measure_in(
    entries: &[&Entry],
    params: &Params,
    work: &Path,
    progress: &Progress,
) -> Result<Btree, Error> {
    let runs_per_scheme = 6;
    let repeats = params.repeats.max(1);
    let bar = progress.bar("sqlite", entries.len() * runs_per_scheme * repeats);
    // Every repetition's runs, keyed by the scheme's place in the registry and the run's in
    // its matrix: each repetition takes the schemes in an order of its own, drawn from the
    // seed, so that no scheme always runs after the same one (or first, on a cold disk).
    let mut made: Vec<((usize, usize), BtreeRun, Vec<CurvePoint>)> = Vec::new();
    for repeat in 0..repeats {
        let mut order: Vec<(usize, &&Entry)> = entries.iter().enumerate().collect();
        crate::engine::seeded_order(&mut order, params.order_seed ^ repeat as u64);
        for (place, entry) in order {
            for (i, (run, curve)) in scheme_runs(*entry, params, work, &bar, (repeat, repeats))?
                .into_iter()
                .enumerate()
            {
                made.push(((place, i), run, curve));
            }
        }
    }
    // One run per configuration: the repetition of median rate, with the spreads.
    made.sort_by_key(|(key, ..)| *key);
    let mut out = Btree::default();
    let mut made = made.into_iter().peekable();
    while let Some((key, run, curve)) = made.next() {
        let (mut runs, mut curves) = (vec![run], vec![curve]);
        while let Some((_, run, curve)) = made.next_if(|(k, ..)| *k == key) {
            runs.push(run);
            curves.push(curve);
        }
        if let Some((middle, run)) = crate::engine::median_run(runs) {
            out.runs.push(run);
            out.curve.extend(curves.swap_remove(middle));
        }
    }
    let slowest = out
        .runs
        .iter()
        .min_by(|a, b| a.rows_per_sec.total_cmp(&b.rows_per_sec));
    progress.done(
        &bar,
        &format!(
            "sqlite: {} insert runs of {} rows{}",
            out.runs.len(),
            params.btree_rows,
            slowest.map_or_else(String::new, |r| format!(
                "; slowest {} {} {} cache at {:.0} rows/s",
                r.scheme,
                r.storage.name(),
                r.cache,
                r.rows_per_sec
            ))
        ),
    );
    Ok(out)
}

/// One scheme's six runs (its own key with both caches, in commits of the profile's size
/// and in one transaction; the unique index; the text key), in that order, for repetition
/// `repeat` of `repeats`.
fn scheme_runs(
    entry: &Entry,
    params: &Params,
    work: &Path,
    bar: &indicatif::ProgressBar,
    (repeat, repeats): (usize, usize),
) -> Result<Vec<(BtreeRun, Vec<CurvePoint>)>, Error> {
    let of = if repeats > 1 {
        format!(" (repetition {} of {repeats})", repeat + 1)
    } else {
        String::new()
    };
    bar.set_message(format!("{}: generating ids{of}", entry.name()));
    let (scheme, ids) = crate::engine::made_before(entry, params.btree_rows)?;
    let wide = entry.info().bits > 64;
    let native = Storage::native(entry.info().bits);
    let key_form = if wide {
        Keys::Blob(ids.clone())
    } else {
        Keys::Int(crate::engine::signed_keys(entry.name(), &ids)?)
    };
    let text = Keys::Text(
        ids.iter()
            .map(|id| scheme.format_raw(id).map_err(Error::format(entry.name())))
            .collect::<Result<_, _>>()?,
    );
    drop(ids);
    let mut matrix = Vec::new();
    for commit in [params.commit_rows, params.btree_rows] {
        for cache in ["small", "large"] {
            matrix.push((native, &key_form, cache, commit));
        }
    }
    matrix.push((Storage::UniqueIndex, &key_form, "small", params.commit_rows));
    matrix.push((Storage::TextPk, &text, "small", params.commit_rows));
    let mut runs = Vec::new();
    for (storage, keys, cache, commit) in matrix {
        bar.set_message(format!(
            "{} {} {cache} cache, {commit} rows/commit{of}",
            entry.name(),
            storage.name()
        ));
        let cache_kib = if cache == "small" {
            params.small_cache_kib
        } else {
            params.large_cache_kib
        };
        let spec = RunSpec {
            scheme: entry.name(),
            storage,
            cache,
            cache_kib,
            commit_rows: commit,
            curve_points: params.curve_points,
        };
        let path = work.join(format!(
            "{}-{}-{cache}-{commit}.db",
            entry.name(),
            storage.name()
        ));
        let (run, curve) = insert_run(&spec, wide, keys, &path)?;
        remove_db(&path);
        runs.push((run, curve));
        bar.inc(1);
    }
    Ok(runs)
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// One run into a fresh database at `path`; `wide`: the ids are wider than 64 bits.
fn insert_run(
    spec: &RunSpec<Storage>,
    wide: bool,
    keys: &Keys,
    path: &PathBuf,
) -> Result<(BtreeRun, Vec<CurvePoint>), Error> {
    remove_db(path);
    let conn = Connection::open(path)?;
    for pragma in pragmas() {
        // journal_mode answers with a row; the others with none.
        conn.query_row(&pragma, [], |_| Ok(()))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(()),
                e => Err(e),
            })?;
    }
    conn.execute_batch(&format!("PRAGMA cache_size = -{}", spec.cache_kib))?;
    conn.execute_batch(&spec.storage.schema(wide))?;
    let pages_before = count(conn.query_row("PRAGMA page_count", [], |r| r.get(0))?);
    let baseline_writes = db_status(&conn, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_WRITE)?;
    let baseline_misses = db_status(&conn, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_MISS)?;

    let rows = match keys {
        Keys::Int(v) => v.len(),
        Keys::Blob(v) => v.len(),
        Keys::Text(v) => v.len(),
    };
    let segment = rows.div_ceil(spec.curve_points.max(1)).max(1);
    let mut stmt = conn.prepare("INSERT INTO t(id) VALUES (?1)")?;
    let mut curve = Vec::new();
    let mut commits = 0u64;
    let start = Instant::now();
    let mut segment_start = start;
    let mut segment_rows = 0usize;
    for i in 0..rows {
        if i % spec.commit_rows == 0 {
            conn.execute_batch("BEGIN")?;
        }
        match keys {
            Keys::Int(v) => stmt.execute(params![v[i]])?,
            Keys::Blob(v) => stmt.execute(params![v[i].as_bytes()])?,
            Keys::Text(v) => stmt.execute(params![v[i]])?,
        };
        let done = i + 1;
        if done % spec.commit_rows == 0 || done == rows {
            conn.execute_batch("COMMIT")?;
            commits += 1;
        }
        segment_rows += 1;
        if done % segment == 0 || done == rows {
            let now = Instant::now();
            curve.push(CurvePoint {
                scheme: Label(spec.scheme),
                storage: spec.storage,
                cache: Label(spec.cache),
                rows_so_far: done,
                batch_rows_per_sec: segment_rows as f64 / (now - segment_start).as_secs_f64(),
                commit_rows: spec.commit_rows,
            });
            segment_start = now;
            segment_rows = 0;
        }
    }
    let busy = start.elapsed();
    drop(stmt);
    let pages_written =
        db_status(&conn, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_WRITE)? - baseline_writes;
    let cache_misses =
        db_status(&conn, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_MISS)? - baseline_misses;

    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let pages_after = count(conn.query_row("PRAGMA page_count", [], |r| r.get(0))?);
    let tree = spec.storage.key_tree();
    let (leaf_pages, leaf_bytes, leaf_unused) = conn.query_row(
        "SELECT count(*), coalesce(sum(pgsize), 0), coalesce(sum(unused), 0) \
         FROM dbstat WHERE name = ?1 AND pagetype = 'leaf'",
        [tree],
        |r| Ok((count(r.get(0)?), count(r.get(1)?), count(r.get(2)?))),
    )?;
    let depth = conn.query_row(
        "SELECT coalesce(max(length(path) - length(replace(path, '/', ''))), 0) \
         FROM dbstat WHERE name = ?1",
        [tree],
        |r| r.get(0).map(count),
    )?;
    let tree_bytes = |name: &str| {
        conn.query_row(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?1",
            [name],
            |r| r.get(0).map(count),
        )
    };
    // The table's b-tree is the id's own when the id is the key (as InnoDB's clustered
    // index), so the two sizes are then the same.
    let (table_bytes, index_bytes) = (tree_bytes("t")?, tree_bytes(tree)?);
    drop(conn);
    let file_bytes = std::fs::metadata(path).map_err(Error::io(path))?.len();
    let pages_written = u64::try_from(pages_written).unwrap_or(0);
    let ended = Ended {
        spec: RunSpec {
            commit_rows: spec.commit_rows.min(rows),
            ..*spec
        },
        writers: 1,
        live: false,
        rows,
        busy,
        commits,
        between: 0,
    };
    let sizes = Sizes {
        file: file_bytes,
        table: table_bytes,
        index: index_bytes,
        leaf_pages,
        leaf_fill: if leaf_bytes == 0 {
            0.0
        } else {
            1.0 - leaf_unused as f64 / leaf_bytes as f64
        },
        wal: pages_written * (PAGE_SIZE + 24),
    };
    let own = SqliteCounters {
        depth,
        pages_written,
        cache_misses: u64::try_from(cache_misses).unwrap_or(0),
        pages_allocated: pages_after.saturating_sub(pages_before),
    };
    Ok((BtreeRun::new(&ended, sizes, own), curve))
}

/// A count SQLite returns as a signed integer (never negative here).
fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// One `sqlite3_db_status` counter's current value since the connection opened.
#[allow(unsafe_code)]
fn db_status(conn: &Connection, op: std::os::raw::c_int) -> Result<i64, Error> {
    let (mut current, mut high) = (0, 0);
    // SAFETY: `conn.handle()` is the live database handle of `conn`, which outlives this
    // call; sqlite3_db_status reads the connection's counters into the two integers and
    // keeps no pointer to them. No other thread uses `conn` (it is not `Sync`).
    let rc =
        unsafe { rusqlite::ffi::sqlite3_db_status(conn.handle(), op, &mut current, &mut high, 0) };
    if rc == rusqlite::ffi::SQLITE_OK {
        Ok(i64::from(current))
    } else {
        Err(Error::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rc),
            Some(format!("sqlite3_db_status({op})")),
        )))
    }
}
