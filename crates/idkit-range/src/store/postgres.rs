//! The PostgreSQL store, for many hosts (feature `postgres`).

use idkit_core::connect::{self, postgres_failure as failure};

use super::{
    Interleave, Lease, Remote, Store, StoreError, check_lease, check_namespace, connection, lock,
    next_lease,
};

/// The PostgreSQL store: each lease is one `INSERT ... ON CONFLICT DO UPDATE ...
/// RETURNING` statement, atomic for every host that shares the database.
#[derive(Debug)]
pub struct PostgresStore(Remote<postgres::Client>);

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_ranges (
    namespace  TEXT PRIMARY KEY,
    max_id     BIGINT NOT NULL,
    block_size BIGINT NOT NULL,
    leased_at  TIMESTAMPTZ NOT NULL DEFAULT now()
)";

const INTERLEAVE_SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_range_interleave (
    namespace TEXT PRIMARY KEY,
    step      BIGINT NOT NULL,
    id_offset BIGINT NOT NULL
)";

impl PostgresStore {
    /// A store reached with libpq-style `params` (`host=127.0.0.1 port=5432 user=ids`) or a
    /// `postgres://` URL. Connects lazily: a store that is down now is not an error until a
    /// lease. A connection attempt gives up after 2 s unless `params` set `connect_timeout`:
    /// a host that drops packets would otherwise hold the leasing thread for the system's
    /// TCP timeout (about two minutes on Linux) on every attempt. A connection whose host
    /// stops acknowledging what it sent is given up after 10 s unless `params` set
    /// `tcp_user_timeout` (otherwise about 15 minutes of retransmissions on Linux). A lease
    /// waits at most 10 s for the namespace's row while another connection holds it locked
    /// (a transaction left open on `idkit_ranges`), then fails and is retried, unless the
    /// server, the role or `params` (`options=-c lock_timeout=...`) set `lock_timeout`
    /// (PostgreSQL's default, 0, waits for ever).
    pub fn new(params: &str) -> Self {
        Self(Remote::new(params))
    }

    fn connect(&self) -> Result<postgres::Client, StoreError> {
        let tables = [
            ("idkit_ranges", SCHEMA),
            ("idkit_range_interleave", INTERLEAVE_SCHEMA),
        ];
        connect::postgres(&self.0.address, &tables)
            .map_err(|e| StoreError::Unreachable(e.to_string()))
    }
}

impl Store for PostgresStore {
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError> {
        let size_i = check_lease(namespace, size)?;
        let mut guard = lock(&self.0.conn);
        let client = connection(&mut guard, || self.connect())?;
        let result = client.query_one(
            "INSERT INTO idkit_ranges AS r (namespace, max_id, block_size) VALUES ($1, $2, $2) \
             ON CONFLICT (namespace) DO UPDATE \
             SET max_id = r.max_id + EXCLUDED.block_size, block_size = EXCLUDED.block_size, \
                 leased_at = now() \
             RETURNING max_id",
            &[&namespace, &size_i],
        );
        match result {
            Ok(row) => {
                let new_max: i64 = row.get(0);
                let (lease, _) = next_lease(namespace, new_max - size_i, size)?;
                Ok(lease)
            }
            Err(e) => {
                if e.code() == Some(&postgres::error::SqlState::NUMERIC_VALUE_OUT_OF_RANGE) {
                    return Err(StoreError::Exhausted);
                }
                // A broken connection is dropped; the next lease reconnects.
                if e.is_closed() || e.as_db_error().is_none() {
                    *guard = None;
                }
                Err(StoreError::Unreachable(failure(&e)))
            }
        }
    }

    fn interleave(&self, namespace: &str, asked: Interleave) -> Result<Interleave, StoreError> {
        check_namespace(namespace).map_err(StoreError::Invalid)?;
        let mut guard = lock(&self.0.conn);
        let client = connection(&mut guard, || self.connect())?;
        // Two statements: the second reads the row another host's first may have written
        // while this one waited on it.
        let result = client
            .execute(
                "INSERT INTO idkit_range_interleave (namespace, step, id_offset) \
                 VALUES ($1, $2, $3) ON CONFLICT (namespace) DO NOTHING",
                &[
                    &namespace,
                    &asked.step.cast_signed(),
                    &asked.offset.cast_signed(),
                ],
            )
            .and_then(|_| {
                client.query_one(
                    "SELECT step, id_offset FROM idkit_range_interleave WHERE namespace = $1",
                    &[&namespace],
                )
            });
        match result {
            Ok(row) => Ok(Interleave {
                step: row.get::<_, i64>(0).cast_unsigned(),
                offset: row.get::<_, i64>(1).cast_unsigned(),
            }),
            Err(e) => {
                if e.is_closed() || e.as_db_error().is_none() {
                    *guard = None;
                }
                Err(StoreError::Unreachable(failure(&e)))
            }
        }
    }

    fn describe(&self) -> String {
        "postgres".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreError};

    /// A refused connection says why: the postgres crate's error names only what failed
    /// ("error connecting to server") and keeps the reason in its source.
    #[test]
    fn a_refused_connection_says_why() {
        let port = idkit_testkit::closed_port();
        let store = super::PostgresStore::new(&format!("host=127.0.0.1 port={port} user=idkit"));
        let e = store.lease("orders", 10).unwrap_err();
        assert!(matches!(e, StoreError::Unreachable(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("postgres: error connecting to server: "), "{e}");
        assert!(e.to_lowercase().contains("refused"), "{e}");
    }

    /// A server that never answers is given up after the connect timeout.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_server_that_never_answers_is_given_up_on() {
        let e = crate::store::gives_up_a_silent_server(|port| {
            super::PostgresStore::new(&format!("host=127.0.0.1 port={port} user=idkit"))
        });
        assert!(e.to_string().contains("error connecting to server"), "{e}");
    }
}
