//! The generators' state: one word per generator in a file beside the database
//! (`DATABASE-idkit`), mapped into every process that opens the database, so that every
//! connection of every process takes the same compare-and-swap step on the same word, as
//! the threads of one process do on idkit's shared generators. SQLite keeps its WAL index
//! in such a file (`DATABASE-shm`) for the same reason; like it, this file needs the
//! processes on one machine, which SQLite's locking needs anyway.
//!
//! The file outlives the processes: a process that opens the database after a restart, its
//! clock behind, finds the last id of each generator and goes on above it. The page cache
//! keeps the words across a crash of a process; a crash of the machine may lose the last
//! of them, so the file also holds a **high-water mark**, a Unix millisecond written ahead
//! of the ids (a window at a time, synced to disk once per half window) that no id goes
//! past. After the machine starts again (Linux's boot id changed), every generator starts
//! above the mark.
//!
//! The file is made whole (every block written, so that a full disk is an error when it is
//! made rather than a `SIGBUS` at a write to a page later), synced and linked into place.
//! While a process maps it, it holds a shared lock on the database file (see `users.rs`), and a missing
//! state file is made only while no other process holds one: a file removed under running
//! processes is not made again from nothing beside them. Each process checks, once per
//! millisecond of its ids, that the file at the path is still the one it maps; if not, it
//! carries its words and mark into the file at the path and refuses (see
//! [`State::cover`]).
//!
//! The layout is fixed (`repr(C)`, one cache line per word) and versioned by its magic
//! number, so that processes of different builds (a Python program with the loadable
//! extension, a Rust program with this crate) share it.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use idkit_core::random::{RandomSource, ThreadRandom};
use idkit_core::slots::{self, Slot};
use idkit_core::{Clock, SystemClock};

use crate::Error;
use crate::leaked::{Linked, List};
use crate::users::Users;

/// How far ahead of the ids the mark is written, ms; it is written again once the ids are
/// half a window from it.
pub const WINDOW_MS: u64 = 1_000;

/// How far ids may run ahead of a clock that is behind them (a restart with the clock set
/// back, a step back while running), ms: ULID, UUIDv7 and TypeID run ahead of it by up to
/// this much, Snowflake layouts wait up to this long; past it, an SQL error.
pub const MAX_BEHIND_MS: u64 = 10_000;

/// "idkit-s3": the file's layout, version 3 (the words named by `LayoutSpec::word_key`'s
/// bits, claimed under the file's lock; the header names the file's own device and inode).
const MAGIC: u64 = u64::from_le_bytes(*b"idkit-s3");

/// "idkit-s2": version 2, the same layout without the file's own device and inode, which
/// its processes would neither write nor read: opened by this version, the file is stamped
/// and its magic becomes [`MAGIC`], so that processes of that version refuse it from then
/// on (and cannot use a copy put in its place that this one waits on).
const MAGIC_V2: u64 = u64::from_le_bytes(*b"idkit-s2");

/// "idkit-s1": version 1, the same layout with words named by field names. Opened by this
/// version, its generators start above its mark (as after a restart of the machine), since
/// a Snowflake generator's word is now found under another name; and its magic becomes
/// [`MAGIC`], so that processes of the earlier version refuse it from then on.
const MAGIC_V1: u64 = u64::from_le_bytes(*b"idkit-s1");

/// The device and inode a state file's header names once a process carried its ids into
/// the file now at its path (it was removed or replaced): every process still mapping it
/// sees this at its next id and refuses from then on, not only at its next millisecond.
const SUPERSEDED: u64 = u64::MAX;

/// Ids of one millisecond (by their counter or sequence) between two checks that the state
/// file is still the one at its path ([`State::cover`]).
pub const CHECK_EVERY: u64 = 16_384;

/// Generators one database holds (a Snowflake layout with one worker id each, and ULID and
/// UUIDv7).
pub const SLOTS: usize = 4_095;

/// The file's first cache line.
#[repr(C, align(64))]
struct Header {
    /// [`MAGIC`] once laid out.
    magic: AtomicU64,
    /// The boot id of the machine when the words were last known good.
    boot: [AtomicU64; 2],
    /// The highest mark written to the file (and being synced).
    mark: AtomicU64,
    /// The mark that is on disk: no id past it is returned.
    durable: AtomicU64,
    /// The mark read back after the machine started again: every word starts above it.
    floor: AtomicU64,
    /// The file's own device and inode, written by the process that made it (or first
    /// mapped it): a copy of the file put in its place (a restore, an rsync) carries its
    /// original's and is told apart (see [`map`]). Zeros in a file of an earlier build;
    /// [`SUPERSEDED`] once a process carried the ids of this file into another.
    own: [AtomicU64; 2],
}

/// The whole file: the header, then one slot per generator (its key, two hashes of what
/// names it, 0 when free; and the last id made, a Snowflake id or a millisecond and
/// counter).
#[repr(C)]
struct Table {
    header: Header,
    slots: [Slot; SLOTS],
}

/// The size of the state file, bytes (256 KiB).
pub const FILE_BYTES: usize = size_of::<Table>();

/// Where a database's generators keep their state.
pub struct State {
    table: &'static Table,
    /// The state file; `None` for process memory (an in-memory or temporary database, or a
    /// file that cannot be written).
    file: Option<PathBuf>,
    /// The state file, open: its lock keeps the claims of other processes apart.
    open: Option<std::fs::File>,
    /// The mapped file's device and inode: the file at `file`'s path while it is still this
    /// one.
    mapped: Option<(u64, u64)>,
    /// The database file, for the state file made again after it was removed.
    database: Option<PathBuf>,
    /// The highest id millisecond since whose start the file at the path was seen to be the
    /// one mapped: checked again when an id of a later millisecond is covered.
    checked_ms: AtomicU64,
    /// Set once the file at the path was seen to be another (or none): every id refused.
    gone: std::sync::atomic::AtomicBool,
    /// The process that mapped the file (whose `open` is its own).
    opened_by: u32,
    /// The process whose own lock and random source the checks have set up: another one
    /// is a child made by `fork`.
    pid: std::sync::atomic::AtomicU32,
    /// The state file opened again by a child made by `fork` (with its process id): a
    /// `flock` held through the parent's open file would be the parent's lock too.
    reopened: Mutex<Option<(u32, &'static std::fs::File)>>,
    /// The highest mark (or floor) this process saw in the file: a lower mark means the
    /// file was written over with an older copy.
    seen_mark: AtomicU64,
    /// The file's word of copies found written over it ([`GENERATION`]: drawn at random at
    /// each), and its value when this state was laid out: another value means another
    /// process found the file written over with an older copy, and the words this state
    /// goes on from may be the copy's.
    generation: &'static AtomicU64,
    generation_at_map: u64,
    /// The file's floor when this state was laid out on it: a higher one means another
    /// process raised it above ids it gave (see `check`).
    floor_at_map: u64,
    /// Why there is no state file, for the errors of the generators that need one.
    why_memory: &'static str,
    /// The next in [`ALL`].
    next: std::sync::atomic::AtomicPtr<State>,
    /// The ULID generator's word, and UUIDv7's (TypeIDs take theirs).
    pub ulid: &'static AtomicU64,
    pub v7: &'static AtomicU64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").field("file", &self.file).finish()
    }
}

/// A state file mapped: where it is, the file open, its device and inode, and its database.
struct Backing {
    file: PathBuf,
    open: std::fs::File,
    id: (u64, u64),
    database: Option<PathBuf>,
}

/// The states of this process, by state file: one mapping per file, whatever the number of
/// connections.
static FILES: Mutex<Option<HashMap<PathBuf, &'static State>>> = Mutex::new(None);

/// States whose file was removed or replaced and whose words could not be carried into the
/// file at the path then (a full disk): carried when the path is opened again, which fails
/// until they are, so that a file made again never starts below the ids they gave. Taken
/// only under [`FILES`]'s lock, which is held from a failed carry until its state is here:
/// no thread of the process maps the file at the path in between (found by a review: a
/// connection opened while another thread's carry failed mapped the path without the
/// carried words and floor).
static GONE: Mutex<Option<HashMap<PathBuf, Vec<&'static State>>>> = Mutex::new(None);

/// By state file, what the ids of this process's states found gone there are at or below
/// (the milliseconds they checked): the file this process maps at the path next is raised
/// to it, whichever file that is, the same one too (written over with an older copy, its
/// words may be behind them). Raising a file's floor makes no process refuse (only
/// [`GENERATION`] does), so a floor kept by each process in turn raises nothing again
/// (found by reviews: a file truncated and then removed left no floor behind; a process
/// refused for another's finding kept none; floors that made others refuse, each raising
/// the file in turn, did so without end).
static FLOORS: Mutex<Option<HashMap<PathBuf, u64>>> = Mutex::new(None);

/// The key of the word that changes (to a random value) each time a process finds an older
/// copy written over a state file: claimed beside ULID's and UUIDv7's when a state is laid
/// out.
const GENERATION: &str = "idkit: copies found written over";

/// Keeps `floor` for the state file `path` (see [`FLOORS`]).
fn remember_floor(path: &Path, floor: u64) {
    let mut floors = FLOORS.lock().unwrap_or_else(|e| e.into_inner());
    let at = floors
        .get_or_insert_with(HashMap::new)
        .entry(path.to_owned())
        .or_default();
    *at = (*at).max(floor);
}

/// The floor kept for the state file `path`, 0 for none.
fn remembered(path: &Path) -> u64 {
    FLOORS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|floors| floors.get(path).copied())
        .unwrap_or_default()
}

/// Every state this process made, as a list the fork handler walks without a lock.
static ALL: List<State> = List::new();

impl Linked for State {
    fn next(&self) -> &std::sync::atomic::AtomicPtr<Self> {
        &self.next
    }
}

/// The state in this process's memory.
static MEMORY: OnceLock<Option<&'static State>> = OnceLock::new();

impl State {
    /// The state of the database file `database`: its state file `DATABASE-idkit`, mapped
    /// (made when missing), or process memory when `database` is `None` (in memory,
    /// temporary) or the state file cannot be opened for writing (a read-only database).
    ///
    /// # Errors
    ///
    /// [`Error::State`] when the state file exists but is not one (another program's, or
    /// a later version's layout), or cannot be mapped.
    pub fn of_database(database: Option<&Path>) -> Result<&'static State, Error> {
        match database {
            None => Self::memory("the database is in memory or temporary"),
            Some(db) => {
                let mut name = db.as_os_str().to_owned();
                name.push("-idkit");
                Self::of_path(Path::new(&name), Some(db))
            }
        }
    }

    /// The state in the state file `path` (made when missing).
    ///
    /// # Errors
    ///
    /// As [`State::of_database`].
    pub fn of_file(path: &Path) -> Result<&'static State, Error> {
        Self::of_path(path, None)
    }

    /// The state in `path`, the state file of `database` when given.
    fn of_path(path: &Path, database: Option<&Path>) -> Result<&'static State, Error> {
        on_fork();
        let key = std::fs::canonicalize(path.parent().unwrap_or(Path::new(".")))
            .map(|dir| dir.join(path.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| path.to_owned());
        let mut guard = FILES.lock().unwrap_or_else(|e| e.into_inner());
        let files = guard.get_or_insert_with(HashMap::new);
        let orphans = GONE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|gone| gone.remove(&key))
            .unwrap_or_default();
        let mut orphans = orphans.into_iter();
        while let Some(orphan) = orphans.next() {
            // Their words go into the file at the path first (which maps it), or nothing
            // does; put back under the same lock when a carry fails.
            if let Err(e) = orphan.carry_over(&key, files) {
                let mut gone = GONE.lock().unwrap_or_else(|e| e.into_inner());
                let back = gone
                    .get_or_insert_with(HashMap::new)
                    .entry(key)
                    .or_default();
                back.push(orphan);
                back.extend(orphans);
                return Err(e);
            }
        }
        if let Some(state) = files.get(&key) {
            return Ok(state);
        }
        let state = match map(path, database, None, remembered(&key), None)? {
            Some(mapped) => Self::over(mapped, key.clone(), database)?,
            None => {
                return Self::memory(
                    "its state file cannot be written (a read-only database or directory)",
                );
            }
        };
        files.insert(key, state);
        Ok(state)
    }

    /// The state over a mapped file.
    fn over(
        (table, open, id): (&'static Table, std::fs::File, (u64, u64)),
        key: PathBuf,
        database: Option<&Path>,
    ) -> Result<&'static State, Error> {
        let backing = Backing {
            file: key,
            open,
            id,
            database: database.map(Path::to_owned),
        };
        Self::laid_out(table, Some(backing), "").ok_or(Error::Full { slots: SLOTS })
    }

    /// The one state in process memory.
    fn memory(why: &'static str) -> Result<&'static State, Error> {
        // Several reasons share one state: the first one given names it.
        let state = MEMORY.get_or_init(|| {
            on_fork();
            let table = Box::leak(zeroed_table());
            table.header.magic.store(MAGIC, Ordering::Relaxed);
            // Nothing to sync: process memory ends with the process.
            table.header.durable.store(u64::MAX, Ordering::Relaxed);
            Self::laid_out(table, None, why)
        });
        state.ok_or(Error::Full { slots: SLOTS })
    }

    /// The state over `table`, with the words of ULID and UUIDv7 claimed and raised above
    /// the floor; `None` when every slot holds another generator.
    fn laid_out(
        table: &'static Table,
        backing: Option<Backing>,
        why: &'static str,
    ) -> Option<&'static State> {
        let floor = table.header.floor.load(Ordering::Acquire);
        let open = backing.as_ref().map(|b| &b.open);
        let time_ordered = |name: &str| {
            let word = claim_locked(table, name, 0, open).ok()??;
            word.fetch_max(
                time_ordered_word(floor.saturating_add(1), 0),
                Ordering::AcqRel,
            );
            Some(word)
        };
        let (ulid, v7) = (time_ordered("ulid")?, time_ordered("uuid-v7")?);
        // Claimed with a random value where it is not yet (a file of an earlier build, or
        // an old copy written over the file): laid out again at 0, it could come back to
        // the value states were laid out with before a copy was found (found by a review).
        let fresh = ThreadRandom.u64().unwrap_or(1);
        let generation = claim_locked(table, GENERATION, fresh, open).ok()??;
        let (file, open, mapped, database) = match backing {
            Some(b) => (Some(b.file), Some(b.open), Some(b.id), b.database),
            None => (None, None, None, None),
        };
        let checked = 0;
        let state: &'static State = Box::leak(Box::new(State {
            table,
            file,
            open,
            mapped,
            database,
            checked_ms: AtomicU64::new(checked),
            gone: std::sync::atomic::AtomicBool::new(false),
            opened_by: std::process::id(),
            pid: std::sync::atomic::AtomicU32::new(std::process::id()),
            reopened: Mutex::new(None),
            // What the file held when mapped: a copy written over it in place later is older.
            seen_mark: AtomicU64::new(table.header.durable.load(Ordering::Acquire).max(floor)),
            generation,
            generation_at_map: generation.load(Ordering::Acquire),
            floor_at_map: floor,
            why_memory: why,
            ulid,
            v7,
            next: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
        }));
        ALL.push(state);
        Some(state)
    }

    /// For the hunt's trace (feature `trace`): the file mapped (device and inode), whether
    /// it was found gone or stamped superseded, its floor and mark, and the ULID word.
    #[cfg(feature = "trace")]
    pub fn describe(&self) -> String {
        let header = &self.table.header;
        format!(
            "{:?} at {:p}{}{} floor {} mark {} ulid {:x}",
            self.mapped,
            self.table,
            if self.gone.load(Ordering::Acquire) {
                " gone"
            } else {
                ""
            },
            if header.own[0].load(Ordering::Acquire) == SUPERSEDED {
                " superseded"
            } else {
                ""
            },
            header.floor.load(Ordering::Acquire),
            header.durable.load(Ordering::Acquire),
            self.ulid.load(Ordering::Acquire),
        )
    }

    /// The state file, or `None` for process memory.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The mark after the machine last started: every generator starts above it.
    pub fn floor_ms(&self) -> u64 {
        self.table.header.floor.load(Ordering::Acquire)
    }

    /// The high-water mark: no id of this database goes past it.
    pub fn mark_ms(&self) -> u64 {
        self.table.header.durable.load(Ordering::Acquire)
    }

    /// The state file, or the error of a generator that needs one.
    ///
    /// # Errors
    ///
    /// [`Error::NoStateFile`] for process memory.
    pub fn require_file(&self, what: &str) -> Result<(), Error> {
        match self.file {
            Some(_) => Ok(()),
            None => Err(Error::NoStateFile {
                what: what.to_owned(),
                why: self.why_memory,
            }),
        }
    }

    /// The word of `key` (a Snowflake layout and its worker), laid out with `initial` when
    /// new, and raised to `initial` when below it.
    ///
    /// # Errors
    ///
    /// [`Error::Full`] when every slot holds another generator.
    pub fn word(&self, key: &str, initial: u64) -> Result<&'static AtomicU64, Error> {
        let file = self.lock_file()?;
        let word =
            claim_locked(self.table, key, initial, file)?.ok_or(Error::Full { slots: SLOTS })?;
        word.fetch_max(initial, Ordering::AcqRel);
        Ok(word)
    }

    /// The state file open in this process, whose lock keeps claims apart: the one mapped,
    /// or in a child made by `fork`, the file opened again (the parent's open file shares
    /// its lock with the child, so it would keep neither from the other).
    fn lock_file(&self) -> Result<Option<&std::fs::File>, Error> {
        let Some(open) = &self.open else {
            return Ok(None);
        };
        let pid = std::process::id();
        if pid == self.opened_by {
            return Ok(Some(open));
        }
        let mut reopened = self.reopened.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((by, file)) = *reopened
            && by == pid
        {
            return Ok(Some(file));
        }
        let path = self.file.as_deref().unwrap_or(Path::new(""));
        let file: &'static std::fs::File = Box::leak(Box::new(
            OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, "open", e))?,
        ));
        *reopened = Some((pid, file));
        Ok(Some(file))
    }

    /// Covers an id of millisecond `ms` by the mark on disk before it is returned: one load
    /// and a compare, and once per half window a write and a sync. Then, once per
    /// millisecond of the ids, checks that the state file at its path is still the one
    /// mapped (a `stat`): every id of a millisecond so checked is covered by the mark
    /// before the check, so a file made again after this one was removed (this process
    /// carries it over, starting it above this file's mark) starts above each of them.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the mark cannot be synced; [`Error::State`] once the state file
    /// at the path is another or none (removed, replaced, truncated): the connection's ids
    /// are refused from then on, and a connection opened again uses the file at the path.
    ///
    /// The file is checked at the first id of each millisecond this process gives, and
    /// at every [`CHECK_EVERY`]th id of one millisecond (`count`, the id's counter or
    /// sequence): ids that run ahead of a clock set back stay in one millisecond for as
    /// long as it is behind.
    ///
    /// A mark on disk below one this process saw (the file written over in place with an
    /// older copy), a floor above it (another process found that first, and raised the floor
    /// above its ids: this process's words, shared with it, are the copy's too), a file
    /// already found gone, or one another process carried over
    /// (its header stamped `SUPERSEDED`) is checked at every id, before the mark is moved (which would hide
    /// it): once one process carried the file's ids into the file at its path and made ids
    /// there (above this file's mark), no process makes another id of this file, which
    /// would sort below them.
    #[inline]
    pub fn cover(&'static self, ms: u64, count: u64) -> Result<(), Error> {
        let header = &self.table.header;
        let durable = header.durable.load(Ordering::Acquire);
        if ms > self.checked_ms.load(Ordering::Acquire)
            || count.is_multiple_of(CHECK_EVERY)
            || durable < self.seen_mark.load(Ordering::Relaxed)
            || self.generation.load(Ordering::Relaxed) != self.generation_at_map
            || header.floor.load(Ordering::Relaxed) > self.floor_at_map
            || self.gone.load(Ordering::Relaxed)
            || header.own[0].load(Ordering::SeqCst) == SUPERSEDED
        {
            self.check(ms)?;
        }
        if ms.saturating_add(WINDOW_MS / 2) > durable {
            self.advance(ms)?;
        }
        Ok(())
    }

    /// Whether the state file at the path is still the one mapped; if not, carries this
    /// file's words and mark into the file at the path (made when missing) and refuses.
    #[cold]
    #[inline(never)]
    fn check(&'static self, ms: u64) -> Result<(), Error> {
        let pid = std::process::id();
        if self.pid.load(Ordering::Acquire) != pid {
            // A child made by fork: its random source is its parent's copy until seeded
            // anew (a state in process memory has words of its own from here on; a file's
            // are shared with the parent).
            // Its own lock on the database, which its parent sees (the inherited one is the
            // parent's too, and hid each from the other); then its random source. Tried
            // again at the next check when either fails.
            let forked = match &self.database {
                Some(database) => Users::of(database).and_then(|u| u.after_fork()),
                None => Ok(()),
            }
            .and_then(|()| {
                idkit_core::after_fork().map_err(|e| {
                    Error::Io(format!("seeding a forked process's random source: {e}"))
                })
            });
            // Marked done only once done: another thread of the child checking meanwhile
            // does the same (each step is idempotent) rather than make ids before the
            // child's own lock is taken.
            forked?;
            self.pid.store(pid, Ordering::Release);
        }
        let (Some(path), Some(open), Some(id)) = (&self.file, &self.open, self.mapped) else {
            self.checked_ms.fetch_max(ms, Ordering::AcqRel);
            return Ok(());
        };
        if !self.gone.load(Ordering::Acquire) {
            let here = std::fs::metadata(path).ok().map(|m| file_id(&m));
            let size = open.metadata().map(|m| m.len()).unwrap_or(0);
            let whole = size == FILE_BYTES as u64;
            // Read only once the size is known to be whole (a shorter file's pages fault).
            let mark = if whole {
                self.table.header.durable.load(Ordering::Acquire)
            } else {
                0
            };
            let copied = mark < self.seen_mark.fetch_max(mark, Ordering::AcqRel);
            // Another process found the file written over with an older copy since this
            // state was laid out: the words this one goes on from may be the copy's,
            // whatever marks it saw (found by a review: a process that had seen just the
            // mark the finder had went on once the finder opened the file again). Read only
            // when whole: the word is past the header.
            let found = whole && self.generation.load(Ordering::Acquire) != self.generation_at_map;
            // The floor raised since: by a process that found a copy, or by one whose ids,
            // given before such a finding, ran ahead of the floor it set (`FLOORS`); this
            // state's generators, built below it, could step through those ids.
            let raised =
                whole && self.table.header.floor.load(Ordering::Acquire) > self.floor_at_map;
            let older = copied || found || raised;
            let superseded =
                whole && self.table.header.own[0].load(Ordering::Acquire) == SUPERSEDED;
            if here == Some(id) && whole && !older && !superseded {
                self.checked_ms.fetch_max(ms, Ordering::AcqRel);
                return Ok(());
            }
            if !self.gone.swap(true, Ordering::AcqRel) {
                if whole && here != Some(id) {
                    // Before any id of the file at the path: every other process mapping
                    // this one refuses from its next id (not its next millisecond), whose
                    // id would sort below the ids made there.
                    stamp_superseded(&self.table.header);
                }
                if whole && here == Some(id) && (copied || superseded) && !found {
                    // Written over in place with an older copy (found first here: a later
                    // finder raises nothing now, which would make every state laid out since
                    // refuse again, but keeps its floor; found by a review): its words are
                    // behind the ids given. Every id of this process is at or below what it
                    // checked and the marks it saw; the generators laid out on this file
                    // again (a connection opened again) start above that.
                    // Above the clock too, past every id another process gave unless it ran
                    // ahead of a clock set back (found by a review); each of those raises it
                    // further when it opens the file again (`FLOORS`). Then every other
                    // process on the file refuses at its next id (`cover`), its words being
                    // the copy's too.
                    let floor = self
                        .seen_mark
                        .load(Ordering::Acquire)
                        .max(self.checked_ms.load(Ordering::Acquire))
                        .max(SystemClock.now_ms());
                    // The mark with it, as `adopt` raises it: a state laid out meanwhile sees
                    // no mark below what it saw, and takes itself for no finder (found by a
                    // review).
                    let header = &self.table.header;
                    header.floor.fetch_max(floor, Ordering::AcqRel);
                    header.mark.fetch_max(floor, Ordering::AcqRel);
                    header.durable.fetch_max(floor, Ordering::AcqRel);
                    if copied {
                        // A value no state was laid out with (a count could come back to
                        // one when a copy written over later brought an older count back),
                        // by the first finder only.
                        let next = ThreadRandom
                            .u64()
                            .unwrap_or_else(|_| self.generation_at_map.wrapping_add(1));
                        let _ = self.generation.compare_exchange(
                            self.generation_at_map,
                            next,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        );
                    }
                    let _ = sync(self.table);
                }
                if !whole || copied || found {
                    // Its words lost (truncated), or the copy's since before the finding:
                    // every id this process gave from this file is of a millisecond it
                    // checked, kept for the file it maps at the path next (see `FLOORS`).
                    // Not for a state refused only for a raised floor: laid out after the
                    // finding, its ids are in the file's words, and a floor kept from them
                    // would raise the file again, and make others refuse, without end.
                    remember_floor(path, self.checked_ms.load(Ordering::Acquire));
                }
                // One lock across the file's leaving and its carry: no connection of this
                // process maps the file at the path in between, without the carried floor.
                let mut guard = FILES.lock().unwrap_or_else(|e| e.into_inner());
                let files = guard.get_or_insert_with(HashMap::new);
                if files.get(path).is_some_and(|s| std::ptr::eq(*s, self)) {
                    files.remove(path);
                }
                if whole && here != Some(id) && self.carry_over(path, files).is_err() {
                    // Still under FILES's lock (see [`GONE`]).
                    GONE.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert_with(HashMap::new)
                        .entry(path.clone())
                        .or_default()
                        .push(self);
                }
            }
        }
        Err(Error::State(format!(
            "{} was removed, replaced, truncated or written over while this process used \
             it; the ids it gave are carried into the file now at that path where it could \
             read them, and that file goes on above them: open the database again (a new \
             connection) to make ids",
            path.display()
        )))
    }

    /// This file's words and mark carried into the state file at `path` (made when
    /// missing), which then serves the connections this process opens.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] or [`Error::State`] when the file at `path` cannot be made or mapped
    /// (a full disk): [`GONE`] keeps this state, and the path is refused until it is
    /// carried.
    fn carry_over(
        &self,
        path: &Path,
        files: &mut HashMap<PathBuf, &'static State>,
    ) -> Result<(), Error> {
        let header = &self.table.header;
        // Every id this file gave is at or below its mark (`cover`); this process's are
        // at or below what it saw and checked, and the floors it kept for the path, even
        // where the file was written over with an older copy before it went (found by a
        // review).
        let floor = header
            .durable
            .load(Ordering::Acquire)
            .max(header.mark.load(Ordering::Acquire))
            .max(self.seen_mark.load(Ordering::Acquire))
            .max(self.checked_ms.load(Ordering::Acquire))
            .max(remembered(path));
        // A file another process carried over already (its SUPERSEDED stamp with the newer
        // file's inode): that process made a newer file, whose ids may be far above this
        // file's mark, and that file may have been removed or replaced since. This one then
        // makes no file from its own floor, which could sit below those ids (found by the
        // hunt, seed 1694996744: a ULID 2,012 ms below the row before it): it maps the file
        // at the path as a process that carries nothing does (waiting for the processes of
        // the newer file to make it, or making it only with the database to itself), raised
        // to this file's floor as it is laid out, and carries its words in, which repeats
        // nothing; the stamps are the newer file's processes' to write. Asked now, not when
        // the file was found gone: a carry of this process's that failed (a full disk) is
        // tried again later, by when another may have carried the file (found by the hunt,
        // seed 1638495754: a ULID 440 ms below the row before it).
        let stale = carried_by_another(header);
        let mapped = if stale {
            map_stale(path, self.database.as_deref(), floor)?
        } else {
            map(
                path,
                self.database.as_deref(),
                Some(floor),
                floor,
                Some(self.table),
            )?
        };
        let Some(mapped) = mapped else {
            return Err(Error::State(format!(
                "{} cannot be written now, and the ids of the file it replaces must be \
                 carried into it first",
                path.display()
            )));
        };
        let new = mapped.0;
        let carried = slots::carry(&self.table.slots, &new.slots, || {
            ClaimLock::take(Some(&mapped.1))
        })
        .and_then(|_| sync(new))
        .and_then(|()| {
            // Its words in, the file is its own (see `adopt`). That this file carried on
            // into that one is written beside its stamp already (`claim_successor`, in
            // `map`).
            if !stale && stamp_own(new, path, mapped.2) {
                sync(new)?;
            }
            Ok(())
        });
        if let Err(e) = carried {
            // Tried again from GONE: a mapping kept at each try would be one more each time.
            unmap(new);
            return Err(e);
        }
        let state = Self::over(mapped, path.to_owned(), self.database.as_deref())?;
        files.insert(path.to_owned(), state);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn advance(&self, ms: u64) -> Result<(), Error> {
        let header = &self.table.header;
        let target = ms.max(SystemClock.now_ms()).saturating_add(WINDOW_MS);
        header.mark.fetch_max(target, Ordering::AcqRel);
        sync(self.table)?;
        // The page synced held the mark at `target` or above.
        header.durable.fetch_max(target, Ordering::AcqRel);
        self.seen_mark.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }
}

/// Stamps the file of `header` SUPERSEDED (its ids are being carried into the file at its
/// path): unless it is already, and never over the newer file's inode that a completed
/// carry of another process wrote beside the stamp, which would make a process that tries
/// its own carry again later take the file for one no one carried over.
fn stamp_superseded(header: &Header) {
    let own = &header.own;
    let seen = own[1].load(Ordering::Acquire);
    if own[0].load(Ordering::Acquire) != SUPERSEDED {
        // Fails only when another process stamped (and perhaps carried) meanwhile.
        let _ = own[1].compare_exchange(seen, SUPERSEDED, Ordering::AcqRel, Ordering::Acquire);
    }
    // Sequentially consistent with `cover`'s load after an id's step: either that process
    // sees the stamp and refuses the id, or its step is in the words the carrier copies
    // after stamping.
    own[0].store(SUPERSEDED, Ordering::SeqCst);
}

/// Whether another process carried the file of `header` into a newer one: its SUPERSEDED
/// stamp with the newer file's inode beside it, claimed before any id of that file
/// ([`claim_successor`]). A stamp alone is a carry under way that has claimed no file yet,
/// one that failed, or a file replaced during its own carry.
fn carried_by_another(header: &Header) -> bool {
    header.own[0].load(Ordering::Acquire) == SUPERSEDED
        && header.own[1].load(Ordering::Acquire) != SUPERSEDED
}

/// Claims, in the header of the file being carried over, the file `inode` as the one its
/// ids go into, before any id of it: a file this process made (written whole and synced,
/// then claimed, and linked into place only if the claim won) or one it found at the path.
/// Two processes carrying one file thus never both carry it from its floor into two files:
/// the one that loses waits for the processes of the newer file, whose ids may already be
/// above that floor, and whose file may already be gone (found by a review: a carry that
/// decided to make a file, then was slow to write it, linked it after the other's file had
/// been made, used and removed). Whether it is claimed for `inode` (won now, or before).
fn claim_successor(header: &Header, inode: u64) -> bool {
    let own = &header.own[1];
    own.compare_exchange(SUPERSEDED, inode, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
        || own.load(Ordering::Acquire) == inode
}

/// The error of a carry whose file another process claimed first (see
/// [`claim_successor`]): tried again as one whose file was carried over.
fn carried_meanwhile(path: &Path) -> Error {
    Error::State(format!(
        "{} was carried over by another process meanwhile: open the database again",
        path.display()
    ))
}

/// Gives up a claim of `inode` whose file was never linked (the link failed, or another
/// file was at the path first): another process may then carry the file.
fn release_claim(header: &Header, inode: u64) {
    let _ = header.own[1].compare_exchange(inode, SUPERSEDED, Ordering::AcqRel, Ordering::Acquire);
}

/// Stamps `table`, the file whose device and inode are `id`, its own, after a carry into it:
/// unless it is already, or the path names another file by now (replaced again, and stamped
/// SUPERSEDED by whoever saw that: writing over the stamp would let a process still on this
/// file go on below the ids of the file that replaced it). Whether it wrote.
fn stamp_own(table: &Table, path: &Path, id: (u64, u64)) -> bool {
    let own = &table.header.own;
    if (
        own[0].load(Ordering::Acquire),
        own[1].load(Ordering::Acquire),
    ) == id
    {
        return false;
    }
    let here = || std::fs::metadata(path).ok().map(|m| file_id(&m));
    let seen = own[0].load(Ordering::Acquire);
    if here() != Some(id) {
        return false;
    }
    own[1].store(id.1, Ordering::Release);
    let stamped = own[0]
        .compare_exchange(seen, id.0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if stamped && here() != Some(id) {
        // Replaced between the look and the stamp: stamped again (keeping the inode a
        // carry of another process completed meanwhile may have written).
        stamp_superseded(&table.header);
    }
    true
}

/// In a child made by `fork`, before fork returns: every state checks at its next id
/// (`State::check`): a state in process memory seeds its random source anew there, before
/// the parent's next bits are drawn again, and a state file is checked to be the one at
/// its path before the child makes an id of it (within the parent's last millisecond
/// checked too). And the child takes its own lock on each database it uses
/// (`users::forked`), so that the inherited one stands for its parent alone. Only calls
/// that are safe between fork and exec: atomics, open, fcntl, stat.
#[cfg(unix)]
extern "C" fn forked() {
    // On the thread that called fork, the one whose random source the child has: reseeded
    // at its next draw, whichever thread makes the child's first id.
    idkit_core::random::forget_this_thread();
    ALL.each(|state| {
        state.checked_ms.store(0, Ordering::Release);
        // Set up again at the child's first id even if its process id was its parent's
        // (or another ancestor's) once.
        state.pid.store(0, Ordering::Release);
    });
    crate::users::forked();
}

/// Registers [`forked`] once: before the first state or users' lock of this process is
/// made.
pub(crate) fn on_fork() {
    #[cfg(unix)]
    {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        // SAFETY: registers a handler that a child made by fork runs before fork returns:
        // it clears the forking thread's random cells, stores to atomics of states and
        // users already made, and opens, locks and stats files, nothing else.
        REGISTERED.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(forked));
        });
    }
}

/// A table of zeros on the heap (the mapped file is zeros when new, too).
fn zeroed_table() -> Box<Table> {
    // SAFETY: a Table is atomics of u64 only, for which zero is a valid value.
    unsafe { Box::new_zeroed().assume_init() }
}

/// The time-ordered word of millisecond `ms` and counter `counter`.
pub const fn time_ordered_word(ms: u64, counter: u64) -> u64 {
    (ms << COUNTER_BITS) | counter
}

/// Bits of the counter within a millisecond in a time-ordered word (the millisecond above
/// it, 48 bits).
pub const COUNTER_BITS: u32 = 16;

/// The next millisecond and counter of the time-ordered word `word`: the clock's
/// millisecond with a random counter start (its top bit clear) when the clock is past the
/// word's, else the word's counter plus one, or the next millisecond's start when it is
/// full. Ids run ahead of a clock behind them by at most [`MAX_BEHIND_MS`].
///
/// # Errors
///
/// [`Error::ClockBehind`] past that; [`Error::Random`] when no counter start can be drawn.
#[inline(always)]
pub fn step_time_ordered(word: &AtomicU64, clock: &impl Clock) -> Result<(u64, u64), Error> {
    const MAX: u64 = (1 << COUNTER_BITS) - 1;
    let mut last = word.load(Ordering::Acquire);
    loop {
        let now = clock.now_ms();
        let (ms, counter) = (last >> COUNTER_BITS, last & MAX);
        let next = if now > ms {
            time_ordered_word(now, start()?)
        } else if counter < MAX {
            last + 1
        } else {
            time_ordered_word(ms + 1, start()?)
        };
        let next_ms = next >> COUNTER_BITS;
        if next_ms > now.saturating_add(MAX_BEHIND_MS) {
            return Err(Error::ClockBehind {
                now_ms: now,
                last_ms: ms,
            });
        }
        match word.compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Ok((next_ms, next & MAX)),
            Err(seen) => last = seen,
        }
    }
}

/// A new millisecond's counter start: random, its top bit clear (half the counter left).
fn start() -> Result<u64, Error> {
    let bits = ThreadRandom.u64().map_err(Error::Random)?;
    Ok(bits & ((1 << (COUNTER_BITS - 1)) - 1))
}

/// The word of `key` in `table` (of this process only), laid out with `initial` when new.
#[cfg(test)]
fn claim(table: &'static Table, key: &str, initial: u64) -> Option<&'static AtomicU64> {
    claim_locked(table, key, initial, None).unwrap()
}

/// The word of `key` in `table`, laid out with `initial` when new: a key not laid out yet
/// is claimed holding this process's claim lock and the lock of `file`, the state file
/// open (`idkit_core::slots`), so that a claimer stopped half way makes the others wait.
///
/// # Errors
///
/// [`Error::Io`] when the state file's lock cannot be taken.
fn claim_locked(
    table: &'static Table,
    key: &str,
    initial: u64,
    file: Option<&std::fs::File>,
) -> Result<Option<&'static AtomicU64>, Error> {
    slots::claim(&table.slots, key, initial, || ClaimLock::take(file))
}

/// The claim lock of this process's threads and, with a state file, of every process: the
/// file's lock (`flock`, which a process's end releases) taken after the threads' mutex,
/// since threads of one process share the open file and with it its lock.
struct ClaimLock<'a> {
    _threads: std::sync::MutexGuard<'static, ()>,
    file: Option<&'a std::fs::File>,
}

impl<'a> ClaimLock<'a> {
    fn take(file: Option<&'a std::fs::File>) -> Result<Self, Error> {
        static THREADS: Mutex<()> = Mutex::new(());
        let threads = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = file {
            // flock: sleeps while another process holds it.
            file.lock().map_err(|e| {
                Error::Io(format!("cannot lock the state file to claim a slot: {e}"))
            })?;
        }
        Ok(ClaimLock {
            _threads: threads,
            file,
        })
    }
}

impl Drop for ClaimLock<'_> {
    fn drop(&mut self) {
        if let Some(file) = self.file {
            let _ = file.unlock();
        }
    }
}

/// This boot of the machine (Linux's boot id), or zeros where it cannot be read: a change
/// means the machine started again, and the words may have lost their last writes.
fn boot_id() -> [u64; 2] {
    let Ok(text) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") else {
        return [0, 0];
    };
    let hex: String = text.chars().filter(char::is_ascii_hexdigit).collect();
    let id = u128::from_str_radix(&hex, 16).unwrap_or(0);
    [(id >> 64) as u64, id as u64]
}

/// A state file mapped, the file open, and its device and inode.
type Mapped = (&'static Table, std::fs::File, (u64, u64));

/// `path` mapped (made when missing, its generators moved above the mark when the machine
/// started again since), or `None` when it cannot be opened or made for writing.
///
/// With `database`, this process holds a lock on the database file once it maps the state
/// file, for as long as it runs ([`Users`]), and a missing state file is made only while no
/// other process holds one: a state file removed while processes use it is not made again
/// from nothing under them. `carried` is the floor of a state file made again by a process that
/// used the removed one (every id that one gave is at or below it): made whoever holds the
/// lock, or raised to it when another process made it first; `carried_from`, that file: the
/// file made (holding its words) or found is claimed in its header before any id of it
/// (see [`claim_successor`]).
fn map(
    path: &Path,
    database: Option<&Path>,
    carried: Option<u64>,
    made_floor: u64,
    carried_from: Option<&Table>,
) -> Result<Option<Mapped>, Error> {
    let users = database.map(Users::of).transpose()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(MISSING_WAIT_MS);
    loop {
        let file = match OpenOptions::new().read(true).write(true).open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match make(
                    path,
                    database,
                    users,
                    carried.unwrap_or(made_floor),
                    carried.is_some(),
                    carried_from,
                )? {
                    Made::Nothing => return Ok(None),
                    Made::Theirs => continue,
                    // Mapped through the descriptor it was made with, not opened again by
                    // its path, where another file may be by now: this process is on the
                    // file it claimed, and carries it on if it is gone.
                    Made::Ours(file) => file,
                }
            }
            Err(e) if read_only(&e) => {
                if let Some(database) = database
                    && writable(database)
                {
                    // Its ids would be this process's own (a state in memory), out of order
                    // with the others' and unkept across restarts: refused.
                    return Err(Error::State(format!(
                        "{} cannot be opened for writing ({e}) while the database can: it was \
                         made by another user or with another mode; give it the database \
                         file's owner and mode (chown, chmod), as SQLite gives its -wal and \
                         -shm files",
                        path.display()
                    )));
                }
                return Ok(None);
            }
            Err(e) => return Err(Error::io(path, "open", e)),
        };
        let id = file_id(&file.metadata().map_err(|e| Error::io(path, "read", e))?);
        // One process at a time lays the file out or checks its boot.
        file.lock().map_err(|e| Error::io(path, "lock", e))?;
        let mut empty = false;
        let laid_out = lay_out(&file, path).and_then(|(table, fresh)| {
            empty = fresh;
            // Claimed once it is known to be a whole state file (a copy half written by a
            // restore is not), before any id of this process's from it.
            let adopted = match carried_from {
                // Another process claimed the carry of the same file into another: this
                // one tries again as a process whose file was carried over
                // (`State::carry_over`).
                Some(old) if !claim_successor(&old.header, id.1) => Err(carried_meanwhile(path)),
                _ => adopt(table, path, id, users, carried, made_floor, fresh),
            };
            if !matches!(adopted, Ok(Some(_))) {
                // Not used: a process waiting on a copy maps it again every 10 ms, and
                // each mapping kept would be address space (and a file in /proc/PID/maps)
                // for the life of the process.
                unmap(table);
            }
            adopted
        });
        // Unlocked by hand: the mapping holds the open file, and with it a lock that
        // closing the file would not release.
        file.unlock().map_err(|e| Error::io(path, "unlock", e))?;
        match laid_out? {
            Some(table) => {
                if let Some(users) = users {
                    users.hold()?;
                }
                return Ok(Some((table, file, id)));
            }
            // A copy that the processes using the file it replaced have not carried their
            // ids into yet: they do at their next id.
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            None => {
                return Err(Error::State(format!(
                    "{} is {} while other processes on the database still use the file it \
                     replaced: their ids are not in it yet, and it could repeat them; they \
                     carry them into it at their next id (or end them, or put their file \
                     back), then open the database again",
                    path.display(),
                    if empty {
                        "empty (made by another program, or truncated: then it refuses \
                         until they end)"
                    } else {
                        "a copy of the state file (a restore, an rsync)"
                    }
                )));
            }
        }
    }
}

/// The state file at `path` mapped for a process whose own file was carried over by
/// another ([`State::carry_over`]): as [`map`] with nothing carried (a file it makes, with
/// the database to itself, starts at its `floor`), except that with no
/// database to ask (a state file given by its path) a missing file is waited for and never
/// made, since this process cannot know that no one uses the newer one.
///
/// # Errors
///
/// As [`map`], and [`Error::State`] when the file stays missing for [`MISSING_WAIT_MS`].
fn map_stale(path: &Path, database: Option<&Path>, floor: u64) -> Result<Option<Mapped>, Error> {
    if database.is_none() {
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_millis(MISSING_WAIT_MS);
        while !path.exists() {
            if std::time::Instant::now() >= deadline {
                return Err(Error::State(format!(
                    "{} is missing, and this process's file was carried into a newer one \
                     that it cannot see: the processes on that one make it again at their \
                     next id (or end them, or put the file back)",
                    path.display()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    map(path, database, None, floor, None)
}

/// Whether the state file laid out as `table`, whose device and inode are `id`, can be used
/// here (under the file's lock): a file that is its own (its header names `id`), or one
/// this process makes its own. A copy of another state file (a restore, an rsync: its
/// header names the original) is made its own by a process carrying a file's ids into it
/// (`carried`, whose floor it takes) or by one that has the database to itself, every
/// generator then starting above the copy's mark as after a restart of the machine; with
/// other processes on the database and no carried floor, `None`: wait for them to carry.
/// A `fresh` file, of zeros (empty: `rm` then `touch`, or truncated in place) is such a
/// copy, of nothing, laid out here once this process may use it, its generators then
/// starting above the clock too. Truncated in place under running processes, it has no
/// carrier (the file at the path is theirs): it waits until they end, each having refused
/// at its next id (found by a review: laid out by one of them, it could start below the
/// ids another gave ahead of a clock set back). `at_least`: a floor the file is raised to
/// in any case (0 for none).
fn adopt(
    table: &'static Table,
    path: &Path,
    id: (u64, u64),
    users: Option<&'static Users>,
    carried: Option<u64>,
    at_least: u64,
    fresh: bool,
) -> Result<Option<&'static Table>, Error> {
    let header = &table.header;
    let own = (
        header.own[0].load(Ordering::Acquire),
        header.own[1].load(Ordering::Acquire),
    );
    // A file of an earlier build names no file (zeros) and is its own.
    let copy = fresh || (own != id && own != (0, 0));
    // Every id given on this machine so far, except those run ahead of a clock set back.
    let now = if fresh { SystemClock.now_ms() } else { 0 };
    let floor = match carried {
        Some(floor) => Some(floor),
        None if copy => {
            if let Some(users) = users
                && !users.alone()?
            {
                return Ok(None);
            }
            Some(
                header
                    .mark
                    .load(Ordering::Acquire)
                    .max(header.durable.load(Ordering::Acquire))
                    .max(header.floor.load(Ordering::Acquire))
                    .max(at_least)
                    .max(now),
            )
        }
        // A process whose own file was carried over raises the file to its floor here,
        // under the lock, before any other process lays it out (`State::carry_over`).
        None => (at_least > header.floor.load(Ordering::Acquire)).then_some(at_least),
    }
    // A floor above the mark: a process found the file written over in place with an older
    // copy (`State::check`), and raised the floor above the ids it gave; the mark follows.
    .or_else(|| {
        let floor = header.floor.load(Ordering::Acquire);
        (floor > header.durable.load(Ordering::Acquire)).then_some(floor)
    });
    if let Some(floor) = floor {
        header.floor.fetch_max(floor, Ordering::AcqRel);
        header.mark.fetch_max(floor, Ordering::AcqRel);
        header.durable.fetch_max(floor, Ordering::AcqRel);
    }
    if fresh {
        let boot = boot_id();
        header.boot[0].store(boot[0], Ordering::Relaxed);
        header.boot[1].store(boot[1], Ordering::Relaxed);
        header.magic.store(MAGIC, Ordering::Release);
    }
    // A process carrying its words in stamps the file its own only once they are in
    // ([`State::carry_over`]): until then a file put back in place keeps its SUPERSEDED
    // stamp, and its processes refuse rather than go on from its old words.
    if own != id && carried.is_none() {
        header.own[0].store(id.0, Ordering::Release);
        header.own[1].store(id.1, Ordering::Release);
    }
    if floor.is_some() || own != id || fresh {
        sync(table).map_err(|e| match e {
            Error::Io(said) => Error::Io(format!("{said} ({})", path.display())),
            other => other,
        })?;
    }
    Ok(Some(table))
}

/// An error of a file that cannot be written here.
fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// A file's device and inode.
#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// How long a process that finds the state file missing waits for the other processes on
/// the database to let go of it, or for the file to appear, ms.
const MISSING_WAIT_MS: u64 = 1_000;

/// Makes the state file `path`, its generators starting above `floor`: written whole
/// (every block allocated, so that a full disk is an error here, not a `SIGBUS` later),
/// synced, then linked into place and the directory synced. Without `carrying`, only while
/// no other process holds the database's lock (`users`). See [`Made`] for what it returns.
///
/// # Errors
///
/// [`Error::State`] when other processes go on holding the database's lock with the state
/// file missing for [`MISSING_WAIT_MS`]; [`Error::Io`] when it cannot be written or synced.
/// What [`make`] did.
enum Made {
    /// Nothing: the file cannot be written here (a read-only directory).
    Nothing,
    /// Made and linked into place by this process: the file, open for reading and writing.
    Ours(std::fs::File),
    /// Another process's file is at the path (made first, or while this one waited).
    Theirs,
}

fn make(
    path: &Path,
    database: Option<&Path>,
    users: Option<&'static Users>,
    floor: u64,
    carrying: bool,
    carried_from: Option<&Table>,
) -> Result<Made, Error> {
    match users {
        Some(users) if !carrying => {
            let deadline =
                std::time::Instant::now() + std::time::Duration::from_millis(MISSING_WAIT_MS);
            loop {
                if users.alone()? {
                    break;
                }
                if path.exists() {
                    return Ok(Made::Theirs);
                }
                if std::time::Instant::now() >= deadline {
                    return Err(Error::State(format!(
                        "{} is missing while other processes have the database open with \
                         idkit: it was removed while they used it, and a new one could repeat \
                         their ids; they make it again at their next id (or end them, or put \
                         the file back)",
                        path.display()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        _ => {}
    }
    write_new(path, floor, database, carried_from)
}

/// Whether this process may write `path` (its effective user and groups), asked without
/// opening it: closing a descriptor of the database would drop SQLite's locks on it.
#[cfg(unix)]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path, relative to the working directory.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(not(unix))]
fn writable(_path: &Path) -> bool {
    false
}

/// The new state file given the database file's mode (its permission bits, whatever the
/// umask) and, for a process of root, its owner: every user who may write the database may
/// write its state file, as SQLite does for its `-wal` and `-shm` files.
#[cfg(unix)]
fn like_database(file: &std::fs::File, database: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(database)?;
    file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o777))?;
    // SAFETY: asks for this process's effective user id.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn like_database(_file: &std::fs::File, _database: &Path) -> std::io::Result<()> {
    Ok(())
}

/// [`make`]'s file: written beside `path` under a name of this process's, then linked.
fn write_new(
    path: &Path,
    floor: u64,
    database: Option<&Path>,
    carried_from: Option<&Table>,
) -> Result<Made, Error> {
    use std::io::Write;
    // A name no other process uses (process ids repeat across containers sharing a
    // directory), made only if it is not there.
    let mut name = path.as_os_str().to_owned();
    let nonce = ThreadRandom.u64().map_err(Error::Random)?;
    name.push(format!(".new-{}-{nonce:016x}", std::process::id()));
    let new = PathBuf::from(name);
    let mut file = match OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&new)
    {
        Ok(file) => file,
        Err(e) if read_only(&e) => return Ok(Made::Nothing),
        Err(e) => return Err(Error::io(&new, "create", e)),
    };
    if let Some(database) = database
        && let Err(e) = like_database(&file, database)
    {
        let _ = std::fs::remove_file(&new);
        return Err(Error::io(&new, "give the database's mode and owner to", e));
    }
    let table = zeroed_table();
    let header = &table.header;
    let boot = boot_id();
    header.boot[0].store(boot[0], Ordering::Relaxed);
    header.boot[1].store(boot[1], Ordering::Relaxed);
    for word in [&header.floor, &header.mark, &header.durable] {
        word.store(floor, Ordering::Relaxed);
    }
    // Linked into place, not copied: the inode it is made with is the one it keeps.
    let own = file_id(&file.metadata().map_err(|e| Error::io(&new, "read", e))?);
    header.own[0].store(own.0, Ordering::Relaxed);
    header.own[1].store(own.1, Ordering::Relaxed);
    header.magic.store(MAGIC, Ordering::Relaxed);
    if let Some(old) = carried_from {
        // The carried words in it before it is linked, not only after (`State::carry_over`):
        // a process that maps it in between (a connection opened meanwhile) would
        // otherwise start a generator at the old file's floor, below an id another
        // process made from the old word before the stamp (found by a review: a ULID in
        // the millisecond past the old mark, not yet covered by it). Every id made from
        // the old words after the stamp is refused (`cover`), so these are all of them.
        let _ = slots::carry(&old.slots, &table.slots, || Ok::<(), Error>(()));
    }
    // SAFETY: a Table is plain memory of FILE_BYTES bytes (atomics of u64).
    let bytes =
        unsafe { std::slice::from_raw_parts(std::ptr::from_ref(&*table).cast::<u8>(), FILE_BYTES) };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&new, "write", e))
        .and_then(|()| match carried_from {
            Some(old) if !claim_successor(&old.header, own.1) => Err(carried_meanwhile(path)),
            _ => Ok(()),
        });
    let linked = written.and_then(|()| {
        let placed = place(&new, path);
        if placed.is_err()
            && let Some(old) = carried_from
        {
            // Never linked: the claim given up.
            release_claim(&old.header, own.1);
        }
        match placed {
            Ok(()) => Ok(true),
            // Another process made it first: theirs is used (and claimed in its turn).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(Error::io(path, "link", e)),
        }
    });
    let _ = std::fs::remove_file(&new);
    let ours = linked?;
    sync_directory(path)?;
    Ok(if ours { Made::Ours(file) } else { Made::Theirs })
}

/// `new` put at `path` unless a file is there (`AlreadyExists` then): a hard link, or where
/// the file system has none (exFAT, SMB), a rename that replaces nothing.
fn place(new: &Path, path: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(new, path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => rename_no_replace(new, path),
        linked => linked,
    }
}

#[cfg(target_os = "linux")]
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths, relative to the working directory.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn rename_no_replace(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// The directory of `path` synced: a file made in it is there after a crash.
fn sync_directory(path: &Path) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, "sync", e))
}

/// Maps the locked `file` at `path`, and moves its generators above the mark when the
/// machine started again since; with whether it is fresh (empty or zeros, as another
/// program or a truncation leaves it), which [`adopt`] lays out.
fn lay_out(file: &std::fs::File, path: &Path) -> Result<(&'static Table, bool), Error> {
    let len = file
        .metadata()
        .map_err(|e| Error::io(path, "read", e))?
        .len();
    // Shorter and all zeros: empty, or left so by a process that was writing the zeros
    // below when the disk filled or it was killed (found by the hunt: every process then
    // refused the file for its size).
    let zeros =
        len < FILE_BYTES as u64 && all_zeros(file).map_err(|e| Error::io(path, "read", e))?;
    if len != FILE_BYTES as u64 && !zeros {
        return Err(Error::State(format!(
            "{} is {len} bytes, not an idkit state file of this version ({FILE_BYTES} bytes)",
            path.display()
        )));
    }
    if zeros {
        // An empty file (made by another program): zeros written, not a sparse size, so that
        // a full disk is an error here rather than a SIGBUS at the first write to a page.
        write_zeros(file).map_err(|e| Error::io(path, "write", e))?;
    }
    let table = mmap(file, path)?;
    let header = &table.header;
    let magic = header.magic.load(Ordering::Acquire);
    let boot = boot_id();
    if magic == 0 {
        // Laid out by `adopt`, only if this process may use it: until then, zeros again to
        // the next process that maps it.
        return Ok((table, true));
    } else if magic == MAGIC_V2 {
        // The same words under the same keys; `adopt` stamps the device and inode.
        header.magic.store(MAGIC, Ordering::Release);
        sync(table)?;
    } else if magic == MAGIC_V1 {
        // The earlier layout: its Snowflake words are found under other names now, so
        // every generator starts above its mark, as after a restart of the machine.
        let floor = header
            .mark
            .load(Ordering::Relaxed)
            .max(header.durable.load(Ordering::Relaxed))
            .max(header.floor.load(Ordering::Relaxed));
        header.floor.store(floor, Ordering::Release);
        header.mark.store(floor, Ordering::Relaxed);
        header.durable.store(floor, Ordering::Release);
        header.magic.store(MAGIC, Ordering::Release);
        sync(table)?;
    } else if magic != MAGIC {
        return Err(Error::State(format!(
            "{} is not an idkit state file of this version",
            path.display()
        )));
    } else if boot != [0, 0]
        && [
            header.boot[0].load(Ordering::Relaxed),
            header.boot[1].load(Ordering::Relaxed),
        ] != boot
    {
        // The machine started again: what is on disk is all there is, and the mark on
        // disk covers every id issued before.
        let floor = header
            .mark
            .load(Ordering::Relaxed)
            .max(header.durable.load(Ordering::Relaxed))
            .max(header.floor.load(Ordering::Relaxed));
        header.floor.store(floor, Ordering::Release);
        header.mark.store(floor, Ordering::Relaxed);
        header.durable.store(floor, Ordering::Release);
        header.boot[0].store(boot[0], Ordering::Relaxed);
        header.boot[1].store(boot[1], Ordering::Relaxed);
        sync(table)?;
    }
    Ok((table, false))
}

/// Whether `file` holds only zero bytes (read from its start).
fn all_zeros(file: &std::fs::File) -> std::io::Result<bool> {
    use std::io::Read;
    let mut buf = vec![0; 64 * 1024];
    let mut reader = file;
    loop {
        match reader.read(&mut buf)? {
            0 => return Ok(true),
            n if buf[..n].iter().any(|&b| b != 0) => return Ok(false),
            _ => {}
        }
    }
}

/// [`FILE_BYTES`] zeros written at the start of `file`, and synced.
#[cfg(unix)]
fn write_zeros(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(&vec![0; FILE_BYTES], 0)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_zeros(file: &std::fs::File) -> std::io::Result<()> {
    file.set_len(FILE_BYTES as u64)
}

#[cfg(unix)]
fn mmap(file: &std::fs::File, path: &Path) -> Result<&'static Table, Error> {
    use std::os::fd::AsRawFd;
    // SAFETY: a shared mapping of the whole file, read and write, unmapped only by
    // [`unmap`] before any reference to it is kept: once used, the reference lives as long
    // as the process. Every access to it is atomic.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            FILE_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(Error::io(path, "map", std::io::Error::last_os_error()));
    }
    // SAFETY: the mapping is page-aligned (so aligned for Table) and FILE_BYTES long.
    Ok(unsafe { &*at.cast::<Table>() })
}

#[cfg(not(unix))]
fn mmap(_file: &std::fs::File, path: &Path) -> Result<&'static Table, Error> {
    Err(Error::State(format!(
        "{}: a shared state file needs a Unix system",
        path.display()
    )))
}

/// Unmaps `table`, mapped by [`mmap`] and never handed out.
#[cfg(unix)]
fn unmap(table: &'static Table) {
    // SAFETY: the whole mapping `mmap` made; no reference to it is kept (the caller's is
    // the only one, and it is dropped).
    unsafe {
        libc::munmap(std::ptr::from_ref(table).cast_mut().cast(), FILE_BYTES);
    }
}

#[cfg(not(unix))]
fn unmap(_table: &'static Table) {}

/// Writes the file's first page (the header) to disk.
#[cfg(unix)]
fn sync(table: &'static Table) -> Result<(), Error> {
    // SAFETY: the header is at the mapping's start, which is page-aligned.
    let rc = unsafe {
        libc::msync(
            std::ptr::from_ref(table).cast_mut().cast(),
            size_of::<Header>(),
            libc::MS_SYNC,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Io(format!(
            "syncing the high-water mark: {}",
            std::io::Error::last_os_error()
        )))
    }
}

#[cfg(not(unix))]
fn sync(_table: &'static Table) -> Result<(), Error> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use idkit_core::ManualClock;

    #[test]
    fn the_file_is_a_header_and_its_slots_on_cache_lines() {
        assert_eq!(size_of::<Header>(), 64);
        assert_eq!(size_of::<Slot>(), 64);
        assert_eq!(FILE_BYTES, 64 * (SLOTS + 1));
    }

    #[test]
    fn a_time_ordered_word_counts_within_a_millisecond_then_runs_ahead_up_to_the_bound() {
        let clock = ManualClock::new(5_000);
        let word = AtomicU64::new(0);
        let (ms, first) = step_time_ordered(&word, &clock).unwrap();
        assert_eq!(ms, 5_000);
        assert!(first < 1 << 15);
        assert_eq!(
            step_time_ordered(&word, &clock).unwrap(),
            (5_000, first + 1)
        );
        // The counter full: the next millisecond, ahead of the clock.
        word.store(time_ordered_word(5_000, (1 << 16) - 1), Ordering::Relaxed);
        assert_eq!(step_time_ordered(&word, &clock).unwrap().0, 5_001);
        // A clock far behind the last id: refused, the word kept.
        word.store(
            time_ordered_word(5_000 + MAX_BEHIND_MS, 7),
            Ordering::Relaxed,
        );
        clock.set(4_999);
        let before = word.load(Ordering::Relaxed);
        assert!(matches!(
            step_time_ordered(&word, &clock),
            Err(Error::ClockBehind { now_ms: 4_999, .. })
        ));
        assert_eq!(word.load(Ordering::Relaxed), before);
        clock.set(5_000);
        assert_eq!(
            step_time_ordered(&word, &clock).unwrap(),
            (5_000 + MAX_BEHIND_MS, 8)
        );
    }

    /// A mapping of the state file at `path` of its own, as another process has it, made
    /// the one FILES names for the path (the carrier maps the file at the path and puts it
    /// there).
    fn mapping(path: &Path) -> &'static State {
        let mapped = map(path, None, None, 0, None).unwrap().unwrap();
        let state = State::over(mapped, path.to_owned(), None).unwrap();
        FILES
            .lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .insert(path.to_owned(), state);
        state
    }

    /// The state FILES names for `path`: the one a carry into it made.
    fn at_path(path: &Path) -> &'static State {
        FILES.lock().unwrap().as_ref().unwrap()[path]
    }

    /// A state that waits in GONE to carry its words into `path`, taken out.
    fn waiting_in_gone(path: &Path) -> &'static State {
        GONE.lock()
            .unwrap()
            .as_mut()
            .and_then(|gone| gone.remove(path))
            .and_then(|mut waiting| waiting.pop())
            .expect("a state waits in GONE to carry its words")
    }

    /// `state`'s words carried into the file at `path`, as opening the path does.
    fn carry_into(state: &'static State, path: &Path) -> Result<(), Error> {
        state.carry_over(path, FILES.lock().unwrap().get_or_insert_with(HashMap::new))
    }

    /// A scratch directory with a state file in it, mapped twice as two processes have it,
    /// each of which covered an id of this millisecond: the directory, the file, the two
    /// mappings and the millisecond.
    fn two_processes(
        name: &str,
    ) -> (
        idkit_testkit::Scratch,
        PathBuf,
        &'static State,
        &'static State,
        u64,
    ) {
        let dir = idkit_testkit::Scratch::new(name);
        let path = dir.join("ids-idkit");
        let (one, other) = (mapping(&path), mapping(&path));
        assert!(!std::ptr::eq(one.table, other.table), "two mappings");
        let ms = SystemClock.now_ms();
        one.cover(ms, 1).unwrap();
        other.cover(ms, 1).unwrap();
        (dir, path, one, other, ms)
    }

    /// Two mappings of one state file, as two processes have it: once one carried the file's
    /// ids into the file now at its path (it was replaced), the other refuses its next id
    /// even within the millisecond it already checked, whose id would sort below the ids
    /// made in the new file. Found by the hunt (seed 2735132311: a ULID of a process still on
    /// the replaced file committed after one of the file that replaced it, 830 ms lower).
    #[test]
    fn once_one_process_carried_the_file_over_the_others_refuse_their_next_id() {
        let (dir, path, one, other, ms) = two_processes("sqlite-state-superseded");
        // The file replaced by a copy (rsync), then `one` at its next millisecond.
        let copy = dir.join("copy");
        std::fs::copy(&path, &copy).unwrap();
        std::fs::rename(&copy, &path).unwrap();
        let said = one.cover(ms + 1, 0).unwrap_err().to_string();
        assert!(said.contains("open the database again"), "{said}");
        let carried = at_path(&path);
        assert!(
            carried.floor_ms() >= ms,
            "carried above the old file's mark"
        );
        // `other` in the millisecond it checked already: refused, not an id below those
        // of the file at the path.
        let said = other.cover(ms, 2).unwrap_err().to_string();
        assert!(said.contains("open the database again"), "{said}");
        assert!(other.cover(ms, 3).is_err(), "and from then on");
    }

    /// A process whose file another carried over makes no file from its own floor: the
    /// file it was carried into may have given ids far above that floor and been removed
    /// since. It waits for the file at the path (made by the processes on the newer one)
    /// and carries into that. Found by the hunt (seed 1694996744: an attaching writer's
    /// ULID 2,012 ms below the row before it, after the state file was removed twice).
    #[test]
    fn a_file_carried_over_by_another_makes_no_file_below_the_newer_ones_ids() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-stale");
        // Removed; `one` carries it into a new file, whose ids run 3 s further.
        std::fs::remove_file(&path).unwrap();
        assert!(one.cover(ms + 1, 0).is_err());
        let newer = at_path(&path);
        newer.cover(ms + 3_000, 1).unwrap();
        let newer_mark = newer.mark_ms();
        assert!(newer_mark > ms + 3_000);
        // That one removed too, before `other` looks: `other` refuses and makes nothing
        // (the old way, a file at its own floor, below the newer file's ids).
        std::fs::remove_file(&path).unwrap();
        let said = other.cover(ms + 1, 0).unwrap_err().to_string();
        assert!(said.contains("open the database again"), "{said}");
        assert!(
            !path.exists(),
            "a file made from a floor below {newer_mark}"
        );
        // The newer file's process carries it into a file at the path; then `other`'s
        // words go into that one, which keeps the newer floor.
        assert!(newer.cover(ms + 3_001, 0).is_err());
        let newest = at_path(&path);
        assert!(newest.floor_ms() >= newer_mark);
        carry_into(waiting_in_gone(&path), &path).unwrap();
        let carried = at_path(&path);
        assert!(carried.floor_ms() >= newer_mark, "not lowered");
    }

    /// A carry that failed (a full disk, something else at the path) stamps the file but
    /// names no newer one: another process on it then carries it as before, from its own
    /// floor, rather than wait for a file no one will make.
    #[test]
    fn a_carry_that_failed_leaves_the_others_to_carry() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-failed-carry");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(one.cover(ms + 1, 0).is_err(), "its carry fails");
        std::fs::remove_dir(&path).unwrap();
        assert!(other.cover(ms + 1, 0).is_err());
        assert!(path.exists(), "carried by the other");
        let carried = at_path(&path);
        assert!(carried.floor_ms() >= ms);
    }

    /// A carry that failed (a full disk) is tried again when the path is opened next; by
    /// then another process may have carried the file into a newer one, whose ids ran past
    /// this file's floor, and that newer file may have been removed. The carry tried again
    /// makes no file from this file's floor; it waits for the newer file's processes and
    /// carries into theirs. Found by the hunt (seed 1638495754: an attaching writer's ULID
    /// 440 ms below the row committed before it, from a file carried from the older floor).
    #[test]
    fn a_carry_tried_again_after_another_carried_the_file_makes_no_file_below_its_ids() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-retried-carry");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(one.cover(ms + 1, 0).is_err(), "its carry fails");
        std::fs::remove_dir(&path).unwrap();
        // `other` carries the file into a new one, whose ids run 3 s further; then that
        // one is removed before its process looks again.
        assert!(other.cover(ms + 1, 0).is_err());
        let newer = at_path(&path);
        newer.cover(ms + 3_000, 1).unwrap();
        let newer_mark = newer.mark_ms();
        std::fs::remove_file(&path).unwrap();
        // `one` tries its carry again (the path opened again): refused, nothing made.
        let tried = carry_into(waiting_in_gone(&path), &path);
        assert!(tried.is_err(), "carried into a file it made itself");
        assert!(
            !path.exists(),
            "a file made from a floor below {newer_mark}"
        );
        // The newer file's process makes the file at the path; `one`'s words go into it,
        // which keeps the newer floor.
        assert!(newer.cover(ms + 3_001, 0).is_err());
        let newest = at_path(&path);
        assert!(newest.floor_ms() >= newer_mark);
        carry_into(one, &path).unwrap();
        let carried = at_path(&path);
        assert!(carried.floor_ms() >= newer_mark, "not lowered");
    }

    /// Two processes carrying one file: the one that decided to make a file at the path
    /// (none was there) but links it only after the other made, used and lost its own
    /// makes none, since the other's ids may be above the floor it would start from. The
    /// claim in the old file's header, before the link, decides (found by a review).
    #[test]
    fn of_two_processes_carrying_one_file_only_the_first_to_claim_makes_one() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-claim");
        std::fs::remove_file(&path).unwrap();
        let floor = other.mark_ms();
        // `one` carries the file into a new one, whose ids run 3 s further; then that one
        // is removed.
        assert!(one.cover(ms + 1, 0).is_err());
        let newer = at_path(&path);
        newer.cover(ms + 3_000, 1).unwrap();
        std::fs::remove_file(&path).unwrap();
        // `other`, which decided to make the file before `one` claimed it, links nothing.
        let made = write_new(&path, floor, None, Some(other.table));
        assert!(made.is_err(), "linked a file from {floor}");
        assert!(!path.exists());
        // Nor may any other file be claimed for it; the one claimed stays claimed, and a
        // claim of a file never linked, given up, leaves the carry to any process.
        let header = &one.table.header;
        let claimed = header.own[1].load(Ordering::Acquire);
        assert!(!claim_successor(header, 12_345));
        assert!(claim_successor(header, claimed));
        release_claim(header, claimed);
        assert!(!carried_by_another(header));
        assert!(claim_successor(header, 12_345));
    }

    /// The file written over in place with `bytes` (`cp`, `rsync --inplace`), without
    /// truncating it (which would fault the mappings).
    fn write_over(path: &Path, bytes: &[u8]) {
        use std::os::unix::fs::FileExt;
        let file = OpenOptions::new().write(true).open(path).unwrap();
        file.write_all_at(bytes, 0).unwrap();
    }

    /// A process that mapped the file after a copy of it was taken, and made no id since,
    /// refuses at its first id once the copy is written over the file: what it saw when it
    /// mapped the file is newer than the copy. Found by a review: a process's seen mark
    /// started at 0, and only processes that had moved the mark noticed.
    #[test]
    fn a_process_that_mapped_the_file_after_a_copy_was_taken_refuses_the_copy() {
        let dir = idkit_testkit::Scratch::new("sqlite-state-mapped-after-copy");
        let path = dir.join("ids-idkit");
        let one = mapping(&path);
        let ms = SystemClock.now_ms();
        one.cover(ms, 1).unwrap();
        let copy = std::fs::read(&path).unwrap();
        // Ids of a later window, then a process that maps the file and makes none yet.
        one.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        let other = mapping(&path);
        write_over(&path, &copy);
        let said = other.cover(ms + 2 * WINDOW_MS, 2).unwrap_err().to_string();
        assert!(said.contains("written over"), "{said}");
    }

    /// Once a process finds the file written over in place with an older copy, every other
    /// process mapping it refuses at its next id, even one that saw no mark newer than the
    /// copy's and within the millisecond it checked: the words they share are the copy's,
    /// which the count of copies found ([`GENERATION`]) says. Found by a review: only
    /// processes that had seen a newer mark refused.
    #[test]
    fn once_a_process_finds_an_older_copy_written_over_the_file_every_process_refuses() {
        let (dir, path, one, other, ms) = two_processes("sqlite-state-written-over-floor");
        let copy = std::fs::read(&path).unwrap();
        let _ = dir;
        // `one` moves the mark on; `other` makes no id meanwhile (it saw the copy's mark).
        one.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        write_over(&path, &copy);
        assert!(one.cover(ms + 2 * WINDOW_MS, 2).is_err());
        assert!(
            one.floor_ms() >= ms + 2 * WINDOW_MS,
            "the floor raised to its ids (generators start above it)"
        );
        let said = other.cover(ms, 2).unwrap_err().to_string();
        assert!(said.contains("written over"), "{said}");
        // What `one` gave is kept for the next file at the path, whatever happens to this one.
        assert!(remembered(&path) >= ms + 2 * WINDOW_MS);
        // A connection opened again lays the file out above them (its generators start
        // above the floor).
        let again = mapping(&path);
        assert!(again.floor_ms() >= ms + 2 * WINDOW_MS);
        again.cover(SystemClock.now_ms(), 1).unwrap();
    }

    /// A process that saw the same mark as the one that finds the copy (every process that
    /// checked since the mark last moved did) refuses too, even after the finder opened the
    /// file again and raised the mark to the floor: it goes on from the copy's words
    /// otherwise. Found by a review.
    #[test]
    fn a_process_that_saw_the_finders_mark_refuses_after_the_finder_opened_the_file_again() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-written-over-same-mark");
        let word = other.word("a generator", 0).unwrap();
        word.store(1_000, Ordering::SeqCst);
        let copy = std::fs::read(&path).unwrap();
        one.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        other.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        word.store(5_000, Ordering::SeqCst);
        write_over(&path, &copy);
        assert!(one.cover(ms + 2 * WINDOW_MS, 2).is_err());
        // The finder's connection opened again: the floor is whole, the mark raised to it.
        let again = mapping(&path);
        again.cover(SystemClock.now_ms(), 1).unwrap();
        assert!(other.cover(ms + 2 * WINDOW_MS, 3).is_err());
        assert!(other.cover(ms + 2 * WINDOW_MS + 1, 1).is_err());
    }

    /// The state at `path` as a connection opened again maps it: raised to the floor this
    /// process keeps for the path.
    fn reopened(path: &Path) -> &'static State {
        let mapped = map(path, None, None, remembered(path), None)
            .unwrap()
            .unwrap();
        State::over(mapped, path.to_owned(), None).unwrap()
    }

    /// After an older copy is written over the file, the process that finds it and one that
    /// refuses at the raised floor each open the file again once, and then both go on, the
    /// mark moving on between their ids. Found by a review: each kept the live mark as its
    /// floor, raised the file to it when opened again, and made the other refuse, without
    /// end.
    #[test]
    fn after_a_copy_is_found_the_processes_open_the_file_again_once_each() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-no-refusal-storm");
        let copy = std::fs::read(&path).unwrap();
        let t = ms + 2 * WINDOW_MS;
        one.cover(t, 1).unwrap();
        other.cover(t, 1).unwrap();
        write_over(&path, &copy);
        assert!(one.cover(t, 2).is_err());
        let one = reopened(&path);
        one.cover(t + WINDOW_MS, 1).unwrap();
        assert!(other.cover(t, 2).is_err());
        let other = reopened(&path);
        for round in 2..8 {
            let at = t + round * WINDOW_MS;
            one.cover(at, 1).unwrap();
            other.cover(at, 1).unwrap();
        }
    }

    /// A file of zeros shorter than a state file (zeros being written when the disk filled,
    /// or the writer was killed) is laid out as an empty one; one with other bytes is not a
    /// state file. Found by the hunt: every process refused the file for its size.
    #[test]
    fn a_file_of_zeros_cut_short_is_laid_out_and_other_bytes_are_refused() {
        let dir = idkit_testkit::Scratch::new("sqlite-state-short-zeros");
        let path = dir.join("ids-idkit");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let state = mapping(&path);
        state.cover(SystemClock.now_ms(), 1).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), FILE_BYTES as u64);
        let other = dir.join("other-idkit");
        let mut bytes = vec![0u8; 4096];
        bytes[4000] = 1;
        std::fs::write(&other, bytes).unwrap();
        let said = match map(&other, None, None, 0, None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("mapped a file of other bytes"),
        };
        assert!(said.contains("not an idkit state file"), "{said}");
    }

    /// A file mapped and then not used (another process claimed the carry first; a copy
    /// waited on) is unmapped: a process waiting on a copy maps it every 10 ms.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_file_mapped_and_not_used_is_unmapped() {
        let (_dir, path, one, _other, ms) = two_processes("sqlite-state-unmapped");
        let mappings = || {
            std::fs::read_to_string("/proc/self/maps")
                .unwrap()
                .lines()
                .filter(|l| l.ends_with(path.to_str().unwrap()))
                .count()
        };
        let before = mappings();
        stamp_superseded(&one.table.header);
        assert!(claim_successor(&one.table.header, 12_345));
        for _ in 0..3 {
            assert!(map(&path, None, Some(ms), ms, Some(one.table)).is_err());
        }
        assert_eq!(mappings(), before);
    }

    /// A process refused only for a floor another raised, its ids ahead of the clock, keeps
    /// them as its floor: the file removed later, the file it makes at the path starts
    /// above them. Found by a review: only processes whose words were lost kept a floor.
    /// Two processes on one file, the ids of the second 5 s ahead (a clock set back), past
    /// what the first saw; an older copy written over the file; the first finds it and,
    /// opened again, moves the mark past what the second saw, which then refuses for what
    /// the first found: the directory, the file and the millisecond they started from.
    fn refused_for_anothers_finding(name: &str) -> (idkit_testkit::Scratch, PathBuf, u64) {
        let (dir, path, one, other, ms) = two_processes(name);
        let copy = std::fs::read(&path).unwrap();
        one.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        other.cover(ms + 5 * WINDOW_MS, 1).unwrap();
        write_over(&path, &copy);
        assert!(one.cover(ms + 2 * WINDOW_MS, 2).is_err());
        reopened(&path).cover(ms + 7 * WINDOW_MS, 1).unwrap();
        assert!(other.cover(ms + 5 * WINDOW_MS, 2).is_err());
        (dir, path, ms)
    }

    #[test]
    fn a_process_refused_at_a_raised_floor_keeps_its_ids_for_the_next_file() {
        let (_dir, path, ms) = refused_for_anothers_finding("sqlite-state-raised-then-removed");
        std::fs::remove_file(&path).unwrap();
        let next = reopened(&path);
        assert!(next.floor_ms() >= ms + 5 * WINDOW_MS, "{}", next.floor_ms());
    }

    /// A process refused only for a floor another raised, its ids ahead of the clock,
    /// opens the same file again after the finder moved its mark past them: its
    /// generators start above its ids (the file's words are the copy's). Found by a
    /// review: the kept floor was skipped for the file it was kept from once its mark was
    /// past it.
    #[test]
    fn a_process_opening_its_file_again_starts_above_its_own_ids() {
        let (_dir, path, ms) = refused_for_anothers_finding("sqlite-state-own-floor");
        let again = reopened(&path);
        assert!(
            again.floor_ms() >= ms + 5 * WINDOW_MS,
            "{}",
            again.floor_ms()
        );
        let ulid = again.ulid.load(Ordering::Acquire);
        assert!(ulid >= time_ordered_word(ms + 5 * WINDOW_MS, 0), "{ulid:x}");
        // And so does any other process's generator made after it (the file's floor is
        // raised, not this process's alone: found by a review, a Snowflake key another
        // process built at the file's floor stepped through this one's ids again), and no
        // process refuses for it.
        let third = mapping(&path);
        assert!(
            third.floor_ms() >= ms + 5 * WINDOW_MS,
            "{}",
            third.floor_ms()
        );
        third.cover(SystemClock.now_ms(), 1).unwrap();
        again.cover(SystemClock.now_ms(), 2).unwrap();
    }

    /// A file written over with an older copy and then removed before its process checked
    /// again: the carry starts the file at the path above the ids that process gave, which
    /// only it knows (the copy's mark is older). Found by a review.
    #[test]
    fn a_carry_starts_above_what_the_carrier_saw_not_only_its_files_mark() {
        let dir = idkit_testkit::Scratch::new("sqlite-state-carry-seen");
        let path = dir.join("ids-idkit");
        let one = mapping(&path);
        let ms = SystemClock.now_ms();
        one.cover(ms, 1).unwrap();
        let copy = std::fs::read(&path).unwrap();
        one.cover(ms + 3 * WINDOW_MS, 1).unwrap();
        write_over(&path, &copy);
        std::fs::remove_file(&path).unwrap();
        assert!(one.cover(ms + 3 * WINDOW_MS + 1, 1).is_err());
        let next = at_path(&path);
        assert!(next.floor_ms() >= ms + 3 * WINDOW_MS, "{}", next.floor_ms());
    }

    /// A process that finds the copy after another did raises no floor of its own, which
    /// would make the states laid out since the first finding refuse again. Found by a
    /// review.
    #[test]
    fn a_late_finder_of_a_copy_makes_no_one_refuse_again() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-late-finder");
        let copy = std::fs::read(&path).unwrap();
        one.cover(ms + 2 * WINDOW_MS, 1).unwrap();
        // `other` saw a mark further on than `one` (its ids ran ahead of a clock set back).
        other.cover(ms + 4 * WINDOW_MS, 1).unwrap();
        write_over(&path, &copy);
        assert!(one.cover(ms + 2 * WINDOW_MS, 2).is_err());
        let since = reopened(&path);
        since.cover(SystemClock.now_ms(), 1).unwrap();
        let floor = since.floor_ms();
        // `other` finds the copy too (its mark is behind what it saw), later.
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(other.cover(ms + 4 * WINDOW_MS, 2).is_err());
        assert_eq!(since.floor_ms(), floor);
        since.cover(SystemClock.now_ms(), 2).unwrap();
    }

    /// Stamping a file SUPERSEDED keeps the newer file's inode that another process's
    /// completed carry wrote beside the stamp, and stamps a file not stamped yet.
    #[test]
    fn a_stamp_keeps_the_inode_of_a_completed_carry() {
        let table = zeroed_table();
        let header = &table.header;
        header.own[0].store(7, Ordering::Release);
        header.own[1].store(9, Ordering::Release);
        stamp_superseded(header);
        assert!(
            !carried_by_another(header),
            "stamped, carried by no one yet"
        );
        header.own[1].store(11, Ordering::Release);
        assert!(carried_by_another(header));
        stamp_superseded(header);
        assert!(carried_by_another(header), "the completed carry kept");
        assert_eq!(header.own[1].load(Ordering::Acquire), 11);
    }

    /// A file a carry makes holds the carried words when it is linked, not only once the
    /// carry that made it maps it: a process that maps it in between starts every
    /// generator above the old file's last ids, not at its floor (found by a review).
    #[test]
    fn a_file_made_by_a_carry_holds_the_words_when_it_is_linked() {
        let (_dir, path, one, _other, ms) = two_processes("sqlite-state-linked-words");
        let word = one.ulid.load(Ordering::Acquire);
        // An id past the old file's mark, made from the old word before the stamp.
        let past = time_ordered_word(one.mark_ms() + 5, 7);
        one.ulid.fetch_max(past, Ordering::AcqRel);
        std::fs::remove_file(&path).unwrap();
        stamp_superseded(&one.table.header);
        assert!(matches!(
            write_new(&path, ms, None, Some(one.table)).unwrap(),
            Made::Ours(_)
        ));
        let (table, _, _) = map(&path, None, None, 0, None).unwrap().unwrap();
        let linked = claim(table, "ulid", 0).unwrap().load(Ordering::Acquire);
        assert!(linked >= past.max(word), "{linked} below {past}");
    }

    /// Two mappings whose carries both failed wait in GONE together: opening the path again
    /// carries both, and neither is dropped (one replaced the other before).
    #[test]
    fn every_failed_carry_waits_and_is_carried() {
        let (_dir, path, one, other, ms) = two_processes("sqlite-state-two-gone");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(one.cover(ms + 1, 0).is_err(), "its carry fails");
        assert!(other.cover(ms + 1, 0).is_err(), "and so does this one");
        let waiting = GONE
            .lock()
            .unwrap()
            .as_ref()
            .map_or(0, |gone| gone[&path].len());
        assert_eq!(waiting, 2);
        std::fs::remove_dir(&path).unwrap();
        let state = State::of_file(&path).unwrap();
        assert!(
            GONE.lock()
                .unwrap()
                .as_ref()
                .is_none_or(|gone| !gone.contains_key(&path)),
            "both carried"
        );
        assert!(state.floor_ms() >= one.mark_ms().max(other.mark_ms()));
    }

    /// A state file moved aside and put back after a process carried it over: the next
    /// carry into it (the process on the file made meanwhile) stamps it its own only once
    /// the words are in; until then a process still on it (one that never saw it gone)
    /// refuses, rather than go on from its old words below ids already made. Found by a
    /// review that widened the window with a sleep between the two steps of the carry.
    #[test]
    fn a_file_put_back_stays_superseded_until_the_words_are_carried_in() {
        let (dir, path, one, other, ms) = two_processes("sqlite-state-put-back");
        // Moved aside: `one` stamps it and carries it into a file made at the path.
        let aside = dir.join("aside");
        std::fs::rename(&path, &aside).unwrap();
        assert!(one.cover(ms + 1, 0).is_err());
        // Put back, over that file; the first step of a carry into it (mapped with the
        // carried floor), as the process on the file made meanwhile takes it.
        std::fs::rename(&aside, &path).unwrap();
        let (table, _, _) = map(&path, None, Some(ms + 5_000), ms + 5_000, None)
            .unwrap()
            .unwrap();
        assert_eq!(
            table.header.own[0].load(Ordering::Acquire),
            SUPERSEDED,
            "stamped its own before the words are in"
        );
        assert!(
            other.cover(ms, 2).is_err(),
            "a process still on it refuses in that window"
        );
    }

    /// The stamp after a carry writes over no SUPERSEDED stamp of a file replaced again
    /// meanwhile (found by a review that slept before the stamp: a process on the file then
    /// went on below the ids of the file that replaced it), and stamps a file still at its
    /// path.
    #[test]
    fn the_stamp_after_a_carry_keeps_a_later_superseded_stamp() {
        let dir = idkit_testkit::Scratch::new("sqlite-state-stamp");
        let path = dir.join("ids-idkit");
        let (table, _, id) = map(&path, None, None, 0, None).unwrap().unwrap();
        let own = &table.header.own;
        // Still at its path, stamped SUPERSEDED before (a file put back): made its own.
        own[0].store(SUPERSEDED, Ordering::Release);
        own[1].store(SUPERSEDED, Ordering::Release);
        assert!(stamp_own(table, &path, id));
        assert_eq!(own[0].load(Ordering::Acquire), id.0);
        // Replaced again, and stamped by whoever saw it: kept.
        own[0].store(SUPERSEDED, Ordering::Release);
        own[1].store(SUPERSEDED, Ordering::Release);
        let copy = dir.join("copy");
        std::fs::copy(&path, &copy).unwrap();
        std::fs::rename(&copy, &path).unwrap();
        assert!(!stamp_own(table, &path, id));
        assert_eq!(own[0].load(Ordering::Acquire), SUPERSEDED);
    }

    #[test]
    fn a_key_finds_its_slot_again_and_keys_do_not_share() {
        let table = Box::leak(zeroed_table());
        let a = claim(table, "a", 5).unwrap();
        let b = claim(table, "b", 9).unwrap();
        assert!(!std::ptr::eq(a, b));
        assert!(std::ptr::eq(claim(table, "a", 77).unwrap(), a));
        assert_eq!(a.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn every_slot_taken_is_none() {
        let table = Box::leak(zeroed_table());
        for i in 0..SLOTS {
            assert!(claim(table, &format!("k{i}"), 1).is_some(), "slot {i}");
        }
        assert!(claim(table, "one more", 1).is_none());
        assert!(claim(table, "k17", 1).is_some());
    }
}
