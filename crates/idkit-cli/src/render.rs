//! Text and JSON for schemes, ids and decoded ids.

use idkit_all::registry;
use idkit_core::time;

pub use idkit_all::render::{
    decoded_json, decoded_plain, decoded_plain_with, format_id, quoted, read_id, schemes_json,
};

/// `idkit schemes`.
pub fn schemes_table() -> String {
    let mut rows = vec![[
        "name".to_owned(),
        "bits".to_owned(),
        "string".to_owned(),
        "time order".to_owned(),
        "coordination".to_owned(),
        "cap/s per generator".to_owned(),
        "time runs out".to_owned(),
        "aliases".to_owned(),
    ]];
    for entry in registry::all() {
        let info = entry.info();
        rows.push([
            entry.name().to_owned(),
            info.bits.to_string(),
            format!("{} {}", info.string_len, info.alphabet.name()),
            info.time_precision_ms
                .map_or("none".to_owned(), |p| format!("{p} ms")),
            info.coordination.to_string(),
            info.cap_per_sec.map_or("-".to_owned(), |c| c.to_string()),
            info.time_runs_out_ms.map_or("-".to_owned(), |ms| {
                let stamp = time::format_rfc3339_ms(ms);
                // The date part: years past 9999 have more than four digits.
                stamp.split('T').next().unwrap_or(&stamp).to_owned()
            }),
            entry.aliases().join(", "),
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
