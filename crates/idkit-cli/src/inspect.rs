//! `idkit inspect`: guess the scheme from the id's shape, keep the decodings whose time is
//! plausible, most plausible first.

use idkit::registry::{self, Options};
use idkit_core::codec::hex;
use idkit_core::{Clock, Decoded, RawId, SystemClock};

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

/// The schemes an id of this shape could belong to, in the order to try them.
fn shape(id: &str) -> Result<(Vec<&'static str>, Option<RawId>), String> {
    let len = id.chars().count();
    let all_digits = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    let all_hex = !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit());
    if len == 36 && id.chars().filter(|&c| c == '-').count() == 4 {
        return Ok((vec!["uuid-v7", "uuid-v4"], None));
    }
    if all_digits {
        return Ok((
            vec![
                "snowflake-twitter",
                "snowflake-discord",
                "snowflake-instagram",
                "sonyflake",
                "snowflake-mastodon",
                "flake-boundary",
                "auto-increment",
            ],
            None,
        ));
    }
    if all_hex && (len == 16 || len == 32) {
        let mut bytes = vec![0u8; len / 2];
        hex::decode_into(id, &mut bytes).map_err(|e| e.to_string())?;
        let raw = RawId::from_bytes(&bytes).map_err(|e| e.to_string())?;
        let schemes = if len == 16 {
            vec![
                "snowflake-twitter",
                "snowflake-discord",
                "snowflake-instagram",
                "sonyflake",
                "snowflake-mastodon",
            ]
        } else {
            vec!["uuid-v7", "uuid-v4", "ulid", "flake-boundary"]
        };
        return Ok((schemes, Some(raw)));
    }
    if len == 26 {
        return Ok((vec!["ulid"], None));
    }
    if len == 27 {
        return Ok((vec!["ksuid"], None));
    }
    Err(format!(
        "cannot tell the scheme of {id:?}: expected a 36-character UUID, a 26-character ULID, \
         a 27-character KSUID, a decimal integer, or 16 or 32 hex digits"
    ))
}

/// Every plausible decoding of `id`, most plausible first: timestamps between 2008 and a
/// day from now, nearest to now first; schemes without time (uuid-v4, auto-increment) last.
pub fn inspect(id: &str) -> Result<Vec<Candidate>, String> {
    let (names, raw_input) = shape(id)?;
    let now = SystemClock.now_ms();
    let mut found = Vec::new();
    for name in names {
        let Ok(entry) = registry::find(name) else {
            continue;
        };
        let Ok(scheme) = entry.build(&Options::default()) else {
            continue;
        };
        let raw = match raw_input {
            Some(raw) => raw,
            None => match scheme.parse_raw(id) {
                Ok(raw) => raw,
                Err(_) => continue,
            },
        };
        let Ok(decoded) = scheme.decode_raw(&raw) else {
            continue;
        };
        let canonical = scheme.format_raw(&raw).unwrap_or_else(|_| id.to_owned());
        let rank = match decoded.timestamp_ms {
            Some(ms) if (EARLIEST_MS..=now + FUTURE_SLACK_MS).contains(&ms) => ms.abs_diff(now),
            Some(_) => continue,
            None => u64::MAX,
        };
        found.push((
            rank,
            Candidate {
                scheme: entry.name,
                id: canonical,
                decoded,
            },
        ));
    }
    found.sort_by_key(|(rank, _)| *rank);
    Ok(found.into_iter().map(|(_, c)| c).collect())
}
