//! Insert runs in InnoDB: 1,000 rows per commit (one multi-row `INSERT` with autocommit,
//! one round trip, the redo log flushed at each commit), and the tree measured at the end.
//!
//! Page splits, merges and reorganizations come from `information_schema.INNODB_METRICS`
//! (the `index` module, reset before each run); leaf pages and sizes from
//! `mysql.innodb_index_stats` after `ANALYZE TABLE`; redo bytes from the log sequence number
//! before and after; pages written from `Innodb_pages_written`.

use idkit_core::RawId;
use mysql::prelude::Queryable;
use mysql::{Conn, Value};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::engine::insert::{CurvePoint, Ended, RunSpec, ServerRun, Sizes, StorageName, TABLE};
use crate::engine::{Label, Run};

/// How the id is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MyStorage {
    /// A 64-bit id as `BIGINT PRIMARY KEY`.
    BigintPk,
    /// The id's bytes as `BINARY(n) PRIMARY KEY` (16 for UUIDs and ULIDs, 20 for KSUIDs,
    /// 12 for ObjectIds).
    BinaryPk,
    /// MariaDB's `UUID` type as the primary key (MariaDB 10.7 and later).
    UuidPk,
    /// The canonical string as `VARCHAR(n) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY`.
    TextPk,
    /// `BIGINT AUTO_INCREMENT PRIMARY KEY`: the database numbers the rows.
    AutoIncrementPk,
}

impl StorageName for MyStorage {
    fn name(self) -> &'static str {
        match self {
            Self::BigintPk => "bigint_pk",
            Self::BinaryPk => "binary_pk",
            Self::UuidPk => "uuid_pk",
            Self::TextPk => "text_pk",
            Self::AutoIncrementPk => "auto_increment_pk",
        }
    }

    /// A scheme's own binary form: `BIGINT` up to 64 bits, else `BINARY(n)`.
    fn native(bits: u32) -> Self {
        if bits <= 64 {
            Self::BigintPk
        } else {
            Self::BinaryPk
        }
    }
}

/// One batch's keys, as the statement binds them, with the column they go into.
#[derive(Debug, Clone)]
pub struct Keys {
    /// The storage form.
    pub storage: MyStorage,
    /// The column's SQL type (a [`Label`], leaked once per set of keys: the runs that use
    /// these keys carry it in their records).
    pub sql_type: Label,
    /// Bytes of one key as InnoDB stores it (the mean, for text).
    pub key_bytes: f64,
    /// The values (empty for `AUTO_INCREMENT`, which binds none).
    pub values: Vec<Value>,
    /// Rows (for `AUTO_INCREMENT`, the rows to insert).
    pub rows: usize,
}

/// `ids` as keys of `storage`; `format` gives the canonical text for [`MyStorage::TextPk`].
///
/// # Errors
///
/// [`Error::IdRange`] for a 64-bit id above `i64::MAX`, or the scheme's error from `format`.
pub fn to_keys(
    scheme: &'static str,
    ids: &[RawId],
    storage: MyStorage,
    format: &dyn Fn(&RawId) -> Result<String, Error>,
) -> Result<Keys, Error> {
    let width = ids.first().map_or(16, |id| id.as_bytes().len());
    let (sql_type, key_bytes, values) = match storage {
        MyStorage::BigintPk => (
            Label("BIGINT"),
            8.0,
            crate::engine::signed_keys(scheme, ids)?
                .into_iter()
                .map(Value::Int)
                .collect(),
        ),
        MyStorage::BinaryPk => (
            format!("BINARY({width})").into(),
            width as f64,
            ids.iter()
                .map(|id| Value::Bytes(id.as_bytes().to_vec()))
                .collect(),
        ),
        // MariaDB's UUID column takes the canonical text from a client (a bound binary
        // string is read as text in the connection's character set) and stores 16 bytes.
        MyStorage::UuidPk => (
            Label("UUID"),
            16.0,
            ids.iter()
                .map(|id| format(id).map(|t| Value::Bytes(t.into_bytes())))
                .collect::<Result<_, _>>()?,
        ),
        MyStorage::TextPk => {
            let texts = ids.iter().map(format).collect::<Result<Vec<_>, _>>()?;
            let longest = texts.iter().map(String::len).max().unwrap_or(1);
            let mean =
                texts.iter().map(String::len).sum::<usize>() as f64 / ids.len().max(1) as f64;
            (
                format!("VARCHAR({longest}) CHARACTER SET ascii COLLATE ascii_bin").into(),
                // One length byte in the record header.
                mean + 1.0,
                texts
                    .into_iter()
                    .map(|t| Value::Bytes(t.into_bytes()))
                    .collect(),
            )
        }
        MyStorage::AutoIncrementPk => return Ok(auto_increment(ids.len())),
    };
    Ok(Keys {
        storage,
        sql_type,
        key_bytes,
        values,
        rows: ids.len(),
    })
}

/// `n` rows for an `AUTO_INCREMENT` table (the database makes the ids).
pub fn auto_increment(n: usize) -> Keys {
    Keys {
        storage: MyStorage::AutoIncrementPk,
        sql_type: Label("BIGINT AUTO_INCREMENT"),
        key_bytes: 8.0,
        values: Vec::new(),
        rows: n,
    }
}

impl Keys {
    /// Inserts rows `range` in one statement (one commit).
    fn insert(&self, conn: &mut Conn, range: std::ops::Range<usize>) -> Result<(), Error> {
        let n = range.len();
        if self.storage == MyStorage::AutoIncrementPk {
            let sql = format!("INSERT INTO {TABLE}() VALUES {}", vec!["()"; n].join(","));
            conn.query_drop(sql)?;
        } else {
            let sql = format!(
                "INSERT INTO {TABLE}(id) VALUES {}",
                vec!["(?)"; n].join(",")
            );
            let stmt = conn.prep(sql)?;
            conn.exec_drop(&stmt, self.values[range].to_vec())?;
        }
        Ok(())
    }
}

/// One insert run (a row of `btree_mysql.csv`).
pub type MyRun = Run<MyStorage, MyCounters>;

/// InnoDB's own counters of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MyCounters {
    /// The id column's SQL type.
    pub sql_type: Label,
    /// `index_page_splits`.
    pub splits: u64,
    /// `index_page_merge_successful`.
    pub merges: u64,
    /// `index_page_reorg_successful`: pages rewritten in place to reclaim room.
    pub reorgs: u64,
    /// Pages written to the data files during the run (`Innodb_pages_written`).
    pub pages_written: u64,
}

impl MyRun {
    /// Page splits per 1,000 rows.
    pub fn splits_per_1k(&self) -> f64 {
        self.own.splits as f64 * 1000.0 / self.rows.max(1) as f64
    }

    /// Pages written per commit.
    pub fn pages_per_commit(&self) -> f64 {
        self.own.pages_written as f64 / self.commits.max(1) as f64
    }
}

/// One point of an insert-rate curve (a row of `btree_mysql_curve.csv`).
pub type MyCurvePoint = CurvePoint<MyStorage>;

/// An InnoDB run: what every engine's run is, and the server's page size.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Scheme, storage, cache (`innodb_buffer_pool_size`), rows per commit, curve points.
    pub run: RunSpec<MyStorage>,
    /// `innodb_page_size`, bytes.
    pub page_size: u64,
}

/// The page's room for records: 16 KiB less the file header and trailer, the index page
/// header, the segment headers and the infimum and supremum records (128 bytes).
const PAGE_OVERHEAD: u64 = 128;

/// Bytes of a clustered-index leaf record whose key is `key_bytes` wide and that has
/// `other_bytes` of other columns: the 5-byte record header, the key, the 6-byte
/// transaction id and the 7-byte roll pointer (`ROW_FORMAT=DYNAMIC`).
pub fn record_bytes(key_bytes: f64, other_bytes: f64) -> f64 {
    5.0 + key_bytes + 13.0 + other_bytes
}

/// Leaf fill: `rows` records of `record` bytes over the room of `leaf_pages` pages of
/// `page_size` bytes. InnoDB's statistics have no fill of their own; for trees held in the
/// buffer pool this agrees with `information_schema.INNODB_BUFFER_PAGE`'s `DATA_SIZE`
/// within half a point (sequential `BIGINT` keys: 91.7% here, 91.5% there; random
/// `BINARY(16)`: 69.5% and 69.4%).
pub fn leaf_fill(rows: usize, record: f64, leaf_pages: u64, page_size: u64) -> f64 {
    if leaf_pages == 0 {
        return 0.0;
    }
    rows as f64 * record / (leaf_pages * (page_size - PAGE_OVERHEAD)) as f64
}

/// Creates the insert runs' table with an id column of `keys`' type.
fn create_table(conn: &mut Conn, keys: &Keys) -> Result<(), Error> {
    conn.query_drop(format!("DROP TABLE IF EXISTS {TABLE}"))?;
    conn.query_drop(format!(
        "CREATE TABLE {TABLE}(id {} NOT NULL PRIMARY KEY) ENGINE=InnoDB",
        keys.sql_type
    ))?;
    Ok(())
}

/// The counters a run reads before and after: the log sequence number and the pages written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mark {
    lsn: u64,
    pages_written: u64,
}

impl Mark {
    /// Redo bytes written since `earlier`.
    pub fn lsn_since(&self, earlier: &Self) -> u64 {
        self.lsn.saturating_sub(earlier.lsn)
    }
}

/// The counters now; resets the index module's metrics first when `reset`.
///
/// # Errors
///
/// [`Error::MySql`], or [`Error::MySqlSetup`] when the server's status has no log sequence
/// number.
pub fn mark(conn: &mut Conn, reset: bool) -> Result<Mark, Error> {
    if reset {
        conn.query_drop("SET GLOBAL innodb_monitor_reset = 'module_index'")?;
    }
    // `Log sequence number N` in the LOG section, in MySQL and MariaDB alike.
    let status: Option<(String, String, String)> = conn.query_first("SHOW ENGINE INNODB STATUS")?;
    let lsn = status
        .and_then(|(_, _, text)| {
            text.lines()
                .find(|l| l.starts_with("Log sequence number"))
                .and_then(|l| l.split_whitespace().last()?.parse().ok())
        })
        .ok_or_else(|| {
            Error::MySqlSetup("SHOW ENGINE INNODB STATUS has no log sequence number".to_owned())
        })?;
    let pages: Option<(String, u64)> =
        conn.query_first("SHOW GLOBAL STATUS LIKE 'Innodb_pages_written'")?;
    Ok(Mark {
        lsn,
        pages_written: pages.map_or(0, |p| p.1),
    })
}

/// The index module's counters since the last reset: splits, merges, reorganizations.
///
/// # Errors
///
/// [`Error::MySql`].
pub fn index_metrics(conn: &mut Conn) -> Result<(u64, u64, u64), Error> {
    let rows: Vec<(String, i64)> = conn.query(
        "SELECT NAME, COUNT_RESET FROM information_schema.INNODB_METRICS WHERE SUBSYSTEM = 'index'",
    )?;
    let get = |name: &str| {
        rows.iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, v)| u64::try_from(*v).unwrap_or(0))
    };
    Ok((
        get("index_page_splits"),
        get("index_page_merge_successful"),
        get("index_page_reorg_successful"),
    ))
}

/// Per index of `table` after `ANALYZE TABLE`: its name, leaf pages and size in pages.
///
/// # Errors
///
/// [`Error::MySql`].
pub fn index_stats(conn: &mut Conn, table: &str) -> Result<Vec<(String, u64, u64)>, Error> {
    conn.query_drop(format!("ANALYZE TABLE {table}"))?;
    let rows: Vec<(String, String, u64)> = conn.exec(
        "SELECT index_name, stat_name, stat_value FROM mysql.innodb_index_stats \
         WHERE database_name = DATABASE() AND table_name = ? \
         AND stat_name IN ('n_leaf_pages', 'size')",
        (table,),
    )?;
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for (index, stat, value) in rows {
        let i = match out.iter().position(|(n, _, _)| *n == index) {
            Some(i) => i,
            None => {
                out.push((index, 0, 0));
                out.len() - 1
            }
        };
        if stat == "size" {
            out[i].2 = value;
        } else {
            out[i].1 = value;
        }
    }
    // MariaDB counts a leaf segment that still lives in fragment pages (under 32 pages)
    // as one leaf page; such a tree has two levels at most, so its leaves are all its
    // pages but the root.
    for s in &mut out {
        if s.1 <= 1 && s.2 > 1 {
            s.1 = s.2 - 1;
        }
    }
    // The primary key first.
    out.sort_by_key(|(n, _, _)| n != "PRIMARY");
    Ok(out)
}

/// An InnoDB insert run: a fresh table and the index metrics reset before it, one multi-row
/// `INSERT` per commit, and the tree, the metrics and the log sequence number read at the
/// end. Its table is the id column's SQL type and key bytes.
impl ServerRun for Spec {
    type Conn = Conn;
    type Keys = Keys;
    type Prepared = ();
    type Table = (Label, f64);
    type Mark = Mark;
    type Storage = MyStorage;
    type Record = MyRun;

    fn spec(&self) -> RunSpec<MyStorage> {
        self.run
    }

    fn rows(keys: &Keys) -> usize {
        keys.rows
    }

    fn create(&self, conn: &mut Conn, keys: &Keys) -> Result<((Label, f64), Mark), Error> {
        create_table(conn, keys)?;
        Ok(((keys.sql_type, keys.key_bytes), mark(conn, true)?))
    }

    fn prepare(_: &mut Conn, _: &Keys) -> Result<(), Error> {
        Ok(())
    }

    fn insert(
        conn: &mut Conn,
        (): &(),
        keys: &Keys,
        range: std::ops::Range<usize>,
    ) -> Result<(), Error> {
        keys.insert(conn, range)
    }

    fn finish(
        &self,
        conn: &mut Conn,
        &(sql_type, key_bytes): &(Label, f64),
        before: &Mark,
        ended: &Ended<MyStorage>,
    ) -> Result<MyRun, Error> {
        let after = mark(conn, false)?;
        let (splits, merges, reorgs) = index_metrics(conn)?;
        let stats = index_stats(conn, TABLE)?;
        conn.query_drop(format!("DROP TABLE {TABLE}"))?;
        let page = self.page_size;
        let table_pages: u64 = stats.first().map_or(0, |s| s.2);
        let leaf_pages = stats.first().map_or(0, |s| s.1);
        let record = record_bytes(key_bytes, 0.0);
        let sizes = Sizes {
            file: stats.iter().map(|s| s.2).sum::<u64>() * page,
            table: table_pages * page,
            index: table_pages * page,
            leaf_pages,
            leaf_fill: leaf_fill(ended.rows, record, leaf_pages, page),
            wal: after.lsn_since(before),
        };
        let own = MyCounters {
            sql_type,
            splits,
            merges,
            reorgs,
            pages_written: after.pages_written.saturating_sub(before.pages_written),
        };
        Ok(MyRun::new(ended, sizes, own))
    }
}
