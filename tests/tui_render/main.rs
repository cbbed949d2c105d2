//! Snapshot tests of the TUI's rendering widgets (markdown, transcript cells, diffs)
//! drawn into ratatui buffers at 80, 40 and 20 columns and a 1×1 area. Snapshots hold the
//! buffer's text and its style runs and live in `snapshots/` at the repository root.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod app;
mod diff;
mod markdown;
mod replay;
mod screens;
mod transcript;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

/// The widths every widget is snapshotted at.
pub const WIDTHS: [u16; 3] = [80, 40, 20];

/// Runs `check` with insta writing to `<repo>/snapshots/` under plain names.
pub fn with_snapshot_settings(check: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(check);
}

/// Lines drawn into a buffer exactly as tall as they are (at least one row).
pub fn buffer_of(lines: &[Line<'_>], width: u16) -> Buffer {
    let height = u16::try_from(lines.len().max(1)).unwrap_or(u16::MAX);
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    for (y, line) in lines.iter().enumerate() {
        buf.set_line(0, y as u16, line, width);
    }
    buf
}

/// Asserts a buffer snapshot named `name` (text and styles).
#[macro_export]
macro_rules! assert_buffer_snapshot {
    ($name:expr, $buf:expr) => {{
        let buf = $buf;
        $crate::with_snapshot_settings(|| insta::assert_snapshot!($name, format!("{buf:?}")));
    }};
}

/// Every row of a buffer fits its width (a wide grapheme never spills over the edge).
pub fn assert_rows_fit(lines: &[Line<'_>], width: u16) {
    for line in lines {
        assert!(
            line.width() <= usize::from(width),
            "row wider than {width}: {line:?}"
        );
    }
}
