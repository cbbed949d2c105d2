//! The workspace-trust question, asked once on the first interactive run in a folder whose
//! project settings would add hooks, allow rules, extra directories, MCP servers or a
//! provider address: the folder, what its settings would add, and two answers — trust it,
//! or continue with those held back (deny and ask rules apply either way). Keys: 1/2, y/n,
//! arrows + Enter; Esc (and Ctrl+C) = No. It covers everything above the status line.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::widgets::screen_kit::{
    Palette, ScreenLayout, ScreenRow, choice_rows, content_width, prose, prose_with,
};
use crate::wrap::WrapMode;

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustOutcome {
    /// Not answered yet.
    Pending,
    /// Trust the folder: its project settings apply.
    Trust,
    /// Do not trust it: the session runs without the held-back project settings.
    Decline,
}

/// The question's state.
#[derive(Debug, Clone)]
pub struct TrustPrompt {
    dir: String,
    held_back: Vec<String>,
    /// 0 = trust, 1 = decline.
    selected: usize,
    colors: bool,
}

const OPTIONS: [&str; 2] = ["Yes, trust this folder", "No, continue without them"];

impl TrustPrompt {
    /// `held_back`: what the project settings would add, one item each ("hooks
    /// (PreToolUse, Stop)", "allow rules: Bash(npm test)", "provider baseURL").
    pub fn new(dir: &Path, held_back: Vec<String>, colors: bool) -> Self {
        TrustPrompt {
            dir: dir.display().to_string(),
            held_back,
            selected: 0,
            colors,
        }
    }

    /// Handles a key press: 1/y or 2/n answer directly, Up/Down move the selection, Enter
    /// takes it, Esc and Ctrl+C decline.
    pub fn handle_key(&mut self, key: KeyEvent) -> TrustOutcome {
        if key.kind == KeyEventKind::Release {
            return TrustOutcome::Pending;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => TrustOutcome::Decline,
            KeyCode::Char('1' | 'y' | 'Y') => TrustOutcome::Trust,
            KeyCode::Char('2' | 'n' | 'N') | KeyCode::Esc => TrustOutcome::Decline,
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => {
                self.selected = 0;
                TrustOutcome::Pending
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.selected = 1;
                TrustOutcome::Pending
            }
            KeyCode::Enter if self.selected == 0 => TrustOutcome::Trust,
            KeyCode::Enter => TrustOutcome::Decline,
            _ => TrustOutcome::Pending,
        }
    }

    fn layout(&self, width: u16) -> ScreenLayout {
        let palette = Palette::new(self.colors);
        let width = content_width(width);
        let heading = if palette.colors {
            palette.title.fg(Color::Yellow)
        } else {
            palette.title
        };
        let mut top = prose("Do you trust the files in this folder?", heading, width, 0);
        top.push(ScreenRow::blank());
        top.extend(prose_with(
            &self.dir,
            Style::new().add_modifier(Modifier::BOLD),
            width,
            "",
            0,
            WrapMode::Chars,
        ));
        top.push(ScreenRow::blank());
        top.extend(prose(
            "Its project settings would add:",
            Style::new(),
            width,
            0,
        ));
        if self.held_back.is_empty() {
            top.push(ScreenRow::styled("  (nothing)", palette.dim));
        }
        for item in &self.held_back {
            top.extend(prose_with(
                item,
                Style::new(),
                width,
                "  • ",
                4,
                WrapMode::Words,
            ));
        }
        top.push(ScreenRow::blank());
        top.extend(prose(
            "Hooks run commands on your machine and allow rules let tools run without asking: only trust a folder whose files you know. If you decline, these stay held back; deny and ask rules still apply.",
            palette.dim,
            width,
            0,
        ));
        top.push(ScreenRow::blank());
        let choices: Vec<(String, String)> = OPTIONS
            .iter()
            .map(|o| (o.to_string(), String::new()))
            .collect();
        let mut bottom = choice_rows(&choices, self.selected, width, &palette);
        bottom.push(ScreenRow::blank());
        bottom.extend(prose(
            "1/2 or y/n · ↑↓ enter · esc no",
            palette.dim,
            width,
            0,
        ));
        ScreenLayout { top, bottom }
    }

    /// Draws the question over the whole `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.layout(area.width).render(area, buf);
    }
}

impl Overlay for TrustPrompt {
    fn on_key(&mut self, key: KeyEvent) -> EventResult {
        match self.handle_key(key) {
            TrustOutcome::Pending => EventResult::Consumed,
            TrustOutcome::Trust => EventResult::Done(AppAction::Trust(true)),
            TrustOutcome::Decline => EventResult::Done(AppAction::Trust(false)),
        }
    }

    fn is_full_screen(&self) -> bool {
        true
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        self.render(stage.screen, buf);
    }

    /// No text field: the cursor is hidden.
    fn cursor(&self, _stage: &Stage) -> Cursor {
        Cursor::Hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn prompt() -> TrustPrompt {
        TrustPrompt::new(
            Path::new("/home/u/project"),
            vec![
                "hooks (PreToolUse, Stop)".into(),
                "allow rules: Bash(npm test)".into(),
            ],
            true,
        )
    }

    #[test]
    fn direct_keys_answer_at_once() {
        for (code, outcome) in [
            (KeyCode::Char('1'), TrustOutcome::Trust),
            (KeyCode::Char('y'), TrustOutcome::Trust),
            (KeyCode::Char('2'), TrustOutcome::Decline),
            (KeyCode::Char('n'), TrustOutcome::Decline),
            (KeyCode::Esc, TrustOutcome::Decline),
            (KeyCode::Char('x'), TrustOutcome::Pending),
        ] {
            assert_eq!(prompt().handle_key(key(code)), outcome, "{code:?}");
        }
        assert_eq!(
            prompt().handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            TrustOutcome::Decline
        );
    }

    #[test]
    fn arrows_then_enter() {
        let mut p = prompt();
        assert_eq!(p.handle_key(key(KeyCode::Enter)), TrustOutcome::Trust);
        assert_eq!(p.handle_key(key(KeyCode::Down)), TrustOutcome::Pending);
        assert_eq!(p.handle_key(key(KeyCode::Enter)), TrustOutcome::Decline);
        p.handle_key(key(KeyCode::Up));
        assert_eq!(p.handle_key(key(KeyCode::Enter)), TrustOutcome::Trust);
    }

    #[test]
    fn the_choices_stay_visible_on_a_short_screen() {
        let mut p = prompt();
        p.held_back = (0..30).map(|i| format!("allow rule {i}")).collect();
        let buf = crate::composer::test_support::render(40, 10, |area, buf| p.render(area, buf));
        let text = crate::composer::test_support::rows_text(&buf);
        assert!(text.contains("1. Yes, trust this folder"), "{text}");
        assert!(text.contains("2. No, continue without them"), "{text}");
        assert!(text.contains('…'), "the cut list is marked: {text}");
    }
}
