//! Ids the database hands out one round trip at a time: an `AUTO_INCREMENT` row per
//! transaction (the id read from the OK packet, as `LAST_INSERT_ID()` would give it), and the
//! range allocator leasing blocks from Leaf's table on the same server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use idkit_core::IdScheme;
use mysql::prelude::Queryable;

use super::Server;
use crate::Error;
use crate::pg::Label;
use crate::pg::roundtrip::{self, RoundTrip, Work};

/// `auto_increment` and `range_allocator` for `window` at each client count.
///
/// # Errors
///
/// [`Error::MySql`], or the range allocator's error.
pub fn measure(
    server: &Server,
    clients: &[usize],
    window: Duration,
) -> Result<Vec<RoundTrip>, Error> {
    let mut conn = server.connect()?;
    conn.query_drop(
        "CREATE OR REPLACE TABLE idkit_bench_ai(id BIGINT AUTO_INCREMENT PRIMARY KEY, \
         created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
    )
    .or_else(|_| {
        // MySQL has no CREATE OR REPLACE TABLE.
        conn.query_drop("DROP TABLE IF EXISTS idkit_bench_ai")?;
        conn.query_drop(
            "CREATE TABLE idkit_bench_ai(id BIGINT AUTO_INCREMENT PRIMARY KEY, \
             created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
        )
    })?;
    let mut out = Vec::new();
    for &n in clients {
        let mut work: Vec<Work<u64>> = Vec::new();
        for _ in 0..n {
            let mut conn = server.connect()?;
            work.push(Box::new(move |until| {
                let mut ids = Vec::new();
                while Instant::now() < until {
                    conn.query_drop("INSERT INTO idkit_bench_ai() VALUES ()")?;
                    ids.push(conn.last_insert_id());
                }
                Ok(ids)
            }));
        }
        let (seconds, all) = roundtrip::clients("auto_increment", work, window, Error::MySqlSetup)?;
        out.push(collect("auto_increment", n, seconds, all));
        out.push(range_allocator(server, n, window)?);
    }
    conn.query_drop("DROP TABLE idkit_bench_ai")?;
    Ok(out)
}

fn collect(method: &'static str, n: usize, seconds: f64, all: Vec<Vec<u64>>) -> RoundTrip {
    let ids: usize = all.iter().map(Vec::len).sum();
    RoundTrip {
        method: Label(method),
        clients: n,
        ids: ids as u64,
        seconds,
        ids_per_sec: ids as f64 / seconds,
        duplicates: duplicates(all),
    }
}

/// Ids that appear more than once across `lists`. Each client's ids arrive in increasing
/// order (sorting them again costs one pass), so the lists are merged pairwise in linear
/// passes: a range allocator hands out hundreds of millions of ids in a window, too many to
/// hash in reasonable time.
pub(crate) fn duplicates(mut lists: Vec<Vec<u64>>) -> u64 {
    for list in &mut lists {
        list.sort_unstable();
    }
    let mut dups = 0;
    while lists.len() > 1 {
        let (a, b) = (lists.swap_remove(0), lists.swap_remove(0));
        let mut merged = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => {
                    merged.push(a[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    merged.push(b[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    merged.push(a[i]);
                    dups += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        merged.extend_from_slice(&a[i..]);
        merged.extend_from_slice(&b[j..]);
        lists.push(merged);
    }
    // Repeats within one list.
    dups + lists
        .first()
        .map_or(0, |l| l.windows(2).filter(|w| w[0] == w[1]).count() as u64)
}

fn range_allocator(server: &Server, n: usize, window: Duration) -> Result<RoundTrip, Error> {
    let store = idkit_range::MySqlStore::new(&server.url);
    let namespace = format!("idkit-bench-{}-{n}", std::process::id());
    let range = |e: &dyn std::fmt::Display| Error::MySqlSetup(format!("range allocator: {e}"));
    let allocator = Arc::new(
        idkit_range::RangeAllocator::builder(store)
            .namespace(&namespace)
            .build()
            .map_err(|e| range(&e))?,
    );
    allocator.next_id().map_err(|e| range(&e))?;
    let work = (0..n)
        .map(|_| {
            let allocator = allocator.clone();
            Box::new(move |until| {
                let mut ids = Vec::new();
                while Instant::now() < until {
                    for _ in 0..1000 {
                        ids.push(allocator.next_id().map_err(|e| range(&e))?);
                    }
                }
                Ok(ids)
            }) as Work<u64>
        })
        .collect();
    let (seconds, all) = roundtrip::clients("range_allocator", work, window, Error::MySqlSetup)?;
    let mut conn = server.connect()?;
    conn.exec_drop("DELETE FROM idkit_ranges WHERE biz_tag = ?", (&namespace,))?;
    Ok(collect("range_allocator", n, seconds, all))
}

#[cfg(test)]
mod tests {
    use super::duplicates;

    #[test]
    fn duplicates_are_counted_across_and_within_lists() {
        assert_eq!(duplicates(vec![vec![1, 2, 3], vec![4, 5]]), 0);
        assert_eq!(duplicates(vec![vec![1, 2, 3], vec![3, 4], vec![0, 2]]), 2);
        assert_eq!(duplicates(vec![vec![5, 1, 5]]), 1);
        assert_eq!(duplicates(Vec::new()), 0);
    }
}
