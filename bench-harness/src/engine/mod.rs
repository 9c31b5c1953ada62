//! What the database engines of the report share, written once and owned by none of them.
//!
//! Each engine ([`crate::engines::sqlite`], [`crate::engines::postgres`],
//! [`crate::engines::mysql`]) implements
//! [`Engine`]: where its servers come from (given by URL and checked, or, for SQLite, in
//! process with the profile's two page caches), how its runs are made, and what its own
//! counters and files are. Everything here is the same for each: one server record
//! ([`Server`]), one or two servers named small and large ([`servers`]), the run record
//! ([`Run`], [`Run::new`]) and its files ([`files`]), the writers' ids ([`producer`]), the
//! insert runs on a server, one writer and several, over the engine's
//! [`insert::ServerRun`] ([`insert`]), the client threads of the round trips and their
//! duplicate count ([`roundtrip`]), the tables with more than a key and their timed query
//! ([`shape`]), and the results kept in `data/<engine>.json` so that a run without a server
//! carries them forward (`results`).
//!
//! What an engine's part of the report is, and what the engines' sections share, is here
//! too (`report`): an engine fills in the interface's types and names no other module of
//! the report. This module imports no engine and nothing of the report's writers.
//!
//! Adding an engine is one module under `engines/` that implements [`Engine`] and
//! `report::Report`, plus one line in `engines::ENGINES`, the list from which the run,
//! the data files, the charts and the report take them.

pub mod insert;
pub(crate) mod report;
pub mod roundtrip;
pub mod shape;

use std::any::Any;
use std::fmt;
use std::path::Path;

use idkit_all::registry::Entry;
use idkit_core::RawId;
use idkit_core::definition::Scheme;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::{Error, Params, Progress};

/// A database engine the report measures: SQLite in process, PostgreSQL and InnoDB on
/// servers given by URL.
pub trait Engine: Sized {
    /// Its name in file names, progress lines, `data/<NAME>.json`, the key of its servers in
    /// [`crate::Config::servers`] and the `report` binary's `--<NAME>-url` option:
    /// `sqlite`, `postgres`, `mysql`.
    const NAME: &'static str;
    /// How its servers are given: by URL ([`ByUrl`]; without one, the engine's figures kept
    /// in `data/<NAME>.json` are carried forward), or `None` for an engine in process,
    /// measured by every run.
    const BY_URL: Option<ByUrl<Self>>;
    /// The stem of its runs' file (`btree_<NAME>`; SQLite's, the first, is `btree`), and of
    /// its curve's (`<stem>_curve`).
    const RUNS_FILE: &'static str;
    /// What one of its servers has beside what every engine's [`Server`] has (InnoDB: its
    /// page size; PostgreSQL and SQLite: nothing).
    type ServerOwn: fmt::Debug + 'static;
    /// Everything measured in the engine (kept as `data/<NAME>.json` when [`Self::BY_URL`]).
    type Results: InsertResults
        + Clone
        + Default
        + fmt::Debug
        + Serialize
        + DeserializeOwned
        + 'static;

    /// The engine's charts.
    const CHARTS: Charts<RunOf<Self::Results>>;

    /// The header of its runs' file: the shared figures by their names in [`Run`]
    /// ([`insert::runs_csv`]) and the engine's own columns, in the file's order. With an
    /// `engine` column first, its curve's file has one too.
    const RUN_COLUMNS: &'static str;

    /// The cell of one of the engine's own columns of `btree_<NAME>.csv` (`None` for a
    /// column it does not have).
    fn own_cell(run: &RunOf<Self::Results>, column: &str) -> Option<String>;

    /// The engine's data files other than its runs, their curve and `<NAME>.json` (its
    /// round trips, its index shapes), as file name and contents.
    fn more_files(results: &Self::Results) -> Vec<(&'static str, String)>;

    /// Its servers, named `small` and `large` by their caches: those at `urls`, each
    /// checked for what the runs need by [`ByUrl::check`] ([`servers`]; none for an engine
    /// without [`Self::BY_URL`]), or, in process, one per cache size of `params` (SQLite,
    /// which takes no URL, implements this itself).
    ///
    /// # Errors
    ///
    /// The engine's own error for an unreachable or unsuitable server.
    fn servers(urls: &[String], _params: &Params) -> Result<Vec<Server<Self>>, Error> {
        match Self::BY_URL {
            Some(by_url) => servers(urls, by_url.check, by_url.setup),
            None => Ok(Vec::new()),
        }
    }

    /// The engine's name in messages (`SQLite`, `PostgreSQL`, `MySQL`).
    const TITLE: &'static str;

    /// The setting that sizes a server's cache, as messages and the report name it.
    const CACHE_SETTING: &'static str;

    /// The settings that shape the runs, as the report lists them (PostgreSQL's and
    /// InnoDB's as `name = value`, SQLite's pragmas), read from `small` before the runs.
    ///
    /// # Errors
    ///
    /// The engine's error.
    fn settings(small: &Server<Self>) -> Result<Vec<String>, Error>;

    /// Every run of the engine on `servers`, one or two, of which `small` is the first
    /// (the small cache; with one server it takes every run).
    ///
    /// # Errors
    ///
    /// The engine's error, or a scheme's error while generating ids.
    fn measure(
        job: &Job<'_>,
        small: &Server<Self>,
        servers: &[Server<Self>],
    ) -> Result<Self::Results, Error>;
}

/// How an engine's servers are given to the run: by URL, each checked.
#[derive(Debug)]
pub struct ByUrl<E: Engine> {
    /// The `scripts/report.sh` flag that starts throwaway servers and measures it.
    pub flag: &'static str,
    /// What that flag starts ("two throwaway servers"), for the report without its runs.
    pub throwaway: &'static str,
    /// The help of the `report` binary's `--<NAME>-url` option: what server it takes (the
    /// help goes on to say what `flag` starts).
    pub url_help: &'static str,
    /// Connects to a URL and checks that the server is fit for the runs.
    pub check: fn(&str) -> Result<Server<E>, Error>,
    /// The engine's error for servers not fit for the runs (more than two, or two with the
    /// same cache).
    pub setup: fn(String) -> Error,
}

/// One server of engine `E` to measure on: what every engine's server has, and the engine's
/// own facts about it (`own`).
#[derive(Debug)]
pub struct Server<E: Engine> {
    /// Its connection string (a URL; PostgreSQL also takes the `key=value` form; empty in
    /// process).
    pub url: String,
    /// `small` or `large`, from its cache among the servers given ([`servers`]).
    pub cache: &'static str,
    /// Its cache ([`Engine::CACHE_SETTING`]), KiB.
    pub cache_kib: i64,
    /// The product, as the report prints it (`SQLite`, `PostgreSQL`, `MySQL`, `MariaDB`).
    pub product: &'static str,
    /// The server's version.
    pub version: String,
    /// The engine's own facts.
    pub own: E::ServerOwn,
}

impl<E: Engine> Server<E> {
    /// A server not yet named by its cache (`small` until [`servers`] names it).
    pub fn new(
        url: &str,
        cache_kib: i64,
        product: &'static str,
        version: String,
        own: E::ServerOwn,
    ) -> Self {
        Self {
            url: url.to_owned(),
            cache: "small",
            cache_kib,
            product,
            version,
            own,
        }
    }

    /// A run of `scheme` in `storage` on this server, with the profile's rows per commit
    /// and curve points.
    pub fn run<S>(&self, scheme: &'static str, storage: S, params: &Params) -> insert::RunSpec<S> {
        insert::RunSpec {
            scheme,
            storage,
            cache: self.cache,
            cache_kib: self.cache_kib,
            commit_rows: params.commit_rows,
            curve_points: params.curve_points,
        }
    }

    /// `small` or `large`, and the server, as the report prints it.
    pub fn describe(&self) -> String {
        format!(
            "{}: {} {}, {} {} MiB",
            self.cache,
            self.product,
            self.version,
            E::CACHE_SETTING,
            self.cache_kib / 1024
        )
    }
}

/// One insert run in any engine (a row of `btree.csv`, `btree_<engine>.csv`): the figures
/// every engine measures, in the same columns, and the engine's own counters (`own`:
/// SQLite's page-cache counters, PostgreSQL's split records and full-page images, InnoDB's
/// splits, merges and pages written), flattened into the same record of the kept file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run<S, O> {
    /// Registry name (or a variant such as `uuid-v7-random`, or `AUTO_INCREMENT`).
    pub scheme: Label,
    /// Storage form.
    pub storage: S,
    /// `small` or `large` cache.
    pub cache: Label,
    /// Concurrent writers, each with its own connection and generator (SQLite: one).
    pub writers: usize,
    /// `before`: one generator's ids, made before timing starts, inserted in order;
    /// `during`: each writer makes its ids just before inserting them (SQLite: `before`).
    pub ids_made: Label,
    /// Rows per transaction.
    pub commit_rows: usize,
    /// Rows inserted.
    pub rows: usize,
    /// Wall time of all inserts and commits (PostgreSQL's checkpoints excluded).
    pub seconds: f64,
    /// `rows / seconds`.
    pub rows_per_sec: f64,
    /// The table with every index (PostgreSQL: and TOAST; SQLite: the database file after
    /// a final checkpoint), bytes.
    pub file_bytes: u64,
    /// `file_bytes / rows`.
    pub bytes_per_row: f64,
    /// The table: PostgreSQL's heap, InnoDB's clustered index (the rows), SQLite's table
    /// b-tree, bytes.
    pub table_bytes: u64,
    /// The id's index, bytes (InnoDB and SQLite: the table's own b-tree when the id is the
    /// key).
    pub index_bytes: u64,
    /// Leaf pages of the id's index.
    pub leaf_pages: u64,
    /// How full the id's index's leaves are, 0 to 1 (PostgreSQL: `pgstatindex`'s density;
    /// InnoDB: leaf record bytes over leaf room; SQLite: 1 - unused over page bytes, from
    /// `dbstat`).
    pub leaf_fill: f64,
    /// Log written during the run (PostgreSQL's WAL, InnoDB's redo, SQLite's WAL), bytes.
    pub wal_bytes: u64,
    /// Transactions committed.
    pub commits: u64,
    /// The cache (`shared_buffers`, `innodb_buffer_pool_size`, SQLite's `cache_size`), KiB.
    pub cache_kib: i64,
    /// Repetitions behind the figures: this run is the one of median rate among them, and
    /// the spreads below are theirs (1: one run; 0 in files written before repetitions,
    /// read as 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeats: usize,
    /// The lowest rate among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_per_sec_min: f64,
    /// The highest rate among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_per_sec_max: f64,
    /// The lowest leaf fill among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub leaf_fill_min: f64,
    /// The highest leaf fill among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub leaf_fill_max: f64,
    /// The smallest file among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_bytes_min: u64,
    /// The largest file among the repetitions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_bytes_max: u64,
    /// The engine's own counters.
    #[serde(flatten)]
    pub own: O,
}

/// Whether a figure is its type's zero: a spread that a file written before repetitions
/// does not have, left out when such a file is written again (so it stays the same).
fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The lowest and highest of a figure among a run's repetitions: `(min, max)`, the figure
/// itself twice for one run.
pub type Spread<T> = (T, T);

impl<S, O> Run<S, O> {
    /// Whether the figures are medians of several repetitions.
    pub fn repeated(&self) -> bool {
        self.repeats > 1
    }

    /// The rate's spread among the repetitions.
    pub fn rate_spread(&self) -> Spread<f64> {
        if self.repeated() {
            (self.rows_per_sec_min, self.rows_per_sec_max)
        } else {
            (self.rows_per_sec, self.rows_per_sec)
        }
    }

    /// The leaf fill's spread among the repetitions.
    pub fn fill_spread(&self) -> Spread<f64> {
        if self.repeated() {
            (self.leaf_fill_min, self.leaf_fill_max)
        } else {
            (self.leaf_fill, self.leaf_fill)
        }
    }

    /// The file size's spread among the repetitions.
    pub fn file_spread(&self) -> Spread<u64> {
        if self.repeated() {
            (self.file_bytes_min, self.file_bytes_max)
        } else {
            (self.file_bytes, self.file_bytes)
        }
    }
}

/// The run of median rate among `runs`, repetitions of one configuration, with their
/// spreads; `None` for no runs. With an even count the lower of the two middle runs.
pub fn median_run<S, O>(mut runs: Vec<Run<S, O>>) -> Option<(usize, Run<S, O>)>
where
    S: Clone,
    O: Clone,
{
    if runs.is_empty() {
        return None;
    }
    let n = runs.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| runs[a].rows_per_sec.total_cmp(&runs[b].rows_per_sec));
    let middle = order[(n - 1) / 2];
    let fold = |f: fn(&Run<S, O>) -> f64| {
        runs.iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let rate = fold(|r| r.rows_per_sec);
    let fill = fold(|r| r.leaf_fill);
    let bytes = (
        runs.iter().map(|r| r.file_bytes).min().unwrap_or(0),
        runs.iter().map(|r| r.file_bytes).max().unwrap_or(0),
    );
    let mut run = runs.swap_remove(middle);
    run.repeats = n;
    (run.rows_per_sec_min, run.rows_per_sec_max) = rate;
    (run.leaf_fill_min, run.leaf_fill_max) = fill;
    (run.file_bytes_min, run.file_bytes_max) = bytes;
    Some((middle, run))
}

/// `items` in a random order drawn from `seed` (Fisher–Yates over splitmix64): the same
/// seed gives the same order, on every machine.
pub fn seeded_order<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = usize::try_from(next() % (i as u64 + 1)).unwrap_or(i);
        items.swap(i, j);
    }
}

impl<S: Copy, O> Run<S, O> {
    /// The record of a run that `ended` so, with the table's and log's `sizes` and the
    /// engine's own counters.
    pub fn new(ended: &insert::Ended<S>, sizes: insert::Sizes, own: O) -> Self {
        let (of, rows) = (&ended.spec, ended.rows);
        let seconds = ended.busy.as_secs_f64();
        Self {
            scheme: Label(of.scheme),
            storage: of.storage,
            cache: Label(of.cache),
            writers: ended.writers,
            ids_made: Label(if ended.live { "during" } else { "before" }),
            commit_rows: of.commit_rows,
            rows,
            seconds,
            rows_per_sec: rows as f64 / seconds,
            file_bytes: sizes.file,
            bytes_per_row: sizes.file as f64 / rows.max(1) as f64,
            table_bytes: sizes.table,
            index_bytes: sizes.index,
            leaf_pages: sizes.leaf_pages,
            leaf_fill: sizes.leaf_fill,
            wal_bytes: sizes.wal,
            commits: ended.commits,
            cache_kib: of.cache_kib,
            repeats: 1,
            rows_per_sec_min: rows as f64 / seconds,
            rows_per_sec_max: rows as f64 / seconds,
            leaf_fill_min: sizes.leaf_fill,
            leaf_fill_max: sizes.leaf_fill,
            file_bytes_min: sizes.file,
            file_bytes_max: sizes.file,
            own,
        }
    }
}

impl<S: insert::StorageName, O> Run<S, O> {
    /// The figures every engine has, the storage by its name, without the engine's own
    /// counters: the run as a section that names no engine reads it.
    pub fn shared(&self) -> Run<&'static str, ()> {
        Run {
            scheme: self.scheme,
            storage: self.storage.name(),
            cache: self.cache,
            writers: self.writers,
            ids_made: self.ids_made,
            commit_rows: self.commit_rows,
            rows: self.rows,
            seconds: self.seconds,
            rows_per_sec: self.rows_per_sec,
            file_bytes: self.file_bytes,
            bytes_per_row: self.bytes_per_row,
            table_bytes: self.table_bytes,
            index_bytes: self.index_bytes,
            leaf_pages: self.leaf_pages,
            leaf_fill: self.leaf_fill,
            wal_bytes: self.wal_bytes,
            commits: self.commits,
            cache_kib: self.cache_kib,
            repeats: self.repeats,
            rows_per_sec_min: self.rows_per_sec_min,
            rows_per_sec_max: self.rows_per_sec_max,
            leaf_fill_min: self.leaf_fill_min,
            leaf_fill_max: self.leaf_fill_max,
            file_bytes_min: self.file_bytes_min,
            file_bytes_max: self.file_bytes_max,
            own: (),
        }
    }
}

impl<S, O> Run<S, O> {
    /// Log bytes per 1,000 rows.
    pub fn wal_per_1k(&self) -> f64 {
        self.wal_bytes as f64 * 1000.0 / self.rows.max(1) as f64
    }

    /// Each writer made its ids just before inserting them (else one generator's ids were
    /// made before the run).
    pub fn made_during(&self) -> bool {
        self.ids_made == "during"
    }
}

/// What an engine's results hold that the shared parts of the report read.
pub trait InsertResults {
    /// The engine's storage forms.
    type Storage: insert::StorageName + PartialEq + 'static;
    /// The engine's own counters of a run.
    type Own: 'static;
    /// Where they come from.
    fn stamp(&self) -> &Stamp;
    /// The same, to be stamped.
    fn stamp_mut(&mut self) -> &mut Stamp;
    /// Every insert run.
    fn runs(&self) -> &[Run<Self::Storage, Self::Own>];
    /// The insert-rate curves of the one-writer runs.
    fn curve(&self) -> &[insert::CurvePoint<Self::Storage>];

    /// The run of this scheme, storage, cache and writer count, with ids made before the
    /// run (`live` false) or by the writers as they insert (`live` true).
    fn find(
        &self,
        scheme: &str,
        storage: Self::Storage,
        cache: &str,
        writers: usize,
        live: bool,
    ) -> Option<&Run<Self::Storage, Self::Own>> {
        self.runs().iter().find(|r| {
            r.scheme == scheme
                && r.storage == storage
                && r.cache == cache
                && r.writers == writers
                && r.made_during() == live
        })
    }

    /// The one-writer run of `scheme` keyed by its own binary key (ids made before), with
    /// the fewest rows per commit (SQLite also inserts each scheme's ids in one transaction).
    fn native(&self, scheme: &str, cache: &str) -> Option<&Run<Self::Storage, Self::Own>> {
        let bits = idkit_all::registry::find(scheme).ok()?.info().bits;
        let storage = <Self::Storage as insert::StorageName>::native(bits);
        self.runs()
            .iter()
            .filter(|r| {
                r.scheme == scheme
                    && r.storage == storage
                    && r.cache == cache
                    && r.writers == 1
                    && !r.made_during()
            })
            .min_by_key(|r| r.commit_rows)
    }

    /// The first run of `scheme` by `writers` writers that made their ids as they inserted.
    fn live(&self, scheme: &str, writers: usize) -> Option<&Run<Self::Storage, Self::Own>> {
        self.runs()
            .iter()
            .find(|r| r.scheme == scheme && r.writers == writers && r.made_during())
    }

    /// The most writers of any run (1 without runs).
    fn most_writers(&self) -> usize {
        self.runs().iter().map(|r| r.writers).max().unwrap_or(1)
    }

    /// The small cache, KiB (0 without runs).
    fn small_cache_kib(&self) -> i64 {
        self.runs()
            .iter()
            .find(|run| run.cache == "small")
            .map_or(0, |run| run.cache_kib)
    }
}

/// Everything measured in an engine, as kept in `data/<engine>.json`: where and on what
/// ([`Stamp`]), the insert runs and their curves, which every engine has, and the engine's
/// own results (`own`: its round trips, its table shapes). The stamp and the engine's own
/// results are flattened into the record of the kept file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results<S, O, M> {
    /// When, where and how these were measured, and on what.
    #[serde(flatten)]
    pub stamp: Stamp,
    /// Insert runs, one writer and several.
    pub runs: Vec<Run<S, O>>,
    /// Insert-rate curves of the one-writer runs.
    pub curve: Vec<insert::CurvePoint<S>>,
    /// The engine's own results.
    #[serde(flatten)]
    pub own: M,
}

impl<S, O, M: Default> Default for Results<S, O, M> {
    fn default() -> Self {
        Self {
            stamp: Stamp::default(),
            runs: Vec::new(),
            curve: Vec::new(),
            own: M::default(),
        }
    }
}

impl<S: insert::StorageName + PartialEq + 'static, O: 'static, M> InsertResults
    for Results<S, O, M>
{
    type Storage = S;
    type Own = O;
    fn stamp(&self) -> &Stamp {
        &self.stamp
    }
    fn stamp_mut(&mut self) -> &mut Stamp {
        &mut self.stamp
    }
    fn runs(&self) -> &[Run<S, O>] {
        &self.runs
    }
    fn curve(&self) -> &[insert::CurvePoint<S>] {
        &self.curve
    }
}

/// The progress line that closes an engine's runs: how many, of how many rows, and uuid-v4
/// against uuid-v7 (own key, small cache) in rows per second and page splits (`splits`).
pub fn summary<R: InsertResults>(
    name: &str,
    results: &R,
    rows: usize,
    splits: fn(&RunOf<R>) -> u64,
) -> String {
    let (v4, v7) = (
        results.native("uuid-v4", "small"),
        results.native("uuid-v7", "small"),
    );
    let versus = match (v4, v7) {
        (Some(a), Some(b)) => format!(
            "; uuid-v4 {:.0} rows/s and {} splits against uuid-v7 {:.0} rows/s and {} splits",
            a.rows_per_sec,
            splits(a),
            b.rows_per_sec,
            splits(b)
        ),
        _ => String::new(),
    };
    format!(
        "{name}: {} insert runs of {rows} rows{versus}",
        results.runs().len()
    )
}

/// The run record of an engine's results.
pub type RunOf<R> = Run<<R as InsertResults>::Storage, <R as InsertResults>::Own>;

/// An engine's three charts: its insert-rate curve, and two charts of two bar panels over
/// each scheme's own key with the small cache. The words and values are the engine's own.
#[derive(Debug)]
pub struct Charts<R: 'static> {
    /// The insert-rate curve's file stem.
    pub curve_stem: &'static str,
    /// Its title, from the rows per commit and the small cache in KiB.
    pub curve_title: fn(usize, i64) -> String,
    /// Its panel's title.
    pub curve_panel: &'static str,
    /// Splits and fill, or their like.
    pub first: BarPair<R>,
    /// Log volume and the engine's second write counter.
    pub second: BarPair<R>,
}

/// A chart of two bar panels side by side.
#[derive(Debug)]
pub struct BarPair<R: 'static> {
    /// File stem.
    pub stem: &'static str,
    /// Title, from the rows per commit.
    pub title: fn(usize) -> String,
    /// Left and right panels.
    pub panels: [BarPanel<R>; 2],
}

/// A bar panel: one bar per scheme.
#[derive(Debug)]
pub struct BarPanel<R: 'static> {
    /// Panel title.
    pub title: &'static str,
    /// What the axis measures.
    pub x_desc: &'static str,
    /// The value of a run.
    pub value: fn(&R) -> f64,
    /// Log axis.
    pub log: bool,
    /// Values are fractions shown as percentages.
    pub percent: bool,
    /// The cache of its runs: `small`, or `large`.
    pub cache: &'static str,
}

impl<R> BarPanel<R> {
    /// A panel on a linear axis.
    pub const fn linear(title: &'static str, x_desc: &'static str, value: fn(&R) -> f64) -> Self {
        Self {
            title,
            x_desc,
            value,
            log: false,
            percent: false,
            cache: "small",
        }
    }

    /// A panel on a log axis.
    pub const fn log(title: &'static str, x_desc: &'static str, value: fn(&R) -> f64) -> Self {
        Self {
            log: true,
            ..Self::linear(title, x_desc, value)
        }
    }

    /// The same panel over the runs with the large cache.
    pub const fn large(self) -> Self {
        Self {
            cache: "large",
            ..self
        }
    }

    /// A panel of fractions shown as percentages.
    pub const fn percent(title: &'static str, x_desc: &'static str, value: fn(&R) -> f64) -> Self {
        Self {
            percent: true,
            ..Self::linear(title, x_desc, value)
        }
    }
}

/// Where an engine's results come from: measured by this run, or read back from the kept
/// file; and on what. Flattened into each engine's results, so the file has `provenance`,
/// `servers` and `settings` at its top.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stamp {
    /// When, where and how they were measured: date, git revision, profile, command.
    pub provenance: Vec<String>,
    /// The servers, as [`Server::describe`] gives them.
    pub servers: Vec<String>,
    /// The settings that shape the runs ([`Engine::settings`]).
    pub settings: Vec<String>,
    /// Measured by this run (false when read back from the kept file).
    #[serde(skip)]
    pub measured_now: bool,
}

/// What the run gives every engine to measure or carry forward.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The schemes.
    pub entries: &'a [&'a Entry],
    /// The profile's sizes.
    pub params: &'a Params,
    /// The run's date, revision, profile and command, stamped on what it measures.
    pub provenance: &'a [String],
    /// The report directory, whose `data/` keeps the engines' last figures.
    pub out: &'a Path,
    /// Progress lines.
    pub progress: &'a Progress,
    /// A PostgreSQL 18 server whose built-in generators the PostgreSQL part measures beside
    /// the extension's ([`Config::pg18`](crate::Config::pg18)).
    pub pg18: Option<&'a str>,
}

/// The engine's results: measured on `servers`, or, with none, read back from
/// `out/data/<NAME>.json` (empty when there are none or they cannot be read; the progress
/// line says which).
///
/// # Errors
///
/// Those of [`Engine::measure`].
pub(crate) fn results<E: Engine>(
    job: &Job<'_>,
    servers: &[Server<E>],
) -> Result<E::Results, Error> {
    let Job {
        provenance,
        out,
        progress,
        ..
    } = *job;
    if let Some(small) = servers.first() {
        let settings = E::settings(small)?;
        let mut results = E::measure(job, small, servers)?;
        *results.stamp_mut() = Stamp {
            provenance: provenance.to_vec(),
            servers: servers.iter().map(Server::describe).collect(),
            settings,
            measured_now: true,
        };
        return Ok(results);
    }
    let name = E::NAME;
    // The figures kept in the report directory, or with `--out` elsewhere and none there
    // yet, the committed report's (run from the repository's root, as scripts/report.sh
    // does): dated by their own stamp either way.
    let here = out.join("data").join(format!("{name}.json"));
    let committed = Path::new("reports")
        .join("data")
        .join(format!("{name}.json"));
    let kept_file = if here.exists() || !committed.exists() {
        here
    } else {
        committed
    };
    Ok(match load(&kept_file) {
        Ok(Some(kept)) => {
            progress.line(&format!(
                "{name}: no server given; the report keeps the figures in {}",
                kept_file.display()
            ));
            kept
        }
        Ok(None) => E::Results::default(),
        Err(e) => {
            progress.line(&format!(
                "{name}: no server given, and the kept figures cannot be read ({e}); the \
                 report leaves {name} out until `scripts/report.sh {}` measures them again",
                E::BY_URL.map_or("", |u| u.flag)
            ));
            E::Results::default()
        }
    })
}

/// Every data file of the engine's `results`, as file name and contents: its runs
/// (`<RUNS_FILE>.csv`), their insert-rate curve (`<RUNS_FILE>_curve.csv`), its own files
/// ([`Engine::more_files`]) and, for an engine given by URL, the results as kept for later
/// runs (`<NAME>.json`). None without runs.
pub fn files<E: Engine>(results: &E::Results) -> Vec<(String, String)> {
    let runs = results.runs();
    if runs.is_empty() {
        return Vec::new();
    }
    let (name, stem) = (E::NAME, E::RUNS_FILE);
    let engine_column = E::RUN_COLUMNS.starts_with("engine,").then_some(name);
    let mut files = vec![
        (
            format!("{stem}.csv"),
            insert::runs_csv(name, E::RUN_COLUMNS, runs, E::own_cell),
        ),
        (
            format!("{stem}_curve.csv"),
            insert::curve_csv(engine_column, results.curve()),
        ),
    ];
    files.extend(
        E::more_files(results)
            .into_iter()
            .map(|(file, body)| (file.to_owned(), body)),
    );
    if E::BY_URL.is_some() {
        let json = serde_json::to_string_pretty(results).unwrap_or_default();
        files.push((format!("{name}.json"), json + "\n"));
    }
    files
}

/// An engine's results, whichever engine: for the data files, the charts and the counts.
pub(crate) trait Measured: fmt::Debug {
    /// [`Engine::NAME`].
    fn name(&self) -> &'static str;
    /// Insert runs.
    fn runs(&self) -> usize;
    /// Its data files ([`files`]).
    fn files(&self) -> Vec<(String, String)>;
    /// The settings its runs were made with ([`Engine::settings`]).
    fn settings(&self) -> &[String];
    /// Where its figures come from: this run, or the kept file ([`Stamp`]).
    fn stamp(&self) -> &Stamp;
    /// `scheme`'s run under its own key with `cache` ([`InsertResults::native`]): the
    /// figures every engine has ([`Run::shared`]).
    fn native(&self, scheme: &str, cache: &str) -> Option<Run<&'static str, ()>>;
    /// The engine's own counter `column` (a column of its runs file, [`Engine::own_cell`])
    /// of the same run, where it has that counter.
    fn native_own(&self, scheme: &str, cache: &str, column: &str) -> Option<f64>;
    /// The results themselves, for the report's own sections of the engine.
    fn as_any(&self) -> &dyn Any;
}

/// An engine whose servers were checked, to be measured.
pub(crate) trait Pending {
    /// The engine's results: measured on its servers, or carried forward ([`results`]).
    fn results(self: Box<Self>, job: &Job<'_>) -> Result<Box<dyn Measured>, Error>;
}

/// The engine `E` on its checked `servers`, to be measured.
pub(crate) fn pending<E: Engine + 'static>(servers: Vec<Server<E>>) -> Box<dyn Pending> {
    Box::new(Servers(servers))
}

struct Servers<E: Engine>(Vec<Server<E>>);

impl<E: Engine + 'static> Pending for Servers<E> {
    fn results(self: Box<Self>, job: &Job<'_>) -> Result<Box<dyn Measured>, Error> {
        Ok(Box::new(Of::<E>(results::<E>(job, &self.0)?)))
    }
}

struct Of<E: Engine>(E::Results);

impl<E: Engine> fmt::Debug for Of<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: Engine + 'static> Measured for Of<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }
    fn runs(&self) -> usize {
        self.0.runs().len()
    }
    fn files(&self) -> Vec<(String, String)> {
        files::<E>(&self.0)
    }
    fn settings(&self) -> &[String] {
        &self.0.stamp().settings
    }
    fn stamp(&self) -> &Stamp {
        self.0.stamp()
    }
    fn native(&self, scheme: &str, cache: &str) -> Option<Run<&'static str, ()>> {
        self.0.native(scheme, cache).map(Run::shared)
    }
    fn native_own(&self, scheme: &str, cache: &str, column: &str) -> Option<f64> {
        E::own_cell(self.0.native(scheme, cache)?, column)?
            .parse()
            .ok()
    }
    fn as_any(&self) -> &dyn Any {
        &self.0
    }
}

/// The results kept in `path` by an earlier run: `Ok(None)` when there is no such file.
///
/// # Errors
///
/// A message when the file cannot be read or was written by a harness whose results had
/// other fields (measure again with a server).
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The servers at `urls` (none, one or two), each checked by `check`, sorted by their cache
/// and named by it: a single server is `small` and takes every run; of two, the larger cache
/// is `large`. More than two fail before any is reached.
///
/// # Errors
///
/// `check`'s error for an unreachable or unsuitable server; for more than two servers or
/// two with the same cache, the engine's error for a server not fit for the runs
/// (`setup_error`), in its own words ([`Engine::TITLE`], [`Engine::CACHE_SETTING`]).
pub fn servers<E: Engine>(
    urls: &[String],
    check: fn(&str) -> Result<Server<E>, Error>,
    setup_error: fn(String) -> Error,
) -> Result<Vec<Server<E>>, Error> {
    let (engine, cache) = (E::TITLE, E::CACHE_SETTING);
    if urls.len() > 2 {
        return Err(setup_error(format!(
            "expected one or two {engine} servers (small and large {cache}), found {}",
            urls.len()
        )));
    }
    let mut servers = urls
        .iter()
        .map(|url| check(url))
        .collect::<Result<Vec<_>, _>>()?;
    servers.sort_by_key(|s| s.cache_kib);
    if let [small, large] = &mut servers[..] {
        if small.cache_kib == large.cache_kib {
            return Err(setup_error(format!(
                "the two {engine} servers have the same {cache}"
            )));
        }
        large.cache = "large";
    }
    Ok(servers)
}

/// UUIDv7 as RFC 9562's first method makes it: the millisecond and 74 fresh random bits
/// per id, no counter, so ids of one millisecond arrive in random order.
pub const UUID_V7_RANDOM: &str = "uuid-v7-random";

/// UUIDv7 by RFC 9562 section 6.2's method 3, as PostgreSQL 18's `uuidv7()` makes it:
/// idkit's `uuid-v7` with `v7-method = sub-ms` ([`crate::generation::SUB_MS`]), the
/// millisecond's fraction in `rand_a` and fresh random bits in `rand_b`.
pub const UUID_V7_SUB_MS: &str = crate::generation::SUB_MS.0;

/// The schemes of the multi-writer runs, with their widths in bits: each engine keys them
/// by its own binary type for that width.
pub const CONCURRENT: [(&str, u32); 6] = [
    ("snowflake-twitter", 64),
    ("uuid-v7", 128),
    (UUID_V7_RANDOM, 128),
    (UUID_V7_SUB_MS, 128),
    ("ulid", 128),
    ("uuid-v4", 128),
];

/// `n` UUIDv7 with random low bits, all of the current millisecond: idkit's v7 layout with
/// a fresh random counter (`rand_a` and `rand_b`) for every id.
pub fn uuid_v7_random(n: usize) -> Vec<RawId> {
    use idkit_all::uuid::V7Layout;
    use idkit_core::time_ordered::{LAST_MS, Layout as _};
    use idkit_core::{Clock as _, SystemClock};
    let ms = SystemClock.now_ms() & LAST_MS;
    (0..n)
        .map(|_| {
            let counter = rand::random::<u128>() >> (128 - V7Layout::COUNTER_BITS);
            RawId::from_u128(V7Layout::assemble(ms, counter).as_u128())
        })
        .collect()
}

/// One generator's `n` ids, made before a run (worker id 0 where the scheme has one), with
/// the generator that formats them.
///
/// # Errors
///
/// The scheme's error when it cannot be built or cannot make the ids.
pub fn made_before(entry: &Entry, n: usize) -> Result<(Scheme, Vec<RawId>), Error> {
    let scheme = crate::generation::build(entry, 0)?;
    let mut ids = vec![RawId::default(); n];
    scheme
        .fill_raw(&mut ids)
        .map_err(Error::generate(entry.name()))?;
    Ok((scheme, ids))
}

/// `ids` as the signed 64-bit integers an integer key holds (SQLite's `INTEGER`,
/// PostgreSQL's `bigint`, InnoDB's `BIGINT`).
///
/// # Errors
///
/// [`Error::IdRange`] for an id wider than 64 bits or above `i64::MAX`.
pub fn signed_keys(scheme: &'static str, ids: &[RawId]) -> Result<Vec<i64>, Error> {
    ids.iter()
        .map(|id| {
            id.to_u64()
                .ok()
                .and_then(|v| i64::try_from(v).ok())
                .ok_or(Error::IdRange { scheme })
        })
        .collect()
}

/// One writer's batches: ids of a generator of `scheme` with worker id `worker` (schemes
/// with an identity; the others need none), UUIDv7 with random low bits
/// ([`UUID_V7_RANDOM`]), or UUIDv7 by method 3 ([`UUID_V7_SUB_MS`]), made at the moment the writer asks for them and bound as the
/// engine's keys by `keys`.
///
/// # Errors
///
/// `setup(...)` when `scheme` is not in `entries`; a scheme's error when it cannot be built.
pub fn producer<K>(
    entries: &[&Entry],
    scheme: &'static str,
    worker: u64,
    setup: fn(String) -> Error,
    keys: impl Fn(&[RawId]) -> Result<K, Error> + Send + 'static,
) -> Result<insert::Producer<K>, Error> {
    if scheme == UUID_V7_RANDOM {
        return Ok(Box::new(move |n| keys(&uuid_v7_random(n))));
    }
    let generator = if scheme == UUID_V7_SUB_MS {
        crate::generation::build_sub_ms()?
    } else {
        let entry = entries
            .iter()
            .find(|e| e.name() == scheme)
            .ok_or_else(|| setup(format!("{scheme} is not in the registry")))?;
        crate::generation::build(*entry, worker)?
    };
    let name = scheme;
    Ok(Box::new(move |n| {
        let mut ids = vec![RawId::default(); n];
        generator
            .fill_raw(&mut ids)
            .map_err(Error::generate(name))?;
        keys(&ids)
    }))
}

/// A name in a result (scheme, cache, method...): `&'static str` when measured, leaked
/// ([`From<String>`]) when built as the run goes or read back from the file (a few dozen
/// short strings per run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Label(pub &'static str);

impl Label {
    /// The text.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl From<String> for Label {
    /// Leaks `text`: a label lives as long as the results it is part of.
    fn from(text: String) -> Self {
        Self(Box::leak(text.into_boxed_str()))
    }
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<&str> for Label {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl Serialize for Label {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    /// A signed 64-bit key holds ids up to `i64::MAX`; a larger one, or a 128-bit id, is the
    /// scheme's `IdRange` error, not a wrapped negative key.
    #[test]
    fn signed_keys_refuse_what_does_not_fit() {
        use idkit_core::RawId;
        let max = i64::MAX as u64;
        let fits = [0, 1, max].map(RawId::from_u64);
        assert_eq!(super::signed_keys("s", &fits).unwrap(), [0, 1, i64::MAX]);
        for wide in [RawId::from_u64(max + 1), RawId::from_u128(1)] {
            let err = super::signed_keys("s", &[RawId::from_u64(1), wide]).unwrap_err();
            assert!(
                matches!(err, crate::Error::IdRange { scheme: "s" }),
                "{err}"
            );
        }
    }

    /// RFC 9562, section 5.7: version 7 in bits 48 to 51, variant `10` in bits 64 and 65,
    /// the Unix millisecond in the top 48 bits.
    #[test]
    fn random_v7_ids_are_v7_of_one_millisecond_with_random_low_bits() {
        let ids = super::uuid_v7_random(1000);
        let words: Vec<u128> = ids.iter().map(|id| id.to_u128().unwrap()).collect();
        for w in &words {
            assert_eq!((w >> 76) & 0xf, 7, "version of {w:032x}");
            assert_eq!((w >> 62) & 0b11, 0b10, "variant of {w:032x}");
            assert_eq!(w >> 80, words[0] >> 80, "one millisecond");
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        assert!(
            (words[0] >> 80).abs_diff(now) < 60_000,
            "the clock's millisecond"
        );
        let mut sorted = words.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), words.len(), "random bits repeat");
        assert_ne!(sorted, words, "made in order: a counter, not random bits");
    }

    use super::{Label, Run};

    /// A run with only the figures the repetitions reduce set.
    fn run(rate: f64, fill: f64, bytes: u64) -> Run<&'static str, ()> {
        Run {
            scheme: Label("uuid-v4"),
            storage: "blob_pk",
            cache: Label("small"),
            writers: 1,
            ids_made: Label("before"),
            commit_rows: 1000,
            rows: 1000,
            seconds: 1000.0 / rate,
            rows_per_sec: rate,
            file_bytes: bytes,
            bytes_per_row: 0.0,
            table_bytes: 0,
            index_bytes: 0,
            leaf_pages: 0,
            leaf_fill: fill,
            wal_bytes: 0,
            commits: 1,
            cache_kib: 64,
            repeats: 1,
            rows_per_sec_min: rate,
            rows_per_sec_max: rate,
            leaf_fill_min: fill,
            leaf_fill_max: fill,
            file_bytes_min: bytes,
            file_bytes_max: bytes,
            own: (),
        }
    }

    #[test]
    fn the_median_repetition_stands_for_the_run_with_every_spread() {
        let runs = vec![
            run(300.0, 0.70, 900),
            run(100.0, 0.72, 1000),
            run(200.0, 0.71, 950),
        ];
        let (i, m) = super::median_run(runs).unwrap();
        assert_eq!(i, 2, "the run of median rate, by its place");
        assert_eq!(m.rows_per_sec, 200.0);
        assert_eq!(
            m.leaf_fill, 0.71,
            "the median run's own figures, not each field's"
        );
        assert_eq!(m.repeats, 3);
        assert_eq!(m.rate_spread(), (100.0, 300.0));
        assert_eq!(m.fill_spread(), (0.70, 0.72));
        assert_eq!(m.file_spread(), (900, 1000));
        // Even counts take the lower middle; one run has no spread of its own.
        let (_, m) = super::median_run(vec![run(5.0, 0.5, 1), run(7.0, 0.5, 1)]).unwrap();
        assert_eq!(m.rows_per_sec, 5.0);
        let (_, one) = super::median_run(vec![run(5.0, 0.5, 1)]).unwrap();
        assert!(!one.repeated());
        assert!(super::median_run(Vec::<Run<&str, ()>>::new()).is_none());
    }

    #[test]
    fn a_seed_gives_one_order_and_seeds_give_many() {
        let order = |seed| {
            let mut v: Vec<u32> = (0..15).collect();
            super::seeded_order(&mut v, seed);
            v
        };
        assert_eq!(order(7), order(7));
        let mut sorted = order(7);
        sorted.sort_unstable();
        assert_eq!(sorted, (0..15).collect::<Vec<_>>(), "a permutation");
        let distinct: std::collections::BTreeSet<Vec<u32>> = (0..20).map(order).collect();
        assert!(
            distinct.len() >= 19,
            "{} orders of 20 seeds",
            distinct.len()
        );
        // Which scheme runs first varies with the seed.
        let firsts: std::collections::BTreeSet<u32> = (0..20).map(|s| order(s)[0]).collect();
        assert!(firsts.len() >= 5, "{firsts:?}");
    }
}
