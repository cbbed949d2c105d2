//! The permission popup: which tool wants to do what (the command for Bash, a diff preview
//! for Edit and Write, the arguments otherwise), and three answers — Yes, Yes and don't
//! ask again (showing the exact rule it saves), No and tell robota what to do instead
//! (typed feedback goes to the model). Keys: 1–3, y/n, arrows + Enter, Esc = No.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

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

    /// Height the popup wants at `width` (it may get less).
    pub fn height(&self) -> u16 {
        let preview = self.preview.len().min(20) + usize::from(self.preview.len() > 20);
        // Borders, summary and a blank line, the preview, a blank line and the question,
        // the options, the feedback line.
        let rows =
            2 + 2 + preview + 2 + self.options().len() + usize::from(self.feedback.is_some());
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        if area.width < 4 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let accent = if self.colors {
            Style::default().fg(Color::Yellow)
        } else {
            Style::default()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(accent)
            .title(Span::styled(
                format!(" {} ", self.tool),
                accent.add_modifier(Modifier::BOLD),
            ));
        let mut lines = vec![
            Line::from(Span::styled(
                self.summary.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            )),
            Line::default(),
        ];
        let shown = self.preview.len().min(20);
        lines.extend(self.preview.iter().take(shown).cloned());
        if self.preview.len() > shown {
            lines.push(Line::from(format!(
                "… {} more lines",
                self.preview.len() - shown
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from("Do you want to proceed?"));
        for (i, (_, option)) in self.options().iter().enumerate() {
            let marker = if i == self.selected { "❯" } else { " " };
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            lines.push(Line::from(Span::styled(
                format!("{marker} {}. {option}", i + 1),
                style,
            )));
        }
        if let Some(text) = &self.feedback {
            lines.push(Line::from(format!(
                "  Tell robota what to do instead: {text}▏"
            )));
        }
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }
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
