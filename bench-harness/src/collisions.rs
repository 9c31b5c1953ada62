//! Collision odds from each scheme's published random bits (no measurement): the ids per
//! tick, and per second, at which independent generators reach a one-in-a-billion chance of
//! any duplicate in a year, by the birthday bound.

use idkit_all::registry::Entry;

/// The probability the table is computed for.
pub const PROBABILITY: f64 = 1e-9;
/// A Julian year, ms.
pub const YEAR_MS: u64 = 31_557_600_000;

/// One scheme's odds.
#[derive(Debug, Clone)]
pub struct CollisionRow {
    /// Stable name.
    pub scheme: &'static str,
    /// Random bits per tick.
    pub random_bits: u32,
    /// Tick length, ms; `None` for a scheme without time (the whole year is one draw).
    pub tick_ms: Option<u64>,
    /// Ids per tick across all generators at [`PROBABILITY`] per year (`None` without a
    /// tick).
    pub ids_per_tick: Option<f64>,
    /// The same rate, ids per second.
    pub ids_per_sec: f64,
}

/// The odds of every registered scheme with random bits, in registry order.
pub fn table(entries: &[&Entry]) -> Vec<CollisionRow> {
    entries
        .iter()
        .filter_map(|e| {
            let info = e.info();
            let n = info.ids_per_tick_at_odds(PROBABILITY, YEAR_MS)?;
            #[allow(clippy::cast_precision_loss)] // tick lengths and a year in ms, far below 2^52
            let (per_tick, per_sec) = match info.time_precision_ms {
                Some(tick) => (Some(n), n * 1000.0 / tick as f64),
                None => (None, n * 1000.0 / YEAR_MS as f64),
            };
            Some(CollisionRow {
                scheme: e.name(),
                random_bits: info.random_bits,
                tick_ms: info.time_precision_ms,
                ids_per_tick: per_tick,
                ids_per_sec: per_sec,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The birthday bound by hand for ULID (79 bits per 1 ms tick: 80, the counter's top
    /// bit clear at each millisecond's start):
    /// n = sqrt(2^80 * 1e-9 / 31,557,600,000) = 195.7 ids per ms.
    #[test]
    fn ulid_by_hand() {
        let rows = table(idkit_all::registry::schemes());
        let ulid = rows.iter().find(|r| r.scheme == "ulid").unwrap();
        let n = ulid.ids_per_tick.unwrap();
        assert!((n - 195.7).abs() < 0.1, "{n}");
        assert!((ulid.ids_per_sec - 195_700.0).abs() < 100.0);
        // uuid-v4 has no tick: the year's ids are one draw of 122 bits.
        let v4 = rows.iter().find(|r| r.scheme == "uuid-v4").unwrap();
        assert!(v4.ids_per_tick.is_none());
        let year_ids = (2f64.powi(123) * 1e-9).sqrt();
        assert!((v4.ids_per_sec - year_ids / 31_557_600.0).abs() / v4.ids_per_sec < 1e-9);
        // Coordinated schemes have no row.
        assert!(
            rows.iter()
                .all(|r| r.scheme != "snowflake-twitter" && r.scheme != "range")
        );
    }
}
