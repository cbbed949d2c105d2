//! What the full-screen prompts (setup, picker, trust question) draw with: rows of styled
//! spans laid out top-down with a block pinned to the bottom (choices and key hints), each
//! row cut to the width with `…`, an optional highlighted row and a cursor cell; plus the
//! shared styles (ANSI palette only; with colours off, modifiers instead) and the helpers
//! for wrapped prose and numbered choices.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::line_input::LineInput;
use crate::theme::Theme;
use crate::wrap::{WrapMode, display_width, sanitize, truncate_spans, wrap_spans};

/// One row of a screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ScreenRow {
    pub spans: Vec<Span<'static>>,
    /// Column of the text cursor in this row (a field being edited).
    pub cursor: Option<usize>,
    /// A style laid over the whole row (the selected choice with colours off).
    pub highlight: Option<Style>,
}

impl ScreenRow {
    pub(crate) fn blank() -> Self {
        ScreenRow::default()
    }

    pub(crate) fn new(spans: Vec<Span<'static>>) -> Self {
        ScreenRow {
            spans,
            ..ScreenRow::default()
        }
    }

    pub(crate) fn styled(text: impl Into<String>, style: Style) -> Self {
        ScreenRow::new(vec![Span::styled(text.into(), style)])
    }
}

/// A screen: `top` rows from the first line down, `bottom` rows ending on the last line.
/// When the height is short, the bottom block keeps its first rows (the choices) and the
/// top block is cut, its last visible row becoming `…` (unless only one row is left).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ScreenLayout {
    pub top: Vec<ScreenRow>,
    pub bottom: Vec<ScreenRow>,
}

/// Columns left blank on each side when the screen is wide enough for a margin.
pub(crate) fn margin(width: u16) -> u16 {
    if width >= 12 { 1 } else { 0 }
}

/// Columns available for a row's content in an area `width` wide.
pub(crate) fn content_width(width: u16) -> usize {
    usize::from(width.saturating_sub(2 * margin(width)))
}

impl ScreenLayout {
    /// Which row goes on which line (offset from the top) for `height` lines.
    fn placed(&self, height: usize) -> Vec<(usize, std::borrow::Cow<'_, ScreenRow>)> {
        let bottom = self.bottom.len().min(height);
        let room = height - bottom;
        let mut out = Vec::with_capacity(height);
        for (y, row) in self.top.iter().take(room).enumerate() {
            if y + 1 == room && room >= 2 && self.top.len() > room {
                let ellipsis = ScreenRow::styled("…", Style::new());
                out.push((y, std::borrow::Cow::Owned(ellipsis)));
            } else {
                out.push((y, std::borrow::Cow::Borrowed(row)));
            }
        }
        for (i, row) in self.bottom.iter().take(bottom).enumerate() {
            out.push((room + i, std::borrow::Cow::Borrowed(row)));
        }
        out
    }

    /// Clears `area` and draws the rows into it.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        Clear.render(area, buf);
        let left = area.x + margin(area.width);
        let width = content_width(area.width);
        let Ok(width_cells) = u16::try_from(width) else {
            return;
        };
        for (offset, row) in self.placed(usize::from(area.height)) {
            let Ok(dy) = u16::try_from(offset) else { break };
            let y = area.y + dy;
            let (spans, _) = truncate_spans(&row.spans, width);
            let line = Line::from(spans);
            buf.set_line(left, y, &line, width_cells);
            if let Some(style) = row.highlight {
                buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            }
            if let Some(column) = row.cursor.filter(|&c| c < width) {
                let x = left + u16::try_from(column).unwrap_or(0);
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.modifier.insert(Modifier::REVERSED);
                }
            }
        }
    }

    /// Where the terminal cursor goes: the cursor cell of the first visible row that has
    /// one.
    pub(crate) fn cursor(&self, area: Rect) -> Option<Position> {
        if area.is_empty() {
            return None;
        }
        let width = content_width(area.width);
        self.placed(usize::from(area.height))
            .into_iter()
            .find_map(|(offset, row)| {
                let column = row.cursor?.min(width.saturating_sub(1));
                Some(Position {
                    x: area.x + margin(area.width) + u16::try_from(column).ok()?,
                    y: area.y + u16::try_from(offset).ok()?,
                })
            })
            .filter(|p| area.contains(*p))
    }
}

/// The styles the screens share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Palette {
    pub colors: bool,
    pub title: Style,
    pub dim: Style,
    pub error: Style,
    /// The `>` before a field.
    pub prompt: Style,
    /// The label of the selected choice.
    pub selected: Style,
    /// Laid over the selected row when colours are off (reversed video).
    pub selected_row: Option<Style>,
}

impl Palette {
    pub(crate) fn new(colors: bool) -> Self {
        let theme = Theme::new(colors);
        let tint = |style: Style, color: Color| if colors { style.fg(color) } else { style };
        Palette {
            colors,
            title: Style::new().add_modifier(Modifier::BOLD),
            dim: theme.dim,
            error: theme.notice_error.add_modifier(Modifier::BOLD),
            prompt: tint(Style::new(), Color::Cyan),
            selected: tint(Style::new().add_modifier(Modifier::BOLD), Color::Cyan),
            selected_row: (!colors).then(|| Style::new().add_modifier(Modifier::REVERSED)),
        }
    }
}

/// Text wrapped at word boundaries to `width` columns, one row per visual line, every
/// row after the first indented by `indent` spaces.
pub(crate) fn prose(text: &str, style: Style, width: usize, indent: usize) -> Vec<ScreenRow> {
    prose_with(text, style, width, "", indent, WrapMode::Words)
}

/// Like [`prose`], with a `lead` (e.g. `• `) before the first row and a wrap mode (paths
/// wrap anywhere).
pub(crate) fn prose_with(
    text: &str,
    style: Style,
    width: usize,
    lead: &str,
    indent: usize,
    mode: WrapMode,
) -> Vec<ScreenRow> {
    let clean = sanitize(text);
    let lead_width = display_width(lead);
    let rows = wrap_spans(
        &[Span::styled(clean.into_owned(), style)],
        width.saturating_sub(lead_width).max(1),
        width.saturating_sub(indent).max(1),
        mode,
    );
    rows.into_iter()
        .enumerate()
        .map(|(i, spans)| {
            let pad = if i == 0 {
                lead.to_string()
            } else {
                " ".repeat(indent)
            };
            let mut all = vec![Span::raw(pad)];
            all.extend(spans);
            ScreenRow::new(all)
        })
        .collect()
}

/// One line of untrusted text (a session title, a path) made safe for one row.
pub(crate) fn one_line(text: &str) -> String {
    sanitize(text).replace('\n', " ")
}

/// A field row: `> ` then the field's text (masked for secrets) or, when empty, a dim
/// placeholder, with the cursor cell marked.
pub(crate) fn field_row(
    input: &LineInput,
    placeholder: &str,
    masked: bool,
    width: usize,
    palette: &Palette,
) -> ScreenRow {
    const PROMPT: &str = "> ";
    let room = width.saturating_sub(PROMPT.len());
    let view = input.view(room, masked);
    let mut spans = vec![Span::styled(PROMPT, palette.prompt)];
    if input.is_empty() && !placeholder.is_empty() {
        // The cursor cell marks the placeholder's first character.
        spans.push(Span::styled(placeholder.to_string(), palette.dim));
    } else {
        spans.push(Span::raw(view.text));
    }
    ScreenRow {
        spans,
        cursor: Some(PROMPT.len() + view.cursor),
        highlight: None,
    }
}

/// Numbered choices (`❯ 1. Label   detail`): labels in one column, details after the
/// widest label and dropped when the row is too narrow for them.
pub(crate) fn choice_rows(
    choices: &[(String, String)],
    selected: usize,
    width: usize,
    palette: &Palette,
) -> Vec<ScreenRow> {
    let heads: Vec<String> = choices
        .iter()
        .enumerate()
        .map(|(i, (label, _))| format!("{}. {}", i + 1, one_line(label)))
        .collect();
    let widest = heads.iter().map(|h| display_width(h)).max().unwrap_or(0);
    let detail_column = 2 + widest + 3;
    let show_details = width >= detail_column + 12;
    choices
        .iter()
        .zip(heads)
        .enumerate()
        .map(|(i, ((_, detail), head))| {
            let is_selected = i == selected;
            let marker = if is_selected { "❯ " } else { "  " };
            let label_style = if is_selected {
                palette.selected
            } else {
                Style::new()
            };
            let mut spans = vec![
                Span::styled(marker, label_style),
                Span::styled(head.clone(), label_style),
            ];
            if show_details && !detail.is_empty() {
                let pad = detail_column - 2 - display_width(&head);
                spans.push(Span::raw(" ".repeat(pad)));
                spans.push(Span::styled(one_line(detail), palette.dim));
            }
            ScreenRow {
                spans,
                cursor: None,
                highlight: palette.selected_row.filter(|_| is_selected),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(buf: &Buffer) -> String {
        let area = buf.area;
        (area.y..area.bottom())
            .map(|y| {
                (area.x..area.right())
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
                    + "\n"
            })
            .collect()
    }

    fn rows(texts: &[&str]) -> Vec<ScreenRow> {
        texts
            .iter()
            .map(|t| ScreenRow::styled(*t, Style::new()))
            .collect()
    }

    #[test]
    fn the_bottom_block_is_pinned_and_a_cut_top_ends_in_an_ellipsis() {
        let layout = ScreenLayout {
            top: rows(&["one", "two", "three", "four"]),
            bottom: rows(&["choice", "hint"]),
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 5));
        layout.render(buf.area, &mut buf);
        assert_eq!(text_of(&buf), " one\n two\n …\n choice\n hint\n");
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 8));
        layout.render(buf.area, &mut buf);
        assert_eq!(
            text_of(&buf),
            " one\n two\n three\n four\n\n\n choice\n hint\n"
        );
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        layout.render(buf.area, &mut buf);
        assert_eq!(text_of(&buf), "ch…\n");
    }

    #[test]
    fn the_cursor_follows_its_row_and_stays_inside_the_area() {
        let mut field = ScreenRow::styled("> abc", Style::new());
        field.cursor = Some(5);
        let layout = ScreenLayout {
            top: vec![ScreenRow::blank(), field],
            bottom: vec![],
        };
        let area = Rect::new(2, 3, 30, 10);
        assert_eq!(layout.cursor(area), Some(Position { x: 8, y: 4 }));
        assert_eq!(
            layout.cursor(Rect::new(0, 0, 4, 2)),
            Some(Position { x: 3, y: 1 })
        );
        assert_eq!(
            layout.cursor(Rect::new(0, 0, 4, 1)),
            None,
            "the row is cut off"
        );
        assert_eq!(layout.cursor(Rect::new(0, 0, 0, 0)), None);
    }

    #[test]
    fn choices_align_details_and_drop_them_when_narrow() {
        let palette = Palette::new(false);
        let choices = vec![
            ("Anthropic".to_string(), "Claude".to_string()),
            ("한국어".to_string(), "wide".to_string()),
        ];
        let wide = choice_rows(&choices, 1, 60, &palette);
        let line =
            |row: &ScreenRow| -> String { row.spans.iter().map(|s| s.content.as_ref()).collect() };
        assert_eq!(line(&wide[0]), "  1. Anthropic   Claude");
        assert_eq!(line(&wide[1]), "❯ 2. 한국어      wide");
        assert!(wide[1].highlight.is_some() && wide[0].highlight.is_none());
        let narrow = choice_rows(&choices, 0, 20, &palette);
        assert_eq!(line(&narrow[0]), "❯ 1. Anthropic");
    }
}
