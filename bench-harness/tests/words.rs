//! Words from the numbers: each figure a sentence of the committed `reports/REPORT.md`
//! gives is recomputed from `reports/data/` and must read as the table's cell does. The
//! first cases are sentences that once disagreed with their own tables (Instagram's
//! PL/pgSQL function at 649.1 k/s in the text and 2.604 s per million in its table).

use std::path::{Path, PathBuf};

mod common;

use common::read_csv;

fn reports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports")
}

/// A rate as the report writes it (`table::rate`): 3 significant figures past 1 k/s.
fn rate(per_sec: f64) -> String {
    if per_sec >= 1e6 {
        format!("{:.2} M/s", per_sec / 1e6)
    } else if per_sec >= 1e3 {
        format!("{:.1} k/s", per_sec / 1e3)
    } else {
        format!("{per_sec:.0}/s")
    }
}

/// The line of REPORT.md that starts with `start`.
fn line<'a>(report: &'a str, start: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("REPORT.md has no line starting {start:?}"))
}

/// A column of the row of `csv` whose columns `keys` hold the values given.
fn cell(csv: &str, keys: &[(&str, &str)], column: &str) -> String {
    let (header, rows) = read_csv(&reports().join("data").join(csv));
    let at = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{csv} has no column {name}"))
    };
    let row = rows
        .iter()
        .find(|r| keys.iter().all(|(k, v)| r[at(k)].trim_matches('"') == *v))
        .unwrap_or_else(|| panic!("{csv} has no row {keys:?}"));
    row[at(column)].clone()
}

fn num(text: &str) -> f64 {
    text.trim_matches('"')
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

#[test]
fn instagrams_function_is_one_figure_in_the_claim_the_guide_and_its_table() {
    let report = std::fs::read_to_string(reports().join("REPORT.md")).unwrap();
    let generator = [("generator", "idkit_bench_instagram()")];
    let seconds = num(&cell("pg_generators.csv", &generator, "make_seconds"));
    let ids = num(&cell("pg_generators.csv", &generator, "ids"));
    let figure = rate(ids / seconds);
    let claim = line(
        &report,
        "- **\"Instagram's in-database generator: about 1M ids/s per shard.\"**",
    );
    assert!(
        claim.contains(&format!("made {figure} in one statement")),
        "the claim says otherwise than the table's {seconds} s per {ids} ids ({figure}): {claim}"
    );
    let verdict = if ids / seconds >= 5e5 {
        "Holds for the function alone"
    } else {
        "Does not hold here"
    };
    assert!(claim.contains(verdict), "{verdict}: {claim}");
    let guide = line(
        &report,
        "- **Ids from the database, one round trip each (PostgreSQL):**",
    );
    assert!(
        guide.contains(&format!(
            "Instagram's in-database function {figure} per shard"
        )),
        "the guide says otherwise than the table ({figure}): {guide}"
    );
}

#[test]
fn in_short_gives_the_sqlite_insert_rates_of_its_table() {
    let report = std::fs::read_to_string(reports().join("REPORT.md")).unwrap();
    let insert = |scheme: &str, storage: &str| {
        let keys = [
            ("scheme", scheme),
            ("storage", storage),
            ("cache", "small"),
            ("commit_rows", "1000"),
        ];
        rate(num(&cell("btree.csv", &keys, "rows_per_sec")))
    };
    let (snowflake, v7, v4) = (
        insert("snowflake-twitter", "integer_pk"),
        insert("uuid-v7", "blob_pk"),
        insert("uuid-v4", "blob_pk"),
    );
    let line64 = line(&report, "- **64-bit keys from many writers");
    assert!(
        line64.contains(&format!(
            "{snowflake} inserts into SQLite as an `INTEGER PRIMARY KEY`, against {v7} for \
             uuid-v7 and {v4} for uuid-v4"
        )),
        "{line64}"
    );
    let ordered = line(&report, "- **Nothing to coordinate, time order wanted:**");
    assert!(
        ordered.contains(&format!(
            "and {v7} inserts against {v4} ([B-tree insert cost in SQLite]"
        )),
        "{ordered}"
    );
}

/// The SQLite functions' sentence ranks idkit's generators against the fastest peer by the
/// table's "above the statement alone" column, and counts those at or below it from that
/// column (it once said 7 of 7 by another column, where the table put 4 of 7).
#[test]
fn the_sqlite_functions_sentence_ranks_by_its_tables_column() {
    let report = std::fs::read_to_string(reports().join("REPORT.md")).unwrap();
    let (header, rows) = read_csv(&reports().join("data").join("sqlite_functions.csv"));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (generator, source, stored, above) = (
        at("generator"),
        at("source"),
        at("stored_as"),
        at("ns_per_id_above_statement"),
    );
    let rows: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| !(r[source] == "SQLite" && r[stored] == "INTEGER"))
        .map(|r| {
            (
                r[generator].trim_matches('"').to_owned(),
                r[source].clone(),
                num(&r[above]),
            )
        })
        .collect();
    let by_cost = |a: &&(String, String, f64), b: &&(String, String, f64)| a.2.total_cmp(&b.2);
    let (idkit, peers): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.1 == "idkit");
    let fastest = peers.iter().copied().min_by(by_cost).unwrap();
    let cheapest = idkit.iter().copied().min_by(by_cost).unwrap();
    let dearest = idkit.iter().copied().max_by(by_cost).unwrap();
    let at_or_below = idkit.iter().filter(|r| r.2 <= fastest.2).count();
    let sentence = format!(
        "The fastest peer is `{}` at {:.0} ns an id above the statement; idkit's generators \
         cost {:.0} (`{}`) to {:.0} ns (`{}`), {at_or_below} of {} at or below it.",
        fastest.0,
        fastest.2,
        cheapest.2,
        cheapest.0,
        dearest.2,
        dearest.0,
        idkit.len()
    );
    let said = line(&report, "The fastest peer is");
    assert!(said.starts_with(&sentence), "{said}\nwants: {sentence}");
}

/// The claims table's SQLite fill cell reads from its figures by the rule every engine's
/// fill verdict follows (`engine::report::fill_verdict`): "Holds" where v4's leaves are 45%
/// to 55% full, "Does not hold as stated" where fuller but below v7's, "Does not hold" where
/// as full or fuller; and each percentage is the table's.
#[test]
fn the_sqlite_fill_verdict_follows_from_its_figures() {
    let report = std::fs::read_to_string(reports().join("REPORT.md")).unwrap();
    let fill = |scheme: &str| {
        let keys = [
            ("scheme", scheme),
            ("storage", "blob_pk"),
            ("cache", "small"),
            ("commit_rows", "1000"),
        ];
        num(&cell("btree.csv", &keys, "leaf_fill"))
    };
    let (v7, v4) = (fill("uuid-v7"), fill("uuid-v4"));
    let verdict = if (0.45..=0.55).contains(&v4) {
        "Holds"
    } else if v4 < v7 {
        "Does not hold as stated"
    } else {
        "Does not hold"
    };
    let pct = |v: f64| format!("{:.1}%", v * 100.0);
    let row = line(
        &report,
        "| \"B-tree fill drops from about 67% to about 50%.\" |",
    );
    let sqlite = row.split(" | ").nth(1).unwrap();
    assert_eq!(
        sqlite,
        format!("{verdict}: fill {} for v7, {} for v4", pct(v7), pct(v4))
    );
}
