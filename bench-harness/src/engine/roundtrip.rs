//! Ids a database hands out one round trip at a time, as every engine measures them: client
//! threads released together and stopped after a window, each with its own connection (or
//! one shared range allocator), and every id checked for repeats.

use std::sync::Arc;
use std::time::{Duration, Instant};

use idkit_core::IdScheme;
use idkit_range::{RangeAllocator, Store};
use serde::{Deserialize, Serialize};

use super::Label;
use super::insert::{Task, together};
use crate::Error;
use crate::table::{Table, figure, text};

/// One way of getting ids, at one client count (a row of `pg_ids.csv`, `mysql_ids.csv`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoundTrip {
    /// `insert_returning`, `nextval`, `auto_increment` or `range_allocator`.
    pub method: Label,
    /// Client threads, each with its own connection (the allocator: one shared allocator).
    pub clients: usize,
    /// Ids obtained.
    pub ids: u64,
    /// Wall time.
    pub seconds: f64,
    /// `ids / seconds`.
    pub ids_per_sec: f64,
    /// Ids obtained twice (must be 0).
    pub duplicates: u64,
}

/// The profile's round trips: one client, then as many as its writers, each for its window.
pub fn plan(params: &crate::Params) -> ([usize; 2], Duration) {
    let window = Duration::from_millis(params.pg_roundtrip_ms);
    ([1, params.pg_writers], window)
}

/// One client's work: given the moment to stop, the ids it got.
pub type Work = Box<dyn FnOnce(Instant) -> Result<Vec<u64>, Error> + Send>;

/// Runs `work` on one thread each, all released at once and stopped after `window`, and
/// counts what they got. A client that panics is `setup("a <method> client panicked")`,
/// the engine's setup error.
///
/// # Errors
///
/// The first client's error, or the panic above.
pub fn clients(
    method: &'static str,
    work: Vec<Work>,
    window: Duration,
    setup: fn(String) -> Error,
) -> Result<RoundTrip, Error> {
    let n = work.len();
    let tasks = work
        .into_iter()
        .map(|w| Box::new(move || w(Instant::now() + window)) as Task<Vec<u64>>)
        .collect();
    let (took, all) = together(tasks, &format!("{method} client"), setup)?;
    let seconds = took.as_secs_f64();
    let ids: usize = all.iter().map(Vec::len).sum();
    Ok(RoundTrip {
        method: Label(method),
        clients: n,
        ids: ids as u64,
        seconds,
        ids_per_sec: ids as f64 / seconds,
        duplicates: duplicates(all),
    })
}

/// `n` clients sharing one range allocator over `store` (namespace `namespace`) for
/// `window`. The caller removes the namespace's row afterwards.
///
/// # Errors
///
/// `setup("range allocator: ...")` when the allocator cannot be built or gives no id.
pub fn range_allocator<S: Store>(
    store: S,
    namespace: &str,
    n: usize,
    window: Duration,
    setup: fn(String) -> Error,
) -> Result<RoundTrip, Error> {
    let range = move |e: &dyn std::fmt::Display| setup(format!("range allocator: {e}"));
    let allocator = Arc::new(
        RangeAllocator::builder(store)
            .namespace(namespace)
            .build()
            .map_err(|e| range(&e))?,
    );
    // The first block is leased at build; wait for it so the run starts in steady state.
    allocator.next_id().map_err(|e| range(&e))?;
    let work = (0..n)
        .map(|_| {
            let allocator = allocator.clone();
            Box::new(move |until| {
                let mut ids = Vec::new();
                while Instant::now() < until {
                    // Check the clock once per 1,000 ids: the allocator takes nanoseconds.
                    for _ in 0..1000 {
                        ids.push(allocator.next_id().map_err(|e| range(&e))?);
                    }
                }
                Ok(ids)
            }) as Work
        })
        .collect();
    clients("range_allocator", work, window, setup)
}

/// The round trips as CSV (`pg_ids.csv`, `mysql_ids.csv`).
pub fn csv(rows: &[RoundTrip]) -> String {
    const CSV: Table<RoundTrip> = Table(&[
        text("method", |t| t.method.to_string()),
        figure("clients", |t| t.clients.to_string()),
        figure("ids", |t| t.ids.to_string()),
        figure("seconds", |t| format!("{:.4}", t.seconds)),
        figure("ids_per_sec", |t| format!("{:.0}", t.ids_per_sec)),
        figure("duplicates", |t| t.duplicates.to_string()),
    ]);
    CSV.csv(rows)
}

/// A namespace of the range allocator's table for one measurement of this process.
pub fn namespace(clients: usize) -> String {
    format!("idkit-bench-{}-{clients}", std::process::id())
}

/// Ids that appear more than once across `lists`. Each client's ids arrive in increasing
/// order (sorting them again costs one pass), so the lists are merged pairwise in linear
/// passes: a range allocator hands out hundreds of millions of ids in a window, too many to
/// hash in reasonable time.
pub fn duplicates(mut lists: Vec<Vec<u64>>) -> u64 {
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
