//! The shared checks on each UUID version's registry definition.

idkit_testkit::conformance! {
    v4 => idkit_uuid::definition::UUID_V4,
    v7 => idkit_uuid::definition::UUID_V7,
}
