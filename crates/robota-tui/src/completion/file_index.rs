//! The project's paths for `@` completion: a gitignore-aware parallel walk (the `ignore`
//! crate, as ripgrep walks) into an immutable [`FileIndex`], built off the UI thread and
//! rebuilt lazily by a [`FileIndexer`] when it has grown stale. Queries over it are
//! `file_search`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use ignore::{WalkBuilder, WalkState};
use nucleo_matcher::Utf32String;
use tokio::sync::watch;

/// Paths kept at most; a larger tree is cut (and says so) rather than eating memory.
pub const MAX_INDEXED_PATHS: usize = 500_000;
/// An index older than this is rebuilt in the background when completion opens.
pub const STALE_AFTER: Duration = Duration::from_secs(15);

static GENERATION: AtomicU64 = AtomicU64::new(1);

/// One indexed path, relative to the root, `/`-separated.
#[derive(Debug, Clone)]
pub(super) struct IndexedPath {
    /// What the matcher reads: one char per grapheme cluster.
    pub(super) path: Utf32String,
    /// The path itself when it is not ASCII (the matcher's form drops combining marks).
    pub(super) original: Option<Box<str>>,
    pub(super) is_dir: bool,
}

impl IndexedPath {
    /// The path as the user sees and types it.
    pub(super) fn text(&self) -> String {
        self.original
            .as_deref()
            .map_or_else(|| self.path.to_string(), str::to_string)
    }
}

/// A snapshot of the project's files and directories, shallow paths first.
#[derive(Debug)]
pub struct FileIndex {
    root: PathBuf,
    pub(super) entries: Vec<IndexedPath>,
    built_at: Instant,
    truncated: bool,
    /// Tells indexes apart, so a search never narrows from another index's matches.
    pub(super) generation: u64,
}

impl FileIndex {
    /// Walks `root` (blocking; run it on a blocking thread): `.gitignore`, `.ignore` and
    /// git excludes honoured, hidden files included, `.git` itself skipped.
    pub fn build(root: &Path) -> FileIndex {
        Self::build_with_limit(root, MAX_INDEXED_PATHS)
    }

    pub(crate) fn build_with_limit(root: &Path, limit: usize) -> FileIndex {
        let (tx, rx) = mpsc::channel::<(String, bool)>();
        let full = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicU64::new(0));
        WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build_parallel()
            .run(|| {
                let tx = tx.clone();
                let full = Arc::clone(&full);
                let count = Arc::clone(&count);
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if entry.depth() == 0 {
                        return WalkState::Continue;
                    }
                    if count.fetch_add(1, Ordering::Relaxed) >= limit as u64 {
                        full.store(true, Ordering::Relaxed);
                        return WalkState::Quit;
                    }
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    let Ok(relative) = entry.path().strip_prefix(root) else {
                        return WalkState::Continue;
                    };
                    let mut path = relative.to_string_lossy().replace('\\', "/");
                    if is_dir {
                        path.push('/');
                    }
                    if tx.send((path, is_dir)).is_err() {
                        return WalkState::Quit;
                    }
                    WalkState::Continue
                })
            });
        drop(tx);
        let mut paths: Vec<(String, bool)> = rx.into_iter().collect();
        paths.sort_unstable_by(|a, b| {
            let depth = |p: &str| p.trim_end_matches('/').matches('/').count();
            depth(&a.0).cmp(&depth(&b.0)).then_with(|| a.0.cmp(&b.0))
        });
        let entries = paths
            .into_iter()
            .map(|(path, is_dir)| IndexedPath {
                path: Utf32String::from(path.as_str()),
                original: (!path.is_ascii()).then(|| path.into_boxed_str()),
                is_dir,
            })
            .collect();
        FileIndex {
            root: root.to_path_buf(),
            entries,
            built_at: Instant::now(),
            truncated: full.load(Ordering::Relaxed),
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// An index of the given paths (directories end with `/`), for tests.
    #[cfg(test)]
    pub(super) fn from_paths(paths: impl IntoIterator<Item = String>) -> FileIndex {
        let entries = paths
            .into_iter()
            .map(|p| IndexedPath {
                path: Utf32String::from(p.as_str()),
                is_dir: p.ends_with('/'),
                original: (!p.is_ascii()).then(|| p.into_boxed_str()),
            })
            .collect();
        FileIndex {
            root: PathBuf::from("/index"),
            entries,
            built_at: Instant::now(),
            truncated: false,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The directory the paths are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many paths (files and directories) it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no path.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the walk stopped at the path limit.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// How long ago it was built.
    pub fn age(&self) -> Duration {
        self.built_at.elapsed()
    }
}

/// Keeps a [`FileIndex`] of one root fresh: builds it on tokio's blocking pool (or a
/// thread, outside a runtime) and publishes each new index on a watch channel, which the
/// app awaits to redraw the popup.
#[derive(Debug, Clone)]
pub struct FileIndexer {
    root: PathBuf,
    published: Arc<watch::Sender<Option<Arc<FileIndex>>>>,
    building: Arc<AtomicBool>,
}

impl FileIndexer {
    /// An indexer of `root` with no index yet; nothing is built until asked.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileIndexer {
            root: root.into(),
            published: Arc::new(watch::Sender::new(None)),
            building: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Fires whenever a new index is ready.
    pub fn subscribe(&self) -> watch::Receiver<Option<Arc<FileIndex>>> {
        self.published.subscribe()
    }

    /// The latest index, if one was built.
    pub fn current(&self) -> Option<Arc<FileIndex>> {
        self.published.borrow().clone()
    }

    /// Publishes an index built elsewhere (tests, or a caller that built it already).
    pub fn publish(&self, index: FileIndex) {
        self.published.send_replace(Some(Arc::new(index)));
    }

    /// Starts a background build when there is no index or it is older than `max_age`,
    /// unless one is already running. Returns whether a build started.
    pub fn refresh_if_stale(&self, max_age: Duration) -> bool {
        if self.current().is_some_and(|index| index.age() < max_age) {
            return false;
        }
        if self.building.swap(true, Ordering::AcqRel) {
            return false;
        }
        let root = self.root.clone();
        let published = Arc::clone(&self.published);
        let building = Arc::clone(&self.building);
        let job = move || {
            let index = FileIndex::build(&root);
            building.store(false, Ordering::Release);
            published.send_replace(Some(Arc::new(index)));
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(job);
            }
            Err(_) => {
                std::thread::spawn(job);
            }
        }
        true
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::completion::file_search::{FileMatch, FileSearch};
    use std::fs;

    /// A small project with ignored files, a hidden directory and a `.git`.
    pub(crate) fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "src/main.rs",
            "src/tui/composer/mod.rs",
            "src/tui/mod.rs",
            "README.md",
            ".github/workflows/ci.yml",
            "target/debug/robota",
            "notes/ignored.txt",
        ] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        fs::write(root.join(".gitignore"), "target/\nnotes/ignored.txt\n").unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".git/HEAD"), "ref").unwrap();
        dir
    }

    pub(crate) fn paths(matches: &[FileMatch]) -> Vec<&str> {
        matches.iter().map(|m| m.path.as_str()).collect()
    }

    #[test]
    fn the_walk_honours_gitignore_and_lists_shallow_paths_first() {
        let dir = tree();
        let index = FileIndex::build(dir.path());
        let all = FileSearch::default().search(&index, "", 100);
        assert_eq!(
            paths(&all),
            vec![
                ".github/",
                ".gitignore",
                "README.md",
                "notes/",
                "src/",
                ".github/workflows/",
                "src/main.rs",
                "src/tui/",
                ".github/workflows/ci.yml",
                "src/tui/composer/",
                "src/tui/mod.rs",
                "src/tui/composer/mod.rs",
            ]
        );
        assert!(all[0].is_dir && !all[1].is_dir);
        assert!(!index.is_truncated());
    }

    #[test]
    fn the_limit_caps_the_walk_and_the_results() {
        let dir = tree();
        let index = FileIndex::build_with_limit(dir.path(), 3);
        assert_eq!(index.len(), 3);
        assert!(index.is_truncated());
        let full = FileIndex::build(dir.path());
        assert_eq!(FileSearch::default().search(&full, "s", 2).len(), 2);
    }

    #[tokio::test]
    async fn the_indexer_builds_off_thread_and_publishes() {
        let dir = tree();
        let indexer = FileIndexer::new(dir.path());
        let mut updates = indexer.subscribe();
        assert!(indexer.current().is_none());
        assert!(indexer.refresh_if_stale(STALE_AFTER));
        assert!(
            !indexer.refresh_if_stale(STALE_AFTER),
            "one build at a time"
        );
        tokio::time::timeout(Duration::from_secs(10), updates.changed())
            .await
            .expect("the index was published")
            .unwrap();
        assert_eq!(indexer.current().map(|i| i.len()), Some(12));
        assert!(
            !indexer.refresh_if_stale(STALE_AFTER),
            "fresh index is kept"
        );
        assert!(indexer.refresh_if_stale(Duration::ZERO));
    }
}
