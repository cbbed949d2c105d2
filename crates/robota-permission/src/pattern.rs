//! Wildcard patterns (`*` = any text) matched against text that may itself hold run-time
//! parts ([`Piece::Any`]). Two questions, both exact about literals and conservative about
//! the unknown: does the pattern match *every* way the text could turn out (`surely`), and
//! could it match *some* way (`possibly`)? Deny rules deny on the first and ask on the
//! second; allow rules need the first.

use super::shell::Piece;

/// One element of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    Lit(char),
    Star,
    /// Within one path component (a glob `*`, `?` or `[…]`): never a `/`.
    Seg,
}

/// Alternatives, any of which may match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pattern {
    alternatives: Vec<Vec<Tok>>,
}

impl Pattern {
    /// A plain wildcard pattern: `*` matches any text, `\*` a star.
    pub(super) fn wildcard(text: &str) -> Self {
        Pattern {
            alternatives: vec![tokens(text)],
        }
    }

    /// A Bash rule specifier: `npm test` exact, `npm run *` or legacy `npm run:*` for the
    /// command alone or followed by arguments, `*` anywhere else for any text. Spaces are
    /// normalised. `name` rewrites the first word (e.g. to its basename, lower case).
    pub(super) fn command(spec: &str, name: impl Fn(&str) -> String) -> Self {
        let spec = spec.split_whitespace().collect::<Vec<_>>().join(" ");
        let rename = |text: &str| -> String {
            match text.split_once(' ') {
                Some((first, rest)) => format!("{} {rest}", name(first)),
                None => name(text),
            }
        };
        let prefix = spec
            .strip_suffix(":*")
            .or_else(|| spec.strip_suffix(" *"))
            .map(str::trim_end);
        let alternatives = match prefix {
            Some(base) if !base.is_empty() => {
                let base = rename(base);
                vec![tokens(&base), tokens(&format!("{base} *"))]
            }
            _ => vec![tokens(&rename(&spec))],
        };
        Pattern { alternatives }
    }

    /// Every way `text` can turn out matches (sound: never true when some way would not).
    pub(super) fn surely(&self, text: &[Piece]) -> bool {
        self.alternatives
            .iter()
            .any(|p| prefixes_agree(p, text, false) && contains(p, text))
    }

    /// Some way `text` can turn out matches (sound: never false when some way would).
    pub(super) fn possibly(&self, text: &[Piece]) -> bool {
        self.alternatives
            .iter()
            .any(|p| prefixes_agree(p, text, false) && intersects(p, text))
    }

    /// Plain-text match.
    pub(super) fn matches_str(&self, text: &str) -> bool {
        let pieces: Vec<Piece> = text.chars().map(Piece::Lit).collect();
        self.surely(&pieces)
    }

    /// Case-insensitive plain-text match (host names).
    pub(super) fn matches_str_ignore_case(&self, text: &str) -> bool {
        let pieces: Vec<Piece> = text.chars().map(Piece::Lit).collect();
        self.alternatives
            .iter()
            .any(|p| prefixes_agree(p, &pieces, true) && contains_ignore_case(p, &pieces))
    }
}

fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('*') => out.push(Tok::Lit('*')),
                Some(other) => {
                    out.push(Tok::Lit('\\'));
                    out.push(Tok::Lit(other));
                }
                None => out.push(Tok::Lit('\\')),
            },
            '*' => {
                if out.last() != Some(&Tok::Star) {
                    out.push(Tok::Star);
                }
            }
            _ => out.push(Tok::Lit(c)),
        }
    }
    out
}

/// Quick rejection: the literal starts of both sides must agree.
fn prefixes_agree(pattern: &[Tok], text: &[Piece], ignore_case: bool) -> bool {
    for (p, t) in pattern.iter().zip(text) {
        match (p, t) {
            (Tok::Lit(a), Piece::Lit(b)) => {
                let same = if ignore_case {
                    a.eq_ignore_ascii_case(b)
                } else {
                    a == b
                };
                if !same {
                    return false;
                }
            }
            _ => return true,
        }
    }
    true
}

/// Whether some string is produced by both (stars and run-time parts produce anything).
fn intersects(pattern: &[Tok], text: &[Piece]) -> bool {
    let (n, m) = (pattern.len(), text.len());
    // next[j]: pattern[i+1..] with text[j..]; row for i = n first.
    let mut next = vec![false; m + 1];
    next[m] = true;
    for j in (0..m).rev() {
        next[j] = !text[j].is_literal() && next[j + 1];
    }
    let mut cur = vec![false; m + 1];
    for i in (0..n).rev() {
        let star = pattern[i] == Tok::Star;
        cur[m] = star && next[m];
        for j in (0..m).rev() {
            let any = !text[j].is_literal();
            // A star or a run-time part may produce nothing, or absorb the other side's
            // next element.
            cur[j] = ((star || any) && (next[j] || cur[j + 1]))
                || matches!((pattern[i], text[j]), (Tok::Lit(a), Piece::Lit(b)) if a == b && next[j + 1]);
        }
        std::mem::swap(&mut next, &mut cur);
    }
    next[0]
}

/// Whether every string the text can produce is matched (each run-time part must fall
/// inside a star).
fn contains(pattern: &[Tok], text: &[Piece]) -> bool {
    contains_by(pattern, text, |a, b| a == b)
}

fn contains_ignore_case(pattern: &[Tok], text: &[Piece]) -> bool {
    contains_by(pattern, text, |a, b| a.eq_ignore_ascii_case(&b))
}

fn contains_by(pattern: &[Tok], text: &[Piece], same: impl Fn(char, char) -> bool) -> bool {
    let (n, m) = (pattern.len(), text.len());
    let mut next = vec![false; m + 1];
    next[m] = true;
    let mut cur = vec![false; m + 1];
    for i in (0..n).rev() {
        match pattern[i] {
            Tok::Star | Tok::Seg => {
                cur[m] = next[m];
                for j in (0..m).rev() {
                    cur[j] = next[j] || cur[j + 1];
                }
            }
            Tok::Lit(a) => {
                cur[m] = false;
                for j in (0..m).rev() {
                    cur[j] = matches!(text[j], Piece::Lit(b) if same(a, b)) && next[j + 1];
                }
            }
        }
        std::mem::swap(&mut next, &mut cur);
    }
    next[0]
}

/// A gitignore-style glob as tokens: `**` crosses directories, `*`, `?` and `[…]` stay
/// within one component; alternations (`{a,b}`) are widened to `**`.
pub(super) fn path_tokens(glob: &str) -> Vec<Tok> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                out.push(Tok::Lit(chars[i + 1]));
                i += 1;
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                out.push(Tok::Star);
                i += 1;
            }
            '*' | '?' => out.push(Tok::Seg),
            '[' => {
                if let Some(close) = chars[i + 1..].iter().position(|c| *c == ']') {
                    i += close + 1;
                }
                out.push(Tok::Seg);
            }
            '{' => {
                if let Some(close) = chars[i + 1..].iter().position(|c| *c == '}') {
                    i += close + 1;
                }
                out.push(Tok::Star);
            }
            c => out.push(Tok::Lit(c)),
        }
        i += 1;
    }
    out
}

/// Whether some path is both matched by `pattern` and a possible value of `text`, where
/// globs (`Seg`, [`Piece::Glob`]) never produce a `/`.
pub(super) fn path_intersects(pattern: &[Tok], text: &[Piece]) -> bool {
    let (n, m) = (pattern.len(), text.len());
    let slash = |p: Piece| p == Piece::Lit('/');
    let mut next = vec![false; m + 1];
    next[m] = true;
    for j in (0..m).rev() {
        next[j] = !text[j].is_literal() && next[j + 1];
    }
    let mut cur = vec![false; m + 1];
    for i in (0..n).rev() {
        let p = pattern[i];
        for j in (0..=m).rev() {
            let t = text.get(j).copied();
            let mut ok = match p {
                Tok::Star => next[j] || (j < m && cur[j + 1]),
                Tok::Seg => next[j] || t.is_some_and(|t| !slash(t)) && cur[j + 1],
                Tok::Lit(a) => t == Some(Piece::Lit(a)) && next[j + 1],
            };
            ok = ok
                || match t {
                    Some(Piece::Any | Piece::Descendant) => cur[j + 1] || next[j],
                    Some(Piece::Glob) => cur[j + 1] || (p != Tok::Lit('/') && next[j]),
                    _ => false,
                };
            cur[j] = ok;
        }
        std::mem::swap(&mut next, &mut cur);
    }
    next[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Vec<Piece> {
        // `#` stands for a run-time part in these tests.
        s.chars()
            .map(|c| if c == '#' { Piece::Any } else { Piece::Lit(c) })
            .collect()
    }

    fn cmd(spec: &str) -> Pattern {
        Pattern::command(spec, str::to_string)
    }

    #[test]
    fn prefix_rules_match_at_word_boundaries_in_both_spellings() {
        assert!(cmd("npm run *").surely(&text("npm run test")));
        assert!(cmd("npm run:*").surely(&text("npm run build")));
        assert!(cmd("npm run *").surely(&text("npm run")));
        assert!(!cmd("npm run *").possibly(&text("npm runner")));
        assert!(cmd("npm  test").surely(&text("npm test")));
        assert!(!cmd("npm test").possibly(&text("npm test --watch")));
        assert!(cmd("ls*").surely(&text("lsof")));
        assert!(cmd("git * main").surely(&text("git push origin main")));
        assert!(!cmd("git:* push").surely(&text("git status push")));
    }

    #[test]
    fn run_time_parts_are_judged_both_ways() {
        let rm = cmd("rm *");
        assert!(rm.surely(&text("rm #")));
        assert!(rm.possibly(&text("#")));
        assert!(!rm.surely(&text("#")));
        assert!(rm.possibly(&text("r# -rf")));
        assert!(!rm.possibly(&text("ls #")));
        let push = cmd("git push *");
        assert!(push.possibly(&text("git # origin")));
        assert!(!push.surely(&text("git # origin")));
        assert!(!push.possibly(&text("git status #")));
        assert!(cmd("ls *").surely(&text("ls #.rs")));
        assert!(!cmd("ls -la").surely(&text("ls #")));
    }

    #[test]
    fn path_globs_stay_within_components() {
        let glob = |s: &str| -> Vec<Piece> {
            s.chars()
                .map(|c| match c {
                    '%' => Piece::Glob,
                    '#' => Piece::Any,
                    c => Piece::Lit(c),
                })
                .collect()
        };
        let env = path_tokens("**/.env");
        assert!(path_intersects(&env, &glob("/repo/.e%")));
        assert!(!path_intersects(&env, &glob("/repo/%.rs")));
        assert!(path_intersects(&env, &glob("/repo/#")));
        let dir = path_tokens("/repo/secrets/**");
        assert!(path_intersects(&dir, &glob("/repo/sec%/a")));
        assert!(!path_intersects(&dir, &glob("/repo/src/%")));
        assert!(!path_intersects(
            &path_tokens("/repo/*.md"),
            &glob("/repo/x/%.md")
        ));
    }

    #[test]
    fn escaped_stars_and_case() {
        assert!(Pattern::wildcard("a\\*b").matches_str("a*b"));
        assert!(!Pattern::wildcard("a\\*b").matches_str("axb"));
        assert!(Pattern::wildcard("*.example.com").matches_str_ignore_case("API.Example.com"));
    }
}
