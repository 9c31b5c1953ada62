//! The TypeID specification's own valid and invalid cases, through the generator-free codec.

#[test]
fn spec() {
    idkit_testkit::vectors::run(
        &idkit_typeid::DEFINITION,
        env!("CARGO_MANIFEST_DIR"),
        "spec",
    );
}
