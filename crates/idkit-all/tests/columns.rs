//! Every scheme's id type in its native column, through every driver, on real servers:
//! PostgreSQL (`IDKIT_TEST_PG_URL`), MariaDB (`IDKIT_TEST_MYSQL_URL`), both started on
//! loopback by scripts/test.sh, and SQLite (in memory). For each scheme and driver:
//!
//! * ids round-trip through the column the mapping names (`ColumnForm::sql_type`);
//! * `ORDER BY id` returns the time-ordered schemes' ids in the order they were made
//!   (KSUID by second: its order within a second is random);
//! * a negative number or a value of the wrong width read back is a typed error;
//! * a 64-bit id with its top bit set is refused on encode, never stored as a negative number.
#![cfg(feature = "live-tests")]

use std::error::Error;
use std::fmt::Debug;
use std::time::Duration;

use idkit_core::IdScheme;
use idkit_core::column::{BigInt, ColumnError, ColumnErrorKind, ColumnForm, Engine};
use idkit_core::id::{FromGenerated, Id, IdType, Marker};
use idkit_objectid::ObjectIdGenerator;
use idkit_range::{RangeAllocator, RangeId, SqliteStore};
use idkit_snowflake::{
    Boundary, Discord, Instagram, Mastodon, Snowflake, SnowflakeId, Sonyflake, Twitter,
};
use idkit_tsid::{Tsid, TsidGenerator};
use idkit_typeid::{Prefix, TypeId, TypeIdGenerator};

/// Ids per scheme and driver.
const N: usize = 300;

struct User;
impl Marker for User {
    const PREFIX: &'static str = "user";
}

/// What `ORDER BY id` must give back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// The order the ids were made in.
    Generation,
    /// Non-decreasing seconds (KSUID).
    Seconds,
    /// Sorted, nothing more (uuid-v4).
    None,
}

/// One scheme's ids for a driver to store and read back, and what to expect of them.
struct Case<T> {
    /// The scheme, in its table's name.
    name: &'static str,
    /// The ids, in the order they were made.
    made: Vec<T>,
    /// What `ORDER BY id` must give back.
    order: Order,
    /// An id's second, for [`Order::Seconds`].
    seconds: fn(&T) -> u64,
    /// `uuid::Uuid`, whose driver impls are the drivers' own: their errors are theirs.
    upstream: bool,
}

impl<T> Case<T> {
    fn new(
        name: &'static str,
        made: Vec<T>,
        order: Order,
        seconds: fn(&T) -> u64,
        upstream: bool,
    ) -> Self {
        Self {
            name,
            made,
            order,
            seconds,
            upstream,
        }
    }

    /// The table this case's ids go into.
    fn table(&self) -> String {
        format!("idkit_col_{}", self.name)
    }
}

fn make<G: IdScheme, T: FromGenerated<G::Id>>(generator: &G) -> Vec<T> {
    (0..N).map(|_| generator.next_as().unwrap()).collect()
}

fn range_ids() -> Vec<RangeId> {
    let dir = std::env::temp_dir().join(format!(
        "idkit-columns-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open(dir.join("ids.db"), Duration::from_secs(5)).unwrap();
    let ids = make(
        &RangeAllocator::builder(store)
            .namespace("columns")
            .build()
            .unwrap(),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    ids
}

/// The column kind of an error anywhere in its source chain.
fn column_kind(err: &(dyn Error + 'static)) -> Option<ColumnErrorKind> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(c) = e.downcast_ref::<ColumnError>() {
            return Some(c.kind());
        }
        cur = e.source();
    }
    None
}

/// The id with its top bit set, where the scheme has such ids (64-bit layouts that use every
/// bit, range, TSID).
fn top_bit<T: IdType>() -> Option<T> {
    let column: T::Column = *(&BigInt((1 << 63) | 1) as &dyn std::any::Any).downcast_ref()?;
    T::from_column(column).ok()
}

impl<T: IdType + Debug> Case<T> {
    /// What was read back, against what was made.
    fn check_order(&self, read: &[T]) {
        let (name, made) = (self.name, &self.made);
        let mut sorted = made.clone();
        sorted.sort();
        assert_eq!(read, sorted, "{name}: ORDER BY id is the ids' own order");
        match self.order {
            Order::Generation => assert_eq!(read, made, "{name}: ORDER BY id is generation order"),
            Order::Seconds => assert!(
                read.windows(2)
                    .all(|w| (self.seconds)(&w[0]) <= (self.seconds)(&w[1])),
                "{name}: ORDER BY id is second order"
            ),
            Order::None => {}
        }
    }

    /// The checks shared by the drivers, given how to read back a negative `BIGINT` or a
    /// 3-byte binary value as `T` (each returns the driver's error), and how writing an id
    /// fails (`write`, called with the id whose top bit is set where the scheme has one).
    fn check_bad_values(
        &self,
        negative: impl FnOnce() -> Option<Box<dyn Error>>,
        short: impl FnOnce() -> Option<Box<dyn Error>>,
        write: impl FnOnce(T) -> Box<dyn Error>,
    ) {
        let name = self.name;
        let is_int = (&BigInt(0) as &dyn std::any::Any)
            .downcast_ref::<T::Column>()
            .is_some();
        let (err, kind) = if is_int {
            (negative(), ColumnErrorKind::Negative)
        } else {
            (short(), ColumnErrorKind::Width)
        };
        let err = err.unwrap_or_else(|| panic!("{name}: a bad value read back as an id"));
        if !self.upstream {
            assert_eq!(column_kind(err.as_ref()), Some(kind), "{name}: {err}");
        }
        if let Some(id) = top_bit::<T>() {
            let err = write(id);
            assert_eq!(
                column_kind(err.as_ref()),
                Some(ColumnErrorKind::SignBit),
                "{name}: {err}"
            );
        }
    }
}

macro_rules! each_scheme {
    ($run:ident($($pre:expr),*) $(. $await:tt)?) => {{
        $run::<SnowflakeId<Twitter>>($($pre,)* Case::new("twitter", make(&Snowflake::builder(Twitter).field("worker", 1).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<SnowflakeId<Discord>>($($pre,)* Case::new("discord", make(&Snowflake::builder(Discord).field("worker", 1).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<SnowflakeId<Instagram>>($($pre,)* Case::new("instagram", make(&Snowflake::builder(Instagram).field("shard", 1).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<SnowflakeId<Sonyflake>>($($pre,)* Case::new("sonyflake", make(&Snowflake::builder(Sonyflake).field("machine", 1).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<SnowflakeId<Mastodon>>($($pre,)* Case::new("mastodon", make(&Snowflake::builder(Mastodon).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<SnowflakeId<Boundary>>($($pre,)* Case::new("boundary", make(&Snowflake::builder(Boundary).field("worker", 1).build().unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<Id<User, SnowflakeId<Twitter>>>($($pre,)* Case::new("typed_twitter", make(&Snowflake::builder(Twitter).field("worker", 2).build().unwrap()), Order::Generation, |i| i.get().timestamp_ms() / 1000, false))$(.$await)?;
        $run::<uuid::Uuid>($($pre,)* Case::new("uuid_v4", make(&idkit_uuid::UuidV4::new()), Order::None, |_| 0, true))$(.$await)?;
        $run::<uuid::Uuid>($($pre,)* Case::new("uuid_v7", make(&idkit_uuid::UuidV7::new()), Order::Generation, |_| 0, true))$(.$await)?;
        $run::<Id<User, uuid::Uuid>>($($pre,)* Case::new("typed_uuid_v7", make(&idkit_uuid::UuidV7::new()), Order::Generation, |_| 0, true))$(.$await)?;
        $run::<idkit_ulid::Ulid>($($pre,)* Case::new("ulid", make(&idkit_ulid::UlidGenerator::new()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<idkit_ksuid::Ksuid>($($pre,)* Case::new("ksuid", make(&idkit_ksuid::KsuidGenerator::new()), Order::Seconds, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<RangeId>($($pre,)* Case::new("range", range_ids(), Order::Generation, |_| 0, false))$(.$await)?;
        $run::<Tsid>($($pre,)* Case::new("tsid", make(&TsidGenerator::with_node(10, 3).unwrap()), Order::Generation, |i| i.timestamp_ms() / 1000, false))$(.$await)?;
        $run::<idkit_objectid::ObjectId>($($pre,)* Case::new("objectid", make(&ObjectIdGenerator::new()), Order::Generation, |_| 0, false))$(.$await)?;
        $run::<Id<User, TypeId>>($($pre,)* Case::new("typeid", make(&TypeIdGenerator::new(Prefix::EMPTY)), Order::Generation, |_| 0, false))$(.$await)?;
    }};
}

// ---------------------------------------------------------------------------------------
// sqlx: one suite per database, alike but for placeholders and literals.

macro_rules! sqlx_suite {
    ($fn:ident, $db:ty, $engine:expr, $p1:literal, $p2:literal, $neg:literal, $short:literal) => {
        async fn $fn<T>(pool: &sqlx::Pool<$db>, case: Case<T>)
        where
            T: IdType
                + Debug
                + sqlx::Type<$db>
                + for<'q> sqlx::Encode<'q, $db>
                + for<'r> sqlx::Decode<'r, $db>
                + Unpin,
        {
            let (t, name, made) = (case.table(), case.name, &case.made);
            let sql_type = <T::Column as ColumnForm>::sql_type($engine);
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE IF EXISTS {t}")))
                .execute(pool)
                .await
                .unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "CREATE TABLE {t} (id {sql_type} PRIMARY KEY, seq INTEGER NOT NULL)"
            )))
            .execute(pool)
            .await
            .unwrap();
            let insert = format!("INSERT INTO {t} (id, seq) VALUES ({}, {})", $p1, $p2);
            for (seq, id) in made.iter().enumerate() {
                sqlx::query(sqlx::AssertSqlSafe(insert.as_str()))
                    .bind(*id)
                    .bind(i32::try_from(seq).unwrap())
                    .execute(pool)
                    .await
                    .unwrap();
            }
            let read: Vec<T> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT id FROM {t} ORDER BY id"
            )))
            .fetch_all(pool)
            .await
            .unwrap();
            case.check_order(&read);
            // One id looked up by value: the encoded form is the stored one.
            let found: i32 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT seq FROM {t} WHERE id = {}",
                $p1
            )))
            .bind(made[N / 2])
            .fetch_one(pool)
            .await
            .unwrap();
            assert_eq!(usize::try_from(found).unwrap(), N / 2, "{name}");

            let negative = sqlx::query_scalar::<_, T>($neg).fetch_one(pool).await.err();
            let short = sqlx::query_scalar::<_, T>($short)
                .fetch_one(pool)
                .await
                .err();
            // `bind` keeps only the message of an encoding error for `execute` to return;
            // `try_bind` returns the typed error at once.
            case.check_bad_values(
                || negative.map(|e| Box::new(e) as Box<dyn Error>),
                || short.map(|e| Box::new(e) as Box<dyn Error>),
                |id| {
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(insert.as_str()));
                    query.try_bind(id).unwrap_err()
                },
            );
            if let Some(id) = top_bit::<T>() {
                let err = sqlx::query(sqlx::AssertSqlSafe(insert.as_str()))
                    .bind(id)
                    .bind(-1)
                    .execute(pool)
                    .await
                    .unwrap_err();
                assert!(err.to_string().contains("top bit set"), "{name}: {err}");
            }
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE {t}")))
                .execute(pool)
                .await
                .unwrap();
        }
    };
}

sqlx_suite!(
    sqlx_pg,
    sqlx::Postgres,
    Engine::Postgres,
    "$1",
    "$2",
    "SELECT (-5)::bigint",
    "SELECT '\\x010203'::bytea"
);
sqlx_suite!(
    sqlx_mysql,
    sqlx::MySql,
    Engine::MySql,
    "?",
    "?",
    "SELECT CAST(-5 AS SIGNED)",
    "SELECT X'010203'"
);
sqlx_suite!(
    sqlx_sqlite,
    sqlx::Sqlite,
    Engine::Sqlite,
    "?1",
    "?2",
    "SELECT -5",
    "SELECT x'010203'"
);

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: scripts/test.sh starts the servers and sets it")
    })
}

/// A pool of at most `max` connections to `url`.
async fn pool<DB: sqlx::Database>(url: &str, max: u32) -> sqlx::Pool<DB> {
    sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(max)
        .connect(url)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_postgres() {
    let pool = pool::<sqlx::Postgres>(&env("IDKIT_TEST_PG_URL"), 2).await;
    each_scheme!(sqlx_pg(&pool).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_mariadb() {
    let pool = pool::<sqlx::MySql>(&env("IDKIT_TEST_MYSQL_URL"), 2).await;
    each_scheme!(sqlx_mysql(&pool).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_sqlite_in_memory() {
    // One connection: every in-memory connection is a database of its own.
    let pool = pool::<sqlx::Sqlite>("sqlite::memory:", 1).await;
    each_scheme!(sqlx_sqlite(&pool).await);
}

// ---------------------------------------------------------------------------------------
// postgres (the synchronous client over tokio-postgres; same traits).

fn pg<T>(client: &mut postgres::Client, case: Case<T>)
where
    T: IdType + Debug + postgres::types::ToSql + for<'a> postgres::types::FromSql<'a>,
{
    let (t, made) = (case.table(), &case.made);
    let sql_type = <T::Column as ColumnForm>::sql_type(Engine::Postgres);
    client.batch_execute(&format!("DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id {sql_type} PRIMARY KEY, seq INTEGER NOT NULL)")).unwrap();
    let insert = format!("INSERT INTO {t} (id, seq) VALUES ($1, $2)");
    for (seq, id) in made.iter().enumerate() {
        client
            .execute(&insert, &[id, &i32::try_from(seq).unwrap()])
            .unwrap();
    }
    let read: Vec<T> = client
        .query(&format!("SELECT id FROM {t} ORDER BY id"), &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    case.check_order(&read);
    let mut one = |sql: &str| -> Option<Box<dyn Error>> {
        let row = client.query_one(sql, &[]).unwrap();
        row.try_get::<_, T>(0)
            .err()
            .map(|e| Box::new(e) as Box<dyn Error>)
    };
    let negative = one("SELECT (-5)::bigint");
    let short = one("SELECT '\\x010203'::bytea");
    let write = |id: T| -> Box<dyn Error> {
        Box::new(client.execute(&insert, &[&id, &-1i32]).unwrap_err())
    };
    case.check_bad_values(|| negative, || short, write);
    client.batch_execute(&format!("DROP TABLE {t}")).unwrap();
}

#[test]
fn postgres_client() {
    let mut client = postgres::Client::connect(&env("IDKIT_TEST_PG_URL"), postgres::NoTls).unwrap();
    each_scheme!(pg(&mut client));
}

// ---------------------------------------------------------------------------------------
// rusqlite.

fn sqlite<T>(conn: &rusqlite::Connection, case: Case<T>)
where
    T: IdType + Debug + rusqlite::types::ToSql + rusqlite::types::FromSql,
{
    let (t, made) = (case.table(), &case.made);
    let sql_type = <T::Column as ColumnForm>::sql_type(Engine::Sqlite);
    conn.execute_batch(&format!("DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id {sql_type} PRIMARY KEY, seq INTEGER NOT NULL)")).unwrap();
    let insert = format!("INSERT INTO {t} (id, seq) VALUES (?1, ?2)");
    for (seq, id) in made.iter().enumerate() {
        conn.execute(&insert, rusqlite::params![id, i64::try_from(seq).unwrap()])
            .unwrap();
    }
    let mut stmt = conn
        .prepare(&format!("SELECT id FROM {t} ORDER BY id"))
        .unwrap();
    let read: Vec<T> = stmt
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    case.check_order(&read);
    let one = |sql: &str| -> Option<Box<dyn Error>> {
        conn.query_row(sql, [], |row| row.get::<_, T>(0))
            .err()
            .map(|e| Box::new(e) as Box<dyn Error>)
    };
    let negative = one("SELECT -5");
    let short = one("SELECT x'010203'");
    let write = |id: T| -> Box<dyn Error> {
        Box::new(
            conn.execute(&insert, rusqlite::params![id, -1])
                .unwrap_err(),
        )
    };
    case.check_bad_values(|| negative, || short, write);
    conn.execute_batch(&format!("DROP TABLE {t}")).unwrap();
}

#[test]
fn rusqlite_in_memory() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    each_scheme!(sqlite(&conn));
}
