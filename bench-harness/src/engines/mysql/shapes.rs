//! Tables with more than a key: every InnoDB secondary index stores the primary key beside
//! its own column, so the key's width is paid once per index; and the `created_at` question
//! (a random key plus a time index, or a time-ordered key alone).

use std::time::{Duration, Instant};

use mysql::Value;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};

use super::Server;
use super::insert::{Keys, Mark, index_metrics, index_stats, mark};
use crate::Error;
use crate::engine::Label;
use crate::engine::shape::{self, latest_50};
use crate::table::{Table, figure, text};

/// The table these runs write, dropped before and after.
pub const TABLE: &str = "idkit_bench_shape";

/// One table shape (a row of `mysql_shapes.csv`).
pub type ShapeRun = shape::ShapeRun<MyShape>;

/// InnoDB's own figures of a table shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MyShape {
    /// The scheme of its key.
    pub scheme: Label,
    /// The key's SQL type.
    pub key_type: Label,
    /// The secondary indexes, by column (`-` for none).
    pub secondary: Label,
    /// Wall time of all inserts and commits.
    pub seconds: f64,
    /// Page splits, every index of the table.
    pub splits: u64,
    /// The secondary indexes together, bytes.
    pub secondary_bytes: u64,
    /// Leaf pages of the secondary indexes together.
    pub secondary_leaf_pages: u64,
    /// Rows the storage engine read for one run of the query (`Handler_read_%`).
    pub query_rows_read: u64,
}

/// A shape to measure.
struct Shape {
    setup: &'static str,
    secondary: &'static [&'static str],
    order_by: &'static str,
}

/// The wall clock now as a `DATETIME(6)` value (UTC).
fn now_datetime() -> Value {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = idkit_core::time::civil_from_days(secs / 86_400);
    let s = secs % 86_400;
    let part = |v: u64| u8::try_from(v).unwrap_or(0);
    Value::Date(
        u16::try_from(y).unwrap_or(u16::MAX),
        part(m),
        part(d),
        part(s / 3600),
        part(s / 60 % 60),
        part(s % 60),
        since.subsec_micros(),
    )
}

/// Inserts `keys` into a table of `shape`: `(id, created_at DATETIME(6), account INT)`,
/// `created_at` the wall clock at each batch and `account` one of 10,000, the secondary
/// indexes of the shape; then times the shape's "latest 50" query `queries` times.
fn run(
    server: &Server,
    scheme: &'static str,
    keys: &Keys,
    shape: &Shape,
    commit_rows: usize,
    queries: usize,
) -> Result<ShapeRun, Error> {
    let mut conn = server.connect()?;
    conn.query_drop(format!("DROP TABLE IF EXISTS {TABLE}"))?;
    let indexes: String = shape
        .secondary
        .iter()
        .map(|c| format!(", KEY by_{c} ({c})"))
        .collect();
    conn.query_drop(format!(
        "CREATE TABLE {TABLE}(id {} NOT NULL PRIMARY KEY, created_at DATETIME(6) NOT NULL, \
         account INT UNSIGNED NOT NULL{indexes}) ENGINE=InnoDB",
        keys.sql_type
    ))?;
    let before: Mark = mark(&mut conn, true)?;
    let mut busy = Duration::ZERO;
    let mut done = 0;
    let mut account: u32 = 0x9E37_79B9;
    while done < keys.rows {
        let end = (done + commit_rows).min(keys.rows);
        let created_at = now_datetime();
        let mut params = Vec::with_capacity((end - done) * 3);
        for key in &keys.values[done..end] {
            // A xorshift sequence spreads the rows over 10,000 accounts.
            account ^= account << 13;
            account ^= account >> 17;
            account ^= account << 5;
            params.extend([
                key.clone(),
                created_at.clone(),
                Value::UInt(u64::from(account % 10_000)),
            ]);
        }
        let sql = format!(
            "INSERT INTO {TABLE}(id, created_at, account) VALUES {}",
            vec!["(?, ?, ?)"; end - done].join(",")
        );
        let t = Instant::now();
        let stmt = conn.prep(sql)?;
        conn.exec_drop(&stmt, params)?;
        busy += t.elapsed();
        done = end;
    }
    let after = mark(&mut conn, false)?;
    let (splits, _, _) = index_metrics(&mut conn)?;
    let stats = index_stats(&mut conn, TABLE)?;
    let page = server.own.page_size;
    let pk_bytes = stats.first().map_or(0, |s| s.2) * page;
    let secondary_bytes: u64 = stats.iter().skip(1).map(|s| s.2 * page).sum();
    let secondary_leaf_pages: u64 = stats.iter().skip(1).map(|s| s.1).sum();

    let query = format!(
        "SELECT id FROM {TABLE} ORDER BY {} DESC LIMIT 50",
        shape.order_by
    );
    conn.query_drop("FLUSH STATUS")?;
    let mut rows_read = 0;
    let (query_us, timed) = latest_50(
        &mut conn,
        queries,
        keys.rows,
        |conn| Ok(conn.query::<Value, _>(&query)?.len()),
        |conn| {
            let handler: Vec<(String, u64)> =
                conn.query("SHOW SESSION STATUS LIKE 'Handler_read%'")?;
            rows_read = handler.iter().map(|(_, v)| v).sum();
            Ok(())
        },
        Error::MySqlSetup,
    )?;
    conn.query_drop(format!("DROP TABLE {TABLE}"))?;
    let seconds = busy.as_secs_f64();
    Ok(ShapeRun {
        setup: Label(shape.setup),
        rows: keys.rows,
        commit_rows,
        rows_per_sec: keys.rows as f64 / seconds,
        wal_per_1k: after.lsn_since(&before) as f64 * 1000.0 / keys.rows.max(1) as f64,
        pk_bytes,
        total_bytes: pk_bytes + secondary_bytes,
        query_us,
        queries: timed,
        query: query.into(),
        own: MyShape {
            scheme: Label(scheme),
            key_type: keys.sql_type,
            secondary: if shape.secondary.is_empty() {
                Label("-")
            } else {
                shape.secondary.join(", ").into()
            },
            seconds,
            splits,
            secondary_bytes,
            secondary_leaf_pages,
            query_rows_read: rows_read,
        },
    })
}

/// Setups of [`measure`], in order: the key-width pair and the `created_at` trio.
pub const SETUPS: [&str; 6] = [
    "64-bit key and two secondary indexes",
    "16-byte time-ordered key and two secondary indexes",
    "16-byte random key and two secondary indexes",
    "uuid-v4 key and a created_at index",
    "uuid-v7 key alone",
    "uuid-v4 key without the created_at index",
];

/// The shapes: `snowflake` (64-bit ids), `v7` and `v4` (16-byte ids) as keys.
///
/// # Errors
///
/// [`Error::MySql`].
pub fn measure(
    server: &Server,
    (snowflake, v7, v4): (&Keys, &Keys, &Keys),
    commit_rows: usize,
    queries: usize,
) -> Result<Vec<ShapeRun>, Error> {
    const TWO: &[&str] = &["created_at", "account"];
    let plan: [(&'static str, &Keys, &'static [&'static str], &'static str); 6] = [
        ("snowflake-twitter", snowflake, TWO, "created_at"),
        ("uuid-v7", v7, TWO, "created_at"),
        ("uuid-v4", v4, TWO, "created_at"),
        ("uuid-v4", v4, &["created_at"], "created_at"),
        ("uuid-v7", v7, &[], "id"),
        ("uuid-v4", v4, &[], "created_at"),
    ];
    let mut out = Vec::new();
    for (setup, (scheme, keys, secondary, order_by)) in SETUPS.iter().zip(plan) {
        let shape = Shape {
            setup,
            secondary,
            order_by,
        };
        out.push(run(server, scheme, keys, &shape, commit_rows, queries)?);
    }
    Ok(out)
}

/// `mysql_shapes.csv`.
pub fn csv(runs: &[ShapeRun]) -> String {
    const CSV: Table<ShapeRun> = Table(&[
        text("setup", |c| c.setup.to_string()),
        text("scheme", |c| c.own.scheme.to_string()),
        text("key_type", |c| c.own.key_type.to_string()),
        text("secondary", |c| format!("\"{}\"", c.own.secondary)),
        figure("rows", |c| c.rows.to_string()),
        figure("commit_rows", |c| c.commit_rows.to_string()),
        figure("rows_per_sec", |c| format!("{:.0}", c.rows_per_sec)),
        figure("wal_bytes_per_1k_rows", |c| format!("{:.0}", c.wal_per_1k)),
        figure("splits", |c| c.own.splits.to_string()),
        figure("pk_bytes", |c| c.pk_bytes.to_string()),
        figure("secondary_bytes", |c| c.own.secondary_bytes.to_string()),
        figure("secondary_leaf_pages", |c| {
            c.own.secondary_leaf_pages.to_string()
        }),
        figure("total_bytes", |c| c.total_bytes.to_string()),
        figure("query_us", |c| format!("{:.1}", c.query_us)),
        figure("query_runs", |c| c.queries.to_string()),
        figure("query_rows_read", |c| c.own.query_rows_read.to_string()),
        text("query", |c| c.query.to_string()),
    ]);
    CSV.csv(runs)
}
