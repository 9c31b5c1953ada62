//! [`SnowflakeCodec`]: decimal text, raw bytes, decoding and composing for any layout.

use crate::prelude::*;
use core::fmt::Debug;

use idkit_core::{Codec, Compose, ComposeError, Decoded, ParseError, RawId, TimeBounds};

use super::*;

/// Reads and writes ids of any [`Layout`]: decimal text, raw bytes, decoding, composing.
///
/// # Examples
///
/// The example id from Discord's API reference:
///
/// ```
/// use idkit_snowflake::{Discord, SnowflakeCodec};
/// use idkit_core::{Codec, FieldValue};
/// let codec = SnowflakeCodec(Discord);
/// let id = codec.parse("175928847299117063")?;
/// let decoded = codec.decode(id);
/// assert_eq!(decoded.timestamp_ms, Some(1_462_015_105_796));
/// assert_eq!(decoded.field("worker"), Some(&FieldValue::Int(1)));
/// assert_eq!(decoded.field("increment"), Some(&FieldValue::Int(7)));
/// # Ok::<(), idkit_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnowflakeCodec<L>(pub L);

impl<L: Layout> SnowflakeCodec<L> {
    /// Checks that `id` can belong to the layout (no reserved bit set).
    ///
    /// # Errors
    ///
    /// [`ParseErrorKind::Invalid`](idkit_core::ParseErrorKind::Invalid) naming the offending bit.
    pub fn validate(&self, id: L::Id) -> Result<L::Id, ParseError> {
        self.0.spec().split(id.to_u128()).map(|_| id)
    }
}

impl<L: Layout> Codec for SnowflakeCodec<L> {
    type Id = L::Id;

    fn to_raw(&self, id: L::Id) -> RawId {
        id.to_raw()
    }

    fn read_raw(&self, raw: &RawId) -> Result<L::Id, ParseError> {
        self.validate(L::Id::from_raw(raw)?)
    }

    fn format(&self, id: L::Id) -> String {
        id.to_string()
    }

    fn format_into(&self, id: L::Id, out: &mut String) {
        use core::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = write!(out, "{id}");
    }

    fn parse(&self, text: &str) -> Result<L::Id, ParseError> {
        self.validate(L::Id::parse_decimal(text)?)
    }

    fn decode(&self, id: L::Id) -> Decoded {
        match self.0.spec().decode_u128(id.to_u128()) {
            Ok(decoded) => decoded,
            // Reserved bits set: decode what the fields say anyway (callers that need the
            // check use `parse` or `read_raw`, which reject such ids).
            Err(_) => {
                let used = self.0.spec().word_bits() - self.0.spec().reserved_bits();
                let masked = id.to_u128() & (u128::MAX >> (128 - used));
                self.0.spec().decode_u128(masked).unwrap_or(Decoded {
                    timestamp_ms: None,
                    fields: Vec::new(),
                })
            }
        }
    }

    /// The ids of the tick holding `timestamp_ms`, with the named fields held (see
    /// [`LayoutSpec::bounds_u128`](crate::LayoutSpec::bounds_u128)).
    fn bounds_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<TimeBounds<L::Id>, ComposeError> {
        let b = self.0.spec().bounds_u128(timestamp_ms, fields)?;
        // bounds_u128 only sets bits inside the word.
        Ok(b.map(|id| L::Id::from_u128(id).unwrap_or_default()))
    }

    /// The id of the tick holding `timestamp_ms` with the named fields (see
    /// [`LayoutSpec::compose_u128`](crate::LayoutSpec::compose_u128)).
    fn compose_at(
        &self,
        timestamp_ms: u64,
        fields: &[(&str, u128)],
    ) -> Result<L::Id, ComposeError> {
        let id = self.0.spec().compose_u128(timestamp_ms, fields)?;
        // compose_u128 only sets bits inside the word.
        Ok(L::Id::from_u128(id).unwrap_or_default())
    }
}

impl<L: Layout> Compose for SnowflakeCodec<L> {
    type Id = L::Id;

    fn compose(&self, timestamp_ms: u64, fields: &[(&str, u128)]) -> Result<L::Id, ComposeError> {
        self.compose_at(timestamp_ms, fields)
    }
}
