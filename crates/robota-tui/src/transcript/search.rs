//! Searching the transcript's text (`/` while scrolled up): every match of a query in the
//! rows as drawn at the current width (case-insensitive), the current one scrolled into
//! view and drawn reversed, the others underlined; `n`/`N` step through them, wrapping.
//! Matches are found again when the width or the transcript's height changed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use unicode_width::UnicodeWidthChar;

use super::Transcript;

/// One match: its row and its columns (display cells) within the row, gutter included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchMatch {
    /// The row of the transcript as drawn at the current width, from its top.
    pub row: usize,
    /// The first display column of the match.
    pub x: usize,
    /// Display columns the match takes.
    pub width: usize,
}

/// The search being shown.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchState {
    query: String,
    matches: Vec<SearchMatch>,
    current: usize,
    /// The width and total height the matches were found at.
    found_at: (u16, usize),
}

/// Folds a character for a case-insensitive comparison, one char for one.
fn fold(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// The matches of `query` (already folded) in one row of text.
fn matches_in(row: usize, text: &str, query: &[char]) -> Vec<SearchMatch> {
    let chars: Vec<char> = text.chars().collect();
    let folded: Vec<char> = chars.iter().copied().map(fold).collect();
    let mut out = Vec::new();
    if query.is_empty() || folded.len() < query.len() {
        return out;
    }
    let width = |cs: &[char]| -> usize { cs.iter().map(|c| c.width().unwrap_or(0)).sum() };
    let mut i = 0;
    while i + query.len() <= folded.len() {
        if folded[i..i + query.len()] == *query {
            out.push(SearchMatch {
                row,
                x: width(&chars[..i]),
                width: width(&chars[i..i + query.len()]),
            });
            i += query.len();
        } else {
            i += 1;
        }
    }
    out
}

impl Transcript {
    /// Searches for `query` and shows the first match at or below the top of the view
    /// (wrapping to the first one). Returns the number of matches.
    pub fn search(&mut self, query: &str) -> usize {
        let from = self.scroll_top();
        let mut state = SearchState {
            query: query.to_string(),
            ..SearchState::default()
        };
        self.find_matches(&mut state);
        state.current = state
            .matches
            .iter()
            .position(|m| m.row >= from)
            .unwrap_or(0);
        let count = state.matches.len();
        self.search = Some(state);
        self.show_current();
        count
    }

    /// `n` / `N`: the next (or previous) match, wrapping around.
    pub fn search_step(&mut self, forward: bool) {
        let Some(state) = &mut self.search else {
            return;
        };
        let count = state.matches.len();
        if count == 0 {
            return;
        }
        state.current = if forward {
            (state.current + 1) % count
        } else {
            (state.current + count - 1) % count
        };
        self.show_current();
    }

    /// The current match's number (1-based) and the number of matches, while searching.
    pub fn search_position(&self) -> Option<(usize, usize)> {
        let state = self.search.as_ref()?;
        Some((
            (state.current + 1).min(state.matches.len()),
            state.matches.len(),
        ))
    }

    /// The current match, if any.
    pub fn current_match(&self) -> Option<SearchMatch> {
        let state = self.search.as_ref()?;
        state.matches.get(state.current).copied()
    }

    /// Ends the search (its highlights go).
    pub fn clear_search(&mut self) {
        self.search = None;
    }

    fn find_matches(&mut self, state: &mut SearchState) {
        let width = self.scroll.viewport_width;
        let total = self.current_total();
        state.found_at = (width, total);
        state.matches.clear();
        let query: Vec<char> = state.query.chars().map(fold).collect();
        if width == 0 || query.is_empty() {
            return;
        }
        for (row, line) in self.visible_lines(width, 0, total).iter().enumerate() {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            state.matches.extend(matches_in(row, &text, &query));
        }
    }

    /// Scrolls so the current match is in view, a third of the way down.
    fn show_current(&mut self) {
        let Some(row) = self.current_match().map(|m| m.row) else {
            return;
        };
        let height = self.scroll.viewport_height;
        let top = self.scroll_top();
        if row >= top && row < top + height && !self.scroll.follow {
            return;
        }
        self.scroll.follow = false;
        self.scroll.top = row.saturating_sub(height / 3);
    }

    /// Finds the matches again when the rows moved (a resize, new output, Ctrl+O).
    pub(super) fn refresh_search(&mut self) {
        let Some(mut state) = self.search.take() else {
            return;
        };
        let width = self.scroll.viewport_width;
        if state.found_at.0 != width || state.found_at.1 != self.current_total() {
            self.find_matches(&mut state);
            state.current = state.current.min(state.matches.len().saturating_sub(1));
        }
        self.search = Some(state);
    }

    /// Marks the matches among the rows `top..top + area.height` drawn into `area`.
    pub(super) fn highlight_matches(&self, area: Rect, top: usize, buf: &mut Buffer) {
        let Some(state) = &self.search else {
            return;
        };
        let height = usize::from(area.height);
        for (i, m) in state.matches.iter().enumerate() {
            if m.row < top || m.row >= top + height {
                continue;
            }
            let modifier = if i == state.current {
                Modifier::REVERSED
            } else {
                Modifier::UNDERLINED
            };
            let y = area.y + u16::try_from(m.row - top).unwrap_or(u16::MAX);
            for dx in 0..m.width {
                let x = area.x + u16::try_from(m.x + dx).unwrap_or(u16::MAX);
                if x < area.right() {
                    buf[(x, y)].modifier.insert(modifier);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_case_insensitive_and_measured_in_cells() {
        let query: Vec<char> = "needle".chars().collect();
        let found = matches_in(3, "a Needle and 한 needle", &query);
        assert_eq!(
            found,
            vec![
                SearchMatch {
                    row: 3,
                    x: 2,
                    width: 6
                },
                // "a Needle and " is 13 cells, "한 " three more.
                SearchMatch {
                    row: 3,
                    x: 16,
                    width: 6
                },
            ]
        );
        let korean: Vec<char> = "세계".chars().collect();
        assert_eq!(
            matches_in(0, "안녕 세계", &korean),
            vec![SearchMatch {
                row: 0,
                x: 5,
                width: 4
            }]
        );
        assert!(matches_in(0, "abc", &[]).is_empty());
    }
}
