//! Snowflake generation: idkit's three modes against ferroid, snowflaked and snowflake_me,
//! in the same run. Benchmark ids are `<group>/<implementation>`.
//!
//! * `twitter-1t`: Twitter's layout (cap 4.096 M ids/s) on one thread: at the cap, an id
//!   costs 244 ns however fast the code is.
//! * `uncapped-single`, `uncapped-lockfree`, `uncapped-mutex`: a layout whose cap is out of
//!   reach (sign 1, time 41, sequence 22: 4.2 G ids/s), so the cost of the code and the
//!   clock read shows. snowflaked's layout is fixed (12-bit sequence) and stays capped.
//! * `lockfree-threads`: aggregate ns/id with 1 and 2 threads sharing one generator.
//! * `leased`: the same generators with and without a worker-id lease guarding them (a
//!   static lease renewing in the background): the guard costs one atomic load per tick.
//!
//! * `typed`: the uncapped generators returning the raw word, a `SnowflakeId`, and a typed
//!   `Id<User, SnowflakeId<_>>` (`IdScheme::next_as`): the id types cost nothing.
//!
//! Run: `cargo bench -p bench-harness --bench snowflake`.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use common::{WideId, each, each_id, ferroid_clock, group, per_thread, spin, wide};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use ferroid::generator::{
    AtomicSnowflakeGenerator, BasicSnowflakeGenerator, LockSnowflakeGenerator,
};
use ferroid::id::SnowflakeTwitterId;
use idkit_core::{IdScheme, MonotonicClock, TickerClock};
use idkit_snowflake::{Builder, Custom, Layout, LayoutSpec, Snowflake, Twitter};

fn snowflake_me_wide() -> snowflake_me::Snowflake {
    let zero = || Ok(0);
    snowflake_me::Snowflake::builder()
        .bit_len_time(41)
        .bit_len_sequence(20)
        .bit_len_data_center_id(1)
        .bit_len_machine_id(1)
        .machine_id(&zero)
        .data_center_id(&zero)
        .finalize()
        .expect("snowflake_me layout")
}

/// A builder of the uncapped layout on idkit's ticker-thread clock.
fn ticker() -> Builder<Custom<u64>, TickerClock> {
    Snowflake::builder(wide()).clock(TickerClock::new())
}

/// A builder of the uncapped layout reading the monotonic clock per id.
fn monotonic() -> Builder<Custom<u64>, MonotonicClock> {
    Snowflake::builder(wide()).clock(MonotonicClock::new())
}

fn twitter_one_thread(c: &mut Criterion) {
    let mut g = group(c, "twitter-1t");
    g.measurement_time(Duration::from_secs(3));
    each_id(
        &mut g,
        "idkit-single",
        Snowflake::builder(Twitter).build().unwrap(),
    );
    each_id(
        &mut g,
        "idkit-lockfree",
        Snowflake::builder(Twitter).build_atomic().unwrap(),
    );
    let ferroid = BasicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(0, ferroid_clock());
    each(&mut g, "ferroid-basic", || ferroid.next_id(spin));
    let mut snowflaked = snowflaked::Generator::new(0);
    each(&mut g, "snowflaked-single", || snowflaked.generate::<u64>());
    g.finish();
}

fn uncapped(c: &mut Criterion) {
    let mut g = group(c, "uncapped-single");
    each_id(&mut g, "idkit-ticker", ticker().build().unwrap());
    each_id(&mut g, "idkit-monotonic", monotonic().build().unwrap());
    let ferroid = BasicSnowflakeGenerator::<WideId, _>::new(0, ferroid_clock());
    each(&mut g, "ferroid-basic", || ferroid.next_id(spin));
    let mut snowflaked = snowflaked::Generator::new(0);
    each(&mut g, "snowflaked-single-capped", || {
        snowflaked.generate::<u64>()
    });
    g.finish();

    let mut g = group(c, "uncapped-lockfree");
    each_id(&mut g, "idkit-ticker", ticker().build_atomic().unwrap());
    each_id(
        &mut g,
        "idkit-monotonic",
        monotonic().build_atomic().unwrap(),
    );
    let ferroid = AtomicSnowflakeGenerator::<WideId, _>::new(0, ferroid_clock());
    each(&mut g, "ferroid-atomic", || ferroid.next_id(spin));
    let me = snowflake_me_wide();
    each(&mut g, "snowflake_me", || me.next_id().unwrap());
    let snowflaked = snowflaked::sync::Generator::new(0);
    each(&mut g, "snowflaked-sync-capped", || {
        snowflaked.generate::<u64>()
    });
    let mut buf = vec![0u64; 1000];
    g.throughput(Throughput::Elements(1000));
    g.bench_function("idkit-ticker-batch1000", |b| {
        b.iter(|| {
            ours_batch(&mut buf);
            black_box(buf[999])
        })
    });
    let mut me_buf = Vec::with_capacity(1000);
    g.bench_function("snowflake_me-batch1000", |b| {
        b.iter(|| {
            me_buf.clear();
            me.next_ids_into(1000, &mut me_buf).unwrap();
            black_box(me_buf.len())
        })
    });
    g.finish();

    let mut g = group(c, "uncapped-mutex");
    each_id(&mut g, "idkit-ticker", ticker().build_mutex().unwrap());
    let ferroid = LockSnowflakeGenerator::<WideId, _>::new(0, ferroid_clock());
    g.bench_function("ferroid-lock", |b| {
        // The lock generator's only fallible path is a poisoned mutex.
        b.iter(|| black_box(ferroid.try_next_id(spin).unwrap()))
    });
    g.finish();
}

fn ours_batch(buf: &mut [u64]) {
    thread_local! {
        static GEN: idkit_snowflake::AtomicSnowflake<Custom<u64>, TickerClock> =
            Snowflake::builder(wide()).clock(TickerClock::new()).build_atomic().unwrap();
    }
    GEN.with(|g| g.fill(buf).unwrap());
}

/// Aggregate time per id with `threads` threads sharing one lock-free generator.
fn shared_run<G: IdScheme + Send + Sync + 'static>(
    generator: &Arc<G>,
    threads: u64,
    iters: u64,
) -> Duration {
    let generator = Arc::clone(generator);
    per_thread(
        threads,
        iters,
        move || Arc::clone(&generator),
        |g: &mut Arc<G>| {
            black_box(g.next_id().unwrap());
        },
    )
}

fn lockfree_threads(c: &mut Criterion) {
    let mut g = group(c, "lockfree-threads");
    let generator = Arc::new(ticker().build_atomic().unwrap());
    for threads in [1u64, 2] {
        g.bench_function(format!("idkit-ticker-{threads}t"), |b| {
            b.iter_custom(|iters| shared_run(&generator, threads, iters))
        });
    }
    let twitter = Arc::new(Snowflake::builder(Twitter).build_atomic().unwrap());
    for threads in [1u64, 2] {
        g.bench_function(format!("idkit-twitter-{threads}t"), |b| {
            b.iter_custom(|iters| shared_run(&twitter, threads, iters))
        });
    }
    g.finish();
}

/// With and without a lease: each pair differs only in `.guard(lease.guard())`, both on the
/// monotonic clock the guard sets.
fn leased(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("idkit-bench-lease-{}", std::process::id()));
    let source = idkit_lease::IdentitySource::parse("static:0")
        .expect("static source")
        .with_state_dir(Some(&dir));
    let lease = idkit_lease::Lease::acquire(&source, "bench", 1).expect("static lease");
    let mut g = group(c, "leased");
    let single = |b: Builder<_, _>| b.build().unwrap();
    let lockfree = |b: Builder<_, _>| b.build_atomic().unwrap();
    leased_pair(&mut g, "uncapped-single", wide(), &lease, single);
    leased_pair(&mut g, "uncapped-lockfree", wide(), &lease, lockfree);
    g.measurement_time(Duration::from_secs(3));
    leased_pair(&mut g, "twitter-lockfree", Twitter, &lease, |b| {
        b.build_atomic().unwrap()
    });
    g.finish();
    drop(lease);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `name` and `name-leased`: generators of `layout` on the monotonic clock (the clock a
/// lease's guard sets), made by `build` from a builder without and with the guard.
fn leased_pair<L: Layout + Copy, G: IdScheme>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    layout: L,
    lease: &idkit_lease::Lease,
    build: impl Fn(Builder<L, MonotonicClock>) -> G,
) {
    let plain = Snowflake::builder(layout).clock(MonotonicClock::new());
    each_id(g, name, build(plain));
    let guarded = Snowflake::builder(layout).guard(lease.guard());
    each_id(g, &format!("{name}-leased"), build(guarded));
}

/// What the typed ids of the `typed` group name.
struct User;
impl idkit_snowflake::Marker for User {}

/// The uncapped layout as a type of its own, as an application declares a custom layout
/// whose ids it parses and stores (`SnowflakeId` needs the layout from its type).
#[derive(Debug, Clone, Copy, Default)]
struct Wide;

impl Layout for Wide {
    type Id = u64;
    fn spec(&self) -> &LayoutSpec {
        static SPEC: std::sync::LazyLock<LayoutSpec> = std::sync::LazyLock::new(|| *wide().spec());
        &SPEC
    }
}

fn typed(c: &mut Criterion) {
    let mut g = group(c, "typed");
    let builder = || Snowflake::builder(Wide).clock(TickerClock::new());
    typed_forms(&mut g, "single", builder().build().unwrap());
    typed_forms(&mut g, "lockfree", builder().build_atomic().unwrap());
    g.finish();
}

/// `generator`'s ids as its word, as a `SnowflakeId` and as a typed id, named `<mode>-<form>`.
fn typed_forms<G: IdScheme<Id = u64>>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    mode: &str,
    generator: G,
) {
    type Sf = idkit_snowflake::SnowflakeId<Wide>;
    type Typed = idkit_snowflake::Id<User, Sf>;
    each(g, &format!("{mode}-word"), || generator.next_id().unwrap());
    each(g, &format!("{mode}-snowflake-id"), || {
        generator.next_as::<Sf>().unwrap()
    });
    each(g, &format!("{mode}-typed-id"), || {
        generator.next_as::<Typed>().unwrap()
    });
}

criterion_group!(
    benches,
    twitter_one_thread,
    uncapped,
    lockfree_threads,
    leased,
    typed
);
criterion_main!(benches);
