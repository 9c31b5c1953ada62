//! Every scheme by its stable name, with short aliases: a list of the definitions each
//! scheme crate exports ([`SchemeDef`]). The CLI, the service and the harness find schemes
//! only here; adding a scheme to all three is one line in [`ENTRIES`].

pub use idkit_core::definition::{
    BuildError, BuildErrorKind, IdentityField, OptionSpec, Options, Scheme, SchemeDef,
};

/// A registered scheme: its definition.
pub type Entry = dyn SchemeDef;

/// The schemes compiled in, in the order listings show them.
pub static ENTRIES: &[&Entry] = &[
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::TWITTER,
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::DISCORD,
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::INSTAGRAM,
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::SONYFLAKE,
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::MASTODON,
    #[cfg(feature = "snowflake")]
    &idkit_snowflake::definition::BOUNDARY,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V4,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V7,
    #[cfg(feature = "ulid")]
    &idkit_ulid::DEFINITION,
    #[cfg(feature = "ksuid")]
    &idkit_ksuid::DEFINITION,
    #[cfg(feature = "range")]
    &idkit_range::definition::DEFINITION,
    &crate::baseline::DEFINITION,
    #[cfg(feature = "tsid")]
    &idkit_tsid::DEFINITION,
    #[cfg(feature = "objectid")]
    &idkit_objectid::DEFINITION,
    #[cfg(feature = "typeid")]
    &idkit_typeid::DEFINITION,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V6,
];

/// More schemes that are read, decoded and found by name, but not measured by the harness
/// nor served unless named: the UUID versions idkit does not generate, whose `build` says
/// how their ids are made ([`BuildErrorKind::NoGenerator`]).
pub static MORE: &[&Entry] = &[
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V1,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V3,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V5,
    #[cfg(feature = "uuid")]
    &idkit_uuid::definition::UUID_V8,
];

/// The schemes compiled in that the harness measures and the service serves by default
/// ([`ENTRIES`]).
pub fn schemes() -> &'static [&'static Entry] {
    ENTRIES
}

/// Every scheme compiled in, [`ENTRIES`] then [`MORE`]: what `idkit schemes` lists and
/// `idkit inspect` tries.
pub fn all() -> impl Iterator<Item = &'static Entry> {
    ENTRIES.iter().chain(MORE).copied()
}

/// The scheme with this stable name or alias (ASCII case-insensitive), of [`all`].
///
/// # Errors
///
/// [`BuildErrorKind::UnknownScheme`] listing the stable names.
pub fn find(name: &str) -> Result<&'static Entry, BuildError> {
    all().find(|e| e.is_called(name)).ok_or_else(|| {
        let known: Vec<&str> = all().map(|e| e.name()).collect();
        BuildError::unknown_scheme(name, &known)
    })
}

/// Every identity field any registered scheme takes, once each by name, with the schemes
/// that take it: what the command line turns into flags and the service into
/// configuration keys.
pub fn identity_fields() -> Vec<(IdentityField, Vec<&'static str>)> {
    by_name(|e| e.identity(), |f| f.name)
}

/// Every option any registered scheme takes, once each by name, with the schemes that take
/// it.
pub fn options() -> Vec<(OptionSpec, Vec<&'static str>)> {
    by_name(|e| e.options().to_vec(), |o| o.name)
}

/// The settings of every scheme, the first of each name kept, with the schemes that take it.
fn by_name<T>(
    settings: impl Fn(&Entry) -> Vec<T>,
    name: impl Fn(&T) -> &'static str,
) -> Vec<(T, Vec<&'static str>)> {
    let mut out: Vec<(T, Vec<&'static str>)> = Vec::new();
    for entry in ENTRIES {
        for setting in settings(*entry) {
            match out.iter_mut().find(|(s, _)| name(s) == name(&setting)) {
                Some((_, users)) => users.push(entry.name()),
                None => out.push((setting, vec![entry.name()])),
            }
        }
    }
    out
}
