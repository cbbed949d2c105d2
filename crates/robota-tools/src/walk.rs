//! The parallel directory walk Glob and Grep share: `ignore`'s gitignore-aware walker on
//! all cores, one visitor per thread with its own result list (no locking per entry), the
//! lists merged when the walk ends, and the walk stopped early on cancellation; and the
//! entry filter that keeps the walk away from what deny rules protect.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ignore::{
    DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkParallel, WalkState,
};
use tokio_util::sync::CancellationToken;

use robota_core::permission::PathDenial;

/// Keeps the walk of `root` from files a deny rule protects (directories wholly denied are
/// not entered) and, when `skip_git`, from `.git`. A walker takes one entry filter, so both
/// live here.
pub fn filter_entries(
    walker: &mut WalkBuilder,
    root: &Path,
    denial: Option<Arc<PathDenial>>,
    skip_git: bool,
) {
    if denial.is_none() && !skip_git {
        return;
    }
    // The walk does not follow symlinks: below a root that is its own real form, only a
    // symlink's path needs resolving before the rules are asked.
    let real_root = std::fs::canonicalize(root).is_ok_and(|real| real == root);
    walker.filter_entry(move |entry| {
        if skip_git && entry.file_name() == ".git" {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        denial.as_ref().is_none_or(|denial| {
            let hidden = if real_root && !entry.path_is_symlink() {
                denial.hides_real(entry.path(), is_dir)
            } else {
                denial.hides(entry.path(), is_dir)
            };
            !hidden
        })
    });
}

/// What a per-thread visitor does with one file or directory entry: push results into
/// `found`, and say whether the walk goes on.
pub trait EntryVisitor<T>: Send {
    fn visit(&mut self, entry: DirEntry, found: &mut Vec<T>) -> WalkState;
}

impl<T, F> EntryVisitor<T> for F
where
    F: FnMut(DirEntry, &mut Vec<T>) -> WalkState + Send,
{
    fn visit(&mut self, entry: DirEntry, found: &mut Vec<T>) -> WalkState {
        self(entry, found)
    }
}

/// Runs `walker` with a visitor per thread made by `make_visitor` and returns everything
/// the visitors found, in no particular order. Entries the walker could not read are
/// skipped. Returns `None` when `cancel` fired during the walk.
pub fn collect_parallel<T, V, M>(
    walker: WalkParallel,
    cancel: &CancellationToken,
    make_visitor: M,
) -> Option<Vec<T>>
where
    T: Send,
    V: EntryVisitor<T>,
    M: Fn() -> V,
{
    let merged = Mutex::new(Vec::new());
    let mut builder = Builder {
        merged: &merged,
        cancel,
        make_visitor,
    };
    walker.visit(&mut builder);
    if cancel.is_cancelled() {
        return None;
    }
    Some(merged.into_inner().unwrap_or_else(|p| p.into_inner()))
}

struct Builder<'a, T, M> {
    merged: &'a Mutex<Vec<T>>,
    cancel: &'a CancellationToken,
    make_visitor: M,
}

impl<'s, T, V, M> ParallelVisitorBuilder<'s> for Builder<'s, T, M>
where
    T: Send + 's,
    V: EntryVisitor<T> + 's,
    M: Fn() -> V,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            merged: self.merged,
            cancel: self.cancel,
            visitor: (self.make_visitor)(),
            found: Vec::new(),
        })
    }
}

struct Visitor<'a, T: Send, V> {
    merged: &'a Mutex<Vec<T>>,
    cancel: &'a CancellationToken,
    visitor: V,
    found: Vec<T>,
}

impl<T: Send, V: EntryVisitor<T>> ParallelVisitor for Visitor<'_, T, V> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) => self.visitor.visit(entry, &mut self.found),
            Err(_) => WalkState::Continue,
        }
    }
}

impl<T: Send, V> Drop for Visitor<'_, T, V> {
    fn drop(&mut self) {
        if self.found.is_empty() {
            return;
        }
        let mut merged = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        merged.append(&mut self.found);
    }
}

/// Whether the entry is a regular file, or a symlink to one.
pub fn is_file(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Some(kind) if kind.is_file() => true,
        Some(kind) if kind.is_symlink() => entry.path().is_file(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ignore::WalkBuilder;

    #[test]
    fn collects_from_every_thread_and_respects_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "ignored/\n").unwrap();
        for sub in ["a", "b", "ignored"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            for i in 0..20 {
                std::fs::write(dir.path().join(sub).join(format!("{i}.txt")), "").unwrap();
            }
        }
        let walker = WalkBuilder::new(dir.path()).threads(4).build_parallel();
        let cancel = CancellationToken::new();
        let found = collect_parallel(walker, &cancel, || {
            |entry: DirEntry, found: &mut Vec<String>| {
                if is_file(&entry) {
                    found.push(entry.path().display().to_string());
                }
                WalkState::Continue
            }
        })
        .unwrap();
        assert_eq!(found.len(), 40);
        assert!(found.iter().all(|p| !p.contains("ignored")));
    }

    #[test]
    fn a_cancelled_walk_returns_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let walker = WalkBuilder::new(dir.path()).build_parallel();
        let found: Option<Vec<()>> = collect_parallel(walker, &cancel, || {
            |_: DirEntry, _: &mut Vec<()>| WalkState::Continue
        });
        assert!(found.is_none());
    }
}
