//! The idkit benchmark harness: measures every scheme in the registry (generation speed,
//! time order, uniqueness, B-tree insert cost in SQLite and, given a server, in PostgreSQL)
//! and writes `reports/`.
//!
//! The `report` binary is the command line; [`run`] is the whole job as a function, so
//! tests can drive the quick profile into a temporary directory.
//!
//! ```no_run
//! use bench_harness::{Config, Profile, run};
//!
//! let config = Config::new(Profile::Quick, "target/quick-report".into());
//! let summary = run(&config)?;
//! println!("{} schemes measured", summary.schemes);
//! # Ok::<(), bench_harness::Error>(())
//! ```

pub mod btree;
mod charts;
pub mod collisions;
pub mod engine;
mod error;
pub mod generation;
pub mod machine;
pub mod mysql;
mod output;
pub mod pg;
mod profile;
mod progress;
pub mod properties;
mod report;
mod svgtext;

use std::path::PathBuf;
use std::time::Instant;

use engine::Engine as _;
use mysql::InnoDb;
use pg::Postgres;

pub use error::Error;
pub use profile::{Params, Profile};
pub use progress::Progress;

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
    /// PostgreSQL servers to measure on as well (none: SQLite only). One or two: with two,
    /// the one with less `shared_buffers` gives the small-cache runs.
    pub postgres: Vec<String>,
    /// MySQL or MariaDB servers to measure on as well (none: the last InnoDB figures are
    /// carried forward). One or two: with two, the one with the smaller
    /// `innodb_buffer_pool_size` gives the small-cache runs.
    pub mysql: Vec<String>,
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
            postgres: Vec::new(),
            mysql: Vec::new(),
        }
    }
}

/// What a finished run measured, in counts.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Schemes measured.
    pub schemes: usize,
    /// Rows in `generation.csv`.
    pub generation_rows: usize,
    /// Rows in `btree.csv`.
    pub btree_runs: usize,
    /// Rows in `btree_postgres.csv`.
    pub pg_runs: usize,
    /// Rows in `btree_mysql.csv`.
    pub mysql_runs: usize,
    /// Wall time of the whole run, seconds.
    pub seconds: f64,
}

/// Runs every step of `config.profile` and writes the report.
///
/// # Errors
///
/// [`Error`] when a scheme fails to build or generate, SQLite or PostgreSQL fails, a
/// PostgreSQL server lacks what the runs need (version 15, `pgstattuple`, `pg_walinspect`,
/// a superuser), or a file cannot be written. Nothing is half-written on purpose, but a failed run can leave earlier files of
/// the same directory from a previous run.
pub fn run(config: &Config) -> Result<Summary, Error> {
    let started = Instant::now();
    let params = config.profile.params();
    let progress = Progress::new(config.quiet);
    let entries = idkit_all::registry::schemes();
    // Check the servers first: a bad URL fails in seconds, not after the SQLite runs.
    let pg_servers = Postgres::servers(&config.postgres)?;
    let my_servers = InnoDb::servers(&config.mysql)?;

    let machine = machine::Machine::read();
    let primitives = machine::measure_primitives(&params, &progress);
    let generation = generation::measure(entries, &params, &progress)?;
    let properties = properties::measure(entries, &params, &progress)?;
    let btree = btree::measure(entries, &params, &config.out, &progress)?;
    let collisions = collisions::table(entries);
    let provenance = vec![
        format!("date {}", machine.date),
        format!("git revision {}", machine.git_revision),
        format!("profile {}", params.profile.name()),
        format!("command {}", config.command),
    ];
    let out = &config.out;
    let pg =
        engine::results::<Postgres>(entries, &params, &pg_servers, &provenance, out, &progress)?;
    let my = engine::results::<InnoDb>(entries, &params, &my_servers, &provenance, out, &progress)?;

    let results = output::Results {
        config,
        params: &params,
        machine: &machine,
        primitives: &primitives,
        generation: &generation,
        properties: &properties,
        btree: &btree,
        collisions: &collisions,
        pg: &pg,
        my: &my,
    };
    let charts = charts::draw_all(&results, &config.out.join("charts"), &progress)?;
    output::write_data(&results, &config.out.join("data"))?;
    report::write(&results, &charts, &config.out.join("REPORT.md"))?;

    let seconds = started.elapsed().as_secs_f64();
    progress.line(&format!(
        "report written to {} in {seconds:.1} s",
        config.out.display()
    ));
    Ok(Summary {
        schemes: entries.len(),
        generation_rows: generation.rows.len(),
        btree_runs: btree.runs.len(),
        pg_runs: pg.runs.len(),
        mysql_runs: my.runs.len(),
        seconds,
    })
}
