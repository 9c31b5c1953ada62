//! idkit without the standard library: what an embedded or WebAssembly program does with
//! the crates' `std` features off. It brings its own clock and random source (here a
//! hand-set clock and a xorshift generator; a real program would read its timer and its
//! hardware random number generator), builds each scheme's generators on them, and reads
//! the ids back with the codecs. Built by `scripts/test.sh`, which also checks that no crate
//! in this build has its `std` feature on.
#![no_std]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use idkit_core::random::RandomSource;
use idkit_core::{Clock, Codec, GenerateError, IdScheme, ManualClock};

/// A xorshift64* generator behind an atomic: a stand-in for a platform's random source
/// (not for ids in production: it is predictable).
#[derive(Debug)]
pub struct Xorshift(AtomicU64);

impl Xorshift {
    /// A source seeded with `seed` (not 0).
    pub const fn new(seed: u64) -> Self {
        Self(AtomicU64::new(seed | 1))
    }

    fn next(&self) -> u64 {
        let mut x = self.0.load(Ordering::Relaxed);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.store(x, Ordering::Relaxed);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

impl RandomSource for Xorshift {
    fn u128(&self) -> Result<u128, GenerateError> {
        Ok(u128::from(self.next()) << 64 | u128::from(self.next()))
    }

    fn fill(&self, dest: &mut [u8]) -> Result<(), GenerateError> {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

/// `n` ids of each scheme, made on `clock` and `random`, each written in its scheme's
/// canonical text and read back: the texts, scheme by scheme.
///
/// # Errors
///
/// A generator's or a codec's error.
pub fn ids<C: Clock + Copy>(
    clock: C,
    random: &'static Xorshift,
    n: usize,
) -> Result<Vec<(&'static str, Vec<String>)>, GenerateError> {
    use idkit_typeid::{Prefix, TypeIdCodec};
    use idkit_uuid::{UuidCodec, UuidV6, UuidV7SubMs};

    let mut out = Vec::new();
    let prefix =
        Prefix::new("user").map_err(|e| GenerateError::unavailable(alloc::format!("{e}")))?;
    out.push(texts(
        "uuid-v4",
        &idkit_uuid::UuidV4::with_source(random),
        UuidCodec::V4,
        n,
    )?);
    out.push(texts(
        "uuid-v7",
        &idkit_uuid::AtomicUuidV7::with_source(clock, random),
        UuidCodec::V7,
        n,
    )?);
    out.push(texts(
        "uuid-v7-sub-ms",
        &UuidV7SubMs::with_source(clock, random),
        UuidCodec::V7,
        n,
    )?);
    out.push(texts(
        "uuid-v6",
        &UuidV6::with_source(clock, random)?,
        UuidCodec::V6,
        n,
    )?);
    out.push(texts(
        "ulid",
        &idkit_ulid::AtomicUlid::with_source(clock, random),
        idkit_ulid::UlidCodec,
        n,
    )?);
    out.push(texts(
        "ksuid",
        &idkit_ksuid::KsuidGenerator::with_source(clock, random),
        idkit_ksuid::KsuidCodec,
        n,
    )?);
    let tsid = idkit_tsid::AtomicTsidGenerator::with_parts(clock, random, 10, 7)
        .map_err(|e| GenerateError::unavailable(alloc::format!("{e}")))?;
    let codec = tsid.codec();
    out.push(texts("tsid", &tsid, codec, n)?);
    out.push(texts(
        "objectid",
        &idkit_objectid::AtomicObjectIdGenerator::with_source(clock, random)?,
        idkit_objectid::ObjectIdCodec,
        n,
    )?);
    out.push(texts(
        "typeid",
        &idkit_typeid::AtomicTypeIdGenerator::with_source(prefix, clock, random),
        TypeIdCodec::issuing(prefix),
        n,
    )?);
    // Snowflake layouts on the same clock, single-owner and lock-free (a seed of the
    // platform's randomness would go to `Builder::seed`).
    use idkit_snowflake::{Builder, Discord, SnowflakeCodec, Twitter};
    let configured =
        |e: idkit_snowflake::ConfigError| GenerateError::unavailable(alloc::format!("{e}"));
    let twitter = Builder::with_clock(Twitter, clock)
        .field("worker", 3)
        .build()
        .map_err(configured)?;
    out.push(texts(
        "snowflake-twitter",
        &twitter,
        SnowflakeCodec(Twitter),
        n,
    )?);
    let discord = Builder::with_clock(Discord, clock)
        .field("process", 1)
        .build_atomic()
        .map_err(configured)?;
    out.push(texts(
        "snowflake-discord",
        &discord,
        SnowflakeCodec(Discord),
        n,
    )?);
    Ok(out)
}

fn texts<G: IdScheme, K: Codec<Id = G::Id>>(
    name: &'static str,
    generator: &G,
    codec: K,
    n: usize,
) -> Result<(&'static str, Vec<String>), GenerateError>
where
    G::Id: PartialEq + core::fmt::Debug,
{
    let mut texts = Vec::with_capacity(n);
    for id in generator.take(n)? {
        let text = codec.format(id);
        let back = codec
            .parse(&text)
            .map_err(|e| GenerateError::unavailable(alloc::format!("{name}: {e}")))?;
        assert_eq!(back, id, "{name}");
        texts.push(text);
    }
    Ok((name, texts))
}

/// A manual clock at a fixed time, as a `Copy` reference for the generators.
pub fn clock_at(ms: u64) -> &'static ManualClock {
    alloc::boxed::Box::leak(alloc::boxed::Box::new(ManualClock::new(ms)))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    static RANDOM: Xorshift = Xorshift::new(0x1d);

    #[test]
    fn every_scheme_makes_increasing_ids_that_read_back() {
        // 2024-01-01T00:00:00Z.
        let clock = clock_at(1_704_067_200_000);
        for (name, texts) in ids(clock, &RANDOM, 500).unwrap() {
            assert_eq!(texts.len(), 500, "{name}");
            // Random ids (uuid-v4) and KSUID, whose payload below its second is random, do
            // not increase one by one; the time-ordered schemes do, on one clock reading.
            if !matches!(name, "uuid-v4" | "ksuid") {
                assert!(texts.windows(2).all(|w| w[0] < w[1]), "{name}: {texts:?}");
            }
            let mut distinct = texts.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), texts.len(), "{name}: a duplicate");
        }
        // The ids of one millisecond: time bounds hold them (RFC 9562's v7 layout).
        let bounds = idkit_uuid::UuidCodec::V7
            .bounds_at(1_704_067_200_000, &[])
            .unwrap();
        let v7 = idkit_uuid::AtomicUuidV7::with_source(clock, &RANDOM)
            .next_id()
            .unwrap();
        assert!(bounds.lowest <= v7 && v7 <= bounds.highest);
    }

    /// Range ids are made by an allocator that leases blocks from a database (`std`); a
    /// program without `std` reads and writes them.
    #[test]
    fn range_ids_read_and_write() {
        let id: idkit_range::RangeId = "18446744073709551615".parse().unwrap();
        assert_eq!(id.get(), u64::MAX);
        assert!("-1".parse::<idkit_range::RangeId>().is_err());
        let codec = idkit_range::RangeCodec;
        assert_eq!(codec.parse(&codec.format(42)).unwrap(), 42);
    }
}
