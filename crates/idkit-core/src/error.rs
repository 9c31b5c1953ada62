//! Error types shared by every scheme.
//!
//! Messages are one lowercase line that says what was wrong and what was expected, so the
//! CLI and the HTTP service can show them as they are.

use core::fmt;
use std::borrow::Cow;

/// Why a generator could not issue an id.
///
/// Every variant means *no id was issued*: a generator never hands out a duplicate or a
/// smaller id to get around one of these conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GenerateError {
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
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ClockMovedBackwards {
                behind_ms,
                waited_ms: 0,
            } => write!(
                f,
                "clock moved backwards by {behind_ms} ms: refusing to issue ids until it catches up"
            ),
            Self::ClockMovedBackwards {
                behind_ms,
                waited_ms,
            } => write!(
                f,
                "clock still {behind_ms} ms behind the last issued id after waiting {waited_ms} ms"
            ),
            Self::AheadLimit { ahead_ms, limit_ms } => write!(
                f,
                "logical clock would run {ahead_ms} ms ahead of the clock, above the limit of {limit_ms} ms"
            ),
            Self::TimeOverflow { last_ms } => write!(
                f,
                "time field exhausted: the layout cannot represent times after {}",
                crate::time::format_rfc3339_ms(*last_ms)
            ),
            Self::BeforeEpoch { now_ms, epoch_ms } => write!(
                f,
                "clock reads {} which is before the layout's epoch {}",
                crate::time::format_rfc3339_ms(*now_ms),
                crate::time::format_rfc3339_ms(*epoch_ms)
            ),
            Self::Exhausted { what } => write!(f, "id space exhausted: {what}"),
            Self::Unavailable { reason } => write!(f, "store unavailable: {reason}"),
        }
    }
}

impl std::error::Error for GenerateError {}

/// Why a string or a raw value is not a valid id of a scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The input is empty.
    Empty,
    /// The input has the wrong number of characters (or bytes, for binary input).
    InvalidLength {
        /// Fewest characters accepted.
        min: usize,
        /// Most characters accepted.
        max: usize,
        /// Characters found.
        found: usize,
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

impl ParseError {
    /// A [`ParseError::Invalid`] with the given reason.
    pub fn invalid(reason: impl Into<Cow<'static, str>>) -> Self {
        Self::Invalid {
            reason: reason.into(),
        }
    }

    /// A [`ParseError::InvalidLength`] expecting exactly `expected` characters.
    pub fn length(expected: usize, found: usize) -> Self {
        Self::InvalidLength {
            min: expected,
            max: expected,
            found,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("empty input: expected an id"),
            Self::InvalidLength { min, max, found } if min == max => write!(
                f,
                "invalid length: expected {min} characters, found {found}"
            ),
            Self::InvalidLength { min, max, found } => write!(
                f,
                "invalid length: expected {min} to {max} characters, found {found}"
            ),
            Self::InvalidChar {
                ch,
                index,
                expected,
            } => write!(
                f,
                "invalid character {ch:?} at position {index}: expected {expected}"
            ),
            Self::Overflow { max } => write!(f, "number too large: the maximum is {max}"),
            Self::Invalid { reason } => write!(f, "invalid id: {reason}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Why an id could not be composed from explicit parts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposeError {
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
}

impl fmt::Display for ComposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FieldOutOfRange { field, value, max } => write!(
                f,
                "field out of range: {field} must be at most {max}, found {value}"
            ),
            Self::UnknownField { name, known } => {
                write!(f, "unknown field {name:?}: expected one of {known}")
            }
            Self::TimeOutOfRange {
                timestamp_ms,
                first_ms,
                last_ms,
            } => write!(
                f,
                "timestamp out of range: {timestamp_ms} is outside {first_ms}..={last_ms} (Unix ms)"
            ),
        }
    }
}

impl std::error::Error for ComposeError {}
