//! Properties measured on generated ids: size, time order across concurrent generators,
//! and uniqueness, including two generators wrongly given the same identity.

use std::collections::HashSet;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use idkit_all::registry::{Entry, Scheme};
use idkit_core::{Coordination, GenerateError, RawId, SchemeInfo};
use serde::Serialize;

use crate::{Error, Params, Progress};

/// The measured properties of one scheme (a row of `properties.csv`).
#[derive(Debug, Clone, Serialize)]
pub struct PropRow {
    /// Registry name.
    pub scheme: &'static str,
    /// Bytes of the binary form of a generated id.
    pub bytes: usize,
    /// Shortest canonical string seen.
    pub string_len_min: usize,
    /// Longest canonical string seen.
    pub string_len_max: usize,
    /// Generators running at once in the time-order measurement.
    pub order_generators: usize,
    /// Ids from all of them together.
    pub order_ids: usize,
    /// Fraction of id pairs whose id order contradicts their creation order.
    pub inverted_pair_fraction: f64,
    /// The most an id sorts after one created later, ms.
    pub max_displacement_ms: f64,
    /// Generators with distinct identities in the uniqueness run.
    pub unique_generators: usize,
    /// Ids from all of them together.
    pub unique_ids: usize,
    /// Duplicates among those ids (0 expected).
    pub unique_duplicates: usize,
    /// What the collision run did: `same identity` (two generators with identity 0),
    /// `two instances` (a store-coordinated scheme built twice: whether they share a store
    /// is the scheme's default) or `independent` (the scheme has no identity).
    pub collision_setup: &'static str,
    /// Ids from the two generators together.
    pub collision_ids: usize,
    /// Duplicates among those.
    pub collision_duplicates: usize,
}

/// Measures every entry.
///
/// # Errors
///
/// [`Error::Build`] or [`Error::Generate`] from a scheme.
pub fn measure(
    entries: &[&Entry],
    params: &Params,
    progress: &Progress,
) -> Result<Vec<PropRow>, Error> {
    let sub_ms = entries
        .iter()
        .find(|e| e.name() == crate::generation::SUB_MS.1);
    let bar = progress.bar("properties", entries.len() + usize::from(sub_ms.is_some()));
    let mut rows = Vec::new();
    for entry in entries {
        bar.set_message(entry.name());
        let build = |n| crate::generation::build(*entry, n);
        rows.push(measure_one(entry.name(), entry.info(), &build, params)?);
        bar.inc(1);
    }
    // UUIDv7 by RFC 9562's method 3, beside the counter's `uuid-v7`, when that is measured.
    if let Some(v7) = sub_ms {
        let label = crate::generation::SUB_MS.0;
        bar.set_message(label);
        let build = |_| crate::generation::build_sub_ms();
        rows.push(measure_one(label, v7.info(), &build, params)?);
        bar.inc(1);
    }
    // Duplicates among generators of distinct identities: expected only of a scheme with no
    // identity bits to tell its generators apart (Mastodon's layout), which the report
    // explains; any other is a fault, and said to be one.
    let (expected, faults): (Vec<&PropRow>, Vec<&PropRow>) = rows
        .iter()
        .filter(|r| r.unique_duplicates > 0)
        .partition(|r| {
            idkit_all::registry::find(r.scheme).is_ok_and(|e| e.identity_fields().is_empty())
        });
    let list = |rows: &[&PropRow]| {
        (rows.iter())
            .map(|r| format!("{} ({})", r.scheme, r.unique_duplicates))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let colliding: Vec<&str> = rows
        .iter()
        .filter(|r| r.collision_duplicates > 0)
        .map(|r| r.scheme)
        .collect();
    progress.done(
        &bar,
        &format!(
            "properties: generators of distinct identities repeated {}{}; duplicates with a \
             shared identity: {}",
            if faults.is_empty() {
                "nothing".to_owned()
            } else {
                format!("ids (a fault): {}", list(&faults))
            },
            if expected.is_empty() {
                String::new()
            } else {
                format!(
                    " but in schemes without identity bits, as expected: {}",
                    list(&expected)
                )
            },
            if colliding.is_empty() {
                "none".to_owned()
            } else {
                colliding.join(", ")
            }
        ),
    );
    Ok(rows)
}

/// One row: `build(n)` makes a generator with identity `n` (the same one for a scheme
/// without identities).
fn measure_one(
    name: &'static str,
    info: SchemeInfo,
    build: &dyn Fn(u64) -> Result<Scheme, Error>,
    params: &Params,
) -> Result<PropRow, Error> {
    // Size: from generated ids, not from the scheme's own facts.
    let probe = build(0)?;
    let (mut len_min, mut len_max, mut bytes) = (usize::MAX, 0, 0);
    for _ in 0..1_000 {
        let id = probe.next_raw().map_err(Error::generate(name))?;
        let text = probe.format_raw(&id).map_err(Error::format(name))?;
        len_min = len_min.min(text.len());
        len_max = len_max.max(text.len());
        bytes = bytes.max(id.as_bytes().len());
    }

    let store = info.coordination == Coordination::Store;
    let generators = |count: usize| -> Result<Vec<Scheme>, Error> {
        if store {
            // Generators of a store-coordinated scheme draw from one store.
            return Ok(vec![build(0)?]);
        }
        (0..u64::try_from(count).unwrap_or(u64::MAX))
            .map(build)
            .collect()
    };

    // Time order.
    let order_set = generators(params.order_generators)?;
    let tagged = run_tagged(
        name,
        &pick(&order_set, params.order_generators),
        params.order_ids,
        Some(params.order_burst),
    )?;
    let (inverted, displacement_ns) = order_departure(tagged.clone());

    // Uniqueness with distinct identities.
    let unique_set = generators(params.unique_generators)?;
    let ids = run_tagged(
        name,
        &pick(&unique_set, params.unique_generators),
        params.unique_ids,
        None,
    )?;
    let unique_duplicates = duplicates(&ids);

    // The silent failure: two generators with the same identity, or a store-coordinated
    // scheme built twice.
    // Both are built separately with identity 0.
    let setup = match info.coordination {
        Coordination::WorkerId { .. } => "same identity",
        Coordination::Store => "two instances",
        _ => "independent",
    };
    let pair = [build(0)?, build(0)?];
    let pair_ids = run_tagged(name, &pick(&pair, 2), params.collision_ids, None)?;

    Ok(PropRow {
        scheme: name,
        bytes,
        string_len_min: len_min,
        string_len_max: len_max,
        order_generators: params.order_generators,
        order_ids: tagged.len(),
        inverted_pair_fraction: inverted,
        max_displacement_ms: displacement_ns as f64 / 1e6,
        unique_generators: params.unique_generators,
        unique_ids: ids.len(),
        unique_duplicates,
        collision_setup: setup,
        collision_ids: pair_ids.len(),
        collision_duplicates: duplicates(&pair_ids),
    })
}

/// `count` generators from `set`, reusing its one member for a shared store.
fn pick(set: &[Scheme], count: usize) -> Vec<&Scheme> {
    (0..count).map(|i| &set[i % set.len()]).collect()
}

/// Runs one thread per generator, all released at once; each makes `per` ids and tags
/// each with its creation time (ns since the common start). With `burst`, each generator
/// makes that many ids at the start of every millisecond, as a service under steady load
/// would; without, as fast as it can.
fn run_tagged(
    name: &'static str,
    generators: &[&Scheme],
    per: usize,
    burst: Option<usize>,
) -> Result<Vec<(RawId, u64)>, Error> {
    let barrier = Barrier::new(generators.len());
    let start = Instant::now();
    let parts = std::thread::scope(|s| {
        let handles: Vec<_> = generators
            .iter()
            .map(|g| {
                let barrier = &barrier;
                s.spawn(move || -> Result<Vec<(RawId, u64)>, GenerateError> {
                    let mut out = Vec::with_capacity(per);
                    barrier.wait();
                    for i in 0..per {
                        if let Some(burst) = burst.filter(|&b| b > 0 && i > 0 && i % b == 0) {
                            let due =
                                Duration::from_millis(u64::try_from(i / burst).unwrap_or(u64::MAX));
                            if let Some(wait) = due.checked_sub(start.elapsed()) {
                                std::thread::sleep(wait);
                            }
                        }
                        let id = g.next_raw()?;
                        let t = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                        out.push((id, t));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(Error::generate(name))?;
    Ok(parts.into_iter().flatten().collect())
}

/// Sorts by id and measures how far creation times are from sorted: the fraction of
/// inverted pairs, and the largest amount (ns) by which an id sorts after one created later.
pub fn order_departure(mut ids: Vec<(RawId, u64)>) -> (f64, u64) {
    ids.sort_unstable_by_key(|&(id, _)| id);
    let mut times: Vec<u64> = ids.iter().map(|&(_, t)| t).collect();
    let mut latest = 0u64;
    let mut displacement = 0u64;
    for &t in &times {
        displacement = displacement.max(latest.saturating_sub(t));
        latest = latest.max(t);
    }
    let n = times.len() as f64;
    let pairs = n * (n - 1.0) / 2.0;
    let inversions = count_inversions(&mut times);
    let fraction = if pairs > 0.0 {
        inversions as f64 / pairs
    } else {
        0.0
    };
    (fraction, displacement)
}

/// Pairs `i < j` with `v[i] > v[j]` (merge sort; sorts `v`).
pub fn count_inversions(v: &mut [u64]) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mut buf = v.to_vec();
    let mut inversions = 0u64;
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if v[i] <= v[j] {
                    buf[k] = v[i];
                    i += 1;
                } else {
                    buf[k] = v[j];
                    j += 1;
                    inversions += (mid - i) as u64;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&v[i..mid]);
            k += mid - i;
            buf[k..k + (hi - j)].copy_from_slice(&v[j..hi]);
            lo = hi;
        }
        v.copy_from_slice(&buf);
        width *= 2;
    }
    inversions
}

/// How many ids repeat an earlier one.
pub fn duplicates(ids: &[(RawId, u64)]) -> usize {
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().filter(|(id, _)| !seen.insert(*id)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inversions_match_a_brute_force_count() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 2, 3, 7, 64, 257] {
            let v: Vec<u64> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % 50
                })
                .collect();
            let brute = (0..len)
                .flat_map(|i| (i + 1..len).map(move |j| (i, j)))
                .filter(|&(i, j)| v[i] > v[j])
                .count() as u64;
            let mut sorted = v.clone();
            assert_eq!(count_inversions(&mut sorted), brute, "{v:?}");
            assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn departure_is_zero_in_order_and_total_when_reversed() {
        let ids = |order: &[u64]| -> Vec<(RawId, u64)> {
            order
                .iter()
                .enumerate()
                .map(|(i, &t)| (RawId::from_u64(i as u64), t))
                .collect()
        };
        assert_eq!(order_departure(ids(&[1, 2, 3, 4])), (0.0, 0));
        assert_eq!(order_departure(ids(&[4, 3, 2, 1])), (1.0, 3));
        // One pair of six is inverted; the id created at 5 sorts before the one at 2.
        let (fraction, displacement) = order_departure(ids(&[1, 5, 2, 6]));
        assert!((fraction - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(displacement, 3);
        assert_eq!(duplicates(&ids(&[1, 1, 1])), 0);
        let same = vec![(RawId::from_u64(7), 1), (RawId::from_u64(7), 2)];
        assert_eq!(duplicates(&same), 1);
    }
}
