//! The codec vectors runner: one data file of valid and invalid strings, checked against a
//! scheme's definition through its generator-free codec.
//!
//! ```toml
//! # source: where the vectors come from (a spec section, an upstream test file)
//!
//! [[valid]]
//! name = "spec-example"
//! text = "01ARZ3NDEKTSV4RRFFQ69G5FAV"   # parses
//! canonical = "..."                    # optional: its canonical spelling, if not `text`
//! hex = "01563e3ab5d3d6764c61efb99302bd5b"  # optional: the id's bytes
//! timestamp_ms = 1469922850259         # optional: the decoded time
//! no_time = true                       # optional: the scheme has no time field
//! fields = { randomness = "d6764c61efb99302bd5b" }  # optional: decoded fields
//!
//! [[invalid]]
//! name = "letter-u"
//! text = "01ARZ3NDEKTSV4RRFFQ69G5FAU"
//! error = "invalid character ..."      # optional: the exact message
//! ```

use std::collections::BTreeMap;

use idkit_core::codec::hex;
use idkit_core::definition::SchemeDef;
use idkit_core::{FieldValue, RawId};
use serde::Deserialize;

use crate::load_vectors;

/// A codec vector file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    valid: Vec<Valid>,
    #[serde(default)]
    invalid: Vec<Invalid>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Valid {
    name: String,
    text: String,
    canonical: Option<String>,
    hex: Option<String>,
    timestamp_ms: Option<u64>,
    #[serde(default)]
    no_time: bool,
    #[serde(default)]
    fields: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Invalid {
    name: String,
    text: String,
    error: Option<String>,
}

/// Checks every vector of `tests/data/<name>.toml` (see the [module docs](self)) against
/// `def`'s codec: valid strings parse, decode to the given time, fields and bytes, and format
/// back to their canonical spelling; invalid strings are refused (with the given message).
/// Returns how many vectors were checked.
///
/// # Panics
///
/// On the first vector that does not hold, naming it.
pub fn run(def: &dyn SchemeDef, manifest_dir: &str, name: &str) -> usize {
    let file: File = load_vectors(manifest_dir, name);
    let codec = def.codec();
    for v in &file.valid {
        let at = format!("{name}.toml, valid {:?}", v.name);
        let decoded = codec
            .decode_text(&v.text)
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        let canonical = v.canonical.as_deref().unwrap_or(&v.text);
        assert_eq!(
            codec.canonical_text(&v.text).unwrap(),
            canonical,
            "{at}: canonical"
        );
        if v.timestamp_ms.is_some() || v.no_time {
            assert_eq!(decoded.timestamp_ms, v.timestamp_ms, "{at}: timestamp_ms");
        }
        for (field, want) in &v.fields {
            let got = decoded
                .field(field)
                .unwrap_or_else(|| panic!("{at}: no field {field:?} in {decoded:?}"));
            let matches = match (got, want) {
                (FieldValue::Int(n), toml::Value::Integer(w)) => i64::try_from(*n).ok() == Some(*w),
                (FieldValue::Int(n), toml::Value::String(w)) => n.to_string() == *w,
                (FieldValue::Hex(s) | FieldValue::Text(s), toml::Value::String(w)) => s == w,
                _ => false,
            };
            assert!(matches, "{at}: field {field}: got {got:?}, want {want}");
        }
        let raw = codec.parse_raw(&v.text).unwrap();
        if let Some(want) = &v.hex {
            assert_eq!(hex::encode(raw.as_bytes()), *want, "{at}: bytes");
            let bytes: Vec<u8> = (0..want.len() / 2)
                .map(|i| u8::from_str_radix(&want[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            assert_eq!(RawId::from_bytes(&bytes).unwrap(), raw, "{at}: from bytes");
        }
        assert_eq!(
            codec.decode_raw(&raw).unwrap().timestamp_ms,
            decoded.timestamp_ms,
            "{at}: decode_raw"
        );
    }
    for v in &file.invalid {
        let at = format!("{name}.toml, invalid {:?}", v.name);
        let err = match codec.decode_text(&v.text) {
            Ok(d) => panic!("{at}: {:?} was accepted as {d:?}", v.text),
            Err(e) => e,
        };
        assert!(
            codec.parse_raw(&v.text).is_err(),
            "{at}: parse_raw accepted it"
        );
        if let Some(want) = &v.error {
            assert_eq!(err.to_string(), *want, "{at}: message");
        }
    }
    file.valid.len() + file.invalid.len()
}
