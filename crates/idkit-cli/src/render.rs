//! Text and JSON for schemes, ids and decoded ids.

use idkit_all::registry;
use idkit_core::codec::{base62, crockford, hex, radix_decode, radix_encode};
use idkit_core::{Decoded, DynCodec, ParseError, RawId, time};

use crate::Format;

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

pub use idkit_all::render::{
    decoded_json, decoded_plain, decoded_plain_with, quoted, schemes_json,
};

/// `idkit schemes`.
pub fn schemes_table() -> String {
    let mut rows = vec![[
        "name".to_owned(),
        "bits".to_owned(),
        "string".to_owned(),
        "time order".to_owned(),
        "coordination".to_owned(),
        "cap/s per generator".to_owned(),
        "time runs out".to_owned(),
    ]];
    for entry in registry::all() {
        let info = entry.info();
        rows.push([
            entry.name().to_owned(),
            info.bits.to_string(),
            format!("{} {}", info.string_len, info.alphabet.name()),
            info.time_precision_ms
                .map_or("none".to_owned(), |p| format!("{p} ms")),
            info.coordination.to_string(),
            info.cap_per_sec.map_or("-".to_owned(), |c| c.to_string()),
            info.time_runs_out_ms.map_or("-".to_owned(), |ms| {
                let stamp = time::format_rfc3339_ms(ms);
                // The date part: years past 9999 have more than four digits.
                stamp.split('T').next().unwrap_or(&stamp).to_owned()
            }),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
