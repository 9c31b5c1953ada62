//! The shared checks on both definitions.

mod v4 {
    idkit_testkit::conformance!(idkit_uuid::definition::UUID_V4);
}
mod v7 {
    idkit_testkit::conformance!(idkit_uuid::definition::UUID_V7);
}
