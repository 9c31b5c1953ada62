//! Error types shared by every scheme.
//!
//! Messages are one lowercase line that says what was wrong and what was expected, so the
//! CLI and the HTTP service can show them as they are.

use alloc::borrow::Cow;
use core::fmt;
use core::time::Duration;

use crate::prelude::*;

/// When a deferred wait on a clock ends, where the clock knows it: an `Instant` with `std`;
/// without it no clock knows one.
#[cfg(feature = "std")]
type WaitEnd = std::time::Instant;
#[cfg(not(feature = "std"))]
type WaitEnd = core::convert::Infallible;

/// Why a generator could not issue an id: an opaque error with a [`kind`](Self::kind), so
/// that new failure modes can be added without breaking callers.
///
/// Every kind means *no id was issued*: a generator never hands out a duplicate or a
/// smaller id to get around one of these conditions.
///
/// # Examples
///
/// ```
/// use idkit_core::{GenerateError, GenerateErrorKind};
/// let e = GenerateError::clock_moved_backwards(12, 0);
/// assert_eq!(e.kind(), GenerateErrorKind::ClockMovedBackwards);
/// assert_eq!(e.kind().as_str(), "clock_moved_backwards");
/// assert_eq!(e.behind_ms(), Some(12));
/// assert_eq!(
///     e.to_string(),
///     "clock moved backwards by 12 ms: refusing to issue ids until it catches up"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateError(GenerateRepr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum GenerateRepr {
    /// The clock reads earlier than the last tick used, further back than the rollback policy
    /// tolerates (`waited_ms` is how long the generator waited first; 0 for fail-fast).
    ClockMovedBackwards {
        /// How far behind the last issued timestamp the clock is, in milliseconds.
        behind_ms: u64,
        /// How long the generator waited for the clock to catch up before giving up.
        waited_ms: u64,
    },
    /// The logical-clock policy would have to run further ahead of the clock than allowed.
    AheadLimit {
        /// How far ahead of the clock the next id would be, in milliseconds.
        ahead_ms: u64,
        /// The configured limit, in milliseconds.
        limit_ms: u64,
    },
    /// The clock is past the last time the layout's time field can hold.
    TimeOverflow {
        /// The last representable time, Unix milliseconds.
        last_ms: u64,
    },
    /// The clock reads earlier than the layout's epoch.
    BeforeEpoch {
        /// The clock reading, Unix milliseconds.
        now_ms: u64,
        /// The layout's epoch, Unix milliseconds.
        epoch_ms: u64,
    },
    /// The generator's space of ids is used up (a ULID random part, a counter, a range).
    Exhausted {
        /// What ran out, e.g. "the 80-bit random part within one millisecond".
        what: &'static str,
    },
    /// A store the scheme depends on cannot be reached and nothing is left in hand.
    Unavailable {
        /// Why, as reported by the store.
        reason: String,
    },
    /// The generator's identity is not proven: its worker-id lease could not be renewed in
    /// time, or was lost.
    Fenced {
        /// How far past the end of the proven time the clock is, in milliseconds (0 when
        /// the lease was lost outright).
        late_ms: u64,
    },
    /// The generator would have to wait `left` and was asked not to (inside the async
    /// API); after `give_up` in all, the wait ends with `Unavailable` and its message.
    WouldWait {
        left: Duration,
        /// When the wait ends, where the clock knows it.
        at: Option<WaitEnd>,
        give_up: Option<(Duration, String)>,
    },
}

/// What kind of failure a [`GenerateError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GenerateErrorKind {
    /// The clock reads earlier than the last tick used, further back than the rollback
    /// policy tolerates.
    ClockMovedBackwards,
    /// The logical-clock policy would have to run further ahead of the clock than allowed.
    AheadLimit,
    /// The clock is past the last time the layout's time field can hold.
    TimeOverflow,
    /// The clock reads earlier than the layout's epoch.
    BeforeEpoch,
    /// The generator's space of ids is used up (a ULID random part, a counter, a range).
    Exhausted,
    /// A store or source the scheme depends on cannot be reached and nothing is in hand.
    Unavailable,
    /// The generator fenced itself: it cannot prove that its worker id is still its own
    /// (a lease not renewed in time, or lost), so it issues nothing rather than risk
    /// issuing ids another holder of the same worker id may also issue.
    Fenced,
    /// The generator would have had to wait and was asked not to block. Only the async
    /// API ([`nonblocking`](crate::nonblocking), feature `tokio`) asks that, and it awaits
    /// the wait itself: no caller sees this kind, and it is not in
    /// [`ALL`](Self::ALL).
    WouldWait,
}

impl GenerateErrorKind {
    /// Every kind a caller can see, in the order [`as_str`](Self::as_str) names are listed
    /// in metrics.
    pub const ALL: [Self; 7] = [
        Self::ClockMovedBackwards,
        Self::AheadLimit,
        Self::TimeOverflow,
        Self::BeforeEpoch,
        Self::Exhausted,
        Self::Unavailable,
        Self::Fenced,
    ];

    /// A stable snake_case name, e.g. for a metrics label.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClockMovedBackwards => "clock_moved_backwards",
            Self::AheadLimit => "ahead_limit",
            Self::TimeOverflow => "time_overflow",
            Self::BeforeEpoch => "before_epoch",
            Self::Exhausted => "exhausted",
            Self::Unavailable => "unavailable",
            Self::Fenced => "fenced",
            Self::WouldWait => "would_wait",
        }
    }
}

impl GenerateError {
    /// The clock is `behind_ms` behind the last issued timestamp, after waiting
    /// `waited_ms` for it (0 for fail-fast).
    pub fn clock_moved_backwards(behind_ms: u64, waited_ms: u64) -> Self {
        Self(GenerateRepr::ClockMovedBackwards {
            behind_ms,
            waited_ms,
        })
    }

    /// The next id would be `ahead_ms` ahead of the clock, above the limit `limit_ms`.
    pub fn ahead_limit(ahead_ms: u64, limit_ms: u64) -> Self {
        Self(GenerateRepr::AheadLimit { ahead_ms, limit_ms })
    }

    /// The clock is past `last_ms`, the last time the time field holds (Unix ms).
    pub fn time_overflow(last_ms: u64) -> Self {
        Self(GenerateRepr::TimeOverflow { last_ms })
    }

    /// The clock reads `now_ms`, before the layout's epoch `epoch_ms` (Unix ms).
    pub fn before_epoch(now_ms: u64, epoch_ms: u64) -> Self {
        Self(GenerateRepr::BeforeEpoch { now_ms, epoch_ms })
    }

    /// `what` ran out, e.g. "the 80-bit random part within one millisecond".
    pub fn exhausted(what: &'static str) -> Self {
        Self(GenerateRepr::Exhausted { what })
    }

    /// A store or source is unavailable, for `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self(GenerateRepr::Unavailable {
            reason: reason.into(),
        })
    }

    /// The generator fenced itself: its identity was proven until `late_ms` ago (0: the
    /// lease was lost outright).
    pub fn fenced(late_ms: u64) -> Self {
        Self(GenerateRepr::Fenced { late_ms })
    }

    /// The generator would have to wait `left` more, and the calling thread asked it not
    /// to block ([`nonblocking::deferring`](crate::nonblocking::deferring)). `give_up`:
    /// after how long in all the caller stops waiting, and the reason it then reports (as
    /// [`GenerateErrorKind::Unavailable`]); `None` for a wait that always ends (a clock's).
    ///
    /// Generators that wait on a clock call
    /// [`nonblocking::wait_for`](crate::nonblocking::wait_for), which makes this error;
    /// one that waits on something else (a store) makes it itself.
    pub fn would_wait(left: Duration, give_up: Option<(Duration, String)>) -> Self {
        Self(GenerateRepr::WouldWait {
            left,
            at: None,
            give_up,
        })
    }

    /// A wait on a clock that ends at `at`: [`would_wait`](Self::would_wait) with the
    /// instant, so that a short wait can end on time rather than on the async timer's
    /// next millisecond.
    #[cfg(feature = "std")]
    pub(crate) fn would_wait_until(left: Duration, at: Option<WaitEnd>) -> Self {
        Self(GenerateRepr::WouldWait {
            left,
            at,
            give_up: None,
        })
    }

    /// How long a generator asked not to block would have waited (and until when, where
    /// known), and when to give up.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    #[allow(clippy::type_complexity)]
    pub(crate) fn deferred(
        &self,
    ) -> Option<(Duration, Option<WaitEnd>, Option<&(Duration, String)>)> {
        match &self.0 {
            GenerateRepr::WouldWait { left, at, give_up } => Some((*left, *at, give_up.as_ref())),
            _ => None,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> GenerateErrorKind {
        match self.0 {
            GenerateRepr::ClockMovedBackwards { .. } => GenerateErrorKind::ClockMovedBackwards,
            GenerateRepr::AheadLimit { .. } => GenerateErrorKind::AheadLimit,
            GenerateRepr::TimeOverflow { .. } => GenerateErrorKind::TimeOverflow,
            GenerateRepr::BeforeEpoch { .. } => GenerateErrorKind::BeforeEpoch,
            GenerateRepr::Exhausted { .. } => GenerateErrorKind::Exhausted,
            GenerateRepr::Unavailable { .. } => GenerateErrorKind::Unavailable,
            GenerateRepr::Fenced { .. } => GenerateErrorKind::Fenced,
            GenerateRepr::WouldWait { .. } => GenerateErrorKind::WouldWait,
        }
    }

    /// How far behind the last issued timestamp the clock is, for
    /// [`GenerateErrorKind::ClockMovedBackwards`].
    pub fn behind_ms(&self) -> Option<u64> {
        match self.0 {
            GenerateRepr::ClockMovedBackwards { behind_ms, .. } => Some(behind_ms),
            _ => None,
        }
    }

    /// How long the generator waited before giving up, for
    /// [`GenerateErrorKind::ClockMovedBackwards`].
    pub fn waited_ms(&self) -> Option<u64> {
        match self.0 {
            GenerateRepr::ClockMovedBackwards { waited_ms, .. } => Some(waited_ms),
            _ => None,
        }
    }

    /// The configured limit, for [`GenerateErrorKind::AheadLimit`].
    pub fn limit_ms(&self) -> Option<u64> {
        match self.0 {
            GenerateRepr::AheadLimit { limit_ms, .. } => Some(limit_ms),
            _ => None,
        }
    }

    /// The last representable time, for [`GenerateErrorKind::TimeOverflow`].
    pub fn last_ms(&self) -> Option<u64> {
        match self.0 {
            GenerateRepr::TimeOverflow { last_ms } => Some(last_ms),
            _ => None,
        }
    }
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use GenerateRepr as R;
        match &self.0 {
            R::ClockMovedBackwards {
                behind_ms,
                waited_ms: 0,
            } => write!(
                f,
                "clock moved backwards by {behind_ms} ms: refusing to issue ids until it catches up"
            ),
            R::ClockMovedBackwards {
                behind_ms,
                waited_ms,
            } => write!(
                f,
                "clock still {behind_ms} ms behind the last issued id after waiting {waited_ms} ms"
            ),
            R::AheadLimit { ahead_ms, limit_ms } => write!(
                f,
                "logical clock would run {ahead_ms} ms ahead of the clock, above the limit of {limit_ms} ms"
            ),
            R::TimeOverflow { last_ms } => write!(
                f,
                "time field exhausted: the layout cannot represent times after {}",
                crate::time::format_rfc3339_ms(*last_ms)
            ),
            R::BeforeEpoch { now_ms, epoch_ms } => write!(
                f,
                "clock reads {} which is before the layout's epoch {}",
                crate::time::format_rfc3339_ms(*now_ms),
                crate::time::format_rfc3339_ms(*epoch_ms)
            ),
            R::Exhausted { what } => write!(f, "id space exhausted: {what}"),
            R::Unavailable { reason } => write!(f, "store unavailable: {reason}"),
            R::Fenced { late_ms: 0 } => write!(
                f,
                "worker-id lease lost: refusing to issue ids under a worker id another process may hold"
            ),
            R::Fenced { late_ms } => write!(
                f,
                "worker-id lease not renewed in time (unproven for {late_ms} ms): refusing to issue ids until it is"
            ),
            R::WouldWait { left, .. } => write!(
                f,
                "would wait {} µs for the next id (waits are deferred on this thread)",
                left.as_micros()
            ),
        }
    }
}

impl core::error::Error for GenerateError {}

/// Why a string or a raw value is not a valid id of a scheme: an opaque error with a
/// [`kind`](Self::kind).
///
/// # Examples
///
/// ```
/// use idkit_core::{ParseError, ParseErrorKind};
/// let e = ParseError::length(26, 25);
/// assert_eq!(e.kind(), ParseErrorKind::InvalidLength);
/// assert_eq!(e.to_string(), "invalid length: expected 26 characters, found 25");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(ParseRepr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum ParseRepr {
    /// The input is empty.
    Empty,
    /// The input has the wrong number of characters (or bytes, for binary input).
    InvalidLength {
        /// Fewest accepted.
        min: usize,
        /// Most accepted.
        max: usize,
        /// How many were found.
        found: usize,
        /// What was counted: `characters` of text or `bytes` of a binary id.
        unit: &'static str,
    },
    /// A character outside the scheme's alphabet.
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position, counted in characters from 0.
        index: usize,
        /// What was expected, e.g. "decimal digits".
        expected: &'static str,
    },
    /// The number is larger than the id type can hold.
    Overflow {
        /// The largest accepted value, in the input's notation.
        max: Cow<'static, str>,
    },
    /// The value is well-formed but cannot be an id of this scheme.
    Invalid {
        /// Why, e.g. "bit 63 is set, but twitter ids keep it zero".
        reason: Cow<'static, str>,
    },
}

/// What kind of failure a [`ParseError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The input is empty.
    Empty,
    /// The input has the wrong number of characters (or bytes).
    InvalidLength,
    /// A character outside the scheme's alphabet.
    InvalidChar,
    /// The number is larger than the id type holds.
    Overflow,
    /// Well-formed, but not an id of this scheme.
    Invalid,
}

impl ParseError {
    /// The input is empty.
    pub fn empty() -> Self {
        Self(ParseRepr::Empty)
    }

    /// Not an id of this scheme, for `reason` (e.g. "bit 63 is set, but twitter ids keep
    /// it zero").
    pub fn invalid(reason: impl Into<Cow<'static, str>>) -> Self {
        Self(ParseRepr::Invalid {
            reason: reason.into(),
        })
    }

    /// Exactly `expected` characters were expected, `found` were given.
    pub fn length(expected: usize, found: usize) -> Self {
        Self::invalid_length(expected, expected, found)
    }

    /// `min..=max` characters were expected, `found` were given.
    pub fn invalid_length(min: usize, max: usize, found: usize) -> Self {
        Self(ParseRepr::InvalidLength {
            min,
            max,
            found,
            unit: "characters",
        })
    }

    /// A binary id of exactly `expected` bytes was expected, `found` were given: the same
    /// [`ParseErrorKind::InvalidLength`] as [`length`](Self::length), counted in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use idkit_core::{ParseError, ParseErrorKind};
    /// let e = ParseError::byte_length(8, 16);
    /// assert_eq!(e.kind(), ParseErrorKind::InvalidLength);
    /// assert_eq!(e.to_string(), "invalid length: expected 8 bytes, found 16");
    /// ```
    pub fn byte_length(expected: usize, found: usize) -> Self {
        Self::invalid_byte_length(expected, expected, found)
    }

    /// A binary id of `min..=max` bytes was expected, `found` were given.
    pub fn invalid_byte_length(min: usize, max: usize, found: usize) -> Self {
        Self(ParseRepr::InvalidLength {
            min,
            max,
            found,
            unit: "bytes",
        })
    }

    /// Character `ch` at position `index` (in characters) is not `expected`.
    pub fn invalid_char(ch: char, index: usize, expected: &'static str) -> Self {
        Self(ParseRepr::InvalidChar {
            ch,
            index,
            expected,
        })
    }

    /// The number is above `max`, written in the input's notation.
    pub fn overflow(max: impl Into<Cow<'static, str>>) -> Self {
        Self(ParseRepr::Overflow { max: max.into() })
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ParseErrorKind {
        match self.0 {
            ParseRepr::Empty => ParseErrorKind::Empty,
            ParseRepr::InvalidLength { .. } => ParseErrorKind::InvalidLength,
            ParseRepr::InvalidChar { .. } => ParseErrorKind::InvalidChar,
            ParseRepr::Overflow { .. } => ParseErrorKind::Overflow,
            ParseRepr::Invalid { .. } => ParseErrorKind::Invalid,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseRepr as R;
        match &self.0 {
            R::Empty => f.write_str("empty input: expected an id"),
            R::InvalidLength {
                min,
                max,
                found,
                unit,
            } if min == max => write!(f, "invalid length: expected {min} {unit}, found {found}"),
            R::InvalidLength {
                min,
                max,
                found,
                unit,
            } => write!(
                f,
                "invalid length: expected {min} to {max} {unit}, found {found}"
            ),
            R::InvalidChar {
                ch,
                index,
                expected,
            } => write!(
                f,
                "invalid character {ch:?} at position {index}: expected {expected}"
            ),
            R::Overflow { max } => write!(f, "number too large: the maximum is {max}"),
            R::Invalid { reason } => write!(f, "invalid id: {reason}"),
        }
    }
}

impl core::error::Error for ParseError {}

/// Why an id could not be composed from explicit parts: an opaque error with a
/// [`kind`](Self::kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposeError(ComposeRepr);

/// What kind of failure a [`ComposeError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ComposeErrorKind {
    /// A field value does not fit its width.
    FieldOutOfRange,
    /// The parts name a field the layout does not have.
    UnknownField,
    /// The timestamp is outside the layout's range.
    TimeOutOfRange,
    /// No range of the scheme's ids stands for a time: it has no time field (UUIDv4, range
    /// ids), or its bytes do not sort by it (UUIDv1).
    NoTime,
}

impl ComposeError {
    /// `value` does not fit `field`, whose largest value is `max`.
    pub fn field_out_of_range(field: &'static str, value: u128, max: u128) -> Self {
        Self(ComposeRepr::FieldOutOfRange { field, value, max })
    }

    /// No field is called `name`; `known` lists the layout's fields, comma-separated.
    pub fn unknown_field(name: impl Into<String>, known: impl Into<String>) -> Self {
        Self(ComposeRepr::UnknownField {
            name: name.into(),
            known: known.into(),
        })
    }

    /// `timestamp_ms` is outside `first_ms..=last_ms` (Unix ms).
    pub fn time_out_of_range(timestamp_ms: u64, first_ms: u64, last_ms: u64) -> Self {
        Self(ComposeRepr::TimeOutOfRange {
            timestamp_ms,
            first_ms,
            last_ms,
        })
    }

    /// Refuses every field in `fields`: for schemes whose bounds take a time alone (the bits
    /// beside it are random or counted).
    ///
    /// # Errors
    ///
    /// [`ComposeErrorKind::UnknownField`] naming the first field given.
    pub fn refuse_fields(fields: &[(&str, u128)]) -> Result<(), Self> {
        match fields.first() {
            Some((name, _)) => Err(Self::unknown_field(*name, "none (only the time is given)")),
            None => Ok(()),
        }
    }

    /// `scheme` has no time field.
    pub fn no_time(scheme: &'static str) -> Self {
        Self(ComposeRepr::NoTime {
            scheme,
            unordered: false,
        })
    }

    /// The same error naming `scheme`, where it names one.
    pub(crate) fn naming(self, scheme: &'static str) -> Self {
        match self.0 {
            ComposeRepr::NoTime { unordered, .. } => {
                Self(ComposeRepr::NoTime { scheme, unordered })
            }
            other => Self(other),
        }
    }

    /// `scheme`'s ids hold a time but their bytes do not sort by it (UUIDv1): the ids of one
    /// time are not one range. Its kind is [`ComposeErrorKind::NoTime`].
    pub fn not_time_ordered(scheme: &'static str) -> Self {
        Self(ComposeRepr::NoTime {
            scheme,
            unordered: true,
        })
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ComposeErrorKind {
        match self.0 {
            ComposeRepr::FieldOutOfRange { .. } => ComposeErrorKind::FieldOutOfRange,
            ComposeRepr::UnknownField { .. } => ComposeErrorKind::UnknownField,
            ComposeRepr::TimeOutOfRange { .. } => ComposeErrorKind::TimeOutOfRange,
            ComposeRepr::NoTime { .. } => ComposeErrorKind::NoTime,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ComposeRepr {
    /// A field value does not fit its width.
    FieldOutOfRange {
        /// The field's name.
        field: &'static str,
        /// The value given.
        value: u128,
        /// The largest value the field holds.
        max: u128,
    },
    /// The parts name a field the layout does not have.
    UnknownField {
        /// The name given.
        name: String,
        /// The layout's field names, comma-separated.
        known: String,
    },
    /// The timestamp is before the epoch or after the last representable time.
    TimeOutOfRange {
        /// The timestamp given, Unix milliseconds.
        timestamp_ms: u64,
        /// The first representable time, Unix milliseconds.
        first_ms: u64,
        /// The last representable time, Unix milliseconds.
        last_ms: u64,
    },
    /// The scheme has no time field, or does not sort by it.
    NoTime {
        /// The scheme's name.
        scheme: &'static str,
        /// It has a time, but its ids do not sort by it.
        unordered: bool,
    },
}

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ComposeRepr as R;
        match &self.0 {
            R::FieldOutOfRange { field, value, max } => write!(
                f,
                "field out of range: {field} must be at most {max}, found {value}"
            ),
            R::UnknownField { name, known } => {
                write!(f, "unknown field {name:?}: expected one of {known}")
            }
            R::TimeOutOfRange {
                timestamp_ms,
                first_ms,
                last_ms,
            } => write!(
                f,
                "timestamp out of range: {timestamp_ms} is outside {first_ms}..={last_ms} (Unix ms)"
            ),
            R::NoTime {
                scheme,
                unordered: false,
            } => write!(
                f,
                "{scheme} ids carry no time: no id stands for a time, and none is made from one"
            ),
            R::NoTime {
                scheme,
                unordered: true,
            } => write!(
                f,
                "{scheme} ids carry a time but do not sort by it, so the ids of one time are \
                 not one range: time bounds are for time-ordered schemes"
            ),
        }
    }
}

impl core::error::Error for ComposeError {}

/// `error`'s message followed by those of the errors that caused it, joined by `": "`: one
/// line that says what failed and why. Some errors name only what failed (the `postgres`
/// crate says "error connecting to server" and keeps "Connection refused" as its source); a
/// cause whose message the line already holds is not repeated.
///
/// ```
/// # use std::fmt;
/// #[derive(Debug)]
/// struct Connect(std::io::Error);
/// impl fmt::Display for Connect {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("error connecting to server")
///     }
/// }
/// impl core::error::Error for Connect {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// let e = Connect(std::io::Error::other("Connection refused"));
/// assert_eq!(e.to_string(), "error connecting to server");
/// assert_eq!(idkit_core::with_causes(&e), "error connecting to server: Connection refused");
/// ```
pub fn with_causes(error: &dyn core::error::Error) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !text.is_empty() && !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use std::fmt;

    /// An error that names only what failed, its cause kept as its source.
    #[derive(Debug)]
    struct Failed(&'static str, Option<Box<dyn std::error::Error + 'static>>);

    impl fmt::Display for Failed {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl core::error::Error for Failed {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref()
        }
    }

    #[test]
    fn causes_follow_the_message_once_each() {
        let refused = Failed("Connection refused (os error 111)", None);
        let connect = Failed("error connecting to server", Some(Box::new(refused)));
        let io = Failed("io", Some(Box::new(connect)));
        assert_eq!(
            super::with_causes(&io),
            "io: error connecting to server: Connection refused (os error 111)"
        );
        // A message that already holds its cause's keeps it once.
        let inner = Failed("timed out", None);
        let outer = Failed("lease failed: timed out", Some(Box::new(inner)));
        assert_eq!(super::with_causes(&outer), "lease failed: timed out");
        assert_eq!(super::with_causes(&Failed("alone", None)), "alone");
    }
}
