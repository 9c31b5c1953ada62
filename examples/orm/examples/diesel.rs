//! Typed Snowflake ids as a Diesel table's primary key, on SQLite in memory:
//! `cargo run -p idkit-example-orm --example diesel`.

use diesel::prelude::*;
use idkit_example_orm::UserId;
use idkit_snowflake::{IdScheme, Snowflake, Twitter};

diesel::table! {
    /// Users, keyed by a typed Snowflake id.
    users (id) {
        /// `INTEGER` in SQLite, `BIGINT` elsewhere.
        id -> BigInt,
        /// The user's name.
        name -> Text,
    }
}

#[derive(Debug, PartialEq, Insertable, Queryable, Selectable)]
#[diesel(table_name = users)]
struct User {
    id: UserId,
    name: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = SqliteConnection::establish(":memory:")?;
    diesel::sql_query("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        .execute(&mut conn)?;

    let ids = Snowflake::builder(Twitter)
        .field("worker", 1)
        .build_atomic()?;
    for name in ["ada", "grace", "edsger"] {
        let user = User {
            id: ids.next_as()?,
            name: name.to_owned(),
        };
        diesel::insert_into(users::table)
            .values(&user)
            .execute(&mut conn)?;
    }

    let all: Vec<User> = users::table.order(users::id).load(&mut conn)?;
    let first: User = users::table.find(all[0].id).first(&mut conn)?;
    assert_eq!(first, all[0]);
    for user in &all {
        println!("{} {}", user.id, user.name);
    }
    Ok(())
}
