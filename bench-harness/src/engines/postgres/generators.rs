//! Ids made inside PostgreSQL, side by side on one server: the executor alone, the built-in
//! `gen_random_uuid()`, PL/pgSQL generators (`idkit sql`'s Instagram function and a UUIDv7
//! function), and the idkit extension's generators (extensions/idkit-pg) where the server
//! has it preloaded. Each makes `ids` ids in one statement, then fills a fresh table with
//! `ids` rows whose key is the generator as its column default; the key's index size and
//! leaf fill are read as in the insert runs.
//!
//! Beside them, where a PostgreSQL 18 server is given, that server's built-in `uuidv7()` and
//! `gen_random_uuid()` against its own executor, and the order of the ids that four sessions
//! make at once, on both servers.

use std::time::Instant;

use postgres::Client;
use serde::{Deserialize, Serialize};

use super::Server;
use super::insert::tree_stats;
use crate::Error;
use crate::engine::Label;
use crate::engine::insert::TABLE;
use crate::table::{Table, figure, text};

/// One generator's figures (a row of `pg_generators.csv`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SqlGenerator {
    /// The SQL expression, as a column default takes it.
    pub name: Label,
    /// The server's version (`SHOW server_version`); empty in runs before it was kept (and
    /// then left out of the file, which stays as it was written).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server: String,
    /// Where it comes from: the executor, built in, PL/pgSQL, the idkit extension.
    pub source: Label,
    /// The key's column type.
    pub key: Label,
    /// Ids made by `SELECT count(f()) FROM generate_series(1, ids)`, and rows inserted.
    pub ids: u64,
    /// The median of three such statements, seconds.
    pub make_seconds: f64,
    /// `INSERT INTO t (n) SELECT g FROM generate_series(1, ids)` with the key as the column
    /// default, one statement and one commit, the median of three, seconds; `None` where an
    /// insert failed.
    pub insert_seconds: Option<f64>,
    /// The key's index after the insert.
    pub index_bytes: u64,
    /// Its leaves' fill (`pgstatindex`'s density, 0 to 1).
    pub leaf_fill: f64,
    /// Why the insert failed (a generator that repeated an id fails the primary key).
    pub error: Option<String>,
}

/// The PL/pgSQL UUIDv7 measured against the extension's: `gen_random_uuid()`'s bytes with
/// the first six replaced by the Unix millisecond and the version nibble made 7 (PostgreSQL
/// numbers a bytea's bits from the low bit of each byte: 52 and 53 are the version's low
/// two). No counter: ids of one millisecond are in random order.
const PLPGSQL_UUIDV7: &str = "CREATE FUNCTION idkit_bench_uuidv7() RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    ms bytea := substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3);
BEGIN
    RETURN encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING ms FROM 1 FOR 6),
                                  52, 1), 53, 1), 'hex')::uuid;
END
$$;";

/// A generator: its expression, source, key type, and whether it needs the extension.
#[derive(Debug)]
struct Plan {
    name: &'static str,
    source: &'static str,
    key: &'static str,
    extension: bool,
}

const PLANS: [Plan; 9] = [
    Plan {
        name: "1",
        source: "the executor alone",
        key: "bigint identity",
        extension: false,
    },
    Plan {
        name: "gen_random_uuid()",
        source: "built in",
        key: "uuid",
        extension: false,
    },
    Plan {
        name: "idkit_bench_instagram()",
        source: "PL/pgSQL (idkit sql snowflake-instagram --shard 1)",
        key: "bigint",
        extension: false,
    },
    Plan {
        name: "idkit_bench_uuidv7()",
        source: "PL/pgSQL",
        key: "uuid",
        extension: false,
    },
    Plan {
        name: "idkit_uuidv7()",
        source: "idkit extension",
        key: "uuid",
        extension: true,
    },
    Plan {
        name: "idkit_ulid()",
        source: "idkit extension",
        key: "ulid",
        extension: true,
    },
    Plan {
        name: "idkit_typeid('user')",
        source: "idkit extension",
        key: "typeid",
        extension: true,
    },
    Plan {
        name: "idkit_snowflake('instagram')",
        source: "idkit extension",
        key: "bigint",
        extension: true,
    },
    Plan {
        name: "idkit_snowflake()",
        source: "idkit extension",
        key: "bigint",
        extension: true,
    },
];

/// Whether the server has the extension preloaded with a worker id: what its generators
/// need. `Err` says what is missing.
fn extension_ready(client: &mut Client) -> Result<(), String> {
    let preload: String = client
        .query_one("SHOW shared_preload_libraries", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    if !preload.split(',').any(|l| l.trim() == "idkit") {
        return Err(
            "the server does not preload the idkit extension (scripts/pg-extension.sh \
             installs it; shared_preload_libraries = 'idkit' loads it)"
                .to_owned(),
        );
    }
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS idkit")
        .map_err(|e| format!("CREATE EXTENSION idkit: {e}"))?;
    let worker: String = client
        .query_one("SELECT current_setting('idkit.worker_id')", &[])
        .map_err(|e| e.to_string())?
        .get(0);
    if worker == "-1" {
        return Err("idkit.worker_id is not set on the server".to_owned());
    }
    Ok(())
}

/// PostgreSQL 18's `uuidv7()`, measured on a server of that version beside the
/// extension's generators on 15, with that server's executor and `gen_random_uuid()` (the
/// first two of [`PLANS`]).
const UUIDV7_18: Plan = Plan {
    name: "uuidv7()",
    source: "built in (PostgreSQL 18)",
    key: "uuid",
    extension: false,
};

/// Every generator the server can run, `ids` ids each, then PostgreSQL 18's on `pg18`
/// where one is given; the reason the extension's were left out, if they were.
///
/// # Errors
///
/// [`Error::Postgres`] for a statement that fails other than by a repeated id.
pub fn measure(
    server: &Server,
    pg18: Option<&Server>,
    ids: i64,
) -> Result<(Vec<SqlGenerator>, Option<String>), Error> {
    let mut client = server.connect()?;
    let layout = idkit_snowflake::preset("snowflake-instagram")
        .ok_or_else(|| Error::PgSetup("no snowflake-instagram layout".to_owned()))?;
    let instagram = idkit_snowflake::sql::plpgsql(layout, &[("shard", 1)], "idkit_bench_instagram")
        .map_err(|e| Error::PgSetup(e.to_string()))?;
    client.batch_execute(
        "DROP FUNCTION IF EXISTS idkit_bench_instagram(); \
         DROP SEQUENCE IF EXISTS idkit_bench_instagram_seq; \
         DROP FUNCTION IF EXISTS idkit_bench_uuidv7();",
    )?;
    client.batch_execute(&instagram)?;
    client.batch_execute(PLPGSQL_UUIDV7)?;
    let missing = extension_ready(&mut client).err();
    let mut out = Vec::new();
    for plan in PLANS.iter().filter(|p| !p.extension || missing.is_none()) {
        out.push(one(&mut client, &server.version, plan, ids)?);
    }
    client.batch_execute(
        "DROP FUNCTION idkit_bench_instagram(); DROP SEQUENCE idkit_bench_instagram_seq; \
         DROP FUNCTION idkit_bench_uuidv7();",
    )?;
    if let Some(pg18) = pg18 {
        let mut client = pg18.connect()?;
        for plan in [&PLANS[0], &PLANS[1], &UUIDV7_18] {
            out.push(one(&mut client, &pg18.version, plan, ids)?);
        }
    }
    Ok((out, missing))
}

/// The order of ids that several sessions make at once (a row of
/// `pg_generator_order.csv`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SqlOrder {
    /// The SQL expression.
    pub name: Label,
    /// The server's version.
    pub server: String,
    /// Sessions inserting at once.
    pub sessions: u64,
    /// Rows inserted in all.
    pub ids: u64,
    /// Rows whose id is below the id of the row the server numbered just before it (an
    /// identity column, evaluated with the id in the same row).
    pub out_of_order: u64,
    /// Ids that appear more than once (rows less distinct ids).
    pub duplicates: u64,
}

/// Generators whose order across sessions is measured: the expression, and whether it
/// runs on the PostgreSQL 18 server (else on the main one, with the extension).
const ORDERED: [(&str, bool); 3] = [
    ("idkit_uuidv7()", false),
    ("uuidv7()", true),
    ("gen_random_uuid()", false),
];

/// Sessions that insert at once in [`order`].
pub const SESSIONS: u64 = 4;

/// The order of ids made by [`SESSIONS`] sessions inserting `ids` rows between them at
/// once, into one table whose identity column numbers the rows as the server makes them:
/// the extension's `idkit_uuidv7()` (where the extension is ready), PostgreSQL 18's
/// `uuidv7()` (where `pg18` is given) and `gen_random_uuid()` for reference.
///
/// # Errors
///
/// [`Error::Postgres`] for a statement that fails.
pub fn order(
    server: &Server,
    extension: bool,
    pg18: Option<&Server>,
    ids: u64,
) -> Result<Vec<SqlOrder>, Error> {
    let mut out = Vec::new();
    for (name, on_18) in ORDERED {
        let target = match (on_18, pg18) {
            (true, Some(pg18)) => pg18,
            (true, None) => continue,
            (false, _) if name.starts_with("idkit_") && !extension => continue,
            (false, _) => server,
        };
        out.push(one_order(target, name, ids)?);
    }
    Ok(out)
}

fn one_order(server: &Server, name: &'static str, ids: u64) -> Result<SqlOrder, Error> {
    const ORDER_TABLE: &str = "idkit_bench_order";
    let mut client = server.connect()?;
    client.batch_execute(&format!(
        "DROP TABLE IF EXISTS {ORDER_TABLE}; \
         CREATE TABLE {ORDER_TABLE} (n bigint GENERATED ALWAYS AS IDENTITY, \
             id uuid NOT NULL DEFAULT {name}, m int) WITH (autovacuum_enabled = false)"
    ))?;
    let each = i64::try_from(ids / SESSIONS).unwrap_or(i64::MAX);
    let sql =
        format!("INSERT INTO {ORDER_TABLE} (m) SELECT g FROM generate_series(1, $1::bigint) g");
    let sessions: Vec<Client> = (0..SESSIONS)
        .map(|_| server.connect())
        .collect::<Result<_, _>>()?;
    let barrier = std::sync::Barrier::new(sessions.len());
    std::thread::scope(|scope| {
        let running: Vec<_> = sessions
            .into_iter()
            .map(|mut c| {
                let (sql, barrier) = (&sql, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    c.execute(sql.as_str(), &[&each])
                })
            })
            .collect();
        running
            .into_iter()
            .try_for_each(|t| t.join().expect("a session's thread panicked").map(drop))
    })?;
    let row = client.query_one(
        &format!(
            "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id < previous) \
             FROM (SELECT id, lag(id) OVER (ORDER BY n) previous FROM {ORDER_TABLE}) s"
        ),
        &[],
    )?;
    client.batch_execute(&format!("DROP TABLE {ORDER_TABLE}"))?;
    let (rows, distinct, out_of_order): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    Ok(SqlOrder {
        name: Label(name),
        server: server.version.clone(),
        sessions: SESSIONS,
        ids: super::count(rows),
        out_of_order: super::count(out_of_order),
        duplicates: super::count(rows - distinct),
    })
}

/// `pg_generator_order.csv`'s columns.
pub(crate) const ORDER_CSV: Table<SqlOrder> = Table(&[
    text("generator", |o| quoted(o.name.as_str())),
    text("server", |o| o.server.clone()),
    figure("sessions", |o| o.sessions.to_string()),
    figure("ids", |o| o.ids.to_string()),
    figure("out_of_order", |o| o.out_of_order.to_string()),
    figure("duplicates", |o| o.duplicates.to_string()),
]);

/// One generator: three statements that make the ids, then the insert.
fn one(client: &mut Client, version: &str, plan: &Plan, ids: i64) -> Result<SqlGenerator, Error> {
    let mut made = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        client.query_one(
            &format!(
                "SELECT count({}) FROM generate_series(1, $1::bigint)",
                plan.name
            ),
            &[&ids],
        )?;
        made.push(start.elapsed().as_secs_f64());
    }
    made.sort_by(f64::total_cmp);
    let column = match plan.key {
        "bigint identity" => "id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY".to_owned(),
        key => format!("id {key} PRIMARY KEY DEFAULT {}", plan.name),
    };
    // Three inserts, each into a fresh table after a CHECKPOINT: one alone moves by half
    // with what the server writes in the background; the median is kept, and the tree of
    // the last is read. A repeated id ends it (the key refuses the statement).
    let mut inserts = Vec::new();
    let mut error = None;
    let mut tree = None;
    for _ in 0..3 {
        client.batch_execute(&format!(
            "DROP TABLE IF EXISTS {TABLE}; \
             CREATE TABLE {TABLE} ({column}, n int) WITH (autovacuum_enabled = false); \
             CHECKPOINT"
        ))?;
        let start = Instant::now();
        let inserted = client.execute(
            &format!("INSERT INTO {TABLE} (n) SELECT g FROM generate_series(1, $1::bigint) g"),
            &[&ids],
        );
        let seconds = start.elapsed().as_secs_f64();
        tree = Some(tree_stats(client, &format!("{TABLE}_pkey"))?);
        client.batch_execute(&format!("DROP TABLE {TABLE}"))?;
        match inserted {
            Ok(_) => inserts.push(seconds),
            Err(e) if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => {
                error = Some(
                    e.as_db_error()
                        .map_or(e.to_string(), |d| d.message().to_owned()),
                );
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    inserts.sort_by(f64::total_cmp);
    let insert_seconds = (error.is_none()).then(|| inserts[inserts.len() / 2]);
    let tree = tree.ok_or_else(|| Error::PgSetup("no insert ran".to_owned()))?;
    Ok(SqlGenerator {
        name: Label(plan.name),
        server: version.to_owned(),
        source: Label(plan.source),
        key: Label(plan.key),
        ids: u64::try_from(ids).unwrap_or(0),
        make_seconds: made[1],
        insert_seconds,
        index_bytes: tree.index,
        leaf_fill: tree.leaf_fill,
        error,
    })
}

/// A text cell quoted for CSV.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// `pg_generators.csv`'s columns.
pub(crate) const CSV: Table<SqlGenerator> = Table(&[
    text("generator", |g| quoted(g.name.as_str())),
    text("server", |g| g.server.clone()),
    text("source", |g| quoted(g.source.as_str())),
    text("key", |g| g.key.to_string()),
    figure("ids", |g| g.ids.to_string()),
    figure("make_seconds", |g| format!("{:.4}", g.make_seconds)),
    figure("insert_seconds", |g| {
        g.insert_seconds
            .map_or(String::new(), |s| format!("{s:.4}"))
    }),
    figure("index_bytes", |g| g.index_bytes.to_string()),
    figure("leaf_fill", |g| format!("{:.4}", g.leaf_fill)),
    text("error", |g| quoted(g.error.as_deref().unwrap_or(""))),
]);
