//! Every scheme by its stable name, with short aliases: a list of the definitions each
//! scheme crate exports ([`SchemeDef`]). The CLI, the service and the harness find schemes
//! only here; adding a scheme to all three is one line in [`ENTRIES`].

pub use idkit_core::definition::{
    BuildError, BuildErrorKind, IdentityField, OptionSpec, Options, Scheme, SchemeDef,
};

/// A registered scheme: its definition.
pub type Entry = dyn SchemeDef;

/// A list of definitions, each behind the feature of the crate that defines it (none for
/// the ones in this crate).
macro_rules! entries {
    ($($($feature:literal)? => $entry:path,)*) => {
        &[$($(#[cfg(feature = $feature)])? &$entry,)*]
    };
}

/// The schemes compiled in, in the order listings show them.
pub static ENTRIES: &[&Entry] = entries![
    "snowflake" => idkit_snowflake::definition::TWITTER,
    "snowflake" => idkit_snowflake::definition::DISCORD,
    "snowflake" => idkit_snowflake::definition::INSTAGRAM,
    "snowflake" => idkit_snowflake::definition::SONYFLAKE,
    "snowflake" => idkit_snowflake::definition::MASTODON,
    "snowflake" => idkit_snowflake::definition::BOUNDARY,
    "uuid" => idkit_uuid::definition::UUID_V4,
    "uuid" => idkit_uuid::definition::UUID_V7,
    "ulid" => idkit_ulid::DEFINITION,
    "ksuid" => idkit_ksuid::DEFINITION,
    "range" => idkit_range::definition::DEFINITION,
    => crate::baseline::DEFINITION,
    "tsid" => idkit_tsid::DEFINITION,
    "objectid" => idkit_objectid::DEFINITION,
    "typeid" => idkit_typeid::DEFINITION,
    "uuid" => idkit_uuid::definition::UUID_V6,
];

/// More schemes that are read, decoded and found by name, but not measured by the harness
/// nor served unless named: the UUID versions idkit does not generate, whose `build` says
/// how their ids are made ([`BuildErrorKind::NoGenerator`]).
pub static MORE: &[&Entry] = entries![
    "uuid" => idkit_uuid::definition::UUID_V1,
    "uuid" => idkit_uuid::definition::UUID_V3,
    "uuid" => idkit_uuid::definition::UUID_V5,
    "uuid" => idkit_uuid::definition::UUID_V8,
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
/// [`BuildErrorKind::UnknownScheme`] listing the stable names (for `uuid`, which stands for
/// any UUID, the versions to name instead).
pub fn find(name: &str) -> Result<&'static Entry, BuildError> {
    all().find(|e| e.is_called(name)).ok_or_else(|| {
        // `uuid` stands for any UUID where ids are read (`idkit convert`); a generator
        // needs its version.
        if name.eq_ignore_ascii_case("uuid") {
            return BuildError::new(
                BuildErrorKind::UnknownScheme,
                "uuid",
                "\"uuid\" names any UUID where ids are read (idkit convert); to make or \
                 decode ids, name the version: uuid-v7 (time-ordered), uuid-v4 (random), \
                 uuid-v6, or uuid-v1, -v3, -v5, -v8 to read",
            );
        }
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
