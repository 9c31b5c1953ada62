//! The random-suffix schemes against their upstream crates, in the same run. Benchmark ids
//! are `<scheme>/<implementation>`.
//!
//! * `uuid-v4`: idkit; `uuid` 1.x with `fast-rng` (`Uuid::new_v4`, rand's thread RNG); and
//!   `uuid` without `fast-rng`, which reads the operating system's random source per id
//!   (reproduced here as `SysRng` + `Builder::from_random_bytes`, what that path does).
//! * `uuid-v7`: idkit's monotonic generator; `Uuid::now_v7` (uuid's shared v7 context).
//! * `ulid`: idkit's monotonic generator; `Ulid::generate` (not monotonic); `ulid::Generator`
//!   (monotonic).
//! * `ksuid`: idkit; `svix_ksuid::Ksuid::new` (operating-system random source per id).
//!
//! Run: `cargo bench -p bench-harness --bench random`.

mod common;

use std::hint::black_box;

use common::{each, each_id, group};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use idkit_core::IdScheme;
use rand::TryRng;
use svix_ksuid::KsuidLike;

/// The group `name` with idkit's generator `ours` timed first, as "idkit".
fn idkit_group<'a>(
    c: &'a mut Criterion,
    name: &str,
    ours: impl IdScheme,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = group(c, name);
    each_id(&mut g, "idkit", ours);
    g
}

fn uuid_v4(c: &mut Criterion) {
    let mut g = idkit_group(c, "uuid-v4", idkit_uuid::UuidV4::new());
    each(&mut g, "uuid-fast-rng", uuid::Uuid::new_v4);
    g.bench_function("uuid-os-rng", |b| {
        b.iter(|| {
            let mut bytes = [0u8; 16];
            rand::rngs::SysRng.try_fill_bytes(&mut bytes).unwrap();
            black_box(uuid::Builder::from_random_bytes(bytes).into_uuid())
        })
    });
    g.finish();
}

fn uuid_v7(c: &mut Criterion) {
    let mut g = idkit_group(c, "uuid-v7", idkit_uuid::UuidV7::new());
    each(&mut g, "uuid-now_v7", uuid::Uuid::now_v7);
    g.finish();
}

fn ulid(c: &mut Criterion) {
    let mut g = idkit_group(c, "ulid", idkit_ulid::UlidGenerator::new());
    each(&mut g, "ulid-generate", ulid::Ulid::generate);
    let mut upstream = ulid::Generator::new();
    each(&mut g, "ulid-generator", || upstream.generate().unwrap());
    g.finish();
}

fn ksuid(c: &mut Criterion) {
    let mut g = idkit_group(c, "ksuid", idkit_ksuid::KsuidGenerator::new());
    each(&mut g, "svix-ksuid-new", || {
        svix_ksuid::Ksuid::new(None::<std::time::SystemTime>, None)
    });
    g.finish();
}

criterion_group!(benches, uuid_v4, uuid_v7, ulid, ksuid);
criterion_main!(benches);
