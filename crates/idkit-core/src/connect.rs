//! Connections to the database servers that many hosts share: the range stores of
//! `idkit-range` and the worker-id leases of `idkit-lease` open them the same way, here.
//!
//! An address's own settings win; what it leaves unset gets idkit's defaults, so that a
//! server that cannot be reached fails a call in seconds instead of holding the leasing or
//! renewing thread for the system's TCP timeouts: [`CONNECT_TIMEOUT`] for each connection
//! attempt, [`STALL_TIMEOUT`] for what was sent and not acknowledged. PostgreSQL's clients
//! (feature `postgres-client`) also wait at most 10 s for a row another connection holds
//! locked, unless the server or the address sets a `lock_timeout`.

use core::fmt;
use std::time::Duration;

/// How long one connection attempt to a server may take, unless its address says
/// (`connect_timeout`, `tcp_connect_timeout_ms`): a host that drops packets would otherwise
/// hold the calling thread for the system's TCP timeout (about two minutes on Linux) on
/// every attempt.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a connection may leave what it sent unacknowledged before it is given up
/// (`TCP_USER_TIMEOUT`), unless its address says (`tcp_user_timeout`,
/// `tcp_user_timeout_ms`): once the server's host dies or the network splits, a request in
/// flight would otherwise wait out the system's retransmissions, about 15 minutes on Linux
/// (`tcp_retries2` = 15), even after a failover. A server that is slow but up acknowledges
/// at once, so a slow request is not cut short.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no connection was made, as one line that names the client (`postgres: ...`,
/// `mysql: ...`) with the causes the client keeps in its error's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// The address does not parse.
    Address(String),
    /// The server was not reached, or refused the connection or its setup.
    Unreachable(String),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Address(line) | Self::Unreachable(line) => f.write_str(line),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Waits for a row another connection holds locked at most 10 s, unless a `lock_timeout` is
/// set already: a lease would otherwise wait, silent, for as long as the other transaction
/// stays open.
#[cfg(feature = "postgres-client")]
const LOCK_TIMEOUT: &str = "SELECT set_config('lock_timeout', '10s', false) \
                            WHERE current_setting('lock_timeout') = '0'";

/// A PostgreSQL error as one line, with its causes: the crate's own message names only
/// what failed ("error connecting to server") and keeps the reason in its source.
#[cfg(feature = "postgres-client")]
pub fn postgres_failure(e: &postgres::Error) -> String {
    format!("postgres: {}", crate::with_causes(e))
}

/// The PostgreSQL connection settings of `address` (libpq's `key=value` form or a
/// `postgres://` URL), with the timeouts it does not set at [`CONNECT_TIMEOUT`] and
/// [`STALL_TIMEOUT`].
///
/// # Errors
///
/// [`ConnectError::Address`] when `address` does not parse.
#[cfg(feature = "postgres-client")]
pub fn postgres_config(address: &str) -> Result<postgres::Config, ConnectError> {
    let mut config: postgres::Config = address
        .parse()
        .map_err(|e| ConnectError::Address(postgres_failure(&e)))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(STALL_TIMEOUT);
    }
    Ok(config)
}

/// A connection to the PostgreSQL server at `address` ([`postgres_config`]), its lock
/// waits bounded, with each of `tables` created by its `CREATE TABLE IF NOT EXISTS`
/// statement, as `(table name, statement)`. Two hosts creating a table at once can collide
/// in the catalog (a unique violation); the table then exists, which is all that is needed.
///
/// # Errors
///
/// [`ConnectError::Address`] when `address` does not parse; [`ConnectError::Unreachable`]
/// when the server is not reached, refuses the connection, or a table neither is created
/// nor exists.
#[cfg(feature = "postgres-client")]
pub fn postgres(address: &str, tables: &[(&str, &str)]) -> Result<postgres::Client, ConnectError> {
    let unreachable = |e: &postgres::Error| ConnectError::Unreachable(postgres_failure(e));
    let mut client = postgres_config(address)?
        .connect(postgres::NoTls)
        .map_err(|e| unreachable(&e))?;
    client
        .batch_execute(LOCK_TIMEOUT)
        .map_err(|e| unreachable(&e))?;
    for (table, schema) in tables {
        if let Err(e) = client.batch_execute(schema) {
            let exists: Option<String> = client
                .query_one("SELECT to_regclass($1)::text", &[table])
                .ok()
                .and_then(|row| row.get(0));
            if exists.is_none() {
                return Err(unreachable(&e));
            }
        }
    }
    Ok(client)
}

/// The MySQL / MariaDB connection options of `address` (`mysql://user@host:3306/db`),
/// with the timeouts it does not set (`tcp_connect_timeout_ms`, `tcp_user_timeout_ms`) at
/// [`CONNECT_TIMEOUT`] and [`STALL_TIMEOUT`].
///
/// # Errors
///
/// [`ConnectError::Address`] when `address` does not parse.
///
/// # Examples
///
/// ```
/// use idkit_core::connect::{CONNECT_TIMEOUT, mysql_options};
///
/// let defaulted = mysql::Opts::from(mysql_options("mysql://u@h:3306/db")?);
/// assert_eq!(defaulted.get_tcp_connect_timeout(), Some(CONNECT_TIMEOUT));
/// assert_eq!(defaulted.get_tcp_user_timeout_ms(), Some(10_000));
/// let set = mysql::Opts::from(mysql_options("mysql://u@h/db?tcp_user_timeout_ms=3000")?);
/// assert_eq!(set.get_tcp_user_timeout_ms(), Some(3_000));
/// # Ok::<(), idkit_core::connect::ConnectError>(())
/// ```
#[cfg(feature = "mysql-client")]
pub fn mysql_options(address: &str) -> Result<mysql::OptsBuilder, ConnectError> {
    let opts =
        mysql::Opts::from_url(address).map_err(|e| ConnectError::Address(format!("mysql: {e}")))?;
    let connect = opts.get_tcp_connect_timeout().unwrap_or(CONNECT_TIMEOUT);
    let stall_ms = u32::try_from(STALL_TIMEOUT.as_millis()).unwrap_or(u32::MAX);
    let stalled = opts.get_tcp_user_timeout_ms().unwrap_or(stall_ms);
    Ok(mysql::OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(connect))
        .tcp_user_timeout_ms(Some(stalled)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "postgres-client")]
    #[test]
    fn postgres_timeouts_the_address_sets_are_kept_and_the_others_defaulted() {
        let defaulted = postgres_config("host=h user=u").unwrap();
        assert_eq!(defaulted.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(defaulted.get_tcp_user_timeout(), Some(&STALL_TIMEOUT));
        let set = postgres_config("host=h user=u connect_timeout=7 tcp_user_timeout=3").unwrap();
        assert_eq!(set.get_connect_timeout(), Some(&Duration::from_secs(7)));
        assert_eq!(set.get_tcp_user_timeout(), Some(&Duration::from_secs(3)));
        let bad = postgres_config("host=h port=none").unwrap_err();
        assert!(
            matches!(&bad, ConnectError::Address(line) if line.starts_with("postgres: ")),
            "{bad:?}"
        );
    }

    #[cfg(feature = "mysql-client")]
    #[test]
    fn mysql_timeouts_the_address_sets_are_kept_and_the_others_defaulted() {
        let set = mysql::Opts::from(
            mysql_options(
                "mysql://u@h:3306/db?tcp_connect_timeout_ms=7000&tcp_user_timeout_ms=3000",
            )
            .unwrap(),
        );
        assert_eq!(set.get_tcp_connect_timeout(), Some(Duration::from_secs(7)));
        assert_eq!(set.get_tcp_user_timeout_ms(), Some(3_000));
        let bad = mysql_options("postgres://u@h/db").unwrap_err();
        assert!(
            matches!(&bad, ConnectError::Address(line) if line.starts_with("mysql: ")),
            "{bad:?}"
        );
    }
}
