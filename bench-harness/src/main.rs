//! `report`: measures every idkit scheme and writes `reports/`. `scripts/report.sh` runs it.

use std::path::PathBuf;
use std::process::ExitCode;

use bench_harness::{Config, Profile};
use clap::{Arg, ArgAction, CommandFactory, FromArgMatches, Parser};

/// Measure every scheme in the idkit registry and write REPORT.md, charts and data.
///
/// Each engine with a server adds its option `--<engine>-url URL` (see `--help`).
#[derive(Debug, Parser)]
#[command(name = "report", version)]
struct Args {
    /// quick (about a minute), standard (the committed report) or full (larger tables).
    #[arg(long, default_value = "standard")]
    profile: Profile,
    /// Directory to write REPORT.md, charts/ and data/ into.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// No progress bars or step summaries.
    #[arg(long)]
    quiet: bool,
    /// A PostgreSQL 18 server (a superuser, wal_keep_size 2 GB or more) whose built-in
    /// uuidv7() and gen_random_uuid() are measured beside the idkit extension's generators
    /// (with --postgres-url; scripts/report.sh --postgres starts one).
    #[arg(long, value_name = "URL")]
    postgres18_url: Option<String>,
    /// The seed of the order in which each repetition takes the schemes (the report gives
    /// the one it used; drawn at random when left out).
    #[arg(long)]
    seed: Option<u64>,
    /// Measure from a tree with uncommitted changes outside reports/. Refused without it:
    /// such figures belong to no revision anyone can check out, and the report then says
    /// so at its top.
    #[arg(long)]
    allow_dirty: bool,
}

fn main() -> ExitCode {
    let mut command = Args::command();
    for (name, help) in bench_harness::engines() {
        command = command.arg(
            Arg::new(name)
                .long(format!("{name}-url"))
                .value_name("URL")
                .action(ArgAction::Append)
                .help(help),
        );
    }
    let matches = command.get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if !args.allow_dirty {
        let revision = bench_harness::machine::Machine::read().git_revision;
        if revision.ends_with("-dirty") {
            eprintln!(
                "report: the tree has uncommitted changes outside reports/ (revision \
                 {revision}): commit them first, so that the figures name a revision that \
                 can be checked out, or pass --allow-dirty to measure anyway (the report \
                 then says so at its top)"
            );
            return ExitCode::from(2);
        }
    }
    let mut config = Config::new(args.profile, args.out);
    config.quiet = args.quiet;
    config.pg18 = args.postgres18_url;
    config.seed = args.seed;
    for (name, _) in bench_harness::engines() {
        if let Some(urls) = matches.get_many::<String>(name) {
            config
                .servers
                .insert(name.to_owned(), urls.cloned().collect());
        }
    }
    config.command = std::env::var("IDKIT_REPORT_COMMAND").unwrap_or(config.command);
    match bench_harness::run(&config) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::FAILURE
        }
    }
}
