//! Wrapping the composer's lines into visual rows by display width, and mapping between
//! text positions and terminal cells. Widths come from ratatui's own `CellWidth` (the
//! `unicode-width` rules plus its terminal fixes), so the cursor always lands where the
//! renderer drew the text: CJK is two columns, combining marks and ZWJ joiners zero.

use ratatui::buffer::CellWidth;

use super::buffer::{Atom, TextPosition};

/// Columns a tab occupies (tabs are kept in the text and drawn as spaces).
pub const TAB_WIDTH: usize = 4;

/// Display width of one atom in terminal cells.
pub fn atom_width(atom: &Atom) -> usize {
    match atom {
        Atom::Grapheme(g) if g.as_ref() == "\t" => TAB_WIDTH,
        Atom::Grapheme(g) if g.chars().any(char::is_control) => 0,
        Atom::Grapheme(g) => usize::from(g.as_ref().cell_width()),
        Atom::Paste { label, .. } => usize::from(label.as_ref().cell_width()),
    }
}

/// One visual row: atoms `start..end` of logical line `line`, `width` cells wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisualRow {
    /// The logical line the row belongs to.
    pub line: usize,
    /// The first atom on the row.
    pub start: usize,
    /// One past the last atom on the row.
    pub end: usize,
    /// Display cells the row's atoms take.
    pub width: usize,
}

/// Wraps every line to `width` columns (at least 1). Lines break after whitespace where
/// possible, else between clusters; an atom wider than the row gets a row of its own.
/// A line whose last row is full gets an empty row after it, so a cursor at its end has
/// a cell to sit in.
pub fn wrap(lines: &[Vec<Atom>], width: usize) -> Vec<VisualRow> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for (line_index, line) in lines.iter().enumerate() {
        let mut start = 0;
        let mut row_width = 0;
        // The last break opportunity in the current row: index after a whitespace atom,
        // and the row width up to it.
        let mut last_break: Option<(usize, usize)> = None;
        let mut i = 0;
        while i < line.len() {
            let w = atom_width(&line[i]);
            if row_width + w > width && i > start {
                let (end, end_width) = match last_break {
                    Some((b, bw)) if b > start => (b, bw),
                    _ => (i, row_width),
                };
                rows.push(VisualRow {
                    line: line_index,
                    start,
                    end,
                    width: end_width,
                });
                start = end;
                row_width = 0;
                last_break = None;
                i = start;
                continue;
            }
            row_width += w;
            i += 1;
            if line[i - 1].is_whitespace() {
                last_break = Some((i, row_width));
            }
        }
        rows.push(VisualRow {
            line: line_index,
            start,
            end: line.len(),
            width: row_width,
        });
        if row_width >= width && !line.is_empty() {
            rows.push(VisualRow {
                line: line_index,
                start: line.len(),
                end: line.len(),
                width: 0,
            });
        }
    }
    rows
}

/// The visual row holding `pos` and the column (cells from the row start) where it sits.
/// A position at a row boundary belongs to the later row.
pub fn locate(rows: &[VisualRow], lines: &[Vec<Atom>], pos: TextPosition) -> (usize, usize) {
    let mut found = None;
    for (i, row) in rows.iter().enumerate() {
        if row.line != pos.row {
            continue;
        }
        found = Some(i);
        if pos.col < row.end {
            break;
        }
    }
    let Some(index) = found else {
        return (0, 0);
    };
    let row = rows[index];
    let col = pos.col.clamp(row.start, row.end);
    let x = lines[row.line][row.start..col].iter().map(atom_width).sum();
    (index, x)
}

/// The position in visual row `index` closest to column `x` (never inside a cluster;
/// a wide cluster straddling `x` resolves to its left edge).
pub fn position_at(
    rows: &[VisualRow],
    lines: &[Vec<Atom>],
    index: usize,
    x: usize,
) -> TextPosition {
    let Some(row) = rows.get(index) else {
        return TextPosition::default();
    };
    let line = &lines[row.line];
    let mut col = row.start;
    let mut used = 0;
    let last_row_of_line = rows.get(index + 1).is_none_or(|next| next.line != row.line);
    // The end of a non-final row is the start of the next one; stop one atom before it.
    let limit = if last_row_of_line || row.end == row.start {
        row.end
    } else {
        row.end - 1
    };
    while col < limit {
        let w = atom_width(&line[col]);
        if used + w > x {
            break;
        }
        used += w;
        col += 1;
    }
    TextPosition { row: row.line, col }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composer::buffer::TextBuffer;

    fn lines(text: &str) -> Vec<Vec<Atom>> {
        let mut b = TextBuffer::default();
        b.insert_str(text);
        b.lines().to_vec()
    }

    fn spans(rows: &[VisualRow]) -> Vec<(usize, usize, usize)> {
        rows.iter().map(|r| (r.line, r.start, r.end)).collect()
    }

    #[test]
    fn widths_count_cjk_twice_and_marks_never() {
        let l = lines("a한e\u{301}👩‍💻\t");
        let widths: Vec<usize> = l[0].iter().map(atom_width).collect();
        assert_eq!(widths, vec![1, 2, 1, 2, TAB_WIDTH]);
    }

    #[test]
    fn rows_break_after_spaces_and_inside_long_words() {
        let l = lines("hello world abcdefghij");
        assert_eq!(
            spans(&wrap(&l, 8)),
            vec![(0, 0, 6), (0, 6, 12), (0, 12, 20), (0, 20, 22)]
        );
    }

    #[test]
    fn a_wide_cluster_never_splits_and_a_full_row_gets_a_cursor_row() {
        let l = lines("가나다");
        let rows = wrap(&l, 5);
        assert_eq!(spans(&rows), vec![(0, 0, 2), (0, 2, 3)]);
        let rows = wrap(&l, 2);
        assert_eq!(
            spans(&rows),
            vec![(0, 0, 1), (0, 1, 2), (0, 2, 3), (0, 3, 3)]
        );
        // Narrower than a cluster: one per row, no endless loop.
        assert_eq!(wrap(&l, 1).len(), 4);
        let (row, x) = locate(&rows, &l, TextPosition { row: 0, col: 3 });
        assert_eq!((row, x), (3, 0));
    }

    #[test]
    fn positions_map_to_rows_and_back() {
        let l = lines("ab\n漢字かな");
        let rows = wrap(&l, 5);
        assert_eq!(spans(&rows), vec![(0, 0, 2), (1, 0, 2), (1, 2, 4)]);
        assert_eq!(locate(&rows, &l, TextPosition { row: 1, col: 1 }), (1, 2));
        assert_eq!(locate(&rows, &l, TextPosition { row: 1, col: 2 }), (2, 0));
        assert_eq!(
            position_at(&rows, &l, 1, 3),
            TextPosition { row: 1, col: 1 }
        );
        assert_eq!(
            position_at(&rows, &l, 1, 9),
            TextPosition { row: 1, col: 1 }
        );
        assert_eq!(
            position_at(&rows, &l, 2, 9),
            TextPosition { row: 1, col: 4 }
        );
        assert_eq!(
            position_at(&rows, &l, 0, 9),
            TextPosition { row: 0, col: 2 }
        );
    }
}
