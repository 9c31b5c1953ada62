//! Text and JSON forms of decoded ids and scheme facts, shared by the service and the
//! `idkit` command line so both print the same thing.

use crate::registry;
use idkit_core::{Decoded, FieldValue, SchemeInfo, time};
use serde_json::{Map, Value, json};

/// The decoded form of DESIGN.md: `id` is a string, `timestamp_ms` Unix ms, `timestamp`
/// RFC 3339 UTC, fields in layout order; both times `null` for schemes without time.
pub fn decoded_json(scheme: &str, id: &str, decoded: &Decoded) -> Value {
    let mut fields = Map::new();
    for (name, value) in &decoded.fields {
        let v = match value {
            FieldValue::Int(n) => json!(n),
            FieldValue::Hex(h) | FieldValue::Text(h) => json!(h),
        };
        fields.insert((*name).to_owned(), v);
    }
    json!({
        "scheme": scheme,
        "id": id,
        "timestamp_ms": decoded.timestamp_ms,
        "timestamp": decoded.timestamp_rfc3339(),
        "fields": fields,
    })
}

/// A short aligned listing for people.
pub fn decoded_plain(scheme: &str, id: &str, decoded: &Decoded) -> String {
    let mut rows = vec![("scheme", scheme.to_owned()), ("id", id.to_owned())];
    rows.push((
        "timestamp",
        match decoded.timestamp_ms {
            Some(ms) => format!("{} ({ms})", time::format_rfc3339_ms(ms)),
            None => "none (this scheme has no time field)".to_owned(),
        },
    ));
    for (name, value) in &decoded.fields {
        rows.push((name, value.to_string()));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<width$}  {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A scheme's facts as JSON, as `idkit schemes --json` and `GET /v1/schemes` print them.
pub fn info_json(info: &SchemeInfo, aliases: &[&str], summary: &str) -> Value {
    json!({
        "name": info.name,
        "aliases": aliases,
        "summary": summary,
        "bits": info.bits,
        "bytes": info.bytes,
        "string_len": info.string_len,
        "alphabet": info.alphabet.name(),
        "time_ordered": info.time_precision_ms.is_some(),
        "time_precision_ms": info.time_precision_ms,
        "coordination": info.coordination.to_string(),
        "cap_ids_per_sec": info.cap_per_sec,
        "time_runs_out_ms": info.time_runs_out_ms,
        "time_runs_out": info.time_runs_out_ms.map(time::format_rfc3339_ms),
    })
}

/// Every registered scheme's facts as a JSON array (`idkit schemes --json`).
pub fn schemes_json() -> String {
    let all: Vec<Value> = registry::schemes()
        .iter()
        .map(|e| info_json(&e.info(), e.aliases(), e.summary()))
        .collect();
    Value::Array(all).to_string()
}
