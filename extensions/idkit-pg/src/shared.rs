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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use idkit_core::monotonic::CachePadded;
use idkit_core::random::RandomSource;
use idkit_core::time_ordered::AtomicTimeOrdered;
use idkit_core::{GenerateError, IdScheme, SystemClock};
use idkit_snowflake::{AtomicSnowflake, Custom, FieldKind, Layout, LayoutSpec, Snowflake};
use idkit_ulid::UlidLayout;
use idkit_uuid::V7Layout;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

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

/// The Snowflake layouts (and worker ids) one server can use at once.
pub const SLOTS: usize = 64;

/// A slot's first key word while a backend lays the slot out.
const CLAIMING: u64 = u64::MAX;

/// One Snowflake layout's word: its key (two hashes of the layout and its fields; 0 is a
/// free slot) and the last id made.
struct Slot {
    key: [AtomicU64; 2],
    word: CachePadded<AtomicU64>,
}

/// What lives in shared memory.
struct Shared {
    ulid: AtomicTimeOrdered<UlidLayout, SystemClock, OsRandom>,
    /// UUIDv7, and the UUIDs of TypeIDs: one sequence for both.
    v7: AtomicTimeOrdered<V7Layout, SystemClock, OsRandom>,
    slots: [Slot; SLOTS],
}

/// The laid-out shared memory; null in a server that did not preload the library.
static SHARED: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// Room for [`Shared`] and its alignment (shared memory is aligned to 8 bytes; the words are
/// on cache lines of their own).
const fn shared_size() -> usize {
    size_of::<Shared>() + align_of::<Shared>()
}

/// `idkit.worker_id`: this server's worker id, split over a Snowflake layout's fixed fields.
pub static WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);

static mut PREV_SHMEM_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_SHMEM_STARTUP: pg_sys::shmem_startup_hook_type = None;

/// From `_PG_init`: the setting, and when the postmaster preloads the library, the hooks
/// that ask for and lay out the shared memory.
pub fn init() {
    GucRegistry::define_int_guc(
        c"idkit.worker_id",
        c"This server's worker id for idkit's Snowflake generators.",
        c"Split over a layout's fixed fields (a Twitter layout's datacenter and worker: the \
          worker the low 5 bits). -1, the default, is unset: Snowflake layouts with fixed \
          fields then refuse to make ids. Set it in postgresql.conf, different on each server \
          that writes the same ids.",
        &WORKER_ID,
        -1,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::default(),
    );
    // SAFETY: read-only flag of the postmaster, set while it loads preloaded libraries.
    if unsafe { !pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    // SAFETY: _PG_init runs once per process, before any hook is called; each hook chains
    // to the one it replaced.
    unsafe {
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
            shared.write(Shared {
                ulid: AtomicTimeOrdered::with_source(SystemClock, OsRandom),
                v7: AtomicTimeOrdered::with_source(SystemClock, OsRandom),
                slots: std::array::from_fn(|_| Slot {
                    key: [AtomicU64::new(0), AtomicU64::new(0)],
                    word: CachePadded(AtomicU64::new(0)),
                }),
            });
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

/// The next ULID of the server's one sequence.
pub fn next_ulid() -> idkit_ulid::Ulid {
    shared().ulid.next_id().unwrap_or_else(|e| fail("ulid", e))
}

/// The next UUIDv7 of the server's one sequence (TypeIDs come from it too).
pub fn next_v7() -> idkit_uuid::Uuid {
    shared().v7.next_id().unwrap_or_else(|e| fail("uuid v7", e))
}

/// A Snowflake generator of this backend over its layout's shared word.
type Backend = AtomicSnowflake<Custom<u64>, SystemClock, &'static AtomicU64>;

thread_local! {
    /// This backend's generators, by layout and worker id: built once, their words shared.
    static SNOWFLAKES: RefCell<HashMap<(String, i32), &'static Backend>> =
        RefCell::new(HashMap::new());
}

/// The next id of `layout` (a preset's name or alias, or `NAME:BITS,...` with
/// `epoch_ms` and `tick_ms`), with this server's worker id.
pub fn next_snowflake(layout: &str, custom: Option<(u64, u64)>) -> i64 {
    let worker = WORKER_ID.get();
    let key = (
        match custom {
            Some((epoch, tick)) => format!("{layout}|{epoch}|{tick}"),
            None => layout.to_owned(),
        },
        worker,
    );
    let cached = SNOWFLAKES.with(|cache| cache.borrow().get(&key).copied());
    let generator = match cached {
        Some(generator) => generator,
        None => {
            let built: &'static Backend = Box::leak(Box::new(build(layout, custom, worker)));
            SNOWFLAKES.with(|cache| cache.borrow_mut().insert(key, built));
            built
        }
    };
    let id = generator
        .next_id()
        .unwrap_or_else(|e| fail(generator.layout().spec().name(), e));
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

/// This backend's generator of `layout` with `worker`, over the layout's shared word.
fn build(layout: &str, custom: Option<(u64, u64)>, worker: i32) -> Backend {
    let spec = layout_spec(layout, custom);
    let name = spec.name();
    let fixed: Vec<_> = spec
        .fields()
        .filter(|f| f.kind == FieldKind::Fixed)
        .collect();
    let mut builder =
        Snowflake::builder(Custom::<u64>::new(spec).unwrap_or_else(|e| fail(name, e)))
            .clock(SystemClock);
    if !fixed.is_empty() {
        let bits: u32 = fixed.iter().map(|f| f.bits).sum();
        let names = fixed.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
        let Ok(mut left) = u64::try_from(worker) else {
            report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("{name} needs a worker id ({names}), and idkit.worker_id is not set"),
                Some(
                    "Set idkit.worker_id in postgresql.conf, a number different on every \
                     server that makes ids of this layout, and reload (SELECT pg_reload_conf()).",
                ),
            )
        };
        if bits < 64 && left >> bits != 0 {
            fail(
                name,
                format!(
                    "idkit.worker_id = {worker} does not fit the layout's {bits} bits of {names}"
                ),
            );
        }
        // The worker id's low bits go to the least significant field.
        for field in fixed.iter().rev() {
            builder = builder.field(field.name, left & field.max());
            left >>= field.bits;
        }
    }
    let generator = builder.build_atomic().unwrap_or_else(|e| fail(name, e));
    let word = claim(&key_text(&spec, worker), generator.initial_word());
    generator.on_word(word)
}

/// What names one shared word: the layout's fields, tick and epoch, and the worker id.
fn key_text(spec: &LayoutSpec, worker: i32) -> String {
    let fields: Vec<String> = std::iter::once(spec.time())
        .chain(spec.fields())
        .map(|f| format!("{}:{}", f.name, f.bits))
        .collect();
    format!(
        "{}|{}|{}|{worker}",
        fields.join(","),
        spec.tick_ms(),
        spec.epoch_ms()
    )
}

/// FNV-1a of `text` from `seed`, never 0 nor [`CLAIMING`].
fn hash(text: &str, seed: u64) -> u64 {
    let h = text.bytes().fold(seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h.clamp(1, CLAIMING - 1)
}

/// A slot's first key word once no backend is laying the slot out; [`CLAIMING`] still if
/// the backend that took it died before it was done (the slot is then never used).
fn settled(slot: &Slot) -> u64 {
    let mut first = slot.key[0].load(Ordering::Acquire);
    for _ in 0..100_000 {
        if first != CLAIMING {
            break;
        }
        std::hint::spin_loop();
        first = slot.key[0].load(Ordering::Acquire);
    }
    first
}

/// The shared word of `key`: the slot already laid out for it, or a free one laid out now
/// with `initial`.
fn claim(key: &str, initial: u64) -> &'static AtomicU64 {
    let want = [
        hash(key, 0xcbf2_9ce4_8422_2325),
        hash(key, 0x8422_2325_cbf2_9ce4),
    ];
    for slot in &shared().slots {
        let mut first = settled(slot);
        if first == 0 {
            if slot.key[0]
                .compare_exchange(0, CLAIMING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                slot.key[1].store(want[1], Ordering::Relaxed);
                slot.word.store(initial, Ordering::Relaxed);
                slot.key[0].store(want[0], Ordering::Release);
                return &slot.word;
            }
            first = settled(slot);
        }
        if first == want[0] && slot.key[1].load(Ordering::Relaxed) == want[1] {
            return &slot.word;
        }
    }
    fail(
        "snowflake",
        format!(
            "every one of the server's {SLOTS} Snowflake generators is taken by another layout \
             or worker id; a layout's generator lasts until the server restarts"
        ),
    )
}
