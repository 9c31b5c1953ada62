//! The shared checks on the definition (its store: the default file in the temporary
//! directory).

idkit_testkit::conformance!(idkit_range::definition::DEFINITION);
