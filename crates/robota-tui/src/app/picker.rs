//! A full-screen filterable list: `/resume` and `robota --resume` pick a session, `/model`
//! a model. Typing filters the titles (prefix matches first, then fuzzy ones, as the
//! slash popup ranks); Up/Down, PgUp/PgDn and Ctrl+P/N move; Enter chooses; Esc (or
//! Ctrl+C) cancels. Drawn as a title row, the filter field, the list (each title with its
//! detail right-aligned, the selection highlighted) and a key hint at the bottom.
//! [`PickerOverlay`] puts a picker on screen with what its choice is for.

use std::cell::Cell;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use nucleo_matcher::Matcher;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::Span;

use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::completion::items::{CompletionItem, matcher_for, rank};
use crate::widgets::line_input::LineInput;
use crate::widgets::screen_kit::{
    Palette, ScreenLayout, ScreenRow, content_width, field_row, one_line, prose,
};
use crate::wrap::{display_width, truncate_spans};

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    /// What [`PickerOutcome::Chosen`] returns.
    pub id: String,
    /// What is shown and filtered on.
    pub title: String,
    /// Shown dimmed at the right: "3 h ago · 12 messages", a model's context size.
    pub detail: String,
}

/// Where the picker is after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// Still choosing.
    Pending,
    /// The chosen item's id.
    Chosen(String),
    /// The user left with Esc or Ctrl+C.
    Cancelled,
}

/// The picker's state.
pub struct Picker {
    title: String,
    items: Vec<PickerItem>,
    /// The titles as the ranking wants them.
    labels: Vec<CompletionItem>,
    filter: LineInput,
    /// Indices into `items` matching the filter, best first.
    shown: Vec<usize>,
    /// Index into `shown`.
    selected: usize,
    matcher: Matcher,
    empty_message: String,
    colors: bool,
    /// The first list row drawn last time (kept so moving up does not scroll early).
    scroll: Cell<usize>,
    /// List rows drawn last time: the PgUp/PgDn step.
    page: Cell<usize>,
}

impl std::fmt::Debug for Picker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Picker")
            .field("title", &self.title)
            .field("items", &self.items.len())
            .field("filter", &self.filter.text())
            .field("shown", &self.shown)
            .field("selected", &self.selected)
            .finish_non_exhaustive()
    }
}

/// Rows the list scrolls by when nothing was drawn yet.
const DEFAULT_PAGE: usize = 10;

impl Picker {
    /// A picker titled `title` over `items`, in the order given, the first selected.
    pub fn new(title: impl Into<String>, items: Vec<PickerItem>, colors: bool) -> Self {
        let labels = items
            .iter()
            .map(|item| CompletionItem::new(one_line(&item.title), ""))
            .collect();
        let mut picker = Picker {
            title: title.into(),
            items,
            labels,
            filter: LineInput::default(),
            shown: Vec::new(),
            selected: 0,
            matcher: matcher_for(false),
            empty_message: "nothing to choose from".to_string(),
            colors,
            scroll: Cell::new(0),
            page: Cell::new(DEFAULT_PAGE),
        };
        picker.refilter();
        picker
    }

    /// What the list says when there are no items at all (a filter that matches nothing
    /// says "no matches").
    pub fn with_empty_message(mut self, message: impl Into<String>) -> Self {
        self.empty_message = message.into();
        self
    }

    /// Starts with the item `id` selected (the current model), if it is there.
    pub fn with_selected(mut self, id: &str) -> Self {
        if let Some(at) = self.shown.iter().position(|&i| self.items[i].id == id) {
            self.selected = at;
        }
        self
    }

    /// The text typed into the filter.
    pub fn filter_text(&self) -> String {
        self.filter.text()
    }

    /// The items matching the filter, in the order shown.
    pub fn visible(&self) -> impl Iterator<Item = &PickerItem> {
        self.shown.iter().map(|&i| &self.items[i])
    }

    /// The item Enter would choose.
    pub fn selected(&self) -> Option<&PickerItem> {
        self.shown.get(self.selected).map(|&i| &self.items[i])
    }

    fn refilter(&mut self) {
        let query = self.filter.text();
        self.shown = rank(&self.labels, query.trim(), &mut self.matcher);
        self.selected = 0;
        self.scroll.set(0);
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.shown.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Handles a key press; see the module docs for the keys.
    pub fn handle_key(&mut self, key: KeyEvent) -> PickerOutcome {
        if key.kind == KeyEventKind::Release {
            return PickerOutcome::Pending;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let page = isize::try_from(self.page.get().max(1)).unwrap_or(1);
        match key.code {
            KeyCode::Esc => return PickerOutcome::Cancelled,
            KeyCode::Char('c') if ctrl => return PickerOutcome::Cancelled,
            KeyCode::Enter => {
                return match self.selected() {
                    Some(item) => PickerOutcome::Chosen(item.id.clone()),
                    None => PickerOutcome::Pending,
                };
            }
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::Char('p') if ctrl => self.move_by(-1),
            KeyCode::Char('n') if ctrl => self.move_by(1),
            KeyCode::PageUp => self.move_by(-page),
            KeyCode::PageDown => self.move_by(page),
            _ => {
                let before = self.filter.text();
                if self.filter.handle_key(key) && self.filter.text() != before {
                    self.refilter();
                }
            }
        }
        PickerOutcome::Pending
    }

    /// Pasted text goes into the filter.
    pub fn paste(&mut self, text: &str) {
        self.filter.insert(text);
        self.refilter();
    }

    /// Rows above and below the list at `height`: (title, separator, hint).
    fn chrome(height: u16) -> (bool, bool, bool) {
        (height >= 3, height >= 6, height >= 4)
    }

    fn layout(&self, area: Rect) -> ScreenLayout {
        let palette = Palette::new(self.colors);
        let width = content_width(area.width);
        let (title, separator, hint) = Self::chrome(area.height);
        let mut top = Vec::new();
        if title {
            let mut spans = vec![Span::styled(one_line(&self.title), palette.title)];
            let position = format!("{}/{}", self.selected + 1, self.shown.len());
            let used = display_width(&spans[0].content);
            if !self.shown.is_empty() && used + 2 + position.len() <= width {
                spans.push(Span::raw(" ".repeat(width - used - position.len())));
                spans.push(Span::styled(position, palette.dim));
            }
            top.push(ScreenRow::new(spans));
        }
        top.push(field_row(
            &self.filter,
            "type to filter",
            false,
            width,
            &palette,
        ));
        if separator {
            top.push(ScreenRow::styled("─".repeat(width), palette.dim));
        }
        let bottom = if hint {
            prose(
                "↑↓ select · enter choose · esc cancel",
                palette.dim,
                width,
                0,
            )
        } else {
            Vec::new()
        };
        let rows = usize::from(area.height).saturating_sub(top.len() + bottom.len());
        self.page.set(rows.max(1));
        if self.shown.is_empty() {
            let message = if self.items.is_empty() {
                self.empty_message.as_str()
            } else {
                "no matches"
            };
            top.push(ScreenRow::styled(message, palette.dim));
        } else {
            let first = self.first_row(rows);
            for (offset, &index) in self.shown.iter().skip(first).take(rows).enumerate() {
                top.push(self.item_row(index, first + offset == self.selected, width, &palette));
            }
        }
        ScreenLayout { top, bottom }
    }

    /// The first list row to draw so the selection is visible, scrolling as little as
    /// possible from last time.
    fn first_row(&self, rows: usize) -> usize {
        let rows = rows.max(1);
        let mut first = self.scroll.get();
        if self.selected < first {
            first = self.selected;
        } else if self.selected >= first + rows {
            first = self.selected + 1 - rows;
        }
        first = first.min(self.shown.len().saturating_sub(rows));
        self.scroll.set(first);
        first
    }

    fn item_row(&self, index: usize, selected: bool, width: usize, palette: &Palette) -> ScreenRow {
        let item = &self.items[index];
        let marker = if selected { "❯ " } else { "  " };
        let title_style = if selected {
            palette.selected
        } else {
            Style::new()
        };
        let title = one_line(&item.title);
        let detail = one_line(&item.detail);
        let room = width.saturating_sub(2);
        let detail_width = display_width(&detail);
        let show_detail = !detail.is_empty() && room >= detail_width + 2 + 12;
        let title_room = if show_detail {
            room - detail_width - 2
        } else {
            room
        };
        let (title_spans, _) = truncate_spans(&[Span::styled(title, title_style)], title_room);
        let mut spans = vec![Span::styled(marker, title_style)];
        let title_width: usize = title_spans.iter().map(|s| display_width(&s.content)).sum();
        spans.extend(title_spans);
        if show_detail {
            spans.push(Span::raw(" ".repeat(room - title_width - detail_width)));
            spans.push(Span::styled(detail, palette.dim));
        }
        ScreenRow {
            spans,
            cursor: None,
            highlight: palette.selected_row.filter(|_| selected),
        }
    }

    /// Draws the picker over the whole `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.layout(area).render(area, buf);
    }

    /// The filter's cursor cell, for the terminal cursor (IME preedit).
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        self.layout(area).cursor(area)
    }
}

/// What a picker's choice is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerPurpose {
    /// `robota --resume` at start, or `/resume`.
    Session,
    /// `/model`.
    Model,
    /// Ctrl+R: a prompt from the history (the id indexes `App::history_search`).
    History,
    /// Esc Esc or `/rewind`: the prompt to go back to (a message id).
    RewindPoint,
    /// What a rewind puts back (a `RewindAction` word, or `cancel`).
    RewindAction,
}

/// A picker on screen, covering everything above the status line.
#[derive(Debug)]
pub struct PickerOverlay {
    /// The picker itself.
    pub picker: Picker,
    pub(crate) purpose: PickerPurpose,
}

impl Overlay for PickerOverlay {
    fn on_key(&mut self, key: KeyEvent) -> EventResult {
        match self.picker.handle_key(key) {
            PickerOutcome::Pending => EventResult::Consumed,
            PickerOutcome::Chosen(id) => EventResult::Done(AppAction::Picked(self.purpose, id)),
            PickerOutcome::Cancelled => EventResult::Done(AppAction::PickerCancelled),
        }
    }

    fn on_paste(&mut self, text: &str) {
        self.picker.paste(text);
    }

    fn is_full_screen(&self) -> bool {
        true
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        self.picker.render(stage.screen, buf);
    }

    fn cursor(&self, stage: &Stage) -> Cursor {
        self.picker.cursor_position(stage.screen).into()
    }
}

/// How long ago `modified` was, for a session list: "just now", "5 min ago", "3 h ago",
/// "2 days ago", then months and years. A time in the future counts as just now.
pub fn age_label(modified: SystemTime, now: SystemTime) -> String {
    let age = now.duration_since(modified).unwrap_or(Duration::ZERO);
    let minutes = age.as_secs() / 60;
    let hours = minutes / 60;
    let days = hours / 24;
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one} ago")
        } else {
            format!("{n} {many} ago")
        }
    };
    match () {
        _ if minutes == 0 => "just now".to_string(),
        _ if hours == 0 => format!("{minutes} min ago"),
        _ if days == 0 => format!("{hours} h ago"),
        _ if days < 30 => plural(days, "day", "days"),
        _ if days < 365 => plural(days / 30, "month", "months"),
        _ => plural(days / 365, "year", "years"),
    }
}

#[cfg(test)]
mod tests;
