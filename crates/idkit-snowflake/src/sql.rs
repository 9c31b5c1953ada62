//! Ids of a layout made inside PostgreSQL: the PL/pgSQL function Instagram described in
//! 2012 ("Sharding & IDs at Instagram"), written for any 64-bit [`LayoutSpec`].
//!
//! The function reads the time from `clock_timestamp()`, takes the sequence from a
//! PostgreSQL sequence that cycles through the sequence field's values, and puts the
//! constant fields (a shard, a worker...) in as literals: one function per shard.
//!
//! ```
//! use idkit_snowflake::{preset, sql};
//!
//! let layout = preset("snowflake-instagram").unwrap();
//! let text = sql::plpgsql(layout, &[("shard", 5)], "next_id")?;
//! assert!(text.contains("CREATE OR REPLACE FUNCTION next_id() RETURNS bigint"));
//! assert!(text.contains("(5::bigint << 10)"));
//! # Ok::<(), idkit_snowflake::sql::SqlError>(())
//! ```
//!
//! The function's limit is the sequence: it hands out `2^bits` values per tick and per
//! shard, then starts again at 0. More ids than that in one tick (1,024 a millisecond for
//! Instagram's 10 bits) repeat earlier ids; the printed text says so in a comment.

use crate::prelude::*;
use core::fmt::{self, Write as _};

use crate::ConfigError;
use crate::layout::{FieldKind, LayoutSpec};

/// Why a layout or its values cannot become a PL/pgSQL function.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SqlError {
    /// The layout's word is wider than PostgreSQL's `bigint`.
    WordTooWide {
        /// The layout.
        layout: String,
        /// Its word size.
        bits: u32,
    },
    /// A constant field was given no value.
    MissingValue {
        /// The field.
        name: String,
    },
    /// A value was given for a field the layout does not have (or for `time` or the
    /// sequence, which the function computes), or one wider than its field: the layout's
    /// own check, [`LayoutSpec::fixed_field`].
    Field(ConfigError),
    /// The function name is not a plain SQL identifier (optionally schema-qualified).
    BadName {
        /// The name given.
        name: String,
    },
    /// The layout's time field, below the sign bit, ended before now: the function would
    /// refuse every call.
    TimeRanOut {
        /// The layout.
        layout: String,
        /// The last Unix millisecond the function could give an id in.
        last_ms: u64,
    },
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WordTooWide { layout, bits } => write!(
                f,
                "{layout} is a {bits}-bit layout; a PostgreSQL function returns bigint, 64 bits"
            ),
            Self::MissingValue { name } => {
                write!(f, "the layout's field {name:?} needs a value")
            }
            Self::Field(e) => e.fmt(f),
            Self::BadName { name } => write!(
                f,
                "invalid function name {name:?}: expected letters, digits and _, \
                 not starting with a digit, optionally schema.name"
            ),
            Self::TimeRanOut { layout, last_ms } => write!(
                f,
                "{layout}'s time ran out at {}: the function could make no id (widen the time \
                 field, lengthen the tick or move the epoch)",
                idkit_core::time::format_rfc3339_ms(*last_ms)
            ),
        }
    }
}

impl core::error::Error for SqlError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Field(e) => Some(e),
            _ => None,
        }
    }
}

/// The PL/pgSQL that creates `function()` (and its sequence, `function_seq`) making ids of
/// `layout` with the constant fields set to `values`.
///
/// Run the text once per database (or schema) with `psql -f` or any client; then
/// `SELECT function()` returns the next id as a `bigint`. A layout whose top field reaches
/// the sign bit (Discord's and Mastodon's use all 64 bits) makes positive ids until the
/// time field reaches that bit; from then on the function raises an error rather than
/// return a negative number.
///
/// # Errors
///
/// - [`SqlError::WordTooWide`] for a 128-bit layout;
/// - [`SqlError::MissingValue`] when a constant field has no value;
/// - [`SqlError::Field`] for a value of a field the layout lacks, or wider than its field;
/// - [`SqlError::BadName`] when `function` is not a plain identifier;
/// - [`SqlError::TimeRanOut`] when the layout's time, below the sign bit, ended before the
///   system clock's now.
pub fn plpgsql(
    layout: &LayoutSpec,
    values: &[(&str, u64)],
    function: &str,
) -> Result<String, SqlError> {
    if layout.word_bits() > 64 {
        return Err(SqlError::WordTooWide {
            layout: layout.name().to_owned(),
            bits: layout.word_bits(),
        });
    }
    if !is_identifier(function) {
        return Err(SqlError::BadName {
            name: function.to_owned(),
        });
    }
    let constants: Vec<_> = layout
        .fields()
        .filter(|f| f.kind == FieldKind::Fixed)
        .collect();
    for (name, value) in values {
        layout.fixed_field(name, *value).map_err(SqlError::Field)?;
    }
    let time = layout.time();
    let sequence = layout.sequence();
    // The largest tick whose id stays below the sign bit.
    let max_tick = time.max().min((u64::MAX >> 1) >> time.shift);
    let last_ms = layout
        .tick_start_ms(max_tick)
        .and_then(|start| start.checked_add(layout.tick_ms() - 1));
    if let Some(last_ms) = last_ms
        && last_ms < idkit_core::Clock::now_ms(&idkit_core::SystemClock)
    {
        return Err(SqlError::TimeRanOut {
            layout: layout.name().to_owned(),
            last_ms,
        });
    }
    let mut parts = vec![format!("(ticks << {})", time.shift)];
    let mut set = Vec::new();
    for field in &constants {
        let value = values
            .iter()
            .find(|(name, _)| *name == field.name)
            .map(|(_, v)| *v)
            .ok_or_else(|| SqlError::MissingValue {
                name: field.name.to_owned(),
            })?;
        parts.push(format!("({value}::bigint << {})", field.shift));
        set.push(format!("{} {value}", field.name));
    }
    parts.push(if sequence.shift == 0 {
        "seq".to_owned()
    } else {
        format!("(seq << {})", sequence.shift)
    });
    let seq_name = format!("{function}_seq");
    let per_tick = sequence.max() + 1;
    let unit = if layout.tick_ms() == 1 {
        "millisecond".to_owned()
    } else {
        format!("tick of {} ms", layout.tick_ms())
    };
    // Most significant first, as the layout declares them.
    let mut in_order: Vec<_> = core::iter::once(time).chain(layout.fields()).collect();
    in_order.sort_by_key(|f| core::cmp::Reverse(f.shift));
    let fields = in_order
        .iter()
        .map(|f| format!("{} {}", f.name, f.bits))
        .collect::<Vec<_>>()
        .join(", ");

    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "-- Ids of the layout {} ({} bits: {fields}; {} ms ticks from Unix ms {}),",
        layout.name(),
        layout.word_bits(),
        layout.tick_ms(),
        layout.epoch_ms()
    );
    let _ = writeln!(
        out,
        "-- made inside PostgreSQL{}.",
        if set.is_empty() {
            String::new()
        } else {
            format!(" with {}", set.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "-- Limit: {seq_name} gives {per_tick} values per {unit}, then starts again at 0;\n\
         -- more than {per_tick} ids in one {unit} from this function repeat earlier ids.\n\
         -- Every database or schema that makes ids needs its own distinct constant fields."
    );
    let _ = writeln!(
        out,
        "CREATE SEQUENCE IF NOT EXISTS {seq_name} MINVALUE 0 MAXVALUE {} START 0 CYCLE;",
        sequence.max()
    );
    let _ = writeln!(
        out,
        "CREATE OR REPLACE FUNCTION {function}() RETURNS bigint\n\
         LANGUAGE plpgsql VOLATILE AS $idkit$\n\
         DECLARE\n    ticks bigint;\n    seq bigint;\nBEGIN\n    \
         ticks := (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - {}) / {};\n    \
         IF ticks < 0 OR ticks > {max_tick} THEN\n        \
         RAISE EXCEPTION '{function}: the clock is outside the layout''s range (tick %, expected 0 to {max_tick})', ticks;\n    \
         END IF;\n    \
         seq := nextval('{seq_name}');\n    \
         RETURN {};\nEND;\n$idkit$;",
        layout.epoch_ms(),
        layout.tick_ms(),
        parts.join(" | ")
    );
    Ok(out)
}

/// `name` or `schema.name`, each part `[A-Za-z_][A-Za-z0-9_]*`.
fn is_identifier(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() <= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset;

    /// Asserts that `text` holds each of `parts`, showing the text when one is missing.
    #[track_caller]
    fn assert_holds(text: &str, parts: &[&str]) {
        for part in parts {
            assert!(text.contains(part), "{part:?} missing from\n{text}");
        }
    }

    #[test]
    fn instagram_matches_its_layout() {
        let text = plpgsql(
            preset("snowflake-instagram").unwrap(),
            &[("shard", 5)],
            "next_id",
        )
        .unwrap();
        assert_holds(
            &text,
            &[
                "MAXVALUE 1023",
                "- 1314220021721) / 1",
                "RETURN (ticks << 23) | (5::bigint << 10) | seq;",
                "more than 1024 ids in one millisecond",
            ],
        );
    }

    #[test]
    fn sonyflake_puts_the_sequence_above_the_machine() {
        let text = plpgsql(preset("sonyflake").unwrap(), &[("machine", 7)], "sf").unwrap();
        assert_holds(
            &text,
            &[
                "RETURN (ticks << 24) | (7::bigint << 0) | (seq << 16);",
                ") / 10;",
                "per tick of 10 ms",
            ],
        );
    }

    #[test]
    fn the_header_lists_the_fields_from_the_top_bit() {
        let text = plpgsql(preset("sonyflake").unwrap(), &[("machine", 7)], "sf").unwrap();
        assert!(
            text.starts_with(
                "-- Ids of the layout sonyflake (64 bits: time 39, sequence 8, machine 16;"
            ),
            "{text}"
        );
        let top = LayoutSpec::builder("shard-first", 64)
            .field("shard", 10)
            .time(41)
            .sequence(12)
            .build()
            .unwrap();
        let text = plpgsql(&top, &[("shard", 3)], "f").unwrap();
        assert_holds(&text, &["(64 bits: shard 10, time 41, sequence 12;"]);
    }

    #[test]
    fn a_layout_whose_time_ran_out_is_refused() {
        // 10 bits of milliseconds from 1970: 1,024 ms.
        let short = LayoutSpec::builder("short", 64)
            .time(10)
            .sequence(10)
            .build()
            .unwrap();
        let e = plpgsql(&short, &[], "f").unwrap_err();
        assert_eq!(
            e,
            SqlError::TimeRanOut {
                layout: "short".into(),
                last_ms: 1023
            }
        );
        assert!(
            e.to_string()
                .starts_with("short's time ran out at 1970-01-01T00:00:01.023Z"),
            "{e}"
        );
        // Discord's 42 bits end in 2154, but below the sign bit (41) in 2084.
        let discord = preset("snowflake-discord").unwrap();
        assert!(plpgsql(discord, &[("worker", 1), ("process", 2)], "d").is_ok());
    }

    #[test]
    fn full_width_layouts_stop_below_the_sign_bit() {
        // Discord: 42 time bits at shift 22; the largest positive id has tick 2^41 - 1.
        let text = plpgsql(
            preset("snowflake-discord").unwrap(),
            &[("worker", 1), ("process", 2)],
            "d",
        )
        .unwrap();
        assert!(text.contains(&format!("ticks > {}", (1u64 << 41) - 1)));
    }

    #[test]
    fn refusals_name_the_problem() {
        let boundary = preset("flake-boundary").unwrap();
        let e = plpgsql(boundary, &[("worker", 1)], "f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "flake-boundary is a 128-bit layout; a PostgreSQL function returns bigint, 64 bits"
        );
        let insta = preset("snowflake-instagram").unwrap();
        assert_eq!(
            plpgsql(insta, &[], "f").unwrap_err(),
            SqlError::MissingValue {
                name: "shard".into()
            }
        );
        assert_eq!(
            plpgsql(insta, &[("shard", 8192)], "f").unwrap_err(),
            SqlError::Field(ConfigError::FieldOutOfRange {
                name: "shard".into(),
                value: 8192,
                max: 8191
            })
        );
        assert!(matches!(
            plpgsql(insta, &[("shard", 1), ("worker", 1)], "f").unwrap_err(),
            SqlError::Field(ConfigError::UnknownField { .. })
        ));
        for bad in ["", "1f", "a;drop", "a.b.c", "a-b"] {
            assert!(
                matches!(
                    plpgsql(insta, &[("shard", 1)], bad),
                    Err(SqlError::BadName { .. })
                ),
                "{bad}"
            );
        }
        assert!(plpgsql(insta, &[("shard", 1)], "ids.next_id").is_ok());
    }
}
