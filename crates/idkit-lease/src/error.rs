//! [`LeaseError`]: why an identity could not be had or kept.

use std::fmt;

/// What kind of failure a [`LeaseError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaseErrorKind {
    /// The identity source is malformed (`--identity` text, a TTL, a path).
    Invalid,
    /// Every worker id of the namespace is held by a live lease.
    AllTaken,
    /// A static worker id is held by another process on this host (its state file is
    /// locked).
    Held,
    /// The coordination service or file cannot be reached or read.
    Unreachable,
    /// The lease is no longer this holder's: it expired and was granted again, or was
    /// revoked. The holder never issues under it again.
    Lost,
    /// The lease expired, and nobody has been granted the worker id since: the holder may
    /// ask for it again.
    Expired,
}

/// Why an identity could not be acquired, renewed or released: a [`kind`](Self::kind)
/// and one line saying what happened and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseError {
    kind: LeaseErrorKind,
    message: String,
}

/// An address that does not parse is [`LeaseErrorKind::Invalid`]; a server not reached
/// is [`LeaseErrorKind::Unreachable`].
#[cfg(any(feature = "postgres", feature = "mysql"))]
impl From<idkit_core::connect::ConnectError> for LeaseError {
    fn from(e: idkit_core::connect::ConnectError) -> Self {
        use idkit_core::connect::ConnectError;
        match e {
            ConnectError::Address(line) => Self::invalid(line),
            ConnectError::Unreachable(line) => Self::unreachable(line),
        }
    }
}

impl LeaseError {
    /// A new error of `kind`.
    pub fn new(kind: LeaseErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(LeaseErrorKind::Invalid, message)
    }

    pub(crate) fn unreachable(message: impl Into<String>) -> Self {
        Self::new(LeaseErrorKind::Unreachable, message)
    }

    pub(crate) fn lost(message: impl Into<String>) -> Self {
        Self::new(LeaseErrorKind::Lost, message)
    }

    pub(crate) fn expired(message: impl Into<String>) -> Self {
        Self::new(LeaseErrorKind::Expired, message)
    }

    pub(crate) fn all_taken(namespace: &str, slots: u64, source: &str) -> Self {
        Self::new(
            LeaseErrorKind::AllTaken,
            format!(
                "all {slots} worker ids of namespace {namespace:?} are taken ({source}): \
                 stop a holder, wait for a dead one's lease to expire, or use a layout with \
                 more identity bits"
            ),
        )
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> LeaseErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LeaseError {}
