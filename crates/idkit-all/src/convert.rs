//! One id in another scheme's form, where the two hold the same bits: a ULID and a UUID are
//! both 128 bits, a TypeID is its UUIDv7 with a prefix. The bits are kept as they are; what
//! changes is the text, and what the target scheme says of them.
//!
//! # Examples
//!
//! ```
//! use idkit_all::convert::convert;
//! use idkit_all::registry::Options;
//! // The ULID spec's example as a UUID: the same 128 bits.
//! let uuid = convert("ulid", "uuid", "01ARZ3NDEKTSV4RRFFQ69G5FAV", &Options::default())?;
//! assert_eq!(uuid.id, "01563e3a-b5d3-d676-4c61-efb99302bd5b");
//! // The TypeID spec's example and its UUIDv7.
//! let v7 = convert("typeid", "uuid-v7", "prefix_01h455vb4pex5vsknk084sn02q", &Options::default())?;
//! assert_eq!(v7.id, "01890a5d-ac96-774b-bcce-b302099a8057");
//! # Ok::<(), idkit_all::convert::ConvertError>(())
//! ```

use core::fmt;

use idkit_core::codec::hex;
use idkit_core::definition::{BuildError, Options};
use idkit_core::{ParseError, RawId};

use crate::registry;

/// The name that stands for any UUID, whatever its version: the 128 bits in the
/// 8-4-4-4-12 hex form, as source or target.
pub const ANY_UUID: &str = "uuid";

/// An id converted: its text in the target scheme, and a note where the conversion keeps
/// the bits but not their meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The target scheme's name (`uuid` for any UUID).
    pub scheme: &'static str,
    /// The id in the target scheme's canonical text.
    pub id: String,
    /// Set when the target reads a time from bits that were not one (a UUIDv4 as a ULID).
    pub note: Option<String>,
}

/// Why an id could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConvertError {
    /// A scheme name that no scheme answers to, or a target option that is not valid (a
    /// TypeID prefix).
    Scheme(BuildError),
    /// The id is not one of the source scheme's.
    Parse {
        /// The source scheme.
        scheme: &'static str,
        /// What was wrong.
        error: ParseError,
    },
    /// The two schemes' ids have different widths: no id of one is an id of the other.
    DoesNotFit {
        /// The source scheme and its width in bits.
        from: (&'static str, u32),
        /// The target scheme and its width in bits.
        to: (&'static str, u32),
    },
    /// The bits are not an id of the target scheme (a ULID whose bits are not a version 7
    /// UUID, read as `uuid-v7`).
    NotAnId {
        /// The target scheme.
        scheme: &'static str,
        /// What the target's codec says of the bits.
        error: ParseError,
    },
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scheme(e) => e.fmt(f),
            Self::Parse { scheme, error } => write!(f, "not a {scheme} id: {error}"),
            Self::DoesNotFit { from, to } => write!(
                f,
                "{} ids are {} bits and {} ids {} bits: no id of one is an id of the other",
                from.0, from.1, to.0, to.1
            ),
            Self::NotAnId { scheme, error } => {
                write!(f, "these bits are not a {scheme} id: {error}")
            }
        }
    }
}

impl std::error::Error for ConvertError {}

/// `id`, written in scheme `from`, in scheme `to`'s form. Either may be [`ANY_UUID`].
/// `options` are the target's (a TypeID's `prefix`, empty by default).
///
/// # Errors
///
/// [`ConvertError`]: an unknown scheme or bad option, an id that is not one of `from`'s,
/// schemes of different widths, or bits that are not an id of `to` (a UUID of the wrong
/// version). A UUIDv4 read as a ULID converts, with a [`Converted::note`] that its time
/// means nothing. `uuid-v1` and `uuid-v6` convert into each other by reordering the time's
/// bits: the one pair whose conversion changes the bits.
pub fn convert(
    from: &str,
    to: &str,
    id: &str,
    options: &Options,
) -> Result<Converted, ConvertError> {
    let (from_name, raw, timed) = read(from, id)?;
    if to == ANY_UUID {
        let width = raw.as_bytes().len();
        if width != 16 {
            return Err(ConvertError::DoesNotFit {
                from: (from_name, bits(width)),
                to: (ANY_UUID, 128),
            });
        }
        return Ok(Converted {
            scheme: ANY_UUID,
            id: uuid_text(raw.as_bytes()),
            note: None,
        });
    }
    let entry = registry::find(to).map_err(ConvertError::Scheme)?;
    let info = entry.info();
    #[cfg(feature = "uuid")]
    if let Some(converted) = time_based(from_name, info.name, &raw) {
        return converted;
    }
    let width = bits(raw.as_bytes().len());
    if width != info.bits {
        return Err(ConvertError::DoesNotFit {
            from: (from_name, width),
            to: (info.name, info.bits),
        });
    }
    let codec = entry.codec_with(options).map_err(ConvertError::Scheme)?;
    let text = codec
        .format_raw(&raw)
        .map_err(|error| ConvertError::NotAnId {
            scheme: info.name,
            error,
        })?;
    let note = (!timed && info.time_precision_ms.is_some()).then(|| {
        format!(
            "{from_name} ids carry no time: this {} id's time field holds {from_name}'s other \
             bits, not the time it was made",
            info.name
        )
    });
    Ok(Converted {
        scheme: info.name,
        id: text,
        note,
    })
}

/// A version 1 UUID as version 6 and back: the same time, clock sequence and node, the
/// time's bits reordered (RFC 9562 section 5.6). `None` for any other pair.
#[cfg(feature = "uuid")]
fn time_based(
    from: &'static str,
    to: &'static str,
    raw: &RawId,
) -> Option<Result<Converted, ConvertError>> {
    use idkit_uuid::{Uuid, versions};
    let reorder = match (from, to) {
        ("uuid-v1", "uuid-v6") => versions::v1_to_v6,
        ("uuid-v6", "uuid-v1") => versions::v6_to_v1,
        _ => return None,
    };
    let id = raw
        .to_u128()
        .and_then(|bits| reorder(Uuid::from_u128(bits)))
        .map_err(|error| ConvertError::Parse {
            scheme: from,
            error,
        });
    Some(id.map(|id| Converted {
        scheme: to,
        id: id.to_string(),
        note: None,
    }))
}

/// The source's name, the id's bits, and whether they hold a time.
fn read(from: &str, id: &str) -> Result<(&'static str, RawId, bool), ConvertError> {
    if from == ANY_UUID {
        let raw = uuid_bytes(id).map_err(|error| ConvertError::Parse {
            scheme: ANY_UUID,
            error,
        })?;
        // Version 7 (Unix ms), 1 and 6 (Gregorian 100 ns) hold a time.
        let version = raw.as_bytes()[6] >> 4;
        return Ok((ANY_UUID, raw, matches!(version, 1 | 6 | 7)));
    }
    let entry = registry::find(from).map_err(ConvertError::Scheme)?;
    let name = entry.name();
    let codec = entry.codec();
    let parse = |error| ConvertError::Parse {
        scheme: name,
        error,
    };
    let raw = codec.parse_raw(id).map_err(parse)?;
    let timed = codec.decode_text(id).map_err(parse)?.timestamp_ms.is_some();
    Ok((name, raw, timed))
}

fn bits(bytes: usize) -> u32 {
    u32::try_from(bytes * 8).unwrap_or(u32::MAX)
}

/// Any UUID's 8-4-4-4-12 hex text, either case.
fn uuid_bytes(text: &str) -> Result<RawId, ParseError> {
    const LEN: usize = 36;
    let found = text.chars().count();
    if found != LEN {
        return Err(ParseError::length(LEN, found));
    }
    if let Some((at, ch)) = text
        .char_indices()
        .find(|&(i, c)| matches!(i, 8 | 13 | 18 | 23) != (c == '-'))
    {
        return Err(ParseError::invalid_char(
            ch,
            at,
            "hexadecimal digits with '-' at positions 8, 13, 18 and 23",
        ));
    }
    let mut bytes = [0; 16];
    hex::decode_into(&text.replace('-', ""), &mut bytes)?;
    Ok(RawId::from_u128(u128::from_be_bytes(bytes)))
}

/// The 8-4-4-4-12 lower-case text of 16 bytes.
fn uuid_text(bytes: &[u8]) -> String {
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
