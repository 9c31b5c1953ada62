//! idkit inside PostgreSQL: the `ulid` type, ids made in shared memory as column defaults
//! (ULID, UUIDv7, TypeID, Snowflake layouts), the time and fields of any id, and the lowest
//! and highest id of a time for range queries and partition bounds. The ids are idkit's own,
//! byte for byte: the scheme crates make and read them.
//!
//! The generators need the library preloaded (`shared_preload_libraries = 'idkit'`); the
//! types and the reading functions do not.

use pgrx::prelude::*;

mod functions;
mod mark;
mod shared;
mod sqltype;
mod typeid;
mod ulid;

::pgrx::pg_module_magic!(name, version);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    shared::init();
}
