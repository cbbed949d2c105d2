//! The content-addressed snapshot store of one project:
//! `$ROBOTA_HOME/checkpoints/<project>/objects/<2 hex>/<62 hex>` holds file contents and
//! directory trees by their SHA-256, `index.json` the stat cache (path → size, mtime,
//! inode, mode and the content's hash) that lets a snapshot skip hashing unchanged files.
//!
//! A snapshot walks the project (the `ignore` crate: `.gitignore`, `.git/info/exclude` and
//! the global excludes are honoured in git and non-git directories alike; `.git` and the
//! store itself are never walked), reuses the hash of every file whose stat matches the
//! cache, reads and stores only the others, and writes one tree object per directory
//! (JSON, sorted), so a snapshot of an unchanged project writes nothing and its id — the
//! root tree's hash — is the previous one. Files above [`MAX_FILE_BYTES`] and unreadable
//! files are entered as [`Entry::Unstored`] (size and mtime only): they are reported as
//! "not restorable" when they change, never silently left out.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::file_meta::{change_key, is_executable};
use super::restore::ChangedFile;

/// Files larger than this are not copied into the store (recorded as not restorable).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// A snapshot stops after this many files (and says so).
pub(crate) const MAX_FILES: usize = 100_000;

/// A file whose mtime is this close to the last snapshot's start may have changed within
/// the same clock tick after it was looked at: it is hashed again (git's "racy clean").
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What a snapshot holds for one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A regular file: its content's hash and whether it is executable.
    File {
        /// The SHA-256 of the content (hex), the name of its object in the store.
        hash: String,
        /// Whether any execute bit is set.
        executable: bool,
    },
    /// A symbolic link and where it points.
    Symlink {
        /// The link's target, as written in the link.
        target: String,
    },
    /// A file whose content is not stored (too large, unreadable): only what tells a
    /// change.
    Unstored {
        /// Its size in bytes.
        size: u64,
        /// Its modification time, in nanoseconds since the Unix epoch.
        mtime_ns: i64,
        /// Why the content was not stored (too large, unreadable …).
        reason: String,
    },
}

impl Entry {
    pub(crate) fn is_restorable(&self) -> bool {
        !matches!(self, Entry::Unstored { .. })
    }
}

/// One directory entry in a tree object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TreeEntry {
    name: String,
    #[serde(flatten)]
    node: Node,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
enum Node {
    Dir { tree: String },
    Leaf(Entry),
}

/// What the cache knows of a file as last seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Cached {
    size: u64,
    mtime_ns: i64,
    ino: u64,
    mode: u32,
    entry: Entry,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    /// When the snapshot that wrote this index started, in ns since the epoch.
    taken_ns: i64,
    files: HashMap<String, Cached>,
    /// The root tree those files make (absent in indexes written before it was kept).
    #[serde(default)]
    root: Option<String>,
}

/// A snapshot just taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The root tree's hash.
    pub id: String,
    /// Set when the walk stopped early or met errors: what was left out.
    pub incomplete: Option<String>,
}

/// The store of one project and the work tree it snapshots.
#[derive(Debug)]
pub struct SnapshotStore {
    root: PathBuf,
    work_tree: PathBuf,
    index: Option<Index>,
    /// Objects known to be in the store (written or seen by this process).
    known: HashSet<String>,
}

impl SnapshotStore {
    /// A store kept in the folder `root` (created on first write) for the files under
    /// `work_tree`.
    pub fn new(root: PathBuf, work_tree: PathBuf) -> Self {
        SnapshotStore {
            root,
            work_tree,
            index: None,
            known: HashSet::new(),
        }
    }

    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    fn objects(&self) -> PathBuf {
        self.root.join("objects")
    }

    fn object_path(&self, hash: &str) -> PathBuf {
        let (dir, rest) = hash.split_at(2.min(hash.len()));
        self.objects().join(dir).join(rest)
    }

    /// Takes a snapshot of the work tree now.
    pub fn snapshot(&mut self) -> io::Result<Snapshot> {
        let started = now_ns();
        robota_session::log::create_private_dir(&self.objects())
            .map_err(|e| io::Error::other(e.to_string()))?;
        let mut changed = false;
        let mut previous = match self.index.take() {
            Some(index) => index,
            None => self.load_index(),
        };
        let racy_after = previous.taken_ns - RACY_WINDOW.as_nanos() as i64;
        let had_root = previous.root.is_some();
        let mut files: HashMap<String, Cached> = HashMap::with_capacity(previous.files.len());
        let mut problems = Vec::new();
        let mut truncated = false;
        let mut found = walk(&self.root, &self.work_tree, MAX_FILES + 1);
        if found.len() > MAX_FILES {
            // Over the limit: keep the first paths by name (the walk's order is not
            // stable across threads).
            found.sort_by(|a, b| match (a, b) {
                (Ok((a, _)), Ok((b, _))) => a.cmp(b),
                (a, b) => a.is_ok().cmp(&b.is_ok()),
            });
        }
        for found in found {
            let (path, meta) = match found {
                Ok(found) => found,
                Err(e) => {
                    problems.push(e.to_string());
                    continue;
                }
            };
            if files.len() >= MAX_FILES {
                truncated = true;
                break;
            }
            let stat = StatKey::of(&meta);
            // Each path's cache entry moves to the new index; what is left in `previous`
            // afterwards is gone from the project.
            let cached = match previous.files.remove(&path) {
                Some(cached) if stat.matches(&cached) && stat.mtime_ns < racy_after => {
                    files.insert(path, cached);
                    continue;
                }
                other => other,
            };
            let entry = self.read_entry(&path, &meta);
            let now = Cached {
                size: stat.size,
                mtime_ns: stat.mtime_ns,
                ino: stat.ino,
                mode: stat.mode,
                entry,
            };
            changed |= cached.as_ref() != Some(&now);
            files.insert(path, now);
        }
        changed |= !previous.files.is_empty();
        // The same files make the same trees: an unchanged project writes and hashes
        // nothing (its root tree is still in the store).
        let id = match previous
            .root
            .filter(|root| !changed && self.has_object(root))
        {
            Some(root) => root,
            None => {
                let entries: BTreeMap<&str, &Entry> = files
                    .iter()
                    .map(|(path, cached)| (path.as_str(), &cached.entry))
                    .collect();
                self.write_trees(&entries)?
            }
        };
        let index = Index {
            taken_ns: started,
            files,
            root: Some(id.clone()),
        };
        if changed || previous.taken_ns == 0 || !had_root {
            self.save_index(&index);
        }
        self.index = Some(index);
        let mut incomplete = Vec::new();
        if truncated {
            incomplete.push(format!(
                "only the first {MAX_FILES} files were checkpointed"
            ));
        }
        if !problems.is_empty() {
            incomplete.push(format!(
                "{} paths could not be read ({})",
                problems.len(),
                problems[0]
            ));
        }
        Ok(Snapshot {
            id,
            incomplete: (!incomplete.is_empty()).then(|| incomplete.join("; ")),
        })
    }

    /// Reads one file or link into the store.
    fn read_entry(&mut self, path: &str, meta: &fs::Metadata) -> Entry {
        let full = self.work_tree.join(path);
        let unstored = |reason: String| Entry::Unstored {
            size: meta.len(),
            mtime_ns: StatKey::of(meta).mtime_ns,
            reason,
        };
        if meta.file_type().is_symlink() {
            return match fs::read_link(&full) {
                Ok(target) => Entry::Symlink {
                    target: target.to_string_lossy().into_owned(),
                },
                Err(e) => unstored(format!("unreadable link: {e}")),
            };
        }
        if meta.len() > MAX_FILE_BYTES {
            return unstored(format!(
                "{} MB is above the checkpoint limit of {} MB",
                meta.len().div_ceil(1024 * 1024),
                MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        let bytes = match fs::read(&full) {
            Ok(bytes) => bytes,
            Err(e) => return unstored(format!("unreadable: {e}")),
        };
        match self.put(&bytes) {
            Ok(hash) => Entry::File {
                hash,
                executable: is_executable(meta),
            },
            Err(e) => unstored(format!("could not be stored: {e}")),
        }
    }

    /// Stores `bytes` (once) and returns their hash.
    pub fn put(&mut self, bytes: &[u8]) -> io::Result<String> {
        let hash = sha256_hex(bytes);
        if self.known.contains(&hash) {
            return Ok(hash);
        }
        let path = self.object_path(&hash);
        if !path.exists() {
            let dir = path.parent().unwrap_or(&self.root);
            fs::create_dir_all(dir)?;
            write_atomically(&path, bytes)?;
        }
        self.known.insert(hash.clone());
        Ok(hash)
    }

    /// Whether object `hash` is in the store.
    fn has_object(&mut self, hash: &str) -> bool {
        if self.known.contains(hash) {
            return true;
        }
        let present = self.object_path(hash).is_file();
        if present {
            self.known.insert(hash.to_string());
        }
        present
    }

    /// The bytes stored under `hash`.
    pub fn get(&self, hash: &str) -> io::Result<Vec<u8>> {
        fs::read(self.object_path(hash))
    }

    /// Writes the tree of every directory bottom-up; returns the root tree's hash.
    fn write_trees(&mut self, entries: &BTreeMap<&str, &Entry>) -> io::Result<String> {
        // Directory → its entries; every ancestor directory is present.
        let mut dirs: BTreeMap<String, Vec<TreeEntry>> = BTreeMap::new();
        dirs.insert(String::new(), Vec::new());
        for (path, entry) in entries {
            let (dir, name) = split_path(path);
            dirs.entry(dir.to_string()).or_default().push(TreeEntry {
                name: name.to_string(),
                node: Node::Leaf((*entry).clone()),
            });
            let mut ancestor = dir;
            while !ancestor.is_empty() {
                let parent = split_path(ancestor).0;
                dirs.entry(parent.to_string()).or_default();
                ancestor = parent;
            }
        }
        // Deepest first, so a directory's tree exists before its parent names it.
        let mut order: Vec<String> = dirs.keys().cloned().collect();
        order.sort_by_key(|d| {
            std::cmp::Reverse(d.matches('/').count() + usize::from(!d.is_empty()))
        });
        let mut root = String::new();
        for dir in order {
            let mut list = dirs.remove(&dir).unwrap_or_default();
            list.sort_by(|a, b| a.name.cmp(&b.name));
            let bytes = serde_json::to_vec(&list).map_err(io::Error::other)?;
            let hash = self.put(&bytes)?;
            if dir.is_empty() {
                root = hash;
            } else {
                let (parent, name) = split_path(&dir);
                dirs.entry(parent.to_string()).or_default().push(TreeEntry {
                    name: name.to_string(),
                    node: Node::Dir { tree: hash },
                });
            }
        }
        Ok(root)
    }

    /// Every path of snapshot `id` with its entry.
    pub fn read_snapshot(&self, id: &str) -> io::Result<BTreeMap<String, Entry>> {
        let mut out = BTreeMap::new();
        self.read_tree_into("", id, &mut out)?;
        Ok(out)
    }

    fn read_tree(&self, tree: &str) -> io::Result<Vec<TreeEntry>> {
        let bytes = self.get(tree)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| io::Error::other(format!("checkpoint tree {tree}: {e}")))
    }

    /// Adds every path below tree `tree` (named `prefix`) to `out`.
    fn read_tree_into(
        &self,
        prefix: &str,
        tree: &str,
        out: &mut BTreeMap<String, Entry>,
    ) -> io::Result<()> {
        for item in self.read_tree(tree)? {
            let path = join(prefix, &item.name);
            match item.node {
                Node::Dir { tree } => self.read_tree_into(&path, &tree, out)?,
                Node::Leaf(entry) => {
                    out.insert(path, entry);
                }
            }
        }
        Ok(())
    }

    /// The paths that differ between snapshots `before` and `after`, sorted. Directories
    /// whose trees are the same are not read: an unchanged snapshot costs nothing.
    pub fn changed_between(&self, before: &str, after: &str) -> io::Result<Vec<ChangedFile>> {
        let mut out = Vec::new();
        self.diff_trees("", Some(before), Some(after), &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn diff_trees(
        &self,
        prefix: &str,
        before: Option<&str>,
        after: Option<&str>,
        out: &mut Vec<ChangedFile>,
    ) -> io::Result<()> {
        if before == after {
            return Ok(());
        }
        let list = |tree: Option<&str>| -> io::Result<BTreeMap<String, Node>> {
            Ok(match tree {
                Some(tree) => self
                    .read_tree(tree)?
                    .into_iter()
                    .map(|e| (e.name, e.node))
                    .collect(),
                None => BTreeMap::new(),
            })
        };
        let (old, new) = (list(before)?, list(after)?);
        let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for name in names {
            let path = join(prefix, name);
            let (a, b) = (old.get(name), new.get(name));
            if a == b {
                continue;
            }
            let dir = |node: Option<&Node>| match node {
                Some(Node::Dir { tree }) => Some(tree.clone()),
                _ => None,
            };
            let leaf = |node: Option<&Node>| match node {
                Some(Node::Leaf(entry)) => Some(entry.clone()),
                _ => None,
            };
            // Leaves on either side: the path itself changed.
            let (leaf_a, leaf_b) = (leaf(a), leaf(b));
            if leaf_a.is_some() || leaf_b.is_some() {
                out.push(ChangedFile {
                    path: path.clone(),
                    restorable: leaf_a.as_ref().is_none_or(Entry::is_restorable),
                });
            }
            // Directories on either side: what differs below.
            let (dir_a, dir_b) = (dir(a), dir(b));
            if dir_a.is_some() || dir_b.is_some() {
                self.diff_trees(&path, dir_a.as_deref(), dir_b.as_deref(), out)?;
            }
        }
        Ok(())
    }

    fn index_path(&self) -> PathBuf {
        self.root.join("index.json")
    }

    fn load_index(&self) -> Index {
        fs::read(self.index_path())
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn save_index(&self, index: &Index) {
        let written = serde_json::to_vec(index)
            .map_err(io::Error::other)
            .and_then(|bytes| write_atomically(&self.index_path(), &bytes));
        if let Err(e) = written {
            tracing::warn!("checkpoint index not saved: {e}");
        }
    }
}

/// One path the walk found: its `/`-separated relative path and metadata.
type Found = Result<(String, fs::Metadata), ignore::Error>;

/// Every file, symlink and their metadata below `work_tree` (never inside `store` or a
/// `.git`), as `/`-separated relative paths, in no particular order. Directories are
/// read on several threads (the `ignore` crate's parallel walker: one `lstat` per file is
/// most of a snapshot's cost); the walk stops after `limit` paths.
fn walk(store: &Path, work_tree: &Path, limit: usize) -> Vec<Found> {
    let store = store.to_path_buf();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let found: std::sync::Mutex<Vec<Found>> = std::sync::Mutex::new(Vec::new());
    let count = std::sync::atomic::AtomicUsize::new(0);
    ignore::WalkBuilder::new(work_tree)
        .hidden(false)
        .ignore(false)
        .parents(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(move |e| e.file_name() != ".git" && !e.path().starts_with(&store))
        .build_parallel()
        .run(|| {
            let count = &count;
            // Each thread keeps its own list and hands it over when it is done.
            let mut flush = Flush {
                found: &found,
                mine: Vec::new(),
            };
            Box::new(move |entry| {
                use ignore::WalkState;
                let item = match entry {
                    Ok(entry) => {
                        let Some(file_type) = entry.file_type() else {
                            return WalkState::Continue;
                        };
                        if !(file_type.is_file() || file_type.is_symlink()) {
                            return WalkState::Continue;
                        }
                        let Some(path) = entry
                            .path()
                            .strip_prefix(work_tree)
                            .ok()
                            .and_then(Path::to_str)
                            .map(str::to_string)
                        else {
                            return WalkState::Continue;
                        };
                        entry.metadata().map(|meta| (path, meta))
                    }
                    Err(e) => Err(e),
                };
                flush.mine.push(item);
                if count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= limit {
                    WalkState::Quit
                } else {
                    WalkState::Continue
                }
            })
        });
    found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A walker thread's findings, added to the shared list when the thread's visitor is
/// dropped (one lock per thread, not per file).
struct Flush<'a> {
    found: &'a std::sync::Mutex<Vec<Found>>,
    mine: Vec<Found>,
}

impl Drop for Flush<'_> {
    fn drop(&mut self) {
        let mut found = self
            .found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        found.append(&mut self.mine);
    }
}

/// The parts of a file's metadata that say it changed.
struct StatKey {
    size: u64,
    mtime_ns: i64,
    ino: u64,
    mode: u32,
}

impl StatKey {
    fn of(meta: &fs::Metadata) -> Self {
        let (mtime_ns, ino, mode) = change_key(meta);
        StatKey {
            size: meta.len(),
            mtime_ns,
            ino,
            mode,
        }
    }

    fn matches(&self, cached: &Cached) -> bool {
        self.size == cached.size
            && self.mtime_ns == cached.mtime_ns
            && self.ino == cached.ino
            && self.mode == cached.mode
    }
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// `prefix/name`, or `name` at the top.
fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// `a/b/c` → (`a/b`, `c`); `c` → (``, `c`).
fn split_path(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place, so readers
/// (and a concurrent session) never see half a file. The file is the user's alone (0600):
/// a copy of a private file (`.env`, a key) must not become readable by others.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.flush()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests;
