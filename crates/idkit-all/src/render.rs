//! Text and JSON forms of decoded ids and scheme facts, and of input repeated in error
//! messages, shared by the service and the `idkit` command line so both print the same
//! thing.

use crate::registry;
use idkit_core::codec::{base62, crockford, hex, radix_decode, radix_encode};
use idkit_core::{Decoded, DynCodec, FieldValue, ParseError, RawId, SchemeInfo, time};
use serde_json::{Map, Value, json};

/// The forms an id is written in: its scheme's own string, or its bytes as one number in
/// decimal, hex, Crockford base32 or base62 (what `idkit gen --format` writes and `decode
/// --format` reads). With the `clap` feature it is a `clap::ValueEnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// The scheme's own string.
    Canonical,
    /// The id's bytes as one unsigned decimal integer.
    Decimal,
    /// The id's bytes in lowercase hex.
    Hex,
    /// The id's value in Crockford base32.
    Base32,
    /// The id's value in base62 (0-9A-Za-z).
    Base62,
}

impl Format {
    /// Every form, the scheme's own string first.
    pub const ALL: [Self; 5] = [
        Self::Canonical,
        Self::Decimal,
        Self::Hex,
        Self::Base32,
        Self::Base62,
    ];

    /// The name `--format` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Canonical => "canonical",
            Self::Decimal => "decimal",
            Self::Hex => "hex",
            Self::Base32 => "base32",
            Self::Base62 => "base62",
        }
    }
}

/// The decoded form that `idkit decode --json`, the service and the PostgreSQL extension
/// give: `id` is a string, `timestamp_ms` Unix ms, `timestamp`
/// RFC 3339 UTC, fields in layout order; both times `null` for schemes without time.
pub fn decoded_json(scheme: &str, id: &str, decoded: &Decoded) -> Value {
    decoded_json_named(scheme, id, decoded, |name| name)
}

/// [`decoded_json`], each field called by `name_of` its name in `decoded` (a layout read
/// with stand-in names, `idkit_snowflake::FieldNames::name`).
pub fn decoded_json_named<'a>(
    scheme: &str,
    id: &str,
    decoded: &'a Decoded,
    name_of: impl Fn(&'a str) -> &'a str,
) -> Value {
    let mut fields = Map::new();
    for (name, value) in &decoded.fields {
        let v = match value {
            FieldValue::Int(n) => json!(n),
            FieldValue::Hex(h) | FieldValue::Text(h) => json!(h),
        };
        fields.insert(name_of(name).to_owned(), v);
    }
    json!({
        "scheme": scheme,
        "id": id,
        "timestamp_ms": decoded.timestamp_ms,
        "timestamp": decoded.timestamp_rfc3339(),
        "fields": fields,
    })
}

/// A short aligned listing for people.
pub fn decoded_plain(scheme: &str, id: &str, decoded: &Decoded) -> String {
    decoded_plain_with(scheme, id, &[], decoded)
}

/// [`decoded_plain`] with more rows after the id's, aligned with the rest (`idkit inspect`
/// says how it read the id).
///
/// # Examples
///
/// ```
/// use idkit_all::registry;
/// use idkit_all::render::decoded_plain_with;
///
/// let raw = idkit_core::RawId::from_bytes(&0x1d82_0c90_9680_0000_u64.to_be_bytes()).unwrap();
/// let decoded = registry::find("twitter").unwrap().codec().decode_raw(&raw).unwrap();
/// let text = decoded_plain_with(
///     "snowflake-twitter",
///     "2126275789212090368",
///     &[("read as", "hex".to_owned())],
///     &decoded,
/// );
/// let lines: Vec<&str> = text.lines().take(3).collect();
/// assert_eq!(
///     lines,
///     [
///         "scheme      snowflake-twitter",
///         "id          2126275789212090368",
///         "read as     hex",
///     ]
/// );
/// ```
pub fn decoded_plain_with(
    scheme: &str,
    id: &str,
    extra: &[(&str, String)],
    decoded: &Decoded,
) -> String {
    let mut rows = vec![("scheme", scheme.to_owned()), ("id", id.to_owned())];
    rows.extend(extra.iter().cloned());
    rows.push((
        "timestamp",
        match decoded.timestamp_ms {
            Some(ms) => format!("{} ({ms})", time::format_rfc3339_ms(ms)),
            // A TypeID holds any UUID; only a UUIDv7 carries a time.
            None if registry::find(scheme).is_ok_and(|e| e.info().time_precision_ms.is_some()) => {
                "none (this id carries no time)".to_owned()
            }
            None => "none (this scheme has no time field)".to_owned(),
        },
    ));
    for (name, value) in &decoded.fields {
        rows.push((name, value.to_string()));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<width$}  {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A scheme's facts as JSON, as `idkit schemes --json` and `GET /v1/schemes` print them.
pub fn info_json(info: &SchemeInfo, aliases: &[&str], summary: &str) -> Value {
    json!({
        "name": info.name,
        "aliases": aliases,
        "summary": summary,
        "bits": info.bits,
        "bytes": info.bytes,
        "string_len": info.string_len,
        "alphabet": info.alphabet.name(),
        "time_ordered": info.time_precision_ms.is_some(),
        "time_precision_ms": info.time_precision_ms,
        "coordination": info.coordination.to_string(),
        "cap_ids_per_sec": info.cap_per_sec,
        "time_runs_out_ms": info.time_runs_out_ms,
        "time_runs_out": info.time_runs_out_ms.map(time::format_rfc3339_ms),
    })
}

/// Every registered scheme's facts as a JSON array (`idkit schemes --json`).
pub fn schemes_json() -> String {
    let all: Vec<Value> = registry::all()
        .map(|e| info_json(&e.info(), e.aliases(), e.summary()))
        .collect();
    Value::Array(all).to_string()
}

/// Longest input, in characters, that an error message repeats whole.
const QUOTE_WHOLE: usize = 64;
/// How much of a longer input an error message repeats.
const QUOTE_START: usize = 40;

/// `text` as an error message repeats what a user gave: quoted and escaped, and for input
/// longer than any id (say, a pasted file) its first characters and its length, so that
/// the message stays one readable line.
pub fn quoted(text: &str) -> String {
    let len = text.chars().count();
    if len <= QUOTE_WHOLE {
        return format!("{text:?}");
    }
    let start: String = text.chars().take(QUOTE_START).collect();
    format!("{start:?}... ({len} characters)")
}

/// `id` in the requested format.
pub fn format_id(
    scheme: &dyn DynCodec,
    id: &RawId,
    format: Format,
    bits: u32,
) -> Result<String, ParseError> {
    let bytes = id.as_bytes();
    Ok(match format {
        Format::Canonical => scheme.format_raw(id)?,
        Format::Decimal => radix_encode(bytes, b"0123456789", 1),
        Format::Hex => hex::encode(bytes),
        Format::Base32 => radix_encode(
            bytes,
            crockford::ALPHABET,
            usize::try_from(bits.div_ceil(5)).unwrap_or(0),
        ),
        Format::Base62 => base62::encode(bytes, base62::width_for(bytes.len())),
    })
}

/// Reads `text` written in `format` as [`format_id`] writes it, as the bytes of an id of
/// `bits` bits: decimal in any number of digits, hex, base32 and base62 in the exact width
/// [`format_id`] writes. Crockford base32 takes lower case and its aliases (`I`, `L` as `1`,
/// `O` as `0`). Whether the bytes are an id of the scheme is the scheme's to say.
///
/// # Errors
///
/// [`ParseError`] for a length, character or value that `format` does not allow;
/// [`Format::Canonical`] is the scheme's own to read, and is refused here.
pub fn parse_id(text: &str, format: Format, bits: u32) -> Result<RawId, ParseError> {
    let mut bytes = vec![0u8; usize::try_from(bits / 8).unwrap_or(0)];
    let exact = |width: usize| {
        let found = text.chars().count();
        if found == width {
            Ok(())
        } else {
            Err(ParseError::invalid_length(width, width, found))
        }
    };
    match format {
        Format::Canonical => return Err(ParseError::invalid("the canonical form is the scheme's")),
        Format::Decimal => radix_decode(text, b"0123456789", "decimal digits 0-9", &mut bytes)?,
        Format::Hex => hex::decode_into(text, &mut bytes)?,
        Format::Base32 => {
            exact(usize::try_from(bits.div_ceil(5)).unwrap_or(0))?;
            crockford::decode_bytes(text, crockford::Aliases::Crockford, &mut bytes)?;
        }
        Format::Base62 => base62::decode(text, base62::width_for(bytes.len()), &mut bytes)?,
    }
    RawId::from_bytes(&bytes)
}

/// Reads `text` as an id of `scheme` (`bits` wide) written in `format`: the scheme's own
/// string for [`Format::Canonical`], else the id's bytes as [`parse_id`] reads them. Returns
/// the decoding and the id's canonical string.
///
/// # Errors
///
/// [`parse_id`]'s for a byte form, and the scheme's [`ParseError`] when it does not read the
/// text or the bytes.
pub fn read_id(
    scheme: &dyn DynCodec,
    text: &str,
    format: Format,
    bits: u32,
) -> Result<(Decoded, String), ParseError> {
    if format == Format::Canonical {
        Ok((scheme.decode_text(text)?, scheme.canonical_text(text)?))
    } else {
        let raw = parse_id(text, format, bits)?;
        Ok((scheme.decode_raw(&raw)?, scheme.format_raw(&raw)?))
    }
}

#[cfg(test)]
mod tests {
    use super::{decoded_plain, quoted};
    use crate::registry;

    /// The TypeID spec's `nil` example (typeid/spec, `valid.yml`: the nil UUID, no prefix)
    /// is a TypeID without a time; a UUIDv4 is of a scheme without one.
    #[test]
    fn an_id_without_a_time_says_whether_its_scheme_has_one() {
        let plain = |scheme: &str, id: &str| {
            let decoded = registry::find(scheme).unwrap().codec().decode_text(id);
            decoded_plain(scheme, id, &decoded.unwrap())
        };
        let typeid = plain("typeid", "00000000000000000000000000");
        assert!(
            typeid.contains("timestamp  none (this id carries no time)"),
            "{typeid}"
        );
        let v4 = plain("uuid-v4", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6");
        assert!(v4.contains("none (this scheme has no time field)"), "{v4}");
    }

    #[test]
    fn short_input_is_quoted_whole_and_long_input_by_its_start_and_length() {
        assert_eq!(
            quoted("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
            "\"01ARZ3NDEKTSV4RRFFQ69G5FAV\""
        );
        assert_eq!(quoted("a\tb"), "\"a\\tb\"");
        let edge = "9".repeat(64);
        assert_eq!(quoted(&edge), format!("\"{edge}\""));
        let long = "é".repeat(65);
        assert_eq!(
            quoted(&long),
            format!("\"{}\"... (65 characters)", "é".repeat(40))
        );
    }
}
