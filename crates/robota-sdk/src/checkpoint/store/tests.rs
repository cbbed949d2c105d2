//! Tests of the snapshot store: snapshots, changes between them and blobs.

use super::*;

fn store(dir: &tempfile::TempDir) -> (SnapshotStore, PathBuf) {
    let work = dir.path().join("work");
    fs::create_dir_all(work.join("src/deep")).unwrap();
    fs::write(work.join("a.txt"), "alpha").unwrap();
    fs::write(work.join("src/deep/b.rs"), "fn b() {}").unwrap();
    (
        SnapshotStore::new(dir.path().join("store"), work.clone()),
        work,
    )
}

#[test]
fn a_snapshot_reads_back_and_an_unchanged_tree_keeps_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, work) = store(&dir);
    let first = store.snapshot().unwrap();
    assert_eq!(first.incomplete, None);
    let files = store.read_snapshot(&first.id).unwrap();
    assert_eq!(files.keys().collect::<Vec<_>>(), ["a.txt", "src/deep/b.rs"]);
    let Entry::File { hash, .. } = &files["a.txt"] else {
        panic!("{files:?}")
    };
    assert_eq!(store.get(hash).unwrap(), b"alpha");
    // A fresh store over the same directory (another process) agrees.
    let mut again = SnapshotStore::new(dir.path().join("store"), work.clone());
    assert_eq!(again.snapshot().unwrap().id, first.id);
    fs::write(work.join("src/deep/b.rs"), "fn b() { changed }").unwrap();
    let second = store.snapshot().unwrap();
    assert_ne!(second.id, first.id);
}

#[test]
fn an_unchanged_file_is_not_read_again_and_a_deleted_one_changes_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, work) = store(&dir);
    let a = work.join("a.txt");
    let past = SystemTime::now() - Duration::from_secs(60);
    let set_mtime = |t: SystemTime| {
        fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(t)
            .unwrap()
    };
    set_mtime(past);
    let first = store.snapshot().unwrap();
    // Same size, inode, mode and mtime, other bytes: only a read would notice, and the
    // stat cache means the file is not read again.
    fs::write(&a, "ALPHA").unwrap();
    set_mtime(past);
    assert_eq!(store.snapshot().unwrap().id, first.id);
    // A fresh store (another process) trusts the saved index the same way.
    let mut again = SnapshotStore::new(dir.path().join("store"), work.clone());
    assert_eq!(again.snapshot().unwrap().id, first.id);
    fs::remove_file(work.join("src/deep/b.rs")).unwrap();
    let after = store.snapshot().unwrap();
    assert_ne!(after.id, first.id);
    let files = store.read_snapshot(&after.id).unwrap();
    assert_eq!(files.keys().collect::<Vec<_>>(), ["a.txt"]);
}

#[cfg(unix)]
#[test]
fn ignored_files_git_dirs_and_the_store_itself_are_left_out_large_files_are_unstored() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().to_path_buf();
    fs::write(work.join(".gitignore"), "target/\n*.log\n").unwrap();
    fs::create_dir_all(work.join("target")).unwrap();
    fs::write(work.join("target/out.bin"), "x").unwrap();
    fs::write(work.join("debug.log"), "x").unwrap();
    fs::create_dir_all(work.join(".git")).unwrap();
    fs::write(work.join(".git/HEAD"), "ref").unwrap();
    fs::write(work.join("big.bin"), vec![0u8; MAX_FILE_BYTES as usize + 1]).unwrap();
    std::os::unix::fs::symlink("a.txt", work.join("link")).unwrap();
    let mut store = SnapshotStore::new(work.join(".robota/checkpoints/p"), work.clone());
    let snapshot = store.snapshot().unwrap();
    let files = store.read_snapshot(&snapshot.id).unwrap();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        [".gitignore", "big.bin", "link"]
    );
    assert!(!files["big.bin"].is_restorable());
    assert_eq!(
        files["link"],
        Entry::Symlink {
            target: "a.txt".into()
        }
    );
    // The second walk does not wander into the store it just wrote.
    let again = store.snapshot().unwrap();
    assert_eq!(again.id, snapshot.id);
}
