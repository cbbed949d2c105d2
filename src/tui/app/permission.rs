//! The permission popup: which tool wants to do what (the command for Bash, a diff preview
//! for Edit and Write, the arguments otherwise), and three answers — Yes, Yes and don't
//! ask again (showing the exact rule it saves), No and tell robota what to do instead
//! (typed feedback goes to the model). Keys: 1–3, y/n, arrows + Enter, Esc = No.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::tui::wrap::{WrapMode, sanitize, wrap_spans};

/// What the user chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionChoice {
    Allow,
    AllowAlways,
    Deny(Option<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Allow,
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
                KeyCode::Esc => return Some(PermissionChoice::Deny(None)),
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
            KeyCode::Char('n') | KeyCode::Esc => Some(PermissionChoice::Deny(None)),
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

    fn inner(area: Rect) -> Option<Rect> {
        (area.width >= 4 && area.height >= 3)
            .then(|| Rect::new(area.x + 1, area.y + 1, area.width - 2, area.height - 2))
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let Some(inner) = Self::inner(area) else {
            return;
        };
        Clear.render(area, buf);
        let accent = if self.colors {
            Style::default().fg(Color::Yellow)
        } else {
            Style::default()
        };
        Block::default()
            .borders(Borders::ALL)
            .border_style(accent)
            .title(Span::styled(
                format!(" {} ", self.tool),
                accent.add_modifier(Modifier::BOLD),
            ))
            .render(area, buf);
        Paragraph::new(self.rows(inner)).render(inner, buf);
    }

    /// Where the terminal cursor goes while feedback is typed (after the text, so an IME
    /// draws its preedit there); `None` otherwise.
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        self.feedback.as_ref()?;
        let inner = Self::inner(area)?;
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
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn popup() -> PermissionPopup {
        PermissionPopup::new(
            "Bash",
            "rm -rf build".into(),
            vec![],
            "Bash(rm -rf *)".into(),
            true,
        )
    }

    #[test]
    fn number_and_letter_keys_choose_directly() {
        assert_eq!(
            popup().handle_key(key(KeyCode::Char('1'))),
            Some(PermissionChoice::Allow)
        );
        assert_eq!(
            popup().handle_key(key(KeyCode::Char('y'))),
            Some(PermissionChoice::Allow)
        );
        assert_eq!(
            popup().handle_key(key(KeyCode::Char('2'))),
            Some(PermissionChoice::AllowAlways)
        );
        assert_eq!(
            popup().handle_key(key(KeyCode::Char('n'))),
            Some(PermissionChoice::Deny(None))
        );
        assert_eq!(
            popup().handle_key(key(KeyCode::Esc)),
            Some(PermissionChoice::Deny(None))
        );
    }

    #[test]
    fn arrows_enter_and_typed_feedback() {
        let mut p = popup();
        assert_eq!(p.handle_key(key(KeyCode::Down)), None);
        assert_eq!(
            p.handle_key(key(KeyCode::Enter)),
            Some(PermissionChoice::AllowAlways)
        );
        let mut p = popup();
        assert_eq!(p.handle_key(key(KeyCode::Char('3'))), None);
        for c in "use trash".chars() {
            assert_eq!(p.handle_key(key(KeyCode::Char(c))), None);
        }
        p.handle_key(key(KeyCode::Backspace));
        assert_eq!(
            p.handle_key(key(KeyCode::Enter)),
            Some(PermissionChoice::Deny(Some("use tras".into())))
        );
    }

    #[test]
    fn without_a_rule_to_save_only_yes_and_no_are_offered() {
        let mut p = popup();
        p.rule.clear();
        assert_eq!(p.handle_key(key(KeyCode::Char('2'))), None);
        assert!(p.feedback.is_some(), "2 is now \"No, and tell robota…\"");
        let mut p = popup();
        p.rule.clear();
        p.handle_key(key(KeyCode::Down));
        p.handle_key(key(KeyCode::Down));
        assert_eq!(p.selected, 1, "two options only");
        assert_eq!(p.handle_key(key(KeyCode::Char('3'))), None);
        assert!(p.feedback.is_none(), "there is no third option");
    }

    #[test]
    fn narrow_popups_grow_by_their_wrapped_rows_and_place_the_cursor_after_feedback() {
        let mut p = popup();
        assert_eq!(
            p.height(80),
            2 + 2 + 1 + 3,
            "no preview: summary, question, options"
        );
        assert!(p.height(30) > p.height(80), "the long options wrap");
        assert_eq!(p.cursor_position(Rect::new(0, 0, 80, 10)), None);
        p.handle_key(key(KeyCode::Char('3')));
        p.handle_key(key(KeyCode::Char('네')));
        let area = Rect::new(0, 0, 80, p.height(80));
        let prefix = "  Tell robota what to do instead: ".len() as u16;
        assert_eq!(
            p.cursor_position(area),
            Some(Position::new(1 + prefix + 2, area.height - 2))
        );
    }

    #[test]
    fn the_rule_it_saves_is_shown_and_tiny_areas_do_not_panic() {
        let p = popup();
        let mut buf = Buffer::empty(Rect::new(0, 0, 70, 12));
        p.render(buf.area, &mut buf);
        let text: String = (0..12)
            .map(|y| {
                (0..70)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        assert!(text.contains("Bash(rm -rf *)"), "{text}");
        assert!(text.contains("rm -rf build"));
        let mut tiny = Buffer::empty(Rect::new(0, 0, 1, 1));
        p.render(tiny.area, &mut tiny);
    }
}
