//! The shared checks on the definition, with its store in a scratch directory: the default
//! store, in idkit's state directory, is the user's own counter.

use idkit_core::definition::Options;

#[test]
fn definition_conforms() {
    let dir = idkit_testkit::Scratch::new("range-conformance");
    let store = dir.join("ids.sqlite3");
    let base = Options::default().option("range-store", store.to_string_lossy());
    idkit_testkit::check_definition_with(&idkit_range::definition::DEFINITION, 5_000, &base);
}
