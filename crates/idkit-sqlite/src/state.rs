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

/// How far ahead of the ids the mark is written, ms; it is written again once the ids are
/// half a window from it.
pub const WINDOW_MS: u64 = 1_000;

/// How far ids may run ahead of a clock that is behind them (a restart with the clock set
/// back, a step back while running), ms: ULID, UUIDv7 and TypeID run ahead of it by up to
/// this much, Snowflake layouts wait up to this long; past it, an SQL error.
pub const MAX_BEHIND_MS: u64 = 10_000;

/// "idkit-s1": the file's layout, version 1.
const MAGIC: u64 = u64::from_le_bytes(*b"idkit-s1");

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
    /// Why there is no state file, for the errors of the generators that need one.
    why_memory: &'static str,
    /// The ULID generator's word, and UUIDv7's (TypeIDs take theirs).
    pub ulid: &'static AtomicU64,
    pub v7: &'static AtomicU64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").field("file", &self.file).finish()
    }
}

/// The states of this process, by state file: one mapping per file, whatever the number of
/// connections.
static FILES: Mutex<Option<HashMap<PathBuf, &'static State>>> = Mutex::new(None);

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
                Self::of_file(Path::new(&name))
            }
        }
    }

    /// The state in the state file `path` (made when missing).
    ///
    /// # Errors
    ///
    /// As [`State::of_database`].
    pub fn of_file(path: &Path) -> Result<&'static State, Error> {
        let mut files = FILES.lock().unwrap_or_else(|e| e.into_inner());
        let files = files.get_or_insert_with(HashMap::new);
        let key = std::fs::canonicalize(path.parent().unwrap_or(Path::new(".")))
            .map(|dir| dir.join(path.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| path.to_owned());
        if let Some(state) = files.get(&key) {
            return Ok(state);
        }
        let state = match map(path)? {
            Some(table) => {
                Self::laid_out(table, Some(key.clone()), "").ok_or(Error::Full { slots: SLOTS })?
            }
            None => {
                return Self::memory(
                    "its state file cannot be written (a read-only database or directory)",
                );
            }
        };
        files.insert(key, state);
        Ok(state)
    }

    /// The one state in process memory.
    fn memory(why: &'static str) -> Result<&'static State, Error> {
        // Several reasons share one state: the first one given names it.
        let state = MEMORY.get_or_init(|| {
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
        file: Option<PathBuf>,
        why: &'static str,
    ) -> Option<&'static State> {
        let floor = table.header.floor.load(Ordering::Acquire);
        let time_ordered = |name: &str| {
            let word = claim(table, name, 0)?;
            word.fetch_max(
                time_ordered_word(floor.saturating_add(1), 0),
                Ordering::AcqRel,
            );
            Some(word)
        };
        Some(Box::leak(Box::new(State {
            table,
            file,
            why_memory: why,
            ulid: time_ordered("ulid")?,
            v7: time_ordered("uuid-v7")?,
        })))
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
        let word = claim(self.table, key, initial).ok_or(Error::Full { slots: SLOTS })?;
        word.fetch_max(initial, Ordering::AcqRel);
        Ok(word)
    }

    /// Covers an id of millisecond `ms` by the mark on disk before it is returned: one load
    /// and a compare, and once per half window a write and a sync.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the mark cannot be synced.
    #[inline]
    pub fn cover(&self, ms: u64) -> Result<(), Error> {
        if ms.saturating_add(WINDOW_MS / 2) <= self.table.header.durable.load(Ordering::Acquire) {
            return Ok(());
        }
        self.advance(ms)
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
        Ok(())
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
#[inline]
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

/// The word of `key` in `table`, laid out with `initial` when new.
fn claim(table: &'static Table, key: &str, initial: u64) -> Option<&'static AtomicU64> {
    slots::claim(&table.slots, key, initial)
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

/// `path` mapped (made and laid out when new, its generators moved above the mark when the
/// machine started again since), or `None` when it cannot be opened for writing.
fn map(path: &Path) -> Result<Option<&'static Table>, Error> {
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(file) => file,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, "open", e)),
    };
    // One process at a time lays the file out or checks its boot.
    file.lock().map_err(|e| Error::io(path, "lock", e))?;
    let laid_out = lay_out(&file, path);
    // Unlocked by hand: the mapping holds the open file, and with it a lock that closing
    // the file would not release.
    file.unlock().map_err(|e| Error::io(path, "unlock", e))?;
    laid_out.map(Some)
}

/// Maps the locked `file` at `path`, and lays it out when new or moves its generators
/// above the mark when the machine started again since.
fn lay_out(file: &std::fs::File, path: &Path) -> Result<&'static Table, Error> {
    let len = file
        .metadata()
        .map_err(|e| Error::io(path, "read", e))?
        .len();
    if len != 0 && len != FILE_BYTES as u64 {
        return Err(Error::State(format!(
            "{} is {len} bytes, not an idkit state file of this version ({FILE_BYTES} bytes)",
            path.display()
        )));
    }
    if len == 0 {
        file.set_len(FILE_BYTES as u64)
            .map_err(|e| Error::io(path, "size", e))?;
    }
    let table = mmap(file, path)?;
    let header = &table.header;
    let magic = header.magic.load(Ordering::Acquire);
    let boot = boot_id();
    if magic == 0 {
        header.boot[0].store(boot[0], Ordering::Relaxed);
        header.boot[1].store(boot[1], Ordering::Relaxed);
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
    Ok(table)
}

#[cfg(unix)]
fn mmap(file: &std::fs::File, path: &Path) -> Result<&'static Table, Error> {
    use std::os::fd::AsRawFd;
    // SAFETY: a shared mapping of the whole file, read and write, never unmapped: the
    // reference lives as long as the process. Every access to it is atomic.
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
