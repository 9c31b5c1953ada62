//! Text and JSON for schemes, ids and decoded ids.

use idkit::registry;
use idkit_core::codec::{base62, crockford, hex, radix_encode};
use idkit_core::{Decoded, DynScheme, FieldValue, ParseError, RawId, SchemeInfo, time};
use serde_json::{Map, Value, json};

use crate::Format;

/// `id` in the requested format.
pub fn format_id(
    scheme: &dyn DynScheme,
    id: &RawId,
    format: Format,
    bits: u32,
) -> Result<String, ParseError> {
    let bytes = id.as_bytes();
    Ok(match format {
        Format::Canonical => scheme.format_raw(id)?,
        Format::Decimal => radix_encode(bytes, b"0123456789", 1),
        Format::Hex => hex::encode(bytes),
        Format::Base32 => radix_encode(
            bytes,
            crockford::ALPHABET,
            usize::try_from(bits.div_ceil(5)).unwrap_or(0),
        ),
        Format::Base62 => base62::encode(bytes, base62::width_for(bytes.len())),
    })
}

/// The decoded form of DESIGN.md: `id` is a string, `timestamp_ms` Unix ms, `timestamp`
/// RFC 3339 UTC, fields in layout order; both times `null` for schemes without time.
pub fn decoded_json(scheme: &str, id: &str, decoded: &Decoded) -> Value {
    let mut fields = Map::new();
    for (name, value) in &decoded.fields {
        let v = match value {
            FieldValue::Int(n) => json!(n),
            FieldValue::Hex(h) => json!(h),
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

fn info_json(info: &SchemeInfo, aliases: &[&str], summary: &str) -> Value {
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

/// `idkit schemes --json`.
pub fn schemes_json() -> String {
    let all: Vec<Value> = registry::schemes()
        .iter()
        .map(|e| info_json(&e.info(), e.aliases, e.summary))
        .collect();
    Value::Array(all).to_string()
}

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
    ]];
    for entry in registry::schemes() {
        let info = entry.info();
        rows.push([
            entry.name.to_owned(),
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
        ]);
    }
    let widths: Vec<usize> = (0..7)
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
