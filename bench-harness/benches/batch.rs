//! One response body of 1,000 ids, as `idkit serve` makes it for `?count=1000`: the ids
//! from the registry's shared generator (`fill_raw` through `dyn DynScheme`), each written
//! into one `String` with a newline. The HTTP work around it is measured by
//! `scripts/load.sh`; this group isolates what the service adds per id.
//!
//! Run: `cargo bench -p bench-harness --bench batch`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use idkit_all::registry::{self, Options};
use idkit_core::RawId;

const BATCH: usize = 1_000;

fn batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("batch-1000");
    g.throughput(Throughput::Elements(BATCH as u64));
    for name in ["uuid-v4", "uuid-v7", "ulid", "snowflake-mastodon", "ksuid"] {
        let scheme = registry::find(name)
            .and_then(|e| e.build(&Options::default()))
            .unwrap();
        let width = usize::try_from(scheme.info().string_len).unwrap() + 1;
        let mut ids = vec![RawId::default(); BATCH];
        g.bench_function(name, |b| {
            b.iter(|| {
                scheme.fill_raw(&mut ids).unwrap();
                let mut body = String::with_capacity(BATCH * width);
                for id in &ids {
                    scheme.format_raw_into(id, &mut body).unwrap();
                    body.push('\n');
                }
                black_box(body)
            })
        });
    }
    g.finish();

    // The same through the async API the service generates with (`nonblocking::fill_raw`),
    // on a current-thread runtime: what deferring the waits costs per batch.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("batch-1000-async");
    g.throughput(Throughput::Elements(BATCH as u64));
    for name in ["uuid-v7", "snowflake-mastodon", "snowflake-twitter"] {
        let scheme = registry::find(name)
            .and_then(|e| e.build(&Options::default()))
            .unwrap();
        let mut ids = vec![RawId::default(); BATCH];
        g.bench_function(name, |b| {
            b.iter(|| {
                runtime
                    .block_on(idkit_core::nonblocking::fill_raw(&*scheme, &mut ids))
                    .unwrap();
                black_box(&ids);
            })
        });
        g.bench_function(format!("{name}-blocking"), |b| {
            b.iter(|| {
                scheme.fill_raw(&mut ids).unwrap();
                black_box(&ids);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
