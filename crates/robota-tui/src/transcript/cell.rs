//! Transcript cells: each keeps its source (prompt text, markdown, tool call, diff,
//! notice) and renders to lines for a width. A cell is drawn as a two-column gutter (its
//! symbol on the first row: `>` prompt, `⏺` answer, a spinner / coloured `⏺` for tools) and
//! a body; bodies are cached per (width, expanded) so scrolling never re-renders them.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::tool_call::{ToolCallCell, ToolStatus, render_tool_call, text_rows};
use crate::diff::DiffView;
use crate::markdown::StreamingMarkdown;
use crate::theme::Theme;
use crate::wrap::{WrapMode, sanitize, truncate_spans, wrap_spans};

/// Braille spinner frames for running tools.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Columns the gutter takes (when the width allows one).
pub const GUTTER: u16 = 2;

/// Output lines of a `!command` shown while collapsed (ctrl+o shows the rest).
pub const SHELL_PREVIEW_LINES: usize = 20;

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// General information.
    Info,
    /// Something the user should know but that did not stop the turn.
    Warning,
    /// Something failed.
    Error,
    /// A provider call is being retried.
    Retry,
}

/// Thinking text: collapsed to one line unless the transcript is expanded.
pub struct ThinkingCell {
    /// The thinking text so far, rendered as markdown.
    pub markdown: StreamingMarkdown,
    /// The thinking block is complete.
    pub done: bool,
}

/// One entry of the transcript.
pub enum Cell {
    /// A prompt the user sent, as typed.
    UserPrompt(String),
    /// The model's answer, streamed in as markdown.
    Assistant(StreamingMarkdown),
    /// The model's thinking for this turn.
    Thinking(ThinkingCell),
    /// A tool call and, once it ends, its result.
    ToolCall(ToolCallCell),
    /// A file diff on its own (tool diffs live inside their `ToolCall`).
    Diff(DiffView),
    /// A one-line message from the app or the session (see `NoticeKind`).
    Notice {
        /// What the notice is about; picks its colour.
        kind: NoticeKind,
        /// The message itself.
        text: String,
    },
    /// A slash command and what it printed.
    CommandOutput {
        /// The command without its `/`, as typed.
        command: String,
        /// What the command printed.
        output: String,
    },
    /// A `!command` the user ran and its output (a non-zero exit code is shown).
    Shell {
        /// The command as typed, without the `!`.
        command: String,
        /// What it printed.
        output: String,
        /// Its exit code; `None` when not known (a replayed session, a cancelled command).
        exit_code: Option<i32>,
    },
    /// A `!command` still running, with the last lines it printed (replaced by `Shell`
    /// when it ends).
    ShellRunning {
        /// The command as typed, without the `!`.
        command: String,
        /// The last lines it printed, oldest first.
        tail: Vec<String>,
    },
    /// The turn was interrupted by the user.
    Interrupted,
    /// A rule across the transcript with a label: the conversation above was compacted.
    Divider(String),
    /// The header of a new session: version, model, provider, directory and a few tips.
    Welcome(Welcome),
}

/// What the welcome header shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    /// The model the session runs.
    pub model: String,
    /// The provider type (`anthropic`, `openai`, …).
    pub provider: String,
    /// The project directory, as displayed.
    pub cwd: String,
}

/// The tips under the welcome header.
const WELCOME_TIPS: [&str; 4] = [
    "Tips: /help lists commands and keys",
    "@ attaches a file · ! runs a shell command",
    "Shift+Tab cycles permission modes",
    "Esc stops a turn · Ctrl+C twice leaves",
];

/// A cell and its rendered body for one width.
pub(crate) struct Entry {
    pub cell: Cell,
    cache: Option<(u16, bool, Vec<Line<'static>>)>,
    /// A prompt's collapsed pastes as (placeholder, text): shown as the placeholder
    /// unless the transcript is expanded.
    pub pastes: Vec<(String, String)>,
}

/// `text` with each paste's text (as the prompt kept it: its ends may have been trimmed)
/// shown as its placeholder.
pub(crate) fn collapse_pastes(text: &str, pastes: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (label, paste) in pastes {
        let forms = [
            paste.as_str(),
            paste.trim_end(),
            paste.trim_start_matches('\n'),
            paste.trim_start_matches('\n').trim_end(),
        ];
        if let Some(form) = forms
            .into_iter()
            .find(|f| !f.is_empty() && out.contains(*f))
        {
            out = out.replacen(form, label, 1);
        }
    }
    out
}

impl Entry {
    pub(crate) fn new(cell: Cell) -> Self {
        Entry {
            cell,
            cache: None,
            pastes: Vec::new(),
        }
    }

    /// Forgets the cached body (the cell changed).
    pub(crate) fn invalidate(&mut self) {
        self.cache = None;
    }

    /// The body lines at `width` columns.
    pub(crate) fn body(&mut self, width: u16, expanded: bool, theme: &Theme) -> &[Line<'static>] {
        let markdown = match self.cell {
            Cell::Assistant(_) => true,
            Cell::Thinking(_) => expanded,
            _ => false,
        };
        if markdown {
            return match &mut self.cell {
                Cell::Assistant(md) => md.render(width),
                Cell::Thinking(t) => t.markdown.render(width),
                _ => &[],
            };
        }
        let fresh = matches!(&self.cache, Some((w, e, _)) if *w == width && *e == expanded);
        if !fresh {
            let columns = usize::from(width.max(1));
            let lines = match &self.cell {
                Cell::UserPrompt(text) if !expanded && !self.pastes.is_empty() => {
                    let shown = Cell::UserPrompt(collapse_pastes(text, &self.pastes));
                    render_body(&shown, columns, expanded, theme)
                }
                cell => render_body(cell, columns, expanded, theme),
            };
            self.cache = Some((width, expanded, lines));
        }
        match &self.cache {
            Some((_, _, lines)) => lines,
            None => &[],
        }
    }

    /// The gutter of the first row and of the others.
    pub(crate) fn gutter(
        &self,
        spinner_frame: usize,
        theme: &Theme,
    ) -> (Span<'static>, Span<'static>) {
        let blank = Span::raw("  ");
        let first = match &self.cell {
            Cell::UserPrompt(_) | Cell::CommandOutput { .. } => {
                Span::styled("> ", theme.user_gutter)
            }
            Cell::Shell { .. } => Span::styled("! ", theme.user_gutter),
            Cell::ShellRunning { .. } => Span::styled(
                format!("{} ", SPINNER[spinner_frame % SPINNER.len()]),
                theme.tool_running,
            ),
            Cell::Assistant(_) => Span::styled("⏺ ", theme.assistant_gutter),
            Cell::Thinking(_) => Span::styled("✻ ", theme.thinking),
            Cell::ToolCall(t) => match t.status {
                ToolStatus::Pending | ToolStatus::Running => Span::styled(
                    format!("{} ", SPINNER[spinner_frame % SPINNER.len()]),
                    theme.tool_running,
                ),
                ToolStatus::Ok => Span::styled("⏺ ", theme.tool_ok),
                ToolStatus::Error => Span::styled("⏺ ", theme.tool_error),
                ToolStatus::Denied => Span::styled("⏺ ", theme.tool_denied),
            },
            Cell::Diff(_) => Span::styled("⏺ ", theme.tool_ok),
            Cell::Notice { kind, .. } => {
                let (symbol, style) = notice_look(*kind, theme);
                Span::styled(symbol, style)
            }
            Cell::Interrupted | Cell::Divider(_) => blank.clone(),
            Cell::Welcome(_) => Span::styled("✻ ", theme.assistant_gutter),
        };
        (first, blank)
    }
}

fn notice_look(kind: NoticeKind, theme: &Theme) -> (&'static str, Style) {
    match kind {
        NoticeKind::Info => ("⏺ ", theme.notice_info),
        NoticeKind::Warning => ("⚠ ", theme.notice_warning),
        NoticeKind::Error => ("✗ ", theme.notice_error),
        NoticeKind::Retry => ("↻ ", theme.notice_retry),
    }
}

fn wrapped(text: &str, style: Style, width: usize) -> Vec<Line<'static>> {
    let text = sanitize(text);
    wrap_spans(
        &[Span::styled(text.into_owned(), style)],
        width,
        width,
        WrapMode::Words,
    )
    .into_iter()
    .map(Line::from)
    .collect()
}

fn render_body(cell: &Cell, width: usize, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    match cell {
        Cell::UserPrompt(text) => wrapped(text.trim_end(), theme.user_text, width),
        Cell::Assistant(_) => Vec::new(),
        Cell::Thinking(t) => {
            let text = if t.done {
                "Thinking (ctrl+o to expand)"
            } else {
                "Thinking…"
            };
            wrapped(text, theme.thinking, width)
        }
        Cell::ToolCall(call) => render_tool_call(call, width, expanded, theme),
        Cell::Diff(diff) => {
            let mut out = wrapped(&diff.summary(), theme.tool_name, width);
            let w = u16::try_from(width).unwrap_or(u16::MAX);
            out.extend(diff.render(w, expanded, theme));
            out
        }
        Cell::Notice { kind, text } => wrapped(text.trim_end(), notice_look(*kind, theme).1, width),
        Cell::CommandOutput { command, output } => {
            let mut out = wrapped(&format!("/{command}"), theme.dim, width);
            let output = sanitize(output.trim_end());
            if output.is_empty() {
                return out;
            }
            let indent = if width >= 8 { 3 } else { 0 };
            let rows = wrap_spans(
                &[Span::styled(output.into_owned(), theme.tool_output)],
                width - indent,
                width - indent,
                WrapMode::Words,
            );
            for (i, row) in rows.into_iter().enumerate() {
                let mut spans = Vec::new();
                if indent > 0 {
                    spans.push(Span::styled(if i == 0 { "⎿  " } else { "   " }, theme.dim));
                }
                spans.extend(row);
                out.push(Line::from(spans));
            }
            out
        }
        Cell::Shell {
            command,
            output,
            exit_code,
        } => render_shell(command, output, *exit_code, width, expanded, theme),
        Cell::ShellRunning { command, tail } => {
            let mut out = wrapped(&format!("!{}", command.trim_end()), theme.user_text, width);
            out.extend(live_tail_lines(
                tail,
                "Running… (esc to stop)",
                width,
                theme,
            ));
            out
        }
        Cell::Divider(label) => {
            let label = format!(" {} ", sanitize(label.trim()));
            let room = width.saturating_sub(unicode_width::UnicodeWidthStr::width(label.as_str()));
            if room < 4 {
                return wrapped(label.trim(), theme.dim, width);
            }
            let left = "─".repeat(room / 2);
            let right = "─".repeat(room - room / 2);
            vec![Line::from(Span::styled(
                format!("{left}{label}{right}"),
                theme.dim,
            ))]
        }
        Cell::Welcome(welcome) => {
            let mut out = wrapped(
                &format!("robota {}", env!("CARGO_PKG_VERSION")),
                theme.tool_name,
                width,
            );
            let facts = [
                format!("model: {} ({})", welcome.model, welcome.provider),
                format!("cwd: {}", welcome.cwd),
            ];
            for line in facts.iter().map(String::as_str).chain(WELCOME_TIPS) {
                out.extend(wrapped(line, theme.dim, width));
            }
            out
        }
        Cell::Interrupted => {
            let lead = if width >= 8 { "⎿  " } else { "" };
            wrapped(
                &format!("{lead}Interrupted by user"),
                theme.notice_error,
                width,
            )
        }
    }
}

/// `! command` (the gutter holds the `!`), then the output dimmed under `⎿`, then the exit
/// code when it is not zero.
/// A running command's last lines (dim, cut at the edge) and a status row under them, as
/// indented result rows.
pub(super) fn live_tail_lines(
    tail: &[String],
    status: &str,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let indent = if width >= 8 { 3 } else { 0 };
    let room = (width - indent).max(1);
    let rows = tail
        .iter()
        .map(|line| sanitize(line).into_owned())
        .chain(std::iter::once(status.to_string()))
        .map(|line| truncate_spans(&[Span::styled(line, theme.dim)], room).0);
    rows.enumerate()
        .map(|(i, row)| {
            let mut spans = Vec::with_capacity(row.len() + 1);
            if indent > 0 {
                spans.push(Span::styled(if i == 0 { "⎿  " } else { "   " }, theme.dim));
            }
            spans.extend(row);
            Line::from(spans)
        })
        .collect()
}

fn render_shell(
    command: &str,
    output: &str,
    exit_code: Option<i32>,
    width: usize,
    expanded: bool,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = wrapped(command.trim_end(), theme.user_text, width);
    let indent = if width >= 8 { 3 } else { 0 };
    let room = width - indent;
    let failed = exit_code.filter(|c| *c != 0);
    let mut rows = if output.trim().is_empty() && failed.is_some() {
        Vec::new()
    } else {
        text_rows(
            output,
            room,
            expanded,
            SHELL_PREVIEW_LINES,
            theme.dim,
            theme,
        )
    };
    if let Some(code) = failed {
        let text = format!("Exit code {code}");
        rows.extend(wrap_spans(
            &[Span::styled(text, theme.tool_error)],
            room,
            room,
            WrapMode::Words,
        ));
    }
    for (i, row) in rows.into_iter().enumerate() {
        let mut spans = Vec::with_capacity(row.len() + 1);
        if indent > 0 {
            spans.push(Span::styled(if i == 0 { "⎿  " } else { "   " }, theme.dim));
        }
        spans.extend(row);
        out.push(Line::from(spans));
    }
    out
}
