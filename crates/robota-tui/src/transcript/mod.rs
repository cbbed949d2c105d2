//! The transcript: the conversation as a list of cells ([`Cell`]) fed by the session's
//! events ([`Transcript::apply`]) or by explicit pushes, and a scrollable viewport over
//! it. Heights are kept per width with a prefix sum over cells, so finding and drawing the
//! rows in view costs only those rows, even with 100k lines above them; a resize re-wraps
//! every cell exactly (the scroll position stays on the same cell). The view follows new
//! output unless the user scrolled up, in which case a "new output below" indicator shows.
//!
//! A resumed session's history is turned into the same cells with `replay`, and its older
//! history comes in above them on demand (`older`); `search`
//! finds and highlights text in the rows as drawn. A prompt sent with collapsed pastes
//! shows their placeholders until the transcript is expanded.
//!
//! Use from the app loop: `apply` each `SessionEvent`, call `render(area, buf)` per frame,
//! forward scroll keys / wheel events to `handle_key` / `handle_mouse`, `toggle_expanded`
//! on ctrl+o, `tick` the spinner while tools run.

mod cell;
mod event_state;
mod events;
mod older;
mod replay;
mod search;
mod tool_call;
mod viewport;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use self::cell::Entry;
pub use self::cell::{
    Cell, GUTTER, NoticeKind, SHELL_PREVIEW_LINES, SPINNER, ThinkingCell, Welcome,
};
use self::event_state::EventState;
pub use self::search::SearchMatch;
pub use self::tool_call::{
    PREVIEW_LINES, ToolCallCell, ToolResultView, ToolStatus, summarize_input,
};
use self::viewport::{HeightIndex, Scroll};
use crate::theme::Theme;
use crate::wrap::{WrapMode, wrap_spans};

/// Lines the mouse wheel scrolls per notch.
pub const WHEEL_LINES: usize = 3;

/// The conversation's cells and the view onto them.
pub struct Transcript {
    theme: Theme,
    entries: Vec<Entry>,
    expanded: bool,
    spinner_frame: usize,
    index: HeightIndex,
    scroll: Scroll,
    events: EventState,
    /// The search shown over the transcript (`search.rs`).
    search: Option<search::SearchState>,
    /// Collapsed pastes of submitted prompts, as (placeholder, text), waiting for their
    /// prompt's cell.
    pending_pastes: Vec<(String, String)>,
    /// Older history of a resumed log waiting above the first cell (`older.rs`).
    older: Option<older::OlderState>,
}

impl Transcript {
    /// An empty transcript, following the end.
    pub fn new(theme: Theme) -> Self {
        Transcript {
            theme,
            entries: Vec::new(),
            expanded: false,
            spinner_frame: 0,
            index: HeightIndex::default(),
            scroll: Scroll::default(),
            events: EventState::default(),
            search: None,
            pending_pastes: Vec::new(),
            older: None,
        }
    }

    /// The theme cells are rendered with.
    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no cells.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cell at `index` (in push order), if any.
    pub fn cell(&self, index: usize) -> Option<&Cell> {
        self.entries.get(index).map(|e| &e.cell)
    }

    /// The cells in order, oldest first.
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Appends a cell; returns its index.
    pub fn push(&mut self, cell: Cell) -> usize {
        self.entries.push(Entry::new(cell));
        let index = self.entries.len() - 1;
        self.index.touch(index);
        index
    }

    /// A prompt was submitted with a collapsed paste: its cell shows `label` in place of
    /// `text` until the transcript is expanded (Ctrl+O).
    pub fn remember_paste(&mut self, label: String, text: String) {
        // Pastes of prompts that never became a prompt cell (a slash command's) go
        // after a while.
        if self.pending_pastes.len() == 32 {
            self.pending_pastes.remove(0);
        }
        self.pending_pastes.push((label, text));
    }

    /// Gives the prompt cell at `index` the remembered pastes its text holds.
    fn attach_pastes(&mut self, index: usize) {
        let Some(entry) = self.entries.get_mut(index) else {
            return;
        };
        let Cell::UserPrompt(text) = &entry.cell else {
            return;
        };
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_pastes)
            .into_iter()
            .partition(|(label, paste)| {
                cell::collapse_pastes(text, &[(label.clone(), paste.clone())]) != *text
            });
        self.pending_pastes = rest;
        if !mine.is_empty() {
            entry.pastes = mine;
            entry.invalidate();
            self.index.touch(index);
        }
    }

    /// Changes a cell in place (its cached rendering is dropped).
    pub fn update(&mut self, index: usize, change: impl FnOnce(&mut Cell)) {
        if let Some(entry) = self.entries.get_mut(index) {
            change(&mut entry.cell);
            entry.invalidate();
            self.index.touch(index);
        }
    }

    /// Drops cells from `len` on.
    pub fn truncate(&mut self, len: usize) {
        if len < self.entries.len() {
            if len == 0 {
                // The line about older history went with the cells.
                self.older = None;
            }
            self.entries.truncate(len);
            self.index.touch(len);
            self.events.forget_from(len);
        }
    }

    /// Removes every cell.
    pub fn clear(&mut self) {
        self.truncate(0);
        self.scroll = Scroll::default();
        self.search = None;
    }

    /// Whether thinking, diffs and tool output are shown in full (ctrl+o).
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    pub(crate) fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.index.touch(0);
        }
    }

    /// Flips between collapsed and expanded (ctrl+o).
    pub fn toggle_expanded(&mut self) {
        self.set_expanded(!self.expanded);
    }

    /// Advances the spinner of running tools by one frame (no relayout needed).
    pub fn tick(&mut self) {
        self.spinner_frame = self.spinner_frame.wrapping_add(1);
        // A running subagent's line shows its elapsed time.
        for (index, entry) in self.entries.iter_mut().enumerate() {
            if matches!(&entry.cell, Cell::ToolCall(t) if t.status == ToolStatus::Running && t.subagent.is_some())
            {
                entry.invalidate();
                self.index.touch(index);
            }
        }
    }

    /// Whether some tool call is still pending or running (the app ticks while so).
    pub fn has_running_tools(&self) -> bool {
        self.entries.iter().any(|e| {
            matches!(&e.cell, Cell::ToolCall(t) if matches!(t.status, ToolStatus::Pending | ToolStatus::Running))
                || matches!(&e.cell, Cell::ShellRunning { .. })
        })
    }

    fn body_width(width: u16) -> u16 {
        if width >= 2 * GUTTER {
            width - GUTTER
        } else {
            width.max(1)
        }
    }

    /// Brings heights up to date for `width`; keeps the scroll anchored on a resize.
    fn ensure_layout(&mut self, width: u16) {
        let width = width.max(1);
        let anchor = if self.index.width() != width && !self.scroll.follow {
            self.index.locate(self.scroll.top)
        } else {
            None
        };
        let body_width = Self::body_width(width);
        let (theme, expanded) = (self.theme, self.expanded);
        let entries = &mut self.entries;
        self.index.update(width, entries.len(), |i| {
            let gap = usize::from(i > 0);
            gap + entries[i].body(body_width, expanded, &theme).len()
        });
        if let Some((cell, offset)) = anchor {
            self.scroll.top = self.index.position(cell, offset);
        }
    }

    /// Total rows of the transcript at `width` columns.
    pub fn total_height(&mut self, width: u16) -> usize {
        self.ensure_layout(width);
        self.index.total()
    }

    /// The rows `top..top + height` at `width` columns, gutters included. Touches only
    /// the cells in view.
    pub fn visible_lines(&mut self, width: u16, top: usize, height: usize) -> Vec<Line<'static>> {
        self.ensure_layout(width);
        let width = width.max(1);
        let with_gutter = width >= 2 * GUTTER;
        let body_width = Self::body_width(width);
        let mut out = Vec::with_capacity(height);
        let Some((mut cell, mut offset)) = self.index.locate(top) else {
            return out;
        };
        let (theme, expanded, frame) = (self.theme, self.expanded, self.spinner_frame);
        while out.len() < height && cell < self.entries.len() {
            let gap = usize::from(cell > 0);
            let entry = &mut self.entries[cell];
            let (first, rest) = entry.gutter(frame, &theme);
            let body = entry.body(body_width, expanded, &theme);
            let rows = gap + body.len();
            while offset < rows && out.len() < height {
                if offset < gap {
                    out.push(Line::default());
                } else {
                    let k = offset - gap;
                    let gutter = with_gutter.then_some(if k == 0 { &first } else { &rest });
                    out.push(with_gutter_span(gutter, &body[k]));
                }
                offset += 1;
            }
            cell += 1;
            offset = 0;
        }
        out
    }

    /// The last `height` rows at `width` columns, found by walking cells from the end: a
    /// following view needs no heights of the cells above it, so a resize or a resumed
    /// 100k-row session draws its first frame at the cost of the rows in view.
    fn bottom_lines(&mut self, width: u16, height: usize) -> Vec<Line<'static>> {
        let width = width.max(1);
        let with_gutter = width >= 2 * GUTTER;
        let body_width = Self::body_width(width);
        let (theme, expanded, frame) = (self.theme, self.expanded, self.spinner_frame);
        let mut reversed = Vec::with_capacity(height);
        for cell in (0..self.entries.len()).rev() {
            let entry = &mut self.entries[cell];
            let (first, rest) = entry.gutter(frame, &theme);
            let body = entry.body(body_width, expanded, &theme);
            for k in (0..body.len()).rev() {
                if reversed.len() == height {
                    break;
                }
                let gutter = with_gutter.then_some(if k == 0 { &first } else { &rest });
                reversed.push(with_gutter_span(gutter, &body[k]));
            }
            if cell > 0 && reversed.len() < height {
                reversed.push(Line::default());
            }
            if reversed.len() == height {
                break;
            }
        }
        reversed.reverse();
        reversed
    }

    /// Draws the transcript into `area`, following the end unless scrolled up; shows the
    /// "new output below" indicator on the last row while scrolled up and output grew.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                buf[(x, y)].reset();
            }
        }
        let height = usize::from(area.height);
        let lines = if self.scroll.follow {
            self.scroll.followed(area.width, height);
            self.bottom_lines(area.width, height)
        } else {
            self.ensure_layout(area.width);
            let total = self.index.total();
            self.scroll.settle(total, area.width, height);
            self.visible_lines(area.width, self.scroll.top, height)
        };
        for (row, line) in lines.iter().enumerate() {
            let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(area.x, y, line, area.width);
        }
        if self.search.is_some() {
            self.refresh_search();
            let top = self.scroll_top();
            self.highlight_matches(area, top, buf);
        }
        if self.scroll.new_below {
            let text = " ↓ new output below · End to follow ";
            let rows = wrap_spans(
                &[Span::styled(text, self.theme.new_output)],
                usize::from(area.width),
                usize::from(area.width),
                WrapMode::Chars,
            );
            if let Some(first) = rows.into_iter().next() {
                let line = Line::from(first);
                let w = u16::try_from(line.width())
                    .unwrap_or(area.width)
                    .min(area.width);
                let x = area.x + (area.width - w) / 2;
                let y = area.bottom() - 1;
                for col in area.left()..area.right() {
                    buf[(col, y)].reset();
                }
                buf.set_line(x, y, &line, w);
            }
        }
    }

    /// The first row in view at the last rendered size (measures every cell when the
    /// view follows the end, which otherwise never needs to).
    pub fn scroll_top(&mut self) -> usize {
        if self.scroll.follow {
            let height = self.scroll.viewport_height;
            return self.current_total().saturating_sub(height);
        }
        self.scroll.top
    }

    /// Whether the view follows new output.
    pub fn is_following(&self) -> bool {
        self.scroll.follow
    }

    /// Whether output arrived below the view while the user was scrolled up.
    pub fn has_new_output_below(&self) -> bool {
        self.scroll.new_below
    }

    /// The total height at the last rendered width.
    fn current_total(&mut self) -> usize {
        let width = self.scroll.viewport_width;
        if width == 0 {
            return 0;
        }
        self.total_height(width)
    }

    /// Scrolls `lines` rows towards the top; following the end stops unless the view
    /// still reaches it.
    pub fn scroll_up(&mut self, lines: usize) {
        let total = self.current_total();
        self.scroll.up(lines, total);
    }

    /// Scrolls `lines` rows towards the end; reaching it follows new output again.
    pub fn scroll_down(&mut self, lines: usize) {
        let total = self.current_total();
        self.scroll.down(lines, total);
    }

    pub(crate) fn page_up(&mut self) {
        let page = self.scroll.page();
        self.scroll_up(page);
    }

    pub(crate) fn page_down(&mut self) {
        let page = self.scroll.page();
        self.scroll_down(page);
    }

    /// Jumps to the first row (stops following the end); a no-op when everything fits.
    pub fn scroll_to_top(&mut self) {
        let total = self.current_total();
        self.scroll.scroll_to_top(total);
    }

    /// Jumps to the end and follows new output again.
    pub fn scroll_to_bottom(&mut self) {
        self.scroll.scroll_to_bottom();
    }

    /// PgUp / PgDn page, Home / End jump to the top / the end (also with ctrl).
    /// Returns whether the key was a scroll key.
    pub fn handle_key(&mut self, key: &KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        match key.code {
            KeyCode::PageUp => self.page_up(),
            KeyCode::PageDown => self.page_down(),
            KeyCode::Home => self.scroll_to_top(),
            KeyCode::End => self.scroll_to_bottom(),
            _ => return false,
        }
        true
    }

    /// The mouse wheel scrolls [`WHEEL_LINES`] per notch. Returns whether it was the wheel.
    pub fn handle_mouse(&mut self, mouse: &MouseEvent) -> bool {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.scroll_down(WHEEL_LINES),
            _ => return false,
        }
        true
    }
}

/// A body line with the cell's gutter in front.
fn with_gutter_span(gutter: Option<&Span<'static>>, line: &Line<'static>) -> Line<'static> {
    let mut spans = Vec::with_capacity(line.spans.len() + 1);
    spans.extend(gutter.cloned());
    spans.extend(line.spans.iter().cloned());
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests;

/// Submission events as a session sends them, for the transcript's tests.
#[cfg(test)]
pub(crate) mod test_events {
    use std::time::Duration;

    use robota_sdk::{Outcome, SessionEvent, Submission, SubmissionId, TurnEnd};

    pub fn started(prompt: &str) -> SessionEvent {
        SessionEvent::SubmissionStarted {
            id: SubmissionId(1),
            submission: Submission::Prompt(prompt.to_string()),
        }
    }

    pub fn ended(end: TurnEnd) -> SessionEvent {
        SessionEvent::SubmissionEnded {
            id: SubmissionId(1),
            outcome: Outcome {
                end,
                rounds: 1,
                duration: Duration::ZERO,
                result: String::new(),
            },
        }
    }
}
