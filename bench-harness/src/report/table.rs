//! The report's tables: each column's header written beside the cell it heads, so that a
//! header cannot drift from its cells and a table is one list.

use std::fmt::{self, Write as _};

/// One column: its header, whether it holds figures (right-aligned) or names, and its cell
/// for a row.
pub(super) struct Column<T> {
    head: &'static str,
    figure: bool,
    cell: fn(&T) -> String,
}

/// A column of names (left-aligned).
pub(super) const fn text<T>(head: &'static str, cell: fn(&T) -> String) -> Column<T> {
    Column {
        head,
        figure: false,
        cell,
    }
}

/// A column of figures (right-aligned).
pub(super) const fn figure<T>(head: &'static str, cell: fn(&T) -> String) -> Column<T> {
    Column {
        head,
        figure: true,
        cell,
    }
}

/// A Markdown table over rows of `T`. Displayed, it is its header and alignment lines, so a
/// section's prose ends with `{TABLE}` and its rows follow ([`Table::row`]).
pub(super) struct Table<T: 'static>(pub &'static [Column<T>]);

impl<T> Table<T> {
    /// Appends `item`'s row.
    pub(super) fn row(&self, md: &mut String, item: &T) {
        md.push('|');
        for c in self.0 {
            let _ = write!(md, " {} |", (c.cell)(item));
        }
        md.push('\n');
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
}
