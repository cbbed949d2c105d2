//! The walk that finds the existing files a family of deny rules names (what the kernel
//! hides or makes read-only for a Bash call), and the cache that spares repeating it at
//! every call: a walk's result is kept with the modification time of every directory it
//! read, and reused while none of them changed (a file created, removed or renamed in a
//! directory changes that directory's time, so a new denied file is never missed). Checking
//! costs one `stat` per directory instead of reading each and matching every entry.
//! As git does for its index, a directory changed too close to the walk's start to be
//! told apart by its time (file times are coarse, a few milliseconds) is "racy": a walk
//! holding one is not reused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How close to a walk's start a directory's time makes it racy (above the coarse
/// clock's tick that file times are taken from).
const RACY: Duration = Duration::from_millis(20);

use super::PathDenial;
use super::sandbox::DENIED_PATH_WALK_LIMIT;

/// What identifies a walk: its roots, the rule family and the rules' texts.
pub(super) type WalkKey = String;

/// Walks kept across Bash calls (shared by every copy of a policy).
#[derive(Debug, Clone, Default)]
pub struct DeniedWalkCache(Arc<Mutex<Vec<CachedWalk>>>);

/// One walk's result and the directories it read, with their modification times.
#[derive(Debug)]
struct CachedWalk {
    key: WalkKey,
    started: SystemTime,
    dirs: Vec<(PathBuf, Option<SystemTime>)>,
    found: Vec<PathBuf>,
}

impl CachedWalk {
    /// Whether no directory it read changed since, nor was changed racily close to it.
    fn still_true(&self) -> bool {
        self.dirs.iter().all(|(dir, time)| {
            modified(dir) == *time && time.is_none_or(|t| t + RACY < self.started)
        })
    }
}

/// The result of one walk.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// The denied paths found.
    pub found: Vec<PathBuf>,
    /// Every directory read, with its modification time before it was read.
    dirs: Vec<(PathBuf, Option<SystemTime>)>,
}

impl DeniedWalkCache {
    /// Two walks per call (Read and Edit rules) for a session and its subagents.
    const CAPACITY: usize = 8;

    /// The denied paths for `key`: the kept walk's while none of its directories
    /// changed, else a new walk by `walk` (then kept).
    pub(super) fn get_or_walk(&self, key: WalkKey, walk: impl FnOnce() -> Walk) -> Vec<PathBuf> {
        if let Ok(kept) = self.0.lock()
            && let Some(hit) = kept.iter().find(|w| w.key == key)
            && hit.still_true()
        {
            return hit.found.clone();
        }
        let started = SystemTime::now();
        let fresh = walk();
        if let Ok(mut kept) = self.0.lock() {
            kept.retain(|w| w.key != key);
            if kept.len() >= Self::CAPACITY {
                kept.remove(0);
            }
            kept.push(CachedWalk {
                key,
                started,
                dirs: fresh.dirs,
                found: fresh.found.clone(),
            });
        }
        fresh.found
    }
}

fn modified(dir: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(dir)
        .and_then(|m| m.modified())
        .ok()
}

/// Walks `root` for what `denial` hides (at most [`DENIED_PATH_WALK_LIMIT`] entries; a
/// denied directory is not entered, a symlink not followed), adding to `walk`.
pub(super) fn walk_denied(root: &Path, real: bool, denial: &PathDenial, walk: &mut Walk) {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let time = modified(&dir);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            walk.dirs.push((dir, time));
            continue;
        };
        walk.dirs.push((dir, time));
        for entry in entries.flatten() {
            seen += 1;
            if seen > DENIED_PATH_WALK_LIMIT {
                tracing::warn!(
                    "sandbox: stopped looking for denied files under {} after {DENIED_PATH_WALK_LIMIT} entries",
                    root.display()
                );
                return;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_dir = kind.is_dir();
            // The walk never follows a symlink, so from a real root only a symlink's own
            // path needs resolving. A directory whose every entry is denied (`secrets/**`)
            // is hidden whole.
            let hidden = if real && !kind.is_symlink() {
                denial.hides_real(&path, is_dir)
            } else {
                denial.hides(&path, is_dir)
            };
            if hidden {
                walk.found.push(path);
                continue;
            }
            if is_dir {
                stack.push(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::Duration;

    use super::*;

    fn age(dir: &Path) {
        let past = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }

    #[test]
    fn a_walk_is_reused_until_a_directory_it_read_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        age(&dir);
        let cache = DeniedWalkCache::default();
        let walks = Cell::new(0);
        let walk = || {
            walks.set(walks.get() + 1);
            Walk {
                found: std::fs::read_dir(&dir)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .collect(),
                dirs: vec![(dir.clone(), modified(&dir))],
            }
        };
        assert!(cache.get_or_walk("k".into(), walk).is_empty());
        assert!(cache.get_or_walk("k".into(), walk).is_empty());
        assert_eq!(walks.get(), 1, "an unchanged directory is not read again");
        std::fs::write(dir.join("new.key"), "x").unwrap();
        assert_eq!(
            cache.get_or_walk("k".into(), walk),
            vec![dir.join("new.key")]
        );
        assert_eq!(walks.get(), 2, "a file created since is found");
        // A time not before the walk's start is racy: read again though unchanged.
        let later = SystemTime::now() + Duration::from_secs(60);
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(cache.get_or_walk("k".into(), walk).len(), 1);
        assert_eq!(cache.get_or_walk("k".into(), walk).len(), 1);
        assert_eq!(walks.get(), 4, "racy walks are not reused");
        assert_eq!(cache.get_or_walk("other".into(), walk).len(), 1);
        assert_eq!(walks.get(), 5, "another key walks for itself");
    }
}
