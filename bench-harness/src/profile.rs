use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// How long and how large a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// About a minute or less: small tables, short samples. CI runs it.
    Quick,
    /// The committed report: at most ten minutes and 2 GiB on a 2-core machine.
    Standard,
    /// Larger tables and longer samples, for people with time.
    Full,
}

impl Profile {
    /// The profile's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Standard => "standard",
            Self::Full => "full",
        }
    }

    /// The sizes and durations this profile uses: each setting given for quick, standard
    /// and full, in that order.
    pub fn params(self) -> Params {
        Params {
            profile: self,
            sample_ms: self.pick([10, 40, 200]),
            ticks_per_sample: self.pick([10, 50, 100]),
            max_capped_sample_ms: self.pick([200, 1_000, 5_000]),
            samples: 5,
            threads: self.pick::<&[usize]>([&[1, 2, 4], &[1, 2, 4], &[1, 2, 4, 8]]),
            order_generators: self.pick([4, 4, 8]),
            order_ids: self.pick([2_000, 100_000, 1_000_000]),
            order_burst: self.pick([50, 50, 100]),
            unique_generators: self.pick([8, 8, 16]),
            unique_ids: self.pick([2_000, 100_000, 1_000_000]),
            collision_ids: self.pick([5_000, 200_000, 1_000_000]),
            // As many rows as PostgreSQL's and InnoDB's runs (`pg_rows`), for like with like,
            // and three repetitions of every run within the standard profile's time.
            btree_rows: self.pick([10_000, 500_000, 3_000_000]),
            commit_rows: 1_000,
            small_cache_kib: self.pick([64, 1024, 4 * 1024]),
            large_cache_kib: self.pick([64 * 1024, 256 * 1024, 2 * 1024 * 1024]),
            curve_points: self.pick([10, 30, 60]),
            pg_rows: self.pick([5_000, 500_000, 1_000_000]),
            pg_checkpoints: self.pick([5, 10, 10]),
            pg_writers: self.pick([4, 4, 8]),
            pg_roundtrip_ms: self.pick([100, 2_000, 5_000]),
            pg_in_db_ids: self.pick([20_000, 1_000_000, 5_000_000]),
            pg_queries: self.pick([20, 200, 500]),
            repeats: self.pick([1, 3, 3]),
            order_seed: 0,
        }
    }

    /// This profile's value of a setting given for quick, standard and full.
    fn pick<T>(self, [quick, standard, full]: [T; 3]) -> T {
        match self {
            Self::Quick => quick,
            Self::Standard => standard,
            Self::Full => full,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "quick" => Ok(Self::Quick),
            "standard" => Ok(Self::Standard),
            "full" => Ok(Self::Full),
            other => Err(format!(
                "unknown profile {other:?}: expected quick, standard or full"
            )),
        }
    }
}

/// Sizes and durations of one profile.
#[derive(Debug, Clone)]
pub struct Params {
    /// The profile these belong to.
    pub profile: Profile,
    /// Length of one timing sample, ms; the median of `samples` samples is reported.
    pub sample_ms: u64,
    /// A capped scheme's samples span at least this many of its ticks...
    pub ticks_per_sample: u64,
    /// ...but last no longer than this, ms (objectid's 1 s ticks would otherwise make a
    /// sample last `ticks_per_sample` seconds).
    pub max_capped_sample_ms: u64,
    /// Samples per generation measurement.
    pub samples: usize,
    /// Thread counts for the throughput table.
    pub threads: &'static [usize],
    /// Concurrent generators in the time-order measurement.
    pub order_generators: usize,
    /// Ids per generator in the time-order measurement.
    pub order_ids: usize,
    /// Ids each generator makes per millisecond in the time-order measurement.
    pub order_burst: usize,
    /// Generators with distinct identities in the uniqueness measurement.
    pub unique_generators: usize,
    /// Ids per generator in the uniqueness measurement.
    pub unique_ids: usize,
    /// Ids per generator when two generators share one identity.
    pub collision_ids: usize,
    /// Rows inserted per SQLite run.
    pub btree_rows: usize,
    /// Rows per transaction in the batched runs.
    pub commit_rows: usize,
    /// The small page cache, KiB (much smaller than the final tree).
    pub small_cache_kib: i64,
    /// The large page cache, KiB (larger than the final tree).
    pub large_cache_kib: i64,
    /// Points on each insert-rate curve.
    pub curve_points: usize,
    /// Rows inserted per PostgreSQL run.
    pub pg_rows: usize,
    /// `CHECKPOINT`s per PostgreSQL run (one every `pg_rows / pg_checkpoints` rows).
    pub pg_checkpoints: usize,
    /// Writers in the several-writers runs and clients in the round-trip runs.
    pub pg_writers: usize,
    /// How long each round-trip method runs, ms.
    pub pg_roundtrip_ms: u64,
    /// Ids the in-database generator makes in one statement.
    pub pg_in_db_ids: u64,
    /// Timed runs of the "latest 50 rows" query.
    pub pg_queries: usize,
    /// Repetitions of each SQLite insert run: the figures are the median repetition's, with
    /// the spread of all of them.
    pub repeats: usize,
    /// The seed of each repetition's order of the schemes (the report gives it; `--seed`
    /// sets it, a random one otherwise).
    pub order_seed: u64,
}

/// What to run and where to write it.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long and how large.
    pub profile: Profile,
    /// The report directory (`REPORT.md`, `charts/`, `data/` are written inside).
    pub out: PathBuf,
    /// No progress bars and no per-step lines.
    pub quiet: bool,
    /// The command line as the report should print it.
    pub command: String,
    /// Servers of the engines with a server, by the engine's name (`postgres`, `mysql`):
    /// one or two per engine; with two, the one with the smaller cache (`shared_buffers`,
    /// `innodb_buffer_pool_size`) gives the small-cache runs. An engine without servers
    /// carries its last kept figures forward.
    pub servers: BTreeMap<String, Vec<String>>,
    /// A PostgreSQL 18 server (a URL) whose built-in `uuidv7()` and `gen_random_uuid()` are
    /// measured beside the idkit extension's generators, when PostgreSQL is measured.
    pub pg18: Option<String>,
    /// The seed of the repetitions' orders of the schemes; `None`: drawn for the run.
    pub seed: Option<u64>,
}

impl Config {
    /// A config for `profile` writing into `out`, quiet, with the `report` command line
    /// reconstructed from the arguments.
    pub fn new(profile: Profile, out: PathBuf) -> Self {
        Self {
            command: format!(
                "cargo run --release -p bench-harness --bin report -- --profile {} --out {}",
                profile.name(),
                out.display()
            ),
            profile,
            out,
            quiet: true,
            servers: BTreeMap::new(),
            pg18: None,
            seed: None,
        }
    }

    /// The servers given for `engine` (none: its kept figures are carried forward).
    pub fn servers_of(&self, engine: &str) -> &[String] {
        self.servers.get(engine).map_or(&[], Vec::as_slice)
    }
}
