//! What the idkit SQLite functions write, read by both ORMs, and what Diesel writes beside
//! it: one column form per scheme (crates/idkit-sqlite/README.md, "Column forms"). A
//! TypeID is text in SQLite, prefix and all, as `idkit_typeid()` writes it; a ULID a
//! 16-byte blob from `idkit_ulid()` and text from `idkit_ulid_text()`; a Snowflake id an
//! integer. The functions run in rusqlite on a database file, the ORMs open the same file.

mod common;

use common::{diesel_kind, sea_orm_kind};
use diesel::prelude::*;
use idkit_snowflake::idkit_core::column::ColumnErrorKind;
use idkit_snowflake::{IdScheme, SnowflakeId, Twitter};
use idkit_testkit::Scratch;
use idkit_typeid::{Prefix, TypeId, TypeIdGenerator};
use idkit_ulid::Ulid;
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, Database, DbBackend, EntityTrait, Set, Statement,
};

diesel::table! {
    /// What the functions fill.
    made (n) {
        /// The row.
        n -> Integer,
        /// `idkit_typeid('user')`.
        typeid -> Text,
        /// `idkit_ulid()`.
        ulid -> Binary,
        /// `idkit_ulid_text()`.
        ulid_text -> Text,
        /// `idkit_snowflake('twitter', 5)`.
        flake -> BigInt,
    }
}

diesel::table! {
    /// The README's users table: keyed by `idkit_typeid('user')`.
    users (id) {
        /// `idkit_typeid('user')`, or a TypeID bound by Diesel.
        id -> Text,
        /// Who made the row.
        name -> Text,
    }
}

/// A database file with one row the functions made, and the README's users table with one
/// row made by SQL.
fn written(dir: &Scratch) -> String {
    let path = dir.join("app.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    idkit_sqlite::register(&conn).unwrap();
    conn.execute_batch(
        "CREATE TABLE made (n INTEGER PRIMARY KEY, typeid TEXT, ulid BLOB, ulid_text TEXT,
                            flake INTEGER);
         INSERT INTO made VALUES (1, idkit_typeid('user'), idkit_ulid(), idkit_ulid_text(),
                                  idkit_snowflake('twitter', 5));
         CREATE TABLE users (id TEXT PRIMARY KEY DEFAULT (idkit_typeid('user')), name TEXT);
         INSERT INTO users (name) VALUES ('made by SQL');",
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn diesel_reads_every_form_the_functions_write() {
    let dir = Scratch::new("orm-sql-written-diesel");
    let path = written(&dir);
    let mut conn = diesel::sqlite::SqliteConnection::establish(&path).unwrap();
    let (typeid, ulid, ulid_text, flake): (TypeId, Ulid, Ulid, SnowflakeId<Twitter>) = made::table
        .select((made::typeid, made::ulid, made::ulid_text, made::flake))
        .first(&mut conn)
        .unwrap();
    assert_eq!(typeid.prefix().as_str(), "user");
    // Both ULIDs of one sequence: the text one made after the blob one.
    assert!(ulid < ulid_text, "{ulid} {ulid_text}");
    assert_eq!(flake.field("worker"), Some(5));

    // A column declared BLOB that holds text (SQLite keeps each value's own type) is read
    // by its text too, and a typed error says when the text is no id.
    let read: Ulid = diesel::select(diesel::dsl::sql::<diesel::sql_types::Binary>(&format!(
        "'{ulid}'"
    )))
    .get_result(&mut conn)
    .unwrap();
    assert_eq!(read, ulid);
    let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>("'not-an-id'"))
        .get_result::<Ulid>(&mut conn)
        .unwrap_err();
    assert_eq!(diesel_kind(&err), Some(ColumnErrorKind::Invalid), "{err}");
}

#[test]
fn a_typeid_written_by_diesel_is_the_text_the_functions_write() {
    let dir = Scratch::new("orm-sql-written-typeid");
    let path = written(&dir);
    let mut conn = diesel::sqlite::SqliteConnection::establish(&path).unwrap();
    let made = TypeIdGenerator::new(Prefix::new("user").unwrap())
        .next_as::<TypeId>()
        .unwrap();
    diesel::insert_into(users::table)
        .values((users::id.eq(made), users::name.eq("made in Rust")))
        .execute(&mut conn)
        .unwrap();
    // A column declared BLOB refuses it, with a message that says what to declare, rather
    // than store 16 bytes no SQL-made TypeID ever equals.
    diesel::sql_query("CREATE TABLE blobs (id BLOB PRIMARY KEY)")
        .execute(&mut conn)
        .unwrap();
    diesel::table! {
        /// A column declared BLOB.
        blobs (id) {
            /// A TypeID.
            id -> Binary,
        }
    }
    let err = diesel::insert_into(blobs::table)
        .values(blobs::id.eq(made))
        .execute(&mut conn)
        .unwrap_err();
    assert_eq!(diesel_kind(&err), Some(ColumnErrorKind::Invalid), "{err}");
    assert!(format!("{err:?}").contains("`Text`"), "{err:?}");

    let conn = rusqlite::Connection::open(&path).unwrap();
    let (kind, text): (String, String) = conn
        .query_row(
            "SELECT typeof(id), id FROM users WHERE name = 'made in Rust'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((kind.as_str(), text), ("text", made.to_string()));
    let stored: i64 = conn
        .query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 0);
    // Both rows in one range of the key, as the README's query finds them.
    let both: i64 = conn
        .query_row(
            "SELECT count(*) FROM users WHERE id >= 'user_' AND id < 'user`'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(both, 2);

    // Read back by Diesel, the marker's prefix and all.
    let mut conn = diesel::sqlite::SqliteConnection::establish(&path).unwrap();
    let ids: Vec<TypeId> = users::table
        .select(users::id)
        .order(users::id)
        .load(&mut conn)
        .unwrap();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&made), "{ids:?}");
}

#[tokio::test]
async fn sea_orm_reads_every_form_the_functions_write() {
    let dir = Scratch::new("orm-sql-written-sea-orm");
    let path = written(&dir);
    let db = Database::connect(format!("sqlite://{path}")).await.unwrap();
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT typeid, ulid, ulid_text, flake FROM made",
        ))
        .await
        .unwrap()
        .unwrap();
    let typeid: TypeId = row.try_get("", "typeid").unwrap();
    let ulid: Ulid = row.try_get("", "ulid").unwrap();
    let ulid_text: Ulid = row.try_get("", "ulid_text").unwrap();
    let flake: SnowflakeId<Twitter> = row.try_get("", "flake").unwrap();
    assert_eq!(typeid.prefix().as_str(), "user");
    assert!(ulid < ulid_text, "{ulid} {ulid_text}");
    assert_eq!(flake.field("worker"), Some(5));
    // A `Value` of text is the id's text.
    let value = sea_orm::Value::String(Some(ulid.to_string()));
    let back: Ulid = sea_orm::sea_query::ValueType::try_from(value).unwrap();
    assert_eq!(back, ulid);
    // Text that is no id: a typed error, not a width error.
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT 'not-an-id' AS id",
        ))
        .await
        .unwrap()
        .unwrap();
    let err = row.try_get::<Ulid>("", "id").unwrap_err();
    assert_eq!(sea_orm_kind(&err), Some(ColumnErrorKind::Invalid), "{err}");
}

/// The README's orders table in SQLite, keyed by `idkit_typeid('order')` (text), as a
/// SeaORM entity: its key an `AsText<OrderId>`, which binds as the text.
mod text_order {
    use idkit_example_orm::OrderId;
    use idkit_snowflake::idkit_core::column::AsText;
    use sea_orm::entity::prelude::*;

    /// An order keyed by its TypeID's text.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "orders")]
    pub struct Model {
        /// Made by SQL or by the application.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: AsText<OrderId>,
        /// What was ordered.
        pub item: String,
    }

    /// No relations.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

#[tokio::test]
async fn sea_orm_keys_a_text_column_by_the_ids_text() {
    // Plainly, SeaORM writes a TypeID as its UUID (a blob in SQLite), which no TypeID the
    // SQL function made equals: found by nothing, and the same id let in twice. As AsText,
    // found, and refused as a duplicate.
    let dir = Scratch::new("orm-sql-written-as-text");
    let path = dir.join("app.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    idkit_sqlite::register(&conn).unwrap();
    conn.execute_batch(
        "CREATE TABLE orders (id TEXT PRIMARY KEY DEFAULT (idkit_typeid('order')), item TEXT);
         INSERT INTO orders (item) VALUES ('made by SQL');",
    )
    .unwrap();
    drop(conn);
    let db = Database::connect(format!("sqlite://{}", path.to_str().unwrap()))
        .await
        .unwrap();
    let made = text_order::Entity::find().one(&db).await.unwrap().unwrap();
    assert_eq!(made.item, "made by SQL");
    assert!(made.id.to_string().starts_with("order_"), "{}", made.id);
    let found = text_order::Entity::find_by_id(made.id)
        .one(&db)
        .await
        .unwrap();
    assert_eq!(found.as_ref().map(|m| m.id), Some(made.id));
    let again = text_order::ActiveModel {
        id: Set(made.id),
        item: Set("the same id again".to_owned()),
    }
    .insert(&db)
    .await;
    assert!(again.is_err(), "the same id let in twice");
    let ours: idkit_example_orm::OrderId = TypeIdGenerator::new(Prefix::new("order").unwrap())
        .next_as()
        .unwrap();
    text_order::ActiveModel {
        id: Set(ours.into()),
        item: Set("made by the application".to_owned()),
    }
    .insert(&db)
    .await
    .unwrap();
    let kinds: Vec<(String, String)> = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT typeof(id), item FROM orders ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        kinds,
        [
            ("text".to_owned(), "made by SQL".to_owned()),
            ("text".to_owned(), "made by the application".to_owned())
        ]
    );
}
