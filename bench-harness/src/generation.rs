//! Generation speed: ns/id per scheme and concurrency mode on one thread, and aggregate
//! throughput with 1, 2 and 4 threads, one shared generator against one per thread.

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use idkit_all::registry::{Entry, Scheme};
use idkit_core::{GenerateError, IdScheme};
use idkit_snowflake::{Layout, Snowflake};
use serde::Serialize;

use crate::machine::median;
use crate::{Error, Params, Progress};

/// One measured rate (a row of `generation.csv`).
#[derive(Debug, Clone, Serialize)]
pub struct GenRow {
    /// Registry name.
    pub scheme: &'static str,
    /// `single-owner`, `lock-free`, `mutex` (Snowflake layouts, typed generators), `shared`
    /// (the registry's thread-safe generator, through `dyn`, shared by every thread) or
    /// `per-thread` (one registry generator per thread, each with its own identity).
    pub variant: &'static str,
    /// Threads generating at once.
    pub threads: usize,
    /// Wall-clock nanoseconds per id over all threads (1e9 / `ids_per_sec`).
    pub ns_per_id: f64,
    /// Ids per second over all threads (median of the samples).
    pub ids_per_sec: f64,
    /// The layout's ceiling for these generators together, where it has one.
    pub cap_ids_per_sec: Option<u64>,
}

/// Every generation measurement.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Generation {
    /// The rows, scheme by scheme.
    pub rows: Vec<GenRow>,
}

impl Generation {
    /// The row for this scheme, variant and thread count.
    pub fn find(&self, scheme: &str, variant: &str, threads: usize) -> Option<&GenRow> {
        self.rows
            .iter()
            .find(|r| r.scheme == scheme && r.variant == variant && r.threads == threads)
    }
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
) -> Result<Generation, Error> {
    let bar = progress.bar("generation", entries.len());
    let mut out = Generation::default();
    for entry in entries {
        bar.set_message(entry.name());
        let info = entry.info();
        let cap = info.cap_per_sec;
        // A capped generator issues a tick's worth at once, so a sample must span many
        // ticks for its rate to be within 1/ticks of the truth.
        let mut params = params.clone();
        if let (Some(_), Some(tick)) = (cap, info.time_precision_ms) {
            params.sample_ms = params
                .sample_ms
                .max((params.ticks_per_sample * tick).min(params.max_capped_sample_ms));
        }
        let params = &params;
        for (variant, ns) in snowflake_modes(entry.name(), params)?.unwrap_or_default() {
            out.rows.push(row(entry.name(), variant, 1, 1e9 / ns, cap));
        }
        let shared = build(*entry, 0)?;
        for &threads in params.threads {
            let rate = aggregate_rate(entry.name(), &vec![&shared; threads], params)?;
            out.rows
                .push(row(entry.name(), "shared", threads, rate, cap));
        }
        let own: Vec<Scheme> = (0..params.threads.iter().copied().max().unwrap_or(1))
            .map(|n| build(*entry, u64::try_from(n).unwrap_or(u64::MAX)))
            .collect::<Result<_, Error>>()?;
        for &threads in params.threads.iter().filter(|&&t| t > 1) {
            let mine: Vec<&Scheme> = own.iter().take(threads).collect();
            let rate = aggregate_rate(entry.name(), &mine, params)?;
            let caps = cap.map(|c| c * u64::try_from(threads).unwrap_or(u64::MAX));
            out.rows
                .push(row(entry.name(), "per-thread", threads, rate, caps));
        }
        bar.inc(1);
    }
    let fastest = out
        .rows
        .iter()
        .filter(|r| r.threads == 1 && r.variant == "shared")
        .min_by(|a, b| a.ns_per_id.total_cmp(&b.ns_per_id));
    let summary = fastest.map_or_else(String::new, |r| {
        format!(
            ", fastest shared on 1 thread: {} at {:.1} ns/id",
            r.scheme, r.ns_per_id
        )
    });
    progress.done(
        &bar,
        &format!("generation: {} rates measured{summary}", out.rows.len()),
    );
    Ok(out)
}

/// Generator number `n` of `entry`: its own identity (a scheme without identity fields gets
/// default options for every `n`), for `range` the report's own store, [`RANGE_STORE`] in
/// the temporary directory, never the user's default store, and for `auto-increment` the
/// in-process counter of [`idkit_all::baseline::measured`].
///
/// # Errors
///
/// [`BuildError::Config`](idkit_all::registry::BuildError) when `n` does not fit the
/// identity; the scheme's error when it cannot be built (its store cannot be opened).
pub fn build(entry: &Entry, n: u64) -> Result<Scheme, Error> {
    // The baseline, which the registry refuses to make outside a measurement.
    if entry.name() == idkit_all::baseline::INFO.name {
        return Ok(idkit_all::baseline::measured()?);
    }
    let mut options = if entry.identity_fields().is_empty() {
        idkit_all::registry::Options::default()
    } else {
        entry.with_identity(n)?
    };
    if entry.options().iter().any(|o| o.name == "range-store") {
        let store = std::env::temp_dir().join(RANGE_STORE);
        options.set_option("range-store", store.to_string_lossy());
    }
    Ok(entry.build(&options)?)
}

/// A registry scheme with an option set, measured beside the schemes as a row of its own:
/// its label, the scheme, the option and its value.
pub const SUB_MS: (&str, &str, &str, &str) = ("uuid-v7-sub-ms", "uuid-v7", "v7-method", "sub-ms");

/// A generator of [`SUB_MS`]: `uuid-v7` by RFC 9562's method 3.
///
/// # Errors
///
/// The registry's error when `uuid-v7` is not compiled in or refuses the option.
pub fn build_sub_ms() -> Result<Scheme, Error> {
    let (_, scheme, option, value) = SUB_MS;
    let mut options = idkit_all::registry::Options::default();
    options.set_option(option, value);
    Ok(idkit_all::registry::find(scheme)?.build(&options)?)
}

/// The file of the range allocator's store in the report's runs.
pub const RANGE_STORE: &str = "idkit-report-range.sqlite3";

fn row(
    scheme: &'static str,
    variant: &'static str,
    threads: usize,
    ids_per_sec: f64,
    cap: Option<u64>,
) -> GenRow {
    GenRow {
        scheme,
        variant,
        threads,
        ns_per_id: 1e9 / ids_per_sec,
        ids_per_sec,
        cap_ids_per_sec: cap,
    }
}

/// Median aggregate ids/s of `schemes.len()` threads, thread `i` drawing from `schemes[i]`.
fn aggregate_rate(name: &'static str, schemes: &[&Scheme], params: &Params) -> Result<f64, Error> {
    let mut rates = Vec::with_capacity(params.samples);
    for _ in 0..params.samples {
        let start = Barrier::new(schemes.len() + 1);
        let stop = AtomicBool::new(false);
        // Each worker times itself: the span from the first start to the last stop holds
        // every id counted, even if this thread is descheduled while they run.
        let (total, elapsed) = std::thread::scope(|s| {
            let handles: Vec<_> = schemes
                .iter()
                .map(|scheme| {
                    let (start, stop) = (&start, &stop);
                    s.spawn(move || -> Result<(u64, Instant, Instant), GenerateError> {
                        start.wait();
                        let began = Instant::now();
                        let mut count = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            for _ in 0..64 {
                                black_box(scheme.next_raw()?);
                            }
                            count += 64;
                        }
                        Ok((count, began, Instant::now()))
                    })
                })
                .collect();
            start.wait();
            std::thread::sleep(Duration::from_millis(params.sample_ms));
            stop.store(true, Ordering::Relaxed);
            let mut total = 0u64;
            let mut span: Option<(Instant, Instant)> = None;
            for handle in handles {
                match handle.join() {
                    Ok(Ok((n, began, ended))) => {
                        total += n;
                        span = Some(
                            span.map_or((began, ended), |(b, e)| (b.min(began), e.max(ended))),
                        );
                    }
                    Ok(Err(e)) => return Err(Error::generate(name)(e)),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Ok((total, span.map_or(Duration::ZERO, |(b, e)| e - b)))
        })?;
        rates.push(total as f64 / elapsed.as_secs_f64());
    }
    Ok(median(&mut rates))
}

/// Median ns/id of `f` on this thread; the first error stops the measurement.
fn ns_per_id(
    params: &Params,
    name: &'static str,
    mut f: impl FnMut() -> Result<(), GenerateError>,
) -> Result<f64, Error> {
    let mut failure = None;
    let ns = crate::machine::median_ns_per_call(params, 64, &mut || {
        if failure.is_none()
            && let Err(e) = f()
        {
            failure = Some(e);
        }
    });
    match failure {
        Some(e) => Err(Error::generate(name)(e)),
        None => Ok(ns),
    }
}

/// The three typed Snowflake generators of the preset named `name`, or `None` when `name`
/// is not a Snowflake preset.
fn snowflake_modes(
    name: &'static str,
    params: &Params,
) -> Result<Option<Vec<(&'static str, f64)>>, Error> {
    macro_rules! presets {
        ($($layout:ident),*) => {
            $(
                if idkit_snowflake::$layout.spec().name() == name {
                    return modes(idkit_snowflake::$layout, name, params).map(Some);
                }
            )*
        };
    }
    presets!(Twitter, Discord, Instagram, Sonyflake, Mastodon, Boundary);
    Ok(None)
}

fn modes<L>(
    layout: L,
    name: &'static str,
    params: &Params,
) -> Result<Vec<(&'static str, f64)>, Error>
where
    L: Layout + Copy + Send + Sync + 'static,
{
    let config = |e: idkit_snowflake::ConfigError| {
        Error::Build(idkit_all::registry::BuildError::invalid(
            name,
            e.to_string(),
        ))
    };
    let single = Snowflake::builder(layout).build().map_err(config)?;
    let lock_free = Snowflake::builder(layout).build_atomic().map_err(config)?;
    let mutex = Snowflake::builder(layout).build_mutex().map_err(config)?;
    Ok(vec![
        (
            "single-owner",
            ns_per_id(params, name, || {
                single.next_id().map(|id| {
                    black_box(id);
                })
            })?,
        ),
        (
            "lock-free",
            ns_per_id(params, name, || {
                lock_free.next_id().map(|id| {
                    black_box(id);
                })
            })?,
        ),
        (
            "mutex",
            ns_per_id(params, name, || {
                mutex.next_id().map(|id| {
                    black_box(id);
                })
            })?,
        ),
    ])
}
