//! The data files: `data/*.csv` (columns as in DESIGN.md, extra columns after them) and
//! `data/run.json`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::btree::Sqlite;
use crate::collisions::CollisionRow;
use crate::engine::{Engine, Measured};
use crate::generation::Generation;
use crate::machine::{Machine, Primitive};
use crate::properties::PropRow;
use crate::{Config, Error, Params};

/// Everything one run measured, for the writers.
#[derive(Debug)]
pub(crate) struct Results<'a> {
    pub config: &'a Config,
    pub params: &'a Params,
    pub machine: &'a Machine,
    pub primitives: &'a [Primitive],
    pub generation: &'a Generation,
    pub properties: &'a [PropRow],
    pub collisions: &'a [CollisionRow],
    /// The engines, in [`crate::ENGINES`]' order (measured now or carried forward).
    pub engines: &'a [Box<dyn Measured>],
}

impl Results<'_> {
    /// The results of engine `E`, for its own sections of the report (empty when it is not
    /// in the list).
    pub fn engine<E: Engine>(&self) -> Cow<'_, E::Results> {
        self.engines
            .iter()
            .find_map(|m| m.as_any().downcast_ref::<E::Results>())
            .map_or_else(|| Cow::Owned(E::Results::default()), Cow::Borrowed)
    }

    /// Scheme names in registry order.
    pub fn entries(&self) -> impl Iterator<Item = &'static str> {
        idkit_all::registry::schemes().iter().map(|e| e.name())
    }

    /// Scheme names with their bit widths.
    pub fn entries_with_bits(&self) -> impl Iterator<Item = (&'static str, u32)> {
        idkit_all::registry::schemes()
            .iter()
            .map(|e| (e.name(), e.info().bits))
    }
}

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
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// Writes the CSV files and `run.json` into `dir`.
pub(crate) fn write_data(r: &Results<'_>, dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let write = |name: &str, body: String| {
        let path = dir.join(name);
        std::fs::write(&path, body).map_err(Error::io(path))
    };

    let mut csv = String::from("scheme,variant,threads,ns_per_id,ids_per_sec,cap_ids_per_sec\n");
    for g in &r.generation.rows {
        let _ = writeln!(
            csv,
            "{},{},{},{:.3},{:.0},{}",
            g.scheme,
            g.variant,
            g.threads,
            g.ns_per_id,
            g.ids_per_sec,
            opt(g.cap_ids_per_sec)
        );
    }
    write("generation.csv", csv)?;

    let mut csv =
        String::from("scheme,random_bits,tick_ms,ids_per_tick,ids_per_sec,probability,period_ms\n");
    for c in r.collisions {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.6e},{:e},{}",
            c.scheme,
            c.random_bits,
            opt(c.tick_ms),
            c.ids_per_tick.map_or(String::new(), |n| format!("{n:.6e}")),
            c.ids_per_sec,
            crate::collisions::PROBABILITY,
            crate::collisions::YEAR_MS
        );
    }
    write("collisions.csv", csv)?;

    let mut csv = String::from(
        "scheme,bytes,string_len_min,string_len_max,order_generators,order_ids,\
         inverted_pair_fraction,max_displacement_ms,unique_generators,unique_ids,\
         unique_duplicates,collision_setup,collision_ids,collision_duplicates\n",
    );
    for p in r.properties {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{:.6},{:.3},{},{},{},{},{},{}",
            p.scheme,
            p.bytes,
            p.string_len_min,
            p.string_len_max,
            p.order_generators,
            p.order_ids,
            p.inverted_pair_fraction,
            p.max_displacement_ms,
            p.unique_generators,
            p.unique_ids,
            p.unique_duplicates,
            p.collision_setup,
            p.collision_ids,
            p.collision_duplicates
        );
    }
    write("properties.csv", csv)?;

    for (name, body) in r.engines.iter().flat_map(|engine| engine.files()) {
        write(&name, body)?;
    }

    let mut csv = String::from("primitive,ns_per_call\n");
    for p in r.primitives {
        let _ = writeln!(csv, "{},{:.2}", p.name, p.ns_per_call);
    }
    write("primitives.csv", csv)?;

    let p = r.params;
    let sqlite = r.engine::<Sqlite>();
    let run = RunJson {
        machine: r.machine,
        profile: p.profile.name(),
        git_revision: &r.machine.git_revision,
        toolchain: &r.machine.toolchain,
        date: &r.machine.date,
        command: &r.config.command,
        primitives: r.primitives,
        pragmas: &sqlite.pragmas,
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
        },
    };
    let json = serde_json::to_string_pretty(&run).unwrap_or_default();
    write("run.json", json + "\n")
}
