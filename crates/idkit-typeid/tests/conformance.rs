//! The shared checks on the definition.

idkit_testkit::conformance!(idkit_typeid::DEFINITION);
