//! The registry: every scheme by name and alias, each passing the shared conformance checks
//! through its object-safe form.

mod common;

use idkit_all::registry::{BuildErrorKind, Options, find, schemes};

const NAMES: [&str; 12] = [
    "snowflake-twitter",
    "snowflake-discord",
    "snowflake-instagram",
    "sonyflake",
    "snowflake-mastodon",
    "flake-boundary",
    "uuid-v4",
    "uuid-v7",
    "ulid",
    "ksuid",
    "range",
    "auto-increment",
];

#[test]
fn every_scheme_is_registered_and_conforms() {
    let names: Vec<_> = schemes().iter().map(|e| e.name()).collect();
    // The established schemes come first, in this order; schemes added later follow.
    assert_eq!(&names[..NAMES.len()], NAMES);
    // Every name and alias finds exactly one scheme.
    let mut seen = std::collections::HashSet::new();
    for entry in schemes() {
        for name in std::iter::once(entry.name()).chain(entry.aliases().iter().copied()) {
            assert!(
                seen.insert(name.to_ascii_lowercase()),
                "{name} is used twice"
            );
        }
    }
    for (entry, scheme) in common::build_each(schemes().iter().copied(), "registry-range") {
        let scheme = scheme.unwrap();
        assert_eq!(scheme.info().name, entry.name());
        assert_eq!(entry.info(), scheme.info());
        idkit_testkit::check_dyn(scheme.as_ref(), 5_000);
    }
}

#[test]
fn aliases_and_case() {
    for (alias, name) in [
        ("twitter", "snowflake-twitter"),
        ("Discord", "snowflake-discord"),
        ("sony", "sonyflake"),
        ("flake", "flake-boundary"),
        ("v7", "uuid-v7"),
        ("ULID", "ulid"),
        ("serial", "auto-increment"),
    ] {
        assert_eq!(find(alias).unwrap().name(), name);
    }
    let err = find("snowflak").unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::UnknownScheme);
    assert!(
        err.to_string()
            .starts_with("unknown scheme \"snowflak\": expected one of snowflake-twitter, ")
    );
}

#[test]
fn options_are_checked_against_the_scheme() {
    let twitter = find("twitter").unwrap();
    let scheme = twitter
        .build(&Options::default().field("worker", 3).field("datacenter", 2))
        .unwrap();
    let id = scheme.next_raw().unwrap();
    let decoded = scheme.decode_raw(&id).unwrap();
    assert_eq!(decoded.field("worker").unwrap().to_string(), "3");
    assert_eq!(decoded.field("datacenter").unwrap().to_string(), "2");
    assert_eq!(
        twitter
            .build(&Options::default().field("worker", 99))
            .unwrap_err()
            .to_string(),
        "snowflake-twitter: field out of range: worker must be at most 31, found 99"
    );
    assert_eq!(
        find("uuid-v4")
            .unwrap()
            .build(&Options::default().field("worker", 1))
            .unwrap_err()
            .to_string(),
        "uuid-v4: unknown field \"worker\": this scheme has no fields to set"
    );
}

#[test]
fn identities_spread_over_the_identity_fields() {
    let twitter = find("twitter").unwrap();
    assert_eq!(
        twitter.identity_fields(),
        vec![("datacenter", 5), ("worker", 5)]
    );
    let scheme = twitter.build(&twitter.with_identity(33).unwrap()).unwrap();
    let decoded = scheme.decode_raw(&scheme.next_raw().unwrap()).unwrap();
    assert_eq!(decoded.field("datacenter").unwrap().to_string(), "1");
    assert_eq!(decoded.field("worker").unwrap().to_string(), "1");
    // 10 identity bits: 1023 is the last identity, 1024 does not fit.
    assert!(twitter.with_identity(1023).is_ok());
    assert_eq!(
        twitter.with_identity(1024).unwrap_err().kind(),
        BuildErrorKind::InvalidValue
    );
    assert_eq!(
        find("sonyflake").unwrap().identity_fields(),
        vec![("machine", 16)]
    );
    let ulid = find("ulid").unwrap();
    assert!(ulid.identity_fields().is_empty());
    assert!(ulid.with_identity(0).unwrap().fields.is_empty());
    assert!(ulid.with_identity(1).is_err());
}
