//! The walk that finds the existing files a family of deny rules names (what the kernel
//! hides or makes read-only for a Bash call), kept between calls so that a call pays only
//! for what changed: every directory read is kept with its modification time, the denied
//! entries found in it and its subdirectories, and the next walk reads again only the
//! directories whose time changed (a file created, removed or renamed in a directory
//! changes that directory's time, so a new denied file is never missed); an unchanged one
//! costs a `stat`. As git does for its index, a directory changed too close to its reading
//! to be told apart by its time (file times are coarse, a few milliseconds) is "racy" and
//! read again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::PathDenial;
use super::sandbox::DENIED_PATH_WALK_LIMIT;

/// How close to a directory's reading its time makes it racy (above the coarse clock's
/// tick that file times are taken from).
const RACY: Duration = Duration::from_millis(20);

/// What identifies a walk: its roots, the rule family and the rules' texts.
pub(super) type WalkKey = String;

/// Walks kept across Bash calls (shared by every copy of a policy).
#[derive(Debug, Clone, Default)]
pub struct DeniedWalkCache(Arc<Mutex<Vec<(WalkKey, Scans)>>>);

/// The directories one walk read, by path.
type Scans = HashMap<PathBuf, DirScan>;

/// One directory as a walk read it.
#[derive(Debug, Clone)]
struct DirScan {
    /// Its modification time before it was read.
    time: Option<SystemTime>,
    /// When it was read.
    read_at: SystemTime,
    /// Its entries that the rules hide.
    found: Vec<PathBuf>,
    /// Its other subdirectories (walked in turn).
    subdirs: Vec<PathBuf>,
    /// How many entries it has.
    entries: usize,
}

impl DirScan {
    /// Whether the directory is as it was read (and was not changed racily close to it).
    fn still_true(&self, dir: &Path) -> bool {
        modified(dir) == self.time && self.time.is_none_or(|t| t + RACY < self.read_at)
    }
}

impl DeniedWalkCache {
    /// Two walks per call (Read and Edit rules) for a session and its subagents.
    const CAPACITY: usize = 8;

    /// What `denial` hides below each root (`bool`: the root is its own real form, so an
    /// entry found is too), at most [`DENIED_PATH_WALK_LIMIT`] entries per root; a denied
    /// directory is not entered, a symlink not followed. Directories unchanged since the
    /// last walk of `key` are not read again.
    pub(super) fn walk(
        &self,
        key: WalkKey,
        roots: &[(PathBuf, bool)],
        denial: &PathDenial,
    ) -> Vec<PathBuf> {
        let kept = self.take(&key);
        let mut fresh = Scans::new();
        let mut found = Vec::new();
        for (root, real) in roots {
            let mut stack = vec![root.clone()];
            let mut seen = 0usize;
            while let Some(dir) = stack.pop() {
                let scan = match kept.get(&dir).filter(|s| s.still_true(&dir)) {
                    Some(scan) => scan.clone(),
                    None => read_dir(&dir, *real, denial),
                };
                seen += scan.entries;
                if seen > DENIED_PATH_WALK_LIMIT {
                    tracing::warn!(
                        "sandbox: stopped looking for denied files under {} after {DENIED_PATH_WALK_LIMIT} entries",
                        root.display()
                    );
                    break;
                }
                found.extend(scan.found.iter().cloned());
                stack.extend(scan.subdirs.iter().cloned());
                fresh.insert(dir, scan);
            }
        }
        self.keep(key, fresh);
        found.sort();
        found.dedup();
        found
    }

    /// The kept scans of `key`, taken out (empty when none).
    fn take(&self, key: &str) -> Scans {
        let Ok(mut kept) = self.0.lock() else {
            return Scans::new();
        };
        match kept.iter().position(|(k, _)| k == key) {
            Some(i) => kept.remove(i).1,
            None => Scans::new(),
        }
    }

    fn keep(&self, key: WalkKey, scans: Scans) {
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() >= Self::CAPACITY {
                kept.remove(0);
            }
            kept.push((key, scans));
        }
    }
}

fn modified(dir: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(dir)
        .and_then(|m| m.modified())
        .ok()
}

/// Reads one directory: its entries `denial` hides, and its other subdirectories.
fn read_dir(dir: &Path, real: bool, denial: &PathDenial) -> DirScan {
    let mut scan = DirScan {
        time: modified(dir),
        read_at: SystemTime::now(),
        found: Vec::new(),
        subdirs: Vec::new(),
        entries: 0,
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return scan;
    };
    for entry in entries.flatten() {
        scan.entries += 1;
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let is_dir = kind.is_dir();
        // The walk never follows a symlink, so from a real root only a symlink's own path
        // needs resolving. A directory whose every entry is denied (`secrets/**`) is
        // hidden whole.
        let hidden = if real && !kind.is_symlink() {
            denial.hides_real(&path, is_dir)
        } else {
            denial.hides(&path, is_dir)
        };
        if hidden {
            scan.found.push(path);
        } else if is_dir {
            scan.subdirs.push(path);
        }
    }
    scan
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PermissionPolicy, PermissionRule};

    fn age(dir: &Path) {
        let past = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }

    #[test]
    fn only_changed_directories_are_read_again_and_new_denied_files_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for d in ["a", "b"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        std::fs::write(root.join("a/.env"), "x").unwrap();
        for d in ["a", "b", ""] {
            age(&root.join(d));
        }
        let policy = PermissionPolicy {
            deny: PermissionRule::parse_list("Read(**/.env)"),
            ..PermissionPolicy::default()
        };
        let denial = policy.read_denial(&root).unwrap();
        let cache = DeniedWalkCache::default();
        let roots = [(root.clone(), true)];
        assert_eq!(
            cache.walk("k".into(), &roots, &denial),
            vec![root.join("a/.env")]
        );
        let read_at = |d: &str| cache.0.lock().unwrap()[0].1[&root.join(d)].read_at;
        let (a, b) = (read_at("a"), read_at("b"));
        std::fs::write(root.join("b/.env"), "x").unwrap();
        assert_eq!(
            cache.walk("k".into(), &roots, &denial),
            vec![root.join("a/.env"), root.join("b/.env")],
            "a denied file created since is found"
        );
        assert_eq!(read_at("a"), a, "an unchanged directory is not read again");
        assert!(read_at("b") > b, "the changed one is");
        // A time not before the reading is racy: read again though unchanged.
        let later = SystemTime::now() + Duration::from_secs(60);
        std::fs::File::open(root.join("a"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        cache.walk("k".into(), &roots, &denial);
        assert!(read_at("a") > a);
        std::fs::remove_dir_all(root.join("b")).unwrap();
        assert_eq!(
            cache.walk("k".into(), &roots, &denial),
            vec![root.join("a/.env")]
        );
    }
}
