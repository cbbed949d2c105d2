//! The diff view of a file change (Edit / Write results, the permission popup's preview):
//! a unified diff computed with `similar` — hunk headers, old and new line numbers, `-`/`+`
//! rows in red and green — collapsed to its first rows with a "… +N lines (ctrl+o to
//! expand)" row unless expanded. The diff is computed once; rendering for a width is cheap.

use std::time::Duration;

use ratatui::text::{Line, Span};
use similar::{Algorithm, ChangeTag, TextDiff};

use crate::theme::Theme;
use crate::wrap::{WrapMode, sanitize, wrap_spans};
use robota_core::ToolDisplay;

/// Diff rows shown while collapsed.
pub const COLLAPSED_ROWS: usize = 20;
/// Context lines around each change.
const CONTEXT: usize = 3;
/// Longest time spent diffing (huge rewrites degrade to a coarser diff, never hang).
const DIFF_TIMEOUT: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    Hunk,
    Context,
    Added,
    Removed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DiffRow {
    kind: RowKind,
    old: Option<usize>,
    new: Option<usize>,
    text: String,
}

/// A computed unified diff of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffView {
    file_path: String,
    created: bool,
    rows: Vec<DiffRow>,
    added: usize,
    removed: usize,
    digits: usize,
}

impl DiffView {
    /// Diffs `before` (None: the file is new) against `after`.
    pub fn new(file_path: &str, before: Option<&str>, after: &str) -> Self {
        let old = before.unwrap_or("");
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old, after);
        let mut rows = Vec::new();
        let (mut added, mut removed, mut widest) = (0, 0, 0);
        for group in diff.grouped_ops(CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_start = first.old_range().start;
            let new_start = first.new_range().start;
            let old_len = last.old_range().end - old_start;
            let new_len = last.new_range().end - new_start;
            let at = |start: usize, len: usize| if len == 0 { start } else { start + 1 };
            rows.push(DiffRow {
                kind: RowKind::Hunk,
                old: None,
                new: None,
                text: format!(
                    "@@ -{},{old_len} +{},{new_len} @@",
                    at(old_start, old_len),
                    at(new_start, new_len)
                ),
            });
            for op in &group {
                for change in diff.iter_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Equal => RowKind::Context,
                        ChangeTag::Delete => {
                            removed += 1;
                            RowKind::Removed
                        }
                        ChangeTag::Insert => {
                            added += 1;
                            RowKind::Added
                        }
                    };
                    let old = change.old_index().map(|i| i + 1);
                    let new = change.new_index().map(|i| i + 1);
                    widest = widest.max(old.unwrap_or(0)).max(new.unwrap_or(0));
                    let value = change.value();
                    let text = value.trim_end_matches('\n').trim_end_matches('\r');
                    rows.push(DiffRow {
                        kind,
                        old,
                        new,
                        text: sanitize(text).into_owned(),
                    });
                }
            }
        }
        DiffView {
            file_path: file_path.to_string(),
            created: before.is_none(),
            rows,
            added,
            removed,
            digits: widest.max(1).to_string().len(),
        }
    }

    /// The diff a tool result carries, if it carries one.
    pub fn from_display(display: &ToolDisplay) -> Option<Self> {
        match display {
            ToolDisplay::FileDiff {
                file_path,
                before,
                after,
            } => Some(DiffView::new(file_path, before.as_deref(), after)),
            ToolDisplay::Todos { .. } | ToolDisplay::Background { .. } => None,
        }
    }

    /// The path of the changed file, as the tool gave it.
    pub fn file_path(&self) -> &str {
        &self.file_path
    }

    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        (self.added, self.removed)
    }

    /// The path shown in the header.
    pub fn path(&self) -> &str {
        &self.file_path
    }

    /// Diff rows (hunk headers included) when fully expanded.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Whether the collapsed view hides rows.
    pub fn is_collapsible(&self) -> bool {
        self.rows.len() > COLLAPSED_ROWS
    }

    /// One line saying what changed, e.g. "Updated src/a.rs with 2 additions and 1 removal".
    pub fn summary(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        if self.created {
            return format!(
                "Created {} ({})",
                self.file_path,
                plural(self.added, "line", "lines")
            );
        }
        if self.rows.is_empty() {
            return format!("No changes to {}", self.file_path);
        }
        format!(
            "Updated {} with {} and {}",
            self.file_path,
            plural(self.added, "addition", "additions"),
            plural(self.removed, "removal", "removals")
        )
    }

    /// The diff rows as lines of at most `width` columns: all of them when `expanded`,
    /// else the first [`COLLAPSED_ROWS`] and a row counting the rest.
    pub fn render(&self, width: u16, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
        let shown = if expanded || !self.is_collapsible() {
            self.rows.len()
        } else {
            COLLAPSED_ROWS
        };
        let rows: Vec<&DiffRow> = self.rows[..shown].iter().collect();
        self.render_rows(&rows, self.rows.len() - shown, width, theme)
    }

    /// The diff in at most `max_lines` lines if cutting unchanged context makes it fit:
    /// context around each change shrinks from 3 lines to none (hunk headers and changed
    /// lines always stay). With no context at all it may still be longer (the caller
    /// scrolls it).
    pub fn render_fitted(&self, width: u16, max_lines: usize, theme: &Theme) -> Vec<Line<'static>> {
        let distance = self.context_distances();
        let mut lines = Vec::new();
        for context in (0..=CONTEXT).rev() {
            let rows = self.rows_with_context(&distance, context);
            lines = self.render_rows(&rows, 0, width, theme);
            if lines.len() <= max_lines {
                break;
            }
        }
        lines
    }

    /// Each row's distance (in rows) to the nearest changed row of its hunk; 0 for
    /// changes and hunk headers.
    fn context_distances(&self) -> Vec<usize> {
        let changed = |r: &DiffRow| matches!(r.kind, RowKind::Added | RowKind::Removed);
        let mut distance = vec![usize::MAX; self.rows.len()];
        let mut last: Option<usize> = None;
        for (i, (row, d)) in self.rows.iter().zip(distance.iter_mut()).enumerate() {
            if row.kind == RowKind::Hunk || changed(row) {
                *d = 0;
                last = changed(row).then_some(i);
            } else if let Some(at) = last {
                *d = i - at;
            }
        }
        let mut next: Option<usize> = None;
        for (i, (row, d)) in self.rows.iter().zip(distance.iter_mut()).enumerate().rev() {
            if row.kind == RowKind::Hunk || changed(row) {
                next = changed(row).then_some(i);
            } else if let Some(at) = next {
                *d = (*d).min(at - i);
            }
        }
        distance
    }

    /// The rows keeping `context` unchanged lines around each change, hunk headers
    /// recounted for what they now hold.
    fn rows_with_context(&self, distance: &[usize], context: usize) -> Vec<DiffRow> {
        let mut out: Vec<DiffRow> = Vec::new();
        let mut header: Option<usize> = None;
        let recount = |out: &mut Vec<DiffRow>, header: Option<usize>| {
            let Some(h) = header else { return };
            let body = &out[h + 1..];
            let old_len = body.iter().filter(|r| r.old.is_some()).count();
            let new_len = body.iter().filter(|r| r.new.is_some()).count();
            let old_start = body.iter().find_map(|r| r.old);
            let new_start = body.iter().find_map(|r| r.new);
            if let (Some(o), Some(n)) = (old_start, new_start) {
                out[h].text = format!("@@ -{o},{old_len} +{n},{new_len} @@");
            }
        };
        for (row, d) in self.rows.iter().zip(distance) {
            if row.kind == RowKind::Hunk {
                recount(&mut out, header);
                header = Some(out.len());
                out.push(row.clone());
            } else if *d <= context {
                out.push(row.clone());
            }
        }
        recount(&mut out, header);
        out
    }

    /// `rows` as lines of at most `width` columns, then a row counting `hidden` more.
    fn render_rows<R: std::borrow::Borrow<DiffRow>>(
        &self,
        rows: &[R],
        hidden: usize,
        width: u16,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let width = usize::from(width.max(1));
        // "12 13 + " — numbers only when they leave room for text.
        let numbers = 2 * self.digits + 2;
        let (with_numbers, sign_width) = match width {
            w if w >= numbers + 10 => (true, 2),
            w if w >= 4 => (false, 2),
            3 => (false, 1),
            _ => (false, 0),
        };
        let gutter = if with_numbers { numbers } else { 0 } + sign_width;
        let mut out = Vec::new();
        for row in rows {
            let row: &DiffRow = row.borrow();
            if row.kind == RowKind::Hunk {
                let spans = [Span::styled(row.text.clone(), theme.diff_hunk)];
                out.extend(
                    wrap_spans(&spans, width, width, WrapMode::Chars)
                        .into_iter()
                        .map(Line::from),
                );
                continue;
            }
            let (sign, style) = match row.kind {
                RowKind::Added => ("+ ", theme.diff_add),
                RowKind::Removed => ("- ", theme.diff_del),
                _ => ("  ", theme.diff_context),
            };
            let mut head = Vec::new();
            if with_numbers {
                let num = |n: Option<usize>| match n {
                    Some(n) => format!("{n:>w$} ", w = self.digits),
                    None => " ".repeat(self.digits + 1),
                };
                head.push(Span::styled(
                    format!("{}{}", num(row.old), num(row.new)),
                    theme.diff_line_no,
                ));
            }
            if sign_width > 0 {
                head.push(Span::styled(&sign[..sign_width], style));
            }
            let room = width.saturating_sub(gutter).max(1);
            let text = [Span::styled(row.text.clone(), style)];
            for (i, wrapped) in wrap_spans(&text, room, room, WrapMode::Chars)
                .into_iter()
                .enumerate()
            {
                let mut spans = if i == 0 {
                    head.clone()
                } else {
                    vec![Span::raw(" ".repeat(gutter))]
                };
                spans.extend(wrapped);
                out.push(Line::from(spans));
            }
        }
        if hidden > 0 {
            let note = format!("… +{hidden} lines (ctrl+o to expand)");
            let spans = [Span::styled(note, theme.dim)];
            out.extend(
                wrap_spans(&spans, width, width, WrapMode::Words)
                    .into_iter()
                    .map(Line::from),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wrap::spans_width;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn unified_rows_with_numbers_and_hunks() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nd\ne\n";
        let view = DiffView::new("x.txt", Some(before), after);
        assert_eq!(view.counts(), (2, 1));
        assert_eq!(
            view.summary(),
            "Updated x.txt with 2 additions and 1 removal"
        );
        let lines = text(&view.render(40, false, &Theme::new(false)));
        assert_eq!(
            lines,
            [
                "@@ -1,4 +1,5 @@",
                "1 1   a",
                "2   - b",
                "  2 + B",
                "3 3   c",
                "4 4   d",
                "  5 + e",
            ]
        );
    }

    #[test]
    fn colours_follow_the_sign() {
        let view = DiffView::new("x", Some("old\n"), "new\n");
        let lines = view.render(40, false, &Theme::new(true));
        let del = lines
            .iter()
            .find(|l| text(&[(*l).clone()])[0].contains("- old"))
            .unwrap();
        assert_eq!(del.spans.last().unwrap().style, Theme::new(true).diff_del);
        let add = lines
            .iter()
            .find(|l| text(&[(*l).clone()])[0].contains("+ new"))
            .unwrap();
        assert_eq!(add.spans.last().unwrap().style, Theme::new(true).diff_add);
    }

    #[test]
    fn new_files_are_all_additions() {
        let view = DiffView::new("new.rs", None, "one\ntwo\n");
        assert_eq!(view.summary(), "Created new.rs (2 lines)");
        let lines = text(&view.render(40, false, &Theme::new(false)));
        assert_eq!(lines, ["@@ -0,0 +1,2 @@", "  1 + one", "  2 + two"]);
    }

    #[test]
    fn long_diffs_collapse_until_expanded() {
        let after: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let view = DiffView::new("big", Some(""), &after);
        assert!(view.is_collapsible());
        let collapsed = text(&view.render(60, false, &Theme::new(false)));
        assert_eq!(collapsed.len(), COLLAPSED_ROWS + 1);
        assert_eq!(collapsed.last().unwrap(), "… +31 lines (ctrl+o to expand)");
        assert_eq!(view.render(60, true, &Theme::new(false)).len(), 51);
    }

    #[test]
    fn fitting_cuts_unchanged_context_before_changes() {
        let before: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let after = before.replace("l10\n", "L10\n");
        let view = DiffView::new("f", Some(&before), &after);
        let theme = Theme::new(false);
        // Room for everything: the usual three lines of context.
        assert_eq!(view.render_fitted(40, 20, &theme).len(), 9);
        let fitted = text(&view.render_fitted(40, 5, &theme));
        assert_eq!(
            fitted,
            [
                "@@ -9,3 +9,3 @@",
                " 9  9   l9",
                "10    - l10",
                "   10 + L10",
                "11 11   l11",
            ]
        );
        // Too little room even without context: headers and changes stay whole.
        let bare = text(&view.render_fitted(40, 1, &theme));
        assert_eq!(bare, ["@@ -10,1 +10,1 @@", "10    - l10", "   10 + L10"]);
    }

    #[test]
    fn narrow_widths_wrap_within_bounds() {
        let view = DiffView::new(
            "w",
            Some("short\n"),
            "a much longer replacement line 한국어\n",
        );
        for width in [1u16, 4, 12, 20] {
            for line in view.render(width, true, &Theme::new(true)) {
                if width >= 2 {
                    assert!(spans_width(&line.spans) <= usize::from(width));
                }
            }
        }
    }
}
