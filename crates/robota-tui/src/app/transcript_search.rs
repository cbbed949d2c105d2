//! `/` while the transcript is scrolled up (and the composer is empty): a search prompt in
//! the composer's place. Typing searches as you type; Enter keeps the current match and
//! hands `n`/`N` the next and previous one; Esc closes the search. Scroll keys keep
//! scrolling; any other key after Enter closes the search and does what it always does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::state::App;

/// The search prompt shown in the composer's place.
#[derive(Debug, Clone, Default)]
pub struct SearchPrompt {
    /// The text searched for, as typed.
    pub query: String,
    /// Still typing the query (before Enter).
    pub editing: bool,
}

impl App {
    /// Offers a key to the transcript search; returns whether it took the key.
    pub(super) fn search_key(&mut self, key: KeyEvent) -> bool {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let Some(prompt) = &mut self.search else {
            let opens = key.code == KeyCode::Char('/')
                && plain
                && !self.transcript.is_following()
                && self.input.composer().is_empty()
                && !self.input.composer().is_shell_mode()
                && !self.input.popup_open();
            if opens {
                self.search = Some(SearchPrompt {
                    query: String::new(),
                    editing: true,
                });
            }
            return opens;
        };
        let scroll_key = matches!(
            key.code,
            KeyCode::PageUp | KeyCode::PageDown | KeyCode::Home | KeyCode::End
        );
        if scroll_key {
            return false;
        }
        match key.code {
            KeyCode::Esc => self.close_search(),
            KeyCode::Enter if prompt.editing => prompt.editing = false,
            KeyCode::Backspace if prompt.editing => {
                if prompt.query.pop().is_none() {
                    self.close_search();
                } else {
                    let query = prompt.query.clone();
                    self.transcript.search(&query);
                }
            }
            KeyCode::Char(c) if plain && prompt.editing => {
                prompt.query.push(c);
                let query = prompt.query.clone();
                self.transcript.search(&query);
            }
            KeyCode::Char('n') if plain => self.transcript.search_step(true),
            KeyCode::Char('N') if plain => self.transcript.search_step(false),
            KeyCode::Char('/') if plain => {
                prompt.query.clear();
                prompt.editing = true;
                self.transcript.clear_search();
            }
            _ if prompt.editing => {}
            _ => {
                self.close_search();
                return false;
            }
        }
        true
    }

    fn close_search(&mut self) {
        self.search = None;
        self.transcript.clear_search();
    }

    /// Draws the search prompt over `area` (the composer's); returns where the cursor goes.
    pub(super) fn render_search(
        &self,
        prompt: &SearchPrompt,
        area: Rect,
        buf: &mut Buffer,
    ) -> Option<Position> {
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                buf[(x, y)].reset();
            }
        }
        let dim = Style::default().add_modifier(Modifier::DIM);
        let head = format!("/{}", prompt.query);
        let found = match self.transcript.search_position() {
            _ if prompt.query.is_empty() => String::new(),
            Some((_, 0)) | None => "  no match".to_string(),
            Some((current, total)) => format!("  {current}/{total}"),
        };
        let help = if prompt.editing {
            "  · Enter to keep · Esc to close"
        } else {
            "  · n/N next/previous · / new search · Esc to close"
        };
        let line = Line::from(vec![
            Span::styled(head.clone(), Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(found),
            Span::styled(help, dim),
        ]);
        Paragraph::new(line).render(area, buf);
        let x = u16::try_from(head.width()).unwrap_or(u16::MAX);
        prompt.editing.then(|| Position {
            x: area.x + x.min(area.width.saturating_sub(1)),
            y: area.y,
        })
    }
}
