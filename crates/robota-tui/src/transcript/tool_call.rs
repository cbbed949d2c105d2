//! The tool call cell: `Name(primary argument)` with its status (spinner while running,
//! then ✓ / ✗ / denied in the gutter colour) and a short preview of the result — the first
//! lines of output, "Read N lines", the todo list, or the file's diff — expanded in full
//! with ctrl+o.

use std::time::{Duration, Instant};

use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::diff::DiffView;
use crate::theme::Theme;
use crate::wrap::{Row, WrapMode, sanitize, spans_width, truncate_spans, wrap_spans};
use robota_core::{TodoItem, ToolDisplay};

/// Output lines shown while collapsed.
pub const PREVIEW_LINES: usize = 4;
/// Output lines shown at most even when expanded (the rest is counted).
const EXPANDED_LINES: usize = 2_000;
/// Longest argument summary kept, in characters.
const SUMMARY_CHARS: usize = 200;

/// Where a tool call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// The model is still streaming its input.
    Pending,
    /// Its input is complete and the tool is executing.
    Running,
    /// It finished without error.
    Ok,
    /// It failed, or the turn ended before it finished.
    Error,
    /// The permission check refused it.
    Denied,
}

/// What a finished tool call shows under its header.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultView {
    /// Nothing yet: the call has not finished.
    None,
    /// Output text (preview: first lines).
    Text(String),
    /// A file change.
    Diff(DiffView),
    /// A todo list (the `TodoWrite` tool), drawn as a checklist.
    Todos(Vec<TodoItem>),
}

/// One tool call and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallCell {
    /// The provider's id of the call, which matches its result to it.
    pub id: String,
    /// The tool's name (`Bash`, `Read`, …).
    pub name: String,
    /// The argument that says what the call does (command, path, pattern, URL…).
    pub summary: String,
    /// Where the call is; picks its gutter symbol and colour.
    pub status: ToolStatus,
    /// What it shows under its header once finished.
    pub result: ToolResultView,
    /// How long it ran; `None` until it finishes, and for denied calls.
    pub duration: Option<Duration>,
    /// What a subagent run by this call (an `Agent` call) is doing.
    pub subagent: Option<SubagentActivity>,
    /// The last lines a running command printed.
    pub live_tail: Vec<String>,
    /// What the language server said about an edited file (`pyright: 1 error, 0
    /// warnings`), shown under the diff.
    pub diagnostics: Option<String>,
}

/// A subagent's progress, shown under its Agent call: one live line while it runs (what
/// it does now, tool uses, tokens, time), and with ctrl+o every step it took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubagentActivity {
    /// The tool it runs now (name and summary), if any.
    pub current: Option<String>,
    pub tool_uses: u32,
    /// Input and output tokens of its calls so far.
    pub tokens: u64,
    /// When its first event came.
    pub started: Option<Instant>,
    /// Its tool calls and what it said, oldest first (at most [`SUBAGENT_STEPS`]).
    pub steps: Vec<String>,
    /// Steps dropped from the front to keep the list bounded.
    pub dropped_steps: usize,
}

/// Steps of a subagent kept for the expanded view.
pub const SUBAGENT_STEPS: usize = 200;

impl SubagentActivity {
    /// Records one step (a tool call, a message), keeping the newest [`SUBAGENT_STEPS`].
    pub fn push_step(&mut self, step: String) {
        if self.steps.len() == SUBAGENT_STEPS {
            self.steps.remove(0);
            self.dropped_steps += 1;
        }
        self.steps.push(step);
    }

    fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(current) = &self.current {
            parts.push(current.clone());
        }
        parts.push(match self.tool_uses {
            1 => "1 tool use".to_string(),
            n => format!("{n} tool uses"),
        });
        if self.tokens > 0 {
            parts.push(if self.tokens >= 1_000 {
                format!("{:.1}k tokens", self.tokens as f64 / 1_000.0)
            } else {
                format!("{} tokens", self.tokens)
            });
        }
        if let Some(started) = self.started {
            parts.push(elapsed_label(started.elapsed()));
        }
        parts.join(" · ")
    }

    /// Every step, for the expanded view.
    fn step_rows(&self, theme: &Theme) -> Vec<Row> {
        let mut rows = Vec::new();
        if self.dropped_steps > 0 {
            rows.push(vec![Span::styled(
                format!("… {} earlier steps", self.dropped_steps),
                theme.dim,
            )]);
        }
        for step in &self.steps {
            rows.push(vec![Span::styled(step.clone(), theme.dim)]);
        }
        rows
    }
}

/// `42s`, `3m 05s`.
fn elapsed_label(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m {:02}s", secs / 60, secs % 60)
    }
}

impl ToolCallCell {
    /// A pending call with no summary or result yet.
    pub fn new(id: &str, name: &str) -> Self {
        ToolCallCell {
            id: id.to_string(),
            name: name.to_string(),
            summary: String::new(),
            status: ToolStatus::Pending,
            result: ToolResultView::None,
            duration: None,
            subagent: None,
            live_tail: Vec::new(),
            diagnostics: None,
        }
    }

    /// Records a finished call's outcome.
    pub fn finish(&mut self, content: &str, is_error: bool, display: Option<&ToolDisplay>) {
        self.live_tail.clear();
        self.diagnostics = (!is_error).then(|| diagnostics_line(content)).flatten();
        self.status = if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        self.result = match display {
            Some(d @ ToolDisplay::FileDiff { .. }) if !is_error => DiffView::from_display(d)
                .map_or_else(
                    || ToolResultView::Text(content.to_string()),
                    ToolResultView::Diff,
                ),
            Some(ToolDisplay::Todos { todos }) if !is_error => ToolResultView::Todos(todos.clone()),
            Some(ToolDisplay::Background { job_id, .. }) if !is_error => ToolResultView::Text(
                format!("Running in the background as {job_id} (/tasks to follow it)"),
            ),
            _ if !is_error && self.name == "Read" => {
                let n = content.lines().count();
                ToolResultView::Text(format!("Read {n} line{}", if n == 1 { "" } else { "s" }))
            }
            _ => ToolResultView::Text(content.to_string()),
        };
    }
}

/// The one line shown under an edit for the diagnostics robota appended to its result
/// (`<diagnostics server="pyright">` then "The language server reports 1 error(s) and 0
/// warning(s)"): `pyright: 1 error(s), 0 warning(s)`.
fn diagnostics_line(content: &str) -> Option<String> {
    let start = content.rfind("<diagnostics server=\"")?;
    let rest = &content[start + "<diagnostics server=\"".len()..];
    let server = rest.split('"').next()?;
    let counts = rest
        .split("reports ")
        .nth(1)?
        .split(" in this file")
        .next()?
        .replace(" and ", ", ");
    Some(format!("{}: {counts}", sanitize(server)))
}

/// The argument worth showing for a call: the command for Bash, the path for file tools,
/// the pattern, URL or query for search tools, else the first string argument.
pub fn summarize_input(name: &str, input: &Value) -> String {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    let text = match name {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" => field("file_path"),
        "NotebookEdit" => field("notebook_path"),
        "Glob" | "Grep" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        "Skill" => field("skill").or_else(|| field("command")),
        "TodoWrite" => Some(""),
        _ => None,
    };
    let text = text.or_else(|| {
        input
            .as_object()
            .and_then(|o| o.values().find_map(Value::as_str))
    });
    let Some(text) = text else {
        return String::new();
    };
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or("");
    let mut out: String = first.chars().take(SUMMARY_CHARS).collect();
    if lines.next().is_some() || first.chars().count() > SUMMARY_CHARS {
        out.push('…');
    }
    sanitize(&out).into_owned()
}

/// The rows under a call's header: its outcome, after a finished subagent's steps when
/// expanded.
fn result_rows(cell: &ToolCallCell, room: usize, expanded: bool, theme: &Theme) -> Vec<Row> {
    match &cell.subagent {
        Some(activity) if expanded && cell.status != ToolStatus::Running => {
            let mut rows = activity.step_rows(theme);
            rows.extend(outcome_rows(cell, room, expanded, theme));
            rows
        }
        _ => outcome_rows(cell, room, expanded, theme),
    }
}

fn outcome_rows(cell: &ToolCallCell, room: usize, expanded: bool, theme: &Theme) -> Vec<Row> {
    let text_style = match cell.status {
        ToolStatus::Error => theme.tool_error,
        ToolStatus::Denied => theme.tool_denied,
        _ => theme.tool_output,
    };
    match (&cell.result, cell.status) {
        (_, ToolStatus::Pending) => Vec::new(),
        (_, ToolStatus::Running) => match &cell.subagent {
            Some(activity) if expanded => {
                let mut rows = activity.step_rows(theme);
                rows.push(vec![Span::styled(activity.line(), theme.dim)]);
                rows
            }
            Some(activity) => {
                let hint = if activity.steps.is_empty() {
                    ""
                } else {
                    " (ctrl+o to expand)"
                };
                vec![vec![Span::styled(
                    format!("{}{hint}", activity.line()),
                    theme.dim,
                )]]
            }
            None => {
                let status = if cell.name == "Bash" {
                    "Running… (ctrl+b to run in background)"
                } else {
                    "Running…"
                };
                cell.live_tail
                    .iter()
                    .map(|line| sanitize(line).into_owned())
                    .chain(std::iter::once(status.to_string()))
                    .map(|line| truncate_spans(&[Span::styled(line, theme.dim)], room).0)
                    .collect()
            }
        },

        (ToolResultView::Diff(diff), _) => {
            let mut rows = wrap_spans(
                &[Span::styled(diff.summary(), theme.tool_output)],
                room,
                room,
                WrapMode::Words,
            );
            let width = u16::try_from(room).unwrap_or(u16::MAX);
            rows.extend(
                diff.render(width, expanded, theme)
                    .into_iter()
                    .map(|l| l.spans),
            );
            if let Some(line) = &cell.diagnostics {
                rows.push(truncate_spans(&[Span::styled(line.clone(), theme.dim)], room).0);
            }
            rows
        }
        (ToolResultView::Todos(todos), _) => todos
            .iter()
            .flat_map(|t| {
                let (mark, style) = match t.status.as_str() {
                    "completed" => (
                        "☒ ",
                        theme
                            .dim
                            .add_modifier(ratatui::style::Modifier::CROSSED_OUT),
                    ),
                    "in_progress" => ("◼ ", theme.tool_name),
                    _ => ("☐ ", theme.tool_output),
                };
                let spans = [
                    Span::styled(mark, style),
                    Span::styled(sanitize(&t.content).into_owned(), style),
                ];
                let rest = if room >= 4 { room - 2 } else { room };
                wrap_spans(&spans, room, rest, WrapMode::Words)
            })
            .collect(),
        // A denial's reason is short and matters: shown whole.
        (ToolResultView::Text(text), ToolStatus::Denied) => {
            text_rows(text, room, true, PREVIEW_LINES, text_style, theme)
        }
        (ToolResultView::Text(text), _) => {
            text_rows(text, room, expanded, PREVIEW_LINES, text_style, theme)
        }
        (ToolResultView::None, ToolStatus::Denied) => {
            vec![vec![Span::styled("Denied", text_style)]]
        }
        (ToolResultView::None, _) => vec![vec![Span::styled("(no output)", theme.dim)]],
    }
}

/// Output text as rows of at most `room` columns: the first `preview` lines, cut at the
/// edge, unless `expanded` (then wrapped, up to a generous limit); the rest is counted.
pub(super) fn text_rows(
    text: &str,
    room: usize,
    expanded: bool,
    preview: usize,
    style: ratatui::style::Style,
    theme: &Theme,
) -> Vec<Row> {
    let text = sanitize(text.trim_end());
    if text.trim().is_empty() {
        return vec![vec![Span::styled("(no output)", theme.dim)]];
    }
    let lines: Vec<&str> = text.lines().collect();
    let limit = if expanded { EXPANDED_LINES } else { preview };
    let mut rows = Vec::new();
    for line in lines.iter().take(limit) {
        let spans = [Span::styled(line.to_string(), style)];
        if expanded {
            rows.extend(wrap_spans(&spans, room, room, WrapMode::Chars));
        } else {
            rows.push(truncate_spans(&spans, room).0);
        }
    }
    if lines.len() > limit {
        let more = lines.len() - limit;
        let hint = if expanded { "" } else { " (ctrl+o to expand)" };
        let note = [Span::styled(format!("… +{more} lines{hint}"), theme.dim)];
        rows.extend(wrap_spans(&note, room, room, WrapMode::Words));
    }
    rows
}

/// The body of a tool call cell at `width` columns (the gutter is not included).
pub fn render_tool_call(
    cell: &ToolCallCell,
    width: usize,
    expanded: bool,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut header = vec![Span::styled(cell.name.clone(), theme.tool_name)];
    if !cell.summary.is_empty() {
        header.push(Span::styled(
            format!("({})", cell.summary),
            theme.tool_output,
        ));
    }
    let mut out: Vec<Line<'static>> = wrap_spans(&header, width, width, WrapMode::Words)
        .into_iter()
        .map(Line::from)
        .collect();
    // "⎿  " before the first result row, three spaces before the others.
    let indent = if width >= 8 { 3 } else { 0 };
    let room = width - indent;
    let rows = result_rows(cell, room, expanded, theme)
        .into_iter()
        .flat_map(|row| {
            if spans_width(&row) <= room {
                vec![row]
            } else {
                wrap_spans(&row, room, room, WrapMode::Words)
            }
        });
    for (i, row) in rows.enumerate() {
        let mut spans = Vec::with_capacity(row.len() + 1);
        if indent > 0 {
            let lead = if i == 0 { "⎿  " } else { "   " };
            spans.push(Span::styled(lead, theme.dim));
        }
        spans.extend(row);
        out.push(Line::from(spans));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn summaries_pick_the_telling_argument() {
        assert_eq!(
            summarize_input("Bash", &json!({"command": "ls -la\necho hi"})),
            "ls -la…"
        );
        assert_eq!(
            summarize_input("Read", &json!({"file_path": "/a/b.rs"})),
            "/a/b.rs"
        );
        assert_eq!(
            summarize_input("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main"
        );
        assert_eq!(
            summarize_input("mcp__x__y", &json!({"n": 1, "q": "query"})),
            "query"
        );
        assert_eq!(summarize_input("TodoWrite", &json!({"todos": []})), "");
    }

    #[test]
    fn previews_show_first_lines_and_count_the_rest() {
        let mut cell = ToolCallCell::new("t1", "Bash");
        cell.summary = "seq 10".into();
        let out: String = (1..=10).map(|i| format!("{i}\n")).collect();
        cell.finish(&out, false, None);
        let lines = text(&render_tool_call(&cell, 40, false, &Theme::new(false)));
        assert_eq!(
            lines,
            [
                "Bash(seq 10)",
                "⎿  1",
                "   2",
                "   3",
                "   4",
                "   … +6 lines (ctrl+o to expand)"
            ]
        );
        assert_eq!(
            render_tool_call(&cell, 40, true, &Theme::new(false)).len(),
            11
        );
    }

    #[test]
    fn read_results_are_counted_not_shown() {
        let mut cell = ToolCallCell::new("t", "Read");
        cell.finish("     1\ta\n     2\tb\n", false, None);
        assert_eq!(cell.result, ToolResultView::Text("Read 2 lines".into()));
    }
}
