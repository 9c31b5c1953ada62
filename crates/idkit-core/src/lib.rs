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
//! * [`codec`]: decimal, hex, Crockford base32 and base62, all strict.
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

pub mod clock;
pub mod codec;
pub mod column;
pub mod definition;
mod error;
pub mod guard;
pub mod id;
pub mod monotonic;
pub mod nonblocking;
#[cfg(feature = "rand")]
pub mod random;
mod raw;
mod scheme;
pub mod state;
pub mod time;
#[cfg(feature = "rand")]
pub mod time_ordered;

pub use clock::{Clock, ManualClock, MonotonicClock, SystemClock, TickerClock};
pub use definition::{BuildError, BuildErrorKind, Options, PlainDef, SchemeDef};
pub use error::{
    ComposeError, ComposeErrorKind, GenerateError, GenerateErrorKind, ParseError, ParseErrorKind,
    with_causes,
};
pub use raw::{MAX_ID_BYTES, RawId};
pub use scheme::{
    Alphabet, Codec, CodecOnly, Compose, Coordination, Decoded, DynCodec, DynScheme, Erased,
    FieldValue, GeneratorStats, IdScheme, SchemeInfo,
};
