//! An axum service with sqlx that keeps users under typed Snowflake ids.
//!
//! ```sh
//! cargo run -p idkit-example-axum-sqlx -- --database-url sqlite://users.db?mode=rwc
//! curl -X POST localhost:3000/users -H 'content-type: application/json' -d '{"name":"ada"}'
//! # {"id":"1864372392218443776","name":"ada"}
//! curl localhost:3000/users/1864372392218443776
//! ```
//!
//! The id type is `Id<User, SnowflakeId<Twitter>>`: an order id cannot be passed where a user
//! id is expected. It binds to a `BIGINT` column, reads back from one, and goes to JSON as a
//! string, with no glue here: that is `idkit-snowflake`'s `serde`, `sqlx-postgres` and
//! `sqlx-sqlite` features.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use idkit_snowflake::{AtomicSnowflake, Id, IdScheme, Marker, Snowflake, SnowflakeId, Twitter};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Row, SqlitePool};

/// What a user id names.
struct User;
impl Marker for User {}

/// A user's id.
type UserId = Id<User, SnowflakeId<Twitter>>;

#[derive(Debug, Serialize)]
struct UserRow {
    id: UserId,
    name: String,
}

#[derive(Debug, Deserialize)]
struct NewUser {
    name: String,
}

/// The database named by the URL.
enum Db {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

struct App {
    db: Db,
    ids: AtomicSnowflake<Twitter>,
}

/// Errors as JSON: `{"error": "..."}`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl<E: std::error::Error> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS users (id BIGINT PRIMARY KEY, name TEXT NOT NULL)";

async fn create_user(
    State(app): State<Arc<App>>,
    Json(new): Json<NewUser>,
) -> Result<(StatusCode, Json<UserRow>), ApiError> {
    let id: UserId = app.ids.next_as()?;
    let insert = "INSERT INTO users (id, name) VALUES ($1, $2)";
    match &app.db {
        Db::Postgres(pool) => {
            sqlx::query(insert)
                .bind(id)
                .bind(&new.name)
                .execute(pool)
                .await?;
        }
        Db::Sqlite(pool) => {
            sqlx::query(insert)
                .bind(id)
                .bind(&new.name)
                .execute(pool)
                .await?;
        }
    }
    Ok((StatusCode::CREATED, Json(UserRow { id, name: new.name })))
}

async fn get_user(
    State(app): State<Arc<App>>,
    Path(id): Path<UserId>,
) -> Result<Json<UserRow>, ApiError> {
    let select = "SELECT id, name FROM users WHERE id = $1";
    let row = match &app.db {
        Db::Postgres(pool) => sqlx::query(select)
            .bind(id)
            .fetch_optional(pool)
            .await?
            .map(|r| (r.try_get("id"), r.try_get("name"))),
        Db::Sqlite(pool) => sqlx::query(select)
            .bind(id)
            .fetch_optional(pool)
            .await?
            .map(|r| (r.try_get("id"), r.try_get("name"))),
    };
    let (id, name) = row.ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no user {id}")))?;
    Ok(Json(UserRow {
        id: id?,
        name: name?,
    }))
}

async fn list_users(State(app): State<Arc<App>>) -> Result<Json<Vec<UserRow>>, ApiError> {
    let select = "SELECT id, name FROM users ORDER BY id";
    let rows: Vec<(UserId, String)> = match &app.db {
        Db::Postgres(pool) => sqlx::query_as(select).fetch_all(pool).await?,
        Db::Sqlite(pool) => sqlx::query_as(select).fetch_all(pool).await?,
    };
    Ok(Json(
        rows.into_iter()
            .map(|(id, name)| UserRow { id, name })
            .collect(),
    ))
}

fn router(app: App) -> Router {
    Router::new()
        .route("/users", post(create_user).get(list_users))
        .route("/users/{id}", get(get_user))
        .with_state(Arc::new(app))
}

/// `--database-url URL` (or `DATABASE_URL`), `--listen ADDR` (default 127.0.0.1:3000),
/// `--worker N` (default 1).
fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = arg("--database-url")
        .or_else(|| std::env::var("DATABASE_URL").ok())
        .ok_or("give --database-url postgres://... or sqlite://...")?;
    let listen = arg("--listen").unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let worker: u64 = arg("--worker").as_deref().unwrap_or("1").parse()?;

    let db = if url.starts_with("postgres") {
        let pool = PgPool::connect(&url).await?;
        sqlx::query(SCHEMA).execute(&pool).await?;
        Db::Postgres(pool)
    } else if url.starts_with("sqlite") {
        let pool = SqlitePool::connect(&url).await?;
        sqlx::query(SCHEMA).execute(&pool).await?;
        Db::Sqlite(pool)
    } else {
        return Err(
            format!("unsupported database URL {url:?}: postgres://... or sqlite://...").into(),
        );
    };
    let ids = Snowflake::builder(Twitter)
        .field("worker", worker)
        .build_atomic()?;

    let listener = tokio::net::TcpListener::bind(&listen).await?;
    // The first line tells a caller (and the end-to-end test) where the service is.
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router(App { db, ids })).await?;
    Ok(())
}
