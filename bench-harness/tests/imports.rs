//! The harness's modules import one way (ARCHITECTURE.md, "The harness"): the report's writers use
//! the engines, the engines use the interface (`engine`) and what engines share, and the
//! interface imports neither the report's writers nor any engine; no engine imports another,
//! and no two top-level modules import each other, directly or around a circle.
//!
//! Read from the sources: every `crate::` path outside comments, with `use crate::{a, b::c}`
//! groups taken apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules that write the report and its files from every engine's results.
const WRITERS: [&str; 3] = ["report", "output", "charts"];

/// A source file's module path below the crate (`src/engines/postgres/report.rs` is
/// `engines::postgres::report`; `mod.rs` is its folder's module; `lib.rs` is the root, empty).
fn module_of(file: &Path, src: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The paths a source names from the crate's root, as lists of segments (`crate::engine::
/// report::Results` is `engine`, `report`, `Results`), comments left out.
fn crate_paths(source: &str) -> Vec<Vec<String>> {
    let code: String = source
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let preceded = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if preceded.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `idkit_crate::`, not this crate
        }
        expand(rest, Vec::new(), &mut paths);
    }
    paths
}

/// The paths that start at `text` (just after `prefix::`): one path, or a `{...}` group's
/// each.
fn expand(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(group) = text.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(&group[start..i], prefix.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(group[start..i].trim_start(), prefix.clone(), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let text = text.trim_start();
    let name: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix);
        }
        return;
    }
    let mut path = prefix;
    path.push(name.clone());
    match text[name.len()..].strip_prefix("::") {
        Some(more) => expand(more, path, out),
        None => out.push(path),
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every module's file and the modules of this crate it names (paths whose first segment is
/// a module: lowercase), by module path.
fn imports() -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    files
        .iter()
        .map(|file| {
            let paths = crate_paths(&std::fs::read_to_string(file).unwrap())
                .into_iter()
                .filter(|p| p[0].starts_with(|c: char| c.is_ascii_lowercase()))
                .collect();
            (module_of(file, &src), paths)
        })
        .collect()
}

#[test]
fn the_paths_are_read_from_groups_and_past_comments() {
    let source = "use crate::engine::report::{self, Results};\n\
                  // crate::report::write\n\
                  use crate::{Error, engines::{ENGINES, sqlite::Sqlite}};\n\
                  let x = idkit_crate::y; crate::charts::draw_all(r);";
    let paths: Vec<String> = crate_paths(source).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "engine::report::self",
            "engine::report::Results",
            "Error",
            "engines::ENGINES",
            "engines::sqlite::Sqlite",
            "charts::draw_all",
        ]
    );
}

#[test]
fn the_interface_imports_no_engine_and_none_of_the_writers() {
    let mut found = Vec::new();
    for (module, paths) in imports() {
        if module.first().map(String::as_str) != Some("engine") {
            continue;
        }
        for path in paths {
            if path[0] == "engines" || WRITERS.contains(&path[0].as_str()) {
                found.push(format!(
                    "{} uses crate::{}",
                    module.join("::"),
                    path.join("::")
                ));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn an_engine_imports_no_other_engine_and_none_of_the_writers() {
    let mut engines = 0;
    let mut found = Vec::new();
    for (module, paths) in imports() {
        let [top, engine, ..] = &module[..] else {
            continue;
        };
        if top != "engines" {
            continue;
        }
        engines += 1;
        for path in paths {
            let other_engine = path[0] == "engines" && path.get(1).is_some_and(|e| e != engine);
            if other_engine || WRITERS.contains(&path[0].as_str()) {
                found.push(format!(
                    "{} uses crate::{}",
                    module.join("::"),
                    path.join("::")
                ));
            }
        }
    }
    assert!(engines >= 3, "the engines' files were not found");
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, paths) in imports() {
        let Some(from) = module.first() else {
            continue; // the crate's root declares every module
        };
        for path in paths {
            if path[0] != *from {
                edges
                    .entry(from.clone())
                    .or_default()
                    .insert(path[0].clone());
            }
        }
    }
    assert!(edges["report"].contains("engines"), "{edges:#?}");
    // Depth-first search from every module; a module met again on the current path closes a
    // circle.
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|m| m == at) {
            let mut circle = path[i..].to_vec();
            circle.push(at.to_owned());
            return Some(circle);
        }
        if !done.insert(at.to_owned()) {
            return None;
        }
        path.push(at.to_owned());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for start in edges.keys() {
        if let Some(circle) = visit(start, &edges, &mut Vec::new(), &mut done) {
            panic!("an import circle: {}", circle.join(" -> "));
        }
    }
}
