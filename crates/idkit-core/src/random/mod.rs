//! The random source of idkit's random schemes (UUID, ULID, KSUID): a ChaCha8 generator (a
//! user-space CSPRNG) per thread, seeded from the operating system once, when the thread
//! first asks. After that no id costs a system call, and a single draw ([`u128()`],
//! [`u64()`]) takes its words from 256 bytes drawn ahead per thread. A child process made by `fork` starts
//! with a copy of it: call [`crate::after_fork`] there first.
//!
//! Why ChaCha8 rather than the ChaCha12 of `rand`'s `ChaCha8Rng` and `ThreadRng`: no attack
//! reaches beyond 7 rounds, 8 rounds is the margin Aumasson's "Too Much Crypto" (2019)
//! argues for, and it makes a UUIDv4 about as cheap as `uuid`'s `fast-rng` path
//! (measured in `bench-harness`, group `uuid-v4`).

//!
//! Generators take their randomness through [`RandomSource`]: [`ThreadRandom`] (the default,
//! the per-thread generator above) or [`SeededRandom`] (a fixed seed, for tests and vectors
//! that must come out the same every run). `rand`'s own types stay inside this module.

//!
//! Without `std` (and so without the feature `rand`) only the trait is here: a generator is
//! given the random source of its platform.

use core::fmt;

use crate::GenerateError;

#[cfg(feature = "rand")]
mod thread;
#[cfg(feature = "rand")]
pub use thread::forget_this_thread;
#[cfg(feature = "rand")]
pub use thread::{SeededRandom, ThreadRandom, fill, fill_with_u128, u64, u128};

/// The random source a generator draws from unless given another: [`ThreadRandom`] with the
/// feature `rand`; without it, none ([`NoRandom`], a type with no values: a generator is
/// given its source).
#[cfg(feature = "rand")]
pub type DefaultRandom = ThreadRandom;
/// The random source a generator draws from unless given another: none without the feature
/// `rand` ([`NoRandom`], a type with no values: a generator is given its source).
#[cfg(not(feature = "rand"))]
pub type DefaultRandom = NoRandom;

/// No random source: a type with no values, the default type of a generator's source
/// where the crate has none of its own (without the feature `rand`). A generator that
/// names it cannot be made; one given a source of the caller's does not name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRandom {}

impl RandomSource for NoRandom {
    fn u128(&self) -> Result<u128, GenerateError> {
        match *self {}
    }
    fn fill(&self, _: &mut [u8]) -> Result<(), GenerateError> {
        match *self {}
    }
}

/// Where a generator's random bits come from.
pub trait RandomSource: fmt::Debug + Send + Sync {
    /// 128 random bits.
    ///
    /// # Errors
    ///
    /// [`GenerateErrorKind::Unavailable`](crate::GenerateErrorKind::Unavailable) when the source cannot be seeded.
    fn u128(&self) -> Result<u128, GenerateError>;

    /// [`RandomSource::u128`] for a caller that draws seldom, as a time-ordered generator
    /// does once a millisecond: [`ThreadRandom`] inlines its `u128` into a caller that draws
    /// for every id (UUIDv4), and makes this one a call, so that a caller's loop of ids
    /// that never draws stays small enough to inline. By default the same as `u128`.
    ///
    /// # Errors
    ///
    /// As [`RandomSource::u128`].
    #[inline]
    fn rare_u128(&self) -> Result<u128, GenerateError> {
        self.u128()
    }

    /// 64 random bits (by default the low half of [`RandomSource::u128`]; sources that can
    /// make 64 bits for less say so).
    ///
    /// # Errors
    ///
    /// As [`RandomSource::u128`].
    fn u64(&self) -> Result<u64, GenerateError> {
        Ok(u64::try_from(self.u128()? & u128::from(u64::MAX)).unwrap_or(0))
    }

    /// Fills `dest` with random bytes.
    ///
    /// # Errors
    ///
    /// As [`RandomSource::u128`].
    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError>;

    /// Sets every slot of `out` to `make(128 random bits)`: for batches.
    ///
    /// # Errors
    ///
    /// As [`RandomSource::u128`] (`out` is unchanged then).
    fn fill_with_u128<T>(
        &self,
        out: &mut [T],
        mut make: impl FnMut(u128) -> T,
    ) -> Result<(), GenerateError>
    where
        Self: Sized,
    {
        for slot in out {
            *slot = make(self.u128()?);
        }
        Ok(())
    }
}

/// A source through a shared reference: the referent's, every method (a `static` source, or
/// one a program keeps and lends to several generators).
impl<R: RandomSource + ?Sized> RandomSource for &R {
    #[inline]
    fn u128(&self) -> Result<u128, GenerateError> {
        (**self).u128()
    }
    #[inline]
    fn rare_u128(&self) -> Result<u128, GenerateError> {
        (**self).rare_u128()
    }
    #[inline]
    fn u64(&self) -> Result<u64, GenerateError> {
        (**self).u64()
    }
    #[inline]
    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
        (**self).fill(dest)
    }
}
