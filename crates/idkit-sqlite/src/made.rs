//! The generators a column default calls once per row (`idkit_ulid`, `idkit_ulid_text`,
//! `idkit_uuidv7`, `idkit_uuidv7_text`, `idkit_typeid`, `idkit_snowflake`,
//! `idkit_snowflake_custom`), registered on SQLite's C interface rather than through
//! rusqlite's closures: per id, that saves rusqlite's argument and result wrapping and the
//! reference count of what a statement keeps as auxiliary data (a TypeID prefix, a
//! Snowflake generator), a large share of what an id costs above the statement
//! (`scripts/sqlite-functions.sh` measures it). The ids themselves come from the same steps
//! as every other door of this crate ([`crate::functions`]'s `next_ulid`, `next_v7` and
//! `Snowflakes`).
//!
//! One callback, [`call`], serves every function: it finds the user data its registration
//! gave (the [`State`], or a [`SnowflakeFunction`]), runs the function's [`Body`], and hands
//! SQLite the result or the error's message; nothing unwinds into SQLite (a panic becomes
//! an SQL error).

use std::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use idkit_core::codec::crockford;
use idkit_typeid::{Prefix, TypeId};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error as SqlError, ffi};

use crate::functions::{
    Args, Found, Snowflakes, Worker, fail, next_ulid, next_v7, text_arg, tick_arg, u64_arg,
    worker_arg,
};
use crate::state::State;

type Callback =
    unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);

/// Registers the generators on `conn`, each reading `state`; the Snowflake generators
/// lease worker ids from the leases file of `database`.
///
/// # Errors
///
/// [`SqlError::SqliteFailure`] when SQLite refuses a registration (out of memory, or a
/// statement running on the connection).
pub(crate) fn register(
    conn: &Connection,
    state: &'static State,
    database: Option<&Path>,
) -> rusqlite::Result<()> {
    let databases = Arc::new(Databases {
        main: state,
        attached: Mutex::new(Vec::new()),
        any: AtomicBool::new(false),
    });
    let generators: [(&CStr, c_int, Callback); 5] = [
        (c"idkit_ulid", 0, call::<Ulid>),
        (c"idkit_ulid_text", 0, call::<UlidText>),
        (c"idkit_uuidv7", 0, call::<UuidV7>),
        (c"idkit_uuidv7_text", 0, call::<UuidV7Text>),
        (c"idkit_typeid", 1, call::<Typed>),
    ];
    #[cfg(feature = "trace")]
    let generators = {
        let mut all = generators.to_vec();
        all.push((c"idkit_trace_state", 0, call::<TraceState>));
        all
    };
    for (name, args, callback) in generators {
        let user = Box::into_raw(Box::new(Arc::clone(&databases))).cast::<c_void>();
        // SAFETY: SQLite owns the box from here and drops it through `drop_box`, also
        // when the registration fails.
        unsafe {
            create(
                conn,
                name,
                args,
                callback,
                user,
                Some(drop_box::<Arc<Databases>>),
            )?;
        };
    }
    let snowflakes: [(&CStr, c_int, Callback); 6] = [
        (c"idkit_snowflake", 0, call::<Preset>),
        (c"idkit_snowflake", 1, call::<Preset>),
        (c"idkit_snowflake", 2, call::<Preset>),
        (c"idkit_snowflake_custom", 2, call::<Custom>),
        (c"idkit_snowflake_custom", 3, call::<Custom>),
        (c"idkit_snowflake_custom", 4, call::<Custom>),
    ];
    for (name, args, callback) in snowflakes {
        // Each registration its own generators: their leases end when SQLite drops it.
        let function = Box::new(SnowflakeFunction {
            databases: Arc::clone(&databases),
            generators: Snowflakes::new(database),
        });
        let user = Box::into_raw(function).cast::<c_void>();
        // SAFETY: SQLite owns the box from here and drops it through `drop_box`, also
        // when the registration fails.
        unsafe {
            create(
                conn,
                name,
                args,
                callback,
                user,
                Some(drop_box::<SnowflakeFunction>),
            )?;
        };
    }
    Ok(())
}

/// Registers `callback` as the function `name` of `args` arguments.
///
/// # Safety
///
/// `user` is what `callback` reads as its user data, dropped by `destroy` (if any) when
/// SQLite is done with it.
unsafe fn create(
    conn: &Connection,
    name: &CStr,
    args: c_int,
    callback: Callback,
    user: *mut c_void,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
) -> rusqlite::Result<()> {
    // SAFETY: the handle is the open connection's; the rest is the caller's word.
    let code = unsafe {
        ffi::sqlite3_create_function_v2(
            conn.handle(),
            name.as_ptr(),
            args,
            ffi::SQLITE_UTF8,
            user,
            Some(callback),
            None,
            None,
            destroy,
        )
    };
    if code == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(SqlError::SqliteFailure(
            ffi::Error::new(code),
            Some(format!("registering {}", name.to_string_lossy())),
        ))
    }
}

/// Drops the box of a `T` that SQLite hands back (user data, auxiliary data), once.
unsafe extern "C" fn drop_box<T>(value: *mut c_void) {
    // SAFETY: SQLite hands back, once, a pointer that `Box::into_raw` of a T made.
    drop(unsafe { Box::from_raw(value.cast::<T>()) });
}

/// What a function does with its user data and its call.
trait Body {
    /// What its registration gave it.
    type User;

    /// Makes the call's result (with [`Call::blob`], [`Call::text`] or
    /// [`Call::integer`]), or fails with the error SQLite reports.
    fn run(user: &Self::User, call: &mut Call<'_>) -> Result<(), SqlError>;
}

/// The callback of every function here: the body `B` run on the call's user data and
/// arguments, its error or a panic reported to SQLite.
///
/// # Safety
///
/// SQLite calls it with the context of a function [`register`] registered with a
/// `B::User` as its user data, and its `argc` arguments at `argv`.
unsafe extern "C" fn call<B: Body>(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: `register` gave the function a B::User that lives as long as the function.
    let user = unsafe { &*ffi::sqlite3_user_data(ctx).cast::<B::User>() };
    let len = usize::try_from(argc).unwrap_or(0);
    let args = if len == 0 || argv.is_null() {
        &[][..]
    } else {
        // SAFETY: SQLite's arguments for this call.
        unsafe { std::slice::from_raw_parts(argv, len) }
    };
    let mut call = Call { ctx, args };
    let message = match catch_unwind(AssertUnwindSafe(|| B::run(user, &mut call))) {
        Ok(Ok(())) => return,
        Ok(Err(SqlError::UserFunctionError(e))) => e.to_string(),
        Ok(Err(e)) => e.to_string(),
        Err(_) => "idkit: internal error (a panic), no id made".to_owned(),
    };
    let len = c_int::try_from(message.len()).unwrap_or(c_int::MAX);
    // SAFETY: SQLite copies the message before this returns.
    unsafe { ffi::sqlite3_result_error(ctx, message.as_ptr().cast(), len) };
}

/// A running call: its context and arguments.
struct Call<'a> {
    ctx: *mut ffi::sqlite3_context,
    args: &'a [*mut ffi::sqlite3_value],
}

impl Call<'_> {
    fn blob(&self, bytes: &[u8; 16]) -> Result<(), SqlError> {
        // SAFETY: the running call's context; SQLite copies the bytes (SQLITE_TRANSIENT)
        // before this returns.
        unsafe {
            ffi::sqlite3_result_blob(self.ctx, bytes.as_ptr().cast(), 16, ffi::SQLITE_TRANSIENT());
        }
        Ok(())
    }

    /// `text` is ASCII (Crockford digits, hex, a TypeID prefix), so valid UTF-8.
    fn text(&self, text: &[u8]) -> Result<(), SqlError> {
        let len = c_int::try_from(text.len()).unwrap_or(c_int::MAX);
        // SAFETY: as `blob`.
        unsafe {
            ffi::sqlite3_result_text(self.ctx, text.as_ptr().cast(), len, ffi::SQLITE_TRANSIENT());
        }
        Ok(())
    }

    fn null(&self) -> Result<(), SqlError> {
        // SAFETY: the running call's context.
        unsafe { ffi::sqlite3_result_null(self.ctx) };
        Ok(())
    }

    fn integer(&self, n: i64) -> Result<(), SqlError> {
        // SAFETY: the running call's context.
        unsafe { ffi::sqlite3_result_int64(self.ctx, n) };
        Ok(())
    }

    /// What the statement keeps for the first argument (set by [`Call::keep`] with a `T`
    /// in this function's calls only), if SQLite still holds it.
    fn kept<T>(&self) -> Option<&T> {
        if self.args.is_empty() {
            return None;
        }
        // SAFETY: auxiliary data is valid for the call that reads it, and each function
        // keeps one type there.
        unsafe { ffi::sqlite3_get_auxdata(self.ctx, 0).cast::<T>().as_ref() }
    }

    /// Keeps `value` for the statement's next calls while the first argument is a
    /// constant (SQLite may drop it at once). Nothing is kept for a call without
    /// arguments. It frees what was kept before: `&mut self`, so that no reference
    /// [`Call::kept`] gave outlives it.
    fn keep<T>(&mut self, value: T) {
        if self.args.is_empty() {
            return;
        }
        let boxed = Box::into_raw(Box::new(value)).cast::<c_void>();
        // SAFETY: SQLite owns the box from here and drops it through `drop_box`.
        unsafe { ffi::sqlite3_set_auxdata(self.ctx, 0, boxed, Some(drop_box::<T>)) };
    }
}

impl Args for Call<'_> {
    fn len(&self) -> usize {
        self.args.len()
    }

    fn get_raw(&self, i: usize) -> ValueRef<'_> {
        let value = self.args[i];
        // SAFETY: an argument of the running call; its text or bytes are read right after
        // their conversion, and stay valid while the call runs and reads no other form.
        unsafe {
            match ffi::sqlite3_value_type(value) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(value)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(value)),
                ffi::SQLITE_TEXT => ValueRef::Text(bytes(ffi::sqlite3_value_text(value), value)),
                ffi::SQLITE_BLOB => {
                    ValueRef::Blob(bytes(ffi::sqlite3_value_blob(value).cast(), value))
                }
                _ => ValueRef::Null,
            }
        }
    }
}

/// The `sqlite3_value_bytes` bytes at `start` of `value`'s text or blob.
///
/// # Safety
///
/// `start` is what the text or blob conversion of `value` returned just now.
unsafe fn bytes<'a>(start: *const u8, value: *mut ffi::sqlite3_value) -> &'a [u8] {
    // SAFETY: the caller's word.
    let len = usize::try_from(unsafe { ffi::sqlite3_value_bytes(value) }).unwrap_or(0);
    if start.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's word.
        unsafe { std::slice::from_raw_parts(start, len) }
    }
}

/// `idkit_ulid()`: 16 bytes.
struct Ulid;

impl Body for Ulid {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        let id = dbs.with_others(call, next_ulid)??;
        call.blob(&id.to_be_bytes())
    }
}

/// `idkit_trace_state()`, with feature `trace` only (the hunt's `--trace`): the state files
/// the connection's ids go to at this row, the main database's then each attached one's,
/// as [`State::describe`] gives them.
#[cfg(feature = "trace")]
struct TraceState;

#[cfg(feature = "trace")]
impl Body for TraceState {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        let said = dbs.with_others(call, |main, others| {
            std::iter::once(format!("main {}", main.describe()))
                .chain(others.iter().map(|s| format!("attached {}", s.describe())))
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        call.text(said.as_bytes())
    }
}

/// `idkit_ulid_text()`: 26 Crockford digits.
struct UlidText;

impl Body for UlidText {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        let id = dbs.with_others(call, next_ulid)??;
        call.text(&crockford::encode_u128_ascii(id, crockford::ALPHABET))
    }
}

/// `idkit_uuidv7()`: 16 bytes.
struct UuidV7;

impl Body for UuidV7 {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        let id = dbs.with_others(call, next_v7)??;
        call.blob(&id.to_be_bytes())
    }
}

/// `idkit_uuidv7_text()`: the hyphenated lower-case form.
struct UuidV7Text;

impl Body for UuidV7Text {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        let mut text = [0; 36];
        let id = dbs.with_others(call, next_v7)??;
        let uuid = idkit_uuid::Uuid::from_u128(id);
        call.text(uuid.hyphenated().encode_lower(&mut text).as_bytes())
    }
}

/// `idkit_typeid(prefix)`: the prefix, `_` and the UUIDv7's 26 digits.
struct Typed;

impl Body for Typed {
    type User = Arc<Databases>;
    fn run(dbs: &Arc<Databases>, call: &mut Call<'_>) -> Result<(), SqlError> {
        // A NULL prefix gives NULL, as every function here and the PostgreSQL extension's
        // (strict) do with a NULL argument: no id is made.
        if call.len() == 1 && matches!(call.get_raw(0), ValueRef::Null) {
            return call.null();
        }
        // The prefix is read and checked once a statement while it is a constant.
        let prefix = match call.kept::<Prefix>() {
            Some(prefix) => *prefix,
            None => {
                let text = text_arg(call, 0, "typeid prefix")?;
                let prefix = Prefix::new(text).map_err(|e| fail("typeid prefix", e))?;
                call.keep(prefix);
                prefix
            }
        };
        let uuid = dbs.with_others(call, next_v7)??;
        let id = TypeId::new(prefix, uuid);
        call.text(id.encode_ascii(&mut [0; TypeId::MAX_LEN]))
    }
}

/// What a Snowflake registration keeps: the database's state, and its generators by layout
/// and worker (with their leases).
struct SnowflakeFunction {
    databases: Arc<Databases>,
    generators: Snowflakes,
}

impl SnowflakeFunction {
    /// The next id of the call's generator: the one the statement kept for its first
    /// argument or the one `layout` names, kept then for the statement's next rows.
    fn next<'a>(
        &self,
        call: &'a Call<'_>,
        custom: Option<(u64, u64)>,
        worker: Worker,
        layout: impl FnOnce() -> Result<&'a str, SqlError>,
    ) -> Result<(i64, Option<Found>), SqlError> {
        // A generator kept by the statement was kept after its look-up of the attached
        // databases: none again.
        let kept = call.kept::<Found>();
        self.databases
            .with_others_after(call, kept.is_some(), |main, others| {
                self.generators
                    .next(main, others, kept, custom, worker, layout)
            })?
    }
}

/// `idkit_snowflake([layout [, worker]])`: Twitter's layout when none is given.
struct Preset;

impl Body for Preset {
    type User = SnowflakeFunction;
    fn run(function: &SnowflakeFunction, call: &mut Call<'_>) -> Result<(), SqlError> {
        // A NULL layout gives NULL (no id); a NULL worker is none given.
        if call.len() > 0 && matches!(call.get_raw(0), ValueRef::Null) {
            return call.null();
        }
        let worker = if call.len() > 1 {
            worker_arg(call, 1)?
        } else {
            Worker::Unset
        };
        let shared: &Call<'_> = call;
        let (id, keep) = function.next(shared, None, worker, || match shared.len() {
            0 => Ok("snowflake-twitter"),
            _ => text_arg(shared, 0, "layout"),
        })?;
        if let Some(found) = keep {
            call.keep(found);
        }
        call.integer(id)
    }
}

/// `idkit_snowflake_custom(fields, epoch_ms [, tick_ms [, worker]])`.
struct Custom;

impl Body for Custom {
    type User = SnowflakeFunction;
    fn run(function: &SnowflakeFunction, call: &mut Call<'_>) -> Result<(), SqlError> {
        // A NULL layout, epoch or tick gives NULL (no id); a NULL worker is none given.
        if (0..call.len().min(3)).any(|i| matches!(call.get_raw(i), ValueRef::Null)) {
            return call.null();
        }
        let epoch = u64_arg(call, 1, "epoch_ms")?;
        let tick = tick_arg(call, 2)?;
        let worker = if call.len() > 3 {
            worker_arg(call, 3)?
        } else {
            Worker::Unset
        };
        let shared: &Call<'_> = call;
        let (id, keep) = function.next(shared, Some((epoch, tick)), worker, || {
            text_arg(shared, 0, "fields")
        })?;
        if let Some(found) = keep {
            call.keep(found);
        }
        call.integer(id)
    }
}

/// A connection's databases as its generators see them: the main database's state, and the
/// states of the other database files the connection has attached (`ATTACH`), looked up at
/// the first id of each statement. An id is claimed in the word of every one of them
/// (`functions::claim_in`), so that it is unique in whichever the statement writes it to,
/// beside the connections that open that database directly.
pub(crate) struct Databases {
    main: &'static State,
    attached: Mutex<Vec<&'static State>>,
    /// Whether `attached` holds any (read without the lock).
    any: AtomicBool,
}

/// The key of the auxiliary data that marks a statement whose attached databases were
/// looked up. A negative key is SQLite's statement-wide auxiliary data, shared by every
/// function of the statement (a behaviour SQLite's source states but its documentation
/// does not: should it go, the look-up runs at every id, slower but the same).
const LOOKED_UP: c_int = -0x1d_4b17;

impl Databases {
    /// `f` of the main state and the attached ones (none, mostly: no lock then).
    #[inline(always)]
    fn with_others<R>(
        &self,
        call: &Call<'_>,
        f: impl FnOnce(&'static State, &[&'static State]) -> R,
    ) -> Result<R, SqlError> {
        self.with_others_after(call, false, f)
    }

    /// [`Databases::with_others`], the look-up skipped when `looked_up` (the statement
    /// kept what an earlier row of it made, after its look-up).
    #[inline(always)]
    fn with_others_after<R>(
        &self,
        call: &Call<'_>,
        looked_up: bool,
        f: impl FnOnce(&'static State, &[&'static State]) -> R,
    ) -> Result<R, SqlError> {
        // SAFETY: the running call's context; the mark is a static, never freed.
        let looked_up =
            looked_up || unsafe { !ffi::sqlite3_get_auxdata(call.ctx, LOOKED_UP).is_null() };
        if !looked_up {
            self.look_up(call)?;
            static MARK: u8 = 0;
            // SAFETY: as above; no destructor for a static.
            unsafe {
                ffi::sqlite3_set_auxdata(
                    call.ctx,
                    LOOKED_UP,
                    std::ptr::from_ref(&MARK).cast_mut().cast(),
                    None,
                );
            }
        }
        if !self.any.load(Ordering::Acquire) {
            return Ok(f(self.main, &[]));
        }
        let attached = self.attached.lock().unwrap_or_else(|e| e.into_inner());
        Ok(f(self.main, &attached))
    }

    /// The states of the database files attached to the call's connection now.
    #[cold]
    #[inline(never)]
    fn look_up(&self, call: &Call<'_>) -> Result<(), SqlError> {
        // SAFETY: the running call's connection.
        let db = unsafe { ffi::sqlite3_context_db_handle(call.ctx) };
        let mut states: Vec<&'static State> = Vec::new();
        for file in attached_files(db)? {
            let state = State::of_database(Some(Path::new(&file)))
                .map_err(|e| fail("attached database", e))?;
            // Its own main database, a database in memory or one that cannot be written:
            // nothing to claim in apart from the main state.
            if std::ptr::eq(state, self.main) || state.file().is_none() {
                continue;
            }
            if !states.iter().any(|s| std::ptr::eq(*s, state)) {
                states.push(state);
            }
        }
        self.any.store(!states.is_empty(), Ordering::Release);
        *self.attached.lock().unwrap_or_else(|e| e.into_inner()) = states;
        Ok(())
    }
}

/// `sqlite3_db_name` (SQLite 3.39), linked: 3.39 or later. A loadable extension has no
/// pointer to it in the bindings it is built with, and reads `PRAGMA database_list`.
#[cfg(not(feature = "loadable_extension"))]
unsafe fn db_name(db: *mut ffi::sqlite3, i: c_int) -> *const std::ffi::c_char {
    unsafe extern "C" {
        fn sqlite3_db_name(db: *mut ffi::sqlite3, n: c_int) -> *const std::ffi::c_char;
    }
    // SAFETY: the caller's word.
    unsafe { sqlite3_db_name(db, i) }
}

/// The files of the databases attached to `db` (not main, not temp; none in memory).
fn attached_files(db: *mut ffi::sqlite3) -> Result<Vec<String>, SqlError> {
    let mut files = Vec::new();
    // sqlite3_db_name came with SQLite 3.39; before it, and in a loadable extension,
    // PRAGMA database_list.
    #[cfg(not(feature = "loadable_extension"))]
    // SAFETY: a call of SQLite's without arguments.
    if unsafe { ffi::sqlite3_libversion_number() } >= 3_039_000 {
        for i in 2.. {
            // SAFETY: the open connection; the name and file are read before its next call.
            unsafe {
                let name = db_name(db, i);
                if name.is_null() {
                    break;
                }
                let file = ffi::sqlite3_db_filename(db, name);
                if !file.is_null() {
                    let file = CStr::from_ptr(file).to_string_lossy().into_owned();
                    if !file.is_empty() {
                        files.push(file);
                    }
                }
            }
        }
        return Ok(files);
    }
    // SAFETY: a statement of the open connection, finalized before return; its columns are
    // read while it stands on their row.
    unsafe {
        let mut stmt = std::ptr::null_mut();
        let sql = c"PRAGMA database_list";
        let rc = ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, std::ptr::null_mut());
        if rc != ffi::SQLITE_OK {
            return Err(fail(
                "attached databases",
                format!("PRAGMA database_list: {rc}"),
            ));
        }
        while ffi::sqlite3_step(stmt) == ffi::SQLITE_ROW {
            let seq = ffi::sqlite3_column_int64(stmt, 0);
            let file = ffi::sqlite3_column_text(stmt, 2);
            if seq >= 2 && !file.is_null() {
                let file = CStr::from_ptr(file.cast()).to_string_lossy().into_owned();
                if !file.is_empty() {
                    files.push(file);
                }
            }
        }
        ffi::sqlite3_finalize(stmt);
    }
    Ok(files)
}
