//! The `@` file popup: the project paths best matching the word after `@`, matched
//! characters highlighted, directories ending in `/`. While the first index is still
//! being built it says so instead of showing nothing.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::file_index::{FileIndexer, STALE_AFTER};
use super::file_search::{FileMatch, FileSearch};
use super::list_view;

/// Paths kept per query (the popup scrolls through them).
pub const MAX_FILE_MATCHES: usize = 50;

#[derive(Debug)]
pub(crate) struct FilePopup {
    indexer: FileIndexer,
    search: FileSearch,
    matches: Vec<FileMatch>,
    selected: usize,
    /// No index was ready at the last update.
    indexing: bool,
    stale_after: Duration,
    colors: bool,
}

impl FilePopup {
    pub fn new(indexer: FileIndexer) -> Self {
        FilePopup {
            indexer,
            search: FileSearch::default(),
            matches: Vec::new(),
            selected: 0,
            indexing: false,
            stale_after: STALE_AFTER,
            colors: true,
        }
    }

    pub fn indexer(&self) -> &FileIndexer {
        &self.indexer
    }

    pub(crate) fn set_colors(&mut self, colors: bool) {
        self.colors = colors;
    }

    /// Searches for `query` (starting a background index refresh when it is stale);
    /// returns whether there is anything to show.
    pub fn update(&mut self, query: &str) -> bool {
        self.indexer.refresh_if_stale(self.stale_after);
        self.selected = 0;
        match self.indexer.current() {
            Some(index) => {
                self.indexing = false;
                self.matches = self.search.search(&index, query, MAX_FILE_MATCHES);
                // A directory just completed lists its contents, not itself.
                self.matches.retain(|m| m.path != query);
                !self.matches.is_empty()
            }
            None => {
                self.indexing = true;
                self.matches.clear();
                true
            }
        }
    }

    /// Stops showing anything until the next update.
    pub fn hide(&mut self) {
        self.matches.clear();
        self.indexing = false;
    }

    pub(crate) fn select_next(&mut self) {
        if !self.matches.is_empty() {
            self.selected = (self.selected + 1) % self.matches.len();
        }
    }

    pub(crate) fn select_previous(&mut self) {
        if !self.matches.is_empty() {
            self.selected = (self.selected + self.matches.len() - 1) % self.matches.len();
        }
    }

    pub(crate) fn selected(&self) -> Option<&FileMatch> {
        self.matches.get(self.selected)
    }

    pub fn height(&self) -> u16 {
        list_view::height(self.matches.len())
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let title = " files ";
        if self.indexing {
            let row = Line::from(Span::styled(
                "Indexing files…",
                list_view::secondary(self.colors),
            ));
            list_view::render(area, buf, title, vec![row], None, self.colors);
            return;
        }
        let hit = list_view::tint(
            Style::new().add_modifier(Modifier::BOLD),
            Color::Yellow,
            self.colors,
        );
        let rows = self
            .matches
            .iter()
            .map(|m| {
                // Runs of matched and unmatched clusters, one span each.
                let mut runs: Vec<(bool, String)> = Vec::new();
                for (i, g) in m.path.graphemes(true).enumerate() {
                    let matched =
                        u32::try_from(i).is_ok_and(|i| m.matched.binary_search(&i).is_ok());
                    match runs.last_mut() {
                        Some((flag, text)) if *flag == matched => text.push_str(g),
                        _ => runs.push((matched, g.to_string())),
                    }
                }
                Line::from(
                    runs.into_iter()
                        .map(|(matched, text)| {
                            if matched {
                                Span::styled(text, hit)
                            } else {
                                Span::raw(text)
                            }
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        list_view::render(area, buf, title, rows, Some(self.selected), self.colors);
    }
}
