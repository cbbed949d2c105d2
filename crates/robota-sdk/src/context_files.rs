//! Context files (DESIGN §9): `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md` and
//! `.claude/CLAUDE.md` from the filesystem root down to the working directory (closer
//! files later), plus the user's `~/.claude/CLAUDE.md` and `$ROBOTA_HOME/AGENTS.md`, with
//! `@path` imports expanded (at most four hops deep, never inside code). Also their
//! "Compact Instructions" sections, which steer every compaction summary.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use robota_core::permission::PathDenial;

/// Import depth limit, as in Claude Code.
pub(crate) const MAX_IMPORT_DEPTH: usize = 4;
/// A context file larger than this is cut (and says so).
const MAX_FILE_BYTES: usize = 256 * 1024;
/// Punctuation that ends an `@path` import rather than belonging to it.
const TRAILING_PUNCTUATION: &[char] = &[',', ';', ':', '.', '!', '?', ')', ']', '}', '"', '\''];

/// One loaded file with its imports expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

const PROJECT_NAMES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
];

/// Loads every context file that applies to `cwd`, user files first. Files a Read deny
/// rule protects (`denial`) are neither loaded nor imported.
pub fn load(
    cwd: &Path,
    home: Option<&Path>,
    robota_home: &Path,
    denial: Option<&PathDenial>,
) -> Vec<ContextFile> {
    let mut candidates = Vec::new();
    if let Some(home) = home {
        candidates.push(home.join(".claude/CLAUDE.md"));
    }
    candidates.push(robota_home.join("AGENTS.md"));
    candidates.extend(project_candidates(cwd));
    Loader::new(home, denial).read_candidates(candidates)
}

/// Loads the project's context files only (from the filesystem root down to `cwd`), as a
/// session built by an embedding program reads them: nothing under the user's home.
pub(crate) fn load_project(cwd: &Path, denial: Option<&PathDenial>) -> Vec<ContextFile> {
    Loader::new(None, denial).read_candidates(project_candidates(cwd))
}

/// The project file names in every directory from the root down to `cwd`.
fn project_candidates(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    dirs.into_iter()
        .flat_map(|dir| PROJECT_NAMES.iter().map(move |name| dir.join(name)))
        .collect()
}

/// One load: where `~` is, what deny rules protect, and every file read so far.
struct Loader<'a> {
    home: Option<&'a Path>,
    denial: Option<&'a PathDenial>,
    /// Every file read so far, loaded or imported: each goes into the prompt once (a
    /// CLAUDE.md that imports `@AGENTS.md` beside a loaded AGENTS.md does not repeat it).
    included: HashSet<PathBuf>,
}

impl<'a> Loader<'a> {
    fn new(home: Option<&'a Path>, denial: Option<&'a PathDenial>) -> Self {
        Loader {
            home,
            denial,
            included: HashSet::new(),
        }
    }

    /// Whether `path` is an existing file no deny rule protects.
    fn readable(&self, path: &Path) -> bool {
        path.is_file() && self.denial.is_none_or(|d| !d.denies(path))
    }

    /// Reads the candidates that exist (each file once), imports expanded.
    fn read_candidates(mut self, candidates: Vec<PathBuf>) -> Vec<ContextFile> {
        let mut files = Vec::new();
        for path in candidates {
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if !self.readable(&path) || self.included.contains(&key) {
                continue;
            }
            if let Some(content) = self.read_with_imports(&path, 0)
                && !content.trim().is_empty()
            {
                files.push(ContextFile { path, content });
            }
        }
        files
    }

    /// Reads a file and replaces `@path` imports outside code with the imported text; a
    /// file already included (loaded, imported, or being read: a cycle) is not read again.
    fn read_with_imports(&mut self, path: &Path, depth: usize) -> Option<String> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.included.insert(key) {
            return None;
        }
        let text = read_capped(path)?;
        let base = path.parent().unwrap_or(Path::new("/"));
        let mut out = String::with_capacity(text.len());
        let mut in_fence = false;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            if in_fence || depth >= MAX_IMPORT_DEPTH || !line.contains('@') {
                out.push_str(line);
                continue;
            }
            out.push_str(&self.expand_line(line, base, depth));
        }
        Some(out)
    }

    /// `@path` imports as Claude Code reads them: `@` at the start of the line or after
    /// whitespace, the path running to the next whitespace, trailing punctuation not part
    /// of it (`@a.md, @b.md` imports both; the comma stays). A protected file stays text.
    fn expand_line(&mut self, line: &str, base: &Path, depth: usize) -> String {
        let mut out = String::new();
        let mut in_code = false;
        let mut rest = line;
        while let Some(pos) = rest.find(['@', '`']) {
            let (before, from) = rest.split_at(pos);
            out.push_str(before);
            if let Some(after) = from.strip_prefix('`') {
                in_code = !in_code;
                out.push('`');
                rest = after;
                continue;
            }
            let token_end = from[1..]
                .find(char::is_whitespace)
                .map_or(from.len(), |i| i + 1);
            let token = &from[1..token_end];
            let after_space = out.chars().last().is_none_or(char::is_whitespace);
            let imported = (!in_code && after_space)
                .then(|| self.import(token, base, depth))
                .flatten();
            match imported {
                Some((imported, named)) => {
                    out.push_str(imported.trim_end());
                    out.push_str(&token[named..]);
                }
                None => out.push_str(&from[..token_end]),
            }
            rest = &from[token_end..];
        }
        out.push_str(rest);
        out
    }
}

impl Loader<'_> {
    /// The text `@token` imports and how much of the token named the file: all of it, or
    /// all but its trailing punctuation (a file named `a.md,` is taken first if it exists).
    fn import(&mut self, token: &str, base: &Path, depth: usize) -> Option<(String, usize)> {
        let bare = token.trim_end_matches(TRAILING_PUNCTUATION);
        let names = if bare.len() < token.len() {
            vec![token, bare]
        } else {
            vec![token]
        };
        names
            .into_iter()
            .filter(|name| looks_like_path(name))
            .find_map(|name| {
                let path = resolve(name, base, self.home).filter(|p| self.readable(p))?;
                let text = self.read_with_imports(&path, depth + 1)?;
                Some((text, name.len()))
            })
    }
}

/// The bodies of every section headed "Compact Instructions" (any heading level, any case)
/// in `files`, in order: each runs to the next heading of the same or a higher level.
/// `None` when no file has one.
pub(crate) fn compact_instructions(files: &[ContextFile]) -> Option<String> {
    let mut sections = Vec::new();
    for file in files {
        let mut open: Option<(usize, String)> = None;
        let mut in_fence = false;
        for line in file.content.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            let level = heading_level(trimmed).filter(|_| !in_fence);
            if let (Some(level), Some((open_level, _))) = (level, &open)
                && level <= *open_level
                && let Some((_, body)) = open.take()
            {
                sections.push(body);
            }
            match (level, &mut open) {
                (Some(level), None) if trimmed.to_lowercase().contains("compact instructions") => {
                    open = Some((level, String::new()));
                }
                (_, Some((_, body))) => {
                    body.push_str(line);
                    body.push('\n');
                }
                _ => {}
            }
        }
        sections.extend(open.map(|(_, body)| body));
    }
    let sections: Vec<&str> = sections
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    (!sections.is_empty()).then(|| sections.join("\n\n"))
}

/// `## Title` → 2; not a heading → `None`.
fn heading_level(line: &str) -> Option<usize> {
    let level = line.chars().take_while(|c| *c == '#').count();
    ((1..=6).contains(&level) && line[level..].starts_with(' ')).then_some(level)
}

fn read_capped(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_FILE_BYTES)]).into_owned();
    if bytes.len() > MAX_FILE_BYTES {
        text.push_str("\n[… file cut at 256 KiB …]\n");
    }
    Some(text)
}

fn looks_like_path(token: &str) -> bool {
    !token.is_empty()
        && (token.contains('/') || token.contains('.'))
        && !token.contains('@')
        && !token.ends_with('.')
}

fn resolve(token: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = token.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(token);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_load_root_to_cwd_with_imports_outside_code() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/rules.md"), "RULES @nested.md").unwrap();
        std::fs::write(root.join("docs/nested.md"), "NESTED").unwrap();
        std::fs::write(
            root.join("AGENTS.md"),
            "top\nsee @docs/rules.md\n`@docs/rules.md` stays\n```\n@docs/rules.md\n```\nmail me@docs.md\n",
        )
        .unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "inner").unwrap();
        let home = tempfile::tempdir().unwrap();
        let files = load(&sub, Some(home.path()), &home.path().join(".robota"), None);
        let paths: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(paths, vec![root.join("AGENTS.md"), sub.join("CLAUDE.md")]);
        let top = &files[0].content;
        assert!(top.contains("see RULES NESTED\n"), "{top}");
        assert!(top.contains("`@docs/rules.md` stays"));
        assert!(top.contains("```\n@docs/rules.md\n```"));
        assert!(top.contains("me@docs.md"));
    }

    #[test]
    fn compact_instructions_sections_are_found_in_every_file() {
        let file = |content: &str| ContextFile {
            path: PathBuf::from("CLAUDE.md"),
            content: content.to_string(),
        };
        let files = [
            file(
                "# Project\nrules\n## Compact Instructions\nKeep the API names.\n```\n# not a heading\n```\n### detail\nsub\n## Next\nother\n",
            ),
            file("# compact instructions\nMention the tests.\n"),
            file("# Nothing here\n"),
        ];
        assert_eq!(
            compact_instructions(&files).unwrap(),
            "Keep the API names.\n```\n# not a heading\n```\n### detail\nsub\n\nMention the tests."
        );
        assert_eq!(compact_instructions(&files[2..]), None);
    }

    #[test]
    fn a_file_is_included_once_and_trailing_punctuation_is_not_part_of_an_import() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("AGENTS.md"), "SHARED RULES").unwrap();
        std::fs::write(root.join("notes.md"), "NOTES").unwrap();
        std::fs::write(root.join("style.md"), "STYLE").unwrap();
        std::fs::write(
            root.join("CLAUDE.md"),
            "@AGENTS.md\nsee @notes.md, then @style.md\n(@style.md)\n",
        )
        .unwrap();
        let files = load(root, None, &root.join("nohome"), None);
        let all: String = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(all.matches("SHARED RULES").count(), 1, "{all}");
        assert_eq!(
            files[1].content,
            "@AGENTS.md\nsee NOTES, then STYLE\n(@style.md)\n"
        );
        // Imported by an earlier file, a context file is not loaded again on its own.
        std::fs::write(root.join("AGENTS.md"), "see @CLAUDE.local.md").unwrap();
        std::fs::write(root.join("CLAUDE.local.md"), "LOCAL").unwrap();
        let files = load(root, None, &root.join("nohome"), None);
        let all: String = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(all.matches("LOCAL").count(), 1, "{all}");
    }

    #[test]
    fn import_cycles_and_depth_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("CLAUDE.md"), "A @b.md").unwrap();
        std::fs::write(root.join("b.md"), "B @CLAUDE.md @c.md").unwrap();
        std::fs::write(root.join("c.md"), "C @d.md").unwrap();
        std::fs::write(root.join("d.md"), "D @e.md").unwrap();
        std::fs::write(root.join("e.md"), "E @f.md").unwrap();
        std::fs::write(root.join("f.md"), "F").unwrap();
        let files = load(root, None, &root.join("nohome"), None);
        assert_eq!(files[0].content, "A B @CLAUDE.md C D E @f.md");
    }

    #[cfg(unix)]
    #[test]
    fn files_a_read_deny_rule_protects_are_neither_imported_nor_loaded() {
        use robota_core::permission::{PermissionMode, PermissionPolicy, PermissionRule};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(root.join("secrets/key"), "SECRET-IN-PROJECT").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "SECRET-SSH-KEY").unwrap();
        std::fs::write(root.join("notes.md"), "NOTES").unwrap();
        std::fs::write(root.join("CLAUDE.local.md"), "SECRET-LOCAL").unwrap();
        std::os::unix::fs::symlink(root.join("secrets/key"), root.join("alias.md")).unwrap();
        std::fs::write(
            root.join("CLAUDE.md"),
            "@secrets/key\n@~/.ssh/id_rsa\n@./secrets/../secrets/key\n@alias.md\n@notes.md\n",
        )
        .unwrap();
        let policy = PermissionPolicy {
            deny: PermissionRule::parse_list(
                "Read(./secrets/**),Read(~/.ssh/**),Read(./CLAUDE.local.md)",
            ),
            home: Some(home.clone()),
            ..PermissionPolicy::new(PermissionMode::BypassPermissions)
        };
        let denial = policy.read_denial(&root);
        let files = load(&root, Some(&home), &dir.path().join("rh"), denial.as_ref());
        let all: String = files.iter().map(|f| f.content.clone()).collect();
        assert!(all.contains("NOTES"), "{all}");
        for secret in ["SECRET-IN-PROJECT", "SECRET-SSH-KEY", "SECRET-LOCAL"] {
            assert!(!all.contains(secret), "{secret} leaked: {all}");
        }
        assert!(all.contains("@secrets/key"), "the import stays text: {all}");
        // Without the rules, the same files do come in (the test can fail).
        let open = load(&root, Some(&home), &dir.path().join("rh"), None);
        let all: String = open.iter().map(|f| f.content.clone()).collect();
        assert!(all.contains("SECRET-SSH-KEY") && all.contains("SECRET-LOCAL"));
    }
}
