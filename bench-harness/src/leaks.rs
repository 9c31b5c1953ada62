//! What an id gives away to whoever sees it, from each scheme's definition (no
//! measurement): when it was made, which generator made it, the next id of that generator,
//! how many ids were issued, whether it survives JSON as a number, and its length as text.
//!
//! What can be computed is: the next id within a tick is found by making ids and
//! comparing neighbours of one tick, the value at a time from the scheme's own time bounds,
//! the rest from its `SchemeInfo`. Which generator made an id, and what its counter says,
//! are read from each scheme's code (`crates/idkit-*`) and written here per scheme.

use idkit_all::registry::{Entry, Scheme};
use idkit_core::RawId;

use crate::Error;

/// One scheme's row.
#[derive(Debug, Clone)]
pub struct LeakRow {
    /// Stable name.
    pub scheme: &'static str,
    /// Creation time's precision, ms; `None` without a time field.
    pub time_ms: Option<u64>,
    /// What in the id names the generator that made it.
    pub maker: &'static str,
    /// How the next id of the same generator in the same tick follows from this one.
    pub next: Next,
    /// Random bits that tell apart the ids of two generators in one tick (a guess at
    /// another generator's id must hit them all).
    pub random_bits: u32,
    /// What the id says about how many ids were issued.
    pub count: &'static str,
    /// An id of this scheme made at the report's date, for 64-bit schemes: its value.
    pub value_now: Option<u64>,
    /// Size, bits.
    pub bits: u32,
    /// Canonical text: its length.
    pub text_len: u32,
    /// Its alphabet's name.
    pub alphabet: &'static str,
}

/// How the next id of one generator in one tick follows from an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// This id plus a constant (a sequence or counter above fresh bits that stay).
    Plus(u128),
    /// Not from this one: fresh random bits each id.
    Random,
    /// No two ids of one tick were seen.
    Unseen,
}

impl Next {
    /// As the table writes it: `+1`, `+2^50`, `no`.
    pub fn cell(self) -> String {
        match self {
            Self::Plus(1) => "yes: this id + 1".to_owned(),
            Self::Plus(d) if d.is_power_of_two() => {
                format!("yes: this id + 2^{}", d.trailing_zeros())
            }
            Self::Plus(d) => format!("yes: this id + {d}"),
            Self::Random => "no".to_owned(),
            Self::Unseen => "-".to_owned(),
        }
    }
}

/// What the code of each scheme puts in an id about its maker and the count, by name (see
/// the module's docs); the schemes not here say nothing of either.
fn written(scheme: &str) -> (&'static str, &'static str) {
    const TICK: &str = "the ids its generator made before it in its tick (a sequence from 0)";
    const GAP: &str = "between two ids of one millisecond, how many came between (a counter \
                       from a random start)";
    match scheme {
        "snowflake-twitter" => ("datacenter (5 bits) and worker (5 bits)", TICK),
        "snowflake-discord" => ("worker (5 bits) and process (5 bits)", TICK),
        "snowflake-instagram" => ("shard (13 bits)", TICK),
        "sonyflake" => ("machine (16 bits)", TICK),
        "snowflake-mastodon" => ("nothing", TICK),
        "auto-increment" | "range" | "uuid-v4" | "ksuid" | "ulid" | "uuid-v7" | "typeid" => {
            ("nothing", "")
        }
        "flake-boundary" => ("worker (48 bits)", TICK),
        "tsid" => ("node (10 bits)", GAP),
        "objectid" => (
            "40 random bits drawn once per process: its ids are linked",
            "the ids its process made before it in its second, once its counter's start \
             is seen (every second starts from it)",
        ),
        "uuid-v6" => (
            "clock sequence and node (62 bits) drawn once per generator: its ids are linked",
            "the ids its generator made before it in its millisecond (the 100 ns digits \
             count them)",
        ),
        _ => ("nothing", ""),
    }
}

/// What an id of each scheme says about the count, where [`written`] leaves it to the
/// scheme's kind: a time-ordered counter from a random start, a total, or nothing.
fn count_of(scheme: &str, said: &'static str) -> &'static str {
    match scheme {
        "auto-increment" => "the total issued: the id is the count",
        "range" => "about the total leased by every process (blocks of consecutive ids)",
        "ulid" | "uuid-v7" | "typeid" => {
            "between two ids of one millisecond, how many came between (a counter from a \
             random start)"
        }
        _ if said.is_empty() => "nothing",
        _ => said,
    }
}

/// The table, every registered scheme in registry order; `now_ms` is the time whose ids'
/// values are given.
///
/// # Errors
///
/// A scheme that cannot be built, or whose ids cannot be made.
pub fn table(entries: &[&Entry], now_ms: u64) -> Result<Vec<LeakRow>, Error> {
    entries
        .iter()
        .map(|entry| {
            let info = entry.info();
            let scheme = crate::generation::build(*entry, 0)?;
            let (maker, said) = written(entry.name());
            Ok(LeakRow {
                scheme: entry.name(),
                time_ms: info.time_precision_ms,
                maker,
                next: next(entry.name(), &scheme)?,
                random_bits: info.random_bits,
                count: count_of(entry.name(), said),
                value_now: value_at(&scheme, info.bits, now_ms),
                bits: info.bits,
                text_len: info.string_len,
                alphabet: info.alphabet.name(),
            })
        })
        .collect()
}

/// Ids made in a row by one generator: enough for many pairs in one tick at every
/// scheme's rate.
const IDS: usize = 4_096;

/// How the next id of one tick follows from an id: from ids made in a row, each pair in
/// one tick (by the decoded time; every pair for a scheme without one).
fn next(name: &'static str, scheme: &Scheme) -> Result<Next, Error> {
    let mut ids = vec![RawId::default(); IDS];
    scheme.fill_raw(&mut ids).map_err(Error::generate(name))?;
    let time = |id: &RawId| scheme.decode_raw(id).ok().and_then(|d| d.timestamp_ms);
    let mut steps: std::collections::HashMap<u128, usize> = std::collections::HashMap::new();
    let mut pairs = 0;
    for pair in ids.windows(2) {
        if time(&pair[0]) != time(&pair[1]) {
            continue;
        }
        pairs += 1;
        *steps
            .entry(low_bits(&pair[1]).wrapping_sub(low_bits(&pair[0])))
            .or_default() += 1;
    }
    // One step for nearly every pair (a generator may, rarely, take a new millisecond's
    // bits between two ids of one: crates/idkit-core's time_ordered), or none.
    Ok(match steps.into_iter().max_by_key(|&(_, n)| n) {
        None => Next::Unseen,
        Some((step, n)) if n * 10 >= pairs * 9 => Next::Plus(step),
        Some(_) => Next::Random,
    })
}

/// The id's last 16 bytes as a number (a whole id up to 128 bits; a KSUID's random
/// payload).
fn low_bits(id: &RawId) -> u128 {
    let bytes = id.as_bytes();
    let tail = &bytes[bytes.len().saturating_sub(16)..];
    tail.iter().fold(0, |v, &b| (v << 8) | u128::from(b))
}

/// The lowest id of the millisecond `ms`, for a 64-bit scheme with a time field.
fn value_at(scheme: &Scheme, bits: u32, ms: u64) -> Option<u64> {
    if bits > 64 {
        return None;
    }
    scheme.bounds_raw(ms, &[]).ok()?.lowest.to_u64().ok()
}

/// 2^53: the largest integer every JSON reader (JavaScript's `Number`) holds exactly.
pub const JSON_SAFE: u64 = 1 << 53;

/// How many observed ids of a counter from 1 estimate its total within, as a fraction of
/// it (one standard deviation of the unbiased estimate `m + m/k - 1` from the largest `m`
/// of `k` ids: the German tank problem). For `k` = 5, 17%.
pub fn tank_error(k: u32) -> f64 {
    let k = f64::from(k);
    1.0 / (k * (k + 2.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rows: &[LeakRow], name: &str) -> LeakRow {
        rows.iter().find(|r| r.scheme == name).unwrap().clone()
    }

    /// 2026-12-01T00:00:00Z.
    const DATE_MS: u64 = 1_796_083_200_000;

    /// The next id of a tick as each scheme's code makes it (crates/idkit-snowflake's
    /// sequence from 0 at the lowest bits but Sonyflake's, whose machine is below it;
    /// crates/idkit-uuid's v7 counter above 50 bits drawn once a millisecond, ULID's above
    /// 56), and none for random ids.
    #[test]
    fn the_next_id_follows_as_each_scheme_steps() {
        let entries: Vec<&Entry> = idkit_all::registry::schemes().to_vec();
        let rows = table(&entries, DATE_MS).unwrap();
        assert_eq!(row(&rows, "snowflake-twitter").next, Next::Plus(1));
        assert_eq!(row(&rows, "sonyflake").next, Next::Plus(1 << 16));
        assert_eq!(row(&rows, "uuid-v7").next, Next::Plus(1 << 50));
        assert_eq!(row(&rows, "ulid").next, Next::Plus(1 << 56));
        assert_eq!(row(&rows, "auto-increment").next, Next::Plus(1));
        assert_eq!(row(&rows, "uuid-v4").next, Next::Random);
        assert_eq!(row(&rows, "ksuid").next, Next::Random);
    }

    /// Twitter's ids of 2026-12 are about 2^60.9 (41 bits of ms since 2010-11-04 at bit
    /// 22): far above 2^53, as every 64-bit time-ordered scheme here.
    #[test]
    fn a_snowflake_id_of_today_is_past_what_json_numbers_hold() {
        let entries: Vec<&Entry> = idkit_all::registry::schemes().to_vec();
        let rows = table(&entries, DATE_MS).unwrap();
        let twitter = row(&rows, "snowflake-twitter").value_now.unwrap();
        assert_eq!(twitter, (DATE_MS - 1_288_834_974_657) << 22);
        assert!(twitter > JSON_SAFE);
        assert_eq!(row(&rows, "uuid-v4").value_now, None);
    }

    /// The German tank estimate from 5 ids drawn from 1..=N, over many draws: its spread
    /// is what [`tank_error`] says (seeded, so the same every run).
    #[test]
    fn five_ids_of_a_counter_estimate_its_total_within_the_stated_error() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(93);
        let (total, k, draws) = (1_000_000_u64, 5, 20_000);
        let mut squares = 0.0;
        for _ in 0..draws {
            let mut seen = std::collections::BTreeSet::new();
            while seen.len() < k {
                seen.insert(rng.random_range(1..=total));
            }
            let m = *seen.last().unwrap() as f64;
            let estimate = m + m / k as f64 - 1.0;
            squares += ((estimate - total as f64) / total as f64).powi(2);
        }
        let spread = (squares / f64::from(draws)).sqrt();
        let stated = tank_error(5);
        assert!((spread - stated).abs() < 0.01, "{spread} against {stated}");
    }
}
