//! Prompt history for Up/Down: the prompts submitted in a project, persisted as JSONL (one
//! entry a line, appended and flushed per prompt) in a file the caller chooses, bounded to
//! [`HISTORY_LIMIT`] entries, consecutive duplicates dropped. A torn or corrupt line (a
//! crash mid-write) is skipped on load, never fatal.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use robota_core::message::ImageSource;

/// Entries kept in memory and, after compaction, on disk.
pub const HISTORY_LIMIT: usize = 1_000;

/// Why the history file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Reading, appending to or rewriting the file at `path` failed.
    #[error("prompt history {path}: {source}")]
    Io {
        /// The history file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An entry could not be encoded as JSON.
    #[error("prompt history entry: {0}")]
    Encode(#[from] serde_json::Error),
}

/// One submitted prompt as the composer showed it, with the contents of its collapsed
/// pastes so recalling it restores the placeholders. Shell commands start with `!`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The prompt's text as shown, with paste placeholders in place of their contents.
    pub display: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) pastes: BTreeMap<u32, String>,
    /// The attached images by placeholder id, with their labels: kept for this run only
    /// (they are the conversation's, and too big for the history file), so a prompt
    /// recalled after a restart has its `[Image #N]` labels as plain text.
    #[serde(skip)]
    pub images: BTreeMap<u32, (String, ImageSource)>,
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

impl HistoryEntry {
    /// An entry stamped with the current time, with no images.
    pub fn new(display: impl Into<String>, pastes: BTreeMap<u32, String>) -> Self {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        HistoryEntry {
            display: display.into(),
            pastes,
            images: BTreeMap::new(),
            timestamp,
        }
    }

    fn same_prompt(&self, other: &HistoryEntry) -> bool {
        self.display == other.display && self.pastes == other.pastes && self.images == other.images
    }
}

/// The history of one project, oldest first.
#[derive(Debug, Clone, Default)]
pub struct PromptHistory {
    path: Option<PathBuf>,
    entries: Vec<HistoryEntry>,
    /// Lines in the file, so it is rewritten once it holds twice the limit.
    lines_on_disk: usize,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> HistoryError + '_ {
    move |source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl PromptHistory {
    /// A history that is not saved anywhere.
    pub fn in_memory() -> Self {
        PromptHistory::default()
    }

    /// Loads the history kept at `path` (a missing file is an empty history); later
    /// pushes append to it, creating its directory when needed.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, HistoryError> {
        let path = path.into();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_error(&path)(e)),
        };
        let mut entries: Vec<HistoryEntry> = Vec::new();
        let mut lines_on_disk = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            lines_on_disk += 1;
            match serde_json::from_str::<HistoryEntry>(line) {
                Ok(entry) => entries.push(entry),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "skipping a bad history line: {e}")
                }
            }
        }
        if entries.len() > HISTORY_LIMIT {
            entries.drain(..entries.len() - HISTORY_LIMIT);
        }
        Ok(PromptHistory {
            path: Some(path),
            entries,
            lines_on_disk,
        })
    }

    /// Entries held (at most [`HISTORY_LIMIT`]).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no prompt has been recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry `back` steps from the newest (0 = the last submitted).
    pub fn get_back(&self, back: usize) -> Option<&HistoryEntry> {
        self.entries
            .len()
            .checked_sub(back + 1)
            .map(|i| &self.entries[i])
    }

    /// Records a prompt (skipped when it repeats the last one) and appends it to the file.
    /// The in-memory history is updated even when writing fails.
    pub fn push(&mut self, entry: HistoryEntry) -> Result<(), HistoryError> {
        if entry.display.trim().is_empty()
            || self
                .entries
                .last()
                .is_some_and(|last| last.same_prompt(&entry))
        {
            return Ok(());
        }
        self.entries.push(entry);
        if self.entries.len() > HISTORY_LIMIT {
            self.entries.remove(0);
        }
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_error(dir))?;
        }
        if self.lines_on_disk + 1 >= 2 * HISTORY_LIMIT {
            self.rewrite(&path)
        } else {
            let mut line = serde_json::to_string(&self.entries[self.entries.len() - 1])?;
            line.push('\n');
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(io_error(&path))?;
            // A torn last line from an earlier crash must not swallow this entry.
            if !ends_with_newline(&path) {
                line.insert(0, '\n');
            }
            file.write_all(line.as_bytes()).map_err(io_error(&path))?;
            file.flush().map_err(io_error(&path))?;
            self.lines_on_disk += 1;
            Ok(())
        }
    }

    /// Replaces the file with the bounded in-memory entries (temp file + rename).
    fn rewrite(&mut self, path: &Path) -> Result<(), HistoryError> {
        let mut text = String::new();
        for entry in &self.entries {
            text.push_str(&serde_json::to_string(entry)?);
            text.push('\n');
        }
        let tmp = path.with_extension("jsonl.tmp");
        fs::write(&tmp, text).map_err(io_error(&tmp))?;
        fs::rename(&tmp, path).map_err(io_error(path))?;
        self.lines_on_disk = self.entries.len();
        Ok(())
    }
}

/// Whether the file is empty or ends with a line break (unreadable counts as yes).
fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = fs::File::open(path) else {
        return true;
    };
    let mut last = [0u8; 1];
    file.seek(SeekFrom::End(-1)).is_err()
        || (file.read_exact(&mut last).is_ok() && last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> HistoryEntry {
        HistoryEntry::new(text, BTreeMap::new())
    }

    #[test]
    fn entries_persist_and_reload_newest_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history").join("proj.jsonl");
        let mut h = PromptHistory::load(&path).unwrap();
        assert!(h.is_empty());
        h.push(entry("first")).unwrap();
        h.push(entry("second")).unwrap();
        h.push(entry("second")).unwrap();
        let mut pastes = BTreeMap::new();
        pastes.insert(3, "pasted\nbody".to_string());
        h.push(HistoryEntry::new(
            "see [Pasted text #3 +1 lines]",
            pastes.clone(),
        ))
        .unwrap();
        let again = PromptHistory::load(&path).unwrap();
        assert_eq!(again.len(), 3);
        assert_eq!(again.get_back(0).unwrap().pastes, pastes);
        assert_eq!(again.get_back(1).unwrap().display, "second");
        assert_eq!(again.get_back(2).unwrap().display, "first");
        assert!(again.get_back(3).is_none());
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_entry_still_lands() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        fs::write(&path, "{\"display\":\"ok\"}\n{\"display\":\"to").unwrap();
        let mut h = PromptHistory::load(&path).unwrap();
        assert_eq!(h.len(), 1);
        h.push(entry("after")).unwrap();
        let again = PromptHistory::load(&path).unwrap();
        let displays: Vec<&str> = (0..again.len())
            .rev()
            .map(|i| again.get_back(i).unwrap().display.as_str())
            .collect();
        assert_eq!(displays, vec!["ok", "after"]);
    }

    #[test]
    fn history_is_bounded_in_memory_and_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let mut h = PromptHistory::load(&path).unwrap();
        for i in 0..(2 * HISTORY_LIMIT + 10) {
            h.push(entry(&format!("prompt {i}"))).unwrap();
        }
        assert_eq!(h.len(), HISTORY_LIMIT);
        let lines = fs::read_to_string(&path).unwrap().lines().count();
        assert!(lines < 2 * HISTORY_LIMIT, "file has {lines} lines");
        let again = PromptHistory::load(&path).unwrap();
        assert_eq!(again.len(), HISTORY_LIMIT);
        assert_eq!(
            again.get_back(0).unwrap().display,
            format!("prompt {}", 2 * HISTORY_LIMIT + 9)
        );
    }

    #[test]
    fn blank_prompts_are_not_recorded() {
        let mut h = PromptHistory::in_memory();
        h.push(entry("  \n ")).unwrap();
        assert!(h.is_empty());
    }
}
