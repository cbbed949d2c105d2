//! Drawing one frame from the app state: the transcript fills the top, the queued prompt
//! (if any) and the composer sit above the status line, completion popups float over the
//! transcript, and the layers are drawn last — the permission popup above the composer,
//! pickers and screens over everything but the status line. The terminal cursor goes
//! where the top text field wants it, so an IME draws its preedit in place.

use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::layers::Layer;
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
        self.render_status(status_area, buf, now);

        if let Some(layer) = self.layers.last().filter(|l| l.is_full_screen()) {
            return render_full_screen(layer, above, buf);
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
        let queued_height = u16::from(self.queued.is_some() && composer_area.y > above.y);
        let queued_area = Rect::new(
            above.x,
            composer_area.y - queued_height,
            above.width,
            queued_height,
        );
        let transcript_area = Rect::new(above.x, above.y, above.width, queued_area.y - above.y);
        self.transcript.render(transcript_area, buf);
        if let Some(queued) = &self.queued {
            self.render_queued(queued, queued_area, buf);
        }
        self.input.render(composer_area, buf);

        if let Some(Layer::Permission { popup, .. }) = self.layers.last() {
            let height = popup
                .height(above.width)
                .min(transcript_area.height + queued_height);
            let popup_area = Rect::new(above.x, composer_area.y - height, above.width, height);
            popup.render(popup_area, buf);
            return popup.cursor_position(popup_area);
        }
        self.input.render_popup(composer_area, buf);
        self.input.cursor_position(composer_area)
    }

    fn render_status(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        if area.is_empty() {
            return;
        }
        match &self.hint {
            Some(hint) => Paragraph::new(Line::from(Span::styled(
                hint.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            )))
            .render(area, buf),
            None => self.status.render(area, buf, now),
        }
    }

    fn render_queued(&self, queued: &str, area: Rect, buf: &mut Buffer) {
        let first = queued.lines().next().unwrap_or("");
        let more = if queued.lines().count() > 1 {
            " …"
        } else {
            ""
        };
        let line = Line::from(vec![
            Span::styled("⏳ queued: ", self.theme.dim),
            Span::raw(format!("{first}{more}")),
            Span::styled("  (backspace to edit)", self.theme.dim),
        ]);
        Paragraph::new(line).render(area, buf);
    }
}

/// A layer that covers everything above the status line; returns its cursor.
fn render_full_screen(layer: &Layer, area: Rect, buf: &mut Buffer) -> Option<Position> {
    Clear.render(area, buf);
    match layer {
        Layer::Picker { picker, .. } => {
            picker.render(area, buf);
            picker.cursor_position(area)
        }
        Layer::Setup(setup) => {
            setup.render(area, buf);
            setup.cursor_position(area)
        }
        Layer::Trust(prompt) => {
            prompt.render(area, buf);
            None
        }
        Layer::Permission { .. } => None,
    }
}
