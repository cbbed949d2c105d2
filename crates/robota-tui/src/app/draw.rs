//! Drawing one frame from the app state: the transcript fills the top, the queued prompt
//! (if any) and the composer sit above the status line, completion popups float over the
//! transcript, and the overlays are drawn last, each choosing its area — the permission
//! popup above the composer, pickers and screens over everything but the status line
//! (the base is not drawn under those). The terminal cursor goes where the topmost
//! overlay with an opinion wants it, else in the composer, so an IME draws its preedit
//! in place.

use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::overlay::{Cursor, Stage};
use super::state::App;

impl App {
    /// Draws the whole screen into `frame`.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let cursor = self.render(area, frame.buffer_mut(), Instant::now());
        if let Some(position) = cursor {
            frame.set_cursor_position(position);
        }
    }

    /// Renders into `buf` (a pure function of the state and the time); returns where the
    /// cursor goes, if anywhere.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, now: Instant) -> Option<Position> {
        self.width = area.width;
        if area.is_empty() {
            return None;
        }
        let status_height = u16::from(area.height >= 2);
        let status_area = Rect::new(
            area.x,
            area.bottom() - status_height,
            area.width,
            status_height,
        );
        let above = Rect::new(area.x, area.y, area.width, area.height - status_height);
        self.status.background_jobs = self.running_background_jobs();
        self.render_status(status_area, buf, now);

        if self.layers.covers_screen() {
            let stage = Stage {
                screen: above,
                free: above,
            };
            self.layers.draw(&stage, buf);
            return match self.layers.cursor(&stage) {
                Cursor::At(position) => Some(position),
                Cursor::Hidden | Cursor::PassThrough => None,
            };
        }

        self.input.set_width(above.width);
        let composer_height = self
            .input
            .desired_height(above.width)
            .min((above.height / 2).max(1))
            .min(above.height);
        let composer_area = Rect::new(
            above.x,
            above.bottom() - composer_height,
            above.width,
            composer_height,
        );
        let queued = self.queued_row();
        let queued_height = u16::from(queued.is_some() && composer_area.y > above.y);
        let queued_area = Rect::new(
            above.x,
            composer_area.y - queued_height,
            above.width,
            queued_height,
        );
        let transcript_area = Rect::new(above.x, above.y, above.width, queued_area.y - above.y);
        self.transcript.render(transcript_area, buf);
        if let Some(queued) = &queued {
            self.render_queued(queued, queued_area, buf);
        }
        if let Some(prompt) = &self.search {
            let cursor = self.render_search(prompt, composer_area, buf);
            if self.layers.is_empty() {
                return cursor;
            }
        } else {
            self.input.render(composer_area, buf);
        }

        if self.layers.is_empty() {
            // Completion belongs to the composer, which has the keys only without overlays.
            self.input.render_popup(composer_area, buf);
            return self.input.cursor_position(composer_area);
        }
        let stage = Stage {
            screen: above,
            free: Rect::new(above.x, above.y, above.width, composer_area.y - above.y),
        };
        self.layers.draw(&stage, buf);
        match self.layers.cursor(&stage) {
            Cursor::At(position) => Some(position),
            Cursor::Hidden => None,
            Cursor::PassThrough => self.input.cursor_position(composer_area),
        }
    }

    fn render_status(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        if area.is_empty() {
            return;
        }
        // Vim mode's current mode leads the line, as in vim.
        let area = match self.input.composer().vim_mode() {
            Some(mode) if self.hint.is_none() => {
                let label = mode.label();
                let width = (label.len() as u16 + 1).min(area.width);
                Paragraph::new(Line::from(Span::styled(
                    label,
                    Style::default().add_modifier(Modifier::BOLD),
                )))
                .render(Rect { width, ..area }, buf);
                Rect {
                    x: area.x + width,
                    width: area.width - width,
                    ..area
                }
            }
            _ => area,
        };
        match &self.hint {
            Some(hint) => Paragraph::new(Line::from(Span::styled(
                hint.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            )))
            .render(area, buf),
            None => match &self.status_command_line {
                // The user's status command speaks while idle; a running turn shows the
                // spinner and how to stop it.
                Some(line) if !self.is_busy() => {
                    Paragraph::new(Line::from(line.clone())).render(area, buf);
                }
                _ => self.status.render(area, buf, now),
            },
        }
    }

    /// The row above the composer: a prompt sent into the running turn, else the queue,
    /// else (while a turn runs and something is typed) which key does what.
    fn queued_row(&self) -> Option<Line<'static>> {
        let first_and_more = |text: &str| {
            let first = text.lines().next().unwrap_or("").to_string();
            let more = if text.lines().count() > 1 { " …" } else { "" };
            format!("{first}{more}")
        };
        if let Some(text) = self.steering() {
            return Some(Line::from(vec![
                Span::styled("⏩ sending now: ", self.theme.dim),
                Span::raw(first_and_more(text)),
                Span::styled("  (with the next tool results)", self.theme.dim),
            ]));
        }
        if let Some(queued) = self.queued() {
            return Some(Line::from(vec![
                Span::styled("⏳ queued: ", self.theme.dim),
                Span::raw(first_and_more(&queued)),
                Span::styled("  (backspace to edit)", self.theme.dim),
            ]));
        }
        (self.is_busy()
            && !self.input.composer().is_empty()
            && !self.input.composer().is_shell_mode())
        .then(|| Line::from(Span::styled("↵ queue · ⇥ send now", self.theme.dim)))
    }

    fn render_queued(&self, line: &Line<'static>, area: Rect, buf: &mut Buffer) {
        Paragraph::new(line.clone()).render(area, buf);
    }
}
