//! The SQLite backend: one file shared by the leases of one host.

mod common;

#[test]
fn sqlite_leases_pass_the_scenario() {
    let dir = std::env::temp_dir().join(common::unique("idkit-lease-sqlite"));
    std::fs::create_dir_all(&dir).unwrap();
    let source = format!("sqlite://{}/ids.db?namespace=t&ttl_ms=1500", dir.display());
    common::scenario(&source);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_missing_directory_is_an_error_naming_the_path_not_a_new_store() {
    let dir = std::env::temp_dir()
        .join(common::unique("idkit-lease-missing"))
        .join("typo");
    let source =
        idkit_lease::IdentitySource::parse(&format!("sqlite://{}/ids.db", dir.display())).unwrap();
    let err = idkit_lease::Lease::acquire(&source, "snowflake-twitter", 4).unwrap_err();
    assert_eq!(err.kind(), idkit_lease::LeaseErrorKind::Invalid, "{err}");
    let message = err.to_string();
    assert!(message.contains(&dir.display().to_string()), "{message}");
    assert!(message.contains("does not exist"), "{message}");
    assert!(!dir.exists(), "the directory was created");
    assert!(!dir.parent().unwrap().exists());
}

/// Eight holders that open one new file at the same moment (processes of a host starting
/// together): SQLite refuses some of them at once while another turns the file to WAL, and
/// each must wait its turn rather than fail. Every round a new file; all eight get leases,
/// and distinct worker ids.
#[test]
fn holders_opening_a_new_file_together_all_get_distinct_worker_ids() {
    let dir = std::env::temp_dir().join(common::unique("idkit-lease-together"));
    std::fs::create_dir_all(&dir).unwrap();
    for round in 0..10 {
        let source = idkit_lease::IdentitySource::parse(&format!(
            "sqlite://{}/ids-{round}.db?namespace=t",
            dir.display()
        ))
        .unwrap();
        let start = std::sync::Barrier::new(8);
        let leases: Vec<idkit_lease::Lease> = std::thread::scope(|s| {
            let holders: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        idkit_lease::Lease::acquire(&source, "snowflake-twitter", 16)
                    })
                })
                .collect();
            holders
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap()
                        .unwrap_or_else(|e| panic!("round {round}: {e}"))
                })
                .collect()
        });
        let workers: std::collections::HashSet<u64> =
            leases.iter().map(idkit_lease::Lease::worker).collect();
        assert_eq!(workers.len(), 8, "round {round}: {workers:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
