use std::fmt;
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

    /// The sizes and durations this profile uses.
    pub fn params(self) -> Params {
        match self {
            Self::Quick => Params {
                profile: self,
                sample_ms: 10,
                ticks_per_sample: 10,
                max_capped_sample_ms: 200,
                samples: 5,
                threads: &[1, 2, 4],
                order_generators: 4,
                order_ids: 2_000,
                order_burst: 50,
                unique_generators: 8,
                unique_ids: 2_000,
                collision_ids: 5_000,
                btree_rows: 10_000,
                commit_rows: 1_000,
                small_cache_kib: 64,
                large_cache_kib: 64 * 1024,
                curve_points: 10,
                pg_rows: 5_000,
                pg_checkpoints: 5,
                pg_writers: 4,
                pg_roundtrip_ms: 100,
                pg_in_db_ids: 20_000,
                pg_queries: 20,
            },
            Self::Standard => Params {
                profile: self,
                sample_ms: 40,
                ticks_per_sample: 50,
                max_capped_sample_ms: 1_000,
                samples: 5,
                threads: &[1, 2, 4],
                order_generators: 4,
                order_ids: 100_000,
                order_burst: 50,
                unique_generators: 8,
                unique_ids: 100_000,
                collision_ids: 200_000,
                btree_rows: 1_000_000,
                commit_rows: 1_000,
                small_cache_kib: 1024,
                large_cache_kib: 256 * 1024,
                curve_points: 30,
                pg_rows: 500_000,
                pg_checkpoints: 10,
                pg_writers: 4,
                pg_roundtrip_ms: 2_000,
                pg_in_db_ids: 1_000_000,
                pg_queries: 200,
            },
            Self::Full => Params {
                profile: self,
                sample_ms: 200,
                ticks_per_sample: 100,
                max_capped_sample_ms: 5_000,
                samples: 5,
                threads: &[1, 2, 4, 8],
                order_generators: 8,
                order_ids: 1_000_000,
                order_burst: 100,
                unique_generators: 16,
                unique_ids: 1_000_000,
                collision_ids: 1_000_000,
                btree_rows: 3_000_000,
                commit_rows: 1_000,
                small_cache_kib: 4 * 1024,
                large_cache_kib: 2 * 1024 * 1024,
                curve_points: 60,
                pg_rows: 1_000_000,
                pg_checkpoints: 10,
                pg_writers: 8,
                pg_roundtrip_ms: 5_000,
                pg_in_db_ids: 5_000_000,
                pg_queries: 500,
            },
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
}
