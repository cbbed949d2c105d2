//! Gitignore-style path rules: `//abs`, `~/x`, `/x` (relative to the settings file's
//! project), `x` or `./x` (relative to the working directory), bare names at any depth, a
//! directory pattern covering everything below it; matched against resolved paths (deny
//! and ask if either the named or the real form matches, allow only if both do) or against
//! paths known only in part.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use globset::{GlobBuilder, GlobMatcher};

use super::paths::{PathContext, ResolvedPath, below};
use super::pattern::{Tok, path_intersects, path_tokens};
use super::rules::RuleList;
use super::shell::Piece;

/// What a relative path pattern is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Root,
    Home,
    /// The settings file's project (the working directory when the rule has none).
    Base,
    WorkingDir,
}

/// A compiled `Read(...)` / `Edit(...)` specifier.
#[derive(Debug, Clone)]
pub struct PathPattern {
    anchor: Anchor,
    /// The pattern below its anchor, as written after normalisation.
    source: String,
    /// The any-depth form, when deny/ask rules have one.
    anywhere_source: Option<String>,
    glob: Option<GlobMatcher>,
    /// The pattern's leading literal text: a path not starting with it cannot match.
    literal_prefix: String,
    /// The longest literal stretch of the pattern, and of the any-depth form: a path not
    /// containing it cannot match.
    literal_core: String,
    anywhere_core: String,
    /// For deny/ask lists: the pattern matched at any depth of any absolute path (bare
    /// names and single-directory patterns such as `secrets/**`).
    anywhere: Option<GlobMatcher>,
}

impl PathPattern {
    pub fn compile(spec: &str) -> Self {
        let (anchor, pattern) = if let Some(rest) = spec.strip_prefix("//") {
            (Anchor::Root, rest)
        } else if spec == "~" {
            (Anchor::Home, "**")
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (Anchor::Base, rest)
        } else {
            (Anchor::WorkingDir, spec.strip_prefix("./").unwrap_or(spec))
        };
        let mut pattern = pattern.to_string();
        if pattern.ends_with('/') {
            pattern.push_str("**");
        }
        if pattern.is_empty() {
            pattern.push_str("**");
        }
        let relative =
            anchor == Anchor::WorkingDir && !pattern.starts_with("**") && !spec.starts_with("./");
        let bare_name = relative && !pattern.contains('/');
        let single_dir = relative && !pattern.trim_end_matches("/**").contains('/');
        let anywhere_source = if pattern.starts_with("**/") && anchor == Anchor::WorkingDir {
            Some(pattern.clone())
        } else if bare_name || single_dir {
            Some(format!("**/{pattern}"))
        } else {
            None
        };
        let pattern = if bare_name {
            format!("**/{pattern}")
        } else {
            pattern
        };
        PathPattern {
            anchor,
            glob: glob(&pattern),
            literal_prefix: pattern
                .chars()
                .take_while(|c| !matches!(c, '*' | '?' | '[' | '{' | '\\'))
                .collect(),
            anywhere: anywhere_source.as_deref().and_then(glob),
            literal_core: longest_literal(&pattern),
            anywhere_core: anywhere_source
                .as_deref()
                .map(longest_literal)
                .unwrap_or_default(),
            anywhere_source,
            source: pattern,
        }
    }

    /// Deny and ask rules match if either form of the path matches; allow rules need both.
    pub(super) fn matches(
        &self,
        path: &ResolvedPath,
        ctx: &PathContext<'_>,
        base: Option<&Path>,
        list: RuleList,
    ) -> bool {
        let hit = |form: &Path| self.matches_form(form, ctx, base, list);
        match list {
            RuleList::Allow => path.forms().iter().all(|f| hit(f)),
            RuleList::Ask | RuleList::Deny => path.forms().iter().any(|f| hit(f)),
        }
    }

    /// Whether some value of a path known only in part (absolute; see
    /// [`Piece::Glob`]) could match.
    pub(super) fn possibly(
        &self,
        text: &[Piece],
        ctx: &PathContext<'_>,
        base: Option<&Path>,
        list: RuleList,
    ) -> bool {
        let mut alternatives: Vec<Vec<Tok>> = Vec::new();
        if list != RuleList::Allow
            && let Some(anywhere) = &self.anywhere_source
        {
            let mut tokens = vec![Tok::Star, Tok::Lit('/')];
            tokens.extend(path_tokens(anywhere));
            alternatives.push(tokens);
        }
        let anchors: Rc<[PathBuf]> = match self.anchor {
            Anchor::Root => Rc::from(vec![PathBuf::from("/")]),
            Anchor::Home => match ctx.home {
                Some(home) => ctx.anchor_forms(home),
                None => return list != RuleList::Allow,
            },
            Anchor::Base => ctx.anchor_forms(base.unwrap_or(ctx.cwd)),
            Anchor::WorkingDir => ctx.anchor_forms(ctx.cwd),
        };
        for anchor in anchors.iter() {
            let escaped = globset::escape(&anchor.to_string_lossy());
            let joined = format!("{}/{}", escaped.trim_end_matches('/'), self.source);
            alternatives.push(path_tokens(&joined));
        }
        alternatives.iter().any(|tokens| {
            let mut below = tokens.clone();
            below.extend([Tok::Lit('/'), Tok::Star]);
            path_intersects(tokens, text) || path_intersects(&below, text)
        })
    }

    fn matches_form(
        &self,
        form: &Path,
        ctx: &PathContext<'_>,
        base: Option<&Path>,
        list: RuleList,
    ) -> bool {
        if list != RuleList::Allow
            && let Some(anywhere) = &self.anywhere
            && let Some(rel) = below(form, Path::new("/"))
            && contains_literal(&rel, &self.anywhere_core)
            && matches_with_ancestors(anywhere, &rel)
        {
            return true;
        }
        let Some(glob) = &self.glob else {
            return false;
        };
        let anchor = match self.anchor {
            Anchor::Root => {
                return below(form, Path::new("/"))
                    .is_some_and(|rel| self.glob_matches(glob, &rel));
            }
            Anchor::Home => match ctx.home {
                Some(home) => home,
                // No home: a deny/ask rule on it is assumed to match.
                None => return list != RuleList::Allow,
            },
            Anchor::Base => base.unwrap_or(ctx.cwd),
            Anchor::WorkingDir => ctx.cwd,
        };
        let forms = ctx.anchor_forms(anchor);
        forms
            .iter()
            .any(|a| below(form, a).is_some_and(|rel| self.glob_matches(glob, &rel)))
    }

    fn glob_matches(&self, glob: &GlobMatcher, rel: &str) -> bool {
        let prefix_ok = if cfg!(any(target_os = "macos", target_os = "windows")) {
            rel.get(..self.literal_prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(&self.literal_prefix))
        } else {
            rel.starts_with(&self.literal_prefix)
        };
        prefix_ok && contains_literal(rel, &self.literal_core) && matches_with_ancestors(glob, rel)
    }
}

/// The longest stretch of `pattern` every match must contain literally: glob syntax
/// (`*`, `?`, `[…]`, `{…}`) ends a stretch; `\x` is the literal `x`.
fn longest_literal(pattern: &str) -> String {
    let mut best = String::new();
    let mut run = String::new();
    let mut chars = pattern.chars();
    let end_run = |run: &mut String, best: &mut String| {
        if run.len() > best.len() {
            *best = std::mem::take(run);
        }
        run.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => run.push(next),
                None => end_run(&mut run, &mut best),
            },
            '*' | '?' => end_run(&mut run, &mut best),
            '[' | '{' => {
                end_run(&mut run, &mut best);
                let close = if c == '[' { ']' } else { '}' };
                for inner in chars.by_ref() {
                    if inner == close {
                        break;
                    }
                }
            }
            _ => run.push(c),
        }
    }
    end_run(&mut run, &mut best);
    best
}

/// Whether `text` contains `literal` (ignoring ASCII case where file names do).
fn contains_literal(text: &str, literal: &str) -> bool {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        text.to_ascii_lowercase()
            .contains(&literal.to_ascii_lowercase())
    } else {
        text.contains(literal)
    }
}

/// A path matches a pattern if it or a directory above it does (gitignore semantics).
fn matches_with_ancestors(glob: &GlobMatcher, rel: &str) -> bool {
    let mut end = rel.len();
    loop {
        let part = &rel[..end];
        if !part.is_empty() && glob.is_match(part) {
            return true;
        }
        match part.rfind('/') {
            Some(slash) => end = slash,
            None => return false,
        }
    }
}

fn glob(pattern: &str) -> Option<GlobMatcher> {
    let build = |p: &str| {
        GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(cfg!(any(target_os = "macos", target_os = "windows")))
            .build()
            .map(|g| g.compile_matcher())
    };
    // A malformed glob (an unclosed `[`) is taken literally.
    build(pattern)
        .or_else(|_| build(&globset::escape(pattern)))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> ResolvedPath {
        ResolvedPath {
            lexical: PathBuf::from(p),
            real: PathBuf::from(p),
        }
    }

    fn hits(spec: &str, p: &str, list: RuleList) -> bool {
        let ctx = PathContext::new(Path::new("/repo"), Some(Path::new("/home/u")), &[]);
        PathPattern::compile(spec).matches(&path(p), &ctx, None, list)
    }

    #[test]
    fn literal_stretches() {
        assert_eq!(longest_literal("**/src/mod1/**"), "/src/mod1/");
        assert_eq!(longest_literal("x[abc]yyy"), "yyy");
        assert_eq!(longest_literal("a{bb,cc}d"), "a");
        assert_eq!(longest_literal("\\*star"), "*star");
        assert!(hits("x[abc]y", "/repo/xay", RuleList::Deny));
        assert!(hits("{a,b}.txt", "/repo/b.txt", RuleList::Deny));
    }

    #[test]
    fn anchors() {
        assert!(hits("src/**", "/repo/src/a/b.rs", RuleList::Allow));
        assert!(!hits("src/**", "/other/src/a.rs", RuleList::Allow));
        assert!(hits("src/**", "/other/src/a.rs", RuleList::Deny));
        assert!(hits("//etc/**", "/etc/passwd", RuleList::Deny));
        assert!(hits("~/.ssh/**", "/home/u/.ssh/id_rsa", RuleList::Deny));
        assert!(hits("/docs/*.md", "/repo/docs/a.md", RuleList::Allow));
        assert!(!hits("/docs/*.md", "/repo/docs/x/a.md", RuleList::Allow));
        assert!(hits("./Cargo.toml", "/repo/Cargo.toml", RuleList::Allow));
    }

    #[test]
    fn bare_names_match_at_any_depth_and_directories_cover_their_contents() {
        assert!(hits(".env", "/repo/.env", RuleList::Deny));
        assert!(hits(".env", "/repo/a/b/.env", RuleList::Allow));
        assert!(hits(".env", "/elsewhere/.env", RuleList::Deny));
        assert!(!hits(".env", "/elsewhere/.env", RuleList::Allow));
        assert!(hits("secrets", "/repo/secrets/key.pem", RuleList::Deny));
        assert!(hits("secrets/", "/repo/secrets/key.pem", RuleList::Deny));
        assert!(!hits(".env", "/repo/.envrc", RuleList::Deny));
    }
}
