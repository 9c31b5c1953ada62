//! The core of idkit: the [`IdScheme`] trait every scheme implements, the facts a scheme
//! publishes ([`SchemeInfo`]), clocks, shared errors and string codecs.
//!
//! Scheme crates (`idkit-snowflake`, `idkit-uuid`, ...) re-export this crate, so a user adds
//! one dependency.
//!
//! # The pieces
//!
//! * [`IdScheme`]: one required method, `next_id(&self)`; single-owner generators keep
//!   their state in `Cell`s, shared ones in atomics or a mutex, and the compiler's `Sync`
//!   check keeps each where it belongs.
//! * [`Codec`] (text, bytes, decoding) and [`Compose`] (build an id from parts): capability
//!   traits implemented by a scheme's layout, so reading ids needs no generator.
//! * [`DynScheme`] and [`Erased`]: the object-safe form the CLI, service and harness hold;
//!   [`DynCodec`] and [`CodecOnly`]: reading ids with no generator.
//! * [`SchemeDef`]: a scheme's one definition (name, facts, codec, identity fields,
//!   options, how to build it), which the facade's registry lists.
//! * [`clock`]: system, monotonic-anchored, ticker (every generator's default) and manual
//!   clocks.
//! * [`monotonic`]: the millisecond-and-counter rules the time-ordered schemes share, for
//!   one owner ([`monotonic::MsCounter`]) and for threads without a lock
//!   ([`monotonic::AtomicMsCounter`], model-checked with loom), both through one
//!   [`monotonic::decide`].
//! * `time_ordered` (feature `rand`): the 128-bit time-ordered generator family, one
//!   single-owner and one lock-free generator over a scheme's layout; UUIDv7, ULID and
//!   TypeID are made by it.
//! * [`nonblocking`]: ids in async code (feature `tokio`): `next_id`, `fill`, `take` and
//!   `fill_raw` await a spent sequence's next tick, or a range store's next block, on
//!   tokio's timer instead of blocking an executor thread; generators wait through
//!   [`nonblocking::wait_for`], which is where the waits are deferred.
//! * [`after_fork`]: what a child process made by `fork` calls before it makes ids.
//! * [`reexports`]: the names every scheme crate re-exports from this one.
//! * `connect` (features `postgres-client`, `mysql-client`): how the range stores and the
//!   worker-id leases connect to a database server many hosts share: the connect and stall
//!   timeouts an address does not set, PostgreSQL's lock wait, its tables created by hosts
//!   racing.
//! * [`codec`]: decimal, hex, Crockford base32 and base62, all strict.
//! * Without the feature `std` (on by default) the crate is `#![no_std]` with `alloc`: the
//!   traits, codecs, errors, [`ManualClock`] and the generators given a clock and a random
//!   source of the caller's ([`Clock`], [`random::RandomSource`]). The operating system's
//!   clocks, [`random::ThreadRandom`] (feature `rand`), [`definition`], the lease
//!   [`guard`], [`after_fork`] and the drivers' features need `std`.
//! * [`id`] and [`column`](mod@column): id types where applications keep them: [`id::IdType`], typed
//!   [`id::Id<M, T>`](id::Id), serde and every database driver's impls written once over
//!   two column forms, given to a scheme's id type by [`id_type!`] (features `serde`,
//!   `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite`, `postgres`, `rusqlite`, `diesel-postgres`,
//!   `diesel-mysql`, `diesel-sqlite`, `sea-orm`).
//!
//! # Examples
//!
//! ```
//! use idkit_core::clock::{Clock, ManualClock};
//! let clock = ManualClock::new(1_700_000_000_000);
//! clock.advance(1);
//! assert_eq!(clock.now_ms(), 1_700_000_000_001);
//! ```

#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod clock;
pub mod codec;
pub mod column;
#[cfg(any(feature = "postgres-client", feature = "mysql-client"))]
pub mod connect;
#[cfg(feature = "std")]
pub mod definition;
mod error;
#[cfg(feature = "std")]
pub mod guard;
pub mod id;
pub mod monotonic;
pub mod nonblocking;
pub mod random;
mod raw;
mod scheme;
pub mod slots;
#[cfg(feature = "std")]
pub mod state;
pub mod time;
pub mod time_ordered;

/// The names of `alloc` that the standard library's prelude holds, for the modules to use
/// in builds without `std`.
mod prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec::Vec;
    pub(crate) use alloc::{format, vec};
}

pub use clock::{Clock, DefaultClock, ManualClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, SystemClock, TickerClock};
#[cfg(feature = "std")]
pub use definition::{BuildError, BuildErrorKind, Options, PlainDef, SchemeDef};
pub use error::{
    ComposeError, ComposeErrorKind, GenerateError, GenerateErrorKind, ParseError, ParseErrorKind,
    with_causes,
};
pub use raw::{InlineBytes, MAX_ID_BYTES, RawId};
pub use scheme::{
    Alphabet, Codec, CodecOnly, Compose, Coordination, Decoded, DynCodec, DynScheme, Erased,
    FieldValue, GeneratorStats, IdScheme, SchemeInfo, TimeBounds, compose_fields,
};

/// The names every scheme crate re-exports (`pub use idkit_core::reexports::*;`), so that
/// its users make, type and time its ids without naming idkit-core: [`Id`](crate::id::Id)
/// and [`Marker`](crate::id::Marker), [`IdScheme`], [`DefaultClock`] and, with `std`,
/// [`MonotonicClock`] and [`TickerClock`].
pub mod reexports {
    pub use crate::id::{Id, Marker};
    pub use crate::{DefaultClock, IdScheme};
    #[cfg(feature = "std")]
    pub use crate::{MonotonicClock, TickerClock};
}

/// Makes a child process made by `fork` (without `exec`) safe for ids: call it in the child
/// before the child makes any, then build the child's generators anew.
///
/// The child starts as a copy of its parent's memory with one thread, the one that called
/// `fork`. Two things idkit keeps for the whole process come across wrong:
///
/// * the thread's random generator (`idkit_core::random`, feature `rand`) is the parent's, so the
///   child would draw the bits the parent draws next: the same UUIDv4s, KSUIDs, and counter
///   starts of UUIDv7, ULID and TypeID. RFC 9562, section 6.9, asks for a CSPRNG "properly
///   reseeded upon state changes, such as process forks". `after_fork` drops it; the next
///   draw seeds a new one from the operating system.
/// * the ticker thread behind [`TickerClock`], every generator's default clock, is not
///   copied, so the child's time would stand still (or, where the parent's ticker rested at
///   the fork, every read would take the monotonic clock). `after_fork` starts one in the
///   child.
///
/// Generators made before the fork still hold the parent's state: the millisecond and
/// counter they are at (a UUIDv7 or ULID generator would repeat the parent's ids of that
/// millisecond), a Snowflake generator's worker id, a range allocator's leased block (and
/// not its leasing thread). The child makes its own, with a worker id of its own where the
/// scheme has one.
///
/// idkit cannot notice a fork by itself: that would take a system call per id (`getpid`) or
/// a fork handler registered through unsafe code, which idkit does not use. In a process
/// that did not fork, `after_fork` only reseeds the calling thread's generator.
///
/// # Errors
///
/// The operating system refused to start the ticker thread (only where one ran before the
/// fork); ids on [`TickerClock`] would then carry the time of the fork.
///
/// # Examples
///
/// ```
/// // In the child, right after fork() returned 0:
/// idkit_core::after_fork()?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn after_fork() -> std::io::Result<()> {
    #[cfg(feature = "rand")]
    random::forget_this_thread();
    clock::restart_ticker_after_fork()
}
