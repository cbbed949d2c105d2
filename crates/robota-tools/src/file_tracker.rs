//! Which files the model has read in this session and what they looked like then: Read
//! records a [`FileStamp`] per file, Edit and Write refuse to touch an existing file that
//! was never read or has changed on disk since (by the user, a formatter, another tool).

use std::collections::HashMap;
use std::fs::Metadata;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

/// What a file looked like when it was last read or written by a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub(crate) modified: Option<SystemTime>,
    pub(crate) len: u64,
    pub(crate) content_hash: u64,
}

impl FileStamp {
    /// The stamp of `content`, just read or written, whose file has `metadata`.
    pub(crate) fn of(content: &[u8], metadata: &Metadata) -> Self {
        FileStamp {
            modified: metadata.modified().ok(),
            len: content.len() as u64,
            content_hash: content_hash(content),
        }
    }

    /// The content hash a stamp keeps.
    pub(crate) fn hash(content: &[u8]) -> u64 {
        content_hash(content)
    }

    /// Same content as `other`. The modification time alone does not count: touching a file
    /// or saving it unchanged does not make it stale.
    pub(crate) fn same_content(&self, other: &FileStamp) -> bool {
        self.len == other.len && self.content_hash == other.content_hash
    }
}

fn content_hash(content: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(content);
    hasher.finish()
}

/// Why an existing file may not be written yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Staleness {
    #[error("File has not been read yet. Read it first before writing to it.")]
    NotRead,
    #[error(
        "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."
    )]
    Modified,
}

/// Shared by Read (records), Edit and Write (check, then record what they wrote).
/// Cloning shares the same record.
#[derive(Debug, Clone, Default)]
pub struct FileReadTracker {
    stamps: Arc<Mutex<HashMap<PathBuf, FileStamp>>>,
}

impl FileReadTracker {
    /// An empty record: no file read yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The key a file is recorded under: its canonical path when it exists, so a file read
    /// through a symlink counts for its target.
    pub fn key(path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, FileStamp>> {
        self.stamps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records what the file at `path` looked like when a tool read or wrote it.
    pub(crate) fn record(&self, path: &Path, stamp: FileStamp) {
        self.lock().insert(Self::key(path), stamp);
    }

    /// What the file at `path` looked like when a tool last read or wrote it.
    pub(crate) fn stamp(&self, path: &Path) -> Option<FileStamp> {
        self.lock().get(&Self::key(path)).copied()
    }

    /// Whether an existing file that now looks like `current` may be written.
    pub(crate) fn check_fresh(&self, path: &Path, current: &FileStamp) -> Result<(), Staleness> {
        match self.stamp(path) {
            None => Err(Staleness::NotRead),
            Some(recorded) if recorded.same_content(current) => Ok(()),
            Some(_) => Err(Staleness::Modified),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp_of(path: &Path) -> FileStamp {
        let bytes = std::fs::read(path).unwrap();
        FileStamp::of(&bytes, &std::fs::metadata(path).unwrap())
    }

    #[test]
    fn unread_changed_and_fresh_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let tracker = FileReadTracker::new();
        assert_eq!(
            tracker.check_fresh(&file, &stamp_of(&file)),
            Err(Staleness::NotRead)
        );
        tracker.record(&file, stamp_of(&file));
        assert_eq!(tracker.check_fresh(&file, &stamp_of(&file)), Ok(()));
        std::fs::write(&file, "two").unwrap();
        assert_eq!(
            tracker.check_fresh(&file, &stamp_of(&file)),
            Err(Staleness::Modified)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_read_through_a_symlink_counts_for_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&target, "x").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let tracker = FileReadTracker::new();
        tracker.record(&link, stamp_of(&target));
        assert!(tracker.check_fresh(&target, &stamp_of(&target)).is_ok());
        assert_eq!(tracker.stamp(&target), Some(stamp_of(&target)));
    }
}
