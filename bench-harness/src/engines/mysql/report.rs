//! The report's InnoDB sections: insert cost, keys as they arrive, what a secondary index
//! carries, ids from the database, the `created_at` question, and InnoDB's column of the
//! claims table.

use std::fmt::Write as _;

use super::insert::MyStorage;
use super::shapes::{SETUPS, ShapeRun};
use super::{AUTO_INCREMENT, InnoDb, My, MyRun};
use crate::engine::InsertResults as _;
use crate::engine::UUID_V7_RANDOM;
use crate::engine::report::{
    self, ChartFile, ChartedSection, ClaimRuns, ClaimWords, Report, Results, Section, columns,
};
use crate::table::{Table, figure, kib, mib, pct, rate, text};

/// The insert runs' table.
const TABLE: Table<MyRun> = Table(&[
    columns::scheme(),
    text("key column", |b| format!("`{}`", b.own.sql_type)),
    columns::cache("buffer pool"),
    columns::writers(),
    columns::rows_per_sec(),
    columns::bytes_per_row(),
    figure("primary key", |b| mib(b.index_bytes)),
    columns::leaf_pages(),
    columns::leaf_fill("leaf fill"),
    figure("splits per 1,000 rows", |b| {
        format!("{:.2}", b.splits_per_1k())
    }),
    figure("merges", |b| b.own.merges.to_string()),
    figure("redo per 1,000 rows", |b| kib(b.wal_per_1k())),
    figure("pages written per commit", |b| {
        format!("{:.1}", b.pages_per_commit())
    }),
]);

/// Under `## B-tree insert cost in InnoDB (MySQL, MariaDB)`: the runs, `### Keys as they
/// arrive (InnoDB)` and `### Every secondary index carries the key`.
fn btree(r: &Results<'_>, charts: &[ChartFile], md: &mut String) {
    let my = r.engine::<InnoDb>();
    let Some(first) = my.runs.first() else {
        return;
    };
    let _ = writeln!(
        md,
        "The same ids in InnoDB, {}. Servers: {}. Settings: {}. InnoDB keeps each table inside \
         its primary key (a clustered index): the key decides which leaf every row goes to, \
         and the rows are the leaves. Each run creates a fresh table `(id PRIMARY KEY)` and \
         inserts {} ids generated before the clock starts, {} rows per commit (one multi-row \
         `INSERT` with autocommit, one round trip, the redo log flushed at every commit). Page \
         splits, merges and reorganizations are InnoDB's own counters \
         (`information_schema.INNODB_METRICS`, the `index` module, reset before each run; \
         they count every index of the table at every level). Leaf pages and sizes come from \
         `mysql.innodb_index_stats` after `ANALYZE TABLE`; leaf fill is the leaf records' \
         bytes (5-byte header, the key, the 13 bytes of transaction id and roll pointer) over \
         the leaves' room (16,256 bytes of each 16 KiB page), which matches \
         `INNODB_BUFFER_PAGE`'s `DATA_SIZE` within half a point where the whole tree is \
         cached; redo bytes are the difference of the log sequence numbers; pages written \
         are `Innodb_pages_written` (pages the server wrote to its data files while the run \
         lasted). The data is in `data/btree_mysql.csv`, `data/btree_mysql_curve.csv` and \
         `data/mysql.json`.\n\n\
         Each scheme keyed by its own binary column (`BIGINT` for 64-bit ids, `BINARY(n)` \
         otherwise), with each buffer pool:\n\n{TABLE}",
        report::provenance::<InnoDb>(&my.stamp),
        my.stamp.servers.join("; "),
        my.stamp.settings.join(", "),
        first.rows,
        first.commit_rows,
    );
    // Each cache's AUTO_INCREMENT table after its schemes.
    report::native_rows(r, &*my, md, &TABLE, |md, cache| {
        if let Some(b) = my.find(AUTO_INCREMENT, MyStorage::AutoIncrementPk, cache, 1, false) {
            TABLE.row(md, b);
        }
    });
    let others: Vec<&MyRun> = my
        .runs
        .iter()
        .filter(|b| {
            b.writers == 1
                && b.ids_made == "before"
                && b.cache == "small"
                && matches!(b.storage, MyStorage::UuidPk | MyStorage::TextPk)
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(
            md,
            "\nThe same UUIDs in MariaDB's `UUID` column type and as their canonical text under \
             a binary collation (small buffer pool). MariaDB stores a `UUID` of version 6 or \
             later as its bytes in order and older versions with their groups reversed (from \
             10.10.6 and 10.11.5, MDEV-31926; its documentation's \"UUID Data Type\"), so \
             uuid-v7 keeps its order in that column:\n\n{TABLE}"
        );
        for b in others {
            TABLE.row(md, b);
        }
    }
    md.push('\n');
    report::charts::<InnoDb>(md, charts);
    arrival(r, md);
    secondary(r, md);
}

/// `### Keys as they arrive (InnoDB)`.
fn arrival(r: &Results<'_>, md: &mut String) {
    let my = r.engine::<InnoDb>();
    let Some((live, writers)) = report::live_runs(&*my) else {
        return;
    };
    let _ = writeln!(
        md,
        "### Keys as they arrive (InnoDB)\n\n\
         Each writer has its own connection and its own generator (Snowflake with distinct \
         worker ids; UUIDv7 and ULID generators that share nothing) and makes each batch of \
         ids just before inserting it, so with {writers} writers the ids of one millisecond \
         arrive interleaved near the right edge of the tree. `{UUID_V7_RANDOM}` is UUIDv7 with \
         fresh random bits for every id and no counter. InnoDB picks where to split a full \
         leaf from where the previous insert into that page went (`PAGE_LAST_INSERT` and \
         `PAGE_DIRECTION` in the page header, `btr_page_get_split_rec_to_right` in \
         `btr0btr.cc`): an insert just after the last one splits at the insert point and \
         leaves the old page full, anything else splits in the middle. A reported bug (MySQL \
         #67718) left pages holding a single record when mostly-increasing keys arrived \
         slightly out of order. Small buffer pool:\n\n{TABLE}"
    );
    for b in &live {
        TABLE.row(md, b);
    }
    let Some(runs @ [c1, cn, r1, rn, v4]) = report::arrival(&*my, writers) else {
        return;
    };
    let random_finding = if r1.leaf_fill < v4.leaf_fill {
        format!(
            " One writer's `{UUID_V7_RANDOM}` filled its leaves less than uuid-v4 ({} against \
             {}): keys that increase from one millisecond to the next but arrive in random \
             order within it defeat both split rules. The key after a page's last insert is \
             rarely the next one, so full pages split in the middle, and once the clock moves \
             on no key ever lands in the left half again: it stays half empty, as in MySQL \
             #67718. A counter within the millisecond (idkit's `uuid-v7`) avoids it.",
            pct(r1.leaf_fill),
            pct(v4.leaf_fill)
        )
    } else {
        String::new()
    };
    let s1 = my.live("snowflake-twitter", 1);
    let sn = my.live("snowflake-twitter", writers);
    let _ = writeln!(
        md,
        "\n**What several writers do.** `uuid-v7` from one writer filled its leaves to {} with \
         {:.2} splits per 1,000 rows; from {writers} writers, to {} with {:.2}. Without a \
         counter, `{UUID_V7_RANDOM}` filled them to {} (one writer) and {} ({writers} \
         writers), against uuid-v4's {}.{}{} {}. {}{random_finding}\n",
        pct(c1.leaf_fill),
        c1.splits_per_1k(),
        pct(cn.leaf_fill),
        cn.splits_per_1k(),
        pct(r1.leaf_fill),
        pct(rn.leaf_fill),
        pct(v4.leaf_fill),
        report::sub_ms_clause(&*my, writers, |b| format!(
            "{:.2} splits per 1,000 rows",
            b.splits_per_1k()
        )),
        s1.zip(sn).map_or(String::new(), |(a, b)| format!(
            " Snowflake ids with distinct worker ids: {} and {}.",
            pct(a.leaf_fill),
            pct(b.leaf_fill)
        )),
        report::arrival_log("Redo", runs),
        writers_finding(c1, cn, rn, v4)
    );
}

/// The sentence on what interleaved writers cost, from the fills.
fn writers_finding(c1: &MyRun, cn: &MyRun, rn: &MyRun, v4: &MyRun) -> String {
    let lost = c1.leaf_fill - cn.leaf_fill;
    let single = cn.leaf_pages > 0 && cn.leaf_fill < 0.2;
    if single {
        format!(
            "Pages close to empty: interleaved writers met the pattern of #67718 here (fill {}).",
            pct(cn.leaf_fill)
        )
    } else if lost > 0.1 {
        format!(
            "Interleaved writers cost {:.0} points of fill: each writer's keys land left of \
             another's last insert, the page's direction resets, and the split falls in the \
             middle. The leaves settle {} random keys' {} and never near empty; the \
             single-record pages of #67718 did not appear.",
            lost * 100.0,
            if cn.leaf_fill > v4.leaf_fill {
                "above"
            } else {
                "at or below"
            },
            pct(v4.leaf_fill)
        )
    } else {
        format!(
            "Interleaved writers cost little fill here ({:.1} points): the keys of one \
             millisecond from several writers still arrive after the page's last insert often \
             enough for InnoDB to keep splitting at the insert point{}; the single-record \
             pages of #67718 did not appear.",
            lost * 100.0,
            if rn.leaf_fill < cn.leaf_fill - 0.1 {
                ", while keys without a counter lose their order inside the millisecond and \
                 fill less"
            } else {
                ""
            }
        )
    }
}

/// The table shapes' table.
const SHAPES: Table<ShapeRun> = Table(&[
    text("table", |s| s.setup.to_string()),
    text("key", |s| format!("`{}`", s.own.key_type)),
    text("secondary indexes", |s| s.own.secondary.to_string()),
    figure("rows/s", |s| rate(s.rows_per_sec)),
    figure("redo per 1,000 rows", |s| kib(s.wal_per_1k)),
    figure("primary key (rows)", |s| mib(s.pk_bytes)),
    figure("secondary indexes", |s| mib(s.own.secondary_bytes)),
    figure("total", |s| mib(s.total_bytes)),
    figure("splits", |s| s.own.splits.to_string()),
    figure("latest 50: time", |s| format!("{:.0} µs", s.query_us)),
    figure("latest 50: rows read", |s| {
        s.own.query_rows_read.to_string()
    }),
]);

/// The sentence that describes the shape tables.
fn shape_method(r: &Results<'_>) -> String {
    let my = r.engine::<InnoDb>();
    let s = &my.own.shapes[0];
    format!(
        "Tables `(id PRIMARY KEY, created_at DATETIME(6), account INT UNSIGNED)` of {} rows, \
         {} rows per commit, small buffer pool; `created_at` is the client's clock at each \
         commit and `account` one of 10,000. \"Latest 50\" is `{}` (by `id` for the \
         uuid-v7 key alone): its time is the median of {} runs, its rows read the storage \
         engine's `Handler_read_%` counters for one run. The data is in \
         `data/mysql_shapes.csv`.",
        s.rows, s.commit_rows, s.query, s.queries
    )
}

/// The three table shapes from `first` in [`SETUPS`], under `intro` (a section's heading
/// and opening), the method and their table; `None`, and nothing written, without them.
fn shapes_table<'a>(
    r: &Results<'_>,
    my: &'a My,
    first: usize,
    intro: &str,
    md: &mut String,
) -> Option<[&'a ShapeRun; 3]> {
    let trio = my.trio(first)?;
    let _ = writeln!(md, "{intro} {}\n\n{SHAPES}", shape_method(r));
    for s in trio {
        SHAPES.row(md, s);
    }
    Some(trio)
}

/// `### Every secondary index carries the key (InnoDB)`.
fn secondary(r: &Results<'_>, md: &mut String) {
    let my = r.engine::<InnoDb>();
    let intro = "### Every secondary index carries the key (InnoDB)\n\n\
                 An InnoDB secondary index finds a row by its primary key: each entry is the \
                 indexed column followed by the whole key.";
    let Some([narrow, wide, random]) = shapes_table(r, &my, 0, intro, md) else {
        return;
    };
    let ratio = wide.own.secondary_bytes as f64 / narrow.own.secondary_bytes.max(1) as f64;
    let total = wide.total_bytes as f64 / narrow.total_bytes.max(1) as f64;
    let _ = writeln!(
        md,
        "\n**Verdict: {}.** The same two secondary indexes took {} under the 16-byte key \
         against {} under the 64-bit one, {ratio:.2}x; the table with its indexes {total:.2}x \
         ({} against {}). A secondary entry on `created_at` is 5 bytes of record header, 8 of \
         `DATETIME(6)` and the key: 8 more bytes of key is about a third more per entry, paid \
         in every secondary index the table has. Insert rate: {} against {}. A random \
         16-byte key scatters the rows themselves as well: {} in all, at {}.\n",
        if ratio >= 1.2 {
            "key width is paid once per secondary index"
        } else {
            "key width costs little here"
        },
        mib(wide.own.secondary_bytes),
        mib(narrow.own.secondary_bytes),
        mib(wide.total_bytes),
        mib(narrow.total_bytes),
        rate(wide.rows_per_sec),
        rate(narrow.rows_per_sec),
        mib(random.total_bytes),
        rate(random.rows_per_sec)
    );
}

/// InnoDB's part of the report: its sections, its cells of the claims table and the reasons
/// under them, and its words in the decision guide.
impl Report for InnoDb {
    const REPORT_NAME: &'static str = "InnoDB (MySQL, MariaDB)";

    const BTREE: ChartedSection = btree;
    const IDS: Option<Section> = Some(ids);
    const CREATED_AT: Option<Section> = Some(created_at);

    const WORDS: ClaimWords = ClaimWords {
        fill: "fill",
        small: "small buffer pool",
        small_only: "the small buffer pool",
        large_only: "the large buffer pool",
    };

    fn splits_cell(v4s: &MyRun, v7s: &MyRun) -> String {
        let split_ratio = v4s.own.splits as f64 / v7s.own.splits.max(1) as f64;
        format!(
            "{}: {} splits against {}, {split_ratio:.1}x; redo {:.1}x",
            if split_ratio >= 5.0 {
                "Holds"
            } else {
                "Does not hold"
            },
            v4s.own.splits,
            v7s.own.splits,
            v4s.wal_per_1k() / v7s.wal_per_1k().max(1.0)
        )
    }

    fn size_measured(_: &MyRun, _: &MyRun, size_ratio: f64) -> String {
        format!("table {size_ratio:.2}x")
    }

    /// The numbered "why" list for InnoDB under the claims table.
    fn reasons(_: &Results<'_>, md: &mut String, runs: &ClaimRuns<'_, MyRun>) {
        let &ClaimRuns {
            v4: v4s,
            v7: v7s,
            bigint,
            ..
        } = runs;
        let _ = writeln!(
            md,
            "\nIn InnoDB ({} ids per run, `BINARY(16)` primary key, the rows inside it):\n",
            v4s.rows
        );
        let _ = writeln!(
            md,
            "1. **Splits.** {} for v4 against {} for v7 ({:.2} and {:.2} per 1,000 rows), {} and \
             {} merges. Sequential keys split at the insert point: the full page keeps its records and \
             the new key opens an empty page, so the pages end about 15/16 full (the MySQL \
             manual, \"The Physical Structure of an InnoDB Index\": InnoDB leaves 1/16 of a page \
             free for later updates). Random keys split full pages in the middle, and each half \
             fills again before it splits, so each split still adds about one page: the \
             splits follow the pages, {} leaves for v4 against {} for v7, not a tenfold factor. What grows \
             is the redo: {} against {} per 1,000 rows.",
            v4s.own.splits,
            v7s.own.splits,
            v4s.splits_per_1k(),
            v7s.splits_per_1k(),
            v4s.own.merges,
            v7s.own.merges,
            v4s.leaf_pages,
            v7s.leaf_pages,
            kib(v4s.wal_per_1k()),
            kib(v7s.wal_per_1k())
        );
        let _ = writeln!(
            md,
            "2. **Fill.** {} for v7, {} for v4{}. The manual gives 15/16 for sequential inserts \
             and \"from 1/2 to 15/16\" for random ones; the random tree settles near ln 2 (about \
             69%), as in PostgreSQL and the textbooks, because InnoDB, like nbtree, does not move \
             records to a sibling to avoid a split.",
            pct(v7s.leaf_fill),
            pct(v4s.leaf_fill),
            bigint.map_or(String::new(), |b| format!(
                ", {} for 64-bit Snowflake ids as `BIGINT`",
                pct(b.leaf_fill)
            ))
        );
        let _ = writeln!(
            md,
            "3. **Size.** {} for v4 against {} for v7, {:.2}x: in InnoDB the key's tree is the \
             table, so the density it loses is the whole table's{}.",
            mib(v4s.file_bytes),
            mib(v7s.file_bytes),
            v4s.file_bytes as f64 / v7s.file_bytes.max(1) as f64,
            bigint.map_or(String::new(), |b| format!(
                "; the same rows keyed by a 64-bit id take {}",
                mib(b.file_bytes)
            ))
        );
        let _ = writeln!(
            md,
            "4. **Throughput.** Small buffer pool: {} for v4 against {} for v7, with {:.1} and \
             {:.1} pages written per commit{}. Random keys dirty a different leaf for almost every \
             row; once the table outgrows the buffer pool, pages must be written out to make \
             room and read back for the next key that lands on them.\n",
            rate(v4s.rows_per_sec),
            rate(v7s.rows_per_sec),
            v4s.pages_per_commit(),
            v7s.pages_per_commit(),
            runs.large_rates()
        );
    }

    fn snowflake_clause(my: &My, snowflake: &MyRun, v4: &MyRun) -> String {
        format!(
            "; in InnoDB {} as `BIGINT` against {} for uuid-v4 as `BINARY(16)`, and \
             every secondary index stores the 8-byte key instead of 16 bytes{}",
            rate(snowflake.rows_per_sec),
            rate(v4.rows_per_sec),
            my.shape(SETUPS[0])
                .zip(my.shape(SETUPS[1]))
                .map_or(String::new(), |(n, w)| format!(
                    " ({} against {} for two of them)",
                    mib(n.own.secondary_bytes),
                    mib(w.own.secondary_bytes)
                ))
        )
    }

    fn random_clause(v4: &MyRun, v7: &MyRun) -> String {
        format!(
            "; in InnoDB, where the key orders the rows themselves, the table was \
             {:.2}x uuid-v7's at {} fill against {}",
            v4.file_bytes as f64 / v7.file_bytes.max(1) as f64,
            pct(v4.leaf_fill),
            pct(v7.leaf_fill)
        )
    }

    fn roundtrip_line(my: &My) -> Option<String> {
        if my.own.roundtrip.is_empty() {
            return None;
        }
        let best = |method: &str| report::best(&my.own.roundtrip, method);
        Some(format!(
            "- **Ids from the database, one round trip each (InnoDB):** `AUTO_INCREMENT` with \
             a commit per id gave at most {} here; the range allocator on Leaf's table {}. \
             On MySQL or MariaDB, `range` with `--range-store mysql://...` keeps the dense \
             integers of `AUTO_INCREMENT` without a round trip per id.",
            rate(best("auto_increment")),
            rate(best("range_allocator"))
        ))
    }

    fn writers_line(most: usize, one: &MyRun, many: &MyRun, v4: &MyRun) -> Option<String> {
        Some(format!(
            "- **Many writers into one InnoDB table:** uuid-v7 from {most} writers at once \
             filled the table's leaves to {} (one writer: {}; uuid-v4: {}) with {:.2} splits \
             per 1,000 rows (one writer: {:.2}) and {} of redo per 1,000 rows against \
             uuid-v4's {}.",
            pct(many.leaf_fill),
            pct(one.leaf_fill),
            pct(v4.leaf_fill),
            many.splits_per_1k(),
            one.splits_per_1k(),
            kib(many.wal_per_1k()),
            kib(v4.wal_per_1k())
        ))
    }
}

/// `## Ids from the database (InnoDB)`.
fn ids(r: &Results<'_>, md: &mut String) {
    let my = r.engine::<InnoDb>();
    if my.own.roundtrip.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "## Ids from the database (InnoDB)\n\n\
         `auto_increment` is `INSERT INTO t () VALUES ()` on a `BIGINT AUTO_INCREMENT` key, \
         one row per transaction with the redo log flushed at each commit, the id read from \
         the server's answer (what `LAST_INSERT_ID()` returns); each client has its own \
         connection to the small-buffer-pool server, over loopback. `range_allocator` is \
         idkit's `range` scheme leasing blocks from Meituan Leaf's table on the same server \
         (`idkit-range` feature `mysql`; one allocator shared by the client threads). Each \
         runs for the same window; every id is checked for duplicates. The data is in \
         `data/mysql_ids.csv`.\n"
    );
    report::roundtrip_rows(md, &my.own.roundtrip);
    let best = |method: &str| report::best(&my.own.roundtrip, method);
    let (ai, range) = (best("auto_increment"), best("range_allocator"));
    let dups: u64 = my.own.roundtrip.iter().map(|t| t.duplicates).sum();
    let _ = writeln!(
        md,
        "\n- **\"Database auto-increment: about 10k ids/s.\"** {} in InnoDB: the best here \
         was {} with a commit per id{}. Each id waits for a round trip and for its commit's \
         redo to reach the disk; several clients share the disk's flushes (group commit), \
         which is why more clients get more ids per second. Every id was distinct ({dups} \
         duplicates).\n\
         - **\"Range allocation: about 1M ids/s.\"** {}: {} here, since the store is asked \
         once per block.\n",
        report::auto_increment_verdict(ai),
        rate(ai),
        my.find(
            AUTO_INCREMENT,
            MyStorage::AutoIncrementPk,
            "small",
            1,
            false
        )
        .map_or(String::new(), |b| format!(
            "; the same column filled 1,000 rows per commit took {}",
            rate(b.rows_per_sec)
        )),
        report::range_verdict(range),
        rate(range)
    );
}

/// `## A created_at index or a time-ordered key (InnoDB)`.
fn created_at(r: &Results<'_>, md: &mut String) {
    let my = r.engine::<InnoDb>();
    let intro = "## A created_at index or a time-ordered key (InnoDB)\n\n\
                 The claim \"if the id were random (UUIDv4) you'd need a separate created_at \
                 index, doubling write costs\", in InnoDB.";
    let Some([v4i, v7, v4n]) = shapes_table(r, &my, 3, intro, md) else {
        return;
    };
    let (wal, speed, verdict) = report::created_at_cost(v4i, v7);
    let _ = writeln!(
        md,
        "\n**Verdict: {}.** uuid-v4 with its `created_at` index wrote {wal:.2}x the redo of \
         uuid-v7 alone and inserted at {} of its rate ({} against {}); the table with its \
         index took {} against {}. The index is needed: without it the latest-50 query read \
         {} rows in {:.0} µs instead of {} in {:.0} µs. A uuid-v7 key answers the same \
         query from the table itself ({} rows, {:.0} µs): in InnoDB the rows are stored in \
         key order, so the newest rows are the last leaf.\n",
        verdict,
        pct(1.0 / speed),
        rate(v4i.rows_per_sec),
        rate(v7.rows_per_sec),
        mib(v4i.total_bytes),
        mib(v7.total_bytes),
        v4n.own.query_rows_read,
        v4n.query_us,
        v4i.own.query_rows_read,
        v4i.query_us,
        v7.own.query_rows_read,
        v7.query_us
    );
}
