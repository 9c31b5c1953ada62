//! Typed ids as Diesel primary keys, on SQLite (in memory, always), PostgreSQL
//! (`IDKIT_TEST_PG_URL`) and MariaDB (`IDKIT_TEST_MYSQL_URL`), the servers started on loopback
//! by scripts/test.sh with feature `live-tests`. For each backend: a table keyed by a typed
//! Snowflake id and one keyed by a typed TypeID, Diesel-generated inserts, a find by id,
//! `ORDER BY id` in generation order, and the errors: a 64-bit id with its top bit set refused
//! on insert, a negative number and a binary value of the wrong width (SQLite, MySQL) refused
//! on reading, all as a typed `ColumnError`.

mod common;

use common::diesel_kind;
use idkit_example_orm::{OrderId, User, UserId};
use idkit_snowflake::idkit_core::column::{BigInt, ColumnErrorKind};
use idkit_snowflake::idkit_core::id::{Id, IdType};
use idkit_snowflake::{Discord, IdScheme, Snowflake, SnowflakeId, Twitter};
use idkit_typeid::{Prefix, TypeIdGenerator};

/// Rows per table.
const N: usize = 200;

/// `N` typed ids of each table, in the order they were made.
fn made() -> (Vec<UserId>, Vec<OrderId>) {
    let users = Snowflake::builder(Twitter)
        .field("worker", 3)
        .build_atomic()
        .unwrap();
    let orders = TypeIdGenerator::new(Prefix::new("order").unwrap());
    (
        (0..N).map(|_| users.next_as().unwrap()).collect(),
        (0..N).map(|_| orders.next_as().unwrap()).collect(),
    )
}

/// The ids in an order that is not the generation order (a fixed interleaving).
fn shuffled<T: Copy>(ids: &[T]) -> Vec<T> {
    (0..ids.len())
        .map(|i| ids[(i * 7 + 3) % ids.len()])
        .collect()
}

/// A Discord-layout id (every bit used) with its top bit set.
type FullId = Id<User, SnowflakeId<Discord>>;
fn top_bit_id() -> FullId {
    FullId::from_column(BigInt((1 << 63) | 1)).unwrap()
}

/// One backend's suite: its connection, the SQL type of a 16-byte key, and its DDL.
macro_rules! suite {
    ($name:ident, $conn:ty, $url:expr, $uuid:ident, $blob:ident, $users_ddl:literal,
     $orders_ddl:literal, $full_ddl:literal, $short_blob:expr) => {
        mod $name {
            use diesel::prelude::*;

            use super::*;

            diesel::table! {
                /// Users, keyed by a typed Snowflake id.
                diesel_users (id) {
                    /// `BIGINT`.
                    id -> BigInt,
                    /// A name.
                    name -> Text,
                }
            }

            diesel::table! {
                /// Orders, keyed by a typed TypeID.
                diesel_orders (id) {
                    /// `uuid` in PostgreSQL, 16 bytes in MySQL, text in SQLite (as
                    /// `idkit_typeid()` writes it).
                    id -> $uuid,
                    /// The user who ordered.
                    user_id -> BigInt,
                }
            }

            diesel::table! {
                /// Ids that use all 64 bits.
                diesel_full (id) {
                    /// `BIGINT`.
                    id -> BigInt,
                }
            }

            #[derive(Debug, Clone, PartialEq, Insertable, Queryable, Selectable)]
            #[diesel(table_name = diesel_users)]
            struct UserRow {
                id: UserId,
                name: String,
            }

            #[derive(Debug, Clone, PartialEq, Insertable, Queryable, Selectable)]
            #[diesel(table_name = diesel_orders)]
            struct OrderRow {
                id: OrderId,
                user_id: UserId,
            }

            fn fresh(conn: &mut $conn) {
                for table in ["diesel_users", "diesel_orders", "diesel_full"] {
                    diesel::sql_query(format!("DROP TABLE IF EXISTS {table}"))
                        .execute(conn)
                        .unwrap();
                }
                for ddl in [$users_ddl, $orders_ddl, $full_ddl] {
                    diesel::sql_query(ddl).execute(conn).unwrap();
                }
            }

            #[test]
            fn typed_ids_as_primary_keys() {
                let mut conn = <$conn>::establish(&$url).unwrap();
                let conn = &mut conn;
                fresh(conn);
                let (user_ids, order_ids) = made();

                for id in shuffled(&user_ids) {
                    let row = UserRow {
                        id,
                        name: format!("user {id}"),
                    };
                    diesel::insert_into(diesel_users::table)
                        .values(&row)
                        .execute(conn)
                        .unwrap();
                }
                for (i, id) in shuffled(&order_ids).into_iter().enumerate() {
                    let row = OrderRow {
                        id,
                        user_id: user_ids[i],
                    };
                    diesel::insert_into(diesel_orders::table)
                        .values(&row)
                        .execute(conn)
                        .unwrap();
                }

                // Found by id, and ORDER BY id is the order they were made in.
                let found: UserRow = diesel_users::table.find(user_ids[17]).first(conn).unwrap();
                assert_eq!(
                    found,
                    UserRow {
                        id: user_ids[17],
                        name: format!("user {}", user_ids[17])
                    }
                );
                let found: OrderRow = diesel_orders::table
                    .find(order_ids[42])
                    .first(conn)
                    .unwrap();
                assert_eq!(found.id, order_ids[42]);
                assert_eq!(
                    found.id.to_string(),
                    order_ids[42].to_string(),
                    "the marker's prefix"
                );
                let by_id: Vec<UserId> = diesel_users::table
                    .select(diesel_users::id)
                    .order(diesel_users::id)
                    .load(conn)
                    .unwrap();
                assert_eq!(by_id, user_ids);
                let by_id: Vec<OrderId> = diesel_orders::table
                    .select(diesel_orders::id)
                    .order(diesel_orders::id)
                    .load(conn)
                    .unwrap();
                assert_eq!(by_id, order_ids);
                let rows: Vec<OrderRow> = diesel_orders::table
                    .filter(diesel_orders::user_id.eq(user_ids[5]))
                    .load(conn)
                    .unwrap();
                assert_eq!(rows.len(), 1);
                let nullable: Option<UserId> = diesel_users::table
                    .select(diesel_users::id.nullable())
                    .filter(diesel_users::id.eq(&user_ids[0]))
                    .first(conn)
                    .unwrap();
                assert_eq!(nullable, Some(user_ids[0]));

                // Into and out of `Text`: the id's canonical text (a column the SQL
                // functions fill with text, a `text` key).
                let text: String = diesel::select(
                    diesel::dsl::sql::<diesel::sql_types::Text>("")
                        .bind::<diesel::sql_types::Text, _>(order_ids[3]),
                )
                .get_result(conn)
                .unwrap();
                assert_eq!(text, order_ids[3].to_string());
                let read: OrderId = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
                    &format!("'{}'", order_ids[3]),
                ))
                .get_result(conn)
                .unwrap();
                assert_eq!(read, order_ids[3]);
                let read: UserId = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
                    &format!("'{}'", user_ids[3]),
                ))
                .get_result(conn)
                .unwrap();
                assert_eq!(read, user_ids[3]);

                // A 64-bit id with its top bit set is refused, never stored as a negative number.
                let err = diesel::insert_into(diesel_full::table)
                    .values(diesel_full::id.eq(top_bit_id()))
                    .execute(conn)
                    .unwrap_err();
                assert_eq!(diesel_kind(&err), Some(ColumnErrorKind::SignBit), "{err}");
                let stored: i64 = diesel_full::table.count().get_result(conn).unwrap();
                assert_eq!(stored, 0);

                // A negative number read back as an id.
                diesel::sql_query("INSERT INTO diesel_users (id, name) VALUES (-5, 'negative')")
                    .execute(conn)
                    .unwrap();
                let err = diesel_users::table
                    .select(diesel_users::id)
                    .load::<UserId>(conn)
                    .unwrap_err();
                assert_eq!(diesel_kind(&err), Some(ColumnErrorKind::Negative), "{err}");

                // A binary value of the wrong width (PostgreSQL's `uuid` cannot be one).
                if let Some(three_bytes) = $short_blob {
                    let err =
                        diesel::select(diesel::dsl::sql::<diesel::sql_types::$blob>(three_bytes))
                            .get_result::<OrderId>(conn)
                            .unwrap_err();
                    assert_eq!(diesel_kind(&err), Some(ColumnErrorKind::Width), "{err}");
                }
            }
        }
    };
}

suite!(
    sqlite,
    diesel::sqlite::SqliteConnection,
    ":memory:",
    Text,
    Binary,
    "CREATE TABLE diesel_users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
    "CREATE TABLE diesel_orders (id TEXT PRIMARY KEY, user_id INTEGER NOT NULL)",
    "CREATE TABLE diesel_full (id INTEGER PRIMARY KEY)",
    Some("X'010203'")
);

#[cfg(feature = "live-tests")]
fn env_url(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: scripts/test.sh starts the server and sets it")
    })
}

#[cfg(feature = "live-tests")]
suite!(
    postgres,
    diesel::pg::PgConnection,
    env_url("IDKIT_TEST_PG_URL"),
    Uuid,
    Uuid,
    "CREATE TABLE diesel_users (id bigint PRIMARY KEY, name text NOT NULL)",
    "CREATE TABLE diesel_orders (id uuid PRIMARY KEY, user_id bigint NOT NULL)",
    "CREATE TABLE diesel_full (id bigint PRIMARY KEY)",
    None::<&str>
);

#[cfg(feature = "live-tests")]
suite!(
    mysql,
    diesel::mysql::MysqlConnection,
    env_url("IDKIT_TEST_MYSQL_URL"),
    Binary,
    Binary,
    "CREATE TABLE diesel_users (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)",
    "CREATE TABLE diesel_orders (id BINARY(16) PRIMARY KEY, user_id BIGINT NOT NULL)",
    "CREATE TABLE diesel_full (id BIGINT PRIMARY KEY)",
    Some("X'010203'")
);
