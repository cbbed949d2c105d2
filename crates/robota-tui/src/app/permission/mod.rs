//! The permission popup: which tool wants to do what (the command for Bash, a diff preview
//! for Edit and Write, the arguments otherwise), and three answers — Yes, Yes and don't
//! ask again (showing the exact rule it saves), No and tell robota what to do instead
//! (typed feedback goes to the model). Keys: 1–3, y/n, arrows + Enter; Esc or Ctrl+C = No
//! and stop the turn.
//!
//! A long preview scrolls inside the popup (PgUp/PgDn, the mouse wheel over the popup) and
//! Ctrl+O lets it take the whole screen. A diff that does not fit loses its unchanged
//! context first, so the hunk headers and the changed lines show; in a small window the
//! popup covers the composer and drops its spacing so a few preview rows stay beside the
//! options. PgUp/PgDn with nothing to scroll (or with Shift) and the wheel outside the
//! popup scroll the transcript behind it.
//!
//! [`PermissionOverlay`] holds the popup with the request it answers and floats above
//! the composer; `preview.rs` makes a request into its popup.

mod preview;

use std::cell::Cell;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub use self::preview::permission_popup;
use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::diff::DiffView;
use crate::theme::Theme;
use crate::widgets::framed_box::FramedBox;
use crate::wrap::{WrapMode, sanitize, wrap_spans};
use robota_sdk::PermissionRequest;

/// The permission popup's overlay id.
pub const PERMISSION: &str = "permission";

/// The popup on screen with the request it answers.
pub struct PermissionOverlay {
    popup: PermissionPopup,
    /// Taken when the user answers.
    request: Option<PermissionRequest>,
    /// Where the popup was last drawn (for the mouse wheel).
    drawn_at: Cell<Rect>,
}

impl PermissionOverlay {
    /// The popup for `request` (see [`permission_popup`]).
    pub fn new(request: PermissionRequest, cwd: &Path, width: u16, theme: &Theme) -> Self {
        PermissionOverlay {
            popup: permission_popup(&request, cwd, width, theme),
            request: Some(request),
            drawn_at: Cell::new(Rect::default()),
        }
    }

    /// Just above the composer, as tall as the popup wants and the room allows; when it
    /// wants more room than there is above the composer, over the composer too.
    fn area(&self, stage: &Stage) -> Rect {
        let free = stage.free;
        let wanted = self.popup.height(free.width);
        if wanted <= free.height {
            return Rect::new(free.x, free.bottom() - wanted, free.width, wanted);
        }
        let screen = stage.screen;
        let height = wanted.min(screen.height);
        Rect::new(screen.x, screen.bottom() - height, screen.width, height)
    }
}

impl Overlay for PermissionOverlay {
    fn on_key(&mut self, key: KeyEvent) -> EventResult {
        if let KeyCode::PageUp | KeyCode::PageDown = key.code {
            let up = key.code == KeyCode::PageUp;
            let shift = key.modifiers.contains(KeyModifiers::SHIFT);
            let page = self.popup.view.get().0.saturating_sub(1).max(1);
            return if !shift && self.popup.scroll_by(page, up) {
                EventResult::Consumed
            } else {
                EventResult::Ignored
            };
        }
        match (self.popup.handle_key(key), self.request.take()) {
            (Some(choice), Some(request)) => {
                EventResult::Done(AppAction::Permission(Box::new(request), choice))
            }
            (_, request) => {
                self.request = request;
                EventResult::Consumed
            }
        }
    }

    fn on_paste(&mut self, text: &str) {
        self.popup.paste(text);
    }

    fn on_mouse(&mut self, mouse: &MouseEvent) -> bool {
        let up = match mouse.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return false,
        };
        let over = self
            .drawn_at
            .get()
            .contains(Position::new(mouse.column, mouse.row));
        over && self.popup.scroll_by(crate::transcript::WHEEL_LINES, up)
    }

    fn is_full_screen(&self) -> bool {
        false
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        let area = self.area(stage);
        self.drawn_at.set(area);
        self.popup.render(area, buf);
    }

    fn cursor(&self, stage: &Stage) -> Cursor {
        self.popup.cursor_position(self.area(stage)).into()
    }

    fn id(&self) -> Option<&'static str> {
        Some(PERMISSION)
    }
}

/// What the user chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionChoice {
    /// Yes, this once.
    Allow,
    /// Yes, and switch to this mode (a plan approved "with auto-accepted edits").
    AllowWithMode(robota_core::permission::PermissionMode),
    /// Yes, and save the suggested rule so the tool is not asked about again.
    AllowAlways,
    /// No, with what the user typed for robota to do instead (`None` when nothing was typed).
    Deny(Option<String>),
    /// Esc or Ctrl+C: no, and stop the turn (as Claude Code).
    DenyAndStop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Allow,
    AllowAcceptEdits,
    AllowAlways,
    Deny,
}

/// The popup's state.
#[derive(Debug, Clone)]
pub struct PermissionPopup {
    /// The tool asking (its name is the popup's title).
    pub tool: String,
    /// One-line summary: the command, the path, or the arguments.
    pub summary: String,
    /// Preview lines (a diff for Edit/Write), already styled.
    pub preview: Vec<Line<'static>>,
    /// The rule "don't ask again" saves (`Bash(npm test)`); empty when there is none to
    /// offer, and then that answer is not shown.
    pub rule: String,
    pub(crate) selected: usize,
    /// `Some` while the user types feedback for "No".
    pub feedback: Option<String>,
    /// Whether to draw with colours (off under `NO_COLOR`).
    pub colors: bool,
    /// An Edit's or Write's diff, fitted to the room at each draw (`preview` holds it
    /// rendered in full).
    diff: Option<(DiffView, Theme)>,
    /// The first preview row shown when the preview scrolls.
    scroll: usize,
    /// Ctrl+O: the preview may take the whole screen.
    expanded: bool,
    /// Preview rows shown and preview rows in all, at the last draw.
    view: Cell<(usize, usize)>,
}

/// Preview rows kept in a small window, at the cost of the popup's spacing.
const MIN_PREVIEW_ROWS: usize = 4;

impl PermissionPopup {
    /// A popup for `tool` with the first answer selected; `preview` is drawn under the
    /// summary as given.
    pub fn new(
        tool: &str,
        summary: String,
        preview: Vec<Line<'static>>,
        rule: String,
        colors: bool,
    ) -> Self {
        PermissionPopup {
            tool: tool.to_string(),
            summary,
            preview,
            rule,
            selected: 0,
            feedback: None,
            colors,
            diff: None,
            scroll: 0,
            expanded: false,
            view: Cell::new((0, 0)),
        }
    }

    /// The preview is this diff: fitted to the room, unchanged context cut first.
    pub fn with_diff(mut self, diff: DiffView, theme: Theme) -> Self {
        self.diff = Some((diff, theme));
        self
    }

    /// Scrolls the preview by `rows`; returns whether it scrolls at all (is longer than
    /// the rows it gets).
    pub fn scroll_by(&mut self, rows: usize, up: bool) -> bool {
        let (shown, total) = self.view.get();
        if total <= shown {
            return false;
        }
        self.scroll = if up {
            self.scroll.saturating_sub(rows)
        } else {
            (self.scroll + rows).min(total - shown)
        };
        true
    }

    /// The answers offered, in order; "don't ask again" only when there is a rule to save.
    fn options(&self) -> Vec<(Answer, String)> {
        if self.tool == robota_core::permission::PLAN_APPROVAL_TOOL {
            return vec![
                (
                    Answer::AllowAcceptEdits,
                    "Yes, and auto-accept edits".to_string(),
                ),
                (Answer::Allow, "Yes, and manually approve edits".to_string()),
                (
                    Answer::Deny,
                    "No, keep planning (tell robota what to change)".to_string(),
                ),
            ];
        }
        let mut options = vec![(Answer::Allow, "Yes".to_string())];
        if !self.rule.is_empty() {
            options.push((
                Answer::AllowAlways,
                format!("Yes, and don't ask again ({})", self.rule),
            ));
        }
        options.push((
            Answer::Deny,
            "No, and tell robota what to do instead".to_string(),
        ));
        options
    }

    /// Picks option `index` (0-based): a choice, or `None` when "No" opens the feedback line.
    fn pick(&mut self, index: usize) -> Option<PermissionChoice> {
        let options = self.options();
        let (answer, _) = options.get(index)?;
        self.selected = index;
        match answer {
            Answer::Allow => Some(PermissionChoice::Allow),
            Answer::AllowAcceptEdits => Some(PermissionChoice::AllowWithMode(
                robota_core::permission::PermissionMode::AcceptEdits,
            )),
            Answer::AllowAlways => Some(PermissionChoice::AllowAlways),
            Answer::Deny => {
                self.feedback = Some(String::new());
                None
            }
        }
    }

    /// Text pasted while typing feedback.
    pub fn paste(&mut self, text: &str) {
        if let Some(feedback) = &mut self.feedback {
            feedback.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    /// Handles a key; returns the choice once the user made one.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<PermissionChoice> {
        if let Some(text) = &mut self.feedback {
            match key.code {
                KeyCode::Enter => {
                    let text = std::mem::take(text);
                    return Some(PermissionChoice::Deny(
                        Some(text).filter(|t| !t.trim().is_empty()),
                    ));
                }
                KeyCode::Esc => return Some(PermissionChoice::DenyAndStop),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Some(PermissionChoice::DenyAndStop);
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
                _ => {}
            }
            return None;
        }
        let last = self.options().len() - 1;
        match key.code {
            KeyCode::Char('o') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.expanded = !self.expanded;
                None
            }
            KeyCode::Char('y') => Some(PermissionChoice::Allow),
            KeyCode::Char(c @ '1'..='3') => self.pick(usize::from(c as u8 - b'1')),
            KeyCode::Char('n') => Some(PermissionChoice::Deny(None)),
            KeyCode::Esc => Some(PermissionChoice::DenyAndStop),
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(PermissionChoice::DenyAndStop)
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                None
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(last);
                None
            }
            KeyCode::Enter => self.pick(self.selected),
            _ => None,
        }
    }

    /// Height the popup wants when it is `width` columns wide (it may get less): the
    /// preview's first `PREVIEW_LINES` rows, or all of them when expanded.
    pub fn height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(2));
        let cap = if self.expanded {
            usize::MAX
        } else {
            PREVIEW_LINES
        };
        let preview = self.preview_lines(inner, cap).len();
        let preview = match preview {
            0 => 0,
            n if n > cap => cap + 2,
            n => n + 1,
        };
        let rows = self.head_rows(inner).len() + preview + self.tail_rows(inner).len();
        u16::try_from(rows + 2).unwrap_or(u16::MAX)
    }

    /// The preview's rows at `inner` columns: a diff fitted to `room` rows (context cut
    /// first), other previews wrapped whole.
    fn preview_lines(&self, inner: usize, room: usize) -> Vec<Line<'static>> {
        if let Some((diff, theme)) = &self.diff {
            let width = u16::try_from(inner).unwrap_or(u16::MAX);
            return diff.render_fitted(width, room, theme);
        }
        self.preview
            .iter()
            .flat_map(|line| {
                wrapped(&line.spans, inner, 0, WrapMode::Chars)
                    .into_iter()
                    .map(|row| row.style(line.style))
            })
            .collect()
    }

    /// The preview in `room` rows: all of it and a blank row when it fits, else a window
    /// at the scroll position and a row saying where it is and how to scroll.
    fn preview_rows(&self, inner: usize, room: usize) -> Vec<Line<'static>> {
        let cap = if self.expanded {
            usize::MAX
        } else {
            PREVIEW_LINES
        };
        let avail = room.saturating_sub(1).min(cap);
        let lines = self.preview_lines(inner, avail);
        if lines.is_empty() || room == 0 {
            self.view.set((0, 0));
            return Vec::new();
        }
        if lines.len() <= avail {
            self.view.set((lines.len(), lines.len()));
            let mut rows = lines;
            rows.push(Line::default());
            return rows;
        }
        let shown = avail.max(1);
        let total = lines.len();
        let top = self.scroll.min(total - shown);
        self.view.set((shown, total));
        let mut rows: Vec<Line<'static>> = lines.into_iter().skip(top).take(shown).collect();
        let note = format!(
            "↕ rows {}–{} of {total} · PgUp/PgDn scroll{}",
            top + 1,
            top + shown,
            if self.expanded {
                ""
            } else {
                " · ctrl+o expand"
            }
        );
        let dim = Style::default().add_modifier(Modifier::DIM);
        rows.extend(
            wrapped(&[Span::styled(note, dim)], inner, 0, WrapMode::Words)
                .into_iter()
                .take(1),
        );
        rows
    }

    /// The summary and a blank row.
    fn head_rows(&self, inner: usize) -> Vec<Line<'static>> {
        let summary = [Span::styled(
            sanitize(&self.summary).into_owned(),
            Style::default().add_modifier(Modifier::BOLD),
        )];
        let mut rows = wrapped(&summary, inner, 0, WrapMode::Words);
        rows.push(Line::default());
        rows
    }

    /// The question, the options (continuation rows under the option's text) and, while
    /// typing, the feedback line (always last, with a free column for the cursor).
    fn tail_rows(&self, inner: usize) -> Vec<Line<'static>> {
        let mut rows = vec![Line::from("Do you want to proceed?")];
        for (i, (_, option)) in self.options().iter().enumerate() {
            let marker = if i == self.selected { "❯" } else { " " };
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            let text = [Span::styled(format!("{marker} {}. {option}", i + 1), style)];
            rows.extend(wrapped(&text, inner, OPTION_INDENT, WrapMode::Words));
        }
        if let Some(text) = &self.feedback {
            let text = [Span::raw(format!(
                "  Tell robota what to do instead: {}",
                sanitize(text)
            ))];
            rows.extend(wrapped(&text, inner.saturating_sub(1), 2, WrapMode::Chars));
        }
        rows
    }

    /// The rows shown in `inner` (width, height): the preview gets the room the summary
    /// and the options leave; when that is less than [`MIN_PREVIEW_ROWS`], the blank row
    /// under the summary, the question and the summary's extra rows give way first. What
    /// still does not fit is cut from the top, so the options and the feedback line stay.
    fn rows(&self, inner: Rect) -> Vec<Line<'static>> {
        let width = usize::from(inner.width);
        let height = usize::from(inner.height);
        let mut head = self.head_rows(width);
        let mut tail = self.tail_rows(width);
        let has_preview = !self.preview.is_empty() || self.diff.is_some();
        let room =
            |head: &[Line<'_>], tail: &[Line<'_>]| height.saturating_sub(head.len() + tail.len());
        let need = MIN_PREVIEW_ROWS + 1;
        let spacer = (has_preview && room(&head, &tail) < need).then(|| head.pop());
        let question =
            (has_preview && room(&head, &tail) < need && tail.len() > 1).then(|| tail.remove(0));
        if has_preview && room(&head, &tail) < need {
            head.truncate(1);
        }
        let preview = self.preview_rows(width, room(&head, &tail));
        // A preview shorter than its room gives the question and the spacing back.
        let mut spare = height.saturating_sub(head.len() + preview.len() + tail.len());
        if let Some(line) = question
            && spare > 0
        {
            tail.insert(0, line);
            spare -= 1;
        }
        if let Some(Some(line)) = spacer
            && spare > 0
        {
            head.push(line);
        }
        let mut rows = head;
        rows.extend(preview);
        rows.extend(tail);
        let cut = rows.len().saturating_sub(height);
        rows.split_off(cut)
    }

    /// Draws the framed popup into `area`, scrolling the preview when it does not fit.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let frame = FramedBox {
            title: &self.tool,
            accent: Color::Yellow,
            colors: self.colors,
        };
        if let Some(inner) = frame.render(area, buf) {
            Paragraph::new(self.rows(inner)).render(inner, buf);
        }
    }

    /// Where the terminal cursor goes while feedback is typed (after the text, so an IME
    /// draws its preedit there); `None` otherwise.
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        self.feedback.as_ref()?;
        let inner = FramedBox::inner(area)?;
        let rows = self.rows(inner);
        let last = rows.last()?;
        let x = u16::try_from(last.width()).unwrap_or(u16::MAX);
        let y = u16::try_from(rows.len() - 1).unwrap_or(u16::MAX);
        Some(Position::new(inner.x + x.min(inner.width - 1), inner.y + y))
    }
}

/// Preview lines shown before the rest is counted.
const PREVIEW_LINES: usize = 20;
/// Columns of "❯ 1. ": where an option's continuation rows start.
const OPTION_INDENT: usize = 5;

/// `spans` wrapped to `width` columns, continuation rows indented by `indent`.
fn wrapped(spans: &[Span<'_>], width: usize, indent: usize, mode: WrapMode) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent = indent.min(width - 1);
    wrap_spans(spans, width, width - indent, mode)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            if i == 0 || indent == 0 {
                Line::from(row)
            } else {
                let mut spans = vec![Span::raw(" ".repeat(indent))];
                spans.extend(row);
                Line::from(spans)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
