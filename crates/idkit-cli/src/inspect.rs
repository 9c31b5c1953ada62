//! `idkit inspect`: guess the scheme from the id's shape, keep the decodings whose time is
//! plausible, most plausible first.

use idkit_all::registry::{self, Entry};
use idkit_core::codec::hex;
use idkit_core::{Alphabet, Clock, Decoded, RawId, SystemClock};

use crate::render::quoted;

/// One plausible reading of an id.
pub struct Candidate {
    pub scheme: &'static str,
    pub id: String,
    pub decoded: Decoded,
}

/// Earliest plausible creation time: 2008-01-01, before any of these schemes existed.
const EARLIEST_MS: u64 = 1_199_145_600_000;
/// How far in the future a timestamp may be and still be plausible (clock skew).
const FUTURE_SLACK_MS: u64 = 86_400_000;

/// The registered schemes an id of this shape could belong to, read from each scheme's
/// published facts and codec (so a new scheme in the registry is inspected with no change
/// here): decimal digits try every scheme written in decimal; 16 or 32 hex digits try every
/// scheme of 64 or 128 bits on those bytes; anything else tries the schemes whose codec
/// parses it.
fn shape(id: &str) -> Result<(Vec<&'static Entry>, Option<RawId>), String> {
    let len = id.chars().count();
    let all_digits = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    let all_hex = !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit());
    let schemes = registry::schemes().iter().copied().map(|e| (e, e.info()));
    let (entries, raw): (Vec<&'static Entry>, _) = if all_digits {
        let decimal: Vec<_> = schemes
            .filter(|(_, i)| i.alphabet == Alphabet::DECIMAL)
            .collect();
        let read: Vec<_> = decimal
            .iter()
            .filter(|(e, _)| e.codec().parse_raw(id).is_ok())
            .map(|&(e, _)| e)
            .collect();
        // A number no decimal scheme reads is too long or too large for the widest of them.
        if read.is_empty()
            && let Some((widest, _)) = decimal.iter().max_by_key(|(_, i)| i.bits)
            && let Err(e) = widest.codec().parse_raw(id)
        {
            return Err(format!(
                "cannot tell the scheme of {}: no scheme written in decimal reads it \
                 ({}, the widest: {e})",
                quoted(id),
                widest.name()
            ));
        }
        (read, None)
    } else if all_hex && (len == 16 || len == 32) {
        let mut bytes = vec![0u8; len / 2];
        hex::decode_into(id, &mut bytes).map_err(|e| e.to_string())?;
        let raw = RawId::from_bytes(&bytes).map_err(|e| e.to_string())?;
        let bits = u32::try_from(len * 4).unwrap_or(0);
        let sized = schemes.filter(|(_, i)| i.bits == bits);
        (sized.map(|(e, _)| e).collect(), Some(raw))
    } else {
        let text = schemes
            .filter(|(e, i)| i.alphabet != Alphabet::DECIMAL && e.codec().parse_raw(id).is_ok());
        (text.map(|(e, _)| e).collect(), None)
    };
    if entries.is_empty() {
        let forms: Vec<String> = registry::schemes()
            .iter()
            .map(|e| (e.name(), e.info()))
            .filter(|(_, i)| i.alphabet != Alphabet::DECIMAL)
            .map(|(name, i)| format!("{name} ({} {})", i.string_len, i.alphabet.name()))
            .collect();
        return Err(format!(
            "cannot tell the scheme of {}: expected a decimal integer, 16 or 32 hex \
             digits, or the canonical string of one of {}",
            quoted(id),
            forms.join(", ")
        ));
    }
    Ok((entries, raw))
}

/// Every plausible decoding of `id`, most plausible first: timestamps between 2008 and a
/// day from now, nearest to now first; schemes without time (uuid-v4, auto-increment) last.
pub fn inspect(id: &str) -> Result<Vec<Candidate>, String> {
    let (entries, raw_input) = shape(id)?;
    let now = SystemClock.now_ms();
    let mut found = Vec::new();
    for entry in entries {
        // The codec alone: inspecting builds no generator and opens no store.
        let codec = entry.codec();
        let read = match raw_input {
            Some(raw) => codec
                .decode_raw(&raw)
                .and_then(|d| Ok((d, codec.format_raw(&raw)?))),
            None => codec
                .decode_text(id)
                .and_then(|d| Ok((d, codec.canonical_text(id)?))),
        };
        let Ok((decoded, canonical)) = read else {
            continue;
        };
        let rank = match decoded.timestamp_ms {
            Some(ms) if (EARLIEST_MS..=now + FUTURE_SLACK_MS).contains(&ms) => ms.abs_diff(now),
            Some(_) => continue,
            None => u64::MAX,
        };
        found.push((
            rank,
            Candidate {
                scheme: entry.name(),
                id: canonical,
                decoded,
            },
        ));
    }
    found.sort_by_key(|(rank, _)| *rank);
    Ok(found.into_iter().map(|(_, c)| c).collect())
}
