//! A generator's identity: worker-id leases from a coordination service, self-fencing, and
//! a persisted high-water mark of issued time, so that no restart, pause or clock step
//! reissues an id.
//!
//! Two Snowflake generators with the same worker id mint the same ids, silently; a process
//! restarted while the wall clock is behind mints ids it minted before the restart. A
//! [`Lease`] prevents both:
//!
//! - **Acquire**: a free worker id in `0..N` for a namespace (`orders/snowflake-twitter`),
//!   or a typed error when all are taken.
//! - **Hold**: renewed in the background every third of its TTL. The generator
//!   **fences itself** (it issues nothing, [`GenerateErrorKind::Fenced`]) once it cannot
//!   prove the lease is still its own: from the start of the last successful renewal, the
//!   TTL less a fifth, on the monotonic clock. A renewal that finds the lease taken never
//!   resumes issuing under that worker id.
//! - **Fencing token**: grows with every grant of a worker id ([`Lease::token`]).
//! - **High-water mark**: each renewal records, before the fence moves, the time up to
//!   which the generator may issue (write-ahead); a new holder starts above the mark.
//! - **Release** on shutdown: the fence closes, the generator's current tick runs out (one
//!   tick, plus a logical clock's ahead bound, so nothing issues once [`Lease::release`]
//!   returns), and the time actually issued up to is recorded as the worker id is freed at
//!   once.
//!
//! The generator reads one atomic per tick (the fence, in a
//! [`Guard`](idkit_core::guard::Guard)); no lock and no system call per id.
//!
//! # Sources (cargo features)
//!
//! | source | feature | who judges expiry | notes |
//! |---|---|---|---|
//! | `static:N` | `static` (default) | nobody (no one else can be granted N) | a state file per scheme and worker id under the state directory, locked while held, its mark fsynced ahead of issuing |
//! | `sqlite:///PATH` | `sqlite` (default) | the host's wall clock | one file shared by the processes of one host |
//! | `postgres://...` | `postgres` | the database's clock (`statement_timestamp()`) | a table of worker slots |
//! | `mysql://...` | `mysql` | the database's clock (`NOW(3)`) | the same table on MySQL or MariaDB (InnoDB), a pure-Rust client |
//! | `etcd://HOST:PORT/PREFIX` | `etcd` | etcd's lease TTL | lease grant, keep-alive, and a transaction that creates the slot key only if absent |
//!
//! etcd is reached through its v3 JSON gateway over plain HTTP/1.1 (`/v3/lease/grant`,
//! `/v3/kv/txn`, `/v3/lease/keepalive`, `/v3/lease/revoke`), with a client of about a
//! hundred lines in this crate. The alternative, the `etcd-client` crate, needs `protoc`
//! at build time and brings tonic and prost: a heavy build for six unary calls, and a
//! system package for everyone who builds the workspace.
//!
//! # Example
//!
//! ```
//! use idkit_lease::{IdentitySource, Lease, LeaseState};
//!
//! let dir = std::env::temp_dir().join(format!("idkit-lease-lib-{}", std::process::id()));
//! let db = dir.join("ids.db");
//! std::fs::create_dir_all(&dir)?;
//! let source = IdentitySource::parse(&format!("sqlite://{}?namespace=orders", db.display()))?;
//! let a = Lease::acquire(&source, "snowflake-twitter", 4)?;
//! let b = Lease::acquire(&source, "snowflake-twitter", 4)?;
//! assert_ne!(a.worker(), b.worker());
//! assert_eq!(a.status().state, LeaseState::Held);
//! a.release();
//! assert_eq!(a.status().state, LeaseState::Released);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`GenerateErrorKind::Fenced`]: idkit_core::GenerateErrorKind::Fenced

// A build with the static identity alone has no shared backend: what only those use (the
// lease request's slots and TTL, the errors they report) is unused there, and only there.
#![cfg_attr(
    not(any(
        feature = "sqlite",
        feature = "postgres",
        feature = "mysql",
        feature = "etcd"
    )),
    allow(dead_code)
)]

mod backend;
mod error;
#[cfg(feature = "etcd")]
mod etcd;
#[cfg(feature = "static")]
mod file;
mod lease;
mod source;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
mod sql;

pub use error::{LeaseError, LeaseErrorKind};
pub use lease::{Lease, LeaseState, Status};
pub use source::{
    DEFAULT_NAMESPACE, DEFAULT_TTL, IdentitySource, STATIC_WINDOW, default_state_dir,
};

/// The README's example, compiled with the doc tests so that it stays true to the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
