//! The SQL functions: generators for column defaults, an id's time and fields, and the
//! lowest and highest id of a time for range queries and partition bounds.

use idkit_all::registry;
use idkit_core::{Codec, DynCodec, RawId};
use idkit_typeid::{Prefix, TypeId};
use idkit_ulid::UlidCodec;
use idkit_uuid::UuidCodec;
use pgrx::prelude::*;
use pgrx::{JsonB, Uuid};

use crate::shared::{self, fail};
use crate::typeid::Typed;
use crate::ulid::Ulid;

/// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix microseconds.
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// Unix ms as `timestamptz`.
fn timestamp(ms: u64) -> TimestampWithTimeZone {
    let us = i64::try_from(ms)
        .ok()
        .and_then(|ms| ms.checked_mul(1000))
        .and_then(|us| us.checked_sub(PG_EPOCH_US))
        .unwrap_or_else(|| fail("timestamp", format!("{ms} ms is past timestamptz's range")));
    TimestampWithTimeZone::try_from(us).unwrap_or_else(|e| fail("timestamp", e))
}

/// A `timestamptz` as Unix ms (its microseconds dropped).
fn unix_ms(at: TimestampWithTimeZone) -> u64 {
    if !at.is_finite() {
        fail("timestamp", "an infinite time has no ids");
    }
    let us = pg_sys::TimestampTz::from(at) + PG_EPOCH_US;
    u64::try_from(us.div_euclid(1000)).unwrap_or_else(|_| {
        fail(
            "timestamp",
            "before 1970-01-01: no scheme's ids go back so far",
        )
    })
}

// ----- generators -----

/// The next ULID of the server's one sequence: unique and increasing across every session.
#[pg_extern]
fn idkit_ulid() -> Ulid {
    Ulid::of(shared::next_ulid())
}

/// The next UUIDv7 (RFC 9562 section 6.2 method 2: a counter within the millisecond) of the
/// server's one sequence.
#[pg_extern]
fn idkit_uuidv7() -> Uuid {
    Uuid::from_bytes(*shared::next_v7().as_bytes())
}

/// The next TypeID of type `prefix`: its UUIDv7 from the same sequence as `idkit_uuidv7()`.
#[pg_extern]
fn idkit_typeid(prefix: &str) -> Typed {
    let prefix = Prefix::new(prefix).unwrap_or_else(|e| fail("typeid prefix", e));
    Typed(TypeId::new(prefix, shared::next_v7().as_u128()))
}

/// The next id of a Snowflake layout (a preset's name or alias) with `worker` as the value
/// of its fixed fields (Instagram's shard, Twitter's datacenter and worker), or this
/// server's `idkit.worker_id` when it is null; at the layout's cap it waits for the next
/// tick. Each layout and worker is a sequence of its own, shared by every session.
///
/// A NULL layout gives NULL (no id), as a NULL argument does to every function here; a
/// NULL worker is the server's `idkit.worker_id`.
#[pg_extern]
fn idkit_snowflake(
    layout: default!(Option<&str>, "'snowflake-twitter'"),
    worker: default!(Option<i64>, "NULL"),
) -> Option<i64> {
    Some(shared::next_snowflake(layout?, None, worker))
}

/// The next id of a layout given by its fields (`time:41,shard:13,sequence:10`, from the
/// most significant bit), its epoch (Unix ms) and its tick (ms).
/// A NULL layout, epoch or tick gives NULL; a NULL worker is the server's.
#[pg_extern]
fn idkit_snowflake_custom(
    fields: Option<&str>,
    epoch_ms: Option<i64>,
    tick_ms: default!(Option<i64>, 1),
    worker: default!(Option<i64>, "NULL"),
) -> Option<i64> {
    Some(shared::next_snowflake(
        fields?,
        Some(custom(epoch_ms?, tick_ms?)),
        worker,
    ))
}

/// A custom layout's epoch and tick, checked.
fn custom(epoch_ms: i64, tick_ms: i64) -> (u64, u64) {
    let (Ok(epoch), Ok(tick)) = (u64::try_from(epoch_ms), u64::try_from(tick_ms)) else {
        fail("layout", "the epoch and the tick are not negative")
    };
    (epoch, tick)
}

// ----- reading -----

/// A scheme by name or alias.
fn codec(scheme: &str) -> Box<dyn DynCodec + Send + Sync> {
    if matches!(scheme, "range" | "auto-increment") {
        // Listed by `idkit schemes`, but plain integers a store hands out (as the SQLite
        // functions say too).
        fail(
            scheme,
            "its ids are plain integers that a store hands out, with no time or fields to \
             read: store and compare them as integers",
        );
    }
    registry::find(scheme)
        .unwrap_or_else(|e| fail("scheme", e))
        .codec()
}

/// The id of a 64-bit scheme stored as `bigint`.
fn raw_bigint(id: i64, scheme: &str) -> RawId {
    bigint_scheme(scheme);
    RawId::from_u64(id as u64)
}

/// Checks that `scheme`'s ids are 64 bits, as a `bigint` column holds them.
fn bigint_scheme(scheme: &str) {
    let bits = registry::find(scheme)
        .unwrap_or_else(|e| fail("scheme", e))
        .info()
        .bits;
    if bits != 64 {
        fail(
            scheme,
            format!("its ids are {bits} bits, not a bigint: pass them as text"),
        );
    }
}

/// A decoded id's time, or the error for a scheme without one.
fn time_of(scheme: &str, decoded: &idkit_core::Decoded) -> TimestampWithTimeZone {
    match decoded.timestamp_ms {
        Some(ms) => timestamp(ms),
        None => fail(scheme, "its ids carry no time"),
    }
}

/// The ULID's time.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_ulid(id: Ulid) -> TimestampWithTimeZone {
    timestamp(id.to_ulid().timestamp_ms())
}

/// A UUID's time, by its own version: the Unix millisecond of version 7, the 100 ns count
/// since 1582 of versions 1 and 6 (to the millisecond); the other versions carry none.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_uuid(id: Uuid) -> TimestampWithTimeZone {
    let (codec, raw) = uuid_by_version(&id);
    let decoded = codec.decode_raw(&raw).unwrap_or_else(|e| fail("uuid", e));
    time_of(codec.info().name, &decoded)
}

/// The registered scheme of a UUID's version (`uuid-v1` ... `uuid-v8`), and its bits.
fn uuid_by_version(id: &Uuid) -> (Box<dyn DynCodec + Send + Sync>, RawId) {
    let bits = u128::from_be_bytes(*id.as_bytes());
    let version = id.as_bytes()[6] >> 4;
    let Some(scheme) = UuidCodec::of_version(version) else {
        fail(
            "uuid",
            format_args!("version {version} has no layout in RFC 9562"),
        );
    };
    (codec(scheme.info().name), RawId::from_u128(bits))
}

/// A TypeID's time (its UUIDv7's).
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_typeid(id: Typed) -> TimestampWithTimeZone {
    match id.0.timestamp_ms() {
        Some(ms) => timestamp(ms),
        None => fail(
            "typeid",
            "its UUID is not a version 7 one, so it carries no time",
        ),
    }
}

/// The time of a 64-bit id stored as `bigint` (a Snowflake layout, TSID).
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_bigint(id: i64, scheme: &str) -> TimestampWithTimeZone {
    let decoded = codec(scheme)
        .decode_raw(&raw_bigint(id, scheme))
        .unwrap_or_else(|e| fail(scheme, e));
    time_of(scheme, &decoded)
}

/// The time of an id given as its text (a TypeID, KSUID, ObjectId...).
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_text(id: &str, scheme: &str) -> TimestampWithTimeZone {
    let decoded = codec(scheme)
        .decode_text(id)
        .unwrap_or_else(|e| fail(scheme, e));
    time_of(scheme, &decoded)
}

/// `decoded` as `idkit decode --json` prints it.
fn decoded_json(codec: &dyn DynCodec, raw: &RawId, decoded: &idkit_core::Decoded) -> JsonB {
    let name = codec.info().name;
    let text = codec.format_raw(raw).unwrap_or_else(|e| fail(name, e));
    JsonB(idkit_all::render::decoded_json(name, &text, decoded))
}

/// The ULID's fields, as `idkit decode ulid --json` prints them.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_ulid(id: Ulid) -> JsonB {
    let codec = codec("ulid");
    let raw = RawId::from_u128(id.to_ulid().0);
    decoded_json(&*codec, &raw, &UlidCodec.decode(id.to_ulid()))
}

/// A UUID's fields, by its own version.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_uuid(id: Uuid) -> JsonB {
    let (codec, raw) = uuid_by_version(&id);
    let decoded = codec.decode_raw(&raw).unwrap_or_else(|e| fail("uuid", e));
    decoded_json(&*codec, &raw, &decoded)
}

/// A TypeID's fields.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_typeid(id: Typed) -> JsonB {
    idkit_decode_text(&id.0.to_string(), "typeid")
}

/// A 64-bit id's fields.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_bigint(id: i64, scheme: &str) -> JsonB {
    let codec = codec(scheme);
    let raw = raw_bigint(id, scheme);
    let decoded = codec.decode_raw(&raw).unwrap_or_else(|e| fail(scheme, e));
    decoded_json(&*codec, &raw, &decoded)
}

/// The fields of an id given as its text.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_text(id: &str, scheme: &str) -> JsonB {
    let codec = codec(scheme);
    let decoded = codec.decode_text(id).unwrap_or_else(|e| fail(scheme, e));
    let text = codec.canonical_text(id).unwrap_or_else(|e| fail(scheme, e));
    JsonB(idkit_all::render::decoded_json(
        codec.info().name,
        &text,
        &decoded,
    ))
}

// ----- ranges -----

/// The bounds of `at` in `scheme` (taken to its precision), as raw ids.
fn bounds(scheme: &str, at: TimestampWithTimeZone) -> idkit_core::TimeBounds<RawId> {
    codec(scheme)
        .bounds_raw(unix_ms(at), &[])
        .unwrap_or_else(|e| fail(scheme, e))
}

fn ulid_of(raw: RawId) -> Ulid {
    Ulid(
        raw.to_u128()
            .unwrap_or_else(|e| fail("ulid", e))
            .to_be_bytes(),
    )
}

fn uuid_of(raw: RawId) -> Uuid {
    Uuid::from_bytes(
        raw.to_u128()
            .unwrap_or_else(|e| fail("uuid", e))
            .to_be_bytes(),
    )
}

fn bigint_of(scheme: &str, raw: RawId) -> i64 {
    let id = raw.to_u64().unwrap_or_else(|e| fail(scheme, e));
    i64::try_from(id).unwrap_or_else(|_| fail(scheme, "an id past bigint's range"))
}

/// The lowest ULID of `at`'s millisecond: `id >= idkit_ulid_lowest(from) AND id <
/// idkit_ulid_lowest(to)` holds the ULIDs made from `from` up to `to`.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_ulid_lowest(at: TimestampWithTimeZone) -> Ulid {
    ulid_of(bounds("ulid", at).lowest)
}

/// The highest ULID of `at`'s millisecond.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_ulid_highest(at: TimestampWithTimeZone) -> Ulid {
    ulid_of(bounds("ulid", at).highest)
}

/// The lowest UUIDv7 of `at`'s millisecond.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_uuidv7_lowest(at: TimestampWithTimeZone) -> Uuid {
    uuid_of(bounds("uuid-v7", at).lowest)
}

/// The highest UUIDv7 of `at`'s millisecond.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_uuidv7_highest(at: TimestampWithTimeZone) -> Uuid {
    uuid_of(bounds("uuid-v7", at).highest)
}

/// The lowest id of a 64-bit scheme (a Snowflake layout, TSID) at `at`'s tick, every worker
/// included.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_snowflake_lowest(
    at: TimestampWithTimeZone,
    layout: default!(&str, "'snowflake-twitter'"),
) -> i64 {
    bigint_scheme(layout);
    bigint_of(layout, bounds(layout, at).lowest)
}

/// The highest id of a 64-bit scheme at `at`'s tick.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_snowflake_highest(
    at: TimestampWithTimeZone,
    layout: default!(&str, "'snowflake-twitter'"),
) -> i64 {
    bigint_scheme(layout);
    bigint_of(layout, bounds(layout, at).highest)
}

/// The lowest TypeID of `prefix` at `at`'s millisecond (types order by prefix first, so a
/// range over one column of several types is a range within one type).
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_typeid_lowest(prefix: &str, at: TimestampWithTimeZone) -> Typed {
    typeid_bound(prefix, at, |b| b.lowest)
}

/// The highest TypeID of `prefix` at `at`'s millisecond.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_typeid_highest(prefix: &str, at: TimestampWithTimeZone) -> Typed {
    typeid_bound(prefix, at, |b| b.highest)
}

fn typeid_bound(
    prefix: &str,
    at: TimestampWithTimeZone,
    pick: fn(idkit_core::TimeBounds<RawId>) -> RawId,
) -> Typed {
    let prefix = Prefix::new(prefix).unwrap_or_else(|e| fail("typeid prefix", e));
    let uuid = pick(bounds("uuid-v7", at))
        .to_u128()
        .unwrap_or_else(|e| fail("typeid", e));
    Typed(TypeId::new(prefix, uuid))
}

/// The lowest id of any time-ordered scheme at `at`, in its canonical text (KSUID, ObjectId,
/// TSID... stored as text; fixed-width text of an ordered alphabet sorts as the ids do).
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_lowest(scheme: &str, at: TimestampWithTimeZone) -> String {
    text_of(scheme, bounds(scheme, at).lowest)
}

/// The highest id of any time-ordered scheme at `at`, in its canonical text.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_highest(scheme: &str, at: TimestampWithTimeZone) -> String {
    text_of(scheme, bounds(scheme, at).highest)
}

fn text_of(scheme: &str, raw: RawId) -> String {
    if codec(scheme).info().name == "typeid" {
        // Its bounds carry no type prefix, and a TypeID (its prefix and suffix) would
        // never be between them: nothing found, silently.
        fail(
            "typeid",
            "a TypeID is its type prefix and suffix, which these bounds cannot hold: use \
             idkit_typeid_lowest('user', at) and idkit_typeid_highest('user', at) with the \
             key's prefix",
        );
    }
    codec(scheme)
        .format_raw(&raw)
        .unwrap_or_else(|e| fail(scheme, e))
}

// ----- layouts given by their fields -----
//
// What `idkit_snowflake_custom(fields, epoch_ms, tick_ms)` makes, SQL reads and bounds with
// the same three arguments.

/// The custom layout of `fields`, `epoch_ms` and `tick_ms`, read for this call only: the
/// fields other than time and sequence named by stand-ins, their names beside it (a
/// backend that reads ids of many layouts keeps none of them).
fn custom_spec(
    fields: &str,
    epoch_ms: i64,
    tick_ms: i64,
) -> (idkit_snowflake::LayoutSpec, idkit_snowflake::FieldNames) {
    let (epoch_ms, tick_ms) = custom(epoch_ms, tick_ms);
    let (spec, names) = idkit_snowflake::LayoutSpec::parse_unkept(fields, tick_ms, epoch_ms)
        .unwrap_or_else(|e| fail("layout", e));
    if spec.word_bits() != 64 {
        fail(
            spec.name(),
            "its ids are 128 bits and do not fit bigint: a 64-bit layout makes bigint ids",
        );
    }
    (spec, names)
}

/// A custom layout's id, taken apart (its reserved bits checked).
fn custom_decoded(id: i64, spec: &idkit_snowflake::LayoutSpec) -> (u128, idkit_core::Decoded) {
    let raw = u128::from(id as u64);
    let decoded = spec
        .decode_u128(raw)
        .unwrap_or_else(|e| fail(spec.name(), e));
    (raw, decoded)
}

/// The time of an id of a layout given by its fields, epoch and tick, as
/// `idkit_snowflake_custom` takes them.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_time")]
fn idkit_time_custom(
    id: i64,
    fields: &str,
    epoch_ms: i64,
    tick_ms: default!(i64, 1),
) -> TimestampWithTimeZone {
    let (spec, _) = custom_spec(fields, epoch_ms, tick_ms);
    time_of(spec.name(), &custom_decoded(id, &spec).1)
}

/// The fields of an id of a layout given by its fields, epoch and tick.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_decode")]
fn idkit_decode_custom(id: i64, fields: &str, epoch_ms: i64, tick_ms: default!(i64, 1)) -> JsonB {
    let (spec, names) = custom_spec(fields, epoch_ms, tick_ms);
    let (raw, decoded) = custom_decoded(id, &spec);
    JsonB(idkit_all::render::decoded_json_named(
        spec.name(),
        &raw.to_string(),
        &decoded,
        |name| names.name(name),
    ))
}

/// One field of a 64-bit id (`shard` of an Instagram id: the shard that owns the row;
/// `time` is the tick, `idkit_time` the time), by the layout's name or alias.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_field")]
fn idkit_field(id: i64, scheme: &str, field: &str) -> i64 {
    let codec = codec(scheme);
    let decoded = codec
        .decode_raw(&raw_bigint(id, scheme))
        .unwrap_or_else(|e| fail(scheme, e));
    field_of(scheme, &decoded, field, None)
}

/// One field of an id of a layout given by its fields, epoch and tick (the layout as
/// `idkit_snowflake_custom` takes it, the tick not left out, then the field's name).
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_field")]
fn idkit_field_custom(id: i64, fields: &str, epoch_ms: i64, tick_ms: i64, field: &str) -> i64 {
    let (spec, names) = custom_spec(fields, epoch_ms, tick_ms);
    field_of(
        spec.name(),
        &custom_decoded(id, &spec).1,
        field,
        Some(&names),
    )
}

/// The integer field `field` of `decoded`, or the error that lists the fields there are;
/// `names`, for a layout read with stand-in names, gives the layout's own.
fn field_of(
    scheme: &str,
    decoded: &idkit_core::Decoded,
    field: &str,
    names: Option<&idkit_snowflake::FieldNames>,
) -> i64 {
    let wanted = names.and_then(|n| n.field(field)).unwrap_or(field);
    let found = decoded.fields.iter().find(|(name, _)| *name == wanted);
    match found {
        Some((_, idkit_core::FieldValue::Int(n))) => {
            i64::try_from(*n).unwrap_or_else(|_| fail(scheme, "the field is past bigint's range"))
        }
        Some(_) => fail(scheme, format!("its field {field} is not a number")),
        None => {
            let listed: Vec<_> = decoded
                .fields
                .iter()
                .map(|(name, _)| names.map_or(*name, |n| n.name(name)))
                .collect();
            fail(
                scheme,
                format!("no field {field}: its fields are {}", listed.join(", ")),
            )
        }
    }
}

/// The lowest id of a layout given by its fields, epoch and tick at `at`'s tick, every
/// value of its fixed fields included.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_snowflake_lowest")]
fn idkit_snowflake_lowest_custom(
    at: TimestampWithTimeZone,
    fields: &str,
    epoch_ms: i64,
    tick_ms: default!(i64, 1),
) -> i64 {
    custom_bound(at, fields, epoch_ms, tick_ms, |b| b.lowest)
}

/// The highest id of a layout given by its fields, epoch and tick at `at`'s tick.
#[pg_extern(immutable, strict, parallel_safe, name = "idkit_snowflake_highest")]
fn idkit_snowflake_highest_custom(
    at: TimestampWithTimeZone,
    fields: &str,
    epoch_ms: i64,
    tick_ms: default!(i64, 1),
) -> i64 {
    custom_bound(at, fields, epoch_ms, tick_ms, |b| b.highest)
}

fn custom_bound(
    at: TimestampWithTimeZone,
    fields: &str,
    epoch_ms: i64,
    tick_ms: i64,
    pick: fn(idkit_core::TimeBounds<u128>) -> u128,
) -> i64 {
    let (spec, _) = custom_spec(fields, epoch_ms, tick_ms);
    let bounds = spec
        .bounds_u128(unix_ms(at), &[])
        .unwrap_or_else(|e| fail(spec.name(), e));
    i64::try_from(pick(bounds)).unwrap_or_else(|_| fail(spec.name(), "an id past bigint's range"))
}

extension_sql!(
    r#"
CREATE CAST (ulid AS timestamptz) WITH FUNCTION idkit_time(ulid);
CREATE CAST (typeid AS timestamptz) WITH FUNCTION idkit_time(typeid);
"#,
    name = "time_casts",
    requires = [
        "ulid_type",
        "typeid_type",
        idkit_time_ulid,
        idkit_time_typeid
    ],
);

// ----- the high-water mark -----

/// This server's high-water mark, Unix ms: no id it issued has a later time, and its
/// generators start above it after a restart, a crash or a promotion. Read it on a cluster
/// whose ids another will carry on (before `pg_upgrade`, a switch to a logical replica, a
/// restore into a new cluster), and raise the new one's to it with `idkit_raise_mark`.
#[pg_extern(volatile, parallel_safe)]
fn idkit_mark() -> i64 {
    i64::try_from(shared::mark().get()).unwrap_or(i64::MAX)
}

/// Raises this server's high-water mark to `ms` (Unix ms; a lower one is left as it is),
/// durably (the file, the WAL, the synchronous standbys) and returns the mark: for a
/// cluster that carries on another's ids, whose mark neither `pg_upgrade` nor logical
/// replication brings. The generators start above it at their first id after the server
/// starts: raise it before anything makes an id, or restart the server after. Superusers
/// only (`REVOKE`d from `PUBLIC`).
#[pg_extern(volatile)]
fn idkit_raise_mark(ms: i64) -> i64 {
    let Ok(ms) = u64::try_from(ms) else {
        fail("idkit_raise_mark", format!("{ms} is before 1970"));
    };
    shared::raise_mark(ms);
    idkit_mark()
}

extension_sql!(
    r#"
REVOKE EXECUTE ON FUNCTION idkit_raise_mark(bigint) FROM PUBLIC;
"#,
    name = "raise_mark_grant",
    requires = [idkit_raise_mark],
);
