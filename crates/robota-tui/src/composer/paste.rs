//! Collapsed pastes: a bracketed paste longer than [`COLLAPSE_CHARS`] characters or
//! [`COLLAPSE_LINES`] lines is kept here and shown in the composer as one atomic
//! `[Pasted text #N +M lines]` placeholder, expanded back when the prompt is submitted.
//! Images (a pasted or dropped image file, Ctrl+V) are kept here too, shown as
//! `[Image #N]` — numbered from 1 in each prompt — a label that stays in the text sent,
//! the image going beside it.

use std::collections::BTreeMap;

use robota_core::message::ImageSource;

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

/// Where the first `[Image #N]` label in `text` starts, and its length.
pub fn find_image_label(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(found) = text[from..].find("[Image #") {
        let at = from + found;
        let digits = text[at + 8..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits > 0 && text[at + 8 + digits..].starts_with(']') {
            return Some((at, 8 + digits + 1));
        }
        from = at + 1;
    }
    None
}

/// The contents of the placeholders in the composer, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PasteStore {
    contents: BTreeMap<u32, String>,
    /// Attached images by placeholder id: their label and the image.
    images: BTreeMap<u32, (String, ImageSource)>,
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

    /// Puts back an image recalled from history under its old id and label.
    pub fn restore_image(&mut self, id: u32, label: String, image: ImageSource) {
        self.next_id = self.next_id.max(id);
        self.images.insert(id, (label, image));
    }

    /// The images of the given ids with their labels, for history.
    pub fn image_subset(
        &self,
        ids: impl IntoIterator<Item = u32>,
    ) -> BTreeMap<u32, (String, ImageSource)> {
        ids.into_iter()
            .filter_map(|id| self.images.get(&id).map(|entry| (id, entry.clone())))
            .collect()
    }

    /// Keeps an image under a new id and returns the id and its `[Image #N]` label.
    pub fn add_image(&mut self, image: ImageSource) -> (u32, String) {
        self.next_id += 1;
        let id = self.next_id;
        let label = format!("[Image #{}]", self.images.len() + 1);
        self.images.insert(id, (label.clone(), image));
        (id, label)
    }

    /// What placeholder `id` stands for in the text sent: a paste's text, an image's label.
    pub fn get(&self, id: u32) -> Option<&str> {
        self.contents
            .get(&id)
            .or_else(|| self.images.get(&id).map(|(label, _)| label))
            .map(String::as_str)
    }

    /// The images of the given ids (those still in the composer), in that order.
    pub fn images(&self, ids: impl IntoIterator<Item = u32>) -> Vec<ImageSource> {
        ids.into_iter()
            .filter_map(|id| self.images.get(&id).map(|(_, image)| image.clone()))
            .collect()
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
        self.images.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_labels_are_found_whole() {
        assert_eq!(find_image_label("a [Image #12] b"), Some((2, 11)));
        assert_eq!(
            find_image_label("[Image #] [Image #x] [Image #3]"),
            Some((21, 10))
        );
        assert_eq!(find_image_label("[Image #4"), None);
    }

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

    #[test]
    fn images_are_numbered_per_prompt_and_keep_their_label_in_the_text() {
        let mut store = PasteStore::default();
        let png = ImageSource::base64("image/png", "iVBOR");
        let (a, label_a) = store.add_image(png.clone());
        let (b, label_b) = store.add_image(ImageSource::base64("image/gif", "R0lG"));
        assert_eq!(
            (label_a.as_str(), label_b.as_str()),
            ("[Image #1]", "[Image #2]")
        );
        assert_eq!(store.get(a), Some("[Image #1]"));
        // Images are not history's pastes.
        assert!(store.subset([a, b]).is_empty());
        assert_eq!(store.images([b, a])[1], png);
        store.clear();
        assert!(store.images([a]).is_empty());
        let (c, label_c) = store.add_image(png);
        assert!(c > b);
        assert_eq!(label_c, "[Image #1]");
    }
}
