//! `idkit inspect`: read the id every way it could be written, keep the decodings whose time
//! is plausible, most plausible first.

use idkit_core::{Alphabet, Clock, Decoded, ParseError, SystemClock};

use crate::registry;
use crate::render::{self, Format, quoted};

/// One plausible reading of an id.
#[derive(Debug)]
pub struct Candidate {
    /// The scheme's name.
    pub scheme: &'static str,
    /// The id in its scheme's canonical form.
    pub id: String,
    /// How the input was read: as the scheme's own string ([`Format::Canonical`]), or as the
    /// id's bytes written the way `idkit gen --format` writes them.
    pub read_as: Format,
    /// Its time and fields.
    pub decoded: Decoded,
}

/// Earliest plausible creation time: 2008-01-01, before any of these schemes existed.
const EARLIEST_MS: u64 = 1_199_145_600_000;
/// How far in the future a timestamp may be and still be plausible (clock skew).
const FUTURE_SLACK_MS: u64 = 86_400_000;

/// The widths of the registered schemes, in bits, narrowest first.
fn widths() -> Vec<u32> {
    let mut bits: Vec<u32> = registry::all().map(|e| e.info().bits).collect();
    bits.sort_unstable();
    bits.dedup();
    bits
}

/// Every reading of `id` as a registered scheme's id, each scheme's own string first, read
/// from each scheme's published facts and codec (so a new scheme in the registry is inspected
/// with no change here):
///
/// - the scheme's canonical string, as its codec parses it;
/// - a number (decimal digits, no leading zeros, as `gen --format decimal` writes them) as
///   the bytes of each scheme of the narrowest width that holds it. A number that fits 64
///   bits is not also read as a wider id, whose top bytes would then be zero: a time of the
///   epoch itself, or no UUID version;
/// - anything else in hex, base32 or base62, in the exact width `gen --format` writes for the
///   scheme's bits (16, 24, 32 or 40 hex digits for 64, 96, 128 and 160 bits).
///
/// A number is read as a number, by the schemes written in decimal and as bytes, and in a
/// width hex is written in (16, 24, 32 or 40 digits) as hex too, and as the string of a
/// scheme written in hex (an ObjectId's 24 digits): `gen` writes digits alone whenever no
/// `a` to `f` comes up, as it often does for a Snowflake id whose low bits are zero. It is
/// not tried in base32 or base62, nor 13 digits as a TSID; digits with leading zeros are
/// not a number `gen` writes, and are read every way (`0000000000004121` is hex from `gen
/// range --format hex`, or 4121). Hex digits in a width hex is written in are read only as
/// hex (32 of them are not also a 160-bit id in base32).
fn readings(id: &str) -> Result<Vec<Candidate>, String> {
    let all_digits = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    let widths = widths();
    // The narrowest width whose largest number is at least `id`, when it is written as gen
    // writes numbers.
    let number = all_digits && (id == "0" || !id.starts_with('0'));
    let number_bits = number
        .then(|| {
            widths
                .iter()
                .copied()
                .find(|&bits| render::parse_id(id, Format::Decimal, bits).is_ok())
        })
        .flatten();
    let hex_width = id.bytes().all(|b| b.is_ascii_hexdigit())
        && widths.iter().any(|&bits| id.len() == bits as usize / 4);
    let mut found: Vec<Candidate> = Vec::new();
    for entry in registry::all() {
        let info = entry.info();
        // The codec alone: inspecting builds no generator and opens no store.
        let codec = entry.codec();
        for read_as in Format::ALL {
            let tried = match read_as {
                Format::Canonical => !number || hex_width || info.alphabet == Alphabet::DECIMAL,
                Format::Decimal => number_bits == Some(info.bits),
                Format::Hex => !number || hex_width,
                Format::Base32 | Format::Base62 => !number && !hex_width,
            };
            if !tried {
                continue;
            }
            let Ok((decoded, canonical)) = render::read_id(&*codec, id, read_as, info.bits) else {
                continue;
            };
            // The scheme's own string may be one of the byte forms (a ULID is base32, a
            // KSUID base62, an ObjectId hex, a Snowflake decimal): that reading is listed
            // already.
            if !found
                .iter()
                .any(|c| c.scheme == entry.name() && c.id == canonical)
            {
                found.push(Candidate {
                    scheme: entry.name(),
                    id: canonical,
                    read_as,
                    decoded,
                });
            }
        }
    }
    if found.is_empty() {
        return Err(no_reading(id, all_digits, &widths));
    }
    Ok(found)
}

/// Why nothing reads `id`.
fn no_reading(id: &str, all_digits: bool, widths: &[u32]) -> String {
    let widest_bits = widths.last().copied().unwrap_or(0);
    if id.is_empty() {
        // As `decode` says it: the codecs' own error.
        return format!("cannot tell the scheme of \"\": {}", ParseError::empty());
    }
    if all_digits {
        let why = if id.len() > 1 && id.starts_with('0') {
            // Too long for every decimal scheme's own string, and no byte form has them.
            let decimal = registry::all()
                .filter(|e| e.info().alphabet == Alphabet::DECIMAL)
                .max_by_key(|e| e.info().bits);
            let own = match decimal.map(|e| (e.name(), e.codec().parse_raw(id))) {
                Some((name, Err(e))) => format!(" ({name}, the widest written in decimal: {e})"),
                _ => String::new(),
            };
            format!("no scheme reads it{own}, and an id's bytes in decimal have no leading zeros")
        } else if let Err(e) = render::parse_id(id, Format::Decimal, widest_bits) {
            // A number without leading zeros fails at every width only by its size.
            let widest = registry::all()
                .filter(|e| e.info().bits == widest_bits)
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "no scheme reads it, not even as the bytes of {widest}, the widest id ({widest_bits} bits): {e}"
            )
        } else {
            "no scheme decodes it".to_owned()
        };
        return format!("cannot tell the scheme of {}: {why}", quoted(id));
    }
    // Schemes written alike are named together: the UUID versions share one form.
    let mut shapes: Vec<(Vec<&str>, String)> = Vec::new();
    for e in registry::all().filter(|e| e.info().alphabet != Alphabet::DECIMAL) {
        let info = e.info();
        let shape = format!("{} {}", info.string_len, info.alphabet.name());
        match shapes.iter_mut().find(|(_, s)| *s == shape) {
            Some((names, _)) => names.push(e.name()),
            None => shapes.push((vec![e.name()], shape)),
        }
    }
    let forms: Vec<String> = shapes
        .iter()
        .map(|(names, shape)| {
            // `uuid-v4/v7/v1`: a name after the first loses the family it shares with it.
            let family = names[0].rsplit_once('-').map_or("", |(f, _)| f);
            let rest = names[1..].iter().map(|n| {
                n.strip_prefix(family)
                    .and_then(|n| n.strip_prefix('-'))
                    .unwrap_or(n)
            });
            let names: Vec<&str> = std::iter::once(names[0]).chain(rest).collect();
            format!("{} ({shape})", names.join("/"))
        })
        .collect();
    format!(
        "cannot tell the scheme of {}: expected a number, the string of one of {}, or an id's \
         bytes in hex, base32 or base62 as `idkit gen --format` writes them",
        quoted(id),
        forms.join(", "),
    )
}

/// Every plausible decoding of `id`, most plausible first: timestamps between 2008 and a
/// day from now, nearest to now first, a scheme's own string before the same time read from
/// another scheme's bytes; schemes without time (uuid-v4, auto-increment) last.
///
/// # Errors
///
/// A message saying which forms were expected, when no registered scheme reads `id` in any
/// form (an empty result means it reads, but at no plausible time).
pub fn inspect(id: &str) -> Result<Vec<Candidate>, String> {
    let now = SystemClock.now_ms();
    let mut found = Vec::new();
    for candidate in readings(id)? {
        let rank = match candidate.decoded.timestamp_ms {
            Some(ms) if (EARLIEST_MS..=now + FUTURE_SLACK_MS).contains(&ms) => ms.abs_diff(now),
            Some(_) => continue,
            None => u64::MAX,
        };
        found.push(((rank, candidate.read_as != Format::Canonical), candidate));
    }
    found.sort_by_key(|(rank, _)| *rank);
    Ok(found.into_iter().map(|(_, c)| c).collect())
}
