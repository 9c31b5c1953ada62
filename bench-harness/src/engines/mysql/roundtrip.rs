//! Ids the database hands out one round trip at a time: an `AUTO_INCREMENT` row per
//! transaction (the id read from the OK packet, as `LAST_INSERT_ID()` would give it), and the
//! range allocator leasing blocks from Leaf's table on the same server.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::Server;
use crate::engine::roundtrip::{self, RoundTrip, Work};
use crate::{Error, Params};

/// `auto_increment` and `range_allocator` at each of the profile's client counts, for its
/// window ([`roundtrip::plan`]).
///
/// # Errors
///
/// [`Error::MySql`], or the range allocator's error.
pub fn measure(server: &Server, params: &Params) -> Result<Vec<RoundTrip>, Error> {
    let (clients, window) = roundtrip::plan(params);
    let mut conn = server.connect()?;
    conn.query_drop("DROP TABLE IF EXISTS idkit_bench_ai")?;
    conn.query_drop(
        "CREATE TABLE idkit_bench_ai(id BIGINT AUTO_INCREMENT PRIMARY KEY, \
         created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB",
    )?;
    let mut out = Vec::new();
    for n in clients {
        let mut work: Vec<Work> = Vec::new();
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
        out.push(roundtrip::clients(
            "auto_increment",
            work,
            window,
            Error::MySqlSetup,
        )?);
        out.push(range_allocator(server, n, window)?);
    }
    conn.query_drop("DROP TABLE idkit_bench_ai")?;
    Ok(out)
}

fn range_allocator(server: &Server, n: usize, window: Duration) -> Result<RoundTrip, Error> {
    let namespace = roundtrip::namespace(n);
    let store = idkit_range::MySqlStore::new(&server.url);
    let run = roundtrip::range_allocator(store, &namespace, n, window, Error::MySqlSetup)?;
    let mut conn = server.connect()?;
    conn.exec_drop("DELETE FROM idkit_ranges WHERE biz_tag = ?", (&namespace,))?;
    Ok(run)
}
