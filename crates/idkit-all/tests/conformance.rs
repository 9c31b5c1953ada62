//! The shared checks on the auto-increment baseline's definition.

idkit_testkit::conformance!(idkit_all::baseline::DEFINITION);
