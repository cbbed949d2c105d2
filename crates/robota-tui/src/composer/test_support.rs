//! Test helpers for the composer and completion widgets: insta settings that put every
//! snapshot under the repo's `snapshots/`, and a text dump of a rendered buffer (wide
//! clusters once, rows fenced with `│` so trailing blanks show) with the cursor cell.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

/// Runs `f` with snapshots stored in `<repo>/snapshots/`.
pub(crate) fn with_snapshot_dir(f: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"));
    settings.bind(f);
}

/// The buffer's rows as text, each fenced in `│`, then the cursor cell if any.
pub(crate) fn screen(buf: &Buffer, cursor: Option<Position>) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        out.push('│');
        let mut skip = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = usize::from(ratatui::buffer::CellWidth::cell_width(symbol)).saturating_sub(1);
            out.push_str(symbol);
        }
        out.push_str("│\n");
    }
    match cursor {
        Some(p) => out.push_str(&format!("cursor: x={} y={}", p.x, p.y)),
        None => out.push_str("cursor: none"),
    }
    out
}

/// The buffer's rows as plain text, each ending in a line break (wide clusters keep the
/// blank cell after them).
pub(crate) fn rows_text(buf: &Buffer) -> String {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

/// Renders with `draw` into a fresh `width`×`height` buffer.
pub(crate) fn render(width: u16, height: u16, draw: impl FnOnce(Rect, &mut Buffer)) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    draw(area, &mut buf);
    buf
}
