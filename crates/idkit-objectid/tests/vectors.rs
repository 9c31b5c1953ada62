//! The BSON ObjectID specification's test plan, through the generator-free codec.

#[test]
fn spec() {
    idkit_testkit::vectors::run(
        &idkit_objectid::DEFINITION,
        env!("CARGO_MANIFEST_DIR"),
        "spec",
    );
}
