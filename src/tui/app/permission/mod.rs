//! The permission popup: which tool wants to do what (the command for Bash, a diff preview
//! for Edit and Write, the arguments otherwise), and three answers — Yes, Yes and don't
//! ask again (showing the exact rule it saves), No and tell robota what to do instead
//! (typed feedback goes to the model). Keys: 1–3, y/n, arrows + Enter; Esc or Ctrl+C = No
//! and stop the turn.
//!
//! [`PermissionOverlay`] holds the popup with the request it answers and floats above
//! the composer; `preview.rs` makes a request into its popup.

mod preview;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub use self::preview::permission_popup;
use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::sdk::PermissionRequest;
use crate::tui::theme::Theme;
use crate::tui::widgets::framed_box::FramedBox;
use crate::tui::wrap::{WrapMode, sanitize, wrap_spans};

/// The permission popup's overlay id.
pub const PERMISSION: &str = "permission";

/// The popup on screen with the request it answers.
pub struct PermissionOverlay {
    popup: PermissionPopup,
    /// Taken when the user answers.
    request: Option<PermissionRequest>,
}

impl PermissionOverlay {
    /// The popup for `request` (see [`permission_popup`]).
    pub fn new(request: PermissionRequest, cwd: &Path, width: u16, theme: &Theme) -> Self {
        PermissionOverlay {
            popup: permission_popup(&request, cwd, width, theme),
            request: Some(request),
        }
    }

    /// Just above the composer, as tall as the popup wants and the room allows.
    fn area(&self, stage: &Stage) -> Rect {
        let free = stage.free;
        let height = self.popup.height(free.width).min(free.height);
        Rect::new(free.x, free.bottom() - height, free.width, height)
    }
}

impl Overlay for PermissionOverlay {
    fn on_key(&mut self, key: KeyEvent) -> EventResult {
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

    fn is_full_screen(&self) -> bool {
        false
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        self.popup.render(self.area(stage), buf);
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
    Allow,
    /// Yes, and switch to this mode (a plan approved "with auto-accepted edits").
    AllowWithMode(crate::core::permission::PermissionMode),
    AllowAlways,
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
    pub tool: String,
    /// One-line summary: the command, the path, or the arguments.
    pub summary: String,
    /// Preview lines (a diff for Edit/Write), already styled.
    pub preview: Vec<Line<'static>>,
    pub rule: String,
    pub selected: usize,
    /// `Some` while the user types feedback for "No".
    pub feedback: Option<String>,
    pub colors: bool,
}

impl PermissionPopup {
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
        }
    }

    /// The answers offered, in order; "don't ask again" only when there is a rule to save.
    fn options(&self) -> Vec<(Answer, String)> {
        if self.tool == crate::core::permission::PLAN_APPROVAL_TOOL {
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
                crate::core::permission::PermissionMode::AcceptEdits,
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

    /// Height the popup wants when it is `width` columns wide (it may get less).
    pub fn height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(2));
        let rows = self.head_rows(inner).len()
            + self.preview_rows(inner).len()
            + self.tail_rows(inner).len();
        u16::try_from(rows + 2).unwrap_or(u16::MAX)
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

    /// The preview (its first 20 lines, then a count of the rest) and a blank row; nothing
    /// without a preview.
    fn preview_rows(&self, inner: usize) -> Vec<Line<'static>> {
        if self.preview.is_empty() {
            return Vec::new();
        }
        let shown = self.preview.len().min(PREVIEW_LINES);
        let mut rows: Vec<Line<'static>> = self.preview[..shown]
            .iter()
            .flat_map(|line| {
                wrapped(&line.spans, inner, 0, WrapMode::Chars)
                    .into_iter()
                    .map(|row| row.style(line.style))
            })
            .collect();
        if self.preview.len() > shown {
            rows.push(Line::from(format!(
                "… {} more lines",
                self.preview.len() - shown
            )));
        }
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

    /// The rows shown in `inner` (width, height): the preview gives way first, then the
    /// top, so the options and the feedback line stay visible.
    fn rows(&self, inner: Rect) -> Vec<Line<'static>> {
        let width = usize::from(inner.width);
        let height = usize::from(inner.height);
        let head = self.head_rows(width);
        let mut preview = self.preview_rows(width);
        let tail = self.tail_rows(width);
        let room = height.saturating_sub(head.len() + tail.len());
        if preview.len() > room {
            // Keep what fits, a count of the rest, and the blank row before the question.
            let kept = room.saturating_sub(2);
            let hidden = preview.len() - 1 - kept;
            preview.truncate(kept);
            if room >= 2 {
                preview.push(Line::from(format!("… {hidden} more lines")));
                preview.push(Line::default());
            }
        }
        let mut rows = head;
        rows.extend(preview);
        rows.extend(tail);
        let cut = rows.len().saturating_sub(height);
        rows.split_off(cut)
    }

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
