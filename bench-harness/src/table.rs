//! The tables the harness writes, the report's (Markdown) and the data files' (CSV): each
//! column's header written beside the cell it heads, so that a header cannot drift from its
//! cells and a table is one list.

use std::fmt::{self, Write as _};

/// One column: its header (a CSV file's column name), whether it holds figures
/// (right-aligned in Markdown) or names, and its cell for a row.
pub(crate) struct Column<T> {
    head: &'static str,
    figure: bool,
    cell: fn(&T) -> String,
}

/// A column of names (left-aligned).
pub(crate) const fn text<T>(head: &'static str, cell: fn(&T) -> String) -> Column<T> {
    Column {
        head,
        figure: false,
        cell,
    }
}

/// A column of figures (right-aligned).
pub(crate) const fn figure<T>(head: &'static str, cell: fn(&T) -> String) -> Column<T> {
    Column {
        head,
        figure: true,
        cell,
    }
}

/// A table over rows of `T`, in Markdown or as CSV. Displayed, it is its Markdown header and
/// alignment lines, so a section's prose ends with `{TABLE}` and its rows follow
/// ([`Table::row`]); [`Table::csv`] writes a whole CSV file.
pub(crate) struct Table<T: 'static>(pub &'static [Column<T>]);

impl<T> Table<T> {
    /// Appends `item`'s row.
    pub(crate) fn row(&self, md: &mut String, item: &T) {
        md.push('|');
        for c in self.0 {
            let _ = write!(md, " {} |", (c.cell)(item));
        }
        md.push('\n');
    }

    /// The rows as a CSV file: the header line, then a line per row, cells as their columns
    /// write them (a cell that may hold a comma quotes itself).
    pub(crate) fn csv<'a>(&self, rows: impl IntoIterator<Item = &'a T>) -> String {
        let heads: Vec<&str> = self.0.iter().map(|c| c.head).collect();
        let mut csv = heads.join(",") + "\n";
        for item in rows {
            let cells: Vec<String> = self.0.iter().map(|c| (c.cell)(item)).collect();
            csv += &cells.join(",");
            csv.push('\n');
        }
        csv
    }
}

impl<T> fmt::Display for Table<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("|")?;
        for c in self.0 {
            write!(f, " {} |", c.head)?;
        }
        f.write_str("\n|")?;
        for c in self.0 {
            f.write_str(if c.figure { "---:|" } else { "---|" })?;
        }
        Ok(())
    }
}

// The figures' formats, the same in every table and sentence of the report.

/// A rate per second: `12.3 k/s`, `1.23 M/s`.
pub(crate) fn rate(v: f64) -> String {
    if v >= 1e12 {
        format!("{v:.2e}/s")
    } else if v >= 1e9 {
        format!("{:.2} G/s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} M/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k/s", v / 1e3)
    } else if v >= 1.0 {
        format!("{v:.0}/s")
    } else {
        format!("{v:.1e}/s")
    }
}

pub(crate) fn ns(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} µs", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.1} ns")
    } else {
        format!("{v:.2} ns")
    }
}

pub(crate) fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A fraction that may be tiny, as a percentage with enough digits to tell it from zero.
pub(crate) fn small_pct(v: f64) -> String {
    if v == 0.0 {
        "0%".to_owned()
    } else if v < 0.0001 {
        format!("{:.5}%", v * 100.0)
    } else if v < 0.01 {
        format!("{:.3}%", v * 100.0)
    } else {
        pct(v)
    }
}

pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1_048_576.0)
}

pub(crate) fn kib(bytes: f64) -> String {
    format!("{:.1} KiB", bytes / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: Table<(&str, u32)> = Table(&[
        text("name", |p| format!("`{}`", p.0)),
        figure("count", |p| p.1.to_string()),
    ]);

    #[test]
    fn a_table_is_its_header_alignment_and_rows() {
        let mut md = format!("{PAIRS}\n");
        PAIRS.row(&mut md, &("a", 1));
        PAIRS.row(&mut md, &("b", 22));
        assert_eq!(
            md,
            "| name | count |\n|---|---:|\n| `a` | 1 |\n| `b` | 22 |\n"
        );
    }

    #[test]
    fn as_csv_it_is_the_column_names_then_a_line_per_row() {
        assert_eq!(
            PAIRS.csv(&[("a", 1), ("b", 22)]),
            "name,count\n`a`,1\n`b`,22\n"
        );
        assert_eq!(PAIRS.csv(&[]), "name,count\n");
    }
}
