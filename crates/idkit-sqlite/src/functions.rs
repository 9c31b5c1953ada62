//! The SQL functions: generators for column defaults, an id's time, fields, text and bytes,
//! and the lowest and highest id of a time for range queries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use idkit_all::registry;
use idkit_core::random::{RandomSource, ThreadRandom};
use idkit_core::time_ordered::Layout;
use idkit_core::{Decoded, DynCodec, FieldValue, IdScheme, RawId};
use idkit_lease::{IdentitySource, Lease};
use idkit_snowflake::{AtomicSnowflake, Custom, FieldNames, LayoutSpec, RollbackPolicy, Snowflake};
use idkit_typeid::{Prefix, TypeId};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Error as SqlError};

use crate::clock::WallClock;
use crate::state::{self, MAX_BEHIND_MS, State};

type Result<T> = std::result::Result<T, SqlError>;

/// The error of a function: `what` went wrong, and why.
pub(crate) fn fail(what: &str, why: impl std::fmt::Display) -> SqlError {
    SqlError::UserFunctionError(format!("{what}: {why}").into())
}

/// Registers idkit's SQL functions on `conn`. Their generators keep their state in the
/// file `DATABASE-idkit` beside the main database (made on first use), or in process
/// memory for a database in memory (see the crate's docs for what holds where).
///
/// | function | returns |
/// |---|---|
/// | `idkit_ulid()`, `idkit_uuidv7()` | the next id, 16 bytes (a blob) |
/// | `idkit_ulid_text()`, `idkit_uuidv7_text()` | the same, as text |
/// | `idkit_typeid(prefix)` | the next TypeID (its UUIDv7 from `idkit_uuidv7`'s sequence) |
/// | `idkit_snowflake([layout [, worker]])` | the next id of a Snowflake layout (an integer), `snowflake-twitter` unless named; `worker` is a number or `'lease'` (one leased for the connection while it is open); a layout without worker bits takes none |
/// | `idkit_snowflake_custom(fields, epoch_ms [, tick_ms [, worker]])` | the same for a layout given by its fields |
/// | `idkit_time(id, scheme)`, `idkit_time_ms(id, scheme)` | the id's time, as RFC 3339 text or Unix ms |
/// | `idkit_decode(id, scheme)` | its fields as JSON (as `idkit decode --json` prints them) |
/// | `idkit_field(id, scheme, field)` | one integer field (a worker id, a shard) |
/// | `idkit_text(id, scheme)`, `idkit_blob(id, scheme)` | its canonical text, its bytes |
/// | `idkit_lowest(scheme, at)`, `idkit_highest(scheme, at)` | the bounds of `at`'s millisecond (tick): an integer for 64-bit schemes, a blob otherwise |
/// | `idkit_lowest_text(scheme, at)`, `idkit_highest_text(scheme, at)` | the same, as text |
/// | `idkit_ulid_lowest(at)`, `idkit_uuidv7_lowest(at)`, `idkit_snowflake_lowest(at [, layout])`, `idkit_typeid_lowest(prefix, at)`, and their `_highest` | the PostgreSQL extension's names of the same |
/// | `idkit_ulid_lowest_text(at)`, `idkit_uuidv7_lowest_text(at)`, and their `_highest_text` | the same as text, for a key of `idkit_ulid_text()` or `idkit_uuidv7_text()` |
/// | `ulid_to_uuid(id)`, `uuid_to_ulid(id)` | the other text of the same 128 bits |
///
/// An `id` is an integer (a 64-bit scheme), a blob of the scheme's bytes, or its text; a
/// `scheme` is a name or alias of `idkit schemes`; `at` is Unix ms (an integer) or a time
/// as text (`2026-12-06`, `2026-12-06 10:30:00` in UTC as SQLite writes it, or RFC 3339).
/// The custom layouts of `idkit_snowflake_custom` are read with `idkit_time`,
/// `idkit_time_ms`, `idkit_decode` and `idkit_field` given `fields, epoch_ms, tick_ms` in
/// place of the scheme. The reading functions are deterministic (usable in indexes,
/// generated columns and `CHECK`s), the generators are not; a NULL id or time gives NULL.
///
/// # Errors
///
/// Those of [`Connection::create_scalar_function`], and [`crate::Error`] (as
/// [`rusqlite::Error::UserFunctionError`]) when the database's state file is not one of
/// this version or cannot be mapped. Each function's own errors (bad input, a clock too far
/// behind) are SQL errors with a message.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let path = conn.path().filter(|p| !p.is_empty()).map(Path::new);
    let state = State::of_database(path).map_err(|e| SqlError::UserFunctionError(Box::new(e)))?;
    register_on(conn, state, path)
}

fn register_on(
    conn: &Connection,
    state: &'static State,
    database: Option<&Path>,
) -> rusqlite::Result<()> {
    let read = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;

    // The generators a column default calls per row, on SQLite's C interface.
    crate::made::register(conn, state, database)?;
    // ----- reading -----
    conn.create_scalar_function("idkit_time", 2, read, |ctx| {
        nullable(ctx, |ctx| {
            Ok(idkit_core::time::format_rfc3339_ms(time_ms(ctx)?))
        })
    })?;
    conn.create_scalar_function("idkit_time_ms", 2, read, |ctx| {
        nullable(ctx, |ctx| {
            Ok(i64::try_from(time_ms(ctx)?).unwrap_or(i64::MAX))
        })
    })?;
    conn.create_scalar_function("idkit_decode", 2, read, |ctx| {
        nullable(ctx, |ctx| {
            let scheme = text_arg(ctx, 1, "scheme")?;
            let (name, text, decoded) = decode_registered(ctx.get_raw(0), scheme)?;
            Ok(idkit_all::render::decoded_json(name, &text, &decoded).to_string())
        })
    })?;
    conn.create_scalar_function("idkit_field", 3, read, |ctx| {
        nullable(ctx, |ctx| {
            let scheme = text_arg(ctx, 1, "scheme")?;
            let field = text_arg(ctx, 2, "field")?;
            let (name, _, decoded) = decode_registered(ctx.get_raw(0), scheme)?;
            field_of(name, &decoded, field, None)
        })
    })?;
    // Custom layouts: (id, fields, epoch_ms [, tick_ms]) for (id, scheme), the tick 1 ms when
    // left out, as when the ids are made.
    for n in 3..=4 {
        conn.create_scalar_function("idkit_time", n, read, |ctx| {
            nullable(ctx, |ctx| {
                Ok(idkit_core::time::format_rfc3339_ms(custom_time(ctx)?))
            })
        })?;
        conn.create_scalar_function("idkit_time_ms", n, read, |ctx| {
            nullable(ctx, |ctx| {
                Ok(i64::try_from(custom_time(ctx)?).unwrap_or(i64::MAX))
            })
        })?;
        conn.create_scalar_function("idkit_decode", n, read, |ctx| {
            nullable(ctx, |ctx| {
                let (spec, raw, decoded, names) = decode_custom(ctx)?;
                let json = idkit_all::render::decoded_json_named(
                    spec.name(),
                    &raw.to_string(),
                    &decoded,
                    |name| names.name(name),
                );
                Ok(json.to_string())
            })
        })?;
    }
    conn.create_scalar_function("idkit_field", 5, read, |ctx| {
        nullable(ctx, |ctx| {
            let (spec, _, decoded, names) = decode_custom(ctx)?;
            field_of(
                spec.name(),
                &decoded,
                text_arg(ctx, 4, "field")?,
                Some(&names),
            )
        })
    })?;
    conn.create_scalar_function("idkit_text", 2, read, |ctx| {
        nullable(ctx, |ctx| {
            let scheme = text_arg(ctx, 1, "scheme")?;
            let (_, text, _) = decode_registered(ctx.get_raw(0), scheme)?;
            Ok(text)
        })
    })?;
    conn.create_scalar_function("idkit_blob", 2, read, |ctx| {
        nullable(ctx, |ctx| {
            let scheme = text_arg(ctx, 1, "scheme")?;
            let codec = codec(scheme)?;
            let raw = raw_id(&*codec, scheme, ctx.get_raw(0))?;
            Ok(raw.as_bytes().to_vec())
        })
    })?;
    conn.create_scalar_function("ulid_to_uuid", 1, read, |ctx| {
        nullable(ctx, |ctx| {
            let bits = bits128(ctx.get_raw(0), "ulid")?;
            Ok(idkit_uuid::Uuid::from_u128(bits).to_string())
        })
    })?;
    conn.create_scalar_function("uuid_to_ulid", 1, read, |ctx| {
        nullable(ctx, |ctx| {
            let bits = bits128(ctx.get_raw(0), "uuid")?;
            Ok(idkit_ulid::Ulid(bits).to_string())
        })
    })?;

    // ----- ranges -----
    for (name, highest) in [("idkit_lowest", false), ("idkit_highest", true)] {
        conn.create_scalar_function(name, 2, read, move |ctx| {
            nullable(ctx, |ctx| {
                let scheme = text_arg(ctx, 0, "scheme")?;
                let (codec, raw) = bound(scheme, ctx.get_raw(1), highest)?;
                Ok(stored(&*codec, raw))
            })
        })?;
        let text_name = format!("{name}_text");
        conn.create_scalar_function(&*text_name, 2, read, move |ctx| {
            nullable(ctx, |ctx| {
                let scheme = text_arg(ctx, 0, "scheme")?;
                let (codec, raw) = bound(scheme, ctx.get_raw(1), highest)?;
                codec.format_raw(&raw).map_err(|e| fail(scheme, e))
            })
        })?;
    }
    for (scheme, lowest, highest) in [
        ("ulid", "idkit_ulid_lowest", "idkit_ulid_highest"),
        ("uuid-v7", "idkit_uuidv7_lowest", "idkit_uuidv7_highest"),
    ] {
        for (name, high) in [(lowest, false), (highest, true)] {
            conn.create_scalar_function(name, 1, read, move |ctx| {
                nullable(ctx, |ctx| {
                    let (_, raw) = bound(scheme, ctx.get_raw(0), high)?;
                    Ok(raw.as_bytes().to_vec())
                })
            })?;
            // The bound of a text key (`idkit_ulid_text()`, `idkit_uuidv7_text()`): SQLite
            // orders every blob after every text, so a blob bound would find nothing there.
            conn.create_scalar_function(&*format!("{name}_text"), 1, read, move |ctx| {
                nullable(ctx, |ctx| {
                    let (codec, raw) = bound(scheme, ctx.get_raw(0), high)?;
                    codec.format_raw(&raw).map_err(|e| fail(scheme, e))
                })
            })?;
        }
    }
    for (name, high) in [
        ("idkit_snowflake_lowest", false),
        ("idkit_snowflake_highest", true),
    ] {
        for n in 1..=2 {
            conn.create_scalar_function(name, n, read, move |ctx| {
                nullable(ctx, |ctx| {
                    let layout = match ctx.len() {
                        1 => "snowflake-twitter",
                        _ => text_arg(ctx, 1, "layout")?,
                    };
                    let (codec, raw) = bound(layout, ctx.get_raw(0), high)?;
                    if codec.info().bits != 64 {
                        return Err(fail(layout, "its ids are not 64 bits: use idkit_lowest"));
                    }
                    Ok(Value::Integer(
                        raw.to_u64().map_err(|e| fail(layout, e))? as i64
                    ))
                })
            })?;
        }
        // A layout given by its fields: (at, fields, epoch_ms [, tick_ms]), as
        // idkit_snowflake_custom takes them.
        for n in 3..=4 {
            conn.create_scalar_function(name, n, read, move |ctx| {
                nullable(ctx, |ctx| {
                    let fields = text_arg(ctx, 1, "fields")?;
                    let epoch = u64_arg(ctx, 2, "epoch_ms")?;
                    let (spec, _) = LayoutSpec::parse_unkept(fields, tick_arg(ctx, 3)?, epoch)
                        .map_err(|e| fail("layout", e))?;
                    let bounds = spec
                        .bounds_u128(at_ms(ctx.get_raw(0), high)?, &[])
                        .map_err(|e| fail(spec.name(), e))?;
                    let id = if high { bounds.highest } else { bounds.lowest };
                    i64::try_from(id)
                        .map(Value::Integer)
                        .map_err(|_| fail(spec.name(), "its ids do not fit SQLite's integer"))
                })
            })?;
        }
    }
    for (name, high) in [
        ("idkit_typeid_lowest", false),
        ("idkit_typeid_highest", true),
    ] {
        conn.create_scalar_function(name, 2, read, move |ctx| {
            nullable(ctx, |ctx| {
                let prefix = text_arg(ctx, 0, "typeid prefix")?;
                let prefix = Prefix::new(prefix).map_err(|e| fail("typeid prefix", e))?;
                let (_, raw) = bound("uuid-v7", ctx.get_raw(1), high)?;
                let uuid = raw.to_u128().map_err(|e| fail("typeid", e))?;
                Ok(TypeId::new(prefix, uuid).to_string())
            })
        })?;
    }
    Ok(())
}

// ----- generators -----

/// The next ULID of the database's one sequence, as its 128 bits.
pub(crate) fn next_ulid(state: &'static State, others: &[&'static State]) -> Result<u128> {
    let (ms, counter) = next_time_ordered(state, |s| s.ulid, others, "ulid")?;
    let random = u128::from(random_u64("ulid")?);
    Ok(idkit_ulid::UlidLayout::assemble(ms, u128::from(counter) << 64 | random).0)
}

/// The next UUIDv7 of the database's one sequence (RFC 9562 section 6.2 method 1: a
/// counter after the millisecond, random bits below it), as its 128 bits.
pub(crate) fn next_v7(state: &'static State, others: &[&'static State]) -> Result<u128> {
    let (ms, counter) = next_time_ordered(state, |s| s.v7, others, "uuid v7")?;
    let random = u128::from(random_u64("uuid v7")?) & ((1 << 58) - 1);
    Ok(idkit_uuid::V7Layout::assemble(ms, u128::from(counter) << 58 | random).as_u128())
}

/// The next millisecond and counter of the word `word_of` picks in `state`, claimed too in
/// the same word of each of `others` (the connection's attached database files): an id
/// written into any of them is unique there.
#[inline(always)]
fn next_time_ordered(
    state: &'static State,
    word_of: impl Fn(&State) -> &'static AtomicU64,
    others: &[&'static State],
    what: &str,
) -> Result<(u64, u64)> {
    let word = word_of(state);
    if others.is_empty() {
        // No database attached (the usual case): the word alone.
        let (ms, counter) =
            state::step_time_ordered(word, &WallClock).map_err(|e| fail(what, e))?;
        state.cover(ms, counter).map_err(|e| fail(what, e))?;
        return Ok((ms, counter));
    }
    loop {
        let (ms, counter) =
            state::step_time_ordered(word, &WallClock).map_err(|e| fail(what, e))?;
        let taken = state::time_ordered_word(ms, counter);
        if let Some(higher) = claim_in(others.iter().map(|s| word_of(s)), taken) {
            // Another database's word is past it: go on above that.
            word.fetch_max(higher, Ordering::AcqRel);
            continue;
        }
        for s in std::iter::once(state).chain(others.iter().copied()) {
            s.cover(ms, counter).map_err(|e| fail(what, e))?;
        }
        return Ok((ms, counter));
    }
}

/// Claims `value` in each of `words`, words that only ever rise by compare-and-swap and
/// whose every value is one id taken: each is swapped from below `value` to `value`, so no
/// other taker of that word gets it. `Some(word's value)` when a word is at `value` or past
/// it already (the words swapped before it keep `value` unused, which repeats nothing).
pub(crate) fn claim_in<'a>(words: impl Iterator<Item = &'a AtomicU64>, value: u64) -> Option<u64> {
    for word in words {
        let mut seen = word.load(Ordering::Acquire);
        loop {
            if seen >= value {
                return Some(seen);
            }
            match word.compare_exchange_weak(seen, value, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
    }
    None
}

fn random_u64(what: &str) -> Result<u64> {
    ThreadRandom.u64().map_err(|e| fail(what, e))
}

/// A Snowflake generator of this process over its layout's shared word, where its time
/// field sits, and the lease of its worker id when it was leased.
struct Generator {
    generator: AtomicSnowflake<Custom<u64>, WallClock, &'static AtomicU64>,
    spec: LayoutSpec,
    /// The word the generator steps, and its key in any state file.
    word: &'static AtomicU64,
    key: String,
    /// The first word of this generator above a floor (a state's `floor_ms`).
    initial_after: Box<dyn Fn(u64) -> u64 + Send + Sync>,
    /// Its words in the states of attached database files, found once each.
    elsewhere: Mutex<Vec<(usize, &'static AtomicU64)>>,
    /// Where the sequence sits in an id: its shift and mask.
    sequence: (u32, u64),
    /// Held while the generator lives (its connection is open); released when dropped.
    _lease: Option<Lease>,
}

impl Generator {
    /// The next id, claimed too in this generator's word of each of `others` (the
    /// connection's attached database files), once each database's high-water mark
    /// covers its tick.
    #[inline]
    fn next(&self, state: &'static State, others: &[&'static State]) -> Result<i64> {
        let name = self.spec.name();
        let id = loop {
            let id = self.generator.next_id().map_err(|e| self.refused(e))?;
            if others.is_empty() {
                break id;
            }
            let words = self.words_in(others)?;
            match claim_in(words.iter().copied(), id) {
                // Another database's word is past it: go on above that.
                Some(higher) => {
                    self.word.fetch_max(higher, Ordering::AcqRel);
                }
                None => break id,
            }
        };
        let time = self.spec.time();
        let tick = (id >> time.shift) & time.max();
        let ms = self.spec.tick_start_ms(tick).unwrap_or(u64::MAX);
        let count = (id >> self.sequence.0) & self.sequence.1;
        state.cover(ms, count).map_err(|e| fail(name, e))?;
        for s in others {
            s.cover(ms, count).map_err(|e| fail(name, e))?;
        }
        // A 64-bit layout's top bit is reserved (checked when the layout was read).
        i64::try_from(id).map_err(|_| fail(name, "an id past the integer's range"))
    }

    /// The SQL error of a generator that refused: a clock still behind the last id after
    /// the wait names the clock and that id's time, as the time-ordered generators do.
    #[cold]
    fn refused(&self, e: idkit_core::GenerateError) -> rusqlite::Error {
        let name = self.spec.name();
        if e.kind() == idkit_core::GenerateErrorKind::ClockMovedBackwards {
            let time = self.spec.time();
            let tick = (self.word.load(Ordering::Acquire) >> time.shift) & time.max();
            if let Some(last_ms) = self.spec.tick_start_ms(tick) {
                let now_ms = idkit_core::Clock::now_ms(&WallClock);
                return fail(name, crate::Error::ClockBehind { now_ms, last_ms });
            }
        }
        fail(name, e)
    }

    /// This generator's word in each of `others`, claimed the first time (above that
    /// state's floor, as its own processes claim it).
    fn words_in(&self, others: &[&'static State]) -> Result<Vec<&'static AtomicU64>> {
        let mut found = self.elsewhere.lock().unwrap_or_else(|e| e.into_inner());
        others
            .iter()
            .map(|other| {
                let at = std::ptr::from_ref(*other) as usize;
                if let Some((_, word)) = found.iter().find(|(s, _)| *s == at) {
                    return Ok(*word);
                }
                let word = other
                    .word(&self.key, (self.initial_after)(other.floor_ms()))
                    .map_err(|e| fail(self.spec.name(), e))?;
                found.push((at, word));
                Ok(word)
            })
            .collect()
    }
}

/// One registered function's generators, by layout (and custom epoch and tick) and worker,
/// on one connection: a leased worker id is held as long as the connection is open.
pub(crate) struct Snowflakes {
    /// The connection's database file (none in memory), whose leases file holds the leases.
    database: Option<PathBuf>,
    list: Mutex<Vec<(SnowflakeKey, Arc<Generator>)>>,
}

/// A layout by name or fields, its custom epoch and tick, and the worker given.
type SnowflakeKey = (String, Option<(u64, u64)>, Worker);

/// The worker id a Snowflake call gives: none, a number, or `'lease'`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Worker {
    Unset,
    Given(i64),
    Leased,
}

/// The generator a statement's call found, kept with its first argument (the layout) as
/// auxiliary data: SQLite keeps it for the statement's next rows while that argument is a
/// constant, so that a column default does not look its layout up per row.
pub(crate) struct Found {
    custom: Option<(u64, u64)>,
    worker: Worker,
    generator: Arc<Generator>,
}

impl Snowflakes {
    pub(crate) fn new(database: Option<&Path>) -> Self {
        Self {
            database: database.map(Path::to_path_buf),
            list: Mutex::new(Vec::new()),
        }
    }

    /// The next id of the generator of the call's layout with `custom` epoch and tick and
    /// `worker`: the one `kept` from the statement's last row when it matches, else the
    /// one of `layout` (read from the call only then), built on first use. Returns the
    /// generator to keep for the next row too when it was not the one kept.
    pub(crate) fn next<'a>(
        &self,
        state: &'static State,
        others: &[&'static State],
        kept: Option<&Found>,
        custom: Option<(u64, u64)>,
        worker: Worker,
        layout: impl FnOnce() -> Result<&'a str>,
    ) -> Result<(i64, Option<Found>)> {
        if let Some(found) = kept.filter(|f| f.custom == custom && f.worker == worker) {
            return Ok((found.generator.next(state, others)?, None));
        }
        let layout = layout()?;
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        // A few generators per function, found without allocating: a list, searched.
        let found = list
            .iter()
            .find(|(k, _)| k.0 == layout && k.1 == custom && k.2 == worker)
            .map(|(_, g)| Arc::clone(g));
        let generator = match found {
            Some(generator) => generator,
            None => {
                let built = Arc::new(build(
                    state,
                    self.database.as_deref(),
                    layout,
                    custom,
                    worker,
                )?);
                list.push(((layout.to_owned(), custom, worker), Arc::clone(&built)));
                built
            }
        };
        drop(list);
        let id = generator.next(state, others)?;
        Ok((
            id,
            Some(Found {
                custom,
                worker,
                generator,
            }),
        ))
    }
}

/// What `layout`, not a Snowflake layout's name, should have been: the layouts there are
/// (64-bit ones: this function's ids are integers) and, for text of fields, the function
/// that takes them.
fn unknown_layout(layout: &str) -> String {
    let names: Vec<&str> = idkit_snowflake::presets()
        .iter()
        .filter(|p| p.word_bits() == 64)
        .map(|p| p.name())
        .collect();
    let fields = if layout.contains(':') {
        // A call that works: Twitter's epoch, a 1 ms tick, and a worker id that fits (none
        // for a layout without worker bits).
        let worker = match LayoutSpec::parse("custom", layout, 1, TWITTER_EPOCH_MS) {
            Ok(spec) if spec.worker_bits() == 0 => "",
            _ => ", 1",
        };
        format!(
            "; a layout given by its fields is idkit_snowflake_custom's, with its epoch (Unix \
             milliseconds) and tick, as in idkit_snowflake_custom('{layout}', \
             {TWITTER_EPOCH_MS}, 1{worker})"
        )
    } else {
        String::new()
    };
    format!(
        "\"{layout}\" is not a Snowflake layout: expected one of {} (or its name without \
         \"snowflake-\"){fields}",
        names.join(", ")
    )
}

/// Twitter's epoch (2010-11-04T01:42:54.657Z), the one the messages' examples give.
const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;

/// A 64-bit layout by preset name or alias, or from its fields.
fn layout_spec(layout: &str, custom: Option<(u64, u64)>) -> Result<LayoutSpec> {
    let spec = match custom {
        Some((epoch_ms, tick_ms)) => *custom_layout(layout, epoch_ms, tick_ms)?,
        None => {
            let entry =
                registry::find(layout).map_err(|_| fail("layout", unknown_layout(layout)))?;
            *idkit_snowflake::preset(entry.name())
                .ok_or_else(|| fail("layout", unknown_layout(entry.name())))?
        }
    };
    if spec.word_bits() != 64 {
        return Err(fail(
            spec.name(),
            "its ids are 128 bits and do not fit SQLite's integer: a 64-bit layout makes \
             integer ids",
        ));
    }
    Ok(spec)
}

/// Custom layouts read so far, by fields, epoch and tick (a layout's field names live as
/// long as the process: reading each once keeps that bounded).
static CUSTOM: Mutex<Option<HashMap<CustomKey, &'static LayoutSpec>>> = Mutex::new(None);

/// A custom layout's fields, epoch and tick.
type CustomKey = (String, u64, u64);

/// At most this many custom layouts per process.
const MAX_CUSTOM: usize = 1_024;

fn custom_layout(fields: &str, epoch_ms: u64, tick_ms: u64) -> Result<&'static LayoutSpec> {
    let mut layouts = CUSTOM.lock().unwrap_or_else(|e| e.into_inner());
    let layouts = layouts.get_or_insert_with(HashMap::new);
    let key = (fields.to_owned(), epoch_ms, tick_ms);
    if let Some(spec) = layouts.get(&key) {
        return Ok(spec);
    }
    if layouts.len() >= MAX_CUSTOM {
        return Err(fail(
            "layout",
            format!("a process reads at most {MAX_CUSTOM} distinct custom layouts"),
        ));
    }
    let spec =
        LayoutSpec::parse("custom", fields, tick_ms, epoch_ms).map_err(|e| fail("layout", e))?;
    let spec: &'static LayoutSpec = Box::leak(Box::new(spec));
    layouts.insert(key, spec);
    Ok(spec)
}

/// This process's generator of `layout` with `worker`, over the layout's word in the
/// state file: laid out above the database's high-water mark. It waits for a clock behind
/// its last tick up to [`MAX_BEHIND_MS`], then refuses.
fn build(
    state: &'static State,
    database: Option<&Path>,
    layout: &str,
    custom: Option<(u64, u64)>,
    worker: Worker,
) -> Result<Generator> {
    let spec = layout_spec(layout, custom)?;
    let name = spec.name();
    state.require_file(name).map_err(|e| fail(name, e))?;
    let mut builder = Snowflake::builder(Custom::<u64>::new(spec).map_err(|e| fail(name, e))?)
        .clock(WallClock)
        .rollback(RollbackPolicy::Wait {
            max_ms: MAX_BEHIND_MS,
        });
    let mut lease = None;
    let bits = spec.worker_bits();
    let worker = if bits == 0 {
        if worker != Worker::Unset {
            // Accepted, it would mean nothing: every worker id shares the layout's one
            // sequence (a lease would be taken for nothing).
            let call = match custom {
                Some((epoch_ms, tick_ms)) => {
                    format!("idkit_snowflake_custom('{layout}', {epoch_ms}, {tick_ms})")
                }
                None => format!("idkit_snowflake('{name}')"),
            };
            return Err(fail(
                name,
                format!(
                    "the layout has no worker bits (its ids are a time and a sequence, one \
                     sequence for every process on the database), so a worker id would mean \
                     nothing: call {call} without one"
                ),
            ));
        }
        0
    } else {
        let names = spec.worker_names();
        let worker = match worker {
            Worker::Given(worker) => worker,
            Worker::Leased => {
                let held = lease_worker(database, name, bits)?;
                let worker = i64::try_from(held.worker()).unwrap_or(i64::MAX);
                lease = Some(held);
                worker
            }
            Worker::Unset => {
                // A call that works, of the function that was called.
                let example = match custom {
                    Some((epoch_ms, tick_ms)) => format!(
                        "as the call's fourth argument, as in \
                         idkit_snowflake_custom('{layout}', {epoch_ms}, {tick_ms}, 1)"
                    ),
                    None => format!(
                        "as the call's second argument, as in idkit_snowflake('{}', 1)",
                        spec.name()
                    ),
                };
                return Err(fail(
                    name,
                    format!(
                        "the layout needs a worker id ({names}): give it {example}, different \
                         on every database whose ids meet (every process on one database may \
                         share it), or 'lease' for one of the connection's own"
                    ),
                ));
            }
        };
        let unsigned = u64::try_from(worker)
            .map_err(|_| fail(name, format!("worker {worker} is negative")))?;
        for (field, value) in spec.split_worker(unsigned).map_err(|e| fail(name, e))? {
            builder = builder.field(field, value);
        }
        unsigned
    };
    // One generator of these settings for the first words in other states (their floors).
    let template = builder.clone().build_atomic().map_err(|e| fail(name, e))?;
    let generator = builder.build_atomic().map_err(|e| fail(name, e))?;
    let initial = generator.initial_word_after(state.floor_ms());
    let key = key_text(&spec, worker)?;
    let word = state.word(&key, initial).map_err(|e| fail(name, e))?;
    Ok(Generator {
        generator: generator.on_word(word),
        spec,
        word,
        key,
        initial_after: Box::new(move |floor| template.initial_word_after(floor)),
        elsewhere: Mutex::new(Vec::new()),
        sequence: (spec.sequence().shift, spec.sequence().max()),
        _lease: lease,
    })
}

/// A worker id of `bits` bits for layout `name`, leased for the connection from the file
/// `DATABASE-idkit-leases` beside the database (`idkit-lease`'s SQLite source): no other
/// connection, of this process or another, is given it while this one holds it.
///
/// The leases have a file of their own: a lease written into the database would wait for
/// the write lock that the calling transaction may hold.
fn lease_worker(database: Option<&Path>, name: &str, bits: u32) -> Result<Lease> {
    let Some(database) = database else {
        return Err(fail(
            name,
            "a leased worker id needs a database file (an in-memory database has no other \
             process to keep apart): give the worker id",
        ));
    };
    let mut file = database.as_os_str().to_owned();
    file.push("-idkit-leases");
    let source = IdentitySource::sqlite(Path::new(&file), "idkit");
    let slots = 1_u64.checked_shl(bits).unwrap_or(u64::MAX);
    Lease::acquire(&source, name, slots).map_err(|e| fail(name, e))
}

/// What names one shared word in the state file: [`LayoutSpec::word_key`] (where the time
/// and sequence sit, the bits the worker sets, tick and epoch) after `snowflake|`.
fn key_text(spec: &LayoutSpec, worker: u64) -> Result<String> {
    let key = spec.word_key(worker).map_err(|e| fail(spec.name(), e))?;
    Ok(format!("snowflake|{key}"))
}

// ----- arguments -----

/// NULL when the first argument is NULL, else `f`.
fn nullable<T: Into<Value>>(
    ctx: &Context<'_>,
    f: impl FnOnce(&Context<'_>) -> Result<T>,
) -> Result<Value> {
    if (0..ctx.len()).any(|i| ctx.get_raw(i) == ValueRef::Null) {
        return Ok(Value::Null);
    }
    f(ctx).map(Into::into)
}

/// A call's arguments: rusqlite's [`Context`], or those of a function on SQLite's C
/// interface ([`crate::made`]).
pub(crate) trait Args {
    fn len(&self) -> usize;
    fn get_raw(&self, i: usize) -> ValueRef<'_>;
}

impl Args for Context<'_> {
    fn len(&self) -> usize {
        Context::len(self)
    }
    fn get_raw(&self, i: usize) -> ValueRef<'_> {
        Context::get_raw(self, i)
    }
}

pub(crate) fn text_arg<'a>(ctx: &'a impl Args, i: usize, what: &str) -> Result<&'a str> {
    match ctx.get_raw(i) {
        ValueRef::Text(text) => std::str::from_utf8(text).map_err(|_| fail(what, "not UTF-8 text")),
        other => Err(fail(what, format!("expected text, got {}", kind(other)))),
    }
}

pub(crate) fn u64_arg(ctx: &impl Args, i: usize, what: &str) -> Result<u64> {
    match ctx.get_raw(i) {
        ValueRef::Integer(n) => {
            u64::try_from(n).map_err(|_| fail(what, format!("{n} is negative")))
        }
        other => Err(fail(
            what,
            format!("expected an integer, got {}", kind(other)),
        )),
    }
}

/// A custom layout's tick in ms, argument `i`: 1 ms when the call leaves it out.
pub(crate) fn tick_arg(ctx: &impl Args, i: usize) -> Result<u64> {
    if ctx.len() > i {
        u64_arg(ctx, i, "tick_ms")
    } else {
        Ok(1)
    }
}

pub(crate) fn worker_arg(ctx: &impl Args, i: usize) -> Result<Worker> {
    match ctx.get_raw(i) {
        ValueRef::Null => Ok(Worker::Unset),
        ValueRef::Integer(n) => Ok(Worker::Given(n)),
        ValueRef::Text(b"lease") => Ok(Worker::Leased),
        other => Err(fail(
            "worker",
            format!("expected an integer or 'lease', got {}", kind(other)),
        )),
    }
}

fn kind(value: ValueRef<'_>) -> &'static str {
    match value {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "an integer",
        ValueRef::Real(_) => "a real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a blob",
    }
}

/// A scheme by name or alias.
fn codec(scheme: &str) -> Result<Box<dyn DynCodec + Send + Sync>> {
    if matches!(scheme, "range" | "auto-increment") {
        // Listed by `idkit schemes`, but plain integers a store hands out: nothing in them
        // to read, no time to bound.
        return Err(fail(
            scheme,
            "its ids are plain integers that a store hands out, with no time or fields to \
             read: store and compare them as integers",
        ));
    }
    Ok(registry::find(scheme)
        .map_err(|e| fail("scheme", e))?
        .codec())
}

/// `value` as an id of `codec`: an integer (a 64-bit scheme), a blob of the scheme's bytes,
/// or its text.
fn raw_id(codec: &dyn DynCodec, scheme: &str, value: ValueRef<'_>) -> Result<RawId> {
    let bytes = (codec.info().bits / 8) as usize;
    match value {
        ValueRef::Integer(n) if bytes == 8 => Ok(RawId::from_u64(n as u64)),
        ValueRef::Integer(_) => Err(fail(
            scheme,
            format!("its ids are {bytes} bytes, not an integer: pass a blob or text"),
        )),
        ValueRef::Blob(blob) if blob.len() == bytes => {
            RawId::from_bytes(blob).map_err(|e| fail(scheme, e))
        }
        ValueRef::Blob(blob) => Err(fail(
            scheme,
            format!("a blob of {} bytes, where its ids are {bytes}", blob.len()),
        )),
        ValueRef::Text(text) => {
            let text = std::str::from_utf8(text).map_err(|_| fail(scheme, "not UTF-8 text"))?;
            codec.parse_raw(text).map_err(|e| fail(scheme, e))
        }
        other => Err(fail(scheme, format!("an id is not {}", kind(other)))),
    }
}

/// An id of a registered scheme taken apart: the scheme's name, its canonical text, its
/// fields. Text is decoded as text, so that what it carries beyond the bytes (a TypeID's
/// prefix) is kept.
fn decode_registered(value: ValueRef<'_>, scheme: &str) -> Result<(&'static str, String, Decoded)> {
    let codec = codec(scheme)?;
    let name = codec.info().name;
    if let ValueRef::Text(text) = value {
        let text = std::str::from_utf8(text).map_err(|_| fail(scheme, "not UTF-8 text"))?;
        let decoded = codec.decode_text(text).map_err(|e| fail(scheme, e))?;
        let canonical = codec.canonical_text(text).map_err(|e| fail(scheme, e))?;
        return Ok((name, canonical, decoded));
    }
    let raw = raw_id(&*codec, scheme, value)?;
    let decoded = codec.decode_raw(&raw).map_err(|e| fail(scheme, e))?;
    let text = codec.format_raw(&raw).map_err(|e| fail(scheme, e))?;
    Ok((name, text, decoded))
}

/// `idkit_time(id, scheme)`'s Unix ms.
fn time_ms(ctx: &Context<'_>) -> Result<u64> {
    let scheme = text_arg(ctx, 1, "scheme")?;
    let (name, _, decoded) = decode_registered(ctx.get_raw(0), scheme)?;
    decoded
        .timestamp_ms
        .ok_or_else(|| fail(name, "its ids carry no time"))
}

/// `(id, fields, epoch_ms, tick_ms)` taken apart, the layout read for this call only (the
/// reading functions are innocuous: a schema from elsewhere may call them with any layout,
/// and nothing of it outlives the call), with its fields' names.
fn decode_custom(ctx: &Context<'_>) -> Result<(LayoutSpec, u64, Decoded, FieldNames)> {
    let fields = text_arg(ctx, 1, "fields")?;
    let (spec, names) =
        LayoutSpec::parse_unkept(fields, tick_arg(ctx, 3)?, u64_arg(ctx, 2, "epoch_ms")?)
            .map_err(|e| fail("layout", e))?;
    let ValueRef::Integer(id) = ctx.get_raw(0) else {
        return Err(fail(
            spec.name(),
            format!("an id is an integer, not {}", kind(ctx.get_raw(0))),
        ));
    };
    let raw = id as u64;
    let decoded = spec
        .decode_u128(u128::from(raw))
        .map_err(|e| fail(spec.name(), e))?;
    Ok((spec, raw, decoded, names))
}

fn custom_time(ctx: &Context<'_>) -> Result<u64> {
    let (spec, _, decoded, _) = decode_custom(ctx)?;
    decoded
        .timestamp_ms
        .ok_or_else(|| fail(spec.name(), "its ids carry no time"))
}

/// The integer field `field` of `decoded`, or the error that lists the fields there are;
/// `names`, for a layout read with stand-in names, gives the layout's own.
fn field_of(
    scheme: &str,
    decoded: &Decoded,
    field: &str,
    names: Option<&FieldNames>,
) -> Result<i64> {
    let wanted = names.and_then(|n| n.field(field)).unwrap_or(field);
    match decoded.fields.iter().find(|(name, _)| *name == wanted) {
        Some((_, FieldValue::Int(n))) => {
            i64::try_from(*n).map_err(|_| fail(scheme, "the field is past the integer's range"))
        }
        Some(_) => Err(fail(scheme, format!("its field {field} is not a number"))),
        None => {
            let listed: Vec<_> = decoded
                .fields
                .iter()
                .map(|(name, _)| names.map_or(*name, |n| n.name(name)))
                .collect();
            Err(fail(
                scheme,
                format!("no field {field}: its fields are {}", listed.join(", ")),
            ))
        }
    }
}

/// The 128 bits of a ULID or UUID (of any version) given as a 16-byte blob or as text.
fn bits128(value: ValueRef<'_>, scheme: &str) -> Result<u128> {
    match value {
        ValueRef::Text(text) if scheme == "uuid" => {
            let text = std::str::from_utf8(text).map_err(|_| fail(scheme, "not UTF-8 text"))?;
            idkit_uuid::Uuid::parse_str(text)
                .map(|u| u.as_u128())
                .map_err(|e| fail(scheme, e))
        }
        ValueRef::Blob(blob) => <[u8; 16]>::try_from(blob)
            .map(u128::from_be_bytes)
            .map_err(|_| {
                fail(
                    scheme,
                    format!("a blob of {} bytes, where its ids are 16", blob.len()),
                )
            }),
        other => {
            let codec = codec(scheme)?;
            raw_id(&*codec, scheme, other)?
                .to_u128()
                .map_err(|e| fail(scheme, e))
        }
    }
}

/// `value` as Unix ms: an integer is Unix ms; text is a date, SQLite's `YYYY-MM-DD
/// HH:MM:SS[.SSS]` (UTC), RFC 3339, or Unix ms.
///
/// For a highest bound (`end`), a time given to the whole second (`datetime('now')`, `2026-12-06 10:30:00`) stands for the whole of
/// that second: its last millisecond, so that "until now" finds the rows of this second.
/// (No `'now'` of its own: the bounds are deterministic, as an index needs; SQLite's
/// `datetime('now')` is the clock.)
fn at_ms(value: ValueRef<'_>, end: bool) -> Result<u64> {
    match value {
        ValueRef::Integer(n) => u64::try_from(n)
            .map_err(|_| fail("time", "before 1970-01-01: no scheme's ids go back so far")),
        ValueRef::Text(text) => {
            let text = std::str::from_utf8(text).map_err(|_| fail("time", "not UTF-8 text"))?;
            let ms = parse_time(text).map_err(|e| fail("time", e))?;
            Ok(if end && whole_second(text) {
                ms + 999
            } else {
                ms
            })
        }
        other => Err(fail(
            "time",
            format!(
                "expected Unix ms (an integer) or a time as text, got {}",
                kind(other)
            ),
        )),
    }
}

/// Whether `text` is a time of day given to the whole second: `HH:MM:SS` after the date,
/// no fraction (an offset or `Z` may follow).
fn whole_second(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 19
        && matches!(bytes[10], b' ' | b'T' | b't')
        && bytes[13] == b':'
        && bytes[16] == b':'
        && bytes.get(19) != Some(&b'.')
}

/// A time as SQLite writes it (`2026-12-06 10:30:00`, UTC, no offset) or as
/// [`idkit_core::time::parse_time_ms`] reads it.
fn parse_time(text: &str) -> std::result::Result<u64, idkit_core::time::TimeError> {
    let bytes = text.as_bytes();
    let sqlite_form = text.is_ascii()
        && bytes.len() >= 19
        && bytes[10] == b' '
        && !text.ends_with('Z')
        && !text[19..].contains(['+', '-']);
    if sqlite_form {
        return idkit_core::time::parse_time_ms(&format!("{}T{}Z", &text[..10], &text[11..]));
    }
    idkit_core::time::parse_time_ms(text)
}

/// The lowest or highest id of `scheme` at `at`'s millisecond (tick).
fn bound(
    scheme: &str,
    at: ValueRef<'_>,
    highest: bool,
) -> Result<(Box<dyn DynCodec + Send + Sync>, RawId)> {
    let codec = codec(scheme)?;
    if codec.info().name == "typeid" {
        // Its bounds carry no type prefix, and a TypeID key (text, prefix and all) would
        // never be between them: nothing found, silently.
        return Err(fail(
            "typeid",
            format!(
                "a TypeID key is its type prefix and suffix, which these bounds cannot hold: \
                 use idkit_typeid_{}('user', at) with the key's prefix",
                if highest { "highest" } else { "lowest" }
            ),
        ));
    }
    let bounds = codec
        .bounds_raw(at_ms(at, highest)?, &[])
        .map_err(|e| fail(scheme, e))?;
    Ok((
        codec,
        if highest {
            bounds.highest
        } else {
            bounds.lowest
        },
    ))
}

/// A raw id as a column keeps it: an integer for a 64-bit scheme, its bytes otherwise.
fn stored(codec: &dyn DynCodec, raw: RawId) -> Value {
    match raw.to_u64() {
        Ok(n) if codec.info().bits == 64 => Value::Integer(n as i64),
        _ => Value::Blob(raw.as_bytes().to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_times_are_utc() {
        assert_eq!(
            parse_time("2016-04-30 11:18:25.796").unwrap(),
            1_462_015_105_796
        );
        assert_eq!(
            parse_time("2016-04-30 11:18:25").unwrap(),
            1_462_015_105_000
        );
        assert_eq!(
            parse_time("2016-04-30T11:18:25.796Z").unwrap(),
            1_462_015_105_796
        );
        assert_eq!(parse_time("2016-04-30").unwrap(), 1_461_974_400_000);
        assert!(parse_time("2016-04-30 11:18").is_err());
        assert!(parse_time("yesterday").is_err());
    }
}
