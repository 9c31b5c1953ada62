//! [`Scratch`]: a test's own directory, removed when the test is done with it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A new directory under the system's temp directory, named by a tag, the process and a
/// count, and removed with everything in it when dropped (also when the test panics), so
/// that a test run leaves nothing behind.
///
/// # Examples
///
/// ```
/// use idkit_testkit::Scratch;
///
/// let dir = Scratch::new("doc");
/// std::fs::write(dir.join("ids.db"), b"")?;
/// let path = dir.path().to_owned();
/// assert!(path.join("ids.db").exists());
/// drop(dir);
/// assert!(!path.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Makes the directory `idkit-<tag>-<process>-<count>`.
    ///
    /// # Panics
    ///
    /// When the directory cannot be made: the test cannot go on.
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("idkit-{tag}-{}-{n}", std::process::id()));
        // A directory of the same name left by an earlier process with this id goes first.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        Self(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` inside the directory.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
