//! Ids in async code without blocking the thread.
//!
//! A generator blocks in two places: a layout with a cap whose sequence is spent waits for
//! its next tick (a Snowflake layout, TSID, ObjectId), and a range allocator whose block is
//! spent waits for the store. In a tokio application that wait would hold an executor
//! thread. The functions of this module (feature `tokio`) run the generator with its waits
//! *deferred*: where it would wait it returns at once, saying for how long, and the
//! function awaits that time on tokio's timer, then asks again. Ids come out the same as
//! from the blocking calls, in the same order, with nothing lost or repeated: a deferred
//! call issues no id.
//!
//! ```
//! # #[cfg(feature = "tokio")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idkit_core::{IdScheme, ManualClock, nonblocking};
//! # use idkit_core::{GenerateError, SchemeInfo};
//! # #[derive(Debug, Default)]
//! # struct Counter(std::sync::atomic::AtomicU64);
//! # impl IdScheme for Counter {
//! #     type Id = u64;
//! #     fn next_id(&self) -> Result<u64, GenerateError> {
//! #         Ok(self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
//! #     }
//! #     fn info(&self) -> SchemeInfo { SchemeInfo::new("counter", 64) }
//! # }
//! let generator = Counter::default(); // any IdScheme: a Snowflake, a TSID, a range...
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
//! runtime.block_on(async {
//!     let one = nonblocking::next_id(&generator).await?;
//!     let mut batch = [0u64; 100];
//!     nonblocking::fill(&generator, &mut batch).await?;
//!     assert!(batch.iter().all(|id| *id > one));
//!     Ok::<_, GenerateError>(())
//! })?;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "tokio"))]
//! # fn main() {}
//! ```
//!
//! A deferred wait of up to 2 ms on a clock that knows when it ends (every clock of
//! [`clock`](crate::clock) but the manual one) is slept on tokio's blocking pool to the
//! instant, as a blocking call sleeps (to within 100 µs), so a capped layout keeps its cap;
//! a longer one, or a range store's, is awaited on tokio's timer (whole milliseconds).
//! Either way no executor thread waits.
//!
//! For generator authors: [`wait_for`] is where a generator waits on its clock;
//! [`deferring`] tells a generator that waits on anything else to return
//! [`GenerateError::would_wait`] instead.

#[cfg(feature = "std")]
use std::cell::Cell;

use crate::{Clock, GenerateError};

#[cfg(feature = "std")]
std::thread_local! {
    static DEFERRING: Cell<bool> = const { Cell::new(false) };
}

/// True while the calling thread runs a generator for this module's async functions: a
/// generator about to block (on anything but a clock, which [`wait_for`] handles) returns
/// [`GenerateError::would_wait`] instead, before it changes any state. Always false without
/// `std`.
#[inline]
pub fn deferring() -> bool {
    #[cfg(feature = "std")]
    return DEFERRING.with(Cell::get);
    #[cfg(not(feature = "std"))]
    false
}

/// Runs `f` with waits deferred on this thread (restored after, also on a panic).
#[cfg(feature = "std")]
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
fn with_waits_deferred<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEFERRING.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEFERRING.with(|d| d.replace(true)));
    f()
}

/// Where a generator waits for `clock` to read `target_ms`: waits
/// ([`Clock::wait_until_ms`]) and returns the last reading, or, while waits are
/// [deferred](deferring), returns at once (unless the clock's wait takes no real time:
/// [`Clock::wait_blocks`]).
///
/// # Errors
///
/// While waits are deferred, a [`GenerateError::would_wait`] for the time left (the async
/// caller awaits it and asks again); never otherwise.
#[inline]
pub fn wait_for<C: Clock + ?Sized>(clock: &C, target_ms: u64) -> Result<u64, GenerateError> {
    #[cfg(feature = "std")]
    if deferring() && clock.wait_blocks() {
        let left = target_ms.saturating_sub(clock.now_ms());
        return Err(GenerateError::would_wait_until(
            core::time::Duration::from_millis(left.max(1)),
            clock.instant_at_ms(target_ms),
        ));
    }
    Ok(clock.wait_until_ms(target_ms))
}

#[cfg(feature = "tokio")]
mod awaiting {
    use tokio::time::Instant;

    use super::with_waits_deferred;
    use crate::{DynScheme, GenerateError, IdScheme, RawId};

    /// Waits on a clock at most this long are slept on a blocking-pool thread, to the
    /// instant; longer ones on tokio's timer.
    const PRECISE_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

    /// Ids issued between two awaits at most, so that a large batch from a scheme that
    /// never waits still lets other tasks run.
    const BETWEEN_YIELDS: usize = 1 << 16;

    /// Runs `attempt` with waits deferred until it stops asking to wait; awaits each wait.
    /// `attempt` returns how many ids it issued before it stopped (they are kept).
    async fn drive(
        total: usize,
        mut attempt: impl FnMut(usize) -> (usize, Result<(), GenerateError>),
    ) -> Result<(), GenerateError> {
        let mut done = 0;
        let mut started_waiting: Option<Instant> = None;
        while done < total {
            let (issued, result) = with_waits_deferred(|| attempt(done));
            done += issued;
            if issued > 0 {
                started_waiting = None;
            }
            match result {
                Ok(()) => {
                    if done < total {
                        tokio::task::yield_now().await;
                    }
                }
                Err(e) => {
                    let Some((left, at, give_up)) = e.deferred() else {
                        return Err(e);
                    };
                    let since = *started_waiting.get_or_insert_with(Instant::now);
                    if let Some((patience, reason)) = give_up
                        && since.elapsed() >= *patience
                    {
                        return Err(GenerateError::unavailable(reason.clone()));
                    }
                    match at {
                        // A clock's next tick, soon: tokio's timer would end the wait on its
                        // own next millisecond, up to 2 ms late, which halves a capped
                        // layout's ids; a blocking-pool thread sleeps to it as a blocking
                        // call does (to within 100 µs), and no executor thread waits.
                        Some(at)
                            if at.saturating_duration_since(std::time::Instant::now())
                                <= PRECISE_WAIT =>
                        {
                            let waited =
                                tokio::task::spawn_blocking(move || crate::clock::sleep_until(at))
                                    .await;
                            if waited.is_err() {
                                tokio::time::sleep(left).await;
                            }
                        }
                        _ => tokio::time::sleep(left).await,
                    }
                }
            }
        }
        Ok(())
    }

    /// True for a scheme whose generator never waits: no cap (its sequence never runs
    /// out within a tick) and no store. Such a scheme is filled a run at a time by its own
    /// `fill`, which is cheaper than an id at a time (one clock read per run for UUIDv7).
    fn never_waits(info: &crate::SchemeInfo) -> bool {
        info.cap_per_sec.is_none() && info.coordination != crate::Coordination::Store
    }

    /// Fills `out` from `from` with `fill` while `fast` holds (a run of at most
    /// [`BETWEEN_YIELDS`]), else one id at a time with `next` (a failed `next_id` issues
    /// nothing, so a deferred wait loses no id). A fast run that meets a wait after all
    /// issued part of its ids: they are dropped (a gap, never a duplicate) and the rest goes
    /// one at a time.
    fn attempt<T>(
        out: &mut [T],
        from: usize,
        fast: &mut bool,
        fill: impl FnOnce(&mut [T]) -> Result<(), GenerateError>,
        next: impl FnMut() -> Result<T, GenerateError>,
    ) -> (usize, Result<(), GenerateError>) {
        if !*fast {
            return one_by_one(out, from, next);
        }
        let end = out.len().min(from + BETWEEN_YIELDS);
        match fill(&mut out[from..end]) {
            Ok(()) => (end - from, Ok(())),
            Err(e) => {
                if e.deferred().is_some() {
                    *fast = false;
                }
                (0, Err(e))
            }
        }
    }

    /// Fills `out` with the ids of a scheme with facts `info`: a run at a time with `fill`
    /// if it never waits, else one at a time with `next` (see [`attempt`]).
    async fn fill_by<T>(
        info: &crate::SchemeInfo,
        out: &mut [T],
        mut fill: impl FnMut(&mut [T]) -> Result<(), GenerateError>,
        mut next: impl FnMut() -> Result<T, GenerateError>,
    ) -> Result<(), GenerateError> {
        let total = out.len();
        let mut fast = never_waits(info);
        drive(total, |from| {
            attempt(out, from, &mut fast, &mut fill, &mut next)
        })
        .await
    }

    /// Fills `out` one id at a time, at most [`BETWEEN_YIELDS`] per attempt.
    fn one_by_one<T>(
        out: &mut [T],
        from: usize,
        mut next: impl FnMut() -> Result<T, GenerateError>,
    ) -> (usize, Result<(), GenerateError>) {
        let end = out.len().min(from + BETWEEN_YIELDS);
        for (i, slot) in out[from..end].iter_mut().enumerate() {
            match next() {
                Ok(id) => *slot = id,
                Err(e) => return (i, Err(e)),
            }
        }
        (end - from, Ok(()))
    }

    /// The next id of `scheme`, awaiting (not blocking on) a spent sequence's next tick or
    /// a range store's next block.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::next_id`]. A range allocator that gets no block within its `wait`
    /// fails with [`Unavailable`](crate::GenerateErrorKind::Unavailable), as the blocking call does.
    pub async fn next_id<S: IdScheme + ?Sized>(scheme: &S) -> Result<S::Id, GenerateError> {
        let mut id = None;
        drive(1, |_| match scheme.next_id() {
            Ok(got) => {
                id = Some(got);
                (1, Ok(()))
            }
            Err(e) => (0, Err(e)),
        })
        .await?;
        id.ok_or_else(|| GenerateError::unavailable("no id issued"))
    }

    /// Fills `out` with consecutive ids of `scheme`, awaiting instead of blocking where the
    /// generator would wait. Yields to other tasks every 65,536 ids.
    ///
    /// # Errors
    ///
    /// As [`IdScheme::fill`]: the slots before the failing one hold issued ids.
    pub async fn fill<S: IdScheme + ?Sized>(
        scheme: &S,
        out: &mut [S::Id],
    ) -> Result<(), GenerateError>
    where
        S::Id: Copy,
    {
        fill_by(
            &scheme.info(),
            out,
            |run| scheme.fill(run),
            || scheme.next_id(),
        )
        .await
    }

    /// `n` ids of `scheme` in a new vector; see [`fill`].
    ///
    /// # Errors
    ///
    /// As [`fill`].
    pub async fn take<S: IdScheme + ?Sized>(
        scheme: &S,
        n: usize,
    ) -> Result<Vec<S::Id>, GenerateError>
    where
        S::Id: Copy + Default,
    {
        let mut out = vec![S::Id::default(); n];
        fill(scheme, &mut out).await?;
        Ok(out)
    }

    /// [`fill`] for a scheme behind `dyn` (the registry's, a service's).
    ///
    /// # Errors
    ///
    /// As [`fill`].
    pub async fn fill_raw(
        scheme: &(dyn DynScheme + Send + Sync),
        out: &mut [RawId],
    ) -> Result<(), GenerateError> {
        fill_by(
            &scheme.info(),
            out,
            |run| scheme.fill_raw(run),
            || scheme.next_raw(),
        )
        .await
    }
}

#[cfg(feature = "tokio")]
pub use awaiting::{fill, fill_raw, next_id, take};
