//! The data files: `data/*.csv` (columns keep their names from run to run, new columns after
//! them) and `data/run.json`.

use std::path::Path;

use serde::Serialize;

use crate::Error;
use crate::collisions::CollisionRow;
use crate::engine::report::Results;
use crate::generation::GenRow;
use crate::leaks::LeakRow;
use crate::machine::{Machine, Primitive};
use crate::properties::PropRow;
use crate::table::{Table, figure, text};

#[derive(Serialize)]
struct RunJson<'a> {
    machine: &'a Machine,
    profile: &'static str,
    git_revision: &'a str,
    toolchain: &'a str,
    date: &'a str,
    command: &'a str,
    primitives: &'a [Primitive],
    pragmas: &'a [String],
    params: ParamsJson,
}

#[derive(Serialize)]
struct ParamsJson {
    sample_ms: u64,
    samples: usize,
    threads: &'static [usize],
    order_generators: usize,
    order_ids: usize,
    unique_generators: usize,
    unique_ids: usize,
    collision_ids: usize,
    btree_rows: usize,
    commit_rows: usize,
    small_cache_kib: i64,
    large_cache_kib: i64,
    repeats: usize,
    order_seed: u64,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

const GENERATION: Table<GenRow> = Table(&[
    text("scheme", |g| g.scheme.to_string()),
    text("variant", |g| g.variant.to_string()),
    figure("threads", |g| g.threads.to_string()),
    figure("ns_per_id", |g| format!("{:.3}", g.ns_per_id)),
    figure("ids_per_sec", |g| format!("{:.0}", g.ids_per_sec)),
    figure("cap_ids_per_sec", |g| opt(g.cap_ids_per_sec)),
]);

const COLLISIONS: Table<CollisionRow> = Table(&[
    text("scheme", |c| c.scheme.to_string()),
    figure("random_bits", |c| c.random_bits.to_string()),
    figure("tick_ms", |c| opt(c.tick_ms)),
    figure("ids_per_tick", |c| {
        c.ids_per_tick.map_or(String::new(), |n| format!("{n:.6e}"))
    }),
    figure("ids_per_sec", |c| format!("{:.6e}", c.ids_per_sec)),
    figure("probability", |_| {
        format!("{:e}", crate::collisions::PROBABILITY)
    }),
    figure("period_ms", |_| crate::collisions::YEAR_MS.to_string()),
]);

const LEAKS: Table<LeakRow> = Table(&[
    text("scheme", |l| l.scheme.to_string()),
    figure("time_precision_ms", |l| opt(l.time_ms)),
    text("maker", |l| l.maker.to_string()),
    text("next_in_tick", |l| match l.next {
        crate::leaks::Next::Plus(d) => format!("+{d}"),
        crate::leaks::Next::Random => "random".to_owned(),
        crate::leaks::Next::Unseen => String::new(),
    }),
    figure("random_bits", |l| l.random_bits.to_string()),
    text("count", |l| l.count.to_string()),
    figure("value_at_report_date", |l| opt(l.value_now)),
    figure("bits", |l| l.bits.to_string()),
    figure("text_len", |l| l.text_len.to_string()),
    text("alphabet", |l| l.alphabet.to_string()),
]);

const PROPERTIES: Table<PropRow> = Table(&[
    text("scheme", |p| p.scheme.to_string()),
    figure("bytes", |p| p.bytes.to_string()),
    figure("string_len_min", |p| p.string_len_min.to_string()),
    figure("string_len_max", |p| p.string_len_max.to_string()),
    figure("order_generators", |p| p.order_generators.to_string()),
    figure("order_ids", |p| p.order_ids.to_string()),
    figure("inverted_pair_fraction", |p| {
        format!("{:.6}", p.inverted_pair_fraction)
    }),
    figure("max_displacement_ms", |p| {
        format!("{:.3}", p.max_displacement_ms)
    }),
    figure("unique_generators", |p| p.unique_generators.to_string()),
    figure("unique_ids", |p| p.unique_ids.to_string()),
    figure("unique_duplicates", |p| p.unique_duplicates.to_string()),
    text("collision_setup", |p| p.collision_setup.to_string()),
    figure("collision_ids", |p| p.collision_ids.to_string()),
    figure("collision_duplicates", |p| {
        p.collision_duplicates.to_string()
    }),
]);

const PRIMITIVES: Table<Primitive> = Table(&[
    text("primitive", |p| p.name.to_string()),
    figure("ns_per_call", |p| format!("{:.2}", p.ns_per_call)),
]);

/// Writes the CSV files and `run.json` into `dir`.
pub(crate) fn write_data(r: &Results<'_>, dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let write = |name: &str, body: String| {
        let path = dir.join(name);
        std::fs::write(&path, body).map_err(Error::io(path))
    };

    write("generation.csv", GENERATION.csv(&r.generation.rows))?;
    write("collisions.csv", COLLISIONS.csv(r.collisions))?;
    write("leaks.csv", LEAKS.csv(r.leaks))?;
    write("properties.csv", PROPERTIES.csv(r.properties))?;
    for (name, body) in r.engines.iter().flat_map(|engine| engine.files()) {
        write(&name, body)?;
    }

    write("primitives.csv", PRIMITIVES.csv(r.primitives))?;

    let p = r.params;
    // SQLite's pragmas, asked of the list by the engine's name.
    let pragmas = r.named("sqlite").map_or(&[][..], |e| e.settings());
    let run = RunJson {
        machine: r.machine,
        profile: p.profile.name(),
        git_revision: &r.machine.git_revision,
        toolchain: &r.machine.toolchain,
        date: &r.machine.date,
        command: &r.config.command,
        primitives: r.primitives,
        pragmas,
        params: ParamsJson {
            sample_ms: p.sample_ms,
            samples: p.samples,
            threads: p.threads,
            order_generators: p.order_generators,
            order_ids: p.order_ids,
            unique_generators: p.unique_generators,
            unique_ids: p.unique_ids,
            collision_ids: p.collision_ids,
            btree_rows: p.btree_rows,
            commit_rows: p.commit_rows,
            small_cache_kib: p.small_cache_kib,
            large_cache_kib: p.large_cache_kib,
            repeats: p.repeats,
            order_seed: p.order_seed,
        },
    };
    let json = serde_json::to_string_pretty(&run).unwrap_or_default();
    write("run.json", json + "\n")
}
