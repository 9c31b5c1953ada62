//! Insert runs in PostgreSQL: 1,000 rows per commit (one `INSERT ... SELECT unnest($1)`
//! statement, one round trip), a `CHECKPOINT` every tenth of the run so that full-page
//! images appear as they do in production, and the tree measured at the end.

use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Statement};
use serde::{Deserialize, Serialize};

use super::count;
use crate::Error;
use crate::engine::Run;
use crate::engine::insert::{CurvePoint, Ended, RunSpec, ServerRun, Sizes, StorageName, TABLE};

type Range = std::ops::Range<usize>;

/// How the id is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PgStorage {
    /// A 64-bit id as `bigint PRIMARY KEY`.
    BigintPk,
    /// A 128-bit id as `uuid PRIMARY KEY`.
    UuidPk,
    /// The id's bytes as `bytea PRIMARY KEY`.
    ByteaPk,
    /// The canonical string as `text COLLATE "C" PRIMARY KEY`.
    TextPk,
    /// The id in its native type as a `UNIQUE` index on a table keyed by an identity column.
    UniqueIndex,
}

impl StorageName for PgStorage {
    fn name(self) -> &'static str {
        match self {
            Self::BigintPk => "bigint_pk",
            Self::UuidPk => "uuid_pk",
            Self::ByteaPk => "bytea_pk",
            Self::TextPk => "text_pk",
            Self::UniqueIndex => "unique_index",
        }
    }

    /// `BIGINT` up to 64 bits, `uuid` for 128, else `bytea`, as the primary key.
    fn native(bits: u32) -> Self {
        Form::native(bits).pk()
    }
}

/// One batch's keys in the form a statement binds.
#[derive(Debug, Clone)]
pub enum Keys {
    /// `bigint`.
    Bigint(Vec<i64>),
    /// `uuid`.
    Uuid(Vec<Uuid16>),
    /// `bytea`.
    Bytea(Vec<Vec<u8>>),
    /// `text`.
    Text(Vec<String>),
}

impl Keys {
    /// The column type these keys go into.
    pub fn form(&self) -> Form {
        match self {
            Self::Bigint(_) => Form::Bigint,
            Self::Uuid(_) => Form::Uuid,
            Self::Bytea(_) => Form::Bytea,
            Self::Text(_) => Form::Text,
        }
    }

    /// Inserts keys `range` in one statement.
    fn insert(
        &self,
        client: &mut Client,
        stmt: &Statement,
        range: Range,
    ) -> Result<u64, postgres::Error> {
        match self {
            Self::Bigint(v) => client.execute(stmt, &[&&v[range]]),
            Self::Uuid(v) => client.execute(stmt, &[&&v[range]]),
            Self::Bytea(v) => client.execute(stmt, &[&&v[range]]),
            Self::Text(v) => client.execute(stmt, &[&&v[range]]),
        }
    }
}

/// A UUID's 16 bytes, bound as PostgreSQL's `uuid` (its binary form is the bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uuid16(pub [u8; 16]);

impl ToSql for Uuid16 {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::UUID
    }

    to_sql_checked!();
}

/// One insert run (a row of `btree_postgres.csv`).
pub type PgRun = Run<PgStorage, PgCounters>;

/// PostgreSQL's own counters of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PgCounters {
    /// Levels of the id's index (1: the root is a leaf; `tree_level + 1`).
    pub depth: u64,
    /// `Btree/SPLIT_L` records: splits of every b-tree of the table, all levels.
    pub splits_l: u64,
    /// `Btree/SPLIT_R` records.
    pub splits_r: u64,
    /// Full-page images written (`pg_stat_wal.wal_fpi`).
    pub fpi: u64,
    /// Bytes of those images (`pg_get_wal_stats`'s `fpi_size`).
    pub fpi_bytes: u64,
    /// `CHECKPOINT`s issued during the run.
    pub checkpoints: u64,
}

impl PgRun {
    /// Page splits, both kinds.
    pub fn splits(&self) -> u64 {
        self.own.splits_l + self.own.splits_r
    }

    /// Full-page images per 1,000 rows.
    pub fn fpi_per_1k(&self) -> f64 {
        self.own.fpi as f64 * 1000.0 / self.rows.max(1) as f64
    }
}

/// One point of an insert-rate curve (a row of `btree_postgres_curve.csv`).
pub type PgCurvePoint = CurvePoint<PgStorage>;

/// A PostgreSQL run: what every engine's run is, and its checkpoint schedule.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Scheme, storage, cache (`shared_buffers`), rows per commit, curve points.
    pub run: RunSpec<PgStorage>,
    /// Rows between two `CHECKPOINT`s.
    pub checkpoint_rows: usize,
}

/// Creates the table for `storage` with an id column of `form`'s type; returns the name of the
/// id's index.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn create_table(client: &mut Client, storage: PgStorage, form: Form) -> Result<String, Error> {
    let sql_type = form.sql_type();
    client.batch_execute(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
    let (sql, index) = match storage {
        PgStorage::UniqueIndex => (
            format!(
                "CREATE TABLE {TABLE}(n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
                 id {sql_type} NOT NULL UNIQUE) WITH (autovacuum_enabled = false)"
            ),
            format!("{TABLE}_id_key"),
        ),
        _ => (
            format!(
                "CREATE TABLE {TABLE}(id {sql_type} PRIMARY KEY) WITH (autovacuum_enabled = false)"
            ),
            format!("{TABLE}_pkey"),
        ),
    };
    client.batch_execute(&sql)?;
    Ok(index)
}

/// The WAL position and full-page-image count now, after a checkpoint.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn wal_mark(client: &mut Client) -> Result<(String, i64), Error> {
    // This backend's pending WAL counters reach pg_stat_wal when it is next idle.
    client.batch_execute("SELECT pg_stat_force_next_flush()")?;
    client.batch_execute("SELECT pg_stat_clear_snapshot()")?;
    let row = client.query_one(
        "SELECT pg_current_wal_flush_lsn()::text, (SELECT wal_fpi FROM pg_stat_wal)",
        &[],
    )?;
    Ok((row.get(0), row.get(1)))
}

/// WAL written between two marks: bytes, `Btree/SPLIT_L`, `Btree/SPLIT_R`, full-page images
/// and their bytes.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn wal_between(
    client: &mut Client,
    from: &(String, i64),
    to: &(String, i64),
) -> Result<WalStats, Error> {
    let bytes: i64 = client
        .query_one(
            "SELECT pg_wal_lsn_diff($2::text::pg_lsn, $1::text::pg_lsn)::bigint",
            &[&from.0, &to.0],
        )?
        .get(0);
    let mut stats = WalStats {
        bytes: count(bytes),
        fpi: count(to.1 - from.1),
        ..WalStats::default()
    };
    if bytes > 0 {
        for row in client.query(
            "SELECT \"resource_manager/record_type\", count, fpi_size \
             FROM pg_get_wal_stats($1::text::pg_lsn, $2::text::pg_lsn, true)",
            &[&from.0, &to.0],
        )? {
            let kind: String = row.get(0);
            let n: i64 = row.get(1);
            let fpi_size: i64 = row.get(2);
            stats.fpi_bytes += count(fpi_size);
            match kind.as_str() {
                "Btree/SPLIT_L" => stats.splits_l += count(n),
                "Btree/SPLIT_R" => stats.splits_r += count(n),
                _ => {}
            }
        }
    }
    Ok(stats)
}

/// WAL between two marks.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalStats {
    /// Bytes.
    pub bytes: u64,
    /// `Btree/SPLIT_L` records.
    pub splits_l: u64,
    /// `Btree/SPLIT_R` records.
    pub splits_r: u64,
    /// Full-page images.
    pub fpi: u64,
    /// Their bytes.
    pub fpi_bytes: u64,
}

/// Sizes and shape of the table and the id's index.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeStats {
    /// `pg_total_relation_size`.
    pub total: u64,
    /// The heap.
    pub table: u64,
    /// The id's index.
    pub index: u64,
    /// Its leaf pages.
    pub leaf_pages: u64,
    /// Its average leaf density, 0 to 1.
    pub leaf_fill: f64,
    /// Its levels.
    pub depth: u64,
}

/// Reads [`TreeStats`] for the table and `index`.
///
/// # Errors
///
/// [`Error::Postgres`].
pub fn tree_stats(client: &mut Client, index: &str) -> Result<TreeStats, Error> {
    let row = client.query_one(
        "SELECT pg_total_relation_size($1::text::regclass), pg_relation_size($1::text::regclass), \
         pg_relation_size($2::text::regclass), s.leaf_pages, s.avg_leaf_density, s.tree_level \
         FROM pgstatindex($2) s",
        &[&TABLE, &index],
    )?;
    let density: f64 = row.get(4);
    let level: i32 = row.get(5);
    Ok(TreeStats {
        total: count(row.get(0)),
        table: count(row.get(1)),
        index: count(row.get(2)),
        leaf_pages: count(row.get(3)),
        leaf_fill: if density.is_nan() {
            0.0
        } else {
            density / 100.0
        },
        depth: u64::try_from(level).unwrap_or(0) + 1,
    })
}

/// The `INSERT` that binds one batch of `keys`.
pub fn insert_sql(keys: &Keys) -> String {
    format!(
        "INSERT INTO {TABLE}(id) SELECT unnest($1::{})",
        keys.form().array_type()
    )
}

/// True when a commit that took the rows written from `before` to `after` (of `total`)
/// crossed a multiple of `every`, and rows are still to come: the schedule of every run's
/// `CHECKPOINT`s, `total.div_ceil(every) - 1` of them.
pub(crate) fn checkpoint_due(before: usize, after: usize, every: usize, total: usize) -> bool {
    after / every > before / every && after < total
}

/// A PostgreSQL insert run: a fresh table and a `CHECKPOINT` before it, one
/// `INSERT ... SELECT unnest($1)` per commit, a `CHECKPOINT` every `checkpoint_rows` rows
/// (not timed), the WAL between the first and last mark and the index read at the end.
impl ServerRun for Spec {
    type Conn = Client;
    type Keys = Keys;
    type Prepared = Statement;
    type Table = String;
    type Mark = (String, i64);
    type Storage = PgStorage;
    type Record = PgRun;

    fn spec(&self) -> RunSpec<PgStorage> {
        self.run
    }

    fn rows(keys: &Keys) -> usize {
        match keys {
            Keys::Bigint(v) => v.len(),
            Keys::Uuid(v) => v.len(),
            Keys::Bytea(v) => v.len(),
            Keys::Text(v) => v.len(),
        }
    }

    fn create(&self, client: &mut Client, keys: &Keys) -> Result<(String, (String, i64)), Error> {
        let index = create_table(client, self.run.storage, keys.form())?;
        client.batch_execute("CHECKPOINT")?;
        Ok((index, wal_mark(client)?))
    }

    fn prepare(client: &mut Client, keys: &Keys) -> Result<Statement, Error> {
        Ok(client.prepare(&insert_sql(keys))?)
    }

    fn insert(
        client: &mut Client,
        stmt: &Statement,
        keys: &Keys,
        range: Range,
    ) -> Result<(), Error> {
        keys.insert(client, stmt, range)?;
        Ok(())
    }

    fn between(
        &self,
        client: &mut Client,
        before: usize,
        after: usize,
        total: usize,
    ) -> Result<u64, Error> {
        if !checkpoint_due(before, after, self.checkpoint_rows, total) {
            return Ok(0);
        }
        client.batch_execute("CHECKPOINT")?;
        Ok(1)
    }

    fn idle(client: &mut Client) -> Result<(), Error> {
        // Hand this backend's WAL counters to pg_stat_wal before the final mark: the flush
        // happens when it is idle, before it reads the next statement.
        client.batch_execute("SELECT pg_stat_force_next_flush()")?;
        client.batch_execute("SELECT 1")?;
        Ok(())
    }

    fn finish(
        &self,
        client: &mut Client,
        index: &String,
        before: &(String, i64),
        ended: &Ended<PgStorage>,
    ) -> Result<PgRun, Error> {
        let after = wal_mark(client)?;
        let wal = wal_between(client, before, &after)?;
        let tree = tree_stats(client, index)?;
        client.batch_execute(&format!("DROP TABLE {TABLE}"))?;
        let sizes = Sizes {
            file: tree.total,
            table: tree.table,
            index: tree.index,
            leaf_pages: tree.leaf_pages,
            leaf_fill: tree.leaf_fill,
            wal: wal.bytes,
        };
        let own = PgCounters {
            depth: tree.depth,
            splits_l: wal.splits_l,
            splits_r: wal.splits_r,
            fpi: wal.fpi,
            fpi_bytes: wal.fpi_bytes,
            checkpoints: ended.between,
        };
        Ok(PgRun::new(ended, sizes, own))
    }
}

/// The column type a scheme's ids are stored as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `bigint` (64-bit ids).
    Bigint,
    /// `uuid` (128-bit ids).
    Uuid,
    /// `bytea` (any width).
    Bytea,
    /// The canonical text.
    Text,
}

impl Form {
    /// A scheme's own binary form: `bigint` up to 64 bits, `uuid` at 128, else `bytea`.
    pub fn native(bits: u32) -> Self {
        match bits {
            0..=64 => Self::Bigint,
            128 => Self::Uuid,
            _ => Self::Bytea,
        }
    }

    /// The SQL type of the column.
    pub fn sql_type(self) -> &'static str {
        match self {
            Self::Bigint => "bigint",
            Self::Uuid => "uuid",
            Self::Bytea => "bytea",
            Self::Text => "text COLLATE \"C\"",
        }
    }

    fn array_type(self) -> &'static str {
        match self {
            Self::Bigint => "bigint[]",
            Self::Uuid => "uuid[]",
            Self::Bytea => "bytea[]",
            Self::Text => "text[]",
        }
    }

    /// The primary-key storage of this form.
    pub fn pk(self) -> PgStorage {
        match self {
            Self::Bigint => PgStorage::BigintPk,
            Self::Uuid => PgStorage::UuidPk,
            Self::Bytea => PgStorage::ByteaPk,
            Self::Text => PgStorage::TextPk,
        }
    }
}

/// `ids` in `form`; `format` gives the canonical text.
///
/// # Errors
///
/// [`Error::IdRange`] for a 64-bit id above `i64::MAX` or a `uuid` that is not 16 bytes,
/// or the scheme's error from `format`.
pub fn to_keys(
    scheme: &'static str,
    ids: &[idkit_core::RawId],
    form: Form,
    format: &dyn Fn(&idkit_core::RawId) -> Result<String, Error>,
) -> Result<Keys, Error> {
    Ok(match form {
        Form::Bigint => Keys::Bigint(crate::engine::signed_keys(scheme, ids)?),
        Form::Uuid => Keys::Uuid(
            ids.iter()
                .map(|id| {
                    id.to_array()
                        .map(Uuid16)
                        .map_err(|_| Error::IdRange { scheme })
                })
                .collect::<Result<_, _>>()?,
        ),
        Form::Bytea => Keys::Bytea(ids.iter().map(|id| id.as_bytes().to_vec()).collect()),
        Form::Text => Keys::Text(ids.iter().map(format).collect::<Result<_, _>>()?),
    })
}
