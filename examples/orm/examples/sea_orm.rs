//! Typed ids as SeaORM primary keys (a Snowflake id and a TypeID), on SQLite in memory:
//! `cargo run -p idkit-example-orm --example sea_orm`.

use idkit_example_orm::{order, user};
use idkit_snowflake::{IdScheme, Snowflake, Twitter};
use idkit_typeid::{Prefix, TypeIdGenerator};
use sea_orm::{ActiveModelTrait, ConnectionTrait, Database, EntityTrait, QueryOrder, Schema, Set};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::connect("sqlite::memory:").await?;
    let schema = Schema::new(db.get_database_backend());
    db.execute(&schema.create_table_from_entity(user::Entity))
        .await?;
    db.execute(&schema.create_table_from_entity(order::Entity))
        .await?;

    let user_ids = Snowflake::builder(Twitter)
        .field("worker", 1)
        .build_atomic()?;
    let order_ids = TypeIdGenerator::new(Prefix::new("order")?);
    let ada = user::ActiveModel {
        id: Set(user_ids.next_as()?),
        name: Set("ada".to_owned()),
    }
    .insert(&db)
    .await?;
    for item in ["lamp", "desk"] {
        order::ActiveModel {
            id: Set(order_ids.next_as()?),
            user_id: Set(ada.id),
            item: Set(item.to_owned()),
        }
        .insert(&db)
        .await?;
    }

    let found = user::Entity::find_by_id(ada.id).one(&db).await?;
    assert_eq!(found.as_ref(), Some(&ada));
    let orders = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(&db)
        .await?;
    for o in &orders {
        println!("{} {} {}", o.id, o.user_id, o.item);
    }
    Ok(())
}
