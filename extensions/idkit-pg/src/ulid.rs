//! The `ulid` type: 16 bytes in a row (fixed length, no header), its canonical 26-character
//! text, its 16 bytes on the binary protocol (what `COPY ... (FORMAT binary)` and a driver's
//! binary results carry, and what idkit's Rust column types read), btree and hash operator
//! classes, and casts to and from `uuid` and to `timestamptz`.

use std::ffi::{CStr, CString};

use idkit_core::Codec;
use idkit_ulid::UlidCodec;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{FromDatum, IntoDatum, PgMemoryContexts};

use crate::sqltype::{read_binary, read_text};

/// A ULID's 16 bytes, big-endian: byte order is time order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(transparent)]
pub struct Ulid(pub [u8; 16]);

impl Ulid {
    pub fn to_ulid(self) -> idkit_ulid::Ulid {
        idkit_ulid::Ulid(u128::from_be_bytes(self.0))
    }

    pub fn of(id: idkit_ulid::Ulid) -> Self {
        Self(id.0.to_be_bytes())
    }

    /// The stored and binary form: the 16 bytes.
    pub fn bytes(self) -> [u8; 16] {
        self.0
    }
}

impl IntoDatum for Ulid {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // SAFETY: the current memory context is valid while a function runs.
        let bytes = unsafe { PgMemoryContexts::CurrentMemoryContext.palloc_slice::<u8>(16) };
        bytes.copy_from_slice(&self.0);
        Some(bytes.as_ptr().into())
    }

    fn type_oid() -> pg_sys::Oid {
        pgrx::wrappers::rust_regtypein::<Self>()
    }
}

impl FromDatum for Ulid {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            return None;
        }
        // SAFETY: a ulid datum points at its 16 bytes (fixed length, plain storage).
        Some(Self(unsafe {
            datum.cast_mut_ptr::<[u8; 16]>().read_unaligned()
        }))
    }
}

crate::sqltype::sql_type!(Ulid, "ulid");

extension_sql!(
    "CREATE TYPE ulid; -- a shell, completed below once its functions exist\n",
    name = "ulid_shell",
    creates = [Type(Ulid)],
);

/// Text in: Crockford base32, 26 characters, any case (as the ULID spec and idkit read it).
#[pg_extern(immutable, strict, parallel_safe)]
fn ulid_in(input: &CStr) -> Ulid {
    read_text("ulid", input, |text| UlidCodec.parse(text).map(Ulid::of))
}

/// Text out: the canonical 26 upper-case characters.
#[pg_extern(immutable, strict, parallel_safe)]
fn ulid_out(id: Ulid) -> CString {
    CString::new(UlidCodec.format(id.to_ulid())).unwrap_or_default()
}

/// Binary in: exactly 16 bytes.
#[pg_extern(immutable, strict, parallel_safe)]
fn ulid_recv(buf: pgrx::datum::Internal) -> Ulid {
    read_binary("ulid", buf, |bytes| {
        let len = bytes.len();
        bytes
            .try_into()
            .map(Ulid)
            .map_err(|_| format!("{len} bytes, expected 16"))
    })
}

/// Binary out: the 16 bytes.
#[pg_extern(immutable, strict, parallel_safe)]
fn ulid_send(id: Ulid) -> Vec<u8> {
    id.0.to_vec()
}

extension_sql!(
    r#"
CREATE TYPE ulid (
    INPUT = ulid_in,
    OUTPUT = ulid_out,
    RECEIVE = ulid_recv,
    SEND = ulid_send,
    INTERNALLENGTH = 16,
    ALIGNMENT = char,
    STORAGE = plain
);
COMMENT ON TYPE ulid IS 'ULID: 48-bit Unix ms and 80 random bits, 16 bytes, time-ordered (idkit)';
"#,
    name = "ulid_type",
    requires = [ulid_in, ulid_out, ulid_recv, ulid_send],
);

crate::sqltype::comparisons!(Ulid; ulid_cmp, ulid_lt, ulid_le, ulid_eq, ulid_ne, ulid_ge, ulid_gt, ulid_smaller, ulid_larger,
    ulid_hash, ulid_hash_extended);

/// The same 128 bits as a `uuid`.
#[pg_extern(immutable, strict, parallel_safe)]
fn ulid_to_uuid(id: Ulid) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(id.0)
}

/// A `uuid`'s 128 bits as a ULID (a UUIDv7's time is the ULID's time).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_to_ulid(id: pgrx::Uuid) -> Ulid {
    Ulid(*id.as_bytes())
}

extension_sql!(
    r#"
CREATE CAST (ulid AS uuid) WITH FUNCTION ulid_to_uuid(ulid) AS ASSIGNMENT;
-- Implicit one way: a driver that sends a 16-byte id as `uuid` compares and stores it in a
-- `ulid` column as it does in a `uuid` one.
CREATE CAST (uuid AS ulid) WITH FUNCTION uuid_to_ulid(uuid) AS IMPLICIT;
"#,
    name = "ulid_casts",
    requires = ["ulid_type", ulid_to_uuid, uuid_to_ulid],
);
