//! The shape of an insert run that every engine with a server shares: commits of a fixed
//! number of rows, each timed, with an insert-rate curve over the run ([`one_writer`]); and
//! several writers released together, each on its own connection ([`many_writers`]). What an
//! engine does around the commits (its table, its statement, its counters) is its
//! [`ServerRun`].

use std::cell::RefCell;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use idkit_core::RawId;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::Label;
use crate::Error;

/// The table every insert run on a server writes, dropped before and after.
pub const TABLE: &str = "idkit_bench";

/// An engine's storage forms (`bigint_pk`, `uuid_pk`, ...) as the CSV files name them.
pub trait StorageName: Copy {
    /// The name used in the CSV files.
    fn name(self) -> &'static str;
    /// A scheme's own binary key for ids of `bits` bits.
    fn native(bits: u32) -> Self;
}

/// One point of an insert-rate curve (a row of `btree_<engine>_curve.csv`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurvePoint<S> {
    /// Registry name.
    pub scheme: Label,
    /// Storage form.
    pub storage: S,
    /// `small` or `large`.
    pub cache: Label,
    /// Rows in the table at the end of this stretch.
    pub rows_so_far: usize,
    /// Insert rate over this stretch, commits included.
    pub batch_rows_per_sec: f64,
    /// Rows per transaction.
    pub commit_rows: usize,
}

/// What every engine's insert run is: scheme, storage and cache (which name it), the cache's
/// size, rows per commit and the points of its insert-rate curve.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec<S> {
    /// Registry name.
    pub scheme: &'static str,
    /// Storage form.
    pub storage: S,
    /// `small` or `large`.
    pub cache: &'static str,
    /// The cache, KiB.
    pub cache_kib: i64,
    /// Rows per transaction.
    pub commit_rows: usize,
    /// Points on the curve.
    pub curve_points: usize,
}

/// What one writer's commits took.
#[derive(Debug)]
pub struct Commits<S> {
    /// Time spent in the commits (what runs between them excluded).
    pub busy: Duration,
    /// Transactions committed.
    pub commits: u64,
    /// The insert-rate curve.
    pub curve: Vec<CurvePoint<S>>,
}

/// Inserts `rows` rows in commits of `of.commit_rows`, `commit(range)` making each one (one
/// round trip), timed; `between(done, end)` runs after each commit, untimed (PostgreSQL's
/// checkpoints). A curve point closes each time the rows pass another
/// `rows / of.curve_points`.
///
/// # Errors
///
/// The first error of `commit` or `between`.
pub fn commit_loop<S: Copy>(
    rows: usize,
    of: &RunSpec<S>,
    mut commit: impl FnMut(Range<usize>) -> Result<(), Error>,
    mut between: impl FnMut(usize, usize) -> Result<(), Error>,
) -> Result<Commits<S>, Error> {
    let segment = rows.div_ceil(of.curve_points.max(1)).max(1);
    let mut out = Commits {
        busy: Duration::ZERO,
        commits: 0,
        curve: Vec::new(),
    };
    let mut segment_busy = Duration::ZERO;
    let (mut segment_rows, mut done) = (0, 0);
    while done < rows {
        let end = (done + of.commit_rows).min(rows);
        let t = Instant::now();
        commit(done..end)?;
        let took = t.elapsed();
        out.busy += took;
        segment_busy += took;
        out.commits += 1;
        segment_rows += end - done;
        // A segment ends where a multiple of `segment` was crossed.
        if end / segment > done / segment || end == rows {
            out.curve.push(CurvePoint {
                scheme: Label(of.scheme),
                storage: of.storage,
                cache: Label(of.cache),
                rows_so_far: end,
                batch_rows_per_sec: segment_rows as f64 / segment_busy.as_secs_f64(),
                commit_rows: of.commit_rows,
            });
            segment_busy = Duration::ZERO;
            segment_rows = 0;
        }
        between(done, end)?;
        done = end;
    }
    Ok(out)
}

/// How a run went: with [`Sizes`], what the figures of its record that every engine has come
/// from ([`super::Run::new`]).
#[derive(Debug, Clone, Copy)]
pub struct Ended<S> {
    /// The run.
    pub spec: RunSpec<S>,
    /// Writers.
    pub writers: usize,
    /// Each writer made its ids as it inserted (else one generator's, made before the run).
    pub live: bool,
    /// Rows inserted.
    pub rows: usize,
    /// Time of the inserts and commits.
    pub busy: Duration,
    /// Transactions committed.
    pub commits: u64,
    /// What the engine's step between commits counted ([`ServerRun::between`]).
    pub between: u64,
}

/// What a finished run's table and log measure, bytes but for the leaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sizes {
    /// The table with every index.
    pub file: u64,
    /// The table.
    pub table: u64,
    /// The id's index.
    pub index: u64,
    /// Leaf pages of the id's index.
    pub leaf_pages: u64,
    /// How full they are, 0 to 1.
    pub leaf_fill: f64,
    /// Log written during the run.
    pub wal: u64,
}

/// An engine's side of an insert run on a server, which [`one_writer`] and
/// [`many_writers`] drive the same way for every engine: the table a run creates, how one
/// batch of keys goes in, what runs between commits, and the counters read before and
/// after. Implemented by the engine's description of one run (its `Spec`). Each fallible
/// method's error is the engine's database error.
pub trait ServerRun: Copy + Send + 'static {
    /// A connection.
    type Conn: Send + 'static;
    /// A batch of keys, as the engine binds them.
    type Keys: Send + 'static;
    /// What a connection readies to insert batches (PostgreSQL: its prepared statement).
    type Prepared: Send + 'static;
    /// What the created table's figures are read from at the end.
    type Table;
    /// The engine's counters before the run.
    type Mark;
    /// The engine's storage forms.
    type Storage: Copy + Send + 'static;
    /// The run record.
    type Record;

    /// What every engine's run is.
    fn spec(&self) -> RunSpec<Self::Storage>;
    /// Rows in `keys`.
    fn rows(keys: &Self::Keys) -> usize;
    /// Creates the run's table for keys like `keys` and reads the counters before the run.
    fn create(
        &self,
        conn: &mut Self::Conn,
        keys: &Self::Keys,
    ) -> Result<(Self::Table, Self::Mark), Error>;
    /// Readies `conn` to insert batches like `keys`.
    fn prepare(conn: &mut Self::Conn, keys: &Self::Keys) -> Result<Self::Prepared, Error>;
    /// Inserts rows `range` of `keys`: one statement, one commit.
    fn insert(
        conn: &mut Self::Conn,
        prepared: &Self::Prepared,
        keys: &Self::Keys,
        range: Range<usize>,
    ) -> Result<(), Error>;
    /// After a commit that took the rows of every writer from `before` to `after` of
    /// `total`, untimed: what the engine does between commits (PostgreSQL: a `CHECKPOINT`
    /// on its schedule). Returns what it counts ([`Ended::between`]); nothing by default.
    fn between(
        &self,
        _conn: &mut Self::Conn,
        _before: usize,
        _after: usize,
        _total: usize,
    ) -> Result<u64, Error> {
        Ok(0)
    }
    /// A writer's last step after its commits, before the final counters are read on
    /// another connection; nothing by default.
    fn idle(_conn: &mut Self::Conn) -> Result<(), Error> {
        Ok(())
    }
    /// Reads the finished run's table and counters into its record, and drops the table.
    fn finish(
        &self,
        conn: &mut Self::Conn,
        table: &Self::Table,
        before: &Self::Mark,
        ended: &Ended<Self::Storage>,
    ) -> Result<Self::Record, Error>;
}

/// A one-writer run's record and its insert-rate curve.
pub type WithCurve<R> = (
    <R as ServerRun>::Record,
    Vec<CurvePoint<<R as ServerRun>::Storage>>,
);

/// One writer inserts `keys`, made before the run, in commits of the run's rows per commit,
/// each timed ([`commit_loop`]), on `conn`.
///
/// # Errors
///
/// The engine's database error.
pub fn one_writer<R: ServerRun>(
    run: R,
    conn: &mut R::Conn,
    keys: &R::Keys,
) -> Result<WithCurve<R>, Error> {
    let spec = run.spec();
    let (table, before) = run.create(conn, keys)?;
    let prepared = R::prepare(conn, keys)?;
    let rows = R::rows(keys);
    let mut between = 0;
    // Both closures use the connection, one after the other.
    let cell = RefCell::new(&mut *conn);
    let done = commit_loop(
        rows,
        &spec,
        |range| R::insert(&mut cell.borrow_mut(), &prepared, keys, range),
        |done, end| {
            between += run.between(&mut cell.borrow_mut(), done, end, rows)?;
            Ok(())
        },
    )?;
    let ended = Ended {
        spec,
        writers: 1,
        live: false,
        rows,
        busy: done.busy,
        commits: done.commits,
        between,
    };
    Ok((run.finish(conn, &table, &before, &ended)?, done.curve))
}

/// Makes a writer's next batch of `n` keys, at the moment of the insert.
pub type Producer<K> = Box<dyn FnMut(usize) -> Result<K, Error> + Send>;

/// Several writers at once, each with its own connection (from `connect`) and producer,
/// each inserting `rows_per_writer` rows in commits of the run's rows per commit; ids are
/// made just before each insert, so the writers' ids of the same millisecond arrive
/// interleaved. The table's column comes from a first batch of one key of the first
/// producer (not inserted). The time is the wall time from the writers' release to the
/// last one's end; each commit's [`ServerRun::between`] runs on the writer whose commit it
/// was, while the others keep writing.
///
/// # Errors
///
/// The engine's database error, a producer's error, or `setup(...)` without producers or
/// for a writer thread that panicked.
pub fn many_writers<R: ServerRun>(
    run: R,
    connect: impl Fn() -> Result<R::Conn, Error>,
    mut producers: Vec<Producer<R::Keys>>,
    rows_per_writer: usize,
    setup: fn(String) -> Error,
) -> Result<R::Record, Error> {
    let probe = producers
        .first_mut()
        .ok_or_else(|| setup("no writers".to_owned()))?(1)?;
    let commit_rows = run.spec().commit_rows;
    let mut control = connect()?;
    let (table, before) = run.create(&mut control, &probe)?;
    let (writers, total) = (producers.len(), rows_per_writer * producers.len());
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks: Vec<Task<(u64, u64)>> = Vec::new();
    for mut produce in producers {
        let mut conn = connect()?;
        let prepared = R::prepare(&mut conn, &probe)?;
        let done = done.clone();
        tasks.push(Box::new(move || {
            let (mut commits, mut between) = (0, 0);
            let mut left = rows_per_writer;
            while left > 0 {
                let n = left.min(commit_rows);
                R::insert(&mut conn, &prepared, &produce(n)?, 0..n)?;
                commits += 1;
                left -= n;
                let before = done.fetch_add(n, Ordering::Relaxed);
                between += run.between(&mut conn, before, before + n, total)?;
            }
            R::idle(&mut conn)?;
            Ok((commits, between))
        }));
    }
    let (busy, counts) = together(tasks, "writer thread", setup)?;
    let ended = Ended {
        spec: run.spec(),
        writers,
        live: true,
        rows: total,
        busy,
        commits: counts.iter().map(|c| c.0).sum(),
        between: counts.iter().map(|c| c.1).sum(),
    };
    run.finish(&mut control, &table, &before, &ended)
}

/// One-writer runs, each on the server whose connection its index names, their records and
/// curves appended to `out`; the bar names each run (`cache_word` after its cache) and
/// advances by one a run.
///
/// # Errors
///
/// The engine's database error, from the first run that fails.
pub fn one_writer_runs<R: ServerRun>(
    runs: impl IntoIterator<Item = (usize, R, R::Keys)>,
    connections: &mut [R::Conn],
    bar: &ProgressBar,
    cache_word: &str,
    out: (&mut Vec<R::Record>, &mut Vec<CurvePoint<R::Storage>>),
) -> Result<(), Error>
where
    R::Storage: StorageName,
{
    for (server, run, keys) in runs {
        let s = run.spec();
        let (scheme, storage, cache) = (s.scheme, s.storage.name(), s.cache);
        bar.set_message(format!("{scheme} {storage} {cache} {cache_word}"));
        let (record, curve) = one_writer(run, &mut connections[server], &keys)?;
        out.0.push(record);
        out.1.extend(curve);
        bar.inc(1);
    }
    Ok(())
}

/// Binds a batch of a scheme's ids (its name, its bits, the ids) as an engine's keys.
pub type KeysOf<R> = fn(&'static str, u32, &[RawId]) -> Result<<R as ServerRun>::Keys, Error>;

/// Keys as they arrive in production, the same runs in every server engine: each of
/// [`super::CONCURRENT`]'s schemes from one writer and from the profile's writers at once
/// ([`many_writers`] of [`super::producer`]s). `run` describes a scheme's run from its bits,
/// `keys` binds a batch of its ids, `connect` opens a writer's connection.
///
/// # Errors
///
/// The engine's database error, a scheme's error, or `setup(...)` as [`many_writers`] and
/// [`super::producer`] give it.
pub fn arrival_runs<R: ServerRun>(
    job: &super::Job<'_>,
    bar: &ProgressBar,
    run: impl Fn(&'static str, u32) -> R,
    keys: KeysOf<R>,
    connect: impl Fn() -> Result<R::Conn, Error>,
    setup: fn(String) -> Error,
) -> Result<Vec<R::Record>, Error> {
    let (rows, most) = (job.params.pg_rows, job.params.pg_writers);
    let mut records = Vec::new();
    for (&(scheme, bits), n) in super::CONCURRENT.iter().flat_map(|c| [(c, 1), (c, most)]) {
        bar.set_message(format!("{scheme}: {n} writers at once"));
        let producers = (0..n)
            .map(|w| {
                super::producer(job.entries, scheme, w as u64, setup, move |ids| {
                    keys(scheme, bits, ids)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        records.push(many_writers(
            run(scheme, bits),
            &connect,
            producers,
            rows / n,
            setup,
        )?);
        bar.inc(1);
    }
    Ok(records)
}

/// One thread's work, started when every thread is ready.
pub type Task<T> = Box<dyn FnOnce() -> Result<T, Error> + Send>;

/// Runs each task on a thread of its own, all released at once; the wall time from the
/// release to the last one's end, and what each returned, in order. A task that panics is
/// `setup("a <what> panicked")`, the engine's setup error.
///
/// # Errors
///
/// The first task's error (in order), or the panic above.
pub fn together<T: Send + 'static>(
    tasks: Vec<Task<T>>,
    what: &str,
    setup: fn(String) -> Error,
) -> Result<(Duration, Vec<T>), Error> {
    let barrier = Arc::new(Barrier::new(tasks.len() + 1));
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                task()
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let mut out = Vec::new();
    for h in handles {
        out.push(
            h.join()
                .map_err(|_| setup(format!("a {what} panicked")))??,
        );
    }
    Ok((start.elapsed(), out))
}

/// The insert-rate curves as CSV (`btree_curve.csv`, `btree_<engine>_curve.csv`), each row
/// opening with `engine` where one is given.
pub fn curve_csv<S: StorageName>(engine: Option<&str>, curve: &[CurvePoint<S>]) -> String {
    use std::fmt::Write as _;
    let (head, lead) = engine.map_or((String::new(), String::new()), |e| {
        ("engine,".to_owned(), format!("{e},"))
    });
    let mut csv =
        format!("{head}scheme,storage,cache,rows_so_far,batch_rows_per_sec,commit_rows\n");
    for c in curve {
        let _ = writeln!(
            csv,
            "{lead}{},{},{},{},{:.0},{}",
            c.scheme,
            c.storage.name(),
            c.cache,
            c.rows_so_far,
            c.batch_rows_per_sec,
            c.commit_rows
        );
    }
    csv
}

/// The runs as `btree_<engine>.csv`: one line per run, the cells in the order of `columns`
/// (the header). A figure every engine has is named by its field of [`super::Run`] (with
/// `engine`, `wal_bytes_per_1k_rows`), written here with its one precision; any other
/// column is the engine's own, from `own`.
///
/// # Panics
///
/// When a column is neither a shared figure nor one `own` knows: the columns are a
/// constant of the engine, and its unit test writes them.
pub fn runs_csv<S: StorageName, O>(
    engine: &str,
    columns: &str,
    runs: &[super::Run<S, O>],
    own: fn(&super::Run<S, O>, &str) -> Option<String>,
) -> String {
    let mut csv = format!("{columns}\n");
    for run in runs {
        let cells: Vec<String> = columns
            .split(',')
            .map(|column| {
                shared_cell(engine, run, column)
                    .or_else(|| own(run, column))
                    .unwrap_or_else(|| panic!("{engine}: no cell for column {column}"))
            })
            .collect();
        csv.push_str(&cells.join(","));
        csv.push('\n');
    }
    csv
}

/// A figure every engine's run has, formatted as the run CSV files write it.
fn shared_cell<S: StorageName, O>(
    engine: &str,
    run: &super::Run<S, O>,
    column: &str,
) -> Option<String> {
    Some(match column {
        "engine" => engine.to_owned(),
        "scheme" => run.scheme.to_string(),
        "storage" => run.storage.name().to_owned(),
        "cache" => run.cache.to_string(),
        "writers" => run.writers.to_string(),
        "ids_made" => run.ids_made.to_string(),
        "commit_rows" => run.commit_rows.to_string(),
        "rows" => run.rows.to_string(),
        "seconds" => format!("{:.4}", run.seconds),
        "rows_per_sec" => format!("{:.0}", run.rows_per_sec),
        "file_bytes" => run.file_bytes.to_string(),
        "bytes_per_row" => format!("{:.2}", run.bytes_per_row),
        "table_bytes" => run.table_bytes.to_string(),
        "index_bytes" => run.index_bytes.to_string(),
        "leaf_pages" => run.leaf_pages.to_string(),
        "leaf_fill" => format!("{:.4}", run.leaf_fill),
        "wal_bytes" => run.wal_bytes.to_string(),
        "wal_bytes_per_1k_rows" => format!("{:.0}", run.wal_per_1k()),
        "commits" => run.commits.to_string(),
        "cache_kib" => run.cache_kib.to_string(),
        "repeats" => run.repeats.max(1).to_string(),
        "rows_per_sec_min" => format!("{:.0}", run.rate_spread().0),
        "rows_per_sec_max" => format!("{:.0}", run.rate_spread().1),
        "leaf_fill_min" => format!("{:.4}", run.fill_spread().0),
        "leaf_fill_max" => format!("{:.4}", run.fill_spread().1),
        "file_bytes_min" => run.file_spread().0.to_string(),
        "file_bytes_max" => run.file_spread().1.to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pk;

    impl StorageName for Pk {
        fn name(self) -> &'static str {
            "pk"
        }
        fn native(_: u32) -> Self {
            Pk
        }
    }

    #[test]
    fn commits_cover_every_row_once_and_close_each_curve_segment() {
        let of = memory_run(3, 1).spec;
        let (mut committed, mut between) = (Vec::new(), Vec::new());
        let out = commit_loop(
            10,
            &of,
            |r| {
                committed.push(r);
                Ok(())
            },
            |a, b| {
                between.push((a, b));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(committed, vec![0..3, 3..6, 6..9, 9..10]);
        assert_eq!(between, vec![(0, 3), (3, 6), (6, 9), (9, 10)]);
        assert_eq!(out.commits, 4);
        let ends: Vec<usize> = out.curve.iter().map(|p| p.rows_so_far).collect();
        // Segments of 5 rows: crossed at 6 and at the end.
        assert_eq!(ends, vec![6, 10]);
    }

    /// A server in memory: one table of keys shared by every connection, and a log of what
    /// the driver asked of it.
    #[derive(Debug, Default)]
    struct Memory {
        table: Vec<u64>,
        created: usize,
        idle: usize,
    }

    type Shared = Arc<std::sync::Mutex<Memory>>;

    /// A run into [`Memory`] whose step between commits counts each crossing of `every`
    /// rows, as PostgreSQL's checkpoints do.
    #[derive(Debug, Clone, Copy)]
    struct MemoryRun {
        spec: RunSpec<Pk>,
        every: usize,
    }

    impl ServerRun for MemoryRun {
        type Conn = Shared;
        type Keys = Vec<u64>;
        type Prepared = ();
        type Table = ();
        type Mark = usize;
        type Storage = Pk;
        type Record = (Vec<u64>, usize, Ended<Pk>, usize);

        fn spec(&self) -> RunSpec<Pk> {
            self.spec
        }
        fn rows(keys: &Vec<u64>) -> usize {
            keys.len()
        }
        fn create(&self, conn: &mut Shared, _: &Vec<u64>) -> Result<((), usize), Error> {
            let mut server = conn.lock().unwrap();
            server.created += 1;
            Ok(((), server.table.len()))
        }
        fn prepare(_: &mut Shared, _: &Vec<u64>) -> Result<(), Error> {
            Ok(())
        }
        fn insert(
            conn: &mut Shared,
            (): &(),
            keys: &Vec<u64>,
            range: Range<usize>,
        ) -> Result<(), Error> {
            conn.lock().unwrap().table.extend_from_slice(&keys[range]);
            Ok(())
        }
        fn between(
            &self,
            _: &mut Shared,
            before: usize,
            after: usize,
            total: usize,
        ) -> Result<u64, Error> {
            Ok(u64::from(
                after / self.every > before / self.every && after < total,
            ))
        }
        fn idle(conn: &mut Shared) -> Result<(), Error> {
            conn.lock().unwrap().idle += 1;
            Ok(())
        }
        fn finish(
            &self,
            conn: &mut Shared,
            (): &(),
            before: &usize,
            ended: &Ended<Pk>,
        ) -> Result<Self::Record, Error> {
            let server = conn.lock().unwrap();
            Ok((server.table.clone(), *before, *ended, server.idle))
        }
    }

    fn memory_run(commit_rows: usize, every: usize) -> MemoryRun {
        MemoryRun {
            spec: RunSpec {
                scheme: "s",
                storage: Pk,
                cache: "small",
                cache_kib: 8,
                commit_rows,
                curve_points: 2,
            },
            every,
        }
    }

    #[test]
    fn one_writer_inserts_its_keys_in_order_with_the_engines_step_between_commits() {
        let mut conn = Shared::default();
        let keys: Vec<u64> = (100..110).collect();
        let ((table, before, ended, idle), curve) =
            one_writer(memory_run(3, 4), &mut conn, &keys).unwrap();
        assert_eq!(table, keys);
        assert_eq!(before, 0);
        assert_eq!((ended.writers, ended.live, ended.rows), (1, false, 10));
        assert_eq!(ended.commits, 4);
        // Crossings of 4 and 8 rows before the last commit: at 6 and at 9.
        assert_eq!(ended.between, 2);
        assert_eq!(idle, 0);
        assert_eq!(curve.last().map(|p| p.rows_so_far), Some(10));
    }

    #[test]
    fn one_writer_runs_go_to_the_server_their_index_names_and_append_in_order() {
        let mut servers = vec![Shared::default(), Shared::default()];
        let runs = vec![
            (1, memory_run(2, 100), vec![1, 2, 3]),
            (0, memory_run(2, 100), vec![4, 5]),
            (1, memory_run(2, 100), vec![6]),
        ];
        let (mut records, mut curve) = (Vec::new(), Vec::new());
        let out = (&mut records, &mut curve);
        one_writer_runs(runs, &mut servers, &ProgressBar::hidden(), "cache", out).unwrap();
        // Each record holds its server's table as the run finished: the memory server keeps
        // its rows, so the third run finds the first run's keys before its own.
        let tables: Vec<&Vec<u64>> = records.iter().map(|r| &r.0).collect();
        assert_eq!(tables, [&vec![1, 2, 3], &vec![4, 5], &vec![1, 2, 3, 6]]);
        let created: Vec<usize> = servers.iter().map(|s| s.lock().unwrap().created).collect();
        assert_eq!(created, [1, 2]);
        // The curves one after another, each closing at its own run's rows.
        let ends: Vec<usize> = curve.iter().map(|p| p.rows_so_far).collect();
        assert_eq!(ends, [2, 3, 2, 1]);
    }

    #[test]
    fn many_writers_insert_every_producers_keys_once_and_the_probe_not_at_all() {
        let conn = Shared::default();
        let writers = 4;
        let producers: Vec<Producer<Vec<u64>>> = (0..writers)
            .map(|w: u64| {
                let mut next = w * 1_000_000;
                Box::new(move |n: usize| {
                    let keys: Vec<u64> = (next..next + n as u64).collect();
                    next += n as u64;
                    Ok(keys)
                }) as Producer<Vec<u64>>
            })
            .collect();
        let (mut table, before, ended, idle) = many_writers(
            memory_run(7, 50),
            || Ok(conn.clone()),
            producers,
            100,
            Error::PgSetup,
        )
        .unwrap();
        assert_eq!(before, 0);
        assert_eq!(conn.lock().unwrap().created, 1);
        assert_eq!((ended.writers, ended.live, ended.rows), (4, true, 400));
        // 100 rows in commits of 7: 15 per writer.
        assert_eq!(ended.commits, 60);
        // Crossings of 50 rows among 400, the last one excluded: 7 of them, whatever the
        // writers' interleaving.
        assert_eq!(ended.between, 7);
        assert_eq!(idle, 4);
        table.sort_unstable();
        // The first producer's first key went to the probe, not into the table.
        let mut expected: Vec<u64> = (0..writers)
            .flat_map(|w| {
                let skip = u64::from(w == 0);
                (w * 1_000_000 + skip..w * 1_000_000 + 100 + skip).collect::<Vec<_>>()
            })
            .collect();
        expected.sort_unstable();
        assert_eq!(table, expected);
    }

    #[test]
    fn many_writers_without_producers_is_a_setup_error() {
        let e = many_writers(
            memory_run(7, 50),
            || Ok(Shared::default()),
            Vec::new(),
            100,
            Error::PgSetup,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no writers"), "{e}");
    }

    #[test]
    fn tasks_run_together_and_report_in_order() {
        let tasks: Vec<Task<usize>> = (0..3_usize)
            .map(|i| Box::new(move || Ok(i * 2)) as Task<usize>)
            .collect();
        let (_, out) = together(tasks, "task", Error::PgSetup).unwrap();
        assert_eq!(out, vec![0, 2, 4]);
        let failing: Vec<Task<()>> = vec![Box::new(|| Err(Error::PgSetup("no".into())))];
        assert!(together(failing, "task", Error::PgSetup).is_err());
    }
}
