//! Where idkit keeps what must outlive a process and a reboot: the state files of static
//! worker ids and the `range` scheme's default store.
//!
//! Not the temporary directory: the Filesystem Hierarchy Standard (3.0, section 3.18) lets
//! a system empty `/tmp` at every boot, and many do (a `tmpfs`, or systemd-tmpfiles), and
//! a range counter or a worker id's high-water mark that starts again reissues ids.

use std::path::PathBuf;

/// The platform's directory for idkit's state: `$XDG_STATE_HOME/idkit` (an absolute path), else
/// `~/.local/state/idkit` on Unix; `%LOCALAPPDATA%\idkit` on Windows;
/// `~/Library/Application Support/idkit` on macOS. `IDKIT_STATE_DIR` overrides it; without
/// a home directory it is `idkit` in the temporary directory (see [`lasting_state_dir`]).
///
/// ```
/// let dir = idkit_core::state::state_dir();
/// assert!(dir.ends_with("idkit") || std::env::var_os("IDKIT_STATE_DIR").is_some());
/// ```
pub fn state_dir() -> PathBuf {
    lasting_state_dir().unwrap_or_else(|| std::env::temp_dir().join("idkit"))
}

/// [`state_dir`] when it outlives a reboot: `None` when neither `IDKIT_STATE_DIR` nor the
/// platform's variables (`XDG_STATE_HOME`, `HOME`, `LOCALAPPDATA`) name a place for it, as
/// for a system service started without a home directory, and [`state_dir`] falls back to
/// the temporary directory.
///
/// ```
/// if std::env::var_os("IDKIT_STATE_DIR").is_some_and(|d| !d.is_empty()) {
///     assert_eq!(idkit_core::state::lasting_state_dir(), Some(idkit_core::state::state_dir()));
/// }
/// ```
pub fn lasting_state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("IDKIT_STATE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = || {
        std::env::var_os("HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library").join("Application Support"))
    } else {
        // The XDG Base Directory Specification (0.8): a relative path in these variables is
        // invalid and ignored.
        std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .or_else(|| home().map(|h| h.join(".local").join("state")))
    };
    base.map(|b| b.join("idkit"))
}
