//! Typed ids as SeaORM primary keys, on SQLite (in memory, always), PostgreSQL
//! (`IDKIT_TEST_PG_URL`) and MariaDB (`IDKIT_TEST_MYSQL_URL`), the servers started on loopback
//! by scripts/test.sh with feature `live-tests`. The entities of `idkit_example_orm` (a user
//! keyed by `Id<User, SnowflakeId<Twitter>>` with `auto_increment = false`, an order keyed by
//! a typed TypeID), their tables made by SeaORM from the entities, then for each backend:
//! ActiveModel inserts, a find by id, `ORDER BY id` in generation order, and the errors: a
//! negative number and a binary value of the wrong width read back are `DbErr::TryIntoErr`
//! carrying a `ColumnError`; a 64-bit id with its top bit set never becomes a number.

mod common;

use common::sea_orm_kind;
use idkit_example_orm::{OrderId, User, UserId, order, user};
use idkit_snowflake::idkit_core::column::{BigInt, ColumnErrorKind};
use idkit_snowflake::idkit_core::id::{Id, IdType};
use idkit_snowflake::{Discord, IdScheme, Snowflake, SnowflakeId, Twitter};
use idkit_typeid::{Prefix, TypeIdGenerator};
use sea_orm::sea_query::{ColumnType, Nullable, Value, ValueType};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, Database, DatabaseConnection, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, Schema, Set, TryFromU64,
};

/// Rows per table.
const N: usize = 200;

async fn run(url: &str) {
    let db: DatabaseConnection = Database::connect(url).await.unwrap();
    for table in ["seaorm_users", "seaorm_orders"] {
        db.execute_unprepared(&format!("DROP TABLE IF EXISTS {table}"))
            .await
            .unwrap();
    }
    let schema = Schema::new(db.get_database_backend());
    db.execute(&schema.create_table_from_entity(user::Entity))
        .await
        .unwrap();
    db.execute(&schema.create_table_from_entity(order::Entity))
        .await
        .unwrap();

    let users = Snowflake::builder(Twitter)
        .field("worker", 4)
        .build_atomic()
        .unwrap();
    let orders = TypeIdGenerator::new(Prefix::new("order").unwrap());
    let user_ids: Vec<UserId> = (0..N).map(|_| users.next_as().unwrap()).collect();
    let order_ids: Vec<OrderId> = (0..N).map(|_| orders.next_as().unwrap()).collect();

    // Inserted out of the order they were made in.
    for i in (0..N).map(|i| (i * 7 + 3) % N) {
        let inserted = user::ActiveModel {
            id: Set(user_ids[i]),
            name: Set(format!("user {i}")),
        }
        .insert(&db)
        .await
        .unwrap();
        assert_eq!(inserted.id, user_ids[i]);
        order::ActiveModel {
            id: Set(order_ids[i]),
            user_id: Set(user_ids[i]),
            item: Set(format!("item {i}")),
        }
        .insert(&db)
        .await
        .unwrap();
    }

    // Found by id; ORDER BY id is the order they were made in.
    let found = user::Entity::find_by_id(user_ids[17])
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.name, "user 17");
    let found = order::Entity::find_by_id(order_ids[42])
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.id, found.user_id), (order_ids[42], user_ids[42]));
    assert_eq!(
        found.id.to_string(),
        order_ids[42].to_string(),
        "the marker's prefix"
    );
    let by_id: Vec<UserId> = user::Entity::find()
        .order_by_asc(user::Column::Id)
        .all(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(by_id, user_ids);
    let by_id: Vec<OrderId> = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .collect();
    assert_eq!(by_id, order_ids);
    let of_user = order::Entity::find()
        .filter(order::Column::UserId.eq(user_ids[5]))
        .all(&db)
        .await
        .unwrap();
    assert_eq!(of_user.len(), 1);
    let ids: Vec<UserId> = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::Id.is_in(user_ids[..3].iter().copied()))
        .order_by_asc(user::Column::Id)
        .into_tuple()
        .all(&db)
        .await
        .unwrap();
    assert_eq!(ids, user_ids[..3]);

    // A negative number read back as an id.
    db.execute_unprepared("INSERT INTO seaorm_users (id, name) VALUES (-5, 'negative')")
        .await
        .unwrap();
    let err = user::Entity::find().all(&db).await.unwrap_err();
    assert_eq!(sea_orm_kind(&err), Some(ColumnErrorKind::Negative), "{err}");

    // A binary value of the wrong width, where the column can hold one (PostgreSQL's `uuid`
    // cannot; MySQL's BINARY(16) pads a short value to 16 bytes).
    if url.starts_with("sqlite") {
        db.execute_unprepared(
            "INSERT INTO seaorm_orders (id, user_id, item) VALUES (X'010203', 1, 'short')",
        )
        .await
        .unwrap();
        let err = order::Entity::find().all(&db).await.unwrap_err();
        assert_eq!(sea_orm_kind(&err), Some(ColumnErrorKind::Width), "{err}");
    }
}

#[tokio::test]
async fn typed_ids_as_primary_keys_in_sqlite() {
    run("sqlite::memory:").await;
}

#[cfg(feature = "live-tests")]
fn env_url(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: scripts/test.sh starts the server and sets it")
    })
}

#[cfg(feature = "live-tests")]
#[tokio::test]
async fn typed_ids_as_primary_keys_in_postgres() {
    run(&env_url("IDKIT_TEST_PG_URL")).await;
}

#[cfg(feature = "live-tests")]
#[tokio::test]
async fn typed_ids_as_primary_keys_in_mariadb() {
    run(&env_url("IDKIT_TEST_MYSQL_URL")).await;
}

/// The values and types SeaORM sees, without a database.
#[test]
fn values_column_types_and_conversions() {
    let users = Snowflake::builder(Twitter)
        .field("worker", 4)
        .build_atomic()
        .unwrap();
    let id: UserId = users.next_as().unwrap();
    let raw = id.to_column().to_i64().unwrap();
    assert_eq!(Value::from(id), Value::BigInt(Some(raw)));
    assert_eq!(
        <UserId as ValueType>::try_from(Value::BigInt(Some(raw))).ok(),
        Some(id)
    );
    assert!(<UserId as ValueType>::try_from(Value::BigInt(Some(-1))).is_err());
    // Text is the id's canonical text (a column the SQL functions fill with text); a value
    // of another type, or text that is no id, is refused.
    assert_eq!(
        <UserId as ValueType>::try_from(Value::String(Some(id.to_string()))).ok(),
        Some(id)
    );
    assert!(<UserId as ValueType>::try_from(Value::String(Some("one".into()))).is_err());
    assert!(<UserId as ValueType>::try_from(Value::Double(Some(1.0))).is_err());
    assert_eq!(<UserId as ValueType>::column_type(), ColumnType::BigInteger);
    assert_eq!(<UserId as Nullable>::null(), Value::BigInt(None));
    assert_eq!(
        <UserId as TryFromU64>::try_from_u64(id.to_column().0),
        Ok(id)
    );
    assert!(<UserId as TryFromU64>::try_from_u64(1 << 63).is_err());

    let order: OrderId = TypeIdGenerator::new(Prefix::new("order").unwrap())
        .next_as()
        .unwrap();
    let Value::Uuid(Some(uuid)) = Value::from(order) else {
        panic!("a TypeID is a UUID value");
    };
    assert_eq!(uuid.as_bytes(), &order.to_column().0);
    assert_eq!(
        <OrderId as ValueType>::try_from(Value::Uuid(Some(uuid))).ok(),
        Some(order)
    );
    assert_eq!(<OrderId as ValueType>::column_type(), ColumnType::Uuid);
    assert_eq!(<OrderId as Nullable>::null(), Value::Uuid(None));
    assert!(<OrderId as TryFromU64>::try_from_u64(1).is_err());

    // SeaORM's conversion to a value cannot fail: a 64-bit id with its top bit set becomes
    // a null, which a primary key or a NOT NULL column refuses, never a negative number.
    type FullId = Id<User, SnowflakeId<Discord>>;
    let top = FullId::from_column(BigInt((1 << 63) | 1)).unwrap();
    assert_eq!(Value::from(top), Value::BigInt(None));
}
