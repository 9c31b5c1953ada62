//! The `typeid` type: a TypeID with its prefix kept, stored as its UUID's 16 bytes and the
//! prefix's bytes (a short varlena: 21 bytes in a row for `user_...`, a byte of header, the UUID's 16 and
//! the prefix's 4); its canonical text;
//! on the binary protocol the same 16 bytes then the prefix, so that a binary `COPY`
//! round-trips whole and a reader that wants the UUID alone takes the first 16 bytes. It
//! orders by prefix, then by UUID (time order within a type), and casts to `uuid` (the
//! UUID alone) and to `timestamptz`.

use std::cmp::Ordering;
use std::ffi::{CStr, CString};

use idkit_typeid::{Prefix, TypeId};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{FromDatum, IntoDatum};

use crate::shared::fail;
use crate::sqltype::{read_binary, read_text};

/// A TypeID as the SQL type holds it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Typed(pub TypeId);

impl Typed {
    /// The stored and binary form: the UUID's 16 bytes, then the prefix.
    fn bytes(self) -> Vec<u8> {
        let mut out = self.0.uuid().to_be_bytes().to_vec();
        out.extend_from_slice(self.0.prefix().as_str().as_bytes());
        out
    }

    /// The value of `bytes` in the stored and binary form.
    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() < 16 {
            return Err(format!(
                "{} bytes, expected the UUID's 16 and the prefix",
                bytes.len()
            ));
        }
        let (uuid, prefix) = bytes.split_at(16);
        let prefix = std::str::from_utf8(prefix)
            .map_err(|_| "the prefix is not text".to_owned())
            .and_then(|p| Prefix::new(p).map_err(|e| e.to_string()))?;
        let mut array = [0; 16];
        array.copy_from_slice(uuid);
        Ok(Self(TypeId::new(prefix, u128::from_be_bytes(array))))
    }
}

impl Ord for Typed {
    /// By prefix (as text), then by UUID: a type's ids in the order they were made.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.0.prefix().as_str(), self.0.uuid()).cmp(&(other.0.prefix().as_str(), other.0.uuid()))
    }
}

impl PartialOrd for Typed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl IntoDatum for Typed {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        self.bytes().into_datum()
    }

    fn type_oid() -> pg_sys::Oid {
        pgrx::wrappers::rust_regtypein::<Self>()
    }
}

impl FromDatum for Typed {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        typoid: pg_sys::Oid,
    ) -> Option<Self> {
        // SAFETY: a typeid datum is a varlena, read (and detoasted) as bytea's are.
        let bytes = unsafe { <&[u8]>::from_polymorphic_datum(datum, is_null, typoid) }?;
        Some(Self::from_bytes(bytes).unwrap_or_else(|e| fail("typeid", e)))
    }
}

crate::sqltype::sql_type!(Typed, "typeid");

extension_sql!(
    "CREATE TYPE typeid; -- a shell, completed below once its functions exist\n",
    name = "typeid_shell",
    creates = [Type(Typed)],
);

/// Text in: `prefix_suffix` (or the suffix alone), as the TypeID spec writes it.
#[pg_extern(immutable, strict, parallel_safe)]
fn typeid_in(input: &CStr) -> Typed {
    read_text("typeid", input, |text| text.parse::<TypeId>().map(Typed))
}

/// Text out: the canonical string.
#[pg_extern(immutable, strict, parallel_safe)]
fn typeid_out(id: Typed) -> CString {
    CString::new(id.0.to_string()).unwrap_or_default()
}

/// Binary in: the UUID's 16 bytes, then the prefix (0 to 63 bytes).
#[pg_extern(immutable, strict, parallel_safe)]
fn typeid_recv(buf: pgrx::datum::Internal) -> Typed {
    read_binary("typeid", buf, Typed::from_bytes)
}

/// Binary out: the UUID's 16 bytes, then the prefix.
#[pg_extern(immutable, strict, parallel_safe)]
fn typeid_send(id: Typed) -> Vec<u8> {
    id.bytes()
}

extension_sql!(
    r#"
CREATE TYPE typeid (
    INPUT = typeid_in,
    OUTPUT = typeid_out,
    RECEIVE = typeid_recv,
    SEND = typeid_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = int4,
    -- main: never moved out of line, and a value this short keeps a one-byte header.
    STORAGE = main
);
COMMENT ON TYPE typeid IS 'TypeID: a type prefix and a UUIDv7, prefix_01h455vb4pex5vsknk084sn02q (idkit)';
"#,
    name = "typeid_type",
    requires = [typeid_in, typeid_out, typeid_recv, typeid_send],
);

crate::sqltype::comparisons!(Typed; typeid_cmp, typeid_lt, typeid_le, typeid_eq, typeid_ne,
    typeid_ge, typeid_gt, typeid_smaller, typeid_larger, typeid_hash, typeid_hash_extended);

/// The UUID alone (the prefix dropped), as idkit's Rust column types store a TypeID.
#[pg_extern(immutable, strict, parallel_safe)]
fn typeid_to_uuid(id: Typed) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(id.0.uuid().to_be_bytes())
}

/// The type prefix.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_typeid_prefix(id: Typed) -> String {
    id.0.prefix().as_str().to_owned()
}

/// The TypeID of `prefix` and `uuid`.
#[pg_extern(immutable, strict, parallel_safe)]
fn idkit_typeid_of(prefix: &str, uuid: pgrx::Uuid) -> Typed {
    let prefix = Prefix::new(prefix).unwrap_or_else(|e| fail("typeid prefix", e));
    Typed(TypeId::new(prefix, u128::from_be_bytes(*uuid.as_bytes())))
}

extension_sql!(
    r#"
CREATE CAST (typeid AS uuid) WITH FUNCTION typeid_to_uuid(typeid) AS ASSIGNMENT;
"#,
    name = "typeid_casts",
    requires = ["typeid_type", typeid_to_uuid],
);
