//! The generators' state in shared memory: one lock-free word per generator, the same
//! compare-and-swap step as idkit's Rust shared generators, so that every backend of one
//! server makes ids from one sequence.
//!
//! PostgreSQL forks each backend from the postmaster and runs no threads of its own, so
//! nothing here leans on a thread (the clock is read with each id, as `SystemClock` does)
//! or on random state a fork would copy (random bits come from the operating system, a
//! few times a millisecond at most). The shared memory is asked for while the postmaster
//! loads the library (`shared_preload_libraries`) and laid out once, before any backend
//! exists; a backend finds it at the address the postmaster mapped it.
//!
//! Every generator starts above the server's high-water mark ([`crate::mark`]): the
//! first backend to make an id after start-up (a restart, a crash's reset, a standby's
//! promotion) lays the generators out from the mark, and every id's time is covered by the
//! mark before it is returned.

use std::cell::{RefCell, UnsafeCell};
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use idkit_core::random::RandomSource;
use idkit_core::slots::{self, Slot};
use idkit_core::time_ordered::AtomicTimeOrdered;
use idkit_core::{Clock, GenerateError, GenerateErrorKind, IdScheme, SystemClock};
use idkit_snowflake::{AtomicSnowflake, Custom, LayoutSpec, RollbackPolicy, Snowflake};
use idkit_ulid::UlidLayout;
use idkit_uuid::V7Layout;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

use crate::mark::{self, Mark};

/// Random bits from the operating system on every draw: nothing a fork copies. The shared
/// time-ordered generators draw once a new millisecond starts, so a draw's system call is
/// paid a few times a millisecond at most, never per id.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn u128(&self) -> Result<u128, GenerateError> {
        let mut bytes = [0; 16];
        self.fill(&mut bytes)?;
        Ok(u128::from_ne_bytes(bytes))
    }

    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
        getrandom::fill(dest)
            .map_err(|e| GenerateError::unavailable(format!("the system's random source: {e}")))
    }
}

/// `idkit.max_generators`: the Snowflake generators (a layout and its worker id or shard
/// each) one server holds at once.
pub static MAX_GENERATORS: GucSetting<i32> = GucSetting::<i32>::new(16_384);

/// `idkit.max_clock_behind_ms`: how far the clock may read behind the ids already issued
/// (after a restart with the clock set back, or a step back while running) before the
/// generators refuse: ULID, UUIDv7 and TypeID run ahead of it by as much, Snowflake layouts
/// wait as long.
pub static MAX_BEHIND_MS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

type Ulids = AtomicTimeOrdered<UlidLayout, SystemClock, OsRandom>;
type V7s = AtomicTimeOrdered<V7Layout, SystemClock, OsRandom>;

/// What lives in shared memory: this header, then `slots` slots.
struct Shared {
    mark: Mark,
    /// 0, then [`LAID`] once the generators are written above the mark, then [`READY`] once
    /// the mark is past their first ids.
    state: AtomicU32,
    /// The mark when the generators were laid out: every id before it is at or below it.
    floor: AtomicU64,
    ulid: UnsafeCell<MaybeUninit<Ulids>>,
    /// UUIDv7, and the UUIDs of TypeIDs: one sequence for both.
    v7: UnsafeCell<MaybeUninit<V7s>>,
    slots: usize,
}

// SAFETY: the generators in the cells are written once, under the lock, before `state`
// says READY (with release ordering), and only read after it.
unsafe impl Sync for Shared {}

/// The generators are written (under the mark's lock), the mark not yet moved past them.
const LAID: u32 = 2;
/// Laid out, and the mark past their first ids.
const READY: u32 = 1;

/// The laid-out shared memory; null in a server that did not preload the library.
static SHARED: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// The number of slots, from the setting.
fn slot_count() -> usize {
    usize::try_from(MAX_GENERATORS.get()).unwrap_or(1).max(1)
}

/// Room for [`Shared`], its slots and their alignment (shared memory is aligned to 8 bytes;
/// the words are on cache lines of their own).
fn shared_size() -> usize {
    slots_offset() + slot_count() * size_of::<Slot>() + align_of::<Slot>()
}

/// Where the slots start, after the header, at their alignment.
const fn slots_offset() -> usize {
    size_of::<Shared>().next_multiple_of(align_of::<Slot>())
}

/// `idkit.worker_id`: this server's worker id, split over a Snowflake layout's fixed fields.
pub static WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);

static mut PREV_SHMEM_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_SHMEM_STARTUP: pg_sys::shmem_startup_hook_type = None;

/// From `_PG_init`: the settings, and when the postmaster preloads the library, the WAL
/// resource manager of the high-water mark and the hooks that ask for and lay out the
/// shared memory.
pub fn init() {
    GucRegistry::define_int_guc(
        c"idkit.worker_id",
        c"This server's worker id for idkit's Snowflake generators.",
        c"Split over a layout's fixed fields (a Twitter layout's datacenter and worker: the \
          worker the low 5 bits). -1, the default, is unset: Snowflake layouts with fixed \
          fields then refuse to make ids unless a call gives its worker. Set it in \
          postgresql.conf, different on each server that writes the same ids.",
        &WORKER_ID,
        -1,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"idkit.max_clock_behind_ms",
        c"How far the clock may read behind the ids idkit already issued.",
        c"After a restart with the clock set back, or a step back while the server runs: \
          ULID, UUIDv7 and TypeID ids run ahead of the clock by up to this much, Snowflake \
          layouts wait up to this long for the clock; past it they refuse with an error \
          naming the clock and the mark. Ids never repeat either way.",
        &MAX_BEHIND_MS,
        0,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    mark::define_settings();
    // SAFETY: read-only flag of the postmaster, set while it loads preloaded libraries.
    if unsafe { !pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    // A server-start setting, which only a preloaded library may define.
    GucRegistry::define_int_guc(
        c"idkit.max_generators",
        c"How many Snowflake generators (a layout with one worker id or shard each) the \
          server holds at once.",
        c"Each takes 256 bytes of shared memory; a generator lasts until the server stops.",
        &MAX_GENERATORS,
        1,
        16_777_216,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    // SAFETY: _PG_init runs once per process, before any hook is called; each hook chains
    // to the one it replaced. The resource manager is registered while the preload runs.
    unsafe {
        mark::register();
        PREV_SHMEM_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(shmem_request);
        PREV_SHMEM_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(shmem_startup);
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shmem_request() {
    // SAFETY: called by the postmaster in its shmem_request phase; the previous hook first.
    unsafe {
        if let Some(previous) = PREV_SHMEM_REQUEST {
            previous();
        }
        pg_sys::RequestAddinShmemSpace(shared_size());
        mark::request_lock();
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shmem_startup() {
    // SAFETY: called at shared-memory start-up; ShmemInitStruct under AddinShmemInitLock
    // returns the one segment named "idkit", zeroed (found = false) the first time.
    unsafe {
        if let Some(previous) = PREV_SHMEM_STARTUP {
            previous();
        }
        // AddinShmemInitLock, a macro in C: the main array's lock 21 (lwlocknames.h).
        let lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let raw = pg_sys::ShmemInitStruct(c"idkit".as_ptr(), shared_size(), &mut found);
        let at = raw.cast::<u8>();
        let shared = at
            .add(at.align_offset(align_of::<Shared>()))
            .cast::<Shared>();
        if !found {
            let slots = slot_count();
            shared.write(Shared {
                mark: Mark::from_file(),
                state: AtomicU32::new(0),
                floor: AtomicU64::new(0),
                ulid: UnsafeCell::new(MaybeUninit::uninit()),
                v7: UnsafeCell::new(MaybeUninit::uninit()),
                slots,
            });
            let first = shared.cast::<u8>().add(slots_offset()).cast::<Slot>();
            for i in 0..slots {
                first.add(i).write(Slot::free());
            }
        }
        SHARED.store(shared, Ordering::Release);
        pg_sys::LWLockRelease(lock);
    }
}

/// The shared memory, or the error that says how to get it.
fn shared() -> &'static Shared {
    let at = SHARED.load(Ordering::Acquire);
    if at.is_null() {
        report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "idkit's generators keep their state in shared memory, which needs the library \
             loaded when the server starts"
                .into(),
            Some(
                "Add idkit to shared_preload_libraries in postgresql.conf \
                 (shared_preload_libraries = 'idkit') and restart PostgreSQL.",
            ),
        );
    }
    // SAFETY: laid out once by the postmaster before any backend forked, never freed.
    unsafe { &*at }
}

/// The high-water mark in shared memory (for the WAL's replay, which makes no ids).
pub fn mark() -> &'static Mark {
    &shared().mark
}

impl Shared {
    /// The slots after the header.
    fn slots(&self) -> &[Slot] {
        // SAFETY: `slots` slots were written after the header when it was laid out.
        unsafe {
            let first = std::ptr::from_ref(self)
                .cast::<u8>()
                .add(slots_offset())
                .cast::<Slot>();
            std::slice::from_raw_parts(first, self.slots)
        }
    }

    fn ulid(&self) -> &Ulids {
        // SAFETY: written before READY, which `ready()` saw.
        unsafe { (*self.ulid.get()).assume_init_ref() }
    }

    fn v7(&self) -> &V7s {
        // SAFETY: as for `ulid`.
        unsafe { (*self.v7.get()).assume_init_ref() }
    }
}

/// The shared memory with its generators laid out above the high-water mark: by the first
/// backend to make an id since the server started (or reset its shared memory after a
/// crash, or was promoted); refused on a standby and when the mark cannot be read.
#[inline(always)]
fn ready() -> &'static Shared {
    let shared = shared();
    if shared.state.load(Ordering::Acquire) != READY {
        lay_out(shared);
    }
    shared
}

#[cold]
#[inline(never)]
fn lay_out(shared: &'static Shared) {
    // SAFETY: a read of the server's state.
    if unsafe { pg_sys::RecoveryInProgress() } {
        report(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            "idkit makes no ids on a server in recovery (a standby): its primary makes them \
             with the same idkit.worker_id, so ids made here could repeat the primary's"
                .into(),
            Some(
                "Make ids on the primary. Reading ids (idkit_time, idkit_decode, the bounds) \
                 works here; once promoted, this server's ids start above every id of the \
                 primary that its WAL reached.",
            ),
        );
    }
    shared.mark.check_readable();
    let floor = shared.mark.get();
    if floor == 0 {
        pgrx::notice!(
            "idkit: no high-water mark yet (idkit.mark in the data directory): the generators \
             start at the clock. If this cluster carries on another's ids (pg_upgrade, a \
             logical replica, a restore), raise its mark first: on the old cluster SELECT \
             idkit_mark(), here SELECT idkit_raise_mark(that), then restart"
        );
    }
    let now = SystemClock.now_ms();
    let behind = floor.saturating_sub(now);
    if behind > max_behind_ms() {
        mark::behind(
            "idkit",
            now,
            floor,
            "the generators start above the mark and would run further ahead of the clock \
             than idkit.max_clock_behind_ms allows",
        );
    }
    let lock = mark::lock();
    // SAFETY: the mark's lock serializes the lay-out; the cells are written before READY
    // is stored, and read by no backend before it sees READY.
    let floor = unsafe {
        pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        // Once, under the lock: a backend that finds them LAID but not yet READY (the first
        // is still writing the mark) must not lay them out again under the first's ids.
        if shared.state.load(Ordering::Acquire) == 0 {
            // Read again under the lock: a mark raised (idkit_raise_mark) since the read
            // above is taken; one raised after this sees LAID and says it waits for a
            // restart.
            let floor = floor.max(shared.mark.highest());
            (*shared.ulid.get()).write(Ulids::starting_after(SystemClock, OsRandom, floor));
            (*shared.v7.get()).write(V7s::starting_after(SystemClock, OsRandom, floor));
            shared.floor.store(floor, Ordering::Relaxed);
            shared.state.store(LAID, Ordering::Release);
        }
        let floor = shared.floor.load(Ordering::Relaxed);
        pg_sys::LWLockRelease(lock);
        floor
    };
    // The first ids are a millisecond past the floor: the mark goes a window past them.
    shared
        .mark
        .write_at_least(floor.max(now).saturating_add(1 + mark::window_ms()));
    shared.state.store(READY, Ordering::Release);
}

/// Raises the server's high-water mark to `ms` (`idkit_raise_mark`); a warning when the
/// generators are already laid out since the server started, whose words it does not move.
pub fn raise_mark(ms: u64) {
    let shared = shared();
    // SAFETY: a read of the server's state.
    if unsafe { pg_sys::RecoveryInProgress() } {
        report(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            "idkit's high-water mark is raised on the primary; a standby replays it".into(),
            None,
        );
    }
    shared.mark.check_readable();
    shared.mark.write_at_least(ms);
    // Under the lock the generators are laid out under: either they were laid out before
    // the mark was written (LAID now), or they read it there.
    let lock = mark::lock();
    // SAFETY: the mark's lock, taken and released around one load.
    let laid = unsafe {
        pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let laid = shared.state.load(Ordering::Acquire) != 0;
        pg_sys::LWLockRelease(lock);
        laid
    };
    if laid {
        pgrx::warning!(
            "idkit's generators made ids since this server started and go on from there: \
             they start above the raised mark at their first id after the next restart"
        );
    }
}

/// `idkit.max_clock_behind_ms`.
pub(crate) fn max_behind_ms() -> u64 {
    u64::try_from(MAX_BEHIND_MS.get()).unwrap_or(0)
}

/// `error` about `what`, as an SQL error (`22000`, data exception).
pub fn fail(what: &str, error: impl std::fmt::Display) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
        format!("{what}: {error}"),
        None,
    )
}

/// An SQL error with its code, message and, where there is something to do about it, a hint.
pub fn report(code: PgSqlErrorCode, message: String, hint: Option<&str>) -> ! {
    let mut error = ErrorReport::new(code, message, "idkit");
    if let Some(hint) = hint {
        error = error.set_hint(hint);
    }
    error.report(PgLogLevel::ERROR);
    unreachable!("an ERROR report does not return")
}

/// An id of Unix ms `id_ms`, once the mark covers it (one load and a compare, the rest
/// out of line: [`Mark::cover`]).
#[inline(always)]
fn covered<T>(shared: &Shared, what: &str, id: T, id_ms: u64) -> T {
    shared.mark.cover(what, id_ms);
    id
}

/// The next ULID of the server's one sequence.
pub fn next_ulid() -> idkit_ulid::Ulid {
    let shared = ready();
    let id = shared.ulid().next_id().unwrap_or_else(|e| fail("ulid", e));
    covered(shared, "ulid", id, id.timestamp_ms())
}

/// The next UUIDv7 of the server's one sequence (TypeIDs come from it too).
pub fn next_v7() -> idkit_uuid::Uuid {
    let shared = ready();
    let id = shared.v7().next_id().unwrap_or_else(|e| fail("uuid v7", e));
    let ms = u64::try_from(id.as_u128() >> 80).unwrap_or(u64::MAX);
    covered(shared, "uuid v7", id, ms)
}

/// A Snowflake generator of this backend over its layout's shared word, and where its
/// time field sits.
struct Backend {
    generator: AtomicSnowflake<Custom<u64>, SystemClock, &'static AtomicU64>,
    spec: LayoutSpec,
}

thread_local! {
    /// This backend's generators, by layout and worker id: built once, their words shared.
    static SNOWFLAKES: RefCell<HashMap<(String, i64, bool), &'static Backend>> =
        RefCell::new(HashMap::new());
}

/// The next id of `layout` (a preset's name or alias, or `NAME:BITS,...` with
/// `epoch_ms` and `tick_ms`), with `worker` (the value of the layout's fixed fields: a
/// worker id, Instagram's shard) or else this server's `idkit.worker_id`.
pub fn next_snowflake(layout: &str, custom: Option<(u64, u64)>, worker: Option<i64>) -> i64 {
    let shared = ready();
    let given = worker.is_some();
    let worker = worker.unwrap_or_else(|| i64::from(WORKER_ID.get()));
    let key = (
        match custom {
            Some((epoch, tick)) => format!("{layout}|{epoch}|{tick}"),
            None => layout.to_owned(),
        },
        worker,
        given,
    );
    let cached = SNOWFLAKES.with(|cache| cache.borrow().get(&key).copied());
    let backend = match cached {
        Some(backend) => backend,
        None => {
            let built: &'static Backend =
                Box::leak(Box::new(build(shared, layout, custom, worker, given)));
            SNOWFLAKES.with(|cache| cache.borrow_mut().insert(key, built));
            built
        }
    };
    let name = backend.spec.name();
    let id = backend.generator.next_id().unwrap_or_else(|e| {
        if e.kind() == GenerateErrorKind::ClockMovedBackwards {
            mark::behind(name, SystemClock.now_ms(), shared.mark.get(), e);
        }
        fail(name, e)
    });
    let time = backend.spec.time();
    let tick = (id >> time.shift) & time.max();
    let ms = backend.spec.tick_start_ms(tick).unwrap_or(u64::MAX);
    let id = covered(shared, name, id, ms);
    // A 64-bit layout's top bit is reserved (checked when the layout was read).
    i64::try_from(id).unwrap_or_else(|_| fail(layout, "an id past i64's range"))
}

/// A 64-bit layout by preset name or alias, or from its fields.
pub fn layout_spec(layout: &str, custom: Option<(u64, u64)>) -> LayoutSpec {
    let spec = match custom {
        Some((epoch_ms, tick_ms)) => LayoutSpec::parse("custom", layout, tick_ms, epoch_ms)
            .unwrap_or_else(|e| fail("layout", e)),
        None => {
            let entry = idkit_all::registry::find(layout).unwrap_or_else(|e| fail("layout", e));
            *idkit_snowflake::preset(entry.name()).unwrap_or_else(|| {
                fail(
                    "layout",
                    format!(
                        "{} is not a Snowflake layout: expected a preset (snowflake-twitter, \
                         snowflake-discord, snowflake-instagram, sonyflake, snowflake-mastodon) \
                         or idkit_snowflake_custom's fields",
                        entry.name()
                    ),
                )
            })
        }
    };
    if spec.word_bits() != 64 {
        fail(
            spec.name(),
            "its ids are 128 bits and do not fit bigint: a 64-bit layout makes bigint ids",
        );
    }
    spec
}

/// This backend's generator of `layout` with `worker` (`given` by the call, or else the
/// server's), over the layout's shared word: laid out above the server's high-water mark
/// the first time any backend uses it. It waits for a clock behind its last tick up to
/// `idkit.max_clock_behind_ms`, then refuses.
fn build(
    shared: &'static Shared,
    layout: &str,
    custom: Option<(u64, u64)>,
    worker: i64,
    given: bool,
) -> Backend {
    let spec = layout_spec(layout, custom);
    let name = spec.name();
    let mut builder =
        Snowflake::builder(Custom::<u64>::new(spec).unwrap_or_else(|e| fail(name, e)))
            .clock(SystemClock)
            .rollback(RollbackPolicy::Wait {
                max_ms: max_behind_ms(),
            });
    let bits = spec.worker_bits();
    // A layout without worker bits ignores the server's worker: every caller shares its one
    // word (LayoutSpec::word_key). A call's worker would mean nothing: refused.
    if bits == 0 && given {
        let call = match custom {
            Some((epoch_ms, tick_ms)) => {
                format!("idkit_snowflake_custom('{layout}', {epoch_ms}, {tick_ms})")
            }
            None => format!("idkit_snowflake('{name}')"),
        };
        report(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!(
                "{name}: the layout has no worker bits (its ids are a time and a sequence, one \
                 sequence for the server), so a worker id would mean nothing: call {call} \
                 without one"
            ),
            None,
        )
    }
    if given && worker < 0 {
        fail(name, format!("worker {worker} is negative"))
    }
    let mut unsigned = 0;
    if bits > 0 {
        let names = spec.worker_names();
        let Ok(given) = u64::try_from(worker) else {
            report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "{name} needs a worker id ({names}), and idkit.worker_id is not set (nor \
                     given as the call's worker)"
                ),
                Some(
                    "Set idkit.worker_id in postgresql.conf, a number different on every \
                     server that makes ids of this layout, and reload (SELECT pg_reload_conf()); \
                     or give it per call: idkit_snowflake('snowflake-instagram', worker => 42).",
                ),
            )
        };
        unsigned = given;
        for (field, value) in spec
            .split_worker(unsigned)
            .unwrap_or_else(|e| fail(name, e))
        {
            builder = builder.field(field, value);
        }
    }
    let generator = builder.build_atomic().unwrap_or_else(|e| fail(name, e));
    let initial = generator.initial_word_after(shared.floor.load(Ordering::Relaxed));
    let key = spec.word_key(unsigned).unwrap_or_else(|e| fail(name, e));
    let word = claim(shared, &key, initial);
    Backend {
        generator: generator.on_word(word),
        spec,
    }
}

/// An LWLock held until dropped.
struct Held(*mut pg_sys::LWLock);

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: acquired by this backend when the guard was made.
        unsafe { pg_sys::LWLockRelease(self.0) };
    }
}

/// The shared word of `key`: the slot already laid out for it, or a free one laid out now
/// with `initial` (`idkit_core::slots`).
fn claim(shared: &'static Shared, key: &str, initial: u64) -> &'static AtomicU64 {
    let slots = shared.slots();
    // A key not laid out yet is claimed under the mark's LWLock: a backend stopped half
    // way through a claim makes the others wait, never take a second slot.
    let claimed = slots::claim(slots, key, initial, || {
        let lock = mark::lock();
        // SAFETY: the mark's lock, held until the guard drops (or released by PostgreSQL's
        // abort, should an error be raised in between).
        unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        Ok::<_, std::convert::Infallible>(Held(lock))
    });
    if let Ok(Some(word)) = claimed {
        return word;
    }
    report(
        PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
        format!(
            "every one of the server's {} Snowflake generators is taken by another layout \
             or worker id; a generator lasts until the server restarts",
            slots.len()
        ),
        Some("Raise idkit.max_generators in postgresql.conf and restart PostgreSQL."),
    )
}
