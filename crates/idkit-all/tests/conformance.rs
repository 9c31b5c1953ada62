//! The auto-increment baseline: the registry reads its ids but refuses to make them (a
//! counter in one process starts again at 1 after every restart), and the counter the
//! report measures passes the shared checks.

use idkit_all::baseline::{DEFINITION, REFUSAL, measured};
use idkit_all::registry::{BuildErrorKind, Options, SchemeDef};

#[test]
fn the_registry_refuses_to_make_auto_increment_ids_and_says_why() {
    let e = DEFINITION.build(&Options::default()).unwrap_err();
    assert_eq!(e.kind(), BuildErrorKind::NoGenerator);
    assert!(e.message().contains(REFUSAL), "{e}");
    assert!(REFUSAL.contains("range"));
    // Its ids are still read.
    let codec = DEFINITION.codec();
    assert_eq!(codec.info(), DEFINITION.info());
    let id = codec.parse_raw("42").unwrap();
    assert_eq!(codec.format_raw(&id).unwrap(), "42");
}

#[test]
fn the_measured_counter_conforms() {
    let counter = measured().unwrap();
    assert_eq!(counter.info(), DEFINITION.info());
    idkit_testkit::check_dyn(counter.as_ref(), 5_000);
}
