//! [`MsCounter`]: the millisecond-plus-counter state machine that monotonic ULID, UUIDv7 and
//! TSID share. In a new millisecond the counter starts fresh (a random value); in the same
//! millisecond, or when the clock reads earlier than the last millisecond used, it counts on
//! from the last id, so ids from one generator strictly increase. What happens when the
//! counter would pass its maximum is each scheme's choice ([`MsCounter::step`] says so and
//! leaves it to the caller): ULID fails, UUIDv7 moves to the next millisecond, TSID waits
//! for the clock.

use crate::GenerateError;

/// The last millisecond used and the counter within it.
///
/// # Examples
///
/// ```
/// use idkit_core::monotonic::MsCounter;
/// let mut state = MsCounter::default();
/// let max = 0xff;
/// assert_eq!(state.step(1_000, max, || Ok(0x10)), Ok(Some((1_000, 0x10))));
/// assert_eq!(state.step(1_000, max, || Ok(0x99)), Ok(Some((1_000, 0x11))));
/// // The clock went back: stay on the last millisecond and count on.
/// assert_eq!(state.step(990, max, || Ok(0x99)), Ok(Some((1_000, 0x12))));
/// assert_eq!(state.step(1_001, max, || Ok(0xfe)), Ok(Some((1_001, 0xfe))));
/// assert_eq!(state.step(1_001, max, || Ok(0)), Ok(Some((1_001, 0xff))));
/// // At the maximum: the caller decides.
/// assert_eq!(state.step(1_001, max, || Ok(0)), Ok(None));
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsCounter {
    /// The millisecond of the last id issued (0 before the first).
    pub last_ms: u64,
    /// The counter of the last id issued.
    pub counter: u128,
}

impl MsCounter {
    /// The `(millisecond, counter)` of the next id at clock reading `now`, recorded as the
    /// last one: `fresh()` in a millisecond after the last, the last counter plus one
    /// otherwise. `None`, with nothing recorded, when the counter is already at `max` and
    /// the clock has not passed the last millisecond.
    ///
    /// # Errors
    ///
    /// Whatever `fresh` returns (nothing is recorded then).
    #[inline]
    pub fn step(
        &mut self,
        now: u64,
        max: u128,
        fresh: impl FnOnce() -> Result<u128, GenerateError>,
    ) -> Result<Option<(u64, u128)>, GenerateError> {
        let next = if now > self.last_ms {
            (now, fresh()?)
        } else if self.counter < max {
            (self.last_ms, self.counter + 1)
        } else {
            return Ok(None);
        };
        (self.last_ms, self.counter) = next;
        Ok(Some(next))
    }

    /// Records `(ms, counter)` as the last id, for a scheme that moves on by itself.
    pub fn set(&mut self, ms: u64, counter: u128) {
        (self.last_ms, self.counter) = (ms, counter);
    }
}
