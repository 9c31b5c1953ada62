//! What a generator does when the clock steps back, and where each tick's sequence starts.

/// What a generator does when the clock reads earlier than the last tick it used.
///
/// Whatever the policy, a generator never issues a duplicate or an id smaller than one it
/// issued before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "policy"))]
pub enum RollbackPolicy {
    /// Fail at once with [`GenerateErrorKind::ClockMovedBackwards`](idkit_core::GenerateErrorKind::ClockMovedBackwards) saying how far back the clock
    /// went (Twitter's original behaviour).
    FailFast,
    /// Wait for the clock to catch up when it is at most `max_ms` behind; fail when it is
    /// further behind, or still behind after waiting `max_ms` in all (Meituan Leaf waits up
    /// to 5 ms).
    Wait {
        /// Longest total wait, in milliseconds.
        max_ms: u64,
    },
    /// Keep issuing from the last tick used; when its sequence runs out, borrow the next
    /// tick even though the clock has not reached it, as long as the generator stays at most
    /// `max_ahead_ms` ahead of the clock. Past that, wait for the clock if one tick of
    /// waiting is enough, else fail with [`GenerateErrorKind::AheadLimit`](idkit_core::GenerateErrorKind::AheadLimit). The same borrowing
    /// replaces waiting when the sequence runs out on a healthy clock.
    Logical {
        /// How far ahead of the clock ids may run, in milliseconds.
        max_ahead_ms: u64,
    },
}

impl Default for RollbackPolicy {
    /// `Wait { max_ms: 5 }`: absorbs the small steps NTP makes without failing, and fails
    /// fast on a large step instead of blocking.
    fn default() -> Self {
        Self::Wait { max_ms: 5 }
    }
}

/// Where the sequence starts in each new tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SequenceStart {
    /// At 0: at low traffic, most ids end in sequence 0 (even, for layouts whose sequence
    /// is at the bottom), which skews `id % n` sharding.
    #[default]
    Zero,
    /// At a pseudo-random value in `0..below`, derived from the tick and a per-generator
    /// seed (Leaf's fix for all-even ids). Cost: one hash per new tick (a few ns), and a
    /// tick then holds `below / 2` fewer ids on average, lowering the cap by that much.
    Random {
        /// Exclusive upper bound of the start value.
        below: u64,
    },
}
