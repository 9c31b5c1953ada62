//! The same insert runs in PostgreSQL, measured the way PostgreSQL people measure them:
//! page splits as `Btree/SPLIT_L` and `Btree/SPLIT_R` WAL records (`pg_walinspect`), the
//! index's leaves and density (`pgstattuple`'s `pgstatindex`), WAL bytes and full-page
//! images (`pg_stat_wal`), and relation sizes. Also ids the database hands out one round trip
//! at a time ([`roundtrip`]) and the `created_at` index question ([`created_at`]).
//!
//! Every server given is used for the whole matrix it applies to; two servers that differ in
//! `shared_buffers` give the "small" and "large" cache runs (`scripts/report.sh --postgres`
//! starts both). The harness needs a superuser: it creates the two extensions and issues
//! `CHECKPOINT`.

pub mod created_at;
pub mod generators;
pub mod insert;
mod report;
pub mod roundtrip;

use idkit_core::RawId;
use insert::{Form, Keys, Spec};
use postgres::{Client, NoTls};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::engine::insert::{arrival_runs, one_writer_runs};
use crate::engine::{self, BarPair, BarPanel, ByUrl, Charts, Engine, Job};

pub use insert::{PgCounters, PgCurvePoint, PgRun, PgStorage};

/// The least `wal_keep_size` a server needs, MB: a run's WAL must still be there when
/// `pg_get_wal_stats` reads it after the run's checkpoints.
pub const MIN_WAL_KEEP_MB: i64 = 2048;

/// One PostgreSQL server to measure on.
pub type Server = engine::Server<Postgres>;

impl Server {
    /// A new connection.
    ///
    /// # Errors
    ///
    /// [`Error::Postgres`] when the server cannot be reached.
    pub fn connect(&self) -> Result<Client, Error> {
        Ok(Client::connect(&self.url, NoTls)?)
    }
}

/// Everything measured in PostgreSQL. Kept as `data/postgres.json`, so that a report run
/// without a server carries the last PostgreSQL figures forward, dated.
pub type Pg = engine::Results<PgStorage, PgCounters, PgOwn>;

/// What PostgreSQL measures beside its insert runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PgOwn {
    /// Ids one round trip at a time, the range allocator, the in-database function.
    pub roundtrip: Vec<engine::roundtrip::RoundTrip>,
    /// The in-database generator's rate and duplicates.
    pub in_database: Option<roundtrip::InDatabase>,
    /// The `created_at` index question.
    pub created_at: Vec<created_at::CreatedAtRun>,
    /// Ids made inside the server, generator by generator (absent from runs before it, and
    /// then left out of the file, which stays as it was written).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<generators::SqlGenerator>,
    /// Why the idkit extension's generators were left out, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generators_missing: Option<String>,
    /// The order of ids several sessions make at once (absent from runs before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generator_order: Vec<generators::SqlOrder>,
}

/// A count PostgreSQL returns as a signed integer (never negative here).
pub(crate) fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// PostgreSQL as an engine of the report.
#[derive(Debug)]
pub struct Postgres;

impl Postgres {
    /// Connects to `url`, reads its `shared_buffers` and version, and creates `pgstattuple`
    /// and `pg_walinspect`. Servers are named `small` and `large` by their `shared_buffers`
    /// (a single server is `small`: it takes every run, and the large-cache runs are left out;
    /// the report prints its real `shared_buffers`).
    ///
    /// # Errors
    ///
    /// [`Error::Postgres`] for an unreachable server, [`Error::PgSetup`] for a server older
    /// than 15, a `wal_keep_size` below [`MIN_WAL_KEEP_MB`], or a missing extension (Debian:
    /// `postgresql-contrib`).
    pub fn check(url: &str) -> Result<Server, Error> {
        let mut client = Client::connect(url, NoTls)?;
        let kib: i64 = client
            .query_one(
                "SELECT setting::bigint * 8 FROM pg_settings WHERE name = 'shared_buffers'",
                &[],
            )?
            .get(0);
        let version_num: i32 = client
            .query_one("SELECT current_setting('server_version_num')::int", &[])?
            .get(0);
        if version_num < 150_000 {
            return Err(Error::PgSetup(format!(
                "PostgreSQL 15 or later is needed (pg_walinspect); {url} runs {version_num}"
            )));
        }
        let keep_mb: i64 = client
            .query_one(
                "SELECT setting::bigint FROM pg_settings WHERE name = 'wal_keep_size'",
                &[],
            )?
            .get(0);
        if keep_mb < MIN_WAL_KEEP_MB {
            return Err(Error::PgSetup(format!(
                "{url} keeps {keep_mb} MB of WAL (wal_keep_size); each run reads its WAL back \
                     after checkpoints, so set wal_keep_size to at least {MIN_WAL_KEEP_MB} MB \
                     (scripts/report.sh --postgres starts servers that do)"
            )));
        }
        for ext in ["pgstattuple", "pg_walinspect"] {
            client
                .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {ext}"))
                .map_err(|e| {
                    Error::PgSetup(format!(
                        "cannot create the extension {ext} (Debian: postgresql-contrib): {e}"
                    ))
                })?;
        }
        let version: String = client.query_one("SHOW server_version", &[])?.get(0);
        Ok(Server::new(url, kib, <Self as Engine>::TITLE, version, ()))
    }
}

impl Engine for Postgres {
    const NAME: &'static str = "postgres";
    const BY_URL: Option<ByUrl<Self>> = Some(ByUrl {
        flag: "--postgres",
        throwaway: "two throwaway servers",
        url_help: "Also measure in PostgreSQL 15+ at this URL (a superuser; \
        twice for a small and a large shared_buffers).",
        check: Self::check,
        setup: Error::PgSetup,
    });
    const RUNS_FILE: &'static str = "btree_postgres";
    type ServerOwn = ();
    type Results = Pg;

    const CHARTS: Charts<PgRun> = Charts {
        curve_stem: "pg_insert_curve",
        curve_title: |commit_rows, kib| {
            let mib = kib / 1024;
            format!(
                "PostgreSQL insert rate as the table grows: primary key, {commit_rows} rows per \
                 commit, shared_buffers {mib} MiB"
            )
        },
        curve_panel: "PostgreSQL insert rate as the table grows (small shared_buffers)",
        first: BarPair {
            stem: "pg_splits_fill",
            title: |_| {
                "PostgreSQL page splits per 1,000 rows (Btree/SPLIT_L + SPLIT_R WAL records) \
                    and average leaf density of the primary key"
                    .to_owned()
            },
            panels: [
                BarPanel::linear("page splits per 1,000 rows", "splits", |b| {
                    b.splits() as f64 * 1000.0 / b.rows as f64
                }),
                BarPanel::percent(
                    "average leaf density",
                    "pgstatindex avg_leaf_density",
                    |b| b.leaf_fill,
                ),
            ],
        },
        second: BarPair {
            stem: "pg_wal",
            title: |_| {
                "PostgreSQL WAL and full-page images per 1,000 rows, primary key, small \
                    shared_buffers"
                    .to_owned()
            },
            panels: [
                BarPanel::log("WAL per 1,000 rows", "KiB (log scale)", |b| {
                    b.wal_per_1k() / 1024.0
                }),
                BarPanel::log(
                    "full-page images per 1,000 rows",
                    "images (log scale)",
                    PgRun::fpi_per_1k,
                ),
            ],
        },
    };

    const RUN_COLUMNS: &'static str = "engine,scheme,storage,cache,writers,ids_made,commit_rows,\
        rows,seconds,rows_per_sec,file_bytes,bytes_per_row,table_bytes,index_bytes,leaf_pages,\
        leaf_fill,depth,splits_l,splits_r,wal_bytes,wal_bytes_per_1k_rows,fpi,fpi_per_1k_rows,\
        fpi_bytes,commits,checkpoints,cache_kib";

    fn own_cell(run: &PgRun, column: &str) -> Option<String> {
        let own = &run.own;
        Some(match column {
            "depth" => own.depth.to_string(),
            "splits_l" => own.splits_l.to_string(),
            "splits_r" => own.splits_r.to_string(),
            "fpi" => own.fpi.to_string(),
            "fpi_per_1k_rows" => format!("{:.2}", run.fpi_per_1k()),
            "fpi_bytes" => own.fpi_bytes.to_string(),
            "checkpoints" => own.checkpoints.to_string(),
            _ => return None,
        })
    }

    fn more_files(pg: &Pg) -> Vec<(&'static str, String)> {
        let mut files = vec![
            (
                "pg_ids.csv",
                roundtrip::csv(&pg.own.roundtrip, pg.own.in_database.as_ref()),
            ),
            ("pg_created_at.csv", created_at::csv(&pg.own.created_at)),
        ];
        if !pg.own.generators.is_empty() {
            files.push(("pg_generators.csv", generators::CSV.csv(&pg.own.generators)));
        }
        if !pg.own.generator_order.is_empty() {
            files.push((
                "pg_generator_order.csv",
                generators::ORDER_CSV.csv(&pg.own.generator_order),
            ));
        }
        files
    }

    const TITLE: &'static str = "PostgreSQL";
    const CACHE_SETTING: &'static str = "shared_buffers";

    fn settings(small: &Server) -> Result<Vec<String>, Error> {
        let mut client = small.connect()?;
        let names = "fsync synchronous_commit full_page_writes wal_compression \
                     checkpoint_timeout max_wal_size wal_keep_size";
        (names.split_whitespace())
            .map(|name| {
                let value: String = client.query_one(&format!("SHOW {name}"), &[])?.get(0);
                Ok(format!("{name} = {value}"))
            })
            .collect()
    }

    /// Runs the PostgreSQL part: for every entry its own binary key with each server's cache,
    /// its text key, and a unique index (and `bytea` for `uuid` schemes) with the small cache;
    /// UUIDv7 with random low bits; several writers at once; round trips; the in-database
    /// generator; the `created_at` comparison.
    ///
    /// # Errors
    ///
    /// [`Error::Postgres`], or a scheme's error while generating ids.
    fn measure(job: &Job<'_>, small: &Server, servers: &[Server]) -> Result<Pg, Error> {
        let (entries, params, progress) = (job.entries, job.params, job.progress);
        let rows = params.pg_rows;
        let checkpoint_rows = rows.div_ceil(params.pg_checkpoints).max(params.commit_rows);
        let spec = |scheme, storage, server: &Server| Spec {
            run: server.run(scheme, storage, params),
            checkpoint_rows,
        };
        let mut out = Pg::default();
        let mut connections: Vec<postgres::Client> = servers
            .iter()
            .map(Server::connect)
            .collect::<Result<_, _>>()?;

        // Per scheme: its own key on each server, a unique index, text, and bytea for uuids.
        let uuid_typed = entries
            .iter()
            .filter(|e| Form::native(e.info().bits) == Form::Uuid)
            .count();
        let bar = progress.bar(
            "postgres",
            entries.len() * (servers.len() + 2) + uuid_typed + 2 * engine::CONCURRENT.len() + 4,
        );
        let mut v4_v7: (Option<Keys>, Option<Keys>) = (None, None);
        for entry in entries {
            bar.set_message(format!("{}: generating ids", entry.name()));
            let (scheme, ids) = engine::made_before(*entry, rows)?;
            let name = entry.name();
            let format = |id: &RawId| scheme.format_raw(id).map_err(Error::format(name));
            let native = Form::native(entry.info().bits);
            let native_keys = insert::to_keys(name, &ids, native, &format)?;
            let run = |i: usize, storage| spec(name, storage, &servers[i]);
            let mut matrix: Vec<(usize, Spec, Keys)> = (0..servers.len())
                .map(|i| (i, run(i, native.pk()), native_keys.clone()))
                .collect();
            matrix.push((0, run(0, PgStorage::UniqueIndex), native_keys.clone()));
            let text = insert::to_keys(name, &ids, Form::Text, &format)?;
            matrix.push((0, run(0, PgStorage::TextPk), text));
            if native == Form::Uuid {
                let bytea = insert::to_keys(name, &ids, Form::Bytea, &format)?;
                matrix.push((0, run(0, PgStorage::ByteaPk), bytea));
            }
            match name {
                "uuid-v4" => v4_v7.0 = Some(native_keys),
                "uuid-v7" => v4_v7.1 = Some(native_keys),
                _ => {}
            }
            drop(ids);
            let into = (&mut out.runs, &mut out.curve);
            one_writer_runs(matrix, &mut connections, &bar, Self::CACHE_SETTING, into)?;
        }

        // Several writers into one table.
        out.runs.extend(arrival_runs(
            job,
            &bar,
            |scheme, bits| spec(scheme, Form::native(bits).pk(), small),
            |scheme, bits, ids| {
                insert::to_keys(scheme, ids, Form::native(bits), &|_| Ok(String::new()))
            },
            || small.connect(),
            Error::PgSetup,
        )?);

        bar.set_message("ids one round trip at a time");
        out.own.roundtrip = roundtrip::measure(small, params)?;
        bar.inc(1);
        bar.set_message("Instagram's in-database generator");
        out.own.in_database = Some(roundtrip::in_database(
            small,
            i64::try_from(params.pg_in_db_ids).unwrap_or(i64::MAX),
        )?);
        bar.inc(1);
        bar.set_message("ids made inside the server: built in, PL/pgSQL, the idkit extension");
        let pg18 = job.pg18.map(Self::check).transpose()?;
        (out.own.generators, out.own.generators_missing) = generators::measure(
            small,
            pg18.as_ref(),
            i64::try_from(params.pg_in_db_ids).unwrap_or(i64::MAX),
        )?;
        out.own.generator_order = generators::order(
            small,
            out.own.generators_missing.is_none(),
            pg18.as_ref(),
            params.pg_in_db_ids,
        )?;
        bar.inc(1);
        if let (Some(v4), Some(v7)) = &v4_v7 {
            bar.set_message("created_at index against uuid-v7");
            out.own.created_at = created_at::measure(
                small,
                v4,
                v7,
                params.commit_rows,
                checkpoint_rows,
                params.pg_queries,
            )?;
        }
        bar.inc(1);

        progress.done(
            &bar,
            &engine::summary(Self::NAME, &out, rows, PgRun::splits),
        );
        Ok(out)
    }
}
