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
//! The child itself would see that lock as another user's for as long as it runs, once
//! its parent ended, and wait without end to be alone; so a process asking whether it is
//! alone lets go of the lock on each inherited open file whose opener has ended (Linux).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use idkit_core::random::{RandomSource, ThreadRandom};

use crate::Error;
use crate::leaked::{Linked, List};

/// The byte locked (Linux): far past SQLite's (at 1 GiB) and any database's size.
#[cfg(target_os = "linux")]
const BYTE: libc::off_t = 1 << 62;

/// A database file open in this process for its users' lock.
pub(crate) struct Users {
    /// The database file (canonical).
    path: PathBuf,
    /// The same, for the fork handler, which may not allocate.
    c_path: std::ffi::CString,
    /// The database file's device and inode: what an inherited descriptor must still name
    /// for its lock to be let go of.
    id: (u64, u64),
    /// The process whose descriptor this is, and the descriptor (`pid << 32 | fd`): another
    /// process is a child made by `fork` whose handler could not open the file again (then
    /// [`Users::file`] does); process 0 is none.
    owner: AtomicU64,
    /// The process whose descriptor was last seen to be its own ([`Users::still_own`]):
    /// another one is a child made by fork, which checks before it uses it.
    verified: AtomicU32,
    /// The offset every descriptor opened here is moved to: a number only this crate's
    /// descriptors of the database have, which tells its own descriptor from another
    /// opened with the number later (SQLite's, or one a program opened after closing
    /// every descriptor it inherited); -1 where the file system refused it (then the
    /// device and inode alone tell).
    mark: i64,
    /// Whether this process's lock is taken on `fd`.
    locked: AtomicBool,
    /// Whether this process holds the lock: it maps the database's state file.
    holding: AtomicBool,
    /// The descriptors inherited through `fork`, each with the process that opened it
    /// (`pid << 32 | fd`, 0 for none): their locks stand for those processes alone, since
    /// every child takes its own lock as it is made ([`forked`]).
    inherited: [AtomicU64; INHERITED],
    /// The process id namespace this was opened in ([`pid_namespace`]).
    namespace: u64,
    /// Set in a child made by fork into another process id namespace: an opener's process
    /// id means nothing there, and no inherited lock is let go of.
    foreign: AtomicBool,
    /// One thread at a time opens or locks again outside the fork handler.
    slow: Mutex<()>,
    /// The next in [`ALL`].
    next: AtomicPtr<Users>,
}

/// Inherited descriptors remembered: a chain of forks deeper than this keeps the locks of
/// the ones past it for as long as it runs (the safe way to be wrong).
const INHERITED: usize = 16;

/// The databases this process opened for their users' lock, opened once each and never
/// closed (but by a child made by fork, for its own).
static USERS: Mutex<Option<HashMap<PathBuf, &'static Users>>> = Mutex::new(None);

/// The same, as a list the fork handler walks without a lock.
static ALL: List<Users> = List::new();

impl Linked for Users {
    fn next(&self) -> &AtomicPtr<Self> {
        &self.next
    }
}

impl Users {
    /// The users of the database file `database`, opened the first time.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the database file cannot be found or opened: the generators fail
    /// closed rather than make a state file without knowing who else uses one.
    pub(crate) fn of(database: &Path) -> Result<&'static Users, Error> {
        crate::state::on_fork();
        let key = std::fs::canonicalize(database).map_err(|e| Error::io(database, "find", e))?;
        let mut users = USERS.lock().unwrap_or_else(|e| e.into_inner());
        let users = users.get_or_insert_with(HashMap::new);
        if let Some(found) = users.get(&key) {
            return Ok(found);
        }
        let c_path = c_path(&key)?;
        let fd = open(&key)?;
        // Between 1 and 2 GiB, which every file system's files may reach (FAT's 4 GiB
        // included), and unlike any other descriptor's offset; -1 where it cannot be set.
        let drawn = ThreadRandom.u64().map_err(Error::Random)? & ((1 << 30) - 1);
        let mark = (1 << 30) | drawn as i64;
        let mark = if set_mark(fd, mark) { mark } else { -1 };
        let id = file_id(fd).map_err(|e| Error::io(&key, "read", e))?;
        let found: &'static Users = Box::leak(Box::new(Users {
            path: key.clone(),
            c_path,
            id,
            owner: AtomicU64::new(pack(std::process::id(), fd)),
            verified: AtomicU32::new(std::process::id()),
            mark,
            locked: AtomicBool::new(false),
            holding: AtomicBool::new(false),
            inherited: std::array::from_fn(|_| AtomicU64::new(0)),
            namespace: pid_namespace(),
            foreign: AtomicBool::new(false),
            slow: Mutex::new(()),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }));
        ALL.push(found);
        users.insert(key, found);
        Ok(found)
    }

    /// The process whose descriptor this is, and the descriptor (one word, so that a
    /// fork between two stores never pairs one process with another's descriptor).
    fn owner(&self) -> (u32, libc::c_int) {
        unpack(self.owner.load(Ordering::Acquire))
    }

    /// This process's descriptor of the database file, locked if it holds the lock: in a
    /// child made by fork whose handler could not, opened again (the inherited one is left
    /// open).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be opened or locked again.
    fn file(&self) -> Result<libc::c_int, Error> {
        let pid = std::process::id();
        let holding = self.holding.load(Ordering::Acquire);
        let (owner, fd) = self.owner();
        if owner == pid
            && self.verified.load(Ordering::Acquire) == pid
            && (!holding || self.locked.load(Ordering::Acquire))
        {
            return Ok(fd);
        }
        let _one = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        let (owner, fd) = self.owner();
        if owner == pid && self.verified.load(Ordering::Acquire) != pid && !self.still_own(fd) {
            // A child's descriptor closed since the fork handler opened it (by a program
            // that closes every descriptor it inherited), its number perhaps another
            // file's now: opened again below, the number not remembered as inherited.
            self.locked.store(false, Ordering::Release);
            self.owner.store(pack(0, fd), Ordering::Release);
        }
        if self.owner().0 != pid {
            // Opened once per process, kept even when the lock fails below (tried again at
            // the next call, not opened again).
            let fd = open_file(&self.path)?;
            let _ = set_mark(fd, self.mark);
            self.take_over(pack(pid, fd));
        }
        self.verified.store(pid, Ordering::Release);
        let fd = self.owner().1;
        if self.holding.load(Ordering::Acquire) && !self.locked.load(Ordering::Acquire) {
            lock_read(fd).map_err(|e| Error::io(&self.path, "lock (shared)", e))?;
            self.locked.store(true, Ordering::Release);
        }
        Ok(fd)
    }

    /// `fd`, opened by process `pid` (a child made by fork), becomes this process's
    /// descriptor; the inherited one is remembered with its opener, and remembered ones
    /// that no longer name the database are forgotten. A process in another process id
    /// namespace than the opener's (or where it cannot be told) is marked foreign. Only
    /// calls that are safe after fork.
    fn take_over(&self, new: u64) {
        let namespace = pid_namespace();
        if namespace == 0 || namespace != self.namespace {
            self.foreign.store(true, Ordering::Release);
        }
        let fd = unpack(new).1;
        for slot in &self.inherited {
            let packed = slot.load(Ordering::Acquire);
            if packed != 0
                && (unpack(packed).1 == fd || file_id(unpack(packed).1).ok() != Some(self.id))
            {
                let _ = slot.compare_exchange(packed, 0, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        let (opener, inherited) = self.owner();
        if opener != 0
            && let Some(free) = self
                .inherited
                .iter()
                .find(|slot| slot.load(Ordering::Acquire) == 0)
        {
            free.store(pack(opener, inherited), Ordering::Release);
        }
        self.locked.store(false, Ordering::Release);
        self.owner.store(new, Ordering::Release);
    }

    /// In a child made by fork, before fork returns: this process's own descriptor and, if
    /// its parent held the lock, its own lock, so that no process (its parent, a process
    /// asking after its parent ended) takes the inherited lock for it. Only calls that are
    /// safe between fork and exec: on a failure, [`Users::file`] tries again at the
    /// child's first id.
    #[cfg(unix)]
    fn forked(&self, pid: u32) {
        self.verified.store(0, Ordering::Release);
        // SAFETY: a NUL-terminated path made before; open is safe after fork.
        let fd = unsafe { libc::open(self.c_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            // The inherited one remembered, and no process's own: `file` opens again (a
            // process id used again must not take another's descriptor for its own).
            self.take_over(pack(0, self.owner().1));
            return;
        }
        let _ = set_mark(fd, self.mark);
        self.take_over(pack(pid, fd));
        if self.holding.load(Ordering::Acquire) && lock_read_raw(fd) {
            self.locked.store(true, Ordering::Release);
        }
    }

    /// Whether `fd` is still this process's own descriptor of the database: open, naming
    /// the database file, at the offset only descriptors opened here have (a child that
    /// closed the descriptors it inherited, a daemon, may have the number for another
    /// file, or for SQLite's own descriptor of the database).
    #[cfg(unix)]
    fn still_own(&self, fd: libc::c_int) -> bool {
        // SAFETY: an offset query on a descriptor number (an error if it is closed).
        file_id(fd).ok() == Some(self.id)
            && (self.mark < 0 || unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) } == self.mark)
    }

    #[cfg(not(unix))]
    fn still_own(&self, _fd: libc::c_int) -> bool {
        true
    }

    /// Lets go of the lock on each inherited open file whose opener has ended: the lock
    /// stood for that process alone (every child takes its own as it is made), and this one
    /// would otherwise take it for another user's for as long as it runs. A descriptor that
    /// no longer names the database (closed, its number used again) is forgotten untouched.
    /// Whether any was let go.
    fn let_go_of_the_ended(&self) -> bool {
        if self.foreign.load(Ordering::Acquire) {
            return false;
        }
        let own = self.owner().1;
        let mut any = false;
        for slot in &self.inherited {
            let packed = slot.load(Ordering::Acquire);
            if packed == 0 {
                continue;
            }
            let (opener, fd) = unpack(packed);
            let forget = |slot: &AtomicU64| {
                slot.compare_exchange(packed, 0, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            };
            if fd == own || file_id(fd).ok() != Some(self.id) {
                forget(slot);
            } else if ended(opener) && unlock(fd) {
                any |= forget(slot);
            }
        }
        any
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
        loop {
            let others = others_hold(fd, self.holding.load(Ordering::Acquire))
                .map_err(|e| Error::io(&self.path, "lock", e))?;
            if !others {
                return Ok(true);
            }
            if !self.let_go_of_the_ended() {
                return Ok(false);
            }
        }
    }

    /// In a child made by fork, at its first id: its own descriptor and lock, if the fork
    /// handler could not take them, or if the descriptor it took is no longer this
    /// process's own (closed since, with every descriptor the child inherited, by a
    /// daemon): opened and locked again, so that the child never makes ids unseen.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be opened or locked.
    pub(crate) fn after_fork(&self) -> Result<(), Error> {
        // `file` checks the descriptor once per process.
        self.file().map(|_| ())
    }
}

/// Moves `fd`'s offset to `mark` (safe after fork); whether it did. The descriptor is only
/// ever locked and asked about, never read, so its offset is free to tell it apart.
#[cfg(unix)]
fn set_mark(fd: libc::c_int, mark: i64) -> bool {
    // SAFETY: a seek on a descriptor this process opened.
    mark < 0 || unsafe { libc::lseek(fd, mark, libc::SEEK_SET) } == mark
}

#[cfg(not(unix))]
fn set_mark(_fd: libc::c_int, _mark: i64) -> bool {
    true
}

/// A process and a descriptor in one word.
fn pack(pid: u32, fd: libc::c_int) -> u64 {
    u64::from(pid) << 32 | u64::from(fd as u32)
}

/// The process and the descriptor of a word made by [`pack`].
fn unpack(packed: u64) -> (u32, libc::c_int) {
    ((packed >> 32) as u32, packed as u32 as libc::c_int)
}

/// Called by the fork handler in a child made by fork (see `state::forked`): every
/// database's users' descriptor opened again and locked if held ([`Users::forked`]).
#[cfg(unix)]
pub(crate) fn forked() {
    // SAFETY: getpid is safe after fork.
    let pid = unsafe { libc::getpid() } as u32;
    ALL.each(|users| users.forked(pid));
}

/// The process id namespace of this process (the inode of `/proc/self/ns/pid`), 0 when it
/// cannot be read. Only calls that are safe after fork.
#[cfg(unix)]
fn pid_namespace() -> u64 {
    // SAFETY: a NUL-terminated literal path and a stat buffer of our own.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::stat(c"/proc/self/ns/pid".as_ptr(), &mut stat) == 0 {
            stat.st_ino
        } else {
            0
        }
    }
}

/// The device and inode of the file open as `fd`.
#[cfg(unix)]
fn file_id(fd: libc::c_int) -> std::io::Result<(u64, u64)> {
    // SAFETY: a stat buffer of our own for a descriptor number (EBADF if closed).
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut stat) == 0 {
            Ok((stat.st_dev, stat.st_ino))
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

#[cfg(not(unix))]
fn pid_namespace() -> u64 {
    0
}

#[cfg(not(unix))]
fn file_id(_fd: libc::c_int) -> std::io::Result<(u64, u64)> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// `path` as a C string.
#[cfg(unix)]
fn c_path(path: &Path) -> Result<std::ffi::CString, Error> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::State(format!("{}: a path with a NUL byte", path.display())))
}

#[cfg(not(unix))]
fn c_path(path: &Path) -> Result<std::ffi::CString, Error> {
    Err(Error::State(format!(
        "{}: a shared state file needs a Unix system",
        path.display()
    )))
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

/// Whether the process `pid` has ended (a process id used again since reads as running,
/// the safe way to be wrong).
#[cfg(unix)]
fn ended(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let asked = unsafe { libc::kill(pid, 0) };
    asked != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn ended(_pid: u32) -> bool {
    false
}

/// Lets go of the lock on `fd`'s open file; whether it did.
#[cfg(target_os = "linux")]
fn unlock(fd: libc::c_int) -> bool {
    let lock = lock_at(libc::F_UNLCK);
    // SAFETY: a lock request on a descriptor this process owns.
    unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &lock) == 0 }
}

/// Elsewhere the lock is a `flock` of the open file, which the process that opened it may
/// still share with others: kept.
#[cfg(not(target_os = "linux"))]
fn unlock(_fd: libc::c_int) -> bool {
    false
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
    if lock_read_raw(fd) {
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

/// The read lock on `fd`'s open file, not waited for; whether it was taken (`errno` says
/// why not). Safe after fork.
#[cfg(target_os = "linux")]
fn lock_read_raw(fd: libc::c_int) -> bool {
    let lock = lock_at(libc::F_RDLCK);
    // SAFETY: a lock request on a descriptor this process owns.
    unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &lock) == 0 }
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
    if lock_read_raw(fd) {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn lock_read_raw(fd: libc::c_int) -> bool {
    // SAFETY: a lock request on a descriptor this process owns.
    unsafe { libc::flock(fd, libc::LOCK_SH) == 0 }
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

    /// One test that forks at a time: a child made by fork takes its own lock on every
    /// database its parent holds, another test's too, for as long as it runs.
    static FORKING: Mutex<()> = Mutex::new(());

    /// A scratch directory with an empty database file in it, and its users.
    fn scratch_users(name: &str) -> (idkit_testkit::Scratch, &'static Users) {
        let dir = idkit_testkit::Scratch::new(name);
        let db = dir.join("a.db");
        std::fs::write(&db, b"").unwrap();
        let users = Users::of(&db).unwrap();
        (dir, users)
    }

    /// A pipe: its read end, then its write end.
    fn pipe() -> [libc::c_int; 2] {
        let mut ends = [0; 2];
        // SAFETY: a pipe into an array of two descriptors.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        ends
    }

    /// `bytes` written to `fd` whole.
    fn write(fd: libc::c_int, bytes: &[u8]) {
        // SAFETY: a write of a slice's bytes to a descriptor.
        let wrote = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        assert_eq!(wrote, bytes.len() as isize);
    }

    /// `bytes` read from `fd` whole.
    fn read(fd: libc::c_int, bytes: &mut [u8]) {
        // SAFETY: a read into a slice's bytes from a descriptor.
        let got = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), bytes.len()) };
        assert_eq!(got, bytes.len() as isize);
    }

    /// A child made by fork that runs `child` (a few system calls), says the byte it gives
    /// and sleeps until killed, never returning into the test harness: its process id and
    /// that byte.
    fn fork_saying(child: impl FnOnce() -> u8) -> (libc::pid_t, u8) {
        let said = pipe();
        // SAFETY: the child makes a few system calls, writes a byte and waits to be killed.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            write(said[1], &[child()]);
            loop {
                // SAFETY: sleeps until killed.
                unsafe { libc::pause() };
            }
        }
        let mut byte = [0u8];
        read(said[0], &mut byte);
        (pid, byte[0])
    }

    /// A child made by fork shares its parent's open file of the database, and with it the
    /// lock: each would have taken the other for gone, and made the state file again from
    /// nothing under it. Each has a lock of its own, and sees the other's.
    #[test]
    fn a_child_made_by_fork_and_its_parent_see_each_other() {
        let _one = FORKING.lock().unwrap_or_else(|e| e.into_inner());
        let (_dir, users) = scratch_users("sqlite-users-fork");
        users.hold().unwrap();
        assert!(users.alone().unwrap(), "alone before the fork");
        let (pid, saw) = fork_saying(|| match users.after_fork().and_then(|()| users.alone()) {
            Ok(false) => b'p',
            Ok(true) => b'a',
            Err(_) => b'e',
        });
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

    /// A child made by fork keeps its parent's open file, and with it the parent's lock,
    /// which stands for the parent alone: every child takes its own lock as it is made (in
    /// the fork handler), an idle one too. Once the parent ended, a child asking whether it
    /// is alone lets go of that lock rather than take it for another user's forever (found
    /// by the hunt, seed 2299578311: a forked child whose parent was killed waited without
    /// end to make the state file again), and still sees its idle sibling (found by a
    /// review: a sibling that had made no id since the fork held no lock of its own, and
    /// letting go of the parent's hid it).
    #[test]
    fn a_child_whose_parent_ended_is_alone_once_its_siblings_ended() {
        let _one = FORKING.lock().unwrap_or_else(|e| e.into_inner());
        let (_dir, users) = scratch_users("sqlite-users-orphan");
        let (said, go, pids) = (pipe(), pipe(), pipe());
        // SAFETY: the parent holds the lock, makes an idle child and an asking one, says
        // the idle one's process id and sleeps until killed; the idle one sleeps until
        // killed; the asking one says what it sees three times, then exits. None returns
        // into the test harness.
        let parent = unsafe { libc::fork() };
        assert!(parent >= 0);
        if parent == 0 {
            users.hold().unwrap();
            let idle = unsafe { libc::fork() };
            if idle == 0 {
                loop {
                    unsafe { libc::pause() };
                }
            }
            let asking = unsafe { libc::fork() };
            if asking == 0 {
                let _ = users.hold();
                for patient in [false, false, true] {
                    read(go[0], &mut [0]);
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
                    let saw = loop {
                        match users.alone() {
                            Ok(true) => break b'a',
                            Ok(false) if patient && std::time::Instant::now() < deadline => {
                                std::thread::sleep(std::time::Duration::from_millis(10));
                            }
                            Ok(false) => break b'p',
                            Err(_) => break b'e',
                        }
                    };
                    write(said[1], &[saw]);
                }
                unsafe { libc::_exit(0) };
            }
            write(pids[1], &idle.to_ne_bytes());
            loop {
                unsafe { libc::pause() };
            }
        }
        let mut idle = [0; 4];
        read(pids[0], &mut idle);
        let idle = libc::pid_t::from_ne_bytes(idle);
        let mut answers = [0u8; 3];
        write(go[1], &[0]);
        read(said[0], &mut answers[..1]);
        // SAFETY: the parent made above, ended and reaped.
        unsafe {
            libc::kill(parent, libc::SIGKILL);
            libc::waitpid(parent, std::ptr::null_mut(), 0);
        }
        write(go[1], &[0]);
        read(said[0], &mut answers[1..2]);
        // SAFETY: the idle child, whose parent ended (reaped by init).
        unsafe { libc::kill(idle, libc::SIGKILL) };
        write(go[1], &[0]);
        read(said[0], &mut answers[2..]);
        assert_eq!(answers[0], b'p', "the child saw its parent's lock");
        assert_eq!(answers[1], b'p', "the child saw its idle sibling's lock");
        assert_eq!(answers[2], b'a', "the child alone once both ended");
    }

    /// A child that closes the descriptors it inherited (a daemon) closes the one the fork
    /// handler opened for its lock, and the lock with it: at its first id it opens and locks
    /// the file again, rather than make ids that no other process can see (found by a
    /// review).
    #[test]
    fn a_child_that_closed_its_descriptors_locks_again_at_its_first_id() {
        let _one = FORKING.lock().unwrap_or_else(|e| e.into_inner());
        let (_dir, users) = scratch_users("sqlite-users-daemon");
        users.hold().unwrap();
        // The child closes its lock's descriptor and takes it again as at its first id.
        let (child, byte) = fork_saying(|| {
            // SAFETY: closes the child's copy of the lock's descriptor.
            unsafe { libc::close(users.owner().1) };
            if users.after_fork().is_ok() {
                b'k'
            } else {
                b'e'
            }
        });
        let alone = users.alone().unwrap();
        // SAFETY: the child made above.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
        assert_eq!(byte, b'k');
        assert!(!alone, "the child's lock, taken again, seen");
    }

    /// Asking whether others hold the lock drops nothing: two holders asking all the time
    /// never let a third process find itself alone (a `flock` converted to exclusive and
    /// back is dropped for a moment).
    #[test]
    fn asking_never_hides_a_holder() {
        let _one = FORKING.lock().unwrap_or_else(|e| e.into_inner());
        let (_dir, users) = scratch_users("sqlite-users-asking");
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
