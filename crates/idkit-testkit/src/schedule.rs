//! The seeded schedules of the hunts for repeated ids (idkit-sqlite's `tests/hunt.rs`,
//! idkit-all's `tests/pg_hunt.rs`): the same seed gives the same schedule of actions.

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a small generator whose whole state is the seed's walk.
#[derive(Debug, Clone)]
pub struct Schedule(u64);

impl Schedule {
    /// The schedule of `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` above 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The number in the environment variable `name`, or `default` when it is not set.
///
/// # Panics
///
/// When it is set to something other than a number: a hunt asked for by hand says so.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        })
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_one_schedule_and_below_stays_below() {
        // SplitMix64's first output for seed 0 (the reference implementation's).
        assert_eq!(Schedule::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let (mut a, mut b) = (Schedule::new(90), Schedule::new(90));
        for _ in 0..100 {
            let n = a.below(7);
            assert!(n < 7);
            assert_eq!(n, b.below(7));
        }
    }
}
