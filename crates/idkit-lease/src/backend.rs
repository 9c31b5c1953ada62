//! [`Backend`]: the small interface every identity source implements. One backend value
//! serves one lease; the holder's thread owns it.

use crate::LeaseError;

/// What a grant returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The worker id granted, in `0..slots`.
    pub worker: u64,
    /// The fencing token: grows with every grant of this worker id.
    pub token: u64,
    /// The high-water mark recorded for the worker id before this grant (Unix ms; 0 when
    /// none): the new holder issues only ids with a later time.
    pub mark_ms: u64,
    /// True when the previous holder released the worker id and recorded the time it
    /// actually issued up to; false when the mark is a reservation (it crashed, or its
    /// lease expired) or there was no previous holder.
    pub released: bool,
}

/// What a lease asks of a backend.
#[derive(Debug, Clone)]
pub(crate) struct Want {
    /// Namespace of the lease, e.g. `orders/snowflake-twitter`.
    pub namespace: String,
    /// Worker ids to choose from: `0..slots`.
    pub slots: u64,
    /// Who asks, e.g. `pid 4242 on db-7`, recorded with the lease.
    pub holder: String,
    /// Time to live, ms.
    pub ttl_ms: u64,
}

/// An identity source's side of a lease.
///
/// Every method that writes a mark writes it before returning `Ok`, so the holder opens its
/// fence only to times already on record (write-ahead).
pub(crate) trait Backend: Send {
    /// Who grants, for logs and metrics: `etcd at 127.0.0.1:2379`.
    fn describe(&self) -> String;

    /// Grants a free worker id and records `mark_ms` as its high-water mark when that is
    /// above the recorded one.
    ///
    /// # Errors
    ///
    /// `AllTaken` when every worker id is held, `Held` when a static worker id is held by
    /// another process, `Unreachable` when the source cannot be reached.
    fn acquire(&mut self, want: &Want, mark_ms: u64) -> Result<Grant, LeaseError>;

    /// Extends the lease by its TTL from now and records `mark_ms` as the high-water mark.
    ///
    /// # Errors
    ///
    /// `Expired` when the lease ran out and nobody has been granted the worker id since,
    /// `Lost` when it was granted to someone else or revoked, `Unreachable` when the source
    /// cannot be reached (the lease may still be alive).
    fn renew(&mut self, mark_ms: u64) -> Result<(), LeaseError>;

    /// After `Expired`: grants the same worker id again, with a new token, if and only if
    /// nobody was granted it since; records `mark_ms`. Returns the new token.
    ///
    /// # Errors
    ///
    /// `Lost` when someone else was granted it since, `Unreachable` as for `renew`.
    fn regrant(&mut self, mark_ms: u64) -> Result<u64, LeaseError>;

    /// Records `mark_ms` as the time issued up to (lower than the reservation), marks it
    /// released, and frees the worker id at once.
    ///
    /// # Errors
    ///
    /// `Lost` or `Unreachable`; the lease then frees itself when its TTL runs out.
    fn release(&mut self, mark_ms: u64) -> Result<(), LeaseError>;
}
