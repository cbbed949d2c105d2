//! What Edit and Write share: loading the file about to be replaced, the read-before-write
//! and staleness check against the [`FileReadTracker`], line-ending detection, and the
//! atomic write (temp file in the same directory, permissions copied, rename over).

use std::fs::Permissions;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use super::file_tracker::{FileReadTracker, FileStamp};
use super::input::ToolFailure;

/// A file that exists and is about to be replaced.
#[derive(Debug)]
pub struct ExistingFile {
    pub bytes: Vec<u8>,
    pub stamp: FileStamp,
    /// The file's permissions on disk (`None`: the host has it but the disk does not).
    pub permissions: Option<Permissions>,
}

/// Reads the file at `path` if there is one; a directory or an unreadable file is an error.
pub fn load_existing(path: &Path) -> Result<Option<ExistingFile>, ToolFailure> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(ToolFailure::failed(format!(
                "Cannot access {}: {err}",
                path.display()
            )));
        }
    };
    if metadata.is_dir() {
        return Err(ToolFailure::failed(format!(
            "{} is a directory, not a file.",
            path.display()
        )));
    }
    if !metadata.is_file() {
        return Err(ToolFailure::failed(format!(
            "{} is not a regular file (a device, socket or FIFO).",
            path.display()
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|err| ToolFailure::failed(format!("Cannot read {}: {err}", path.display())))?;
    Ok(Some(ExistingFile {
        stamp: FileStamp::of(&bytes, &metadata),
        permissions: Some(metadata.permissions()),
        bytes,
    }))
}

/// Refuses to overwrite a file the model has not read, or one that changed since.
pub fn ensure_fresh(
    tracker: &FileReadTracker,
    path: &Path,
    existing: &ExistingFile,
) -> Result<(), ToolFailure> {
    tracker
        .check_fresh(path, &existing.stamp)
        .map_err(|staleness| ToolFailure::failed(staleness.to_string()))
}

/// Writes `content` to `path` atomically: a temp file next to the target, flushed to disk,
/// given `permissions`, then renamed over the target. A symlink is written through to its
/// target. Parent directories are created. No temp file is left behind on failure.
pub fn write_atomically(
    path: &Path,
    content: &[u8],
    permissions: Option<&Permissions>,
) -> io::Result<()> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has no file name",
        ));
    };
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".{}.{}.robota-tmp",
        name.to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = write_temp_then_rename(&temp, &target, content, permissions);
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn write_temp_then_rename(
    temp: &Path,
    target: &PathBuf,
    content: &[u8],
    permissions: Option<&Permissions>,
) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temp)?;
    file.write_all(content)?;
    file.sync_all()?;
    drop(file);
    if let Some(permissions) = permissions {
        std::fs::set_permissions(temp, permissions.clone())?;
    }
    std::fs::rename(temp, target)
}

/// Records what a tool just wrote, so the next edit needs no re-read.
pub fn record_written(tracker: &FileReadTracker, path: &Path, content: &[u8]) {
    if let Ok(metadata) = std::fs::metadata(path) {
        tracker.record(path, FileStamp::of(content, &metadata));
    }
}

/// Whether the text's first line ends in CRLF (the file's line-ending style).
pub fn uses_crlf(text: &str) -> bool {
    text.find('\n')
        .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r')
}

/// Converts every line ending to CRLF (existing CRLFs stay single).
pub fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Maps an I/O failure of a write to the message the model reads.
/// Writes `content` atomically (keeping `permissions`) and records it as what the model
/// last saw of the file, so a following Edit or Write needs no re-read.
pub fn write_and_record(
    tracker: &FileReadTracker,
    path: &Path,
    content: &[u8],
    permissions: Option<&Permissions>,
) -> Result<(), ToolFailure> {
    write_atomically(path, content, permissions).map_err(|err| write_failure(path, err))?;
    record_written(tracker, path, content);
    Ok(())
}

pub fn write_failure(path: &Path, err: io::Error) -> ToolFailure {
    ToolFailure::failed(format!("Failed to write {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o750)).unwrap();
        let existing = load_existing(&file).unwrap().unwrap();
        write_atomically(&file, b"new", existing.permissions.as_ref()).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
        assert_eq!(names_in(dir.path()), vec!["run.sh"]);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_creates_parents_and_writes_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c.txt");
        write_atomically(&nested, b"hi", None).unwrap();
        assert_eq!(std::fs::read_to_string(&nested).unwrap(), "hi");

        let target = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&target, "before").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomically(&link, b"after", None).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "after");
    }

    #[test]
    fn failed_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a directory: rename fails after the temp file was written.
        let target = dir.path().join("sub");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "").unwrap();
        assert!(write_atomically(&target, b"x", None).is_err());
        assert_eq!(names_in(dir.path()), vec!["sub"]);
    }

    #[test]
    fn line_endings() {
        assert!(uses_crlf("a\r\nb\r\n"));
        assert!(!uses_crlf("a\nb\r\n"));
        assert!(!uses_crlf("no newline"));
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
    }

    #[test]
    fn directories_are_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_existing(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"));
        assert!(load_existing(&dir.path().join("none")).unwrap().is_none());
        let err = load_existing(Path::new("/dev/null")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"));
    }
}
