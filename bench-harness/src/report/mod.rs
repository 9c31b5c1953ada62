//! `REPORT.md`: environment, method, tables, charts, verdicts on the literature's claims,
//! and a decision guide, all from this run's numbers.

use std::fmt::Write as _;
use std::path::Path;

use crate::Error;
use crate::collisions::CollisionRow;
use crate::engine::report::{ChartFile, Results, chart};
use crate::engines::ENGINES;
use crate::generation::GenRow;
use crate::leaks::{JSON_SAFE, LeakRow, tank_error};
use crate::machine::Primitive;
use crate::properties::PropRow;
use crate::table::{Table, figure, ns, pct, rate, small_pct, text};

/// The engine whose figures the method and the decision guide quote, by its name.
const SQLITE: &str = "sqlite";

/// Writes the report to `path`.
pub(crate) fn write(r: &Results<'_>, charts: &[ChartFile], path: &Path) -> Result<(), Error> {
    let mut md = String::new();
    let data = path.parent().map(|dir| dir.join("data"));
    let leases = data
        .as_ref()
        .map(|data| read_leases(&data.join("leases.csv")))
        .unwrap_or_default();
    let leases_from = data
        .as_ref()
        .map_or_else(String::new, |data| leases_provenance(data));
    header(r, &carried(r, &leases, &leases_from), &mut md);
    generation(r, charts, &mut md);
    properties(r, &mut md);
    collisions(r, &mut md);
    leaks(r, &mut md);
    ENGINES.iter().for_each(|e| e.btree(r, charts, &mut md));
    verdicts(r, &mut md);
    ENGINES.iter().for_each(|e| e.ids(r, &mut md));
    ENGINES.iter().for_each(|e| e.created_at(r, &mut md));
    let in_sql = path
        .parent()
        .map(|dir| read_in_sql(&dir.join("data").join("sqlite_functions.csv")))
        .unwrap_or_default();
    made_in_sql(&in_sql, &mut md);
    identities(&leases, &leases_from, &mut md);
    guide(r, &leases, &mut md);
    std::fs::write(path, md).map_err(Error::io(path))
}

/// One identity source as `scripts/lease-bench.sh` measured it (`data/leases.csv`).
#[derive(Debug, Clone, PartialEq)]
struct LeaseRow {
    source: String,
    acquire_ms: f64,
    acquire_p90_ms: f64,
    release_ms: f64,
    ttl_ms: u64,
    renewals_in_9s: u64,
    /// The source's default TTL, and the renewals a minute it makes (one every third).
    default_ttl_ms: u64,
    renewals_per_minute: u64,
    per_renewal: String,
}

/// The rows of `data/leases.csv`; none when it is absent or malformed.
fn read_leases(path: &Path) -> Vec<LeaseRow> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            // The last field is prose and may hold commas.
            let f: Vec<&str> = line.splitn(10, ',').collect();
            Some(LeaseRow {
                source: (*f.first()?).to_owned(),
                acquire_ms: f.get(1)?.parse().ok()?,
                acquire_p90_ms: f.get(2)?.parse().ok()?,
                release_ms: f.get(3)?.parse().ok()?,
                ttl_ms: f.get(4)?.parse().ok()?,
                renewals_in_9s: f.get(5)?.parse().ok()?,
                default_ttl_ms: f.get(7)?.parse().ok()?,
                renewals_per_minute: f.get(8)?.parse().ok()?,
                per_renewal: (*f.get(9)?).to_owned(),
            })
        })
        .collect()
}

/// When, at what revision and on what machine `data/leases.csv` was measured: the line
/// `scripts/lease-bench.sh` writes beside it, or for a file written before it wrote one, the
/// day git last saw the file change.
fn leases_provenance(data: &Path) -> String {
    if let Ok(line) = std::fs::read_to_string(data.join("leases_provenance.txt")) {
        return line.trim().to_owned();
    }
    let changed = std::process::Command::new("git")
        .args(["log", "-1", "--format=%cs", "--", "leases.csv"])
        .current_dir(data)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|day| !day.is_empty());
    match changed {
        Some(day) => format!("committed {day}; the machine was not recorded"),
        None => "date and machine not recorded".to_owned(),
    }
}

/// The list at the report's top of what this run did not measure: each engine read back
/// from its kept file, and the worker-identity figures, with their date and machine.
fn carried(r: &Results<'_>, leases: &[LeaseRow], leases_from: &str) -> String {
    let mut lines = Vec::new();
    for engine in ENGINES {
        let Some(results) = r.named(engine.name()) else {
            continue;
        };
        let stamp = results.stamp();
        if stamp.measured_now || stamp.provenance.is_empty() {
            continue;
        }
        let machine = if stamp.provenance.iter().any(|p| p.starts_with("machine ")) {
            ""
        } else {
            "; the machine was not recorded"
        };
        lines.push(format!(
            "- {}: `data/{}.json`, {}{machine}.",
            engine.report_name(),
            engine.name(),
            stamp.provenance.join(", ")
        ));
    }
    if !leases.is_empty() {
        lines.push(format!(
            "- Worker identities: `data/leases.csv` (`scripts/lease-bench.sh`), {leases_from}."
        ));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "**Not measured by this run**, carried forward from the runs named:\n\n{}\n\n",
        lines.join("\n")
    )
}

fn identities(rows: &[LeaseRow], from: &str, md: &mut String) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "## Worker identities (measured by `scripts/lease-bench.sh`)\n\n\
         Where a Snowflake generator's worker id comes from (`idkit-lease`): how long getting \
         one takes at start-up (median and 90th percentile of 50 grants, the first left out) \
         and giving it back at shutdown (which includes waiting out the generator's current \
         tick, up to 1 ms at a 1 ms tick, so that nothing issues once the release returns), \
         and what holding it costs. A held lease renews every third of its TTL (counted at \
         a 3 s TTL over 9 s; the traffic a minute is at each source's default TTL, 3 s for a \
         static state file's reservation window); the generator pays one atomic load per tick \
         for it, and criterion's `leased` group (`cargo bench -p \
         bench-harness --bench snowflake -- leased`) compares generation with and without a \
         lease in one run. PostgreSQL and etcd ran on loopback on the machine that measured \
         them (PostgreSQL with fsync on), so network latency adds to their figures elsewhere; \
         the literature quotes 50 to 100 ms to acquire from ZooKeeper or etcd across a \
         network. These figures come from `data/leases.csv`, which `scripts/lease-bench.sh` \
         writes ({from}); this report run reads it, and does not measure them.\n\n{LEASES}"
    );
    for row in rows {
        LEASES.row(md, row);
    }
    let _ = writeln!(md);
}

const LEASES: Table<LeaseRow> = Table(&[
    text("source", |l| format!("`{}`", l.source)),
    figure("acquire (median)", |l| format!("{:.2} ms", l.acquire_ms)),
    figure("acquire (p90)", |l| format!("{:.2} ms", l.acquire_p90_ms)),
    figure("release (median)", |l| format!("{:.2} ms", l.release_ms)),
    figure("renewals in 9 s", |l| {
        format!("{} (TTL {} ms)", l.renewals_in_9s, l.ttl_ms)
    }),
    figure("renewals a minute (default TTL)", |l| {
        format!("{} (TTL {} ms)", l.renewals_per_minute, l.default_ttl_ms)
    }),
    text("per renewal", |l| l.per_renewal.clone()),
]);

/// One generator as `scripts/sqlite-functions.sh` measured it (`data/sqlite_functions.csv`).
#[derive(Debug, Clone, PartialEq)]
struct InSqlRow {
    generator: String,
    source: String,
    stored_as: String,
    statement_ms: f64,
    insert_ms: f64,
    key_pages: u64,
    key_fill: f64,
    in_order: f64,
    ns_above: f64,
    /// Ids a run made.
    ids: u64,
    /// The most ids a millisecond the generator's layout allows; 0 for no such bound.
    per_ms_at_most: u64,
}

impl InSqlRow {
    /// The least time `ids` ids take at the layout's rate, ms; `None` without a bound.
    fn least_ms(&self) -> Option<f64> {
        (self.per_ms_at_most > 0).then(|| self.ids as f64 / self.per_ms_at_most as f64)
    }

    /// Whether the statement ran at the layout's rate (within 5%): its figure is then the
    /// layout's, not the generator's cost.
    fn held_by_rate(&self) -> bool {
        self.least_ms()
            .is_some_and(|least| self.statement_ms <= least * 1.05)
    }
}

/// The rows of `data/sqlite_functions.csv`; none when it is absent or malformed.
fn read_in_sql(path: &Path) -> Vec<InSqlRow> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f = csv_fields(line);
            Some(InSqlRow {
                generator: f.first()?.clone(),
                source: f.get(1)?.clone(),
                stored_as: f.get(2)?.clone(),
                statement_ms: f.get(3)?.parse().ok()?,
                insert_ms: f.get(4)?.parse().ok()?,
                key_pages: f.get(5)?.parse().ok()?,
                key_fill: f.get(6)?.parse().ok()?,
                in_order: f.get(7)?.parse().ok()?,
                ns_above: f.get(8)?.parse().ok()?,
                ids: f.get(9)?.parse().ok()?,
                // Absent from files written before it was measured.
                per_ms_at_most: f.get(10).and_then(|v| v.parse().ok()).unwrap_or(0),
            })
        })
        .collect()
}

/// The fields of one CSV line as Python's `csv` module writes them (a field with a comma in
/// double quotes, a quote in it doubled).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// `## Ids made in SQL inside SQLite`: idkit's extension beside the peers, from the file.
fn made_in_sql(rows: &[InSqlRow], md: &mut String) {
    let Some(alone) = rows
        .iter()
        .find(|r| r.source == "SQLite" && r.stored_as == "INTEGER")
    else {
        return;
    };
    let idkit: Vec<&InSqlRow> = rows.iter().filter(|r| r.source == "idkit").collect();
    let peers: Vec<&InSqlRow> = rows
        .iter()
        .filter(|r| r.source != "idkit" && !std::ptr::eq(*r, alone))
        .collect();
    let (Some(fastest), Some(cheapest), Some(dearest)) = (
        peers
            .iter()
            .min_by(|a, b| a.ns_above.total_cmp(&b.ns_above)),
        idkit
            .iter()
            .min_by(|a, b| a.ns_above.total_cmp(&b.ns_above)),
        idkit
            .iter()
            .max_by(|a, b| a.ns_above.total_cmp(&b.ns_above)),
    ) else {
        return;
    };
    let at_or_below = idkit
        .iter()
        .filter(|r| r.ns_above <= fastest.ns_above)
        .count();
    let unordered: Vec<String> = peers
        .iter()
        .filter(|r| r.in_order < 0.99)
        .map(|r| format!("`{}` {:.0}%", r.generator, r.in_order * 100.0))
        .collect();
    // Generators whose statement ran at their layout's rate.
    let held: Vec<String> = idkit
        .iter()
        .filter(|r| r.held_by_rate())
        .map(|r| {
            format!(
                " `{}` makes at most {} ids a millisecond (its layout's sequence), so {} ids \
                 take at least {:.0} ms, and its statement took {:.0} ms: its figure is the \
                 layout's rate, not the generator's cost.",
                r.generator,
                thousands(r.per_ms_at_most),
                thousands(r.ids),
                r.least_ms().unwrap_or(0.0),
                r.statement_ms,
            )
        })
        .collect();
    let _ = writeln!(
        md,
        "## Ids made in SQL inside SQLite (measured by `scripts/sqlite-functions.sh`)\n\n\
         idkit's loadable SQLite extension (`extensions/idkit-sqlite`, the functions of the \
         `idkit-sqlite` crate) beside what SQLite users have: sqlean's `uuid7()` (the \
         `sqlean.py` package, in whose SQLite build every row here ran), `sqlite-ulid`'s \
         extension and SQLite's `randomblob(16)`. Each made {rows} ids in one statement (a \
         recursive CTE, `SELECT count(GEN) FROM c`), each run timed right after a run of the \
         statement alone ({alone:.0} ms; the cost above it is the median of the differences), \
         and keyed {rows} rows inserted in one transaction into a table of its own (WAL, \
         `synchronous=normal`); the key's b-tree is read with `dbstat`. Medians; the data is \
         in `data/sqlite_functions.csv`.\n\n\
         The fastest peer is `{fastest}` at {fast:.0} ns an id above the statement; idkit's \
         generators cost {low:.0} (`{cheapest}`) to {high:.0} ns (`{dearest}`), {at_or_below} \
         of {n} at or below it.{held} What the cost buys: every idkit generator's ids come out each \
         above the last (100%), within one statement and across the connections and \
         processes writing one database, where {unordered} of the peers' ids follow the one \
         made before them, since their bits after the millisecond are random; and no peer \
         keeps ids apart across processes or restarts with the clock behind.\n\n{IN_SQL}",
        rows = thousands(alone.ids),
        alone = alone.statement_ms,
        fastest = fastest.generator,
        fast = fastest.ns_above,
        low = cheapest.ns_above,
        cheapest = cheapest.generator,
        high = dearest.ns_above,
        dearest = dearest.generator,
        n = idkit.len(),
        held = held.concat(),
        unordered = if unordered.is_empty() {
            "all".to_owned()
        } else {
            listed(unordered.iter().map(String::as_str))
        },
    );
    for row in rows {
        IN_SQL.row(md, row);
    }
    let _ = writeln!(md);
}

/// `n` with a comma between thousands.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

const IN_SQL: Table<InSqlRow> = Table(&[
    text("generator", |r| format!("`{}`", r.generator)),
    text("made by", |r| r.source.clone()),
    text("stored as", |r| r.stored_as.clone()),
    figure("one statement", |r| format!("{:.0} ms", r.statement_ms)),
    figure("above the statement alone", |r| {
        format!("{:.0} ns an id", r.ns_above)
    }),
    figure("rows inserted", |r| format!("{:.0} ms", r.insert_ms)),
    figure("key pages", |r| r.key_pages.to_string()),
    figure("key fill", |r| format!("{:.0}%", r.key_fill * 100.0)),
    figure("each id above the last", |r| {
        format!("{:.0}%", r.in_order * 100.0)
    }),
]);

/// The sentence naming the schemes the registry reads by name but the report does not
/// measure (`registry::MORE`: the other UUID versions); empty when there are none.
fn not_measured() -> String {
    let more: Vec<String> = idkit_all::registry::MORE
        .iter()
        .map(|e| format!("`{}`", e.name()))
        .collect();
    if more.is_empty() {
        return String::new();
    }
    format!(
        " The registry also reads {}, the other UUID versions, by name; they are not measured \
         here.",
        listed(more.iter().map(String::as_str))
    )
}

/// How many times each SQLite insert run ran, in what order, and what its figures are.
fn repeats_sentence(p: &crate::Params) -> String {
    if p.repeats > 1 {
        format!(
            "Every insert run ran {} times, each time with the schemes in an order of its own \
             drawn from seed {} (`--seed {}` draws the same orders); a rate is the median \
             run's, with the lowest and highest in brackets, and a claim's verdict holds or \
             fails only where every repetition falls on the same side of its threshold.",
            p.repeats, p.order_seed, p.order_seed
        )
    } else {
        format!(
            "Every insert run ran once (the {} profile), the schemes in an order drawn from \
             seed {}: one run decides no verdict that a second could turn.",
            p.profile.name(),
            p.order_seed
        )
    }
}

/// A line at the top of a report measured from uncommitted changes (`--allow-dirty`):
/// its figures belong to no revision that can be checked out.
fn dirty_warning(revision: &str) -> String {
    if revision.ends_with("-dirty") {
        format!(
            "**Measured from uncommitted changes** (revision `{revision}`): these figures \
             belong to no revision that can be checked out, and are not the committed \
             report's.\n\n"
        )
    } else {
        String::new()
    }
}

fn header(r: &Results<'_>, carried: &str, md: &mut String) {
    let pragmas = r.named(SQLITE).map_or(&[][..], |e| e.settings());
    let m = r.machine;
    let p = r.params;
    let _ = writeln!(
        md,
        "# idkit: unique-id schemes compared\n\n\
         Every scheme in the idkit registry, measured {}: how fast ids \
         are made, how they order and collide, and what they cost as B-tree keys in {}.{} \
         Every number below comes from this run, except where a section names its source (an \
         engine's runs carried forward when no server was given for it, the worker-identity \
         figures); `data/` holds them all, `charts/` draws them.\n\n\
         {}{}{}\
         ## Environment\n\n\
         | | |\n|---|---|\n\
         | CPU | {} |\n| cores | {} |\n| memory | {:.1} GiB |\n| OS | {} |\n| toolchain | {} |\n\
         | git revision | `{}` |\n| profile | `{}` |\n| command | `{}` |\n| date | {} |\n",
        if carried.is_empty() {
            "on one machine in one run"
        } else {
            "in one run on the machine below, except what is listed as carried forward"
        },
        listed(ENGINES.iter().map(|e| e.report_name())),
        not_measured(),
        dirty_warning(&m.git_revision),
        carried,
        summary(r),
        m.cpu,
        m.cores,
        m.memory_bytes as f64 / 1_073_741_824.0,
        m.os,
        m.toolchain,
        m.git_revision,
        p.profile.name(),
        r.config.command,
        m.date
    );
    let _ = writeln!(
        md,
        "## Method\n\n\
         - **Generation.** Each rate is the median of {samples} samples of {ms} ms. `shared` is \
         the registry's thread-safe generator called through `dyn DynScheme` (as the CLI and \
         the service call it), shared by every thread; `per-thread` gives each thread its own \
         generator with its own worker id. For Snowflake layouts, `single-owner`, `lock-free` \
         and `mutex` are the typed generators called directly. The cap is the most ids the \
         layout can issue per second (sequence values per tick / tick length), so a generator \
         at its cap is as fast as its layout allows.\n\
         - **Properties.** {og} generators run at once, {oi} ids each, every id tagged with \
         its creation time (a monotonic clock read right after it); each generator makes \
         {burst} ids at the start of every millisecond ({burst_rate} ids/s each, a busy \
         service, not a benchmark loop). The ids are sorted and compared with creation order. Uniqueness: {ug} generators with distinct worker ids, \
         {ui} ids each; then two generators built with the same worker id (or, for a \
         store-coordinated scheme, two instances built separately: two in-process counters for \
         `auto-increment`, two allocators on the same SQLite file for `range`), {ci} ids \
         each. Store-coordinated \
         schemes run their generators from one shared store, as they are deployed.\n\
         - **SQLite.** rusqlite with its bundled SQLite {sqlite}. Each run opens a new file, \
         creates one table, and inserts {rows} ids generated before the clock starts, in \
         transactions of {commit} rows and in one transaction. Caches: small {small} KiB \
         (much smaller than the final tree), large {large} KiB (larger than any tree here). \
         Leaf pages, fill and depth are read from the `dbstat` table of the b-tree keyed by \
         the id; pages written and cache misses from `sqlite3_db_status` \
         (`SQLITE_DBSTATUS_CACHE_WRITE`, `SQLITE_DBSTATUS_CACHE_MISS`); WAL volume is pages \
         written times (page size + the 24-byte frame header); file size is read after a \
         `wal_checkpoint(TRUNCATE)`. Pragmas: {pragmas}, and `PRAGMA cache_size = -KiB`. \
         {repeats}\n",
        samples = p.samples,
        ms = p.sample_ms,
        og = p.order_generators,
        oi = p.order_ids,
        burst = p.order_burst,
        burst_rate = p.order_burst * 1000,
        ug = p.unique_generators,
        ui = p.unique_ids,
        ci = p.collision_ids,
        sqlite = rusqlite::version(),
        rows = p.btree_rows,
        commit = p.commit_rows,
        small = p.small_cache_kib,
        large = p.large_cache_kib,
        pragmas = pragmas
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", "),
        repeats = repeats_sentence(p)
    );
    md.push_str(&like_for_like(r));
    let _ = writeln!(
        md,
        "### What bounds the schemes on this machine\n\n{PRIMITIVES}"
    );
    for prim in r.primitives {
        PRIMITIVES.row(md, prim);
    }
    md.push('\n');
}

/// The value of `name` in settings written `name = value` (`PRAGMA name = value` for
/// SQLite's), as the engines list them.
fn setting<'a>(settings: &'a [String], name: &str) -> Option<&'a str> {
    settings.iter().find_map(|s| {
        let (key, value) = s.split_once(" = ")?;
        (key.trim_start_matches("PRAGMA ") == name).then_some(value)
    })
}

/// What a commit waits for in each engine, its caches and where it reads what they miss:
/// one table from each engine's settings, so that no comparison across engines passes for
/// like with like unless it is.
fn like_for_like(r: &Results<'_>) -> String {
    let p = r.params;
    let mut rows = Vec::new();
    for engine in ENGINES {
        let Some(results) = r.named(engine.name()) else {
            continue;
        };
        let settings = results.settings();
        let servers = &results.stamp().servers;
        // The cache each server was given: what follows its version in its description.
        let caches = servers
            .iter()
            .filter_map(|s| s.rsplit_once(", ").map(|(_, cache)| cache))
            .collect::<Vec<_>>()
            .join(" / ");
        let version = servers
            .first()
            .and_then(|s| s.split_once(": "))
            .and_then(|(_, rest)| rest.rsplit_once(", "))
            .map_or("", |(version, _)| version);
        let row = match engine.name() {
            SQLITE => {
                let synchronous = setting(settings, "synchronous").unwrap_or("FULL");
                let commit = if synchronous.eq_ignore_ascii_case("NORMAL") {
                    "no fsync: the WAL is synced at checkpoints".to_owned()
                } else {
                    "an fsync of the WAL".to_owned()
                };
                [
                    format!("SQLite {} (in process)", rusqlite::version()),
                    format!("{commit} (`synchronous = {synchronous}`)"),
                    format!(
                        "page cache {} KiB / {} KiB",
                        p.small_cache_kib, p.large_cache_kib
                    ),
                    "the OS page cache".to_owned(),
                ]
            }
            "postgres" if !servers.is_empty() => {
                let fsync = setting(settings, "fsync") == Some("on")
                    && setting(settings, "synchronous_commit") == Some("on");
                [
                    version.to_owned(),
                    if fsync {
                        "an fsync of the WAL (`fsync = on`, `synchronous_commit = on`)".to_owned()
                    } else {
                        "no fsync".to_owned()
                    },
                    caches,
                    "the OS page cache (PostgreSQL reads through it)".to_owned(),
                ]
            }
            "mysql" if !servers.is_empty() => {
                let flush = setting(settings, "innodb_flush_log_at_trx_commit").unwrap_or("1");
                let direct = setting(settings, "innodb_flush_method") == Some("O_DIRECT");
                [
                    version.to_owned(),
                    if flush == "1" {
                        "an fsync of the redo log (`innodb_flush_log_at_trx_commit = 1`)".to_owned()
                    } else {
                        format!("no fsync (`innodb_flush_log_at_trx_commit = {flush}`)")
                    },
                    caches,
                    if direct {
                        "the disk (`innodb_flush_method = O_DIRECT` bypasses the OS page cache)"
                            .to_owned()
                    } else {
                        "the OS page cache".to_owned()
                    },
                ]
            }
            _ => continue,
        };
        rows.push(format!(
            "| {} | {} |",
            engine.report_name(),
            row.join(" | ")
        ));
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "### Like for like\n\n\
         | engine | server | a commit waits for | caches (small / large) | what a cache \
         misses is read from |\n|---|---|---|---|---|\n{}\n\n\
         Rates are compared within an engine (a scheme against another under the same \
         settings); across engines they are not like for like where this table differs: a \
         commit that waits for no fsync is cheaper whatever the key, and a small cache whose \
         misses the OS page cache serves loses less than one whose misses go to the disk. \
         The runs with several writers put {} client threads and the server on the machine \
         that measured them ({} cores here): more runnable threads than cores, so they \
         measure contention, not how the server scales.\n\n",
        rows.join("\n"),
        p.pg_writers,
        r.machine.cores
    )
}

const PRIMITIVES: Table<Primitive> = Table(&[
    text("primitive", |p| p.name.to_string()),
    figure("cost per call", |p| ns(p.ns_per_call)),
]);

fn generation(r: &Results<'_>, charts: &[ChartFile], md: &mut String) {
    let g = r.generation;
    let _ = writeln!(
        md,
        "## Generation speed\n\n\
         One thread, the registry's shared generator. \"Of cap\" is the measured rate as a \
         share of the layout's ceiling: near 100% means the layout, not the code, is the limit.\n\n\
         {SPEED}"
    );
    for name in r.entries() {
        if let Some(row) = g.find(name, "shared", 1) {
            SPEED.row(md, row);
        }
    }
    md.push('\n');
    chart(md, charts, "generation_ns_per_id");
    let _ = writeln!(
        md,
        "Snowflake layouts by concurrency mode (typed generators, one thread):\n\n\
         | scheme | single-owner | lock-free | mutex | cap ns/id |\n|---|---:|---:|---:|---:|"
    );
    for name in r.entries() {
        let cell = |v: &str| {
            g.find(name, v, 1)
                .map_or("-".to_owned(), |x| ns(x.ns_per_id))
        };
        if g.find(name, "single-owner", 1).is_some() {
            let cap = g
                .find(name, "single-owner", 1)
                .and_then(|x| x.cap_ids_per_sec)
                .map_or("-".to_owned(), |c| ns(1e9 / c as f64));
            let _ = writeln!(
                md,
                "| `{name}` | {} | {} | {} | {cap} |",
                cell("single-owner"),
                cell("lock-free"),
                cell("mutex")
            );
        }
    }
    md.push('\n');
    let threads = r.params.threads;
    let _ = write!(
        md,
        "Aggregate ids/s by threads ({} cores):\n\n| scheme |",
        r.machine.cores
    );
    for t in threads {
        let _ = write!(md, " shared, {t} |");
    }
    for t in threads.iter().filter(|&&t| t > 1) {
        let _ = write!(md, " per-thread, {t} |");
    }
    md.push_str("\n|---|");
    for _ in 0..(threads.len() * 2 - 1) {
        md.push_str("---:|");
    }
    md.push('\n');
    for name in r.entries() {
        let _ = write!(md, "| `{name}` |");
        for &t in threads {
            let _ = write!(
                md,
                " {} |",
                g.find(name, "shared", t)
                    .map_or("-".to_owned(), |x| rate(x.ids_per_sec))
            );
        }
        for &t in threads.iter().filter(|&&t| t > 1) {
            let _ = write!(
                md,
                " {} |",
                g.find(name, "per-thread", t)
                    .map_or("-".to_owned(), |x| rate(x.ids_per_sec))
            );
        }
        md.push('\n');
    }
    md.push('\n');
    chart(md, charts, "generation_threads");
}

/// The generation speed table: one thread, each scheme's shared generator.
const SPEED: Table<GenRow> = Table(&[
    text("scheme", |g| format!("`{}`", g.scheme)),
    figure("ns/id", |g| ns(g.ns_per_id)),
    figure("ids/s", |g| rate(g.ids_per_sec)),
    figure("cap (ids/s)", |g| {
        g.cap_ids_per_sec
            .map_or("none".to_owned(), |c| rate(c as f64))
    }),
    figure("ns/id at cap", |g| {
        g.cap_ids_per_sec
            .map_or("-".to_owned(), |c| ns(1e9 / c as f64))
    }),
    figure("of cap", |g| {
        g.cap_ids_per_sec
            .map_or("-".to_owned(), |c| pct(g.ids_per_sec / c as f64))
    }),
]);

fn properties(r: &Results<'_>, md: &mut String) {
    let _ = writeln!(md, "## Properties (measured)\n\n{PROPERTIES}");
    for p in r.properties {
        PROPERTIES.row(md, p);
    }
    let _ = writeln!(
        md,
        "\nInverted pairs: the share of id pairs whose sort order contradicts creation order \
         (0% is perfect, 50% is random). Largest displacement: the most an id sorts after one \
         created later. Ids made in the same tick by different generators order by worker id, \
         not by time, so a time-ordered scheme shows inversions up to its tick length; thread \
         preemption between making an id and reading the clock adds to it. A scheme without \
         worker bits (`snowflake-mastodon`) cannot tell independent generators apart: its \
         distinct-identity run is independent generators, and their duplicates are real \
         (Mastodon itself makes ids inside one database, per table, not in many processes).\n"
    );
    let find = |name: &str| r.properties.iter().find(|p| p.scheme == name);
    let (label, scheme, option, value) = crate::generation::SUB_MS;
    if let (Some(sub), Some(counter)) = (find(label), find(scheme)) {
        let _ = writeln!(
            md,
            "`{label}` is `{scheme}` with `{option} = {value}`: RFC 9562's method 3, 12 bits of \
             the millisecond's fraction in `rand_a` (a step of about 244 ns, read from the \
             system clock) and fresh random bits below, as PostgreSQL 18's `uuidv7()` makes \
             them. Across {} generators its ids inverted {} of pairs with a largest \
             displacement of {:.3} ms, against {} and {:.3} ms for the counter within the \
             millisecond (method 2).\n",
            sub.order_generators,
            small_pct(sub.inverted_pair_fraction),
            sub.max_displacement_ms,
            small_pct(counter.inverted_pair_fraction),
            counter.max_displacement_ms
        );
    }
}

const PROPERTIES: Table<PropRow> = Table(&[
    text("scheme", |p| format!("`{}`", p.scheme)),
    figure("bytes", |p| p.bytes.to_string()),
    figure("string length", |p| {
        if p.string_len_min == p.string_len_max {
            p.string_len_min.to_string()
        } else {
            format!("{}-{}", p.string_len_min, p.string_len_max)
        }
    }),
    figure("inverted pairs", |p| small_pct(p.inverted_pair_fraction)),
    figure("largest displacement", |p| {
        format!("{:.3} ms", p.max_displacement_ms)
    }),
    figure("duplicates, distinct ids", |p| {
        format!("{} of {}", p.unique_duplicates, p.unique_ids)
    }),
    text("collision run", |p| p.collision_setup.to_string()),
    figure("duplicates", |p| {
        format!(
            "{} of {} ({})",
            p.collision_duplicates,
            p.collision_ids,
            pct(p.collision_duplicates as f64 / p.collision_ids.max(1) as f64)
        )
    }),
]);

fn verdicts(r: &Results<'_>, md: &mut String) {
    let p = r.params;
    let columns: Vec<_> = ENGINES.iter().map(|e| e.claims(r)).collect();
    if columns.iter().all(Result::is_err) {
        let _ = writeln!(
            md,
            "## The literature's claims\n\nuuid-v4 or uuid-v7 was not measured; no verdicts.\n"
        );
        return;
    }
    let _ = writeln!(
        md,
        "## The literature's claims, tested\n\n\
         Four claims about random keys recur in articles on UUID primary keys (for example \
         \"Database - The cost of using UUID as Primary Key\", binarybox.org). We found no \
         primary measurement behind their figures (10x, 67% to 50%, 2 to 3 times, 50%); they \
         are repeated, not measured. The nearest primary sources: Tomas Vondra, \"Sequential \
         UUID Generators\" (2ndQuadrant, 2018), which measured throughput and WAL volume of \
         random against sequential UUIDs in PostgreSQL, and A. C.-C. Yao, \"On random 2-3 \
         trees\" (Acta Informatica, 1978), whose analysis puts the fill of a B-tree grown by \
         random inserts with middle splits at ln 2, about 69%. Here each claim meets random \
         (uuid-v4) against time-ordered (uuid-v7) 16-byte keys in {} engines, {} rows per \
         commit. Most of these claims were first made about MySQL, where InnoDB keeps the \
         table inside its primary key.\n\n\
         | claim |{}\n|---|{}",
        number_word(ENGINES.len()),
        p.commit_rows,
        ENGINES
            .iter()
            .map(|e| format!(" {} |", e.report_name()))
            .collect::<String>(),
        "---|".repeat(ENGINES.len())
    );
    let claims = [
        "\"Random UUID inserts cause up to 10x more page splits.\"",
        "\"B-tree fill drops from about 67% to about 50%.\"",
        "\"Databases end up 2 to 3 times larger.\"",
        "\"Insert throughput falls by 50% or more.\"",
    ];
    for (i, claim) in claims.iter().enumerate() {
        let cells = columns.iter().map(|c| match c {
            Ok(cells) => format!(" {} |", cells[i]),
            Err(none) => format!(" {none} |"),
        });
        let _ = writeln!(md, "| {claim} |{}", cells.collect::<String>());
    }
    ENGINES.iter().for_each(|e| e.claim_reasons(r, md));
}

/// `one`, `two`, ... `five`; larger numbers in digits.
fn number_word(n: usize) -> String {
    let words = ["zero", "one", "two", "three", "four", "five"];
    words.get(n).map_or(n.to_string(), |w| (*w).to_owned())
}

/// `a`, `a and b`, `a, b and c`.
fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    match items.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A count that may be tiny or astronomical.
fn count(v: f64) -> String {
    if v < 2.0 {
        "< 2".to_owned()
    } else if v >= 1e6 {
        format!("{v:.2e}")
    } else {
        format!("{v:.1}")
    }
}

fn collisions(r: &Results<'_>, md: &mut String) {
    let _ = writeln!(
        md,
        "## Collision odds (computed)\n\n\
         For each scheme with random bits: how many ids independent generators can make per \
         tick, and per second, before the chance of any duplicate within a year reaches one \
         in a billion. From the birthday bound, `p = ticks * n^2 / 2^(bits + 1)` for `n` ids \
         per tick over a year's ticks, with the random bits each scheme publishes (its \
         `SchemeInfo::random_bits`: the bits that tell apart ids two generators make in the \
         same tick). A scheme without a tick (uuid-v4) is one draw over the whole year. \
         Within one generator the monotonic schemes (uuid-v7, ulid, tsid, typeid) and \
         objectid never repeat an id; these odds are between generators that share nothing. \
         Schemes whose uniqueness rests on coordination (Snowflake layouts with distinct \
         worker ids, range, auto-increment) have no row: a collision there is a \
         configuration error, not chance.\n\n{COLLISIONS}"
    );
    for c in r.collisions {
        COLLISIONS.row(md, c);
    }
    let _ = writeln!(
        md,
        "\n`tsid` counts generators on one node (its default 10 node bits leave an 11-bit \
         random counter start): with distinct nodes it cannot collide at all, and without \
         them even two ids in one millisecond are too many. `objectid` counts two \
         generators' ids in one second (40 random bits per generator, a 24-bit counter that \
         started at random). The data is in `data/collisions.csv`.\n"
    );
}

fn leaks(r: &Results<'_>, md: &mut String) {
    if r.leaks.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "## What an id gives away (computed)\n\n\
         What anyone who sees an id learns from it, by each scheme's definition as idkit \
         makes it: when it was made; which generator made it; whether the next id its \
         generator makes in the same tick follows from it (found by making ids in a row and \
         comparing the neighbours of one tick: a constant step means one guess finds it); \
         the random bits a guess at another generator's id of the same tick must hit; what \
         it says about how many ids were issued; for a 64-bit id, whether an id made on the \
         report's date is above 2^53, past which a JSON number read into a double (every \
         JavaScript number) loses its last digits; and its length as text, in an alphabet \
         that is safe in a URL as it stands for every scheme here.\n\n{LEAKS}"
    );
    for l in r.leaks {
        LEAKS.row(md, l);
    }
    let _ = writeln!(
        md,
        "\nidkit's id types (`SnowflakeId`, `RangeId`, `Tsid`, `Ulid`, `Ksuid`, `ObjectId`, \
         `TypeId`, and the uuid crate's `Uuid`) write JSON as text, which no reader rounds; a \
         bare `u64` written by serde is a number, and the column above says whose ids that \
         rounds today. A counter gives its total away: from the largest `m` of `k` ids seen, \
         `m + m/k - 1` estimates it within {:.0}% (one standard deviation) for 5 ids and \
         {:.0}% for 20 (the German tank problem), which `auto-increment` ids answer exactly \
         and `range` ids nearly. The data is in `data/leaks.csv`.\n",
        tank_error(5) * 100.0,
        tank_error(20) * 100.0
    );
}

const LEAKS: Table<LeakRow> = Table(&[
    text("scheme", |l| format!("`{}`", l.scheme)),
    text("made when", |l| match l.time_ms {
        None => "no".to_owned(),
        Some(1) => "to the ms".to_owned(),
        Some(1_000) => "to the second".to_owned(),
        Some(ms) => format!("to {ms} ms"),
    }),
    text("made by", |l| l.maker.to_owned()),
    text("next id of the tick from this one", |l| l.next.cell()),
    figure("random bits between generators", |l| {
        l.random_bits.to_string()
    }),
    text("how many were issued", |l| l.count.to_owned()),
    text("as a JSON number", |l| match l.value_now {
        Some(v) if v > JSON_SAFE => {
            #[allow(clippy::cast_precision_loss)] // a log for the reader, to one decimal
            let log = (v as f64).log2();
            format!("rounded (2^{log:.1})")
        }
        Some(_) => "exact".to_owned(),
        None if l.bits > 64 => format!("none ({} bits)", l.bits),
        None => "exact below 2^53 issued".to_owned(),
    }),
    text("text", |l| format!("{} ({})", l.text_len, l.alphabet)),
]);

const COLLISIONS: Table<CollisionRow> = Table(&[
    text("scheme", |c| format!("`{}`", c.scheme)),
    figure("random bits", |c| c.random_bits.to_string()),
    figure("tick", |c| {
        c.tick_ms.map_or("none".to_owned(), |t| format!("{t} ms"))
    }),
    figure("ids per tick", |c| {
        c.ids_per_tick.map_or("-".to_owned(), count)
    }),
    figure("ids per second", |c| rate(c.ids_per_sec)),
]);

/// `## In short`: which scheme for which situation, each with the figure of this run that
/// decides it and the section behind it; the decision guide at the end has the rest.
fn summary(r: &Results<'_>) -> String {
    let sqlite = r.named(SQLITE);
    let prop = |name: &str| r.properties.iter().find(|x| x.scheme == name);
    let ins = |name: &str| sqlite.and_then(|e| e.native(name, "small"));
    let ins_rate = |name: &str| ins(name).map_or("-".to_owned(), |x| rate(x.rows_per_sec));
    let pages_per_commit = |name: &str| {
        let written = sqlite.and_then(|e| e.native_own(name, "small", "pages_written"))?;
        Some(written / ins(name)?.commits.max(1) as f64)
    };
    let mut lines = Vec::new();
    if ins("snowflake-twitter").is_some() {
        lines.push(format!(
            "- **64-bit keys from many writers that can be given worker ids:** a Snowflake \
             layout (`snowflake-twitter`): {} inserts into SQLite as an `INTEGER PRIMARY KEY`, \
             against {} for uuid-v7 and {} for uuid-v4 as 16-byte keys \
             ([B-tree insert cost in SQLite](#b-tree-insert-cost-in-sqlite)).",
            ins_rate("snowflake-twitter"),
            ins_rate("uuid-v7"),
            ins_rate("uuid-v4")
        ));
    }
    if let (Some(v7), Some(v4)) = (prop("uuid-v7"), prop("uuid-v4")) {
        lines.push(format!(
            "- **Nothing to coordinate, time order wanted:** `uuid-v7` (or `ulid`): {} of its \
             pairs out of creation order against uuid-v4's {} ([Properties](#properties-measured)), \
             and {} inserts against {} ([B-tree insert cost in SQLite](#b-tree-insert-cost-in-sqlite)).",
            small_pct(v7.inverted_pair_fraction),
            small_pct(v4.inverted_pair_fraction),
            ins_rate("uuid-v7"),
            ins_rate("uuid-v4")
        ));
    }
    if let (Some(v4), Some(v7)) = (pages_per_commit("uuid-v4"), pages_per_commit("uuid-v7")) {
        lines.push(format!(
            "- **Random keys (`uuid-v4`):** only where an id must not reveal its creation time: \
             {v4:.1} pages written per commit in SQLite against {v7:.1} for uuid-v7 \
             ([The literature's claims, tested](#the-literatures-claims-tested))."
        ));
    }
    if let Some(range) = prop("range") {
        lines.push(format!(
            "- **Dense integers:** `range`, blocks leased from a shared store: {} per id, and \
             {} duplicates between two allocators on one store \
             ([Generation speed](#generation-speed)); `auto-increment`, a counter in one \
             process, is the baseline only.",
            r.generation
                .find("range", "shared", 1)
                .map_or("-".to_owned(), |x| ns(x.ns_per_id)),
            range.collision_duplicates
        ));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "## In short\n\n{}\n\nThe [decision guide](#decision-guide) at the end gives the \
         figures behind each, per engine.\n\n",
        lines.join("\n")
    )
}

fn guide(r: &Results<'_>, leases: &[LeaseRow], md: &mut String) {
    let sqlite = r.named(SQLITE);
    let g = r.generation;
    let prop = |name: &str| r.properties.iter().find(|x| x.scheme == name);
    let ins = |name: &str| sqlite.and_then(|e| e.native(name, "small"));
    // SQLite's own counter: pages written out of its cache per committed transaction.
    let pages_per_commit = |name: &str| {
        let written = sqlite.and_then(|e| e.native_own(name, "small", "pages_written"))?;
        Some(written / ins(name)?.commits.max(1) as f64)
    };
    let one = |name: &str| {
        g.find(name, "shared", 1)
            .map_or("-".to_owned(), |x| ns(x.ns_per_id))
    };
    let ins_rate = |name: &str| ins(name).map_or("-".to_owned(), |x| rate(x.rows_per_sec));
    let info = |name: &str| idkit_all::registry::find(name).ok().map(|e| e.info());
    #[allow(clippy::cast_precision_loss)] // caps are far below 2^52
    let cap = |name: &str| {
        info(name)
            .and_then(|i| i.cap_per_sec)
            .map_or("-".to_owned(), |c| rate(c as f64))
    };
    let _ = writeln!(md, "## Decision guide\n");
    if let Some(tw) = prop("snowflake-twitter") {
        let _ = writeln!(
            md,
            "- **You need 64-bit ids, time-ordered, from many writers, and can hand out worker \
             ids:** a Snowflake layout (`snowflake-twitter`, `snowflake-discord`). Measured {} \
             per id (its cap is {} per worker); in SQLite {} inserts as an `INTEGER PRIMARY \
             KEY` against {} for uuid-v4 as a blob, {} of uuid-v4's bytes per row{}. Guard \
             the worker ids: two generators given the same one made {} duplicates in {} ids.",
            one("snowflake-twitter"),
            cap("snowflake-twitter"),
            ins_rate("snowflake-twitter"),
            ins_rate("uuid-v4"),
            ins("snowflake-twitter")
                .zip(ins("uuid-v4"))
                .map_or("-".to_owned(), |(a, b)| pct(
                    a.bytes_per_row / b.bytes_per_row
                )),
            ENGINES
                .iter()
                .map(|e| e.guide_snowflake(r))
                .collect::<String>(),
            tw.collision_duplicates,
            tw.collision_ids
        );
    }
    if let (Some(v7), Some(v4)) = (prop("uuid-v7"), prop("uuid-v4")) {
        let _ = writeln!(
            md,
            "- **You cannot coordinate anything but want time order:** `uuid-v7` (or `ulid` for \
             a {}-character string). Measured {} per id; {} inverted pairs against uuid-v4's {}; \
             {} inserts against uuid-v4's {} with a small cache; no duplicates among {} ids.",
            prop("ulid").map_or(26, |u| u.string_len_max),
            one("uuid-v7"),
            small_pct(v7.inverted_pair_fraction),
            small_pct(v4.inverted_pair_fraction),
            ins_rate("uuid-v7"),
            ins_rate("uuid-v4"),
            v7.unique_ids
        );
    }
    if let Some(fast) = g
        .rows
        .iter()
        .filter(|x| x.variant == "shared" && x.threads == 1 && x.scheme != "auto-increment")
        .min_by(|a, b| a.ns_per_id.total_cmp(&b.ns_per_id))
    {
        let _ = writeln!(
            md,
            "- **Generation speed matters most:** `{}` was the fastest shared generator here at \
             {} per id. Any scheme above runs at millions of ids per second per core, far more \
             than a database accepts rows, so choose on order, size and coordination first.",
            fast.scheme,
            ns(fast.ns_per_id)
        );
    }
    if let Some(ai) = prop("auto-increment") {
        let _ = writeln!(
            md,
            "- **Dense integers from one database:** `auto-increment` inserts into SQLite at {} \
             with the smallest rows ({} bytes per row), but needs one store that every writer asks; two \
             separate counters issued {} duplicates in {} ids. `range` leases blocks from a \
             shared store instead, so the store is asked once per block: {} per id here, and \
             {} duplicates between two allocators on one store.",
            ins_rate("auto-increment"),
            ins("auto-increment").map_or("-".to_owned(), |x| format!("{:.1}", x.bytes_per_row)),
            ai.collision_duplicates,
            ai.collision_ids,
            one("range"),
            prop("range").map_or("-".to_owned(), |r| r.collision_duplicates.to_string())
        );
    }
    if let Some(v4) = ins("uuid-v4") {
        let _ = writeln!(
            md,
            "- **Keys are random today (uuid-v4):** it is the right choice only when ids must \
             not reveal creation time. As a key in SQLite it wrote {:.1} pages per commit \
             against {} for uuid-v7 and kept leaves {} full (SQLite rebalances siblings){}.",
            pages_per_commit("uuid-v4").unwrap_or_default(),
            pages_per_commit("uuid-v7").map_or("-".to_owned(), |x| format!("{x:.1}")),
            pct(v4.leaf_fill),
            ENGINES
                .iter()
                .map(|e| e.guide_random(r))
                .collect::<String>()
        );
    }
    ENGINES.iter().for_each(|e| e.guide_writers(r, md));
    ENGINES.iter().for_each(|e| e.guide_roundtrip(r, md));
    if !leases.is_empty() {
        let took = |source: &str| {
            leases
                .iter()
                .find(|l| l.source == source)
                .map_or("-".to_owned(), |l| format!("{:.1} ms", l.acquire_ms))
        };
        let _ = writeln!(
            md,
            "- **Where worker ids come from:** `static:N` (what the identity flags amount to: \
             `--worker 3 --datacenter 1` is Twitter's worker id 35) when an operator \
             assigns them; its state file refuses a second process with the same \
             worker id on the host and keeps a restart above the last issued time ({} to \
             start). `sqlite:///PATH` when the processes share one host ({}). \
             `postgres://...` when the hosts share a database: expiry is judged by the \
             database's clock ({} here, on loopback). `etcd://HOST:PORT/PREFIX` when you run \
             etcd ({} here). Every leased generator stops issuing before its lease could be \
             granted to anyone else; the drills in `crates/idkit-cli/tests/drills.rs` check \
             it with `kill -9`, `SIGSTOP`, server outages and a clock set back.",
            took("static"),
            took("sqlite"),
            took("postgres"),
            took("etcd")
        );
    }
    let odds = |name: &str| r.collisions.iter().find(|c| c.scheme == name);
    if let (Some(v7), Some(ulid)) = (odds("uuid-v7"), odds("ulid")) {
        let _ = writeln!(
            md,
            "- **Random bits decide how far uncoordinated generators scale:** across \
             independent generators, a one-in-a-billion chance of a duplicate in a year comes \
             at {} for `uuid-v7`, {} for `ulid`{}{}. Above that, give generators identities \
             (a Snowflake layout, `tsid` with distinct nodes) instead of hoping.",
            rate(v7.ids_per_sec),
            rate(ulid.ids_per_sec),
            odds("uuid-v4").map_or(String::new(), |c| format!(
                ", {} for `uuid-v4`",
                rate(c.ids_per_sec)
            )),
            odds("objectid").map_or(String::new(), |c| format!(
                ", {} for `objectid`",
                rate(c.ids_per_sec)
            ))
        );
    }
    if let Some(s) = prop("sonyflake") {
        let _ = writeln!(
            md,
            "- **Long-lived, many machines, modest rate:** `sonyflake` ({} identity bits, \
             10 ms ticks until {}) caps at {} per machine; measured {} per id.",
            info(s.scheme).map_or(0, |i| match i.coordination {
                idkit_all::core::Coordination::WorkerId { bits } => bits,
                _ => 0,
            }),
            info(s.scheme)
                .and_then(|i| i.time_runs_out_ms)
                .map_or("-".to_owned(), |ms| {
                    idkit_all::core::time::format_rfc3339_ms(ms)[..10].to_owned()
                }),
            cap(s.scheme),
            one(s.scheme)
        );
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_in_sql_section_names_the_fastest_peer_and_idkits_range() {
        let row = |generator: &str, source: &str, ns: f64, in_order: f64| InSqlRow {
            generator: generator.to_owned(),
            source: source.to_owned(),
            stored_as: if source == "SQLite" && ns == 0.0 {
                "INTEGER"
            } else {
                "BLOB"
            }
            .to_owned(),
            statement_ms: 300.0 + ns / 1e6 * 1e6 / 1e3,
            insert_ms: 900.0,
            key_pages: 10,
            key_fill: 0.9,
            in_order,
            ns_above: ns,
            ids: 1_000_000,
            per_ms_at_most: 0,
        };
        let rows = [
            row("statement alone", "SQLite", 0.0, 1.0),
            row("randomblob(16)", "SQLite", 40.0, 0.5),
            row("uuid7()", "sqlean", 70.0, 0.5),
            row("idkit_ulid()", "idkit", 35.0, 1.0),
            row("idkit_ulid_text()", "idkit", 90.0, 1.0),
            InSqlRow {
                per_ms_at_most: 4096,
                ..row("idkit_snowflake('twitter', 1)", "idkit", 60.0, 1.0)
            },
            InSqlRow {
                per_ms_at_most: 65536,
                ..row("idkit_snowflake('mastodon')", "idkit", 30.0, 1.0)
            },
        ];
        let mut md = String::new();
        made_in_sql(&rows, &mut md);
        assert!(
            md.contains("The fastest peer is `randomblob(16)` at 40 ns"),
            "{md}"
        );
        assert!(
            md.contains(
                "cost 30 (`idkit_snowflake('mastodon')`) to 90 ns (`idkit_ulid_text()`), 2 of 4"
            ),
            "{md}"
        );
        // 1,000,000 / 4,096 = 244 ms: a statement of 300 ms was not held by the rate; one
        // of 245 ms was.
        assert!(!md.contains("at most 4,096 ids a millisecond"), "{md}");
        let mut held = rows.clone();
        held[5].statement_ms = 245.0;
        let mut md = String::new();
        made_in_sql(&held, &mut md);
        assert!(
            md.contains(
                "2 of 4 at or below it. `idkit_snowflake('twitter', 1)` makes at most 4,096 ids \
                 a millisecond (its layout's sequence), so 1,000,000 ids take at least 244 ms, \
                 and its statement took 245 ms: its figure is the layout's rate, not the \
                 generator's cost."
            ),
            "{md}"
        );
        assert!(
            md.contains("`randomblob(16)` 50% and `uuid7()` 50%"),
            "{md}"
        );
        assert!(md.contains("made 1,000,000 ids"), "{md}");
        assert_eq!(md.matches("\n| `").count(), 7, "{md}");
        let mut none = String::new();
        made_in_sql(&[], &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn csv_fields_read_quoted_commas_and_quotes() {
        assert_eq!(
            csv_fields(r#"a,"idkit_snowflake('twitter', 1)",b"#),
            ["a", "idkit_snowflake('twitter', 1)", "b"]
        );
        assert_eq!(csv_fields(r#""say ""hi""",2"#), [r#"say "hi""#, "2"]);
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn lease_rows_keep_commas_in_the_last_field_and_skip_malformed_lines() {
        let path = std::env::temp_dir().join(format!("idkit-leases-{}.csv", std::process::id()));
        std::fs::write(
            &path,
            "source,acquire_ms_median,acquire_ms_p90,release_ms_median,ttl_ms,renewals_in_9s,\
             renewal_failures,default_ttl_ms,renewals_per_minute,per_renewal\n\
             etcd,4.767,6.203,2.514,3000,8,0,10000,18,2 requests (keep-alive, a transaction)\n\
             static,not-a-number,0.5,0.5,3000,8,0,3000,60,1 file replaced\n",
        )
        .unwrap();
        let rows = read_leases(&path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            rows,
            vec![LeaseRow {
                source: "etcd".into(),
                acquire_ms: 4.767,
                acquire_p90_ms: 6.203,
                release_ms: 2.514,
                ttl_ms: 3000,
                renewals_in_9s: 8,
                default_ttl_ms: 10_000,
                renewals_per_minute: 18,
                per_renewal: "2 requests (keep-alive, a transaction)".into(),
            }]
        );
        assert!(read_leases(Path::new("/nonexistent/leases.csv")).is_empty());
    }
}
