//! libfaketime, for tests that set a process's clock back (the lease drills, the PostgreSQL
//! extension's restarts): Debian's `faketime` package, which scripts/test.sh installs.

/// The path of Debian's `libfaketime.so.1`, to preload into a process under test.
///
/// # Panics
///
/// When the library is not installed: the tests that need it fail rather than skip.
pub fn libfaketime() -> String {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists());
    found
        .unwrap_or_else(|| {
            panic!("libfaketime is not installed: run scripts/test.sh, which installs faketime")
        })
        .display()
        .to_string()
}
