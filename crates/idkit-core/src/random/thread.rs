//! The per-thread ChaCha8 generator and the seeded one (feature `rand`, with `std`).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::Mutex;

use rand::rngs::{ChaCha8Rng, SysRng};
use rand::{Rng, RngExt, SeedableRng};

use super::RandomSource;
use crate::GenerateError;

/// This thread's ChaCha8 generator, seeded from the operating system once per thread: the
/// default source of every random scheme.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    #[inline]
    fn u128(&self) -> Result<u128, GenerateError> {
        u128()
    }
    #[inline]
    fn u64(&self) -> Result<u64, GenerateError> {
        u64()
    }
    #[inline]
    fn rare_u128(&self) -> Result<u128, GenerateError> {
        rare_u128()
    }
    #[inline]
    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
        fill(dest)
    }
    #[inline]
    fn fill_with_u128<T>(
        &self,
        out: &mut [T],
        make: impl FnMut(u128) -> T,
    ) -> Result<(), GenerateError> {
        fill_with_u128(out, make)
    }
}

/// A ChaCha8 generator from a fixed seed: the same bits every run, for tests and vectors.
/// Not for ids in production (anyone who knows the seed can predict them).
///
/// # Examples
///
/// ```
/// use idkit_core::random::{RandomSource, SeededRandom};
/// let (a, b) = (SeededRandom::new(7), SeededRandom::new(7));
/// assert_eq!(a.u128()?, b.u128()?);
/// assert_ne!(a.u128()?, SeededRandom::new(8).u128()?);
/// # Ok::<(), idkit_core::GenerateError>(())
/// ```
pub struct SeededRandom(Mutex<ChaCha8Rng>);

impl SeededRandom {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(ChaCha8Rng::seed_from_u64(seed)))
    }

    fn with<T>(&self, f: impl FnOnce(&mut ChaCha8Rng) -> T) -> T {
        f(&mut self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl fmt::Debug for SeededRandom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SeededRandom")
    }
}

impl RandomSource for SeededRandom {
    fn u128(&self) -> Result<u128, GenerateError> {
        Ok(self.with(|rng| rng.random::<u128>()))
    }
    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
        self.with(|rng| rng.fill_bytes(dest));
        Ok(())
    }
}

thread_local! {
    static RNG: RefCell<Option<ChaCha8Rng>> = const { RefCell::new(None) };
    static POOL: Pool = const {
        Pool {
            next: Cell::new(POOL_WORDS),
            words: [const { Cell::new(0) }; POOL_WORDS],
        }
    };
}

/// Words in [`Pool`]: 256 bytes, as many as the generator itself keeps ready.
const POOL_WORDS: usize = 32;

/// This thread's generator's next words, drawn 32 at a time and handed out in order: a draw
/// is an index, its loads and a store. Cells only, so that the thread-local needs no
/// destructor, and reaching it no check that one was registered; the generator's own
/// thread-local (a borrow, and whether it was seeded) is asked once in 16 ids.
struct Pool {
    /// The next word to hand out; [`POOL_WORDS`] when they are spent.
    next: Cell<usize>,
    words: [Cell<u64>; POOL_WORDS],
}

impl Pool {
    /// The next `N` words, drawing the pool anew when fewer are left.
    #[inline(always)]
    fn take<const N: usize>(&self) -> Result<[u64; N], GenerateError> {
        let at = self.next.get();
        if let Some(words) = self.words.get(at..at + N) {
            self.next.set(at + N);
            return Ok(core::array::from_fn(|i| words[i].get()));
        }
        self.refill()?;
        self.next.set(N);
        Ok(core::array::from_fn(|i| self.words[i].get()))
    }

    /// Fills the pool from the thread's generator (seeding it on first use).
    #[cold]
    #[inline(never)]
    fn refill(&self) -> Result<(), GenerateError> {
        with_rng(|rng| {
            for word in &self.words {
                word.set(rng.next_u64());
            }
        })
    }
}

/// Runs `f` with this thread's generator, seeding it on first use.
///
/// # Errors
///
/// [`GenerateErrorKind::Unavailable`](crate::GenerateErrorKind::Unavailable) when the operating system's random source cannot seed
/// the generator (nothing is issued; a later call tries again).
#[inline(always)]
fn with_rng<T>(f: impl FnOnce(&mut ChaCha8Rng) -> T) -> Result<T, GenerateError> {
    RNG.with(|cell| {
        let mut slot = cell.borrow_mut();
        match slot.as_mut() {
            Some(rng) => Ok(f(rng)),
            None => {
                let rng = slot.insert(seed()?);
                Ok(f(rng))
            }
        }
    })
}

/// Drops this thread's generator, so that its next draw seeds a new one from the operating
/// system: in a child process made by `fork`, whose copy of the parent's generator would
/// draw the parent's next bits. See [`crate::after_fork`].
///
/// It only clears this thread's own cells (no lock, no allocation, no system call), so a
/// fork handler may call it in the child (`pthread_atfork`'s third handler, which runs on
/// the thread that called `fork`, the one thread whose generator the child has), where
/// [`crate::after_fork`] (which may start a thread) must not run.
pub fn forget_this_thread() {
    RNG.with(|cell| cell.borrow_mut().take());
    // The words drawn ahead are the parent's too.
    POOL.with(|pool| pool.next.set(POOL_WORDS));
}

/// Seeds a generator from the operating system: once per thread, off the hot path.
#[cold]
#[inline(never)]
fn seed() -> Result<ChaCha8Rng, GenerateError> {
    ChaCha8Rng::try_from_rng(&mut SysRng).map_err(|e| {
        GenerateError::unavailable(format!("the operating system's random source failed: {e}"))
    })
}

/// 128 random bits from this thread's generator.
///
/// # Errors
///
/// [`GenerateErrorKind::Unavailable`](crate::GenerateErrorKind::Unavailable) when the operating system's random source cannot seed
/// this thread's generator.
#[inline]
pub fn u128() -> Result<u128, GenerateError> {
    let [high, low] = POOL.with(Pool::take::<2>)?;
    Ok((u128::from(high) << 64) | u128::from(low))
}

/// [`u128()`] as a call: see [`RandomSource::rare_u128`]. It takes no argument, so that the
/// caller's state does not escape into it.
#[inline(never)]
fn rare_u128() -> Result<u128, GenerateError> {
    u128()
}

/// 64 random bits from this thread's generator.
///
/// # Errors
///
/// As [`u128()`].
#[inline]
pub fn u64() -> Result<u64, GenerateError> {
    let [word] = POOL.with(Pool::take::<1>)?;
    Ok(word)
}

/// Sets every slot of `out` to `make(128 random bits)`, looking the thread's generator up
/// once for the whole slice: for batches.
///
/// # Errors
///
/// As [`u128()`] (`out` is unchanged then).
#[inline]
pub fn fill_with_u128<T>(
    out: &mut [T],
    mut make: impl FnMut(u128) -> T,
) -> Result<(), GenerateError> {
    with_rng(|rng| {
        for slot in out {
            *slot = make(rng.random::<u128>());
        }
    })
}

/// Fills `dest` from this thread's generator.
///
/// # Errors
///
/// [`GenerateErrorKind::Unavailable`](crate::GenerateErrorKind::Unavailable) when the operating system's random source cannot seed
/// this thread's generator.
#[inline]
pub fn fill(dest: &mut [u8]) -> Result<(), GenerateError> {
    with_rng(|rng| rng.fill_bytes(dest))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashSet;

    /// Draws past several refills of the pool, in 64 and 128 bits: no word comes twice. A
    /// forked child's `after_fork` drops the words drawn ahead: its next draw is a new
    /// generator's, not the word the parent draws next.
    #[test]
    fn the_pool_hands_out_each_word_once_and_forgets_the_rest_after_a_fork() {
        let mut seen = HashSet::new();
        for _ in 0..100 {
            let v = super::u128().unwrap();
            assert!(seen.insert(u64::try_from(v >> 64).unwrap()));
            assert!(seen.insert(u64::try_from(v & u128::from(u64::MAX)).unwrap()));
            assert!(seen.insert(super::u64().unwrap()));
        }
        super::forget_this_thread();
        super::u64().unwrap();
        let ahead = super::POOL.with(|p| p.words.get(p.next.get()).map(Cell::get));
        let ahead = ahead.expect("one word of a full pool taken");
        super::forget_this_thread();
        assert_ne!(super::u64().unwrap(), ahead);
    }

    #[test]
    fn draws_differ_and_fill_covers_the_buffer() {
        let a = super::u128().unwrap();
        let b = super::u128().unwrap();
        assert_ne!(a, b);
        let mut buf = [0u8; 64];
        super::fill(&mut buf).unwrap();
        assert!(buf.iter().filter(|&&b| b == 0).count() < 16);
        let mut many = [0u128; 8];
        super::fill_with_u128(&mut many, |v| v).unwrap();
        let distinct: std::collections::HashSet<u128> = many.iter().copied().collect();
        assert_eq!(distinct.len(), many.len());
        // 64-bit draws (half of a 128-bit one) stay distinct too.
        let words: std::collections::HashSet<u64> = (0..100)
            .map(|_| super::RandomSource::u64(&super::ThreadRandom).unwrap())
            .collect();
        assert_eq!(words.len(), 100);
        // Another thread gets its own, independently seeded generator.
        let c = std::thread::spawn(|| super::u128().unwrap())
            .join()
            .unwrap();
        assert_ne!(c, a);
        assert_ne!(c, b);
    }
}
