//! The shared checks on every preset's registry definition.

mod twitter {
    idkit_testkit::conformance!(idkit_snowflake::definition::TWITTER);
}
mod discord {
    idkit_testkit::conformance!(idkit_snowflake::definition::DISCORD);
}
mod instagram {
    idkit_testkit::conformance!(idkit_snowflake::definition::INSTAGRAM);
}
mod sonyflake {
    idkit_testkit::conformance!(idkit_snowflake::definition::SONYFLAKE);
}
mod mastodon {
    idkit_testkit::conformance!(idkit_snowflake::definition::MASTODON);
}
mod boundary {
    idkit_testkit::conformance!(idkit_snowflake::definition::BOUNDARY);
}
