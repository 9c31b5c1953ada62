//! Typed ids as primary keys in the two ORMs: the markers and id types an application
//! declares, and the SeaORM entities keyed by them. The Diesel schema is per backend (a
//! 16-byte id is `Uuid` in PostgreSQL, `Binary` elsewhere), so it lives with its users:
//! `examples/diesel.rs` and `tests/diesel.rs`.
//!
//! Nothing here implements a database trait: the scheme crates' features `diesel-postgres`,
//! `diesel-mysql`, `diesel-sqlite` and `sea-orm` do.

use idkit_snowflake::{Id, Marker, SnowflakeId, Twitter};
use idkit_typeid::TypeId;

/// What a [`UserId`] names.
#[derive(Debug)]
pub struct User;
impl Marker for User {}

/// What an [`OrderId`] names; its TypeIDs read `order_01h455vb4pex5vsknk084sn02q`.
#[derive(Debug)]
pub struct Order;
impl Marker for Order {
    const PREFIX: &'static str = "order";
}

/// A user's key: a Twitter-layout Snowflake id (`BIGINT`).
pub type UserId = Id<User, SnowflakeId<Twitter>>;

/// An order's key: a TypeID (`uuid` in PostgreSQL, 16 bytes in MySQL; in SQLite its text
/// through Diesel, as `idkit_typeid()` writes it, and its 16 bytes through SeaORM, whose
/// values do not know the backend).
pub type OrderId = Id<Order, TypeId>;

/// The SeaORM entity of table `seaorm_users`, keyed by a [`UserId`].
pub mod user {
    use sea_orm::entity::prelude::*;

    /// A user.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "seaorm_users")]
    pub struct Model {
        /// Made by the application's generator, not by the database.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: super::UserId,
        /// The user's name.
        pub name: String,
    }

    /// No relations.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// The SeaORM entity of table `seaorm_orders`, keyed by an [`OrderId`].
pub mod order {
    use sea_orm::entity::prelude::*;

    /// An order.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "seaorm_orders")]
    pub struct Model {
        /// Made by the application's generator.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: super::OrderId,
        /// Who ordered.
        pub user_id: super::UserId,
        /// What was ordered.
        pub item: String,
    }

    /// No relations.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
