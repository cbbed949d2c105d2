//! A box floating over the screen (the permission popup): the area cleared, a border in
//! an accent colour (none without colours) with a bold title set into its top edge, and
//! the inner area for the content.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// A bordered, titled box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FramedBox<'a> {
    pub title: &'a str,
    /// The border and title colour when colours are on.
    pub accent: Color,
    pub colors: bool,
}

impl FramedBox<'_> {
    /// The area inside the border; `None` when `area` is too small for a box (under 4×3).
    pub(crate) fn inner(area: Rect) -> Option<Rect> {
        (area.width >= 4 && area.height >= 3)
            .then(|| Rect::new(area.x + 1, area.y + 1, area.width - 2, area.height - 2))
    }

    /// Clears `area` and draws the border and title; returns the inner area, or `None`
    /// (drawing nothing) when `area` is too small.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer) -> Option<Rect> {
        let inner = Self::inner(area)?;
        Clear.render(area, buf);
        let accent = if self.colors {
            Style::default().fg(self.accent)
        } else {
            Style::default()
        };
        Block::default()
            .borders(Borders::ALL)
            .border_style(accent)
            .title(Span::styled(
                format!(" {} ", self.title),
                accent.add_modifier(Modifier::BOLD),
            ))
            .render(area, buf);
        Some(inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_sits_in_the_top_border_and_tiny_areas_get_no_box() {
        let frame = FramedBox {
            title: "Edit",
            accent: Color::Yellow,
            colors: true,
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 3));
        assert_eq!(
            frame.render(buf.area, &mut buf),
            Some(Rect::new(1, 1, 10, 1))
        );
        let top: String = (0..12).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(top, "┌ Edit ────┐");
        assert_eq!(buf[(2, 0)].fg, Color::Yellow);
        let mut tiny = Buffer::empty(Rect::new(0, 0, 3, 3));
        assert_eq!(frame.render(tiny.area, &mut tiny), None);
    }
}
