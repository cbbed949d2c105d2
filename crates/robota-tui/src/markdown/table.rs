//! Tables laid out to fit the width: columns keep their natural width when everything
//! fits, else share the room fairly (narrow columns keep theirs, wide ones shrink and wrap
//! their cells); when even that leaves too little room per column the table is shown as
//! `header: value` lines per row instead.

use pulldown_cmark::Alignment;
use ratatui::text::Span;

use crate::theme::Theme;
use crate::wrap::{Row, WrapMode, display_width, spans_width, wrap_spans};

/// A column narrower than this makes the table fall back to `header: value` lines.
const MIN_COLUMN: usize = 5;

/// A parsed table: header cells, body rows, column alignments.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    pub aligns: Vec<Alignment>,
    pub header: Vec<Row>,
    pub rows: Vec<Vec<Row>>,
}

impl Table {
    pub(crate) fn new(aligns: Vec<Alignment>) -> Self {
        Table {
            aligns,
            header: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len(), self.aligns.len()])
            .max()
            .unwrap_or(0)
    }
}

/// Widest hard line of a cell.
fn natural_width(cell: &Row) -> usize {
    let text: String = cell.iter().map(|s| s.content.as_ref()).collect();
    text.split('\n').map(display_width).max().unwrap_or(0)
}

/// Column widths for `room` columns of content, or `None` when the table cannot fit.
fn column_widths(natural: &[usize], room: usize) -> Option<Vec<usize>> {
    let n = natural.len();
    if n == 0 || room < n * MIN_COLUMN {
        return None;
    }
    if natural.iter().sum::<usize>() <= room {
        return Some(natural.iter().map(|w| (*w).max(1)).collect());
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&c| natural[c]);
    let mut widths = vec![0; n];
    let mut left = room;
    for (i, &c) in order.iter().enumerate() {
        let share = left / (n - i);
        let w = natural[c].min(share).max(1).min(left);
        widths[c] = w;
        left -= w;
    }
    Some(widths)
}

fn border(widths: &[usize], left: &str, mid: &str, right: &str, theme: &Theme) -> Row {
    let mut s = String::from(left);
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            s.push_str(mid);
        }
        s.push_str(&"─".repeat(w + 2));
    }
    s.push_str(right);
    vec![Span::styled(s, theme.table_border)]
}

fn cell_rows(cell: &Row, width: usize) -> Vec<Row> {
    wrap_spans(cell, width, width, WrapMode::Words)
}

fn table_row(
    cells: &[Row],
    widths: &[usize],
    aligns: &[Alignment],
    header: bool,
    theme: &Theme,
) -> Vec<Row> {
    let empty = Vec::new();
    let wrapped: Vec<Vec<Row>> = widths
        .iter()
        .enumerate()
        .map(|(c, w)| {
            let cell = cells.get(c).unwrap_or(&empty);
            let mut rows = cell_rows(cell, *w);
            if header {
                for row in &mut rows {
                    for span in row.iter_mut() {
                        span.style = theme.table_header.patch(span.style);
                    }
                }
            }
            rows
        })
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let bar = Span::styled("│", theme.table_border);
    (0..height)
        .map(|line| {
            let mut out: Row = Vec::new();
            for (c, w) in widths.iter().enumerate() {
                out.push(bar.clone());
                let content = wrapped[c].get(line).cloned().unwrap_or_default();
                let pad = w.saturating_sub(spans_width(&content));
                let (before, after) = match aligns.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                out.push(Span::raw(" ".repeat(before + 1)));
                out.extend(content);
                out.push(Span::raw(" ".repeat(after + 1)));
            }
            out.push(bar.clone());
            out
        })
        .collect()
}

/// Rows of the table laid out in at most `width` columns.
pub(crate) fn layout_table(table: &Table, width: usize, theme: &Theme) -> Vec<Row> {
    let n = table.columns();
    if n == 0 {
        return Vec::new();
    }
    let mut natural = vec![0; n];
    for row in std::iter::once(&table.header).chain(&table.rows) {
        for (c, cell) in row.iter().enumerate() {
            natural[c] = natural[c].max(natural_width(cell));
        }
    }
    let overhead = 3 * n + 1;
    let Some(widths) = column_widths(&natural, width.saturating_sub(overhead)) else {
        return stacked(table, width, theme);
    };
    let mut out = vec![border(&widths, "┌", "┬", "┐", theme)];
    if !table.header.is_empty() {
        out.extend(table_row(
            &table.header,
            &widths,
            &table.aligns,
            true,
            theme,
        ));
        out.push(border(&widths, "├", "┼", "┤", theme));
    }
    for row in &table.rows {
        out.extend(table_row(row, &widths, &table.aligns, false, theme));
    }
    out.push(border(&widths, "└", "┴", "┘", theme));
    out
}

/// The narrow fallback: each body row as `header: value` lines, rows separated by a rule.
fn stacked(table: &Table, width: usize, theme: &Theme) -> Vec<Row> {
    let mut out = Vec::new();
    for (r, row) in table.rows.iter().enumerate() {
        if r > 0 {
            out.push(vec![Span::styled(
                "─".repeat(width.clamp(1, 8)),
                theme.table_border,
            )]);
        }
        for (c, cell) in row.iter().enumerate() {
            let mut spans: Row = Vec::new();
            if let Some(head) = table.header.get(c) {
                for span in head {
                    spans.push(Span::styled(
                        span.content.to_string(),
                        theme.table_header.patch(span.style),
                    ));
                }
                spans.push(Span::styled(": ", theme.table_header));
            }
            spans.extend(cell.iter().cloned());
            out.extend(wrap_spans(&spans, width, width, WrapMode::Words));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(s: &str) -> Row {
        vec![Span::raw(s.to_string())]
    }

    fn sample() -> Table {
        Table {
            aligns: vec![Alignment::Left, Alignment::Right],
            header: vec![cell("Name"), cell("Size")],
            rows: vec![
                vec![cell("alpha"), cell("1")],
                vec![cell("a much longer name here"), cell("22")],
            ],
        }
    }

    fn text(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn fits_at_natural_width() {
        let rows = text(&layout_table(&sample(), 80, &Theme::new(false)));
        assert_eq!(rows[0], "┌─────────────────────────┬──────┐");
        assert_eq!(rows[1], "│ Name                    │ Size │");
        assert_eq!(rows[3], "│ alpha                   │    1 │");
        assert_eq!(rows.len(), 6);
    }

    #[test]
    fn shrinks_and_wraps_to_the_width() {
        let rows = layout_table(&sample(), 20, &Theme::new(false));
        for row in &rows {
            assert!(
                spans_width(row) <= 20,
                "{:?}",
                text(std::slice::from_ref(row))
            );
        }
        assert!(text(&rows).iter().any(|r| r.contains("longer")));
        assert!(rows.len() > 6);
    }

    #[test]
    fn falls_back_to_stacked_rows_when_too_narrow() {
        let rows = text(&layout_table(&sample(), 8, &Theme::new(false)));
        assert_eq!(rows[0], "Name:");
        assert!(rows.iter().all(|r| display_width(r) <= 8));
    }

    #[test]
    fn widths_share_the_room() {
        assert_eq!(column_widths(&[2, 50, 50], 42), Some(vec![2, 20, 20]));
        assert_eq!(column_widths(&[5, 5], 5), None);
    }
}
