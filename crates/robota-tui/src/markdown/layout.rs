//! Parsed markdown nodes → terminal lines for one width: prose wrapped at words with its
//! prefix on every row (a list marker on the first, its hanging indent on the rest), code
//! hard-wrapped, rules and tables sized to the width. A prefix wider than the width is cut
//! so that content always keeps at least two columns and no line exceeds the width.

use ratatui::text::{Line, Span};

use super::code::{CodeBlock, wrap_code_row};
use super::parse::{Node, Prefix};
use super::table::layout_table;
use crate::theme::Theme;
use crate::wrap::{Row, WrapMode, spans_width, truncate_spans, wrap_spans};

/// A prefix cut to leave content room in `width`, and the room left.
fn fit_prefix(prefix: &Row, width: usize) -> (Row, usize) {
    let keep = width.saturating_sub(width.min(2));
    let w = spans_width(prefix);
    if w <= keep {
        return (prefix.clone(), width - w);
    }
    if keep == 0 {
        return (Vec::new(), width);
    }
    let (mut cut, _) = truncate_spans(prefix, keep + 1);
    // `truncate_spans` marks the cut with `…`; a prefix is cut silently.
    cut.pop();
    let w = spans_width(&cut);
    (cut, width - w)
}

fn line(prefix: &Row, row: Row) -> Line<'static> {
    let mut spans = Vec::with_capacity(prefix.len() + row.len());
    spans.extend(prefix.iter().cloned());
    spans.extend(row);
    Line::from(spans)
}

/// Emits `rows` (already wrapped to the room the prefixes leave) with their prefixes.
fn emit(first: &Row, rest: &Row, rows: Vec<Row>, out: &mut Vec<Line<'static>>) {
    for (i, row) in rows.into_iter().enumerate() {
        out.push(line(if i == 0 { first } else { rest }, row));
    }
}

/// Lays out a code block's rows under `prefix`.
pub(crate) fn layout_code_rows(
    prefix: &Prefix,
    rows: &[Row],
    first_row: bool,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    let (first, first_room) = fit_prefix(&prefix.first, width);
    let (rest, rest_room) = fit_prefix(&prefix.rest, width);
    let room = first_room.min(rest_room);
    let mut is_first = first_row;
    for row in rows {
        for wrapped in wrap_code_row(row, room) {
            out.push(line(if is_first { &first } else { &rest }, wrapped));
            is_first = false;
        }
    }
}

/// Lays out one node.
fn layout_node(node: &Node, width: usize, theme: &Theme, out: &mut Vec<Line<'static>>) {
    match node {
        Node::Text { prefix, spans } => {
            let (first, first_room) = fit_prefix(&prefix.first, width);
            let (rest, rest_room) = fit_prefix(&prefix.rest, width);
            let rows = wrap_spans(spans, first_room, rest_room, WrapMode::Words);
            emit(&first, &rest, rows, out);
        }
        Node::Code { prefix, block } => layout_code(prefix, block, width, out),
        Node::Rule { prefix } => {
            let (first, room) = fit_prefix(&prefix.first, width);
            let rule = vec![Span::styled("─".repeat(room), theme.rule)];
            out.push(line(&first, rule));
        }
        Node::Table { prefix, table } => {
            let (first, first_room) = fit_prefix(&prefix.first, width);
            let (rest, rest_room) = fit_prefix(&prefix.rest, width);
            let rows = layout_table(table, first_room.min(rest_room), theme);
            emit(&first, &rest, rows, out);
        }
        Node::Blank { prefix } => {
            let (prefix, _) = fit_prefix(prefix, width);
            out.push(Line::from(prefix));
        }
    }
}

fn layout_code(prefix: &Prefix, block: &CodeBlock, width: usize, out: &mut Vec<Line<'static>>) {
    if block.rows().is_empty() {
        let (first, _) = fit_prefix(&prefix.first, width);
        out.push(Line::from(first));
        return;
    }
    layout_code_rows(prefix, block.rows(), true, width, out);
}

/// Lays out nodes for `width` columns (at least 1), appending to `out`.
pub(crate) fn layout_nodes(
    nodes: &[Node],
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let width = width.max(1);
    for node in nodes {
        layout_node(node, width, theme, out);
    }
}
