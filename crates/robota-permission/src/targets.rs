//! The file a call touches, as far as it is known: a resolved path; a path known up to a
//! directory with globs below it (`src/*.rs`); or unknown (`$f`, `$(pwd)/x`). Path rules
//! match it surely or possibly, and it is inside the working directories only when that
//! can be shown.

use std::path::{Path, PathBuf};

use super::paths::{PathContext, ResolvedPath, inside_any};
use super::rules::{Compiled, PermissionRule, RuleList};
use super::shell::{Piece, Word};

/// A file a call reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FileTarget {
    Known(ResolvedPath),
    /// Below `dir` (resolved); `texts` are the possible absolute paths (named and real
    /// forms) with run-time parts; `contained` when those parts cannot leave `dir`.
    Partial {
        dir: ResolvedPath,
        texts: Vec<Vec<Piece>>,
        contained: bool,
    },
    Unknown,
}

/// How sure a rule match is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Certainty {
    Sure,
    Possible,
}

/// Files every command may use without a rule saying so.
fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "-"
    ) || path.starts_with("/dev/fd/")
}

impl FileTarget {
    /// What `word` names, relative to `cwd` (None: the directory is not known any more,
    /// e.g. after `cd "$x"`). None when the word names a harmless device.
    pub fn of_word(word: &Word, cwd: Option<&Path>, ctx: &PathContext<'_>) -> Option<Self> {
        if let Some(text) = word.as_literal() {
            if is_harmless_device(&text) {
                return None;
            }
            let absolute = text.starts_with('/') || text.starts_with('~');
            return Some(match (absolute, cwd) {
                (false, None) => FileTarget::Unknown,
                (_, cwd) => ctx
                    .resolve_str(&text, cwd.unwrap_or(Path::new("/")))
                    .map_or(FileTarget::Unknown, FileTarget::Known),
            });
        }
        // A process substitution's pipe (`/dev/fd/N`).
        if let Some(rest) = word
            .pieces
            .strip_prefix(&Word::literal("/dev/fd/").pieces[..])
            && !rest.contains(&Piece::Lit('/'))
            && !rest.contains(&Piece::Any)
        {
            return None;
        }
        Some(Self::partial(&word.pieces, cwd, ctx))
    }

    fn partial(pieces: &[Piece], cwd: Option<&Path>, ctx: &PathContext<'_>) -> Self {
        let home = ctx.home;
        let first_dynamic = pieces
            .iter()
            .position(|p| !p.is_literal())
            .unwrap_or(pieces.len());
        let prefix: String = pieces[..first_dynamic]
            .iter()
            .filter_map(|p| match p {
                Piece::Lit(c) => Some(*c),
                _ => None,
            })
            .collect();
        if pieces.first() == Some(&Piece::Any) {
            return FileTarget::Unknown;
        }
        let cut = prefix.rfind('/').map_or(0, |i| i + 1);
        let dir_text = &prefix[..cut];
        let base = if dir_text.starts_with('/') {
            PathBuf::from(dir_text)
        } else if dir_text == "~/" || dir_text.starts_with("~/") {
            match home {
                Some(h) => h.join(&dir_text[2..]),
                None => return FileTarget::Unknown,
            }
        } else if dir_text.starts_with('~') || prefix.starts_with('~') {
            return FileTarget::Unknown;
        } else {
            match cwd {
                Some(c) => c.join(dir_text),
                None => return FileTarget::Unknown,
            }
        };
        let dir = ctx.resolve(&base);
        let rest: Vec<Piece> = prefix[cut..]
            .chars()
            .map(Piece::Lit)
            .chain(pieces[first_dynamic..].iter().copied())
            .collect();
        let rest_text: String = rest
            .iter()
            .map(|p| match p {
                Piece::Lit(c) => *c,
                _ => '*',
            })
            .collect();
        let contained =
            !rest.contains(&Piece::Any) && !rest_text.split('/').any(|part| part == "..");
        let texts = [&dir.lexical, &dir.real]
            .iter()
            .map(|d| {
                let mut text: Vec<Piece> = d
                    .to_string_lossy()
                    .trim_end_matches('/')
                    .chars()
                    .map(Piece::Lit)
                    .collect();
                text.push(Piece::Lit('/'));
                text.extend(rest.iter().copied());
                text
            })
            .collect();
        FileTarget::Partial {
            dir,
            texts,
            contained,
        }
    }

    /// Whether the file surely lies inside one of `dirs`.
    pub fn inside(&self, dirs: &[ResolvedPath]) -> bool {
        match self {
            FileTarget::Known(path) => inside_any(path, dirs),
            FileTarget::Partial { dir, contained, .. } => *contained && inside_any(dir, dirs),
            FileTarget::Unknown => false,
        }
    }

    /// How a path rule matches this file, if it may.
    pub fn rule_match(
        &self,
        rule: &PermissionRule,
        ctx: &PathContext<'_>,
        list: RuleList,
    ) -> Option<Certainty> {
        let Compiled::Path(_, pattern) = rule.compiled() else {
            return None;
        };
        let base = rule.base.as_deref();
        match self {
            FileTarget::Known(path) => pattern
                .matches(path, ctx, base, list)
                .then_some(Certainty::Sure),
            FileTarget::Partial {
                dir,
                texts,
                contained,
            } => {
                // Everything below `dir` matches when an arbitrary name there does.
                let probe = ResolvedPath {
                    lexical: dir.lexical.join("\u{1}"),
                    real: dir.real.join("\u{1}"),
                };
                if *contained && pattern.matches(&probe, ctx, base, list) {
                    Some(Certainty::Sure)
                } else if list != RuleList::Allow
                    && texts.iter().any(|t| pattern.possibly(t, ctx, base, list))
                {
                    Some(Certainty::Possible)
                } else {
                    None
                }
            }
            FileTarget::Unknown => (list != RuleList::Allow).then_some(Certainty::Possible),
        }
    }

    /// A short description for messages.
    pub fn describe(&self) -> String {
        match self {
            FileTarget::Known(path) => path.lexical.display().to_string(),
            FileTarget::Partial { texts, .. } => texts
                .first()
                .map(|t| Word { pieces: t.clone() }.display())
                .unwrap_or_default(),
            FileTarget::Unknown => "a path computed at run time".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn target(text: &str) -> Option<FileTarget> {
        let word = parse(&format!("cat {text}"))
            .commands
            .remove(0)
            .words
            .remove(1);
        let ctx = PathContext::new(
            Path::new("/nonexistent-repo"),
            Some(Path::new("/home/u")),
            &[],
        );
        FileTarget::of_word(&word, Some(Path::new("/nonexistent-repo")), &ctx)
    }

    #[test]
    fn words_become_targets() {
        let dirs = [ResolvedPath::of(Path::new("/nonexistent-repo"))];
        assert_eq!(target("/dev/null"), None);
        assert!(target("src/a.rs").unwrap().inside(&dirs));
        assert!(!target("../x").unwrap().inside(&dirs));
        assert!(target("src/*.rs").unwrap().inside(&dirs));
        assert!(!target("src/*/../../x").unwrap().inside(&dirs));
        assert!(!target("$HOME/x").unwrap().inside(&dirs));
        assert!(!target("src/$f").unwrap().inside(&dirs));
        assert_eq!(target("$f"), Some(FileTarget::Unknown));
        assert!(
            matches!(target("~/x"), Some(FileTarget::Known(p)) if p.lexical == Path::new("/home/u/x"))
        );
    }

    #[test]
    fn partial_targets_match_rules_surely_or_possibly() {
        let ctx = PathContext::new(
            Path::new("/nonexistent-repo"),
            Some(Path::new("/home/u")),
            &[],
        );
        let rule = |r: &str| PermissionRule::parse(r).unwrap();
        let m = |r: &str, t: &str| {
            target(t)
                .unwrap()
                .rule_match(&rule(r), &ctx, RuleList::Deny)
        };
        assert_eq!(m("Read(secrets/**)", "secrets/*"), Some(Certainty::Sure));
        assert_eq!(m("Read(.env)", ".e*"), Some(Certainty::Possible));
        assert_eq!(m("Read(.env)", "src/*.rs"), None);
        assert_eq!(m("Read(.env)", "$f"), Some(Certainty::Possible));
        assert_eq!(m("Read(~/.ssh/**)", "~/.ssh/id_*"), Some(Certainty::Sure));
    }
}
