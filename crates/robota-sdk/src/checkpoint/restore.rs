//! Comparing two snapshots and putting files back as a snapshot had them. A restore only
//! touches the paths it is given: each is written back from the store (content and
//! executable bit, or the link), or removed when the snapshot did not have it (with the
//! directories that removal leaves empty, up to the work tree). Paths the snapshot holds
//! as unstored are reported as not restorable and left as they are.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use super::file_meta::{set_executable, symlink};
use super::store::{Entry, SnapshotStore, write_atomically};

/// A path that changed between two snapshots and whether its earlier state is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// The path, relative to the work tree.
    pub path: String,
    /// Whether the earlier snapshot can give it back (false for a large or unreadable
    /// file).
    pub restorable: bool,
}

/// The paths whose entry differs between `before` and `after` (added, removed or changed),
/// sorted.
pub fn changed_files(
    before: &BTreeMap<String, Entry>,
    after: &BTreeMap<String, Entry>,
) -> Vec<ChangedFile> {
    let mut out = Vec::new();
    for (path, entry) in before {
        if after.get(path) != Some(entry) {
            out.push(ChangedFile {
                path: path.clone(),
                restorable: entry.is_restorable(),
            });
        }
    }
    for path in after.keys() {
        if !before.contains_key(path) {
            out.push(ChangedFile {
                path: path.clone(),
                restorable: true,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RestoreReport {
    /// Paths written back as they were.
    pub restored: Vec<String>,
    /// Paths removed: files the prompt's turn created.
    pub removed: Vec<String>,
    /// Paths left as they are, each with the reason.
    pub not_restorable: Vec<(String, String)>,
}

/// Puts each of `paths` back as `snapshot` had it.
pub(crate) fn restore_paths(
    store: &SnapshotStore,
    snapshot: &BTreeMap<String, Entry>,
    paths: &[String],
) -> RestoreReport {
    let mut report = RestoreReport::default();
    let work_tree = store.work_tree().to_path_buf();
    for path in paths {
        if !is_safe_relative(path) {
            report
                .not_restorable
                .push((path.clone(), "not a path inside the project".into()));
            continue;
        }
        let full = work_tree.join(path);
        let created = !snapshot.contains_key(path);
        let done = match snapshot.get(path) {
            None => remove(&full, &work_tree),
            Some(Entry::Unstored { reason, .. }) => {
                report.not_restorable.push((path.clone(), reason.clone()));
                continue;
            }
            Some(Entry::File { hash, executable }) => write_file(store, &full, hash, *executable),
            Some(Entry::Symlink { target }) => write_link(&full, target),
        };
        match done {
            Ok(()) if created => report.removed.push(path.clone()),
            Ok(()) => report.restored.push(path.clone()),
            Err(e) => report.not_restorable.push((path.clone(), e.to_string())),
        }
    }
    report
}

/// A relative path with no `..`, root or prefix components.
fn is_safe_relative(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn write_file(store: &SnapshotStore, full: &Path, hash: &str, executable: bool) -> io::Result<()> {
    let bytes = store.get(hash)?;
    if let Some(dir) = full.parent() {
        fs::create_dir_all(dir)?;
    }
    if fs::symlink_metadata(full).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(full)?;
    }
    write_atomically(full, &bytes)?;
    set_executable(full, executable)
}

fn write_link(full: &Path, target: &str) -> io::Result<()> {
    if let Some(dir) = full.parent() {
        fs::create_dir_all(dir)?;
    }
    match fs::symlink_metadata(full) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(full)?,
        Ok(_) => fs::remove_file(full)?,
        Err(_) => {}
    }
    symlink(target, full)
}

/// Removes a file the snapshot did not have, and the directories that leaves empty.
fn remove(full: &Path, work_tree: &Path) -> io::Result<()> {
    match fs::remove_file(full) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == work_tree || !d.starts_with(work_tree) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    #[cfg(unix)]
    #[test]
    fn changes_are_found_and_put_back_byte_exact() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("w");
        fs::create_dir_all(work.join("d")).unwrap();
        fs::write(work.join("keep.txt"), "same").unwrap();
        fs::write(work.join("edit.txt"), "before\n").unwrap();
        fs::write(work.join("d/gone.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(work.join("d/gone.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        let mut store = SnapshotStore::new(dir.path().join("s"), work.clone());
        let before_id = store.snapshot().unwrap().id;
        fs::write(work.join("edit.txt"), "after\n").unwrap();
        fs::remove_dir_all(work.join("d")).unwrap();
        fs::create_dir_all(work.join("new/dir")).unwrap();
        fs::write(work.join("new/dir/made.txt"), "x").unwrap();
        let after_id = store.snapshot().unwrap().id;
        let before = store.read_snapshot(&before_id).unwrap();
        let after = store.read_snapshot(&after_id).unwrap();
        let changed = changed_files(&before, &after);
        assert_eq!(
            store.changed_between(&before_id, &after_id).unwrap(),
            changed
        );
        assert!(
            store
                .changed_between(&after_id, &after_id)
                .unwrap()
                .is_empty()
        );
        let paths: Vec<String> = changed.iter().map(|c| c.path.clone()).collect();
        assert_eq!(paths, ["d/gone.sh", "edit.txt", "new/dir/made.txt"]);
        let report = restore_paths(&store, &before, &paths);
        assert_eq!(report.restored, ["d/gone.sh", "edit.txt"]);
        assert_eq!(
            report.removed,
            ["new/dir/made.txt"],
            "a created file is removed"
        );
        assert!(report.not_restorable.is_empty());
        assert_eq!(
            fs::read_to_string(work.join("edit.txt")).unwrap(),
            "before\n"
        );
        let gone = work.join("d/gone.sh");
        assert_eq!(fs::read_to_string(&gone).unwrap(), "#!/bin/sh\n");
        assert_eq!(
            fs::metadata(&gone).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert!(!work.join("new").exists(), "the emptied directories go too");
        assert_eq!(store.snapshot().unwrap().id, before_id);
    }

    #[test]
    fn paths_outside_the_project_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = SnapshotStore::new(dir.path().join("s"), dir.path().join("w"));
        fs::write(dir.path().join("victim"), "v").unwrap();
        let report = restore_paths(
            &store,
            &BTreeMap::new(),
            &["../victim".to_string(), "/etc/passwd".to_string()],
        );
        assert!(report.restored.is_empty());
        assert_eq!(report.not_restorable.len(), 2);
        assert!(dir.path().join("victim").exists());
    }
}
