//! What several test files of the registry share.
#![allow(dead_code)] // each test file uses part of it

use idkit_all::registry::{BuildError, Entry, Options, Scheme};

/// Each of `entries` built as a user would build it, the range allocator with a store of its
/// own (a scratch directory, gone once every scheme is built: the store is read at build),
/// not the user's default one. A scheme idkit does not generate (a UUID version made from a
/// name) gives its build error.
pub fn build_each(
    entries: impl IntoIterator<Item = &'static Entry>,
    label: &str,
) -> Vec<(&'static Entry, Result<Scheme, BuildError>)> {
    let dir = idkit_testkit::Scratch::new(label);
    entries
        .into_iter()
        .map(|entry| {
            let mut options = Options::default();
            if entry.options().iter().any(|o| o.name == "range-store") {
                options.set_option("range-store", dir.join("ids.db").to_string_lossy());
            }
            // The baseline the registry refuses to make: its in-process counter.
            if entry.name() == "auto-increment" {
                return (entry, idkit_all::baseline::measured());
            }
            (entry, entry.build(&options))
        })
        .collect()
}

/// `n` ids of `scheme`.
pub fn made(scheme: &Scheme, n: usize) -> Vec<idkit_core::RawId> {
    let mut ids = vec![idkit_core::RawId::from_u64(0); n];
    scheme.fill_raw(&mut ids).unwrap();
    ids
}

/// Asserts that `answer` is the refusal of a scheme without time, naming `entry`.
pub fn refused_for_no_time<T: std::fmt::Debug>(
    entry: &Entry,
    answer: Result<T, idkit_core::ComposeError>,
) {
    let e = answer.unwrap_err();
    assert_eq!(
        e.kind(),
        idkit_core::ComposeErrorKind::NoTime,
        "{}",
        entry.name()
    );
    assert!(e.to_string().contains(entry.name()), "{e}");
}
