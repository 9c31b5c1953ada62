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
