//! The keys of the full-screen UI, in one list: the shortcut sheet `?` opens on an empty
//! composer (a box above the composer; any key closes it) and the keys section `/help`
//! adds to the command list.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::widgets::framed_box::FramedBox;

/// Every key of the UI and what it does.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Enter", "send (while a turn runs: queue it)"),
    ("Tab (while a turn runs)", "send it now, into the turn"),
    ("Shift+Enter, Ctrl+J, \\+Enter", "new line"),
    ("Up / Down", "prompt history"),
    ("Ctrl+R", "search the prompt history"),
    ("/", "slash commands"),
    ("@", "attach a file"),
    ("!", "run a shell command"),
    ("Esc", "interrupt the turn / close a popup"),
    ("Ctrl+C", "clear, else interrupt, else twice to leave"),
    ("Ctrl+D", "leave (empty composer)"),
    ("Shift+Tab", "cycle the permission mode"),
    ("PgUp / PgDn, wheel", "scroll the transcript"),
    ("Ctrl+O", "expand thinking and long diffs"),
    ("Ctrl+B", "send the running Bash call to the background"),
    ("Ctrl+L / Ctrl+Z", "redraw / suspend"),
    ("?", "this sheet (empty composer)"),
];

/// The keys as text lines (for `/help`).
pub fn shortcuts_text() -> String {
    let mut out = String::from("Keys:");
    for (key, does) in SHORTCUTS {
        out.push_str(&format!("\n  {key:<28} {does}"));
    }
    out
}

/// The sheet `?` opens.
#[derive(Debug, Clone, Copy)]
pub struct ShortcutSheet {
    /// Whether to draw with colours (off under `NO_COLOR`).
    pub colors: bool,
}

impl ShortcutSheet {
    fn height() -> u16 {
        u16::try_from(SHORTCUTS.len() + 2).unwrap_or(u16::MAX)
    }
}

impl Overlay for ShortcutSheet {
    /// Any key closes the sheet (and does nothing else).
    fn on_key(&mut self, _key: KeyEvent) -> EventResult {
        EventResult::Done(AppAction::Dismissed)
    }

    fn is_full_screen(&self) -> bool {
        false
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        let free = stage.free;
        let height = Self::height().min(free.height);
        let area = Rect::new(free.x, free.bottom() - height, free.width, height);
        let frame = FramedBox {
            title: "Keys (any key closes)",
            accent: Color::Cyan,
            colors: self.colors,
        };
        let Some(inner) = frame.render(area, buf) else {
            return;
        };
        let key_width = SHORTCUTS
            .iter()
            .map(|(k, _)| unicode_width::UnicodeWidthStr::width(*k))
            .max()
            .unwrap_or(0);
        let lines: Vec<Line> = SHORTCUTS
            .iter()
            .map(|(key, does)| {
                Line::from(vec![
                    Span::styled(
                        format!("{key:<key_width$}  "),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(*does),
                ])
            })
            .collect();
        Paragraph::new(lines).render(inner, buf);
    }

    fn cursor(&self, _stage: &Stage) -> Cursor {
        Cursor::Hidden
    }
}
