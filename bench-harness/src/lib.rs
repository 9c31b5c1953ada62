//! The idkit benchmark harness: measures every scheme in the registry (generation speed,
//! time order, uniqueness, B-tree insert cost in SQLite and, given servers, in PostgreSQL
//! and InnoDB) and writes `reports/`.
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

mod charts;
pub mod collisions;
pub mod engine;
pub mod engines;
mod error;
pub mod generation;
pub mod leaks;
pub mod machine;
mod output;
mod profile;
mod progress;
pub mod properties;
mod report;
mod svgtext;
mod table;

use std::time::Instant;

use engines::ENGINES;
pub use error::Error;
pub use profile::{Config, Params, Profile};
pub use progress::Progress;

/// The engines with a server as the `report` binary offers them: each engine's name (its
/// `--<name>-url` option) and what server the option takes.
pub fn engines() -> impl Iterator<Item = (&'static str, String)> {
    ENGINES
        .iter()
        .filter_map(|e| Some((e.name(), e.url_help()?)))
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
    /// Insert runs of each engine (rows of its runs file: `btree.csv`,
    /// `btree_<engine>.csv`), by name, in the report's order.
    pub engine_runs: Vec<(&'static str, usize)>,
    /// Wall time of the whole run, seconds.
    pub seconds: f64,
}

impl Summary {
    /// Insert runs of the engine `name` (0 for an engine not in the list).
    pub fn runs(&self, name: &str) -> usize {
        self.engine_runs
            .iter()
            .find(|(engine, _)| *engine == name)
            .map_or(0, |&(_, runs)| runs)
    }
}

/// Runs every step of `config.profile` and writes the report.
///
/// # Errors
///
/// [`Error`] when a scheme fails to build or generate, servers are given for an engine the
/// harness does not have ([`Error::UnknownEngine`]), SQLite or an engine's server fails, a
/// server lacks what the runs need (PostgreSQL: version 15, `pgstattuple`, `pg_walinspect`,
/// a superuser; MySQL: the privileges to read InnoDB's metrics), or a file cannot be
/// written. Nothing is half-written on purpose, but a failed run can leave earlier files of
/// the same directory from a previous run.
pub fn run(config: &Config) -> Result<Summary, Error> {
    let started = Instant::now();
    let mut params = config.profile.params();
    params.order_seed = config.seed.unwrap_or_else(rand::random);
    let progress = Progress::new(config.quiet);
    let entries = idkit_all::registry::schemes();
    // Check the servers first: a bad URL fails in seconds, not after the SQLite runs.
    let known: Vec<&'static str> = engines().map(|(name, _)| name).collect();
    if let Some(name) = config
        .servers
        .keys()
        .find(|name| !known.contains(&name.as_str()))
    {
        return Err(Error::UnknownEngine {
            name: name.clone(),
            known,
        });
    }
    let pending = ENGINES
        .iter()
        .map(|engine| engine.servers(config.servers_of(engine.name()), &params))
        .collect::<Result<Vec<_>, _>>()?;

    let machine = machine::Machine::read();
    let primitives = machine::measure_primitives(&params, &progress);
    let generation = generation::measure(entries, &params, &progress)?;
    let properties = properties::measure(entries, &params, &progress)?;
    let collisions = collisions::table(entries);
    let leaks = leaks::table(entries, machine::now_ms())?;
    let provenance = vec![
        format!("date {}", machine.date),
        format!("git revision {}", machine.git_revision),
        format!("profile {}", params.profile.name()),
        format!("command {}", config.command),
        format!("machine {}, {} cores", machine.cpu, machine.cores),
    ];
    let job = engine::Job {
        entries,
        params: &params,
        provenance: &provenance,
        out: &config.out,
        progress: &progress,
        pg18: config.pg18.as_deref(),
    };
    let engines = pending
        .into_iter()
        .map(|engine| engine.results(&job))
        .collect::<Result<Vec<_>, _>>()?;

    let results = engine::report::Results {
        config,
        params: &params,
        machine: &machine,
        primitives: &primitives,
        generation: &generation,
        properties: &properties,
        collisions: &collisions,
        leaks: &leaks,
        engines: &engines,
    };
    let engine_charts = ENGINES.iter().flat_map(|e| e.charts(&results));
    let charts = charts::draw_all(
        &results,
        engine_charts,
        &config.out.join("charts"),
        &progress,
    )?;
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
        btree_runs: engines
            .iter()
            .find(|e| e.name() == <engines::sqlite::Sqlite as engine::Engine>::NAME)
            .map_or(0, |e| e.runs()),
        engine_runs: engines.iter().map(|e| (e.name(), e.runs())).collect(),
        seconds,
    })
}
