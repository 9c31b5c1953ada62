//! `report`: measures every idkit scheme and writes `reports/`. `scripts/report.sh` runs it.

use std::path::PathBuf;
use std::process::ExitCode;

use bench_harness::{Config, Profile};
use clap::Parser;

/// Measure every scheme in the idkit registry and write REPORT.md, charts and data.
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
    /// Also measure in PostgreSQL 15+ at this URL (a superuser; twice for a small and a
    /// large shared_buffers). `scripts/report.sh --postgres` starts two throwaway servers.
    #[arg(long = "postgres-url", value_name = "URL")]
    postgres: Vec<String>,
    /// Also measure in MySQL 8 or MariaDB (InnoDB) at this URL (a user that may SET GLOBAL;
    /// twice for a small and a large innodb_buffer_pool_size). `scripts/report.sh --mysql`
    /// starts two throwaway MariaDB servers.
    #[arg(long = "mysql-url", value_name = "URL")]
    mysql: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut config = Config::new(args.profile, args.out);
    config.quiet = args.quiet;
    config.postgres = args.postgres;
    config.mysql = args.mysql;
    config.command = std::env::var("IDKIT_REPORT_COMMAND").unwrap_or(config.command);
    match bench_harness::run(&config) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::FAILURE
        }
    }
}
