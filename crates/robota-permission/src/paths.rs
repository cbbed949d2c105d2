//! Paths for permission checks: resolving what a call names (`~`, relative to the working
//! directory, `..` folded, symlinks followed), whether it lies inside the working
//! directories, and the per-evaluation context path rules are matched in.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// A path as named (lexically normalised) and as it really is (symlinks resolved as far as
/// the path exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The path with `.` and `..` resolved as written.
    pub lexical: PathBuf,
    /// The path with symlinks resolved as well.
    pub real: PathBuf,
}

impl ResolvedPath {
    /// Resolves `raw` against `cwd`; `None` for `~user` forms (unknown home) or a `~`
    /// without a known home.
    pub fn resolve(raw: &str, cwd: &Path, home: Option<&Path>) -> Option<Self> {
        let joined = if raw == "~" {
            home?.to_path_buf()
        } else if let Some(rest) = raw.strip_prefix("~/") {
            home?.join(rest)
        } else if raw.starts_with('~') {
            return None;
        } else {
            cwd.join(raw)
        };
        Some(Self::of(&joined))
    }

    /// An absolute path, folded and with its symlinks followed. The real form follows
    /// each symlink before the `..` after it, as the kernel does (`link/../x` is `x` beside
    /// the link's target, not beside the link).
    pub fn of(path: &Path) -> Self {
        let lexical = fold(path);
        let real = real_path(path);
        ResolvedPath { lexical, real }
    }

    pub(super) fn forms(&self) -> [&Path; 2] {
        [&self.lexical, &self.real]
    }
}

/// Folds `.` and `..` without touching the disk.
pub fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The path with symlinks resolved: the longest existing ancestor canonicalised (by the
/// kernel, so a symlink is followed before a `..` that comes after it), the rest appended
/// and folded.
fn real_path(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    // One `stat` per missing level, then one canonicalisation.
    while std::fs::metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return fold(path),
        }
    }
    match std::fs::canonicalize(existing) {
        Ok(mut out) => {
            for part in rest.iter().rev() {
                out.push(part);
            }
            fold(&out)
        }
        Err(_) => fold(path),
    }
}

/// Whether both forms of `path` lie inside some working directory.
pub fn inside_any(path: &ResolvedPath, dirs: &[ResolvedPath]) -> bool {
    path.forms().iter().all(|form| {
        dirs.iter().any(|d| {
            d.forms()
                .iter()
                .any(|dir| form.as_os_str() == dir.as_os_str() || below(form, dir).is_some())
        })
    })
}

/// Where path rules are matched during one evaluation. Real (symlink-resolved) forms of
/// paths are looked up once per evaluation, those of anchors (working directories, home,
/// settings projects) once per policy.
pub(super) struct PathContext<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    additional_dirs: &'a [PathBuf],
    anchors: Option<&'a AnchorCache>,
    real_paths: RefCell<Vec<(PathBuf, Rc<[PathBuf]>)>>,
    working_dirs: OnceCell<Vec<ResolvedPath>>,
}

/// The real forms of directories rules are anchored at, kept across evaluations (they
/// are the user's working and settings directories, which do not move under a session).
#[derive(Debug, Clone, Default)]
pub struct AnchorCache(Arc<Mutex<Vec<(PathBuf, PathBuf)>>>);

impl AnchorCache {
    const CAPACITY: usize = 64;

    fn real(&self, path: &Path) -> PathBuf {
        if let Ok(known) = self.0.lock()
            && let Some((_, real)) = known
                .iter()
                .find(|(p, _)| p.as_os_str() == path.as_os_str())
        {
            return real.clone();
        }
        let real = real_path(path);
        if let Ok(mut known) = self.0.lock() {
            if known.len() >= Self::CAPACITY {
                known.clear();
            }
            known.push((path.to_path_buf(), real.clone()));
        }
        real
    }
}

impl<'a> PathContext<'a> {
    pub fn new(cwd: &'a Path, home: Option<&'a Path>, additional_dirs: &'a [PathBuf]) -> Self {
        PathContext {
            cwd,
            home,
            additional_dirs,
            anchors: None,
            real_paths: RefCell::new(Vec::new()),
            working_dirs: OnceCell::new(),
        }
    }

    /// Keeps the real forms of anchors in `cache` across evaluations.
    pub fn with_anchor_cache(mut self, cache: &'a AnchorCache) -> Self {
        self.anchors = Some(cache);
        self
    }

    /// The path as named and, when different, as it really is.
    pub(super) fn forms(&self, path: &Path) -> Rc<[PathBuf]> {
        self.forms_by(path, real_path)
    }

    /// [`Self::forms`] of a directory rules are anchored at.
    pub(super) fn anchor_forms(&self, path: &Path) -> Rc<[PathBuf]> {
        match self.anchors {
            Some(cache) => self.forms_by(path, |p| cache.real(p)),
            None => self.forms(path),
        }
    }

    fn forms_by(&self, path: &Path, real_path: impl Fn(&Path) -> PathBuf) -> Rc<[PathBuf]> {
        if let Some((_, forms)) = self
            .real_paths
            .borrow()
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_os_str())
        {
            return forms.clone();
        }
        let real = real_path(path);
        let forms: Rc<[PathBuf]> = if real == path {
            Rc::from(vec![real])
        } else {
            Rc::from(vec![path.to_path_buf(), real])
        };
        self.real_paths
            .borrow_mut()
            .push((path.to_path_buf(), forms.clone()));
        forms
    }

    /// An absolute path, folded, with its real form (symlinks followed before `..`).
    pub fn resolve(&self, path: &Path) -> ResolvedPath {
        let lexical = fold(path);
        let real = if lexical.as_os_str() == path.as_os_str() {
            self.forms(&lexical).last().cloned()
        } else {
            None
        };
        let real = real.unwrap_or_else(|| real_path(path));
        ResolvedPath { lexical, real }
    }

    /// `raw` resolved against `cwd` (see [`ResolvedPath::resolve`]).
    pub fn resolve_str(&self, raw: &str, cwd: &Path) -> Option<ResolvedPath> {
        let joined = if raw == "~" {
            self.home?.to_path_buf()
        } else if let Some(rest) = raw.strip_prefix("~/") {
            self.home?.join(rest)
        } else if raw.starts_with('~') {
            return None;
        } else {
            cwd.join(raw)
        };
        Some(self.resolve(&joined))
    }

    /// The working directories: the session's and the additional ones.
    pub fn working_dirs(&self) -> &[ResolvedPath] {
        self.working_dirs.get_or_init(|| {
            std::iter::once(self.cwd.to_path_buf())
                .chain(self.additional_dirs.iter().map(|d| self.cwd.join(d)))
                .map(|d| {
                    let lexical = fold(&d);
                    let forms = self.anchor_forms(&lexical);
                    let real = forms.last().cloned().unwrap_or_else(|| lexical.clone());
                    ResolvedPath { lexical, real }
                })
                .collect()
        })
    }
}

/// `path` relative to `dir` when it lies strictly below it. Both are folded absolute paths,
/// so comparing text is comparing components (non-UTF-8 bytes are compared as U+FFFD).
pub(super) fn below<'p>(path: &'p Path, dir: &Path) -> Option<Cow<'p, str>> {
    let dir = dir.to_string_lossy();
    let dir = dir.trim_end_matches('/');
    match path.to_string_lossy() {
        Cow::Borrowed(path) => {
            let rest = path.strip_prefix(dir)?.strip_prefix('/')?;
            (!rest.is_empty()).then_some(Cow::Borrowed(rest))
        }
        Cow::Owned(path) => {
            let rest = path.strip_prefix(dir)?.strip_prefix('/')?;
            (!rest.is_empty()).then(|| Cow::Owned(rest.to_string()))
        }
    }
}

// Its one test makes symbolic links.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn folding_and_symlinks() {
        assert_eq!(fold(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("inside")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("inside/link")).unwrap();
        let resolved = ResolvedPath::resolve("inside/link/secret", &root, None).unwrap();
        assert_eq!(resolved.lexical, root.join("inside/link/secret"));
        assert_eq!(
            resolved.real,
            outside.path().canonicalize().unwrap().join("secret")
        );
        let dirs = [ResolvedPath::of(&root)];
        assert!(!inside_any(&resolved, &dirs));
        let plain = ResolvedPath::resolve("inside/../inside/x", &root, None).unwrap();
        assert!(inside_any(&plain, &dirs));
        assert_eq!(ResolvedPath::resolve("~other/x", &root, None), None);
    }
}
