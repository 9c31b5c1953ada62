//! The random source of idkit's random schemes (UUID, ULID, KSUID): a ChaCha12 generator
//! (`rand`'s `StdRng`, a user-space CSPRNG) per thread, seeded from the operating system
//! once, when the thread first asks. After that no id costs a system call.

use std::cell::RefCell;

use rand::rngs::{StdRng, SysRng};
use rand::{Rng, SeedableRng};

use crate::GenerateError;

thread_local! {
    static RNG: RefCell<Option<StdRng>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's generator, seeding it on first use.
///
/// # Errors
///
/// [`GenerateError::Unavailable`] when the operating system's random source cannot seed
/// the generator (nothing is issued; a later call tries again).
#[inline]
pub fn with_rng<T>(f: impl FnOnce(&mut StdRng) -> T) -> Result<T, GenerateError> {
    RNG.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let rng =
                StdRng::try_from_rng(&mut SysRng).map_err(|e| GenerateError::Unavailable {
                    reason: format!("the operating system's random source failed: {e}"),
                })?;
            *slot = Some(rng);
        }
        // Seeded just above.
        Ok(f(slot.as_mut().unwrap_or_else(|| unreachable!())))
    })
}

/// 128 random bits from this thread's generator.
///
/// # Errors
///
/// As [`with_rng`].
#[inline]
pub fn u128() -> Result<u128, GenerateError> {
    with_rng(|rng| (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()))
}

/// Fills `dest` from this thread's generator.
///
/// # Errors
///
/// As [`with_rng`].
#[inline]
pub fn fill(dest: &mut [u8]) -> Result<(), GenerateError> {
    with_rng(|rng| rng.fill_bytes(dest))
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ_and_fill_covers_the_buffer() {
        let a = super::u128().unwrap();
        let b = super::u128().unwrap();
        assert_ne!(a, b);
        let mut buf = [0u8; 64];
        super::fill(&mut buf).unwrap();
        assert!(buf.iter().filter(|&&b| b == 0).count() < 16);
        // Another thread gets its own, independently seeded generator.
        let c = std::thread::spawn(|| super::u128().unwrap())
            .join()
            .unwrap();
        assert_ne!(c, a);
        assert_ne!(c, b);
    }
}
