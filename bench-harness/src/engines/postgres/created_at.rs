//! "If the id were random (UUIDv4) you'd need a separate `created_at` index": a uuid-v4 key
//! plus a `created_at` index against a uuid-v7 key alone, for the "latest 50 rows" query.
//! Both tables carry the same `created_at` column; only the v4 table indexes it, since a v7
//! key is already in creation order.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::insert::{Keys, wal_between, wal_mark};
use super::{Server, count};
use crate::Error;
use crate::engine::Label;
use crate::engine::insert::TABLE;
use crate::engine::shape::{ShapeRun, latest_50};
use crate::table::{Table, figure, text};

/// One table of the comparison (a row of `pg_created_at.csv`): `uuid-v4 + created_at
/// index`, `uuid-v7`, or `uuid-v4 without index` (the query without help).
pub type CreatedAtRun = ShapeRun<PgShape>;

/// PostgreSQL's own figures of a created_at table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PgShape {
    /// `CHECKPOINT`s issued during the inserts (not timed).
    pub checkpoints: u64,
    /// The `created_at` index's size (0 without one).
    pub created_at_bytes: u64,
    /// Buffers the query touched (shared hit + read), from `EXPLAIN (ANALYZE, BUFFERS)`.
    pub query_buffers: u64,
}

/// The three setups, each inserting the same `v4` or `v7` keys in commits of `commit_rows`
/// with a `CHECKPOINT` every `checkpoint_rows` rows, the query timed `queries` times.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn measure(
    server: &Server,
    v4: &Keys,
    v7: &Keys,
    commit_rows: usize,
    checkpoint_rows: usize,
    queries: usize,
) -> Result<Vec<CreatedAtRun>, Error> {
    let mut client = server.connect()?;
    let latest_by = |column: &str| {
        Label::from(format!(
            "SELECT * FROM {TABLE} ORDER BY {column} DESC LIMIT 50"
        ))
    };
    let (latest_by_time, latest_by_id) = (latest_by("created_at"), latest_by("id"));
    let setups: [(&'static str, &Keys, bool, Label); 3] = [
        ("uuid-v4 + created_at index", v4, true, latest_by_time),
        ("uuid-v7", v7, false, latest_by_id),
        ("uuid-v4 without index", v4, false, latest_by_time),
    ];
    let mut out = Vec::new();
    for (setup, keys, index, query) in setups {
        client.batch_execute(&format!(
            "DROP TABLE IF EXISTS {TABLE}; \
             CREATE TABLE {TABLE}(id uuid PRIMARY KEY, created_at timestamptz NOT NULL, \
                 payload int NOT NULL) WITH (autovacuum_enabled = false);"
        ))?;
        if index {
            client.batch_execute(&format!(
                "CREATE INDEX {TABLE}_created_at ON {TABLE}(created_at)"
            ))?;
        }
        client.batch_execute("CHECKPOINT")?;
        let before = wal_mark(&mut client)?;
        let stmt = client.prepare(&format!(
            "INSERT INTO {TABLE}(id, created_at, payload) \
             SELECT u, clock_timestamp(), 0 FROM unnest($1::uuid[]) u"
        ))?;
        let Keys::Uuid(ids) = keys else {
            return Err(Error::PgSetup("created_at runs need uuid keys".to_owned()));
        };
        // As the insert runs: a CHECKPOINT (not timed) every `checkpoint_rows` rows.
        let mut busy = std::time::Duration::ZERO;
        let (mut done, mut checkpoints) = (0, 0);
        for chunk in ids.chunks(commit_rows) {
            let t = Instant::now();
            client.execute(&stmt, &[&chunk])?;
            busy += t.elapsed();
            let end = done + chunk.len();
            if super::insert::checkpoint_due(done, end, checkpoint_rows, ids.len()) {
                client.batch_execute("CHECKPOINT")?;
                checkpoints += 1;
            }
            done = end;
        }
        let seconds = busy.as_secs_f64();
        let after = wal_mark(&mut client)?;
        let wal = wal_between(&mut client, &before, &after)?;
        client.batch_execute(&format!("ANALYZE {TABLE}"))?;
        let sizes = client.query_one(
            &format!(
                "SELECT pg_relation_size('{TABLE}_pkey'), \
                 coalesce(pg_relation_size(to_regclass('{TABLE}_created_at')), 0), \
                 pg_total_relation_size('{TABLE}')"
            ),
            &[],
        )?;
        let query_stmt = client.prepare(query.as_str())?;
        let (query_us, timed) = latest_50(
            &mut client,
            queries,
            ids.len(),
            |client| Ok(client.query(&query_stmt, &[])?.len()),
            |_| Ok(()),
            Error::PgSetup,
        )?;
        let plan = client.query(&format!("EXPLAIN (ANALYZE, BUFFERS) {query}"), &[])?;
        // The top node's "Buffers: shared hit=N read=M" line comes first.
        let buffers = plan
            .iter()
            .map(|r| r.get::<_, String>(0))
            .find(|line| line.trim_start().starts_with("Buffers:"))
            .map_or(0, |line| buffer_count(&line));
        out.push(CreatedAtRun {
            setup: Label(setup),
            rows: ids.len(),
            commit_rows,
            rows_per_sec: ids.len() as f64 / seconds,
            wal_per_1k: wal.bytes as f64 * 1000.0 / ids.len().max(1) as f64,
            pk_bytes: count(sizes.get(0)),
            total_bytes: count(sizes.get(2)),
            query_us,
            queries: timed,
            query,
            own: PgShape {
                checkpoints,
                created_at_bytes: count(sizes.get(1)),
                query_buffers: buffers,
            },
        });
    }
    client.batch_execute(&format!("DROP TABLE {TABLE}"))?;
    Ok(out)
}

/// The shared `hit` and `read` counts of an `EXPLAIN` "Buffers:" line, added.
fn buffer_count(line: &str) -> u64 {
    // "shared hit=5 read=2, temp read=3": the shared part comes before the first comma.
    let shared = line.split(',').next().unwrap_or("");
    shared
        .split_whitespace()
        .filter_map(|word| {
            let (key, value) = word.split_once('=')?;
            matches!(key, "hit" | "read").then(|| value.parse::<u64>().ok())?
        })
        .sum()
}

/// `pg_created_at.csv`.
pub fn csv(runs: &[CreatedAtRun]) -> String {
    const CSV: Table<CreatedAtRun> = Table(&[
        text("setup", |c| c.setup.to_string()),
        figure("rows", |c| c.rows.to_string()),
        figure("commit_rows", |c| c.commit_rows.to_string()),
        figure("checkpoints", |c| c.own.checkpoints.to_string()),
        figure("rows_per_sec", |c| format!("{:.0}", c.rows_per_sec)),
        figure("wal_bytes_per_1k_rows", |c| format!("{:.0}", c.wal_per_1k)),
        figure("pk_bytes", |c| c.pk_bytes.to_string()),
        figure("created_at_bytes", |c| c.own.created_at_bytes.to_string()),
        figure("total_bytes", |c| c.total_bytes.to_string()),
        figure("query_us", |c| format!("{:.1}", c.query_us)),
        figure("query_runs", |c| c.queries.to_string()),
        figure("query_buffers", |c| c.own.query_buffers.to_string()),
        text("query", |c| c.query.to_string()),
    ]);
    CSV.csv(runs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffers_add_hits_and_reads() {
        // The form EXPLAIN (ANALYZE, BUFFERS) prints in PostgreSQL 15.
        assert_eq!(super::buffer_count("  Buffers: shared hit=5 read=2"), 7);
        assert_eq!(super::buffer_count("Buffers: shared hit=53"), 53);
        assert_eq!(
            super::buffer_count("Buffers: shared hit=1 read=2, temp read=9"),
            3
        );
    }
}
