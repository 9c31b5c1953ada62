//! The shared checks on every preset's registry definition.

idkit_testkit::conformance! {
    twitter => idkit_snowflake::definition::TWITTER,
    discord => idkit_snowflake::definition::DISCORD,
    instagram => idkit_snowflake::definition::INSTAGRAM,
    sonyflake => idkit_snowflake::definition::SONYFLAKE,
    mastodon => idkit_snowflake::definition::MASTODON,
    boundary => idkit_snowflake::definition::BOUNDARY,
}
