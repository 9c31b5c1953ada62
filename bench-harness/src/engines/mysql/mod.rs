//! The same insert runs in MySQL or MariaDB (InnoDB), measured with InnoDB's own counters:
//! page splits, merges and reorganizations (`information_schema.INNODB_METRICS`), leaf pages
//! and index sizes (`mysql.innodb_index_stats` after `ANALYZE TABLE`), redo bytes (the log
//! sequence number) and pages written (`Innodb_pages_written`). Also tables with secondary
//! indexes and the `created_at` question ([`shapes`]), and ids the database hands out one
//! round trip at a time ([`roundtrip`]).
//!
//! InnoDB keeps each table inside its primary key (a clustered index): the key decides where
//! every row goes, and every secondary index stores the key again. Two servers that differ
//! in `innodb_buffer_pool_size` give the "small" and "large" cache runs
//! (`scripts/report.sh --mysql` starts both); a single server takes every run as "small".
//! The harness needs a user that may `SET GLOBAL` (to enable and reset InnoDB's index
//! metrics) and read `mysql.innodb_index_stats`.

pub mod insert;
mod report;
pub mod roundtrip;
pub mod shapes;

use idkit_core::RawId;
use insert::{Keys, MyStorage, Spec};
use mysql::Conn;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::engine::insert::{StorageName, arrival_runs, one_writer_runs};
use crate::engine::roundtrip::RoundTrip;
use crate::engine::{self, BarPair, BarPanel, ByUrl, Charts, Engine, Job};

pub use insert::{MyCounters, MyCurvePoint, MyRun};

/// One MySQL or MariaDB server to measure on.
pub type Server = engine::Server<InnoDb>;

/// What an InnoDB server has beside what every engine's server has.
#[derive(Debug, Clone, Copy)]
pub struct InnoDbServer {
    /// `innodb_page_size`, bytes.
    pub page_size: u64,
}

/// The product name of a MariaDB server.
const MARIADB: &str = "MariaDB";

impl Server {
    /// MariaDB (which has the `UUID` column type from 10.7) rather than MySQL.
    pub fn mariadb(&self) -> bool {
        self.product == MARIADB
    }

    /// A new connection.
    ///
    /// # Errors
    ///
    /// [`Error::MySql`] when the server cannot be reached.
    pub fn connect(&self) -> Result<Conn, Error> {
        Ok(Conn::new(mysql::Opts::from_url(&self.url).map_err(
            |e| Error::MySqlSetup(format!("{}: {e}", self.url)),
        )?)?)
    }
}

/// Everything measured in InnoDB. Kept as `data/mysql.json`, so that a report run without a
/// server carries the last InnoDB figures forward, dated.
pub type My = engine::Results<MyStorage, MyCounters, MyOwn>;

/// What InnoDB measures beside its insert runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MyOwn {
    /// Tables with secondary indexes, and the `created_at` question.
    pub shapes: Vec<shapes::ShapeRun>,
    /// Ids one round trip at a time, and the range allocator.
    pub roundtrip: Vec<RoundTrip>,
}

impl My {
    /// The shape run of `setup` (one of [`shapes::SETUPS`]).
    pub fn shape(&self, setup: &str) -> Option<&shapes::ShapeRun> {
        self.own.shapes.iter().find(|s| s.setup == setup)
    }

    /// The three shape runs from `SETUPS[first]` on (0: the three keys under the same
    /// secondary indexes; 3: the `created_at` question), or `None` while any is missing.
    pub fn trio(&self, first: usize) -> Option<[&shapes::ShapeRun; 3]> {
        let [a, b, c] =
            [0, 1, 2].map(|i| shapes::SETUPS.get(first + i).and_then(|s| self.shape(s)));
        Some([a?, b?, c?])
    }
}

/// The scheme whose canonical text is also measured as a key.
pub const TEXT_SCHEMES: [&str; 2] = ["uuid-v7", "uuid-v4"];

/// The name of the `AUTO_INCREMENT` run.
pub const AUTO_INCREMENT: &str = "AUTO_INCREMENT";

/// InnoDB (MySQL, MariaDB) as an engine of the report.
#[derive(Debug)]
pub struct InnoDb;

impl InnoDb {
    /// Connects to `url`, reads its buffer pool, version and page size, and enables InnoDB's
    /// index metrics. Servers are named `small` and `large` by their buffer pools (a single
    /// server is `small`).
    ///
    /// # Errors
    ///
    /// [`Error::MySql`] for an unreachable server; [`Error::MySqlSetup`] for a malformed URL
    /// or a user that may not `SET GLOBAL innodb_monitor_enable` or read
    /// `mysql.innodb_index_stats`.
    pub fn check(url: &str) -> Result<Server, Error> {
        let opts =
            mysql::Opts::from_url(url).map_err(|e| Error::MySqlSetup(format!("{url}: {e}")))?;
        let mut conn = Conn::new(opts)?;
        let (pool, page, version): (i64, u64, String) = conn
            .query_first("SELECT @@innodb_buffer_pool_size, @@innodb_page_size, VERSION()")?
            .ok_or_else(|| Error::MySqlSetup(format!("{url}: no answer to SELECT")))?;
        conn.query_drop("SET GLOBAL innodb_monitor_enable = 'module_index'")
            .map_err(|e| {
                Error::MySqlSetup(format!(
                    "{url}: cannot enable InnoDB's index metrics (the user needs SUPER or \
                         SYSTEM_VARIABLES_ADMIN): {e}"
                ))
            })?;
        conn.query_drop("SELECT COUNT(*) FROM mysql.innodb_index_stats")
            .map_err(|e| {
                Error::MySqlSetup(format!(
                    "{url}: cannot read mysql.innodb_index_stats (grant SELECT on it): {e}"
                ))
            })?;
        let product = if version.to_ascii_lowercase().contains("mariadb") {
            MARIADB
        } else {
            <Self as Engine>::TITLE
        };
        Ok(Server::new(
            url,
            pool / 1024,
            product,
            version.split('-').next().unwrap_or(&version).to_owned(),
            InnoDbServer { page_size: page },
        ))
    }
}

impl Engine for InnoDb {
    const NAME: &'static str = "mysql";
    const BY_URL: Option<ByUrl<Self>> = Some(ByUrl {
        flag: "--mysql",
        throwaway: "two throwaway MariaDB servers",
        url_help: "Also measure in MySQL 8 or MariaDB (InnoDB) at this URL (a \
        user that may SET GLOBAL; twice for a small and a large innodb_buffer_pool_size).",
        check: Self::check,
        setup: Error::MySqlSetup,
    });
    const RUNS_FILE: &'static str = "btree_mysql";
    type ServerOwn = InnoDbServer;
    type Results = My;

    const CHARTS: Charts<MyRun> = Charts {
        curve_stem: "innodb_insert_curve",
        curve_title: |commit_rows, kib| {
            let mib = kib / 1024;
            format!(
                "InnoDB insert rate as the table grows: primary key, {commit_rows} rows per \
                 commit, buffer pool {mib} MiB"
            )
        },
        curve_panel: "InnoDB insert rate as the table grows (small buffer pool)",
        first: BarPair {
            stem: "innodb_splits_fill",
            title: |_| {
                "InnoDB page splits per 1,000 rows (INNODB_METRICS index_page_splits) and \
                    leaf fill of the primary key"
                    .to_owned()
            },
            panels: [
                BarPanel::linear("page splits per 1,000 rows", "splits", MyRun::splits_per_1k),
                BarPanel::percent("leaf fill", "leaf record bytes / leaf room", |b| {
                    b.leaf_fill
                }),
            ],
        },
        second: BarPair {
            stem: "innodb_redo",
            title: |_| {
                "InnoDB redo log and pages written per 1,000 rows, primary key, small buffer \
                    pool"
                    .to_owned()
            },
            panels: [
                BarPanel::log("redo per 1,000 rows", "KiB (log scale)", |b| {
                    b.wal_per_1k() / 1024.0
                }),
                BarPanel::linear("pages written per 1,000 rows", "pages", |b| {
                    b.own.pages_written as f64 * 1000.0 / b.rows.max(1) as f64
                }),
            ],
        },
    };

    /// Columns that mean what they mean in `btree_postgres.csv` keep their names
    /// (`wal_bytes` is InnoDB's redo log).
    const RUN_COLUMNS: &'static str = "engine,scheme,storage,sql_type,cache,writers,ids_made,\
        commit_rows,rows,seconds,rows_per_sec,file_bytes,bytes_per_row,table_bytes,index_bytes,\
        leaf_pages,leaf_fill,splits,splits_per_1k_rows,merges,reorgs,wal_bytes,\
        wal_bytes_per_1k_rows,pages_written,pages_per_commit,commits,cache_kib";

    fn own_cell(run: &MyRun, column: &str) -> Option<String> {
        let own = &run.own;
        Some(match column {
            "sql_type" => own.sql_type.as_str().replace(',', ";"),
            "splits" => own.splits.to_string(),
            "splits_per_1k_rows" => format!("{:.2}", run.splits_per_1k()),
            "merges" => own.merges.to_string(),
            "reorgs" => own.reorgs.to_string(),
            "pages_written" => own.pages_written.to_string(),
            "pages_per_commit" => format!("{:.2}", run.pages_per_commit()),
            _ => return None,
        })
    }

    fn more_files(my: &My) -> Vec<(&'static str, String)> {
        vec![
            ("mysql_ids.csv", engine::roundtrip::csv(&my.own.roundtrip)),
            ("mysql_shapes.csv", shapes::csv(&my.own.shapes)),
        ]
    }

    const TITLE: &'static str = "MySQL";
    const CACHE_SETTING: &'static str = "innodb_buffer_pool_size";

    fn settings(small: &Server) -> Result<Vec<String>, Error> {
        let mut conn = small.connect()?;
        let names = "innodb_flush_log_at_trx_commit innodb_doublewrite innodb_flush_method \
                     innodb_log_file_size innodb_page_size innodb_autoinc_lock_mode \
                     innodb_adaptive_hash_index";
        (names.split_whitespace())
            .map(|name| {
                let value: Option<String> =
                    conn.query_first(format!("SELECT CAST(@@{name} AS CHAR)"))?;
                Ok(format!("{name} = {}", value.unwrap_or_default()))
            })
            .collect()
    }

    /// Runs the InnoDB part: every entry keyed by its own binary column with each server's
    /// cache; MariaDB's `UUID` type for the `uuid` schemes and canonical text for
    /// [`TEXT_SCHEMES`] with the small cache; an `AUTO_INCREMENT` table; UUIDv7 with random low
    /// bits; one and several writers; the table shapes; round trips.
    ///
    /// # Errors
    ///
    /// [`Error::MySql`], or a scheme's error while generating ids.
    fn measure(job: &Job<'_>, small: &Server, servers: &[Server]) -> Result<My, Error> {
        let (entries, params, progress) = (job.entries, job.params, job.progress);
        let rows = params.pg_rows;
        let spec = |scheme, storage, server: &Server| Spec {
            run: server.run(scheme, storage, params),
            page_size: server.own.page_size,
        };
        let mut out = My::default();
        let mut connections: Vec<Conn> = servers
            .iter()
            .map(Server::connect)
            .collect::<Result<_, _>>()?;
        let uuid_typed = if small.mariadb() { 2 } else { 0 };
        let bar = progress.bar(
            "mysql",
            entries.len() * servers.len()
                + uuid_typed
                + TEXT_SCHEMES.len()
                + servers.len()
                + 2 * engine::CONCURRENT.len()
                + shapes::SETUPS.len()
                + 1,
        );
        let mut shape_keys: (Option<Keys>, Option<Keys>, Option<Keys>) = (None, None, None);
        for entry in entries {
            let name = entry.name();
            bar.set_message(format!("{name}: generating ids"));
            let (scheme, ids) = engine::made_before(*entry, rows)?;
            let format = |id: &RawId| scheme.format_raw(id).map_err(Error::format(name));
            let native =
                insert::to_keys(name, &ids, MyStorage::native(entry.info().bits), &format)?;
            let mut matrix: Vec<(usize, Keys)> =
                (0..servers.len()).map(|i| (i, native.clone())).collect();
            if small.mariadb() && matches!(name, "uuid-v4" | "uuid-v7") {
                matrix.push((0, insert::to_keys(name, &ids, MyStorage::UuidPk, &format)?));
            }
            if TEXT_SCHEMES.contains(&name) {
                matrix.push((0, insert::to_keys(name, &ids, MyStorage::TextPk, &format)?));
            }
            match name {
                "snowflake-twitter" => shape_keys.0 = Some(native.clone()),
                "uuid-v7" => shape_keys.1 = Some(native.clone()),
                "uuid-v4" => shape_keys.2 = Some(native.clone()),
                _ => {}
            }
            drop(ids);
            let runs = matrix
                .into_iter()
                .map(|(i, k)| (i, spec(name, k.storage, &servers[i]), k));
            let into = (&mut out.runs, &mut out.curve);
            one_writer_runs(runs, &mut connections, &bar, "buffer pool", into)?;
        }
        let auto_increment = servers.iter().enumerate().map(|(i, server)| {
            let run = spec(AUTO_INCREMENT, MyStorage::AutoIncrementPk, server);
            (i, run, insert::auto_increment(rows))
        });
        let into = (&mut out.runs, &mut out.curve);
        one_writer_runs(auto_increment, &mut connections, &bar, "buffer pool", into)?;

        out.runs.extend(arrival_runs(
            job,
            &bar,
            |scheme, bits| spec(scheme, MyStorage::native(bits), small),
            |scheme, bits, ids| {
                insert::to_keys(scheme, ids, MyStorage::native(bits), &|_| Ok(String::new()))
            },
            || small.connect(),
            Error::MySqlSetup,
        )?);

        if let (Some(s), Some(v7), Some(v4)) = &shape_keys {
            bar.set_message("secondary indexes and created_at");
            // Half the rows: three indexes on random keys in the small buffer pool run at a
            // few thousand rows a second.
            let half = |k: &Keys| Keys {
                values: k.values[..k.rows / 2].to_vec(),
                rows: k.rows / 2,
                ..k.clone()
            };
            out.own.shapes = shapes::measure(
                small,
                (&half(s), &half(v7), &half(v4)),
                params.commit_rows,
                params.pg_queries,
            )?;
        }
        bar.inc(shapes::SETUPS.len() as u64);

        bar.set_message("ids one round trip at a time");
        out.own.roundtrip = roundtrip::measure(small, params)?;
        bar.inc(1);

        progress.done(
            &bar,
            &engine::summary(Self::NAME, &out, rows, |r| r.own.splits),
        );
        Ok(out)
    }
}
