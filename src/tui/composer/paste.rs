//! Collapsed pastes: a bracketed paste longer than [`COLLAPSE_CHARS`] characters or
//! [`COLLAPSE_LINES`] lines is kept here and shown in the composer as one atomic
//! `[Pasted text #N +M lines]` placeholder, expanded back when the prompt is submitted.

use std::collections::BTreeMap;

/// Pastes with more characters than this collapse into a placeholder.
pub const COLLAPSE_CHARS: usize = 800;
/// Pastes with more lines than this collapse into a placeholder.
pub const COLLAPSE_LINES: usize = 5;

/// Whether a (sanitized) paste is shown as a placeholder rather than inline.
pub fn should_collapse(text: &str) -> bool {
    text.chars().count() > COLLAPSE_CHARS || text.lines().count() > COLLAPSE_LINES
}

/// The placeholder for paste `id`: `[Pasted text #N +M lines]`, M counting line breaks
/// as Claude Code does; a single long line shows as `[Pasted text #N]`.
pub fn label(id: u32, text: &str) -> String {
    match text.matches('\n').count() {
        0 => format!("[Pasted text #{id}]"),
        breaks => format!("[Pasted text #{id} +{breaks} lines]"),
    }
}

/// The contents of the placeholders in the composer, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PasteStore {
    contents: BTreeMap<u32, String>,
    next_id: u32,
}

impl PasteStore {
    /// Keeps `text` under a new id and returns the id and its placeholder label.
    pub fn add(&mut self, text: String) -> (u32, String) {
        self.next_id += 1;
        let id = self.next_id;
        let label = label(id, &text);
        self.contents.insert(id, text);
        (id, label)
    }

    /// Puts back a paste recalled from history under its old id.
    pub fn restore(&mut self, id: u32, text: String) {
        self.next_id = self.next_id.max(id);
        self.contents.insert(id, text);
    }

    pub fn get(&self, id: u32) -> Option<&str> {
        self.contents.get(&id).map(String::as_str)
    }

    /// The contents of the given ids (those still in the composer), for history.
    pub fn subset(&self, ids: impl IntoIterator<Item = u32>) -> BTreeMap<u32, String> {
        ids.into_iter()
            .filter_map(|id| self.contents.get(&id).map(|t| (id, t.clone())))
            .collect()
    }

    /// Forgets every paste (the composer was submitted or cleared); numbering goes on.
    pub fn clear(&mut self) {
        self.contents.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_follow_characters_and_lines() {
        assert!(!should_collapse("short"));
        assert!(!should_collapse("1\n2\n3\n4\n5"));
        assert!(should_collapse("1\n2\n3\n4\n5\n6"));
        assert!(!should_collapse(&"x".repeat(COLLAPSE_CHARS)));
        assert!(should_collapse(&"x".repeat(COLLAPSE_CHARS + 1)));
        // Characters, not bytes: 800 Hangul syllables are 2,400 bytes.
        assert!(!should_collapse(&"한".repeat(COLLAPSE_CHARS)));
    }

    #[test]
    fn labels_count_line_breaks_and_ids_keep_rising() {
        let mut store = PasteStore::default();
        let (a, label_a) = store.add("a\nb\nc".into());
        assert_eq!(label_a, "[Pasted text #1 +2 lines]");
        store.clear();
        let (b, label_b) = store.add("x".repeat(900));
        assert_eq!((a, b), (1, 2));
        assert_eq!(label_b, "[Pasted text #2]");
        store.restore(7, "old".into());
        assert_eq!(store.add("y".into()).0, 8);
        assert_eq!(store.get(7), Some("old"));
        assert_eq!(store.subset([7, 99]).len(), 1);
    }
}
