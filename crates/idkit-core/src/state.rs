//! Where idkit keeps what must outlive a process and a reboot: the state files of static
//! worker ids and the `range` scheme's default store.
//!
//! Not the temporary directory: the Filesystem Hierarchy Standard (3.0, section 3.18) lets
//! a system empty `/tmp` at every boot, and many do (a `tmpfs`, or systemd-tmpfiles), and
//! a range counter or a worker id's high-water mark that starts again reissues ids.

use std::path::PathBuf;

/// The platform's directory for idkit's state: `$XDG_STATE_HOME/idkit`, else
/// `~/.local/state/idkit` on Unix; `%LOCALAPPDATA%\idkit` on Windows;
/// `~/Library/Application Support/idkit` on macOS. `IDKIT_STATE_DIR` overrides it; without
/// a home directory it is `idkit` in the temporary directory.
///
/// ```
/// let dir = idkit_core::state::state_dir();
/// assert!(dir.ends_with("idkit") || std::env::var_os("IDKIT_STATE_DIR").is_some());
/// ```
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("IDKIT_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let base = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(PathBuf::from)
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library").join("Application Support"))
    } else {
        std::env::var_os("XDG_STATE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| home().map(|h| h.join(".local").join("state")))
    };
    base.unwrap_or_else(std::env::temp_dir).join("idkit")
}
