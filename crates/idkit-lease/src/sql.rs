//! The SQL backends: one row per worker id that was ever granted, in a table shared by
//! every holder. SQLite (one host; time from the host's wall clock), PostgreSQL and MySQL /
//! MariaDB (many hosts; time from the database's clock) run the same statements; every change is one conditional `INSERT` or `UPDATE`, so concurrent holders
//! need no transaction and no lock: the loser of a race changes no row and tries again.

use crate::backend::{Backend, Grant, Want};
use crate::{LeaseError, LeaseErrorKind};

/// The lease table, in SQLite's and PostgreSQL's dialect when `namespace` is `TEXT` and
/// nothing follows; MySQL's key column needs a length and its table an engine.
fn schema(namespace: &str, after: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS idkit_worker_leases (
            namespace  {namespace} NOT NULL,
            worker     BIGINT  NOT NULL,
            holder     TEXT,
            token      BIGINT  NOT NULL,
            expires_ms BIGINT  NOT NULL,
            mark_ms    BIGINT  NOT NULL,
            released   BIGINT  NOT NULL,
            PRIMARY KEY (namespace, worker)
        ){after}"
    )
}

/// A parameter of a statement.
#[derive(Clone, Copy)]
pub(crate) enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// What the two databases provide: their clock, and statements with `$N` parameters
/// returning rows of integers.
pub(crate) trait Conn: Send {
    fn name(&self) -> String;
    fn now_ms(&mut self) -> Result<i64, LeaseError>;
    fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, LeaseError>;
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<i64>>, LeaseError>;
}

/// A lease in a SQL table.
pub(crate) struct SqlBackend<C> {
    conn: C,
    namespace: String,
    holder: String,
    ttl_ms: i64,
    worker: i64,
    token: i64,
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl<C: Conn> SqlBackend<C> {
    /// Updates the row of the grant this backend holds (its namespace, worker id and token,
    /// which follow `values` as parameters) with `set`, under the further condition `and`
    /// on `more`'s parameter: whether it changed, that is, whether the grant was still held.
    fn update_held(
        &mut self,
        set: &str,
        values: &[Param<'_>],
        and: &str,
        more: Option<Param<'_>>,
    ) -> Result<bool, LeaseError> {
        let n = values.len();
        let sql = format!(
            "UPDATE idkit_worker_leases SET {set} WHERE namespace = ${} AND worker = ${} \
             AND token = ${}{and}",
            n + 1,
            n + 2,
            n + 3
        );
        let key = [
            Param::Text(&self.namespace),
            Param::Int(self.worker),
            Param::Int(self.token),
        ];
        let params: Vec<Param<'_>> = values.iter().chain(&key).chain(&more).copied().collect();
        Ok(self.conn.exec(&sql, &params)? == 1)
    }

    fn new(conn: C) -> Self {
        Self {
            conn,
            namespace: String::new(),
            holder: String::new(),
            ttl_ms: 0,
            worker: -1,
            token: 0,
        }
    }

    /// Expired or taken, after a renewal changed no row.
    fn why_not(&mut self) -> LeaseError {
        let rows = self.conn.query(
            "SELECT token, expires_ms FROM idkit_worker_leases WHERE namespace = $1 AND worker = $2",
            &[Param::Text(&self.namespace), Param::Int(self.worker)],
        );
        match rows.as_deref() {
            Ok([row, ..]) if row[0] == self.token => LeaseError::expired(format!(
                "the lease on worker id {} expired before it was renewed",
                self.worker
            )),
            Ok([row, ..]) => LeaseError::lost(format!(
                "worker id {} was granted again (token {} -> {})",
                self.worker, self.token, row[0]
            )),
            Ok([]) => LeaseError::lost(format!("worker id {} has no lease row", self.worker)),
            Err(e) => e.clone(),
        }
    }
}

impl<C: Conn> Backend for SqlBackend<C> {
    fn describe(&self) -> String {
        self.conn.name()
    }

    fn acquire(&mut self, want: &Want, mark_ms: u64) -> Result<Grant, LeaseError> {
        self.namespace = want.namespace.clone();
        self.holder = want.holder.clone();
        self.ttl_ms = int(want.ttl_ms);
        let mark = int(mark_ms);
        // Races with other holders end in a statement that changes no row; a few rounds
        // settle them.
        for _ in 0..64 {
            let now = self.conn.now_ms()?;
            let rows = self.conn.query(
                "SELECT worker, expires_ms, token, mark_ms, released FROM idkit_worker_leases \
                 WHERE namespace = $1 ORDER BY worker",
                &[Param::Text(&self.namespace)],
            )?;
            // The lowest worker id that is free: never granted, or expired.
            let mut candidate = None;
            let mut next_unused = 0u64;
            for row in &rows {
                let worker = uint(row[0]);
                if worker >= want.slots {
                    break;
                }
                if next_unused < worker {
                    break;
                }
                if row[1] <= now {
                    candidate = Some(row);
                    break;
                }
                next_unused = worker + 1;
            }
            let grant = match candidate {
                Some(row) => {
                    let changed = self.conn.exec(
                        "UPDATE idkit_worker_leases SET holder = $1, token = token + 1, \
                         expires_ms = $2, mark_ms = CASE WHEN mark_ms > $3 THEN mark_ms ELSE $3 END, \
                         released = 0 \
                         WHERE namespace = $4 AND worker = $5 AND token = $6 AND expires_ms <= $7",
                        &[
                            Param::Text(&self.holder),
                            Param::Int(now + self.ttl_ms),
                            Param::Int(mark),
                            Param::Text(&self.namespace),
                            Param::Int(row[0]),
                            Param::Int(row[2]),
                            Param::Int(now),
                        ],
                    )?;
                    (changed == 1).then(|| Grant {
                        worker: uint(row[0]),
                        token: uint(row[2]) + 1,
                        mark_ms: uint(row[3]),
                        released: row[4] != 0,
                    })
                }
                None if next_unused < want.slots => {
                    let changed = self.conn.exec(
                        "INSERT INTO idkit_worker_leases \
                         (namespace, worker, holder, token, expires_ms, mark_ms, released) \
                         VALUES ($1, $2, $3, 1, $4, $5, 0) ON CONFLICT DO NOTHING",
                        &[
                            Param::Text(&self.namespace),
                            Param::Int(int(next_unused)),
                            Param::Text(&self.holder),
                            Param::Int(now + self.ttl_ms),
                            Param::Int(mark),
                        ],
                    )?;
                    (changed == 1).then_some(Grant {
                        worker: next_unused,
                        token: 1,
                        mark_ms: 0,
                        released: true,
                    })
                }
                None => {
                    return Err(LeaseError::all_taken(
                        &self.namespace,
                        want.slots,
                        &self.conn.name(),
                    ));
                }
            };
            if let Some(grant) = grant {
                self.worker = int(grant.worker);
                self.token = int(grant.token);
                return Ok(grant);
            }
        }
        Err(LeaseError::unreachable(format!(
            "{}: could not settle a race for a worker id in 64 rounds",
            self.conn.name()
        )))
    }

    fn renew(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        let now = self.conn.now_ms()?;
        let set = "expires_ms = $1, mark_ms = CASE WHEN mark_ms > $2 THEN mark_ms ELSE $2 END";
        let values = [Param::Int(now + self.ttl_ms), Param::Int(int(mark_ms))];
        // Only while the lease has not run out: a lapsed one may be another holder's now.
        if self.update_held(set, &values, " AND expires_ms > $6", Some(Param::Int(now)))? {
            Ok(())
        } else {
            Err(self.why_not())
        }
    }

    fn regrant(&mut self, mark_ms: u64) -> Result<u64, LeaseError> {
        let now = self.conn.now_ms()?;
        let set = "token = token + 1, expires_ms = $1, \
                   mark_ms = CASE WHEN mark_ms > $2 THEN mark_ms ELSE $2 END, released = 0";
        let values = [Param::Int(now + self.ttl_ms), Param::Int(int(mark_ms))];
        if self.update_held(set, &values, "", None)? {
            self.token += 1;
            Ok(uint(self.token))
        } else {
            let e = self.why_not();
            Err(if e.kind() == LeaseErrorKind::Expired {
                LeaseError::lost(format!(
                    "worker id {} could not be granted again",
                    self.worker
                ))
            } else {
                e
            })
        }
    }

    fn release(&mut self, mark_ms: u64) -> Result<(), LeaseError> {
        let set = "expires_ms = 0, mark_ms = $1, released = 1, holder = NULL";
        if self.update_held(set, &[Param::Int(int(mark_ms))], "", None)? {
            Ok(())
        } else {
            Err(self.why_not())
        }
    }
}

#[cfg(feature = "sqlite")]
pub(crate) use sqlite::SqliteBackend;

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::path::Path;
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    use rusqlite::ErrorCode;

    use super::{Conn, Param, SqlBackend, schema};
    use crate::LeaseError;

    pub(crate) type SqliteBackend = SqlBackend<Sqlite>;

    pub(crate) struct Sqlite {
        conn: rusqlite::Connection,
        path: String,
    }

    impl SqliteBackend {
        pub(crate) fn open(path: &Path) -> Result<Self, LeaseError> {
            let shown = path.display().to_string();
            let fail = |e: rusqlite::Error| LeaseError::unreachable(format!("sqlite {shown}: {e}"));
            // The file is created, its directory is not: a typo in the path would otherwise
            // give two processes two stores, and both the same worker id.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                && !dir.is_dir()
            {
                return Err(LeaseError::invalid(format!(
                    "sqlite {shown}: directory {} does not exist (create it first; every process \
                     sharing worker ids must name the same file)",
                    dir.display()
                )));
            }
            let conn = rusqlite::Connection::open(path).map_err(fail)?;
            conn.busy_timeout(BUSY).map_err(fail)?;
            patiently(|| {
                conn.pragma_update(None, "journal_mode", "WAL")?;
                conn.execute_batch(&schema("TEXT", ""))
            })
            .map_err(fail)?;
            Ok(SqlBackend::new(Sqlite { conn, path: shown }))
        }
    }

    /// How long a statement waits for another process's lock.
    const BUSY: Duration = Duration::from_secs(5);

    /// `step`, tried again while SQLite answers that the database is busy or locked, for as
    /// long as [`BUSY`]. SQLite gives that answer at once, without waiting in its busy
    /// handler, in cases that processes opening a new file together meet (one turning it to
    /// WAL while another reads it). A step that was refused changed nothing.
    fn patiently<T>(mut step: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let deadline = Instant::now() + BUSY;
        let mut pause = Duration::from_millis(1);
        loop {
            match step() {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if matches!(e.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                result => return result,
            }
        }
    }

    fn bind(params: &[Param<'_>]) -> Vec<rusqlite::types::Value> {
        params
            .iter()
            .map(|p| match p {
                Param::Int(v) => rusqlite::types::Value::Integer(*v),
                Param::Text(s) => rusqlite::types::Value::Text((*s).to_owned()),
            })
            .collect()
    }

    impl Sqlite {
        fn fail(&self, e: &rusqlite::Error) -> LeaseError {
            LeaseError::unreachable(format!("sqlite {}: {e}", self.path))
        }
    }

    impl Conn for Sqlite {
        fn name(&self) -> String {
            format!("sqlite {}", self.path)
        }
        fn now_ms(&mut self) -> Result<i64, LeaseError> {
            let since = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO);
            Ok(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
        }
        fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, LeaseError> {
            let sql = sql.replace('$', "?");
            let n = patiently(|| {
                self.conn
                    .execute(&sql, rusqlite::params_from_iter(bind(params)))
            })
            .map_err(|e| self.fail(&e))?;
            Ok(n as u64)
        }
        fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<i64>>, LeaseError> {
            let sql = sql.replace('$', "?");
            let conn = &self.conn;
            let rows = patiently(|| {
                let mut stmt = conn.prepare(&sql)?;
                let width = stmt.column_count();
                stmt.query_map(rusqlite::params_from_iter(bind(params)), |row| {
                    (0..width).map(|i| row.get::<_, i64>(i)).collect()
                })
                .and_then(Iterator::collect)
            })
            .map_err(|e| self.fail(&e))?;
            Ok(rows)
        }
    }
}

/// A client of a database server on the network, for [`Redial`].
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) trait Dial: Sized {
    /// Connects to the server at `address` and creates the table.
    fn dial(address: &str) -> Result<Self, LeaseError>;
    /// Whether the connection is known to be gone.
    fn is_closed(&self) -> bool {
        false
    }
}

/// A server's address and the connection to it: made on first use, and made again after
/// one that broke (a backend's `fail` drops it).
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) struct Redial<C> {
    address: String,
    conn: Option<C>,
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
impl<C: Dial> Redial<C> {
    fn conn(&mut self) -> Result<&mut C, LeaseError> {
        if self.conn.as_ref().is_none_or(C::is_closed) {
            self.conn = Some(C::dial(&self.address)?);
        }
        self.conn
            .as_mut()
            .ok_or_else(|| LeaseError::unreachable("no connection"))
    }
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
impl<C: Dial> SqlBackend<Redial<C>>
where
    Redial<C>: Conn,
{
    /// Connects and creates the table. A server that is down later is an `Unreachable`
    /// renewal, retried on a new connection.
    pub(crate) fn open(address: &str) -> Result<Self, LeaseError> {
        let mut redial = Redial {
            address: address.to_owned(),
            conn: None,
        };
        redial.conn()?;
        Ok(SqlBackend::new(redial))
    }
}

#[cfg(feature = "postgres")]
pub(crate) use pg::PostgresBackend;

#[cfg(feature = "postgres")]
mod pg {
    use idkit_core::connect::{self, postgres_failure as failure};

    use super::{Conn, Dial, Param, Redial, SqlBackend, schema};
    use crate::LeaseError;

    pub(crate) type PostgresBackend = SqlBackend<Redial<postgres::Client>>;

    impl Dial for postgres::Client {
        fn dial(address: &str) -> Result<Self, LeaseError> {
            let tables = [("idkit_worker_leases", &*schema("TEXT", ""))];
            connect::postgres(address, &tables).map_err(LeaseError::from)
        }

        fn is_closed(&self) -> bool {
            postgres::Client::is_closed(self)
        }
    }

    impl Redial<postgres::Client> {
        fn fail(&mut self, e: &postgres::Error) -> LeaseError {
            if e.is_closed() || e.as_db_error().is_none() {
                self.conn = None;
            }
            LeaseError::unreachable(failure(e))
        }
    }

    fn bind<'a>(params: &'a [Param<'a>]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
        params
            .iter()
            .map(|p| match p {
                Param::Int(v) => v as &(dyn postgres::types::ToSql + Sync),
                Param::Text(s) => s as &(dyn postgres::types::ToSql + Sync),
            })
            .collect()
    }

    impl Conn for Redial<postgres::Client> {
        fn name(&self) -> String {
            let config: Option<postgres::Config> = self.address.parse().ok();
            let host = config
                .as_ref()
                .and_then(|c| c.get_hosts().first().cloned())
                .map(|h| match h {
                    postgres::config::Host::Tcp(h) => h,
                    #[cfg(unix)]
                    postgres::config::Host::Unix(p) => p.display().to_string(),
                })
                .unwrap_or_else(|| "localhost".to_owned());
            let port = config
                .as_ref()
                .and_then(|c| c.get_ports().first().copied())
                .unwrap_or(5432);
            format!("postgres at {host}:{port}")
        }
        fn now_ms(&mut self) -> Result<i64, LeaseError> {
            let rows = self.query(
                "SELECT (extract(epoch FROM statement_timestamp()) * 1000)::bigint",
                &[],
            )?;
            rows.first()
                .and_then(|r| r.first().copied())
                .ok_or_else(|| LeaseError::unreachable("postgres: no time"))
        }
        fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, LeaseError> {
            let result = self.conn()?.execute(sql, &bind(params));
            result.map_err(|e| self.fail(&e))
        }
        fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<i64>>, LeaseError> {
            let result = self.conn()?.query(sql, &bind(params));
            let rows = result.map_err(|e| self.fail(&e))?;
            Ok(rows
                .iter()
                .map(|r| (0..r.len()).map(|i| r.get::<_, i64>(i)).collect())
                .collect())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Dial;

        /// A refused connection says why: the postgres crate's error names only what failed
        /// ("error connecting to server") and keeps the reason in its source.
        #[test]
        fn a_refused_connection_says_why() {
            let port = idkit_testkit::closed_port();
            let url = format!("postgres://idkit@127.0.0.1:{port}/idkit");
            let Err(e) = postgres::Client::dial(&url) else {
                panic!("connected to {url}");
            };
            let e = e.to_string();
            assert!(
                e.starts_with("postgres: error connecting to server: "),
                "{e}"
            );
            assert!(e.to_lowercase().contains("refused"), "{e}");
        }
    }
}

#[cfg(feature = "mysql")]
pub(crate) use my::MySqlBackend;

#[cfg(feature = "mysql")]
mod my {
    use mysql::prelude::Queryable;

    use super::{Conn, Dial, Param, Redial, SqlBackend, schema};
    use crate::LeaseError;

    pub(crate) type MySqlBackend = SqlBackend<Redial<mysql::Conn>>;

    /// ER_DUP_ENTRY: the row another holder inserted first.
    const DUPLICATE: u16 = 1062;

    /// The connection options of `address`, with the timeouts it does not set itself
    /// (`tcp_connect_timeout_ms`, `tcp_user_timeout_ms`) at idkit's defaults
    /// ([`idkit_core::connect`]).
    fn options(address: &str) -> Result<mysql::OptsBuilder, LeaseError> {
        Ok(idkit_core::connect::mysql_options(address)?
            // Affected rows count the rows matched, as in PostgreSQL and SQLite: a
            // renewal that writes the same expiry still says it found its row.
            .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS))
    }

    impl Dial for mysql::Conn {
        fn dial(address: &str) -> Result<Self, LeaseError> {
            let mut conn = Self::new(options(address)?)
                .map_err(|e| LeaseError::unreachable(format!("mysql: {e}")))?;
            conn.query_drop(schema("VARCHAR(255)", " ENGINE=InnoDB"))
                .map_err(|e| LeaseError::unreachable(format!("mysql: {e}")))?;
            Ok(conn)
        }
    }

    impl Redial<mysql::Conn> {
        fn fail(&mut self, e: &mysql::Error) -> LeaseError {
            // Anything but the server's own refusal may have broken the connection.
            if !matches!(e, mysql::Error::MySqlError(_)) {
                self.conn = None;
            }
            LeaseError::unreachable(format!("mysql: {e}"))
        }
    }

    /// `$N` placeholders as MySQL's positional `?`, with the parameters in the order they
    /// appear (a `$N` used twice is bound twice).
    fn positional(sql: &str, params: &[Param<'_>]) -> (String, Vec<mysql::Value>) {
        let mut out = String::with_capacity(sql.len());
        let mut values = Vec::new();
        let mut chars = sql.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            let mut end = i + 1;
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_ascii_digit() {
                    break;
                }
                end = j + 1;
                chars.next();
            }
            let n: usize = sql[i + 1..end].parse().unwrap_or(0);
            out.push('?');
            values.push(match params.get(n.wrapping_sub(1)) {
                Some(Param::Int(v)) => mysql::Value::Int(*v),
                Some(Param::Text(t)) => mysql::Value::Bytes(t.as_bytes().to_vec()),
                None => mysql::Value::NULL,
            });
        }
        (out, values)
    }

    impl Conn for Redial<mysql::Conn> {
        fn name(&self) -> String {
            let opts = mysql::Opts::from_url(&self.address).ok();
            let host = opts.as_ref().map_or_else(
                || "localhost".to_owned(),
                |o| o.get_ip_or_hostname().to_string(),
            );
            let port = opts.as_ref().map_or(3306, mysql::Opts::get_tcp_port);
            format!("mysql at {host}:{port}")
        }
        fn now_ms(&mut self) -> Result<i64, LeaseError> {
            // NOW(3): the statement's start on the server's clock, to the millisecond.
            let rows = self.query("SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)", &[])?;
            rows.first()
                .and_then(|r| r.first().copied())
                .ok_or_else(|| LeaseError::unreachable("mysql: no time"))
        }
        fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, LeaseError> {
            // PostgreSQL's and SQLite's `ON CONFLICT DO NOTHING`: a duplicate changes no row.
            let (sql, ignore_duplicate) = match sql.strip_suffix(" ON CONFLICT DO NOTHING") {
                Some(plain) => (plain, true),
                None => (sql, false),
            };
            let (sql, values) = positional(sql, params);
            let result = self
                .conn()?
                .exec_iter(sql, mysql::Params::Positional(values))
                .map(|r| r.affected_rows());
            match result {
                Ok(n) => Ok(n),
                Err(mysql::Error::MySqlError(e)) if ignore_duplicate && e.code == DUPLICATE => {
                    Ok(0)
                }
                Err(e) => Err(self.fail(&e)),
            }
        }
        fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<i64>>, LeaseError> {
            let (sql, values) = positional(sql, params);
            let result: Result<Vec<mysql::Row>, _> =
                self.conn()?.exec(sql, mysql::Params::Positional(values));
            let rows = result.map_err(|e| self.fail(&e))?;
            rows.into_iter()
                .map(|row| {
                    (0..row.len())
                        .map(|i| {
                            row.get_opt::<i64, _>(i)
                                .and_then(Result::ok)
                                .ok_or_else(|| {
                                    LeaseError::unreachable("mysql: a non-integer column")
                                })
                        })
                        .collect()
                })
                .collect()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn dollar_placeholders_become_positional_in_order_of_use() {
            let (sql, values) = positional(
                "UPDATE t SET a = $1, b = CASE WHEN b > $3 THEN b ELSE $3 END WHERE c = $2",
                &[Param::Int(1), Param::Text("x"), Param::Int(3)],
            );
            assert_eq!(
                sql,
                "UPDATE t SET a = ?, b = CASE WHEN b > ? THEN b ELSE ? END WHERE c = ?"
            );
            assert_eq!(
                values,
                vec![
                    mysql::Value::Int(1),
                    mysql::Value::Int(3),
                    mysql::Value::Int(3),
                    mysql::Value::Bytes(b"x".to_vec())
                ]
            );
        }

        #[test]
        fn timeouts_the_address_sets_are_kept_and_the_others_defaulted() {
            let defaulted = mysql::Opts::from(options("mysql://u@h:3306/db").unwrap());
            assert_eq!(
                defaulted.get_tcp_connect_timeout(),
                Some(idkit_core::connect::CONNECT_TIMEOUT)
            );
            assert_eq!(defaulted.get_tcp_user_timeout_ms(), Some(10_000));

            let set = mysql::Opts::from(
                options("mysql://u@h:3306/db?tcp_connect_timeout_ms=7000&tcp_user_timeout_ms=3000")
                    .unwrap(),
            );
            assert_eq!(
                set.get_tcp_connect_timeout(),
                Some(std::time::Duration::from_secs(7))
            );
            assert_eq!(set.get_tcp_user_timeout_ms(), Some(3000));

            let bad = options("mysql://u@h:3306/db?tcp_connect_timeout_ms=soon").unwrap_err();
            assert!(bad.to_string().contains("mysql: "), "{bad}");
        }
    }
}
