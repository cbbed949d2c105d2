//! The files deny rules of one family keep from every reader (`Read(...)`) or writer
//! (`Edit(...)`), for code that reaches files without a tool call naming them: the walks
//! of Grep and Glob below the directory they were given, context-file `@imports`, and the
//! Bash sandbox's list of what to hide or keep read-only. A file is denied when a rule
//! matches it as named or as it really is (symlinks followed); a directory is denied
//! whole when a rule covers everything below it.

use std::path::{Path, PathBuf};

use super::PermissionPolicy;
use super::paths::{AnchorCache, PathContext, ResolvedPath};
use super::rules::{Compiled, PathFamily, PermissionRule, RuleList};
use super::targets::FileTarget;

/// The `Read(...)` or `Edit(...)` deny rules of a policy, with what they are anchored at.
#[derive(Debug, Clone)]
pub struct PathDenial {
    rules: Vec<PermissionRule>,
    cwd: PathBuf,
    home: Option<PathBuf>,
    additional_dirs: Vec<PathBuf>,
    anchors: AnchorCache,
}

impl PathDenial {
    /// Whether a deny rule names `path` (absolute).
    pub fn denies(&self, path: &Path) -> bool {
        self.matches(|ctx| FileTarget::Known(ctx.resolve(path)))
    }

    /// Whether a walk must leave `path` out: a denied file, or a directory that is denied
    /// or everything below which is.
    pub fn hides(&self, path: &Path, is_dir: bool) -> bool {
        self.denies(path) || (is_dir && self.denies_all_below(path))
    }

    /// [`Self::hides`] for a path that is its own real form (found by a walk from a real
    /// directory that does not follow symlinks): nothing is asked of the file system to
    /// resolve it, which is most of what `hides` costs.
    pub fn hides_real(&self, path: &Path, is_dir: bool) -> bool {
        let known = |path: PathBuf| {
            FileTarget::Known(ResolvedPath {
                lexical: path.clone(),
                real: path,
            })
        };
        self.matches(|_| known(path.to_path_buf()))
            || (is_dir && self.matches(|_| known(path.join("\u{1}"))))
    }

    /// Whether every name below `dir` is denied (an arbitrary name there is).
    fn denies_all_below(&self, dir: &Path) -> bool {
        self.matches(|ctx| {
            let dir = ctx.resolve(dir);
            FileTarget::Known(ResolvedPath {
                lexical: dir.lexical.join("\u{1}"),
                real: dir.real.join("\u{1}"),
            })
        })
    }

    fn matches(&self, target: impl FnOnce(&PathContext<'_>) -> FileTarget) -> bool {
        let ctx = PathContext::new(&self.cwd, self.home.as_deref(), &self.additional_dirs)
            .with_anchor_cache(&self.anchors);
        let target = target(&ctx);
        self.rules
            .iter()
            .any(|rule| target.rule_match(rule, &ctx, RuleList::Deny).is_some())
    }
}

impl PermissionPolicy {
    /// The read denial of this policy for a session working in `cwd`; `None` when no deny
    /// rule names files to read.
    pub fn read_denial(&self, cwd: &Path) -> Option<PathDenial> {
        self.path_denial(cwd, PathFamily::Read)
    }

    /// The deny rules of `family` for a session working in `cwd`; `None` when there are
    /// none.
    pub fn path_denial(&self, cwd: &Path, family: PathFamily) -> Option<PathDenial> {
        let rules: Vec<PermissionRule> = self
            .deny
            .iter()
            .filter(|rule| matches!(rule.compiled(), Compiled::Path(f, _) if *f == family))
            .cloned()
            .collect();
        (!rules.is_empty()).then(|| PathDenial {
            rules,
            cwd: cwd.to_path_buf(),
            home: self.home.clone(),
            additional_dirs: self.additional_dirs.clone(),
            anchors: self.anchors.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PermissionMode;

    fn denial(deny: &str, cwd: &Path) -> Option<PathDenial> {
        PermissionPolicy {
            deny: PermissionRule::parse_list(deny),
            home: Some("/home/u".into()),
            ..PermissionPolicy::new(PermissionMode::BypassPermissions)
        }
        .read_denial(cwd)
    }

    #[test]
    fn only_read_path_rules_make_a_denial() {
        let cwd = Path::new("/repo");
        assert!(denial("", cwd).is_none());
        assert!(denial("Bash(rm *),Edit(./src/**),WebFetch", cwd).is_none());
        assert!(denial("Read(./secrets/**)", cwd).is_some());
    }

    #[test]
    fn files_and_whole_directories_are_hidden() {
        let cwd = Path::new("/repo");
        let d = denial("Read(./secrets/**),Read(**/.env),Read(~/.ssh/**)", cwd).unwrap();
        assert!(d.denies(Path::new("/repo/secrets/key")));
        assert!(d.hides(Path::new("/repo/secrets"), true));
        assert!(d.denies(Path::new("/repo/a/b/.env")));
        assert!(d.denies(Path::new("/home/u/.ssh/id_rsa")));
        assert!(d.hides(Path::new("/home/u/.ssh"), true));
        assert!(!d.hides(Path::new("/repo/src"), true));
        assert!(!d.denies(Path::new("/repo/src/main.rs")));
        assert!(!d.denies(Path::new("/repo/.envrc")));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_denied_file_is_denied() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        std::fs::write(root.join("secrets/key"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("secrets/key"), root.join("innocent")).unwrap();
        std::os::unix::fs::symlink(root.join("secrets"), root.join("docs")).unwrap();
        let d = denial("Read(./secrets/**)", &root).unwrap();
        assert!(d.denies(&root.join("innocent")));
        assert!(d.denies(&root.join("docs/key")));
        assert!(d.hides(&root.join("docs"), true));
    }
}
