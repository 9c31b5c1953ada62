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
//! Every callback keeps to three rules: it reads what its registration gave as user data
//! (the [`State`], or a [`SnowflakeFunction`]), it writes its result or an error message
//! before it returns, and nothing in it unwinds into SQLite (a panic becomes an SQL error).

use std::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use idkit_core::codec::crockford;
use idkit_typeid::{MAX_PREFIX, Prefix, TypeId};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error as SqlError, ffi};

use crate::functions::{
    Args, Found, Snowflakes, Worker, next_ulid, next_v7, text_arg, tick_arg, u64_arg, worker_arg,
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
    let generators: [(&CStr, c_int, Callback); 5] = [
        (c"idkit_ulid", 0, ulid),
        (c"idkit_ulid_text", 0, ulid_text),
        (c"idkit_uuidv7", 0, uuidv7),
        (c"idkit_uuidv7_text", 0, uuidv7_text),
        (c"idkit_typeid", 1, typeid),
    ];
    for (name, args, callback) in generators {
        let user = std::ptr::from_ref(state).cast_mut().cast::<c_void>();
        // SAFETY: the user data is a 'static State, read only: no destructor.
        unsafe { create(conn, name, args, callback, user, None)? };
    }
    let snowflakes: [(&CStr, c_int, Callback); 6] = [
        (c"idkit_snowflake", 0, snowflake),
        (c"idkit_snowflake", 1, snowflake),
        (c"idkit_snowflake", 2, snowflake),
        (c"idkit_snowflake_custom", 2, snowflake_custom),
        (c"idkit_snowflake_custom", 3, snowflake_custom),
        (c"idkit_snowflake_custom", 4, snowflake_custom),
    ];
    for (name, args, callback) in snowflakes {
        // Each registration its own generators: their leases end when SQLite drops it.
        let function = Box::new(SnowflakeFunction {
            state,
            generators: Snowflakes::new(database),
        });
        let user = Box::into_raw(function).cast::<c_void>();
        // SAFETY: SQLite owns the box from here and drops it through `drop_function`,
        // also when the registration fails.
        unsafe { create(conn, name, args, callback, user, Some(drop_function))? };
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

/// Runs `make` with the user data of the call `ctx` and hands SQLite its result or its
/// error.
///
/// # Safety
///
/// `ctx` is the context of a call of a function [`register`] registered with a `U` as its
/// user data.
unsafe fn answer<U>(
    ctx: *mut ffi::sqlite3_context,
    make: impl FnOnce(&U, Out) -> Result<(), SqlError>,
) {
    // SAFETY: `register` gave the function a U that lives as long as the function.
    let user = unsafe { &*ffi::sqlite3_user_data(ctx).cast::<U>() };
    let made = catch_unwind(AssertUnwindSafe(|| make(user, Out(ctx))));
    let message = match made {
        Ok(Ok(())) => return,
        Ok(Err(SqlError::UserFunctionError(e))) => e.to_string(),
        Ok(Err(e)) => e.to_string(),
        Err(_) => "idkit: internal error (a panic), no id made".to_owned(),
    };
    let len = c_int::try_from(message.len()).unwrap_or(c_int::MAX);
    // SAFETY: SQLite copies the message before this returns.
    unsafe { ffi::sqlite3_result_error(ctx, message.as_ptr().cast(), len) };
}

/// A call's result, written once.
struct Out(*mut ffi::sqlite3_context);

impl Out {
    fn blob(self, bytes: &[u8; 16]) -> Result<(), SqlError> {
        // SAFETY: SQLite copies the bytes (SQLITE_TRANSIENT) before this returns.
        unsafe {
            ffi::sqlite3_result_blob(self.0, bytes.as_ptr().cast(), 16, ffi::SQLITE_TRANSIENT());
        }
        Ok(())
    }

    fn integer(self, n: i64) -> Result<(), SqlError> {
        // SAFETY: the context of the running call.
        unsafe { ffi::sqlite3_result_int64(self.0, n) };
        Ok(())
    }

    /// `text` is ASCII (Crockford digits, hex, a TypeID prefix), so valid UTF-8.
    fn text(self, text: &[u8]) -> Result<(), SqlError> {
        let len = c_int::try_from(text.len()).unwrap_or(c_int::MAX);
        // SAFETY: as `blob`.
        unsafe {
            ffi::sqlite3_result_text(self.0, text.as_ptr().cast(), len, ffi::SQLITE_TRANSIENT());
        }
        Ok(())
    }
}

unsafe extern "C" fn ulid(
    ctx: *mut ffi::sqlite3_context,
    _: c_int,
    _: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: SQLite calls it with the context of a registered function.
    unsafe {
        answer(ctx, |state: &State, out| {
            out.blob(&next_ulid(state)?.to_be_bytes())
        })
    }
}

unsafe extern "C" fn ulid_text(
    ctx: *mut ffi::sqlite3_context,
    _: c_int,
    _: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `ulid`.
    unsafe {
        answer(ctx, |state: &State, out| {
            out.text(&crockford::encode_u128_ascii(
                next_ulid(state)?,
                crockford::ALPHABET,
            ))
        });
    }
}

unsafe extern "C" fn uuidv7(
    ctx: *mut ffi::sqlite3_context,
    _: c_int,
    _: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `ulid`.
    unsafe {
        answer(ctx, |state: &State, out| {
            out.blob(&next_v7(state)?.to_be_bytes())
        })
    }
}

unsafe extern "C" fn uuidv7_text(
    ctx: *mut ffi::sqlite3_context,
    _: c_int,
    _: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `ulid`.
    unsafe {
        answer(ctx, |state: &State, out| {
            let mut text = [0; 36];
            let uuid = idkit_uuid::Uuid::from_u128(next_v7(state)?);
            out.text(uuid.hyphenated().encode_lower(&mut text).as_bytes())
        });
    }
}

/// A TypeID's prefix and its `_` as the text begins (empty for a bare TypeID), kept as the
/// call's auxiliary data while the prefix argument is a constant: read and checked once a
/// statement.
#[derive(Clone, Copy)]
struct Head {
    bytes: [u8; MAX_PREFIX + 1],
    len: usize,
}

impl Head {
    fn new(prefix: Prefix) -> Self {
        let mut head = Self {
            bytes: [0; MAX_PREFIX + 1],
            len: 0,
        };
        if !prefix.is_empty() {
            let text = prefix.as_str().as_bytes();
            head.bytes[..text.len()].copy_from_slice(text);
            head.bytes[text.len()] = b'_';
            head.len = text.len() + 1;
        }
        head
    }

    /// The prefix argument `value`, checked.
    ///
    /// # Safety
    ///
    /// `value` is an argument of the running call.
    unsafe fn read(value: *mut ffi::sqlite3_value) -> Result<Self, SqlError> {
        let fail =
            |why: String| SqlError::UserFunctionError(format!("typeid prefix: {why}").into());
        // SAFETY: the argument is valid for the call; its text is valid until the next
        // conversion of the value, and is copied into the Prefix before.
        let text = unsafe {
            match ffi::sqlite3_value_type(value) {
                ffi::SQLITE_TEXT => {
                    let start = ffi::sqlite3_value_text(value);
                    let len = usize::try_from(ffi::sqlite3_value_bytes(value)).unwrap_or(0);
                    if start.is_null() {
                        &[][..]
                    } else {
                        std::slice::from_raw_parts(start, len)
                    }
                }
                ffi::SQLITE_NULL => return Err(fail("expected text, got NULL".into())),
                ffi::SQLITE_INTEGER => return Err(fail("expected text, got an integer".into())),
                ffi::SQLITE_FLOAT => return Err(fail("expected text, got a real".into())),
                _ => return Err(fail("expected text, got a blob".into())),
            }
        };
        let text = std::str::from_utf8(text).map_err(|_| fail("not UTF-8 text".into()))?;
        Prefix::new(text)
            .map(Self::new)
            .map_err(|e| fail(e.to_string()))
    }
}

unsafe extern "C" fn drop_head(head: *mut c_void) {
    // SAFETY: SQLite hands back the pointer `typeid` gave it, once.
    drop(unsafe { Box::from_raw(head.cast::<Head>()) });
}

unsafe extern "C" fn typeid(
    ctx: *mut ffi::sqlite3_context,
    _: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `ulid`; the function takes one argument, and auxiliary data is valid for
    // the call that reads it.
    unsafe {
        answer(ctx, |state: &State, out| {
            let kept = ffi::sqlite3_get_auxdata(ctx, 0).cast::<Head>();
            let head = if kept.is_null() {
                let head = Head::read(*argv)?;
                // SQLite may drop it at once: the call goes on with its own copy.
                let boxed = Box::into_raw(Box::new(head));
                ffi::sqlite3_set_auxdata(ctx, 0, boxed.cast(), Some(drop_head));
                head
            } else {
                *kept
            };
            let mut text = [0; TypeId::MAX_LEN];
            text[..head.len].copy_from_slice(&head.bytes[..head.len]);
            let suffix = crockford::encode_u128_ascii(next_v7(state)?, crockford::ALPHABET_LOWER);
            text[head.len..head.len + suffix.len()].copy_from_slice(&suffix);
            out.text(&text[..head.len + suffix.len()])
        });
    }
}

/// What a Snowflake registration keeps: the database's state, and its generators by layout
/// and worker (with their leases).
struct SnowflakeFunction {
    state: &'static State,
    generators: Snowflakes,
}

unsafe extern "C" fn drop_function(function: *mut c_void) {
    // SAFETY: SQLite hands back the pointer `register` gave it, once.
    drop(unsafe { Box::from_raw(function.cast::<SnowflakeFunction>()) });
}

unsafe extern "C" fn drop_found(found: *mut c_void) {
    // SAFETY: SQLite hands back the pointer `snowflake_id` gave it, once.
    drop(unsafe { Box::from_raw(found.cast::<Found>()) });
}

/// The arguments of the running call.
struct Raw<'a>(&'a [*mut ffi::sqlite3_value]);

impl Raw<'_> {
    /// # Safety
    ///
    /// `argv` holds the `argc` arguments of the running call.
    unsafe fn of<'a>(argc: c_int, argv: *mut *mut ffi::sqlite3_value) -> Raw<'a> {
        let len = usize::try_from(argc).unwrap_or(0);
        if len == 0 || argv.is_null() {
            return Raw(&[]);
        }
        // SAFETY: the caller's word.
        Raw(unsafe { std::slice::from_raw_parts(argv, len) })
    }
}

impl Args for Raw<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn get_raw(&self, i: usize) -> ValueRef<'_> {
        let value = self.0[i];
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

/// `idkit_snowflake([layout [, worker]])`: Twitter's layout when none is given.
unsafe extern "C" fn snowflake(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `ulid`, with the arguments SQLite gave.
    unsafe {
        let args = Raw::of(argc, argv);
        answer(ctx, |function: &SnowflakeFunction, out| {
            let worker = if args.len() > 1 {
                worker_arg(&args, 1)?
            } else {
                Worker::Unset
            };
            let id = snowflake_id(ctx, function, &args, None, worker, || match args.len() {
                0 => Ok("snowflake-twitter"),
                _ => text_arg(&args, 0, "layout"),
            })?;
            out.integer(id)
        });
    }
}

/// `idkit_snowflake_custom(fields, epoch_ms [, tick_ms [, worker]])`.
unsafe extern "C" fn snowflake_custom(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as `snowflake`.
    unsafe {
        let args = Raw::of(argc, argv);
        answer(ctx, |function: &SnowflakeFunction, out| {
            let epoch = u64_arg(&args, 1, "epoch_ms")?;
            let tick = tick_arg(&args, 2)?;
            let worker = if args.len() > 3 {
                worker_arg(&args, 3)?
            } else {
                Worker::Unset
            };
            let custom = Some((epoch, tick));
            let id = snowflake_id(ctx, function, &args, custom, worker, || {
                text_arg(&args, 0, "fields")
            })?;
            out.integer(id)
        });
    }
}

/// The next id of the call's generator: the one the statement kept for its first argument
/// (auxiliary data, kept while that argument is a constant) or the one `layout` names,
/// kept then for the statement's next rows.
///
/// # Safety
///
/// `ctx` is the running call's.
unsafe fn snowflake_id<'a>(
    ctx: *mut ffi::sqlite3_context,
    function: &SnowflakeFunction,
    args: &Raw<'_>,
    custom: Option<(u64, u64)>,
    worker: Worker,
    layout: impl FnOnce() -> Result<&'a str, SqlError>,
) -> Result<i64, SqlError> {
    let kept = if args.len() == 0 {
        None
    } else {
        // SAFETY: auxiliary data is valid for the call that reads it.
        unsafe { ffi::sqlite3_get_auxdata(ctx, 0).cast::<Found>().as_ref() }
    };
    let (id, keep) = function
        .generators
        .next(function.state, kept, custom, worker, layout)?;
    if let Some(found) = keep.filter(|_| args.len() > 0) {
        // SAFETY: SQLite owns the box from here and drops it through `drop_found`.
        unsafe {
            ffi::sqlite3_set_auxdata(
                ctx,
                0,
                Box::into_raw(Box::new(found)).cast(),
                Some(drop_found),
            )
        };
    }
    Ok(id)
}
