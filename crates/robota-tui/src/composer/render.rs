//! Drawing the composer: a prompt marker (`> `, or `! ` in shell mode), the text wrapped
//! by display width with continuation rows indented under it, placeholders and the empty
//! hint in their own style, and an empty row kept below the input. Rows scroll so the
//! cursor's row stays visible when the area is shorter than the text. Pure: the same
//! state and area always draw the same cells.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Clear, Widget};

use super::Composer;
use super::buffer::Atom;
use super::layout::{self, VisualRow, atom_width};

/// Cells taken by the prompt marker on the left (none when the area is too narrow).
fn marker_width(width: u16) -> u16 {
    if width >= 4 { 2 } else { 0 }
}

/// Columns left for text in a composer `width` cells wide.
pub(super) fn text_width(width: u16) -> usize {
    usize::from(width.saturating_sub(marker_width(width)).max(1))
}

impl Composer {
    fn rows(&self, width: u16) -> Vec<VisualRow> {
        layout::wrap(self.buffer.lines(), text_width(width))
    }

    /// Rows the composer wants at this width: its text plus the empty row below it.
    pub fn desired_height(&self, width: u16) -> u16 {
        u16::try_from(self.rows(width).len() + 1).unwrap_or(u16::MAX)
    }

    /// The first visual row shown in `height` rows: the top, unless the cursor's row would
    /// fall below the area.
    fn scroll_top(cursor_row: usize, height: u16) -> usize {
        (cursor_row + 1).saturating_sub(usize::from(height).max(1))
    }

    /// The cell for the terminal cursor (so IME preedit appears in place), or `None` for
    /// an empty area.
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        if area.is_empty() {
            return None;
        }
        let lines = self.buffer.lines();
        let rows = self.rows(area.width);
        let (row, x) = layout::locate(&rows, lines, self.buffer.cursor());
        let top = Self::scroll_top(row, area.height);
        let x = usize::from(area.x + marker_width(area.width)) + x;
        let max_x = usize::from(area.right() - 1);
        Some(Position {
            x: u16::try_from(x.min(max_x)).unwrap_or(area.right() - 1),
            y: area.y + u16::try_from(row - top).unwrap_or(0).min(area.height - 1),
        })
    }

    fn styled(&self, style: Style, color: Color) -> Style {
        if self.colors { style.fg(color) } else { style }
    }

    /// Draws the prompt marker and the text (or the hint when empty) into `area`, scrolled
    /// so the cursor's row is visible.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        Clear.render(area, buf);
        let lines = self.buffer.lines();
        let rows = self.rows(area.width);
        let (cursor_row, _) = layout::locate(&rows, lines, self.buffer.cursor());
        let top = Self::scroll_top(cursor_row, area.height);
        let marker = marker_width(area.width);
        if top == 0 && marker > 0 {
            let (symbol, style) = if self.shell {
                (
                    "!",
                    self.styled(Style::new().add_modifier(Modifier::BOLD), Color::Magenta),
                )
            } else {
                (">", Style::new().add_modifier(Modifier::BOLD))
            };
            buf.set_string(area.x, area.y, symbol, style);
        }
        let text_x = area.x + marker;
        if self.buffer.is_empty() {
            let hint = if self.shell {
                "shell command"
            } else {
                self.hint.as_str()
            };
            let style = self.styled(Style::new().add_modifier(Modifier::DIM), Color::DarkGray);
            buf.set_stringn(
                text_x,
                area.y,
                hint,
                usize::from(area.right() - text_x),
                style,
            );
            return;
        }
        let selected = self.visual_lines();
        let paste_style = if self.colors {
            Style::new().fg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        for (screen_row, row) in rows
            .iter()
            .skip(top)
            .take(usize::from(area.height))
            .enumerate()
        {
            let y = area.y + u16::try_from(screen_row).unwrap_or(0);
            let mut x = text_x;
            for atom in &lines[row.line][row.start..row.end] {
                let width = u16::try_from(atom_width(atom)).unwrap_or(u16::MAX);
                let fits = u32::from(x) + u32::from(width) <= u32::from(area.right());
                if width > 0 && fits {
                    draw_atom(buf, x, y, atom, paste_style);
                }
                x = x.saturating_add(width);
            }
            if selected.is_some_and(|(from, to)| (from..=to).contains(&row.line)) {
                // Vim's visual line mode: the selected lines in reverse video (an empty
                // one as one cell).
                let end = x.max(text_x + 1).min(area.right());
                for cx in text_x..end {
                    buf[(cx, y)].modifier.insert(Modifier::REVERSED);
                }
            }
        }
    }
}

/// Draws one atom whose cells are known to lie inside the buffer.
fn draw_atom(buf: &mut Buffer, x: u16, y: u16, atom: &Atom, paste_style: Style) {
    match atom {
        Atom::Grapheme(g) if g.as_ref() == "\t" => {
            for dx in 0..layout::TAB_WIDTH as u16 {
                buf[(x + dx, y)].set_symbol(" ");
            }
        }
        Atom::Grapheme(g) => {
            let width = atom_width(atom) as u16;
            buf[(x, y)].set_symbol(g);
            for dx in 1..width {
                buf[(x + dx, y)].reset();
            }
        }
        Atom::Paste { label, .. } => {
            buf.set_stringn(x, y, label, label.len(), paste_style);
        }
    }
}
