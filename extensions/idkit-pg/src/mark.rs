//! The server's high-water mark: a Unix millisecond that no id this server issued goes
//! past, written ahead in windows so that ids made after a restart, a crash or a failover
//! start above it, whatever the clock then reads.
//!
//! Shared memory is gone when the server stops, and is reset when a backend crashes; a
//! promoted standby never had it. So the mark lives in three places:
//!
//! * shared memory, where every generator checks it (one atomic load per id);
//! * the WAL, as a record of this library's own resource manager: it travels to every
//!   standby, whose startup process replays it, and it is replayed after a crash;
//! * the file `idkit.mark` in the data directory, written before each record, for what
//!   replay does not reach (the records before the last checkpoint); `pg_basebackup`
//!   copies it, and replay on a standby keeps it current.
//!
//! An id's time may pass the mark only after the mark has moved past it durably: the file
//! and the record are written, the record flushed (and, where synchronous replication is
//! set, acknowledged by the synchronous standbys) before the id is returned. The mark is
//! moved a window ahead of the ids (`idkit.mark_window_ms`), once in half a window: a
//! write a window, never one an id.
//!
//! The wait for the synchronous standbys is made whatever the session's
//! `synchronous_commit` (`local` and `off` would skip it), outside the lock (a standby
//! that is down holds up only the backends whose ids need the new mark, and a cancel
//! reaches each), and checked: a wait that ended without the standbys' acknowledgement (a
//! cancel, a terminate) is an error, and the mark is not published.

use std::ffi::{CStr, c_char};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use pgrx::PgSqlErrorCode;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys;

use crate::shared::report;

/// The file beside the server's own, in the data directory.
const FILE: &str = "idkit.mark";
const TEMPORARY: &str = "idkit.mark.tmp";

/// The custom WAL resource manager's id. 128 is PostgreSQL's `RM_EXPERIMENTAL_ID`; a server
/// with another extension on the same id refuses to start, saying so.
pub const RMGR_ID: u8 = 128;
/// The one kind of record: "the mark is now ...", 8 bytes, little-endian.
const XLOG_IDKIT_MARK: u8 = 0x10;

/// `idkit.mark_window_ms`: how far ahead of the ids the mark is written.
pub static WINDOW_MS: GucSetting<i32> = GucSetting::<i32>::new(1_000);

/// The mark in shared memory, and whether the file could be read at start-up.
pub struct Mark {
    ms: AtomicU64,
    /// 1 when `idkit.mark` could not be read: the generators then refuse.
    broken: AtomicU64,
    /// The highest mark written and flushed here, and the WAL position of its record: the
    /// mark once the synchronous standbys have that position too.
    written: AtomicU64,
    written_lsn: AtomicU64,
}

impl Mark {
    /// The mark of the file, read when the postmaster lays out shared memory (at start-up
    /// and after a crashed backend's reset).
    pub fn from_file() -> Self {
        let (ms, broken) = match std::fs::read_to_string(FILE) {
            Ok(text) => match text.trim().parse::<u64>() {
                Ok(ms) => (ms, 0),
                Err(_) => (u64::MAX, 1),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0, 0),
            Err(_) => (u64::MAX, 1),
        };
        Self {
            ms: AtomicU64::new(ms),
            broken: AtomicU64::new(broken),
            written: AtomicU64::new(ms),
            written_lsn: AtomicU64::new(0),
        }
    }

    /// The mark now.
    pub fn get(&self) -> u64 {
        self.ms.load(Ordering::Acquire)
    }

    /// The highest mark written, published or not yet (its standbys not yet caught up):
    /// read under [`lock`], every mark written before the lock was taken.
    pub fn highest(&self) -> u64 {
        self.written.load(Ordering::Acquire).max(self.get())
    }

    /// Refuses when the file could not be read: ids could otherwise repeat earlier ones.
    pub fn check_readable(&self) {
        if self.broken.load(Ordering::Relaxed) != 0 {
            report(
                PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                format!(
                    "idkit's high-water mark ({FILE} in the data directory) cannot be read, so \
                     the generators cannot tell which ids this server already issued"
                ),
                Some(
                    "Write into it the Unix millisecond of the latest id this server issued \
                     (a number alone), or a later one, and restart the server.",
                ),
            );
        }
    }

    /// Makes sure the mark covers an id of Unix ms `id_ms` (made by `what`) before it is
    /// returned: at once when it does, with half a window to spare; otherwise the mark moves
    /// a window past `id_ms` (and past the clock) first. One backend moves it at a time; one
    /// that finds another moving it waits only when its id is past the mark (on the lock,
    /// asleep). An id further ahead of the clock than `idkit.max_clock_behind_ms` is refused
    /// here, when the mark moves (once in half a window).
    #[inline(always)]
    pub fn cover(&self, what: &str, id_ms: u64) {
        if id_ms.saturating_add(window_ms() / 2) > self.get() {
            self.advance(what, id_ms);
        }
    }

    #[cold]
    #[inline(never)]
    fn advance(&self, what: &str, id_ms: u64) {
        let half = window_ms() / 2;
        let now = idkit_core::Clock::now_ms(&idkit_core::SystemClock);
        if id_ms.saturating_sub(now) > crate::shared::max_behind_ms() {
            behind(
                what,
                now,
                self.get(),
                "its ids would run further ahead of the clock than idkit.max_clock_behind_ms allows",
            );
        }
        let lock = lock();
        let needed = id_ms > self.get();
        // SAFETY: the tranche's lock, asked for at start-up; an error raised while it is
        // held is released by the transaction's abort (LWLockReleaseAll).
        unsafe {
            if needed {
                pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
            } else if !pg_sys::LWLockConditionalAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) {
                // Another backend is moving it, and this id is covered already.
                return;
            }
        }
        let written = if id_ms.saturating_add(half) > self.written.load(Ordering::Acquire) {
            Some(self.write_here(id_ms.max(now).saturating_add(half * 2)))
        } else if needed {
            // Written by another backend, perhaps not yet acknowledged: wait for it too.
            Some(self.pending())
        } else {
            None
        };
        // SAFETY: taken above.
        unsafe { pg_sys::LWLockRelease(lock) };
        if let Some((ms, lsn)) = written {
            self.publish(ms, lsn);
        }
    }

    /// The highest mark written here and its record's WAL position.
    fn pending(&self) -> (u64, u64) {
        (
            self.written.load(Ordering::Acquire),
            self.written_lsn.load(Ordering::Acquire),
        )
    }

    /// Writes the mark `ms` here, under the lock: the file, then the WAL record, flushed.
    /// Returns it with the record's position; [`Mark::publish`] makes it the mark.
    fn write_here(&self, ms: u64) -> (u64, u64) {
        persist(ms);
        let at = ms.to_le_bytes();
        // SAFETY: a WAL record of this library's resource manager, its 8 bytes registered
        // before the insert; not in a critical section, and never in recovery (the
        // generators refuse there before any id is made).
        let lsn = unsafe {
            pg_sys::XLogBeginInsert();
            pg_sys::XLogRegisterData(at.as_ptr().cast_mut().cast(), at.len() as _);
            let lsn = pg_sys::XLogInsert(RMGR_ID, XLOG_IDKIT_MARK);
            pg_sys::XLogFlush(lsn);
            lsn
        };
        self.written.fetch_max(ms, Ordering::AcqRel);
        self.written_lsn.fetch_max(lsn, Ordering::AcqRel);
        (ms, lsn)
    }

    /// Makes `ms`, written at WAL position `lsn`, the mark once the synchronous standbys
    /// (if any) have the position; an error, the mark as it was, when the wait ended
    /// without them.
    fn publish(&self, ms: u64, lsn: u64) {
        wait_for_standbys(lsn);
        self.ms.fetch_max(ms, Ordering::AcqRel);
    }

    /// Moves the mark to at least `ms` now, for a generator starting after a restart (and
    /// for `idkit_raise_mark`).
    pub fn write_at_least(&self, ms: u64) {
        let lock = lock();
        // SAFETY: as in `advance`.
        unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        let (written, lsn) = if ms > self.written.load(Ordering::Acquire) {
            self.write_here(ms)
        } else {
            self.pending()
        };
        // SAFETY: taken above.
        unsafe { pg_sys::LWLockRelease(lock) };
        if written > self.get() {
            self.publish(written, lsn);
        }
    }

    /// Replays a record: on a standby, and after a crash.
    fn replay(&self, ms: u64) {
        if ms > self.get() {
            persist(ms);
            self.written.fetch_max(ms, Ordering::AcqRel);
            self.ms.fetch_max(ms, Ordering::AcqRel);
        }
    }
}

/// Waits until the synchronous standbys (where `synchronous_standby_names` names any) have
/// flushed the WAL up to `lsn`, whatever the session's `synchronous_commit`; an SQL error
/// when the wait ends without them (a cancel, a terminate, a statement timeout).
fn wait_for_standbys(lsn: u64) {
    // SAFETY: reads of the server's settings and of the WAL senders' shared state (an
    // 8-byte position the WAL senders write); the setting is changed for the wait at a GUC
    // nest level of its own, put back after it (or by the transaction's abort).
    let acknowledged = unsafe {
        let ctl = pg_sys::WalSndCtl;
        // Whether synchronous standbys are named, as PostgreSQL's own wait decides it: the
        // shared flag once the checkpointer has read the setting (SYNC_STANDBY_INIT), the
        // backend's reading of it before that (the first mark after a start).
        let defined = || {
            let status = u32::from(std::ptr::read_volatile(
                &raw const (*ctl).sync_standbys_status,
            ));
            if status & pg_sys::SYNC_STANDBY_INIT != 0 {
                status & pg_sys::SYNC_STANDBY_DEFINED != 0
            } else {
                let names = pg_sys::SyncRepStandbyNames;
                !names.is_null() && *names != 0
            }
        };
        if pg_sys::max_wal_senders == 0 || ctl.is_null() || !defined() {
            return;
        }
        let level = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"synchronous_commit".as_ptr(),
            c"on".as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        pg_sys::SyncRepWaitForLSN(lsn, false);
        pg_sys::AtEOXact_GUC(true, level);
        // Acknowledged, or no standby is named any more (taken out of the setting while
        // this backend waited: the waits end then, with nothing to wait for).
        std::ptr::read_volatile(&raw const (*ctl).lsn[pg_sys::SYNC_REP_WAIT_FLUSH as usize]) >= lsn
            || !defined()
    };
    if !acknowledged {
        report(
            PgSqlErrorCode::ERRCODE_QUERY_CANCELED,
            "idkit's high-water mark was not acknowledged by the synchronous standbys (the \
             wait for them ended first), so no id past it is returned: a failover to a standby \
             without it could issue them again"
                .into(),
            Some(
                "Bring the synchronous standbys back, or take them out of \
                 synchronous_standby_names and reload; then make the ids again.",
            ),
        );
    }
}

/// The window, in ms (at least 2).
pub fn window_ms() -> u64 {
    u64::try_from(WINDOW_MS.get()).unwrap_or(1_000).max(2)
}

/// The lock one backend holds while it moves the mark.
pub fn lock() -> *mut pg_sys::LWLock {
    // SAFETY: the tranche was asked for in shmem_request; its array has one lock.
    unsafe { &raw mut (*pg_sys::GetNamedLWLockTranche(TRANCHE.as_ptr())).lock }
}

const TRANCHE: &CStr = c"idkit";

/// `idkit.mark` holds `ms`, on disk (with the server's `fsync` setting) before it returns.
fn persist(ms: u64) {
    let write = || -> std::io::Result<()> {
        let mut file = File::create(TEMPORARY)?;
        writeln!(file, "{ms}")?;
        // SAFETY: a read of the server's own setting.
        let sync = unsafe { pg_sys::enableFsync };
        if sync {
            file.sync_all()?;
        }
        std::fs::rename(TEMPORARY, FILE)?;
        if sync {
            File::open(".")?.sync_all()?;
        }
        Ok(())
    };
    if let Err(e) = write() {
        report(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("idkit's high-water mark: cannot write {FILE} in the data directory: {e}"),
            None,
        );
    }
}

/// From `_PG_init`: the window's setting.
pub fn define_settings() {
    GucRegistry::define_int_guc(
        c"idkit.mark_window_ms",
        c"How far ahead of its ids idkit writes the server's high-water mark.",
        c"One write to the WAL and to idkit.mark a window. A larger window writes less, and \
          puts the first ids after a restart further ahead of the clock; a standby that lags \
          less than half a window behind its primary starts above every id of the primary \
          when promoted.",
        &WINDOW_MS,
        2,
        3_600_000,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
}

/// From the postmaster's preload: the resource manager, and the shared memory's lock.
///
/// # Safety
///
/// Only while `shared_preload_libraries` are loaded, in the postmaster.
pub unsafe fn register() {
    // Leaked: PostgreSQL keeps the pointer for the life of the process.
    let rmgr = Box::leak(Box::new(pg_sys::RmgrData {
        rm_name: c"idkit".as_ptr(),
        rm_redo: Some(redo),
        rm_desc: Some(describe),
        rm_identify: Some(identify),
        rm_startup: None,
        rm_cleanup: None,
        rm_mask: None,
        rm_decode: None,
    }));
    // SAFETY: the caller's.
    unsafe { pg_sys::RegisterCustomRmgr(RMGR_ID, rmgr) };
}

/// From shmem_request: the lock.
///
/// # Safety
///
/// Only in the postmaster's shmem_request phase.
pub unsafe fn request_lock() {
    // SAFETY: the caller's.
    unsafe { pg_sys::RequestNamedLWLockTranche(TRANCHE.as_ptr(), 1) };
}

/// The mark a record holds.
///
/// # Safety
///
/// `record` is a decoded record of this resource manager.
unsafe fn mark_of(record: *mut pg_sys::XLogReaderState) -> Option<u64> {
    // SAFETY: the caller's; the main data is `main_data_len` bytes.
    unsafe {
        let decoded = (*record).record;
        let bytes = std::slice::from_raw_parts(
            (*decoded).main_data.cast::<u8>(),
            (*decoded).main_data_len as usize,
        );
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: PostgreSQL replays this resource manager's records here.
    let Some(ms) = (unsafe { mark_of(record) }) else {
        report(
            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
            "idkit: a high-water mark record of the wrong length".into(),
            None,
        );
    };
    crate::shared::mark().replay(ms);
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn describe(
    buf: pg_sys::StringInfo,
    record: *mut pg_sys::XLogReaderState,
) {
    // SAFETY: pg_waldump and the server describe this resource manager's records here.
    let text = match unsafe { mark_of(record) } {
        Some(ms) => format!("mark {ms}\0"),
        None => "mark of the wrong length\0".to_owned(),
    };
    // SAFETY: a NUL-terminated string appended to PostgreSQL's buffer.
    unsafe { pg_sys::appendStringInfoString(buf, text.as_ptr().cast::<c_char>()) };
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const c_char {
    if info & !(pg_sys::XLR_INFO_MASK as u8) == XLOG_IDKIT_MARK {
        c"MARK".as_ptr()
    } else {
        std::ptr::null()
    }
}

/// An SQL error for a clock behind the mark by more than the generators wait or run ahead.
pub fn behind(what: &str, now_ms: u64, mark_ms: u64, detail: impl std::fmt::Display) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "{what}: the clock reads {now_ms} (Unix ms), {} ms behind this server's high-water \
             mark {mark_ms} of ids already issued: {detail}",
            mark_ms.saturating_sub(now_ms)
        ),
        Some(
            "Set the host's clock right (NTP), or raise idkit.max_clock_behind_ms to let \
             the generators wait or run that far ahead of the clock; ids never repeat or go \
             below the mark either way.",
        ),
    )
}
