//! Generators against the fastest peer crates, in every mode, at 1 and 2 threads, in one
//! run. Benchmark ids are `<group>/<implementation>-<threads>t`; the time is the aggregate
//! per id (wall time over the ids all threads made), so a generator that scales perfectly
//! halves its 1-thread figure at 2 threads. Each operation is a closure type, not a
//! function pointer, so the loop inlines it: what is timed is the generator, not an indirect
//! call around it (the call cost 1 to 2 ns per id and made the figures depend on where the
//! linker put the code).
//!
//! * `snowflake-single`: one single-owner generator per thread (uncapped layout: sign 1,
//!   time 41, sequence 22; ticker-thread clocks on both sides).
//! * `snowflake-lockfree`: one lock-free generator per thread, same layout and clocks.
//! * `snowflake-shared`: one lock-free generator shared by the threads.
//! * `snowflake-defaults`: each crate's default clock, one single-owner generator (idkit's
//!   default is a ticker thread; so is ferroid's `MonotonicClock`).
//! * `uuid-v4`: one generator per thread (idkit's `UuidV4`, ChaCha8 per thread; uuid's
//!   `new_v4` with `fast-rng`, `rand`'s thread generator).
//! * `uuid-v7-shared`: one generator shared by the threads (idkit's lock-free
//!   `AtomicUuidV7`, as the registry and the service share it; uuid's `now_v7`, whose
//!   context is process-wide), and `uuid-v7-single` one per thread.
//! * `ulid-single`: one generator per thread on each crate's default clock (ferroid's
//!   thread-local monotonic ULID; ulid's `Generator`); `ulid-shared`: one shared.
//! * `typeid-shared`, `tsid-shared`, `objectid-shared`: idkit's lock-free shared
//!   generators at 1 and 2 threads; `typeid-single`, one single-owner TypeID generator per
//!   thread, the figure `typeid-shared` is held to.
//! * `cas`: one compare-and-swap on one shared word (load, then swap in one more, retried
//!   when another thread won), the floor under every shared generator: at 1 thread, what a
//!   shared generator adds to its single-owner figure at the least.
//!
//! Run: `cargo bench -p bench-harness --bench scaling`.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{WideId, ferroid_clock, group, keep, per_thread, spin, wide};
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use ferroid::generator::thread_local::Ulid as FerroidUlid;
use ferroid::generator::{AtomicSnowflakeGenerator, BasicSnowflakeGenerator};
use ferroid::time::MonotonicClock as FerroidClock;
use idkit_core::{IdScheme, TickerClock};
use idkit_snowflake::Snowflake;

const THREADS: [u64; 2] = [1, 2];

/// Benchmarks `op` on per-thread states from `make`, at 1 and 2 threads.
fn each_thread<S, M, F>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    make: M,
    op: F,
) where
    M: Fn() -> S + Send + Sync + Clone + 'static,
    S: 'static,
    F: Fn(&mut S) + Copy + Send + 'static,
{
    for t in THREADS {
        let make = make.clone();
        g.bench_function(format!("{name}-{t}t"), move |b| {
            b.iter_custom(|iters| per_thread(t, iters, make.clone(), op))
        });
    }
}

/// Benchmarks a function with no state of its own (its crate's state is process-wide or
/// thread-local), at 1 and 2 threads.
fn each_call<T, F: Fn() -> T + Copy + Send + Sync + 'static>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    call: F,
) {
    each_thread(g, name, || (), move |()| keep(call()));
}

/// Benchmarks `op` on one shared state, at 1 and 2 threads: each thread's own state is a
/// handle on it.
fn one_shared<S: Send + Sync + 'static, F: Fn(&S) + Copy + Send + 'static>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    state: S,
    op: F,
) {
    let state = Arc::new(state);
    each_thread(
        g,
        name,
        move || Arc::clone(&state),
        move |s: &mut Arc<S>| op(s),
    );
}

/// [`each_thread`] for idkit's generator made by `make`, named "idkit".
fn idkit_each<S: IdScheme + 'static>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    make: impl Fn() -> S + Send + Sync + Clone + 'static,
) {
    each_thread(g, "idkit", make, |s| keep(s.next_id().unwrap()));
}

/// [`one_shared`] for idkit's shared `generator`, named "idkit".
fn idkit_shared<S: IdScheme + Send + Sync + 'static>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    generator: S,
) {
    one_shared(g, "idkit", generator, |s| keep(s.next_id().unwrap()));
}

fn snowflake(c: &mut Criterion) {
    let ticker = || Snowflake::builder(wide()).clock(TickerClock::new());
    let ferroid_atomic = || AtomicSnowflakeGenerator::<WideId, _>::new(0, ferroid_clock());

    let mut g = group(c, "snowflake-single");
    idkit_each(&mut g, move || ticker().build().unwrap());
    each_thread(
        &mut g,
        "ferroid-basic",
        || BasicSnowflakeGenerator::<WideId, _>::new(0, ferroid_clock()),
        |s| keep(s.next_id(spin)),
    );
    g.finish();

    let mut g = group(c, "snowflake-lockfree");
    idkit_each(&mut g, move || ticker().build_atomic().unwrap());
    each_thread(&mut g, "ferroid-atomic", ferroid_atomic, |s| {
        keep(s.next_id(spin))
    });
    g.finish();

    let mut g = group(c, "snowflake-shared");
    idkit_shared(&mut g, ticker().build_atomic().unwrap());
    one_shared(&mut g, "ferroid-atomic", ferroid_atomic(), |s| {
        keep(s.next_id(spin))
    });
    g.finish();

    let mut g = group(c, "snowflake-defaults");
    idkit_each(&mut g, || Snowflake::builder(wide()).build().unwrap());
    each_thread(
        &mut g,
        "ferroid-basic",
        || BasicSnowflakeGenerator::<WideId, _>::new(0, FerroidClock::default()),
        |s| keep(s.next_id(spin)),
    );
    g.finish();
}

fn uuid_v4(c: &mut Criterion) {
    let mut g = group(c, "uuid-v4");
    idkit_each(&mut g, idkit_uuid::UuidV4::new);
    each_call(&mut g, "uuid-new_v4", uuid::Uuid::new_v4);
    g.finish();
}

fn uuid_v7(c: &mut Criterion) {
    let mut g = group(c, "uuid-v7-shared");
    idkit_shared(&mut g, idkit_uuid::AtomicUuidV7::new());
    one_shared(&mut g, "uuid-now_v7", (), |()| keep(uuid::Uuid::now_v7()));
    g.finish();

    let mut g = group(c, "uuid-v7-single");
    idkit_each(&mut g, idkit_uuid::UuidV7::new);
    each_call(&mut g, "uuid-now_v7", uuid::Uuid::now_v7);
    g.finish();
}

fn ulid(c: &mut Criterion) {
    let mut g = group(c, "ulid-single");
    idkit_each(&mut g, idkit_ulid::UlidGenerator::new);
    each_call(&mut g, "ferroid-thread-local-mono", || {
        FerroidUlid::new_ulid_mono(spin)
    });
    each_thread(&mut g, "ulid-generator", ulid::Generator::new, |s| {
        keep(s.generate().unwrap())
    });
    g.finish();

    let mut g = group(c, "ulid-shared");
    idkit_shared(&mut g, idkit_ulid::AtomicUlid::new());
    one_shared(
        &mut g,
        "ulid-generator-mutex",
        Mutex::new(ulid::Generator::new()),
        |s| keep(s.lock().unwrap().generate().unwrap()),
    );
    g.finish();
}

fn others(c: &mut Criterion) {
    let mut g = group(c, "typeid-shared");
    let prefix = idkit_all::typeid::Prefix::new("user").unwrap();
    idkit_shared(
        &mut g,
        idkit_all::typeid::AtomicTypeIdGenerator::new(prefix),
    );
    g.finish();
    let mut g = group(c, "typeid-single");
    idkit_each(&mut g, move || {
        idkit_all::typeid::TypeIdGenerator::new(prefix)
    });
    g.finish();
    let mut g = group(c, "tsid-shared");
    idkit_shared(
        &mut g,
        idkit_all::tsid::AtomicTsidGenerator::with_node(10, 1).unwrap(),
    );
    g.finish();
    let mut g = group(c, "objectid-shared");
    idkit_shared(&mut g, idkit_all::objectid::AtomicObjectIdGenerator::new());
    g.finish();
}

fn cas(c: &mut Criterion) {
    let mut g = group(c, "cas");
    one_shared(&mut g, "atomic-u64", AtomicU64::new(0), |word| {
        let mut current = word.load(Ordering::Relaxed);
        while let Err(seen) =
            word.compare_exchange_weak(current, current + 1, Ordering::Relaxed, Ordering::Relaxed)
        {
            current = seen;
        }
    });
    g.finish();
}

criterion_group!(benches, snowflake, uuid_v4, uuid_v7, ulid, others, cas);
criterion_main!(benches);
