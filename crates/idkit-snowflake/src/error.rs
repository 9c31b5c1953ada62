//! Configuration errors: a layout or generator that cannot be built.

use crate::prelude::*;
use core::fmt;

/// Why a layout or a generator could not be built. Checked once, at build time, so a
/// generator that was built never meets these conditions while issuing ids.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The word is neither 64 nor 128 bits.
    UnsupportedWord {
        /// Bits asked for.
        bits: u32,
    },
    /// The layout has no time field, or more than one.
    TimeField {
        /// How many time fields were declared.
        found: usize,
    },
    /// The layout has no sequence field, or more than one.
    SequenceField {
        /// How many sequence fields were declared.
        found: usize,
    },
    /// A field is 0 bits wide, or wider than 64 bits.
    FieldWidth {
        /// The field.
        name: String,
        /// Its width.
        bits: u32,
    },
    /// The widths add up to more than the word.
    TooWide {
        /// Sum of all widths, reserved top bits included.
        total: u32,
        /// The word size.
        word: u32,
    },
    /// Two fields share a name, or a name is empty or reserved (`time`).
    FieldName {
        /// The name.
        name: String,
    },
    /// More fields than a layout may have.
    TooManyFields {
        /// The limit, time field excluded.
        max: usize,
    },
    /// The tick is 0 ms.
    ZeroTick,
    /// The epoch is later than now.
    EpochInFuture {
        /// The epoch, Unix ms.
        epoch_ms: u64,
        /// The clock reading, Unix ms.
        now_ms: u64,
    },
    /// The layout's word does not match the type asked for (e.g. a 128-bit layout as
    /// `Custom64`).
    WrongWord {
        /// The type's word size.
        expected: u32,
        /// The layout's word size.
        found: u32,
    },
    /// A generator was given a value for a field the layout does not have, or for `time`
    /// or the sequence, which the generator owns.
    UnknownField {
        /// The name given.
        name: String,
        /// The fields that can be set, comma-separated (empty when the layout has none).
        settable: String,
    },
    /// A field value does not fit its width.
    FieldOutOfRange {
        /// The field.
        name: String,
        /// The value given.
        value: u64,
        /// The largest value it holds.
        max: u64,
    },
    /// A worker id wider than the fields it fills
    /// ([`LayoutSpec::split_worker`](crate::LayoutSpec::split_worker)).
    WorkerTooWide {
        /// The worker id.
        worker: u64,
        /// The bits of the fields together.
        bits: u32,
        /// The fields' names, comma-separated.
        fields: String,
    },
    /// A layout written as text is longer than
    /// [`MAX_TEXT`](crate::MAX_TEXT) bytes.
    TextTooLong {
        /// Its length, bytes.
        bytes: usize,
        /// The most a layout's text may be.
        max: usize,
    },
    /// A layout written as text has a part that is not `NAME:BITS`.
    FieldSyntax {
        /// The part.
        part: String,
    },
    /// Layouts written as text have named more distinct fields in this process than it
    /// keeps (a layout holds its field names for as long as the process runs).
    TooManyNames {
        /// The most distinct names a process keeps.
        max: usize,
    },
    /// The random sequence start range is 0 or wider than the sequence.
    SequenceStart {
        /// The range asked for.
        below: u64,
        /// Values the sequence holds.
        sequence_values: u64,
    },
    /// The sequence field sits above the time field: an id of a later tick could then be a
    /// smaller integer than one of an earlier tick, and a generator's word, which only
    /// rises, would not keep its ids apart or in order.
    SequenceAboveTime,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedWord { bits } => {
                write!(f, "unsupported word: expected 64 or 128 bits, found {bits}")
            }
            Self::TimeField { found } => {
                write!(
                    f,
                    "invalid layout: expected exactly one time field, found {found}"
                )
            }
            Self::SequenceField { found } => write!(
                f,
                "invalid layout: expected exactly one sequence field, found {found}"
            ),
            Self::FieldWidth { name, bits } => write!(
                f,
                "invalid width for field {name:?}: expected 1 to 64 bits, found {bits}"
            ),
            Self::TooWide { total, word } => write!(
                f,
                "invalid layout: fields add up to {total} bits, more than the {word}-bit word"
            ),
            Self::TextTooLong { bytes, max } => write!(
                f,
                "invalid layout: {bytes} bytes of text, more than the {max} a layout is read from"
            ),
            Self::FieldSyntax { part } => write!(
                f,
                "invalid layout field {part:?}: expected NAME:BITS, e.g. time:41,shard:13,sequence:10"
            ),
            Self::WorkerTooWide {
                worker,
                bits,
                fields,
            } => write!(
                f,
                "worker {worker} does not fit the layout's {bits} bits of {fields}"
            ),
            Self::TooManyNames { max } => write!(
                f,
                "too many field names: a process reads layouts of at most {max} distinct \
                 field names"
            ),
            Self::FieldName { name } => write!(
                f,
                "invalid field name {name:?}: names must be non-empty, unique and not \"time\""
            ),
            Self::TooManyFields { max } => {
                write!(f, "invalid layout: at most {max} fields besides time")
            }
            Self::ZeroTick => f.write_str("invalid tick: expected at least 1 ms, found 0"),
            Self::EpochInFuture { epoch_ms, now_ms } => write!(
                f,
                "epoch in the future: epoch {} is after now ({})",
                idkit_core::time::format_rfc3339_ms(*epoch_ms),
                idkit_core::time::format_rfc3339_ms(*now_ms)
            ),
            Self::WrongWord { expected, found } => write!(
                f,
                "wrong word size: expected a {expected}-bit layout, found {found} bits"
            ),
            Self::UnknownField { name, settable } if settable.is_empty() => {
                write!(f, "unknown field {name:?}: this layout has no field to set")
            }
            Self::UnknownField { name, settable } => {
                write!(f, "unknown field {name:?}: expected one of {settable}")
            }
            Self::FieldOutOfRange { name, value, max } => write!(
                f,
                "field out of range: {name} must be at most {max}, found {value}"
            ),
            Self::SequenceAboveTime => f.write_str(
                "invalid layout: the sequence field must come after the time field (fields go \
                 from the most significant bit): ids grow with their time, then their sequence",
            ),
            Self::SequenceStart {
                below,
                sequence_values,
            } => write!(
                f,
                "invalid random sequence start: expected 1 to {sequence_values}, found {below}"
            ),
        }
    }
}

impl core::error::Error for ConfigError {}
