//! The ticket / range allocator: 64-bit ids handed out from blocks leased from a central
//! store (Flickr's ticket servers, Meituan Leaf's segment mode), so the store is touched once
//! per block instead of once per id.
//!
//! - [`SqliteStore`] (embedded; processes on one host share the file) and, with the
//!   `postgres` feature, `PostgresStore` (hosts share the database).
//! - The hot path is one atomic add on a shared word plus a check against the current
//!   block: lock-free, and safe from any number of threads.
//! - Double buffering: once [`RangeBuilder::prefetch_at`] of the block is used, a
//!   background thread leases the next one, so `next_id` does not wait on the store while
//!   the store is up.
//! - Adaptive blocks: a block that drained faster than half the target period doubles the
//!   next one, slower than twice the period halves it, within `min_block..=max_block`.
//! - Interleaving: ids are `counter * step + offset`, so stores with the same `step` and
//!   different `offset`s never collide (Flickr's odd and even servers). A store keeps each
//!   namespace's interleave and refuses allocators of another ([`StoreError::Interleave`]).
//!
//! Failures: while the store is down, ids come from what is leased, and the background
//! thread retries with backoff (10 ms doubling to 1 s). Once nothing is left, `next_id`
//! returns [`GenerateErrorKind::Unavailable`](idkit_core::GenerateErrorKind::Unavailable) naming the store error; when the store is back,
//! the next retry succeeds and ids flow again. A crash loses the unused rest of its blocks:
//! gaps, never a reused id.
//!
//! ```
//! use std::time::Duration;
//! use idkit_range::{IdScheme, RangeAllocator, SqliteStore};
//!
//! let dir = std::env::temp_dir().join(format!("idkit-range-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let store = SqliteStore::open(dir.join("ids.db"), Duration::from_secs(5))?;
//! let ids = RangeAllocator::builder(store).namespace("orders").block_size(1000).build()?;
//! let a = ids.next_id()?;
//! let b = ids.next_id()?;
//! assert!(b > a);
//! # drop(ids); std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "std")]
mod allocator;
mod id;
#[cfg(feature = "std")]
mod store;

pub use id::RangeId;

#[cfg(feature = "std")]
pub use allocator::{INFO, RangeAllocator, RangeBuilder, RangeConfigError, RangeStats};
/// Range ids are plain decimal counters.
pub use idkit_core::codec::decimal::DecimalCodec as RangeCodec;

#[cfg(feature = "std")]
pub mod definition;
pub use idkit_core::id::{Id, Marker};
pub use idkit_core::{self, GenerateError, IdScheme};
#[cfg(feature = "mysql")]
pub use store::MySqlStore;
#[cfg(feature = "postgres")]
pub use store::PostgresStore;
#[cfg(feature = "std")]
pub use store::{
    Interleave, Lease, MAX_NAMESPACE, SqliteStore, Store, StoreError, check_lease, check_namespace,
};

/// The README's example, compiled with the doc tests so that it stays true to the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
