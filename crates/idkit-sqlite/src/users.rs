//! Which processes use a database's state file: each process that maps it holds a read
//! lock on the database file for as long as it runs, and a process that finds the state
//! file missing (or a copy in its place) asks whether any other process holds one before it
//! makes the file again from nothing (or adopts the copy).
//!
//! On Linux the lock is an open file description lock (`F_OFD_SETLK`) on one byte far past
//! the bytes SQLite locks, and the question is `F_OFD_GETLK`: it takes nothing and drops
//! nothing, so asking never hides a holder from another process asking at the same moment
//! (converting a `flock` from shared to exclusive drops the shared lock first), and a lock
//! of this kind survives SQLite closing its own descriptors of the file (a POSIX lock would
//! not). Elsewhere it is a `flock`, asked by trying to convert it, which has that race.
//!
//! A child made by `fork` shares its parent's open file, and with it the lock: neither
//! would see the other. The child opens the file again at its first use ([`Users::file`])
//! and takes its own lock if its parent held one. No descriptor of the database is ever
//! closed here: closing any descriptor of a file drops every POSIX lock the process holds
//! on it, SQLite's among them (and a number inherited may since name another file). The
//! inherited one stays open, so that its lock, the parent's too, lasts while the child
//! does: other processes see a holder a while longer, which is the safe way to be wrong.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Error;

/// The byte locked (Linux): far past SQLite's (at 1 GiB) and any database's size.
#[cfg(target_os = "linux")]
const BYTE: libc::off_t = 1 << 62;

/// A database file open in this process for its users' lock.
pub(crate) struct Users {
    /// The database file (canonical).
    path: PathBuf,
    /// The process that opened it, the descriptor, and whether this process's lock is
    /// taken on it: another process is a child made by `fork` (whose descriptor is its
    /// parent's open file).
    open: Mutex<(u32, libc::c_int, bool)>,
    /// Whether this process holds the lock: it maps the database's state file.
    holding: AtomicBool,
}

/// The databases this process opened for their users' lock, opened once each and never
/// closed (but by a child made by fork, for its own).
static USERS: Mutex<Option<HashMap<PathBuf, &'static Users>>> = Mutex::new(None);

impl Users {
    /// The users of the database file `database`, opened the first time.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the database file cannot be found or opened: the generators fail
    /// closed rather than make a state file without knowing who else uses one.
    pub(crate) fn of(database: &Path) -> Result<&'static Users, Error> {
        let key = std::fs::canonicalize(database).map_err(|e| Error::io(database, "find", e))?;
        let mut users = USERS.lock().unwrap_or_else(|e| e.into_inner());
        let users = users.get_or_insert_with(HashMap::new);
        if let Some(found) = users.get(&key) {
            return Ok(found);
        }
        let fd = open(&key)?;
        let found: &'static Users = Box::leak(Box::new(Users {
            path: key.clone(),
            open: Mutex::new((std::process::id(), fd, false)),
            holding: AtomicBool::new(false),
        }));
        users.insert(key, found);
        Ok(found)
    }

    /// This process's descriptor of the database file: in a child made by fork, opened
    /// again (locked if the parent held the lock); the inherited one is left open.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be opened or locked again.
    fn file(&self) -> Result<libc::c_int, Error> {
        let pid = std::process::id();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.0 != pid {
            // Opened once per process, kept even when the lock fails below (tried again at
            // the next call, not opened again).
            *open = (pid, open_file(&self.path)?, false);
        }
        if self.holding.load(Ordering::Acquire) && !open.2 {
            lock_read(open.1).map_err(|e| Error::io(&self.path, "lock (shared)", e))?;
            open.2 = true;
        }
        Ok(open.1)
    }

    /// Holds the lock from now on: this process maps the database's state file.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be taken.
    pub(crate) fn hold(&self) -> Result<(), Error> {
        self.holding.store(true, Ordering::Release);
        // Taken by `file`, and tried again at each call until it is.
        self.file().map(|_| ())
    }

    /// Whether no other process holds the lock (this one's own lock aside).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the lock cannot be asked about.
    pub(crate) fn alone(&self) -> Result<bool, Error> {
        let fd = self.file()?;
        others_hold(fd, self.holding.load(Ordering::Acquire))
            .map(|others| !others)
            .map_err(|e| Error::io(&self.path, "lock", e))
    }

    /// In a child made by fork: its own descriptor and lock now, so that its parent sees it
    /// (called at its first id).
    pub(crate) fn after_fork(&self) -> Result<(), Error> {
        self.file().map(|_| ())
    }
}

/// `path` opened for reading (close-on-exec).
#[cfg(unix)]
fn open(path: &Path) -> Result<libc::c_int, Error> {
    use std::os::fd::IntoRawFd;
    std::fs::File::open(path)
        .map(IntoRawFd::into_raw_fd)
        .map_err(|e| Error::io(path, "open", e))
}

#[cfg(not(unix))]
fn open(path: &Path) -> Result<libc::c_int, Error> {
    Err(Error::State(format!(
        "{}: a shared state file needs a Unix system",
        path.display()
    )))
}

#[cfg(not(unix))]
fn lock_read(_fd: libc::c_int) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(not(unix))]
fn others_hold(_fd: libc::c_int, _holding: bool) -> std::io::Result<bool> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// `path` opened (in a child made by fork), never closed.
fn open_file(path: &Path) -> Result<libc::c_int, Error> {
    open(path)
}

#[cfg(target_os = "linux")]
fn lock_at(kind: libc::c_int) -> libc::flock {
    // SAFETY: a flock is plain integers, for which zero is valid (l_pid must be 0).
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = BYTE;
    lock.l_len = 1;
    lock
}

/// The read lock on `fd`'s open file, not waited for: only another program's write lock
/// over the byte (a lock on the whole file) stands in its way, and that is an error that
/// says so rather than a wait with no end.
#[cfg(target_os = "linux")]
fn lock_read(fd: libc::c_int) -> std::io::Result<()> {
    let lock = lock_at(libc::F_RDLCK);
    // SAFETY: a lock request on a descriptor this process owns.
    if unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &lock) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) {
        return Err(std::io::Error::other(
            "another program holds a write lock over the whole database file",
        ));
    }
    Err(e)
}

/// Whether another open file than `fd`'s holds the lock: asked, nothing taken.
#[cfg(target_os = "linux")]
fn others_hold(fd: libc::c_int, _holding: bool) -> std::io::Result<bool> {
    let mut lock = lock_at(libc::F_WRLCK);
    // SAFETY: a lock query on a descriptor this process owns, into a flock of its own.
    if unsafe { libc::fcntl(fd, libc::F_OFD_GETLK, &mut lock) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(i32::from(lock.l_type) != libc::F_UNLCK)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn lock_read(fd: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a lock request on a descriptor this process owns.
    if unsafe { libc::flock(fd, libc::LOCK_SH) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Tried by converting the lock to exclusive and back: a moment without it, in which
/// another process asking may find itself alone.
#[cfg(all(unix, not(target_os = "linux")))]
fn others_hold(fd: libc::c_int, holding: bool) -> std::io::Result<bool> {
    // SAFETY: lock requests on a descriptor this process owns.
    let alone = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0;
    unsafe {
        if holding {
            libc::flock(fd, libc::LOCK_SH);
        } else {
            libc::flock(fd, libc::LOCK_UN);
        }
    }
    Ok(!alone)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A child made by fork shares its parent's open file of the database, and with it the
    /// lock: each would have taken the other for gone, and made the state file again from
    /// nothing under it. Each has a lock of its own, and sees the other's.
    #[test]
    fn a_child_made_by_fork_and_its_parent_see_each_other() {
        let dir = idkit_testkit::Scratch::new("sqlite-users-fork");
        let db = dir.join("a.db");
        std::fs::write(&db, b"").unwrap();
        let users = Users::of(&db).unwrap();
        users.hold().unwrap();
        assert!(users.alone().unwrap(), "alone before the fork");
        let mut pipe = [0; 2];
        // SAFETY: a pipe into an array of two descriptors.
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: the child makes a few system calls, says what it saw and waits to be
        // killed; it never returns into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let saw = match users.after_fork().and_then(|()| users.alone()) {
                Ok(false) => b'p',
                Ok(true) => b'a',
                Err(_) => b'e',
            };
            // SAFETY: a byte into the pipe, then sleep until killed.
            unsafe {
                libc::write(pipe[1], std::ptr::from_ref(&saw).cast(), 1);
                loop {
                    libc::pause();
                }
            }
        }
        let mut saw = 0u8;
        // SAFETY: a byte from the pipe the child writes.
        assert_eq!(
            unsafe { libc::read(pipe[0], std::ptr::from_mut(&mut saw).cast(), 1) },
            1
        );
        let parent_alone = users.alone().unwrap();
        // SAFETY: the child made above.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        assert_eq!(saw, b'p', "the child saw its parent's lock");
        assert!(!parent_alone, "the parent saw its child's lock");
        assert!(users.alone().unwrap(), "alone again once the child ended");
    }

    /// Asking whether others hold the lock drops nothing: two holders asking all the time
    /// never let a third process find itself alone (a `flock` converted to exclusive and
    /// back is dropped for a moment).
    #[test]
    fn asking_never_hides_a_holder() {
        let dir = idkit_testkit::Scratch::new("sqlite-users-asking");
        let db = dir.join("a.db");
        std::fs::write(&db, b"").unwrap();
        let users = Users::of(&db).unwrap();
        let mut children = Vec::new();
        for _ in 0..2 {
            // SAFETY: the child holds the lock and asks until killed.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0);
            if pid == 0 {
                let _ = users.after_fork().and_then(|()| users.hold());
                loop {
                    let _ = users.alone();
                }
            }
            children.push(pid);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        // The children take a moment to hold.
        while users.alone().unwrap() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        let mut found_alone = 0;
        for _ in 0..20_000 {
            if users.alone().unwrap() {
                found_alone += 1;
            }
        }
        for pid in children {
            // SAFETY: the children made above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        assert_eq!(found_alone, 0, "times a holder was hidden");
    }
}
