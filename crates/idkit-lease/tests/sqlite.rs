//! The SQLite backend: one file shared by the leases of one host.

mod common;

#[test]
fn sqlite_leases_pass_the_scenario() {
    let dir = std::env::temp_dir().join(common::unique("idkit-lease-sqlite"));
    let source = format!("sqlite://{}/ids.db?namespace=t&ttl_ms=1500", dir.display());
    common::scenario(&source);
    std::fs::remove_dir_all(&dir).ok();
}
