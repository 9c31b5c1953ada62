//! Runs the quick profile into a temporary directory and checks what it wrote: every scheme
//! of the registry in every CSV, valid PNG and SVG charts, sane structural numbers. No
//! timing is asserted.

use std::collections::BTreeSet;
use std::path::Path;

use bench_harness::{Config, Profile, run};

mod common;

use common::{TempDir, read_csv};

fn column<'a>(header: &[String], rows: &'a [Vec<String>], name: &str) -> Vec<&'a str> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    rows.iter().map(|r| r[i].as_str()).collect()
}

fn num(v: &str) -> f64 {
    v.parse().unwrap_or_else(|_| panic!("not a number: {v:?}"))
}

fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1000, 600));
    // Walk the chunks: each length fits, the last is IEND.
    let mut at = 8;
    let mut last = [0u8; 4];
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        last.copy_from_slice(&bytes[at + 4..at + 8]);
        at += 12 + len;
    }
    assert_eq!(
        at,
        bytes.len(),
        "{}: chunks overrun the file",
        path.display()
    );
    assert_eq!(&last, b"IEND");
}

fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("<svg "), "{}", path.display());
    assert!(text.trim_end().ends_with("</svg>"));
    assert!(text.contains("width=\"1000\" height=\"600\" viewBox=\"0 0 4000 2400\""));
    // Text is drawn as glyph outlines, so no element depends on an installed font.
    assert!(
        !text.contains("<text"),
        "{}: has <text> elements",
        path.display()
    );
    assert!(text.matches("<polygon").count() > 100);
    // Balanced elements: every opened tag is closed or self-closing.
    let opened = text.matches('<').count();
    let closed = text.matches("/>").count() + 2 * text.matches("</").count();
    assert_eq!(opened, closed, "{}: unbalanced tags", path.display());
}

#[test]
fn quick_profile_writes_a_complete_report() {
    let dir = TempDir::new("idkit-quick");
    let config = Config::new(Profile::Quick, dir.0.clone());
    let summary = run(&config).unwrap();
    let params = Profile::Quick.params();
    let schemes: BTreeSet<&str> = idkit_all::registry::schemes()
        .iter()
        .map(|e| e.name())
        .collect();
    assert_eq!(summary.schemes, schemes.len());

    for file in [
        "generation.csv",
        "btree.csv",
        "btree_curve.csv",
        "properties.csv",
    ] {
        let (header, rows) = read_csv(&dir.0.join("data").join(file));
        let seen: BTreeSet<&str> = column(&header, &rows, "scheme").into_iter().collect();
        let mut expected = schemes.clone();
        if file == "properties.csv" {
            // uuid-v7 by RFC 9562's method 3 has a row of its own there.
            expected.insert(bench_harness::generation::SUB_MS.0);
        }
        assert_eq!(seen, expected, "{file}");
    }

    let (h, rows) = read_csv(&dir.0.join("data/generation.csv"));
    assert_eq!(
        h.join(","),
        "scheme,variant,threads,ns_per_id,ids_per_sec,cap_ids_per_sec"
    );
    assert_eq!(rows.len(), summary.generation_rows);
    for scheme in &schemes {
        for threads in params.threads {
            assert!(
                rows.iter()
                    .any(|r| r[0] == *scheme && r[1] == "shared" && r[2] == threads.to_string()),
                "{scheme} shared {threads}"
            );
        }
    }
    assert!(column(&h, &rows, "ns_per_id").iter().all(|v| num(v) > 0.0));

    let (h, rows) = read_csv(&dir.0.join("data/btree.csv"));
    assert!(h.join(",").starts_with(
        "scheme,storage,cache,commit_rows,rows,seconds,rows_per_sec,file_bytes,bytes_per_row,\
         leaf_pages,leaf_fill,depth,pages_written,cache_misses"
    ));
    assert_eq!(rows.len(), summary.btree_runs);
    assert_eq!(rows.len(), schemes.len() * 6);
    for row in &rows {
        let get = |name: &str| num(row[h.iter().position(|c| c == name).unwrap()].as_str());
        assert_eq!(get("rows"), params.btree_rows as f64, "{row:?}");
        let fill = get("leaf_fill");
        assert!(fill > 0.0 && fill <= 1.0, "{row:?}");
        assert!(get("depth") >= 1.0, "{row:?}");
        assert!(get("leaf_pages") >= 1.0, "{row:?}");
        assert!(get("pages_written") >= get("leaf_pages"), "{row:?}");
        assert!(get("file_bytes") >= 4096.0 * get("leaf_pages"), "{row:?}");
        let commits = (params.btree_rows as f64 / get("commit_rows")).ceil();
        assert_eq!(get("commits"), commits, "{row:?}");
    }

    let (h, rows) = read_csv(&dir.0.join("data/btree_curve.csv"));
    // Each run's curve ends at the full table.
    let ends = column(&h, &rows, "rows_so_far")
        .into_iter()
        .filter(|v| num(v) == params.btree_rows as f64)
        .count();
    assert_eq!(ends, summary.btree_runs);

    // Collision odds: one row per scheme that publishes random bits, each rate positive,
    // finer ticks or fewer bits giving lower rates as the birthday bound says.
    let (h, rows) = read_csv(&dir.0.join("data/collisions.csv"));
    let with_bits: BTreeSet<&str> = idkit_all::registry::schemes()
        .iter()
        .filter(|e| e.info().random_bits > 0)
        .map(|e| e.name())
        .collect();
    let seen: BTreeSet<&str> = column(&h, &rows, "scheme").into_iter().collect();
    assert_eq!(seen, with_bits);
    let per_sec = |scheme: &str| {
        num(column(&h, &rows, "ids_per_sec")[rows.iter().position(|r| r[0] == scheme).unwrap()])
    };
    assert!(
        per_sec("ulid") > per_sec("uuid-v7"),
        "80 bits outlast 73 in the same tick"
    );
    assert!(
        rows.iter()
            .all(|r| num(&r[h.iter().position(|c| c == "ids_per_sec").unwrap()]) > 0.0)
    );

    let (h, rows) = read_csv(&dir.0.join("data/properties.csv"));
    for row in &rows {
        let get = |name: &str| row[h.iter().position(|c| c == name).unwrap()].as_str();
        let inverted = num(get("inverted_pair_fraction"));
        assert!((0.0..=1.0).contains(&inverted), "{row:?}");
        assert_eq!(
            num(get("order_ids")),
            (params.order_generators * params.order_ids) as f64
        );
        let coordinated = get("collision_setup") != "independent";
        // Distinct identities never collide (mastodon has no identity to distinguish them).
        if coordinated {
            assert_eq!(get("unique_duplicates"), "0", "{row:?}");
        }
    }
    let prop = |scheme: &str, col: &str| {
        let row = rows.iter().find(|r| r[0] == scheme).unwrap();
        row[h.iter().position(|c| c == col).unwrap()].clone()
    };
    assert_eq!(prop("uuid-v4", "bytes"), "16");
    assert_eq!(prop("uuid-v4", "string_len_max"), "36");
    assert_eq!(prop("ulid", "string_len_max"), "26");
    assert_eq!(prop("ksuid", "bytes"), "20");
    assert_eq!(prop("snowflake-twitter", "bytes"), "8");

    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("data/run.json")).unwrap())
            .unwrap();
    for key in [
        "machine",
        "profile",
        "git_revision",
        "toolchain",
        "date",
        "command",
    ] {
        assert!(run_json.get(key).is_some(), "run.json lacks {key}");
    }
    assert_eq!(run_json["profile"], "quick");

    let charts = dir.0.join("charts");
    let mut stems = 0;
    for entry in std::fs::read_dir(&charts).unwrap() {
        let path = entry.unwrap().path();
        match path.extension().and_then(|e| e.to_str()) {
            Some("png") => {
                check_png(&path);
                check_svg(&path.with_extension("svg"));
                stems += 1;
            }
            Some("svg") => assert!(path.with_extension("png").exists()),
            _ => panic!("unexpected file {}", path.display()),
        }
    }
    assert_eq!(stems, 5);

    let report = std::fs::read_to_string(dir.0.join("REPORT.md")).unwrap();
    for needle in [
        "## Environment",
        "## Method",
        "## Generation speed",
        "## Decision guide",
        "## Collision odds (computed)",
        "tested",
        // Every engine of the list, in its order: the opening sentence, the claims table's
        // header and count, and the columns of the engines without a server or kept figures.
        "as B-tree keys in SQLite, PostgreSQL and InnoDB (MySQL, MariaDB).",
        "16-byte keys in three engines",
        "| claim | SQLite | PostgreSQL | InnoDB (MySQL, MariaDB) |\n|---|---|---|---|\n",
        " | not measured (`scripts/report.sh --postgres`) | not measured (`scripts/report.sh --mysql`) |\n",
        // Their sections say how to measure them.
        "## B-tree insert cost in PostgreSQL\n\nNot measured: `scripts/report.sh --postgres` \
         starts two throwaway servers and adds these runs.\n\n",
        "## B-tree insert cost in InnoDB (MySQL, MariaDB)\n\nNot measured: `scripts/report.sh \
         --mysql` starts two throwaway MariaDB servers and adds these runs.\n\n",
    ] {
        assert!(report.contains(needle), "REPORT.md lacks {needle}");
    }
    for scheme in &schemes {
        assert!(
            report.contains(&format!("`{scheme}`")),
            "REPORT.md lacks {scheme}"
        );
    }
    for stem in [
        "generation_ns_per_id",
        "generation_threads",
        "btree_insert_curve",
        "btree_size_fill",
        "btree_pages_per_commit",
    ] {
        assert!(
            report.contains(&format!("charts/{stem}.png")),
            "REPORT.md lacks {stem}"
        );
    }
    // The scratch databases are gone.
    let leftovers: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".btree-work"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn servers_for_an_unknown_engine_are_refused_before_anything_runs() {
    let dir = TempDir::new("idkit-unknown-engine");
    let mut config = Config::new(Profile::Quick, dir.0.clone());
    config
        .servers
        .insert("postgresql".into(), vec!["postgres://db/x".into()]);
    match run(&config) {
        Err(bench_harness::Error::UnknownEngine { name, known }) => {
            assert_eq!(name, "postgresql");
            assert_eq!(known, ["postgres", "mysql"]);
        }
        other => panic!("expected UnknownEngine, got {other:?}"),
    }
    // Nothing was measured or written.
    assert!(!dir.0.join("REPORT.md").exists());
}
