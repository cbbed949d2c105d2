//! The look shared by completion popups: a bordered list, at most [`MAX_VISIBLE_ROWS`]
//! rows, scrolled so the selection is visible, the selected row marked with `›` (and
//! coloured unless `NO_COLOR`), a `n/m` position on the bottom border when it scrolls.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

/// Rows a popup shows before it scrolls.
pub const MAX_VISIBLE_ROWS: usize = 8;

/// The rows shown for `len` rows with `selected` chosen: a window keeping it visible.
pub fn window(len: usize, selected: Option<usize>) -> Range<usize> {
    let height = len.min(MAX_VISIBLE_ROWS);
    let start = selected
        .map_or(0, |s| s.saturating_add(1).saturating_sub(height))
        .min(len - height);
    start..start + height
}

/// Popup height for `len` rows, borders included.
pub fn height(len: usize) -> u16 {
    u16::try_from(len.clamp(1, MAX_VISIBLE_ROWS) + 2).unwrap_or(u16::MAX)
}

/// A style that keeps only its modifiers when colours are off.
pub fn tint(style: Style, color: Color, colors: bool) -> Style {
    if colors { style.fg(color) } else { style }
}

/// The dim style of secondary text (descriptions, hints).
pub fn secondary(colors: bool) -> Style {
    tint(
        Style::new().add_modifier(Modifier::DIM),
        Color::DarkGray,
        colors,
    )
}

/// Draws `rows` (all of them; the window is chosen here) in a bordered box over `area`,
/// `selected` (if any) marked.
pub fn render(
    area: Rect,
    buf: &mut Buffer,
    title: &str,
    rows: Vec<Line<'_>>,
    selected: Option<usize>,
    colors: bool,
) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    Clear.render(area, buf);
    let border = tint(Style::new(), Color::DarkGray, colors);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(Span::styled(title.to_string(), secondary(colors)));
    if let Some(selected) = selected.filter(|_| rows.len() > MAX_VISIBLE_ROWS) {
        block = block.title_bottom(
            Line::from(format!(" {}/{} ", selected + 1, rows.len()))
                .style(secondary(colors))
                .right_aligned(),
        );
    }
    let inner = block.inner(area);
    block.render(area, buf);
    if rows.is_empty() || inner.is_empty() {
        return;
    }
    let shown = window(rows.len(), selected);
    let first = shown.start;
    for (offset, line) in rows.into_iter().skip(first).take(shown.len()).enumerate() {
        let Ok(dy) = u16::try_from(offset) else { break };
        if dy >= inner.height {
            break;
        }
        let is_selected = selected == Some(first + offset);
        let marker = if is_selected { "› " } else { "  " };
        let mut spans = vec![Span::raw(marker)];
        spans.extend(line.spans);
        let mut line = Line::from(spans);
        if is_selected {
            line = line.patch_style(tint(
                Style::new().add_modifier(Modifier::BOLD),
                Color::Cyan,
                colors,
            ));
        }
        buf.set_line(inner.x, inner.y + dy, &line, inner.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_the_selection() {
        assert_eq!(window(3, Some(0)), 0..3);
        assert_eq!(window(20, Some(0)), 0..8);
        assert_eq!(window(20, Some(7)), 0..8);
        assert_eq!(window(20, Some(8)), 1..9);
        assert_eq!(window(20, Some(19)), 12..20);
        assert_eq!(window(20, None), 0..8);
        assert_eq!(height(0), 3);
        assert_eq!(height(20), 10);
    }
}
