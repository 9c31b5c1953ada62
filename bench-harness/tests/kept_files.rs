//! An engine's data files are written from its results alone: reading back the kept
//! `reports/data/<engine>.json` and writing its files again gives, byte for byte, the files
//! the run that kept it wrote beside it (`scripts/report.sh` writes them together).

use std::path::Path;

use bench_harness::engine::{self, Engine};
use bench_harness::engines::mysql::InnoDb;
use bench_harness::engines::postgres::Postgres;

fn written_again<E: Engine>() -> usize {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/data");
    let kept: E::Results = engine::load(&data.join(format!("{}.json", E::NAME)))
        .unwrap()
        .unwrap_or_else(|| panic!("reports/data/{}.json is committed", E::NAME));
    let files = engine::files::<E>(&kept);
    for (name, body) in &files {
        let committed = std::fs::read_to_string(data.join(name)).unwrap();
        assert!(
            *body == committed,
            "{name}: written again from {}.json, it differs from reports/data/{name}",
            E::NAME
        );
    }
    files.len()
}

#[test]
fn postgres_files_are_written_again_the_same() {
    // Runs, curve, round trips, created_at, the generators made inside the server (kept
    // since the run that measured them), the order of ids several sessions made, the json
    // itself.
    assert_eq!(written_again::<Postgres>(), 7);
}

#[test]
fn innodb_files_are_written_again_the_same() {
    // Runs, curve, round trips, shapes, the json itself.
    assert_eq!(written_again::<InnoDb>(), 5);
}
