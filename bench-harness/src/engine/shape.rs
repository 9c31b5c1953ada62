//! Tables with more than a key, in any engine: the `created_at` question (a random key with
//! an index on the time, or a time-ordered key alone) and, where an engine measures them,
//! other secondary indexes. Each table is filled with the same keys, then "the latest 50
//! rows" is asked of it. The engine makes the tables and reads its own counters; the record
//! and the timing of the query are the same for every engine.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Label;
use crate::Error;

/// One table of a shape run in any engine (a row of `pg_created_at.csv`,
/// `mysql_shapes.csv`): the figures every engine measures, and its own (`own`: PostgreSQL's
/// checkpoints and query buffers, InnoDB's key, secondary indexes, splits and rows read),
/// flattened into the same record of the kept file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShapeRun<O> {
    /// What the table is, in a few words.
    pub setup: Label,
    /// Rows inserted.
    pub rows: usize,
    /// Rows per commit.
    pub commit_rows: usize,
    /// Insert rate, commits included (PostgreSQL's checkpoints excluded).
    pub rows_per_sec: f64,
    /// Log written (PostgreSQL's WAL, InnoDB's redo) per 1,000 rows.
    pub wal_per_1k: f64,
    /// The primary key (InnoDB: the clustered index, the rows), bytes.
    pub pk_bytes: u64,
    /// The table with every index, bytes.
    pub total_bytes: u64,
    /// The query, median of the timed runs, µs.
    pub query_us: f64,
    /// How many times the query was timed.
    pub queries: usize,
    /// The query.
    pub query: Label,
    /// The engine's own figures.
    #[serde(flatten)]
    pub own: O,
}

/// Times "the latest 50" on a table of `rows` rows `times` times (at least once) over
/// `conn`, each run `query(conn)` returning the rows it read back, and `after_first(conn)`
/// (not timed) once the first run is done. Gives the median wall time of the runs in µs
/// and how many ran.
///
/// # Errors
///
/// The first error of `query` or `after_first`; `setup` of a message when a run gives
/// other than 50 rows (all of them in a smaller table).
pub fn latest_50<C>(
    conn: &mut C,
    times: usize,
    rows: usize,
    query: impl Fn(&mut C) -> Result<usize, Error>,
    mut after_first: impl FnMut(&mut C) -> Result<(), Error>,
    setup: fn(String) -> Error,
) -> Result<(f64, usize), Error> {
    let mut us = Vec::with_capacity(times.max(1));
    for i in 0..times.max(1) {
        let t = Instant::now();
        let got = query(conn)?;
        us.push(t.elapsed().as_secs_f64() * 1e6);
        if got != rows.min(50) {
            return Err(setup(format!("the latest-50 query returned {got} rows")));
        }
        if i == 0 {
            after_first(conn)?;
        }
    }
    us.sort_by(f64::total_cmp);
    Ok((us[us.len() / 2], us.len()))
}

#[cfg(test)]
mod tests {
    use super::latest_50;
    use crate::Error;

    #[test]
    fn the_query_is_timed_as_asked_and_the_first_run_followed_once() {
        // The connection counts the runs; the step after the first run sees one.
        let (mut runs, mut seen) = (0, Vec::new());
        let (_, timed) = latest_50(
            &mut runs,
            5,
            1_000,
            |runs| {
                *runs += 1;
                Ok(50)
            },
            |runs| {
                seen.push(*runs);
                Ok(())
            },
            Error::PgSetup,
        )
        .unwrap();
        assert_eq!((runs, timed, seen), (5, 5, vec![1]));
        // Asked for none, it still runs once; a table of 20 rows gives 20.
        let mut runs = 0;
        let once = |runs: &mut usize| {
            *runs += 1;
            Ok(20)
        };
        let (_, timed) = latest_50(&mut runs, 0, 20, once, |_| Ok(()), Error::PgSetup).unwrap();
        assert_eq!((runs, timed), (1, 1));
    }

    #[test]
    fn a_run_that_reads_back_other_than_fifty_rows_is_a_setup_error() {
        let err = latest_50(&mut (), 3, 1_000, |_| Ok(49), |_| Ok(()), Error::MySqlSetup);
        let Err(Error::MySqlSetup(message)) = err else {
            panic!("{err:?}");
        };
        assert_eq!(message, "the latest-50 query returned 49 rows");
    }
}
