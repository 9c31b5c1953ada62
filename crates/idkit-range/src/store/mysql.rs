//! The MySQL / MariaDB store, for many hosts (feature `mysql`): Meituan Leaf's segment
//! table, one row per namespace.

use mysql::prelude::Queryable;

use super::{
    Interleave, Lease, Remote, Store, StoreError, check_lease, check_namespace, connection, lock,
    next_lease,
};

/// The MySQL / MariaDB store (InnoDB). A lease is one statement that moves the namespace's
/// counter and records the new value as the connection's `LAST_INSERT_ID`, then
/// `SELECT LAST_INSERT_ID()` on the same connection reads it back:
///
/// ```sql
/// INSERT INTO idkit_ranges (biz_tag, max_id, step) VALUES (?, LAST_INSERT_ID(?), ?)
/// ON DUPLICATE KEY UPDATE max_id = LAST_INSERT_ID(max_id + VALUES(step)), step = VALUES(step)
/// ```
///
/// The row lock makes the increment atomic across hosts, and the value read back is the
/// one this statement wrote (`LAST_INSERT_ID` is kept per connection), so two servers can
/// never receive the same block. An `UPDATE` committed before a separate `SELECT max_id`
/// would read whatever another server wrote in between.
#[derive(Debug)]
pub struct MySqlStore(Remote<mysql::Conn>);

/// Leaf's `leaf_alloc` shape: tag, max id, step, update time.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_ranges (
    biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
    max_id      BIGINT NOT NULL,
    step        BIGINT NOT NULL,
    update_time TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB";

/// Each namespace's interleave ([`Store::interleave`]), beside Leaf's table.
const INTERLEAVE_SCHEMA: &str = "CREATE TABLE IF NOT EXISTS idkit_range_interleave (
    biz_tag   VARCHAR(128) NOT NULL PRIMARY KEY,
    step      BIGINT NOT NULL,
    id_offset BIGINT NOT NULL
) ENGINE=InnoDB";

const LEASE: &str = "INSERT INTO idkit_ranges (biz_tag, max_id, step) VALUES (?, LAST_INSERT_ID(?), ?) \
     ON DUPLICATE KEY UPDATE max_id = LAST_INSERT_ID(max_id + VALUES(step)), step = VALUES(step)";

/// MySQL's "BIGINT value is out of range" (ER_DATA_OUT_OF_RANGE) and "Out of range value for
/// column" (ER_WARN_DATA_OUT_OF_RANGE, an error in strict mode).
const OUT_OF_RANGE: [u16; 2] = [1690, 1264];

impl MySqlStore {
    /// A store reached at `url` (`mysql://user:password@host:3306/database`). Connects
    /// lazily: a store that is down now is not an error until a lease. A connection attempt
    /// gives up after 2 s unless `url` sets `tcp_connect_timeout_ms`: a host that drops
    /// packets would otherwise hold the leasing thread for the system's TCP timeout (about
    /// two minutes on Linux) on every attempt. A connection whose host stops acknowledging
    /// what it sent is given up after 10 s unless `url` sets `tcp_user_timeout_ms`
    /// (otherwise about 15 minutes of retransmissions on Linux). A lease waits for the
    /// namespace's row while another connection holds it locked for the server's
    /// `innodb_lock_wait_timeout` (50 s by default), then fails and is retried.
    pub fn new(url: &str) -> Self {
        Self(Remote::new(url))
    }

    fn connect(&self) -> Result<mysql::Conn, StoreError> {
        let unreachable =
            |e: &dyn std::fmt::Display| StoreError::Unreachable(format!("mysql: {e}"));
        let opts = idkit_core::connect::mysql_options(&self.0.address)
            .map_err(|e| StoreError::Unreachable(e.to_string()))?;
        let mut conn = mysql::Conn::new(opts).map_err(|e| unreachable(&e))?;
        conn.query_drop(SCHEMA).map_err(|e| unreachable(&e))?;
        conn.query_drop(INTERLEAVE_SCHEMA)
            .map_err(|e| unreachable(&e))?;
        Ok(conn)
    }
}

impl Store for MySqlStore {
    fn lease(&self, namespace: &str, size: u64) -> Result<Lease, StoreError> {
        let size_i = check_lease(namespace, size)?;
        let mut guard = lock(&self.0.conn);
        let conn = connection(&mut guard, || self.connect())?;
        let result = conn
            .exec_drop(LEASE, (namespace, size_i, size_i))
            .and_then(|()| conn.query_first::<u64, _>("SELECT LAST_INSERT_ID()"));
        match result {
            Ok(Some(new_max)) => {
                let new_max = i64::try_from(new_max).map_err(|_| StoreError::Exhausted)?;
                let (lease, _) = next_lease(namespace, new_max - size_i, size)?;
                Ok(lease)
            }
            Ok(None) => Err(StoreError::Unreachable(
                "mysql: SELECT LAST_INSERT_ID() returned no row".to_owned(),
            )),
            // Past 2^63 - 1, or a negative counter (LAST_INSERT_ID reads its argument as
            // unsigned): which one, the row says.
            Err(mysql::Error::MySqlError(e)) if OUT_OF_RANGE.contains(&e.code) => {
                let current: Option<i64> = conn
                    .exec_first(
                        "SELECT max_id FROM idkit_ranges WHERE biz_tag = ?",
                        (namespace,),
                    )
                    .map_err(|e| StoreError::Unreachable(format!("mysql: {e}")))?;
                match current {
                    Some(v) if v < 0 => Err(StoreError::Corrupt {
                        namespace: namespace.to_owned(),
                        found: v.to_string(),
                    }),
                    _ => Err(StoreError::Exhausted),
                }
            }
            Err(e) => {
                // The connection may be broken; the next lease reconnects.
                *guard = None;
                Err(StoreError::Unreachable(format!("mysql: {e}")))
            }
        }
    }

    fn interleave(&self, namespace: &str, asked: Interleave) -> Result<Interleave, StoreError> {
        check_namespace(namespace).map_err(StoreError::Invalid)?;
        let mut guard = lock(&self.0.conn);
        let conn = connection(&mut guard, || self.connect())?;
        // The first allocator's row stays (the update changes nothing); a later one reads it.
        let result = conn
            .exec_drop(
                "INSERT INTO idkit_range_interleave (biz_tag, step, id_offset) VALUES (?, ?, ?) \
                 ON DUPLICATE KEY UPDATE biz_tag = biz_tag",
                (
                    namespace,
                    asked.step.cast_signed(),
                    asked.offset.cast_signed(),
                ),
            )
            .and_then(|()| {
                conn.exec_first::<(i64, i64), _, _>(
                    "SELECT step, id_offset FROM idkit_range_interleave WHERE biz_tag = ?",
                    (namespace,),
                )
            });
        match result {
            Ok(Some((step, offset))) => Ok(Interleave {
                step: step.cast_unsigned(),
                offset: offset.cast_unsigned(),
            }),
            Ok(None) => Err(StoreError::Unreachable(format!(
                "mysql: no interleave row for namespace {namespace:?} after writing it"
            ))),
            Err(e) => {
                // The connection may be broken; the next call reconnects.
                *guard = None;
                Err(StoreError::Unreachable(format!("mysql: {e}")))
            }
        }
    }

    fn describe(&self) -> String {
        "mysql".to_owned()
    }
}

#[cfg(test)]
mod tests {
    /// A server that never answers is given up after the connect timeout.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_server_that_never_answers_is_given_up_on() {
        let e = crate::store::gives_up_a_silent_server(|port| {
            super::MySqlStore::new(&format!("mysql://idkit@127.0.0.1:{port}/idkit"))
        });
        assert!(
            e.to_string()
                .starts_with("range store unreachable: mysql: "),
            "{e}"
        );
    }
}
