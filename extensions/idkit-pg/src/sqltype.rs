//! What the extension's SQL types (`ulid`, `typeid`) share: how pgrx passes them in and out
//! of functions, how their input and receive functions read what they are given, their
//! comparison and hash functions, the hash itself, and the SQL that makes their operators,
//! operator classes and `min`/`max` from those functions. The SQL that makes each type and
//! its casts stays beside the type: it is the type's own.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::shared::{fail, report};

/// A type's text input read by `parse`; text that is not UTF-8, or that `parse` refuses, is
/// PostgreSQL's invalid-input error naming the type `sql` and the text.
pub fn read_text<T, E: std::fmt::Display>(
    sql: &str,
    input: &CStr,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> T {
    let text = input
        .to_str()
        .unwrap_or_else(|_| fail(sql, "input is not UTF-8"));
    parse(text).unwrap_or_else(|e| {
        report(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {sql}: {text:?}: {e}"),
            None,
        )
    })
}

/// A type's binary input (what its receive function is given) read by `read` from the bytes
/// left in the buffer; bytes that `read` refuses are PostgreSQL's invalid-binary error
/// naming the type `sql`.
pub fn read_binary<T, E: std::fmt::Display>(
    sql: &str,
    buf: pgrx::datum::Internal,
    read: impl FnOnce(&[u8]) -> Result<T, E>,
) -> T {
    let Some(datum) = buf.unwrap() else {
        fail(sql, "no binary input")
    };
    let msg = datum.cast_mut_ptr::<pg_sys::StringInfoData>();
    // SAFETY: a type's receive function gets the StringInfo of the value's bytes.
    let left = unsafe { (*msg).len - (*msg).cursor };
    let mut bytes = vec![0; usize::try_from(left).unwrap_or(0)];
    // SAFETY: `bytes` has room for the `left` bytes left in the buffer.
    unsafe { pg_sys::pq_copymsgbytes(msg, bytes.as_mut_ptr().cast(), left) };
    read(&bytes).unwrap_or_else(|e| {
        report(
            PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
            format!("invalid binary {sql}: {e}"),
            None,
        )
    })
}

/// The SQL name of a Rust type made by this extension, and how functions take and return
/// it (as its `FromDatum` and `IntoDatum` read and write it).
macro_rules! sql_type {
    ($ty:ident, $sql:literal) => {
        // SAFETY: the SQL type is made by this extension, beside the Rust type.
        unsafe impl ::pgrx::pgrx_sql_entity_graph::metadata::SqlTranslatable for $ty {
            const TYPE_IDENT: &'static str = ::pgrx::pgrx_resolved_type!($ty);
            const TYPE_ORIGIN: ::pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
                ::pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::ThisExtension;
            const ARGUMENT_SQL: Result<
                ::pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef,
                ::pgrx::pgrx_sql_entity_graph::metadata::ArgumentError,
            > = Ok(::pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::literal($sql));
            const RETURN_SQL: Result<
                ::pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef,
                ::pgrx::pgrx_sql_entity_graph::metadata::ReturnsError,
            > = Ok(::pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef::One(
                ::pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::literal($sql),
            ));
        }

        // SAFETY: arguments are read as FromDatum reads them; a strict function never sees
        // a null one.
        unsafe impl<'fcx> ::pgrx::callconv::ArgAbi<'fcx> for $ty {
            unsafe fn unbox_arg_unchecked(arg: ::pgrx::callconv::Arg<'_, 'fcx>) -> Self {
                let index = arg.index();
                unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| {
                    $crate::shared::fail($sql, format!("argument {index} is null"))
                })
            }
        }

        // SAFETY: returned as IntoDatum makes it.
        unsafe impl ::pgrx::callconv::BoxRet for $ty {
            unsafe fn box_into<'fcx>(
                self,
                fcinfo: &mut ::pgrx::callconv::FcInfo<'fcx>,
            ) -> ::pgrx::datum::Datum<'fcx> {
                match ::pgrx::IntoDatum::into_datum(self) {
                    Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
                    None => fcinfo.return_null(),
                }
            }
        }
    };
}

/// The functions behind a type's btree and hash operator classes and its `min` and `max`,
/// by their SQL names: the comparisons follow the type's `Ord`, the hashes its stored bytes
/// (`bytes()`).
macro_rules! comparisons {
    ($ty:ty; $cmp:ident, $lt:ident, $le:ident, $eq:ident, $ne:ident, $ge:ident, $gt:ident,
     $smaller:ident, $larger:ident, $hash:ident, $hash_extended:ident) => {
        #[pg_extern(immutable, strict, parallel_safe)]
        fn $smaller(a: $ty, b: $ty) -> $ty {
            a.min(b)
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $larger(a: $ty, b: $ty) -> $ty {
            a.max(b)
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $cmp(a: $ty, b: $ty) -> i32 {
            a.cmp(&b) as i32
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $lt(a: $ty, b: $ty) -> bool {
            a < b
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $le(a: $ty, b: $ty) -> bool {
            a <= b
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $eq(a: $ty, b: $ty) -> bool {
            a == b
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $ne(a: $ty, b: $ty) -> bool {
            a != b
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $ge(a: $ty, b: $ty) -> bool {
            a >= b
        }

        #[pg_extern(immutable, strict, parallel_safe)]
        fn $gt(a: $ty, b: $ty) -> bool {
            a > b
        }

        /// The hash a hash index and a hash join use: the low 32 bits of the extended hash
        /// with seed 0, as PostgreSQL requires of the two.
        #[pg_extern(immutable, strict, parallel_safe)]
        fn $hash(id: $ty) -> i32 {
            $crate::sqltype::mix_bytes(id.bytes().as_ref(), 0) as u32 as i32
        }

        /// The seeded hash hash partitions use.
        #[pg_extern(immutable, strict, parallel_safe)]
        fn $hash_extended(id: $ty, seed: i64) -> i64 {
            $crate::sqltype::mix_bytes(id.bytes().as_ref(), seed as u64) as i64
        }
    };
}

pub(crate) use {comparisons, sql_type};

// Each type's six operators, btree and hash operator classes and `min`/`max`, made from the
// functions `comparisons!` defines for it (`<type>_lt`, `<type>_cmp`, ...). Written once and
// made for each type by name; `finalize` runs it after every type and function exists.
extension_sql!(
    r#"
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['ulid', 'typeid'] LOOP
        EXECUTE format($f$
CREATE OPERATOR < (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR = (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR >= (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR > (LEFTARG = %1$I, RIGHTARG = %1$I, FUNCTION = %1$s_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR CLASS %1$s_ops DEFAULT FOR TYPE %1$I USING btree AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 %1$s_cmp(%1$I, %1$I);
CREATE AGGREGATE min(%1$I) (SFUNC = %1$s_smaller, STYPE = %1$I, SORTOP = <,
    PARALLEL = SAFE, COMBINEFUNC = %1$s_smaller);
CREATE AGGREGATE max(%1$I) (SFUNC = %1$s_larger, STYPE = %1$I, SORTOP = >,
    PARALLEL = SAFE, COMBINEFUNC = %1$s_larger);
CREATE OPERATOR CLASS %1$s_hash_ops DEFAULT FOR TYPE %1$I USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 %1$s_hash(%1$I),
    FUNCTION 2 %1$s_hash_extended(%1$I, bigint);
$f$, t);
    END LOOP;
END
$$;
"#,
    name = "operators",
    finalize,
);

/// Bytes and a seed mixed into 64 bits (splitmix64's finalizer over each 8-byte chunk, the
/// length last): every bit of the input moves about half the bits of the hash.
pub fn mix_bytes(bytes: &[u8], seed: u64) -> u64 {
    let finish = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let start = finish(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mixed = bytes.chunks(8).fold(start, |h, chunk| {
        let mut word = [0; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        finish(h ^ u64::from_be_bytes(word))
    });
    finish(mixed ^ bytes.len() as u64)
}
