//! tsid-creator's own examples and validity rules, through the generator-free codec.

#[test]
fn tsid_creator() {
    idkit_testkit::vectors::run(
        &idkit_tsid::DEFINITION,
        env!("CARGO_MANIFEST_DIR"),
        "tsid_creator",
    );
}
