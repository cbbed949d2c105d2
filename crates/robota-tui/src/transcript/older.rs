//! Older history above a resumed transcript. A resume shows the live part of its log (from
//! the last compaction on); a line at the top says how much came before. Once the user
//! scrolls to the top ([`Transcript::older_wanted`]) the app reads a page of it off the UI
//! thread and hands it back ([`Transcript::older_loaded`]): its cells, made as a replay
//! makes them, go above the current ones with the view kept on the same content, and the
//! line moves above them while more is left. Display only: the model's history is not
//! touched. A page that cannot be read leaves a warning in the line's place.

use std::fmt::Display;

use super::Transcript;
use super::cell::{Cell, Entry, NoticeKind};
use robota_sdk::{OlderHistory, OlderPage};

/// The line's text while a page is read.
const LOADING: &str = "older history: loading…";

/// Older history waiting above the first cell, which is the line about it.
#[derive(Debug)]
pub(super) struct OlderState {
    source: OlderHistory,
    loading: bool,
}

/// The line about older history that is there to load.
fn waiting_label(older: &OlderHistory) -> String {
    match older.messages {
        0 => "older history · scroll up to load".to_string(),
        1 => "older history: 1 earlier message · scroll up to load".to_string(),
        n => format!("older history: {n} earlier messages · scroll up to load"),
    }
}

impl Transcript {
    /// Shows the line saying older history is above the cells (after a resume's replay);
    /// `None` takes it away.
    pub fn set_older_history(&mut self, older: Option<OlderHistory>) {
        let had = self.older.take().is_some();
        let line = older
            .as_ref()
            .map(|older| Entry::new(Cell::Divider(waiting_label(older))));
        self.replace_front(usize::from(had), line.into_iter().collect());
        self.older = older.map(|source| OlderState {
            source,
            loading: false,
        });
    }

    /// Whether older history waits above and the view shows the top row: then the part to
    /// read next, and the line says it is loading until [`Transcript::older_loaded`].
    pub fn older_wanted(&mut self) -> Option<OlderHistory> {
        if self.older.as_ref().is_none_or(|older| older.loading) || self.scroll_top() > 0 {
            return None;
        }
        let older = self.older.as_mut()?;
        older.loading = true;
        let source = older.source.clone();
        self.update(0, |cell| *cell = Cell::Divider(LOADING.to_string()));
        Some(source)
    }

    /// Whether older history is being read.
    pub fn is_loading_older(&self) -> bool {
        self.older.as_ref().is_some_and(|older| older.loading)
    }

    /// A page of the older history read from `source` arrived (or why it could not be
    /// read): its cells replace the line above the others, under a new line when more is
    /// left; the view stays on what it showed. A page nobody waits for any more (another
    /// session was opened) is dropped.
    pub fn older_loaded(&mut self, source: &OlderHistory, page: Result<OlderPage, impl Display>) {
        let waiting = self.older.as_ref();
        if waiting.is_none_or(|older| !older.loading || older.source != *source) {
            return;
        }
        self.older = None;
        let mut front = Vec::new();
        match page {
            Err(error) => front.push(Entry::new(Cell::Notice {
                kind: NoticeKind::Warning,
                text: format!("Older history could not be read: {error}"),
            })),
            Ok(page) => {
                if let Some(rest) = &page.rest {
                    front.push(Entry::new(Cell::Divider(waiting_label(rest))));
                }
                if !page.warnings.is_empty() {
                    front.push(Entry::new(Cell::Notice {
                        kind: NoticeKind::Warning,
                        text: format!(
                            "{} unreadable line(s) of older history were skipped",
                            page.warnings.len()
                        ),
                    }));
                }
                let mut older = Transcript::new(self.theme);
                older.replay(&page.messages);
                front.extend(older.entries);
                self.older = page.rest.map(|source| OlderState {
                    source,
                    loading: false,
                });
            }
        }
        self.replace_front(1, front);
    }

    /// Replaces the first `removed` cells by `front`; a view scrolled up stays on the cell
    /// that followed them, at the same row of the screen.
    fn replace_front(&mut self, removed: usize, front: Vec<Entry>) {
        let removed = removed.min(self.entries.len());
        let added = front.len();
        let width = self.scroll.viewport_width;
        let anchored = !self.scroll.follow && width > 0 && removed < self.entries.len();
        let on_screen = anchored.then(|| {
            self.ensure_layout(width);
            self.index.position(removed, 0) as isize - self.scroll.top as isize
        });
        self.entries.splice(..removed, front);
        self.events.shift(removed, added);
        self.index.touch(0);
        if let Some(on_screen) = on_screen {
            self.ensure_layout(width);
            let start = self.index.position(added, 0) as isize;
            let top = usize::try_from(start - on_screen).unwrap_or(0);
            self.scroll.keep_view(top, self.index.total());
        }
    }
}

#[cfg(test)]
mod tests;
