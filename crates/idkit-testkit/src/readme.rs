//! The rows a README shows under its queries (`-- → ROW` exactly, `-- ≈ ROW` a row like
//! it), compared by shape where an id or a time differs from day to day.

/// The shape of a shown row: every run of letters, digits and dots one `x`, the rest kept, so
/// that an id, a time or a count of another day has the shape of the README's (a dot is part
/// of its run: a time's fraction, `55.388` or none at `55`).
pub fn shape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().filter(|c| *c != '.') {
        if c.is_ascii_alphanumeric() {
            if !out.ends_with('x') {
                out.push('x');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An SQL block in pieces, each ending where the README shows a query's row: the piece's
/// SQL and the line that shows it (`-- → ...` or `-- ≈ ...`), if any.
pub fn pieces(block: &str) -> Vec<(String, Option<String>)> {
    let mut pieces: Vec<(String, Option<String>)> = vec![(String::new(), None)];
    for line in block.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("-- →") || trimmed.starts_with("-- ≈") {
            pieces.last_mut().unwrap().1 = Some(trimmed.to_owned());
            pieces.push((String::new(), None));
        } else {
            let piece = &mut pieces.last_mut().unwrap().0;
            piece.push_str(line);
            piece.push('\n');
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_another_day_has_the_same_shape_and_a_dropped_column_not() {
        assert_eq!(
            shape("2026-12-07 16:29:55.388+00"),
            shape("2027-01-01 00:00:00+00")
        );
        assert_ne!(shape("7 | hello"), shape("7"));
    }

    #[test]
    fn a_block_splits_after_each_shown_row() {
        let p = pieces("SELECT 1;\n-- → 1\nSELECT 2;\n");
        assert_eq!(p.len(), 2);
        assert_eq!(p[0], ("SELECT 1;\n".to_owned(), Some("-- → 1".to_owned())));
        assert_eq!(p[1], ("SELECT 2;\n".to_owned(), None));
    }
}
