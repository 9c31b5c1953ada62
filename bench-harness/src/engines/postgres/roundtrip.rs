//! Ids as users meet them from a database: one round trip per id (`INSERT ... RETURNING`
//! on an identity column, `nextval`), the range allocator leasing blocks from the same
//! server, and Instagram's PL/pgSQL generator run inside it.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Server, count};
use crate::engine::Label;
use crate::engine::roundtrip::{self, RoundTrip, Work};
use crate::{Error, Params};

/// Instagram's in-database generator (`idkit sql snowflake-instagram --shard 1`), one
/// statement making `ids` ids.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InDatabase {
    /// The layout.
    pub scheme: Label,
    /// Ids made by `SELECT count(f()) FROM generate_series(1, ids)`.
    pub ids: u64,
    /// Wall time of that statement.
    pub seconds: f64,
    /// `ids / seconds`.
    pub ids_per_sec: f64,
    /// Ids in a second statement of the same size that were not distinct.
    pub duplicates: u64,
    /// The most ids that second statement made in one millisecond.
    pub max_per_ms: u64,
    /// The layout's sequence values per millisecond (the most before ids repeat).
    pub per_ms_cap: u64,
}

/// The function name used in the measurement.
pub const FUNCTION: &str = "idkit_bench_next_id";

/// The methods of one round trip per id, and their statements.
const METHODS: [(&str, &str); 2] = [
    (
        "insert_returning",
        "INSERT INTO idkit_bench_ai DEFAULT VALUES RETURNING id",
    ),
    ("nextval", "SELECT nextval('idkit_bench_seq')"),
];

/// Each method at each of the profile's client counts, for its window ([`roundtrip::plan`]).
///
/// # Errors
///
/// [`Error::Postgres`], or the range allocator's error.
pub fn measure(server: &Server, params: &Params) -> Result<Vec<RoundTrip>, Error> {
    let (clients, window) = roundtrip::plan(params);
    let mut client = server.connect()?;
    client.batch_execute(
        "DROP TABLE IF EXISTS idkit_bench_ai; \
         CREATE TABLE idkit_bench_ai(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
             created_at timestamptz NOT NULL DEFAULT now()); \
         DROP SEQUENCE IF EXISTS idkit_bench_seq; CREATE SEQUENCE idkit_bench_seq",
    )?;
    let mut out = Vec::new();
    for n in clients {
        for (method, sql) in METHODS {
            out.push(per_connection(server, method, sql, n, window)?);
        }
        out.push(range_allocator(server, n, window)?);
    }
    client.batch_execute("DROP TABLE idkit_bench_ai; DROP SEQUENCE idkit_bench_seq")?;
    Ok(out)
}

fn per_connection(
    server: &Server,
    method: &'static str,
    sql: &'static str,
    n: usize,
    window: Duration,
) -> Result<RoundTrip, Error> {
    let mut work: Vec<Work> = Vec::new();
    for _ in 0..n {
        let mut client = server.connect()?;
        let stmt = client.prepare(sql)?;
        work.push(Box::new(move |until| {
            let mut ids = Vec::new();
            while Instant::now() < until {
                ids.push(count(client.query_one(&stmt, &[])?.get(0)));
            }
            Ok(ids)
        }));
    }
    roundtrip::clients(method, work, window, Error::PgSetup)
}

fn range_allocator(server: &Server, n: usize, window: Duration) -> Result<RoundTrip, Error> {
    let namespace = roundtrip::namespace(n);
    let store = idkit_range::PostgresStore::new(&server.url);
    let run = roundtrip::range_allocator(store, &namespace, n, window, Error::PgSetup)?;
    let mut client = server.connect()?;
    client.execute(
        "DELETE FROM idkit_ranges WHERE namespace = $1",
        &[&namespace],
    )?;
    Ok(run)
}

/// Loads Instagram's function (shard 1) and times it making `ids` ids in one statement;
/// a second statement of the same size counts repeated ids and the busiest millisecond.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn in_database(server: &Server, ids: i64) -> Result<InDatabase, Error> {
    let layout = idkit_snowflake::preset("snowflake-instagram")
        .ok_or_else(|| Error::PgSetup("no snowflake-instagram layout".to_owned()))?;
    let text = idkit_snowflake::sql::plpgsql(layout, &[("shard", 1)], FUNCTION)
        .map_err(|e| Error::PgSetup(e.to_string()))?;
    let mut client = server.connect()?;
    client.batch_execute(&format!(
        "DROP FUNCTION IF EXISTS {FUNCTION}(); DROP SEQUENCE IF EXISTS {FUNCTION}_seq;"
    ))?;
    client.batch_execute(&text)?;
    let start = Instant::now();
    client.query_one(
        &format!("SELECT count({FUNCTION}()) FROM generate_series(1, $1::bigint)"),
        &[&ids],
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let shift = layout.time().shift;
    let row = client.query_one(
        &format!(
            "WITH ids AS MATERIALIZED (SELECT {FUNCTION}() AS id FROM generate_series(1, $1::bigint)) \
             SELECT count(*) - count(DISTINCT id), \
                    (SELECT max(c) FROM (SELECT count(*) AS c FROM ids GROUP BY id >> {shift}) m) \
             FROM ids"
        ),
        &[&ids],
    )?;
    client.batch_execute(&format!(
        "DROP FUNCTION {FUNCTION}(); DROP SEQUENCE {FUNCTION}_seq;"
    ))?;
    Ok(InDatabase {
        scheme: Label(layout.name()),
        ids: count(ids),
        seconds,
        ids_per_sec: ids as f64 / seconds,
        duplicates: count(row.get(0)),
        max_per_ms: count(row.get(1)),
        per_ms_cap: layout.sequence().max() + 1,
    })
}

/// `pg_ids.csv`: the round trips, then the in-database run as one more line.
pub fn csv(rows: &[RoundTrip], in_database: Option<&InDatabase>) -> String {
    use std::fmt::Write as _;
    let mut csv = roundtrip::csv(rows);
    if let Some(d) = in_database {
        let _ = writeln!(
            csv,
            "in_database_{},1,{},{:.4},{:.0},{}",
            d.scheme, d.ids, d.seconds, d.ids_per_sec, d.duplicates
        );
    }
    csv
}
