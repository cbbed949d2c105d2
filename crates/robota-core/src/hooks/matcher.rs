//! Hook matchers as Claude Code reads them (claude-code.md §3.2): `*`, empty or missing
//! match everything; a matcher made only of letters, digits, `_`, `-`, spaces, `,` and `|`
//! is an exact name or a list of names; anything else is an unanchored regular expression
//! (`Edit.*` also matches `NotebookEdit`). `Task` and `Agent` are one tool.

use regex::Regex;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Matches everything (`*`, empty or missing).
    All,
    /// Matches exactly these names.
    Names(Vec<String>),
    /// Matches queries the regular expression finds a match in (unanchored).
    Pattern(Regex),
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Matcher::All, Matcher::All) => true,
            (Matcher::Names(a), Matcher::Names(b)) => a == b,
            (Matcher::Pattern(a), Matcher::Pattern(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

fn is_list_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|')
}

/// A matcher that is neither a name list nor a valid regular expression.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid matcher regex {text:?}: {source}")]
pub struct MatcherError {
    /// The matcher as written (trimmed).
    pub text: String,
    /// The regular expression's error.
    #[source]
    pub source: regex::Error,
}

impl Matcher {
    /// Compiles a matcher; `Err` carries the regex error for a warning.
    pub fn parse(text: Option<&str>) -> Result<Matcher, MatcherError> {
        let text = text.map(str::trim).unwrap_or("");
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text.chars().all(is_list_char) {
            let names: Vec<String> = text
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            return Ok(if names.is_empty() {
                Matcher::All
            } else {
                Matcher::Names(names)
            });
        }
        Regex::new(text)
            .map(Matcher::Pattern)
            .map_err(|source| MatcherError {
                text: text.to_string(),
                source,
            })
    }

    /// Whether the matcher selects `query` (a tool name, a source, a reason…).
    pub fn matches(&self, query: &str) -> bool {
        let alias = match query {
            "Agent" => Some("Task"),
            "Task" => Some("Agent"),
            _ => None,
        };
        let one = |q: &str| match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == q),
            Matcher::Pattern(re) => re.is_match(q),
        };
        one(query) || alias.is_some_and(one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> Matcher {
        Matcher::parse(Some(text)).unwrap()
    }

    #[test]
    fn star_empty_and_missing_match_everything() {
        for matcher in [m("*"), m(""), m("  "), Matcher::parse(None).unwrap()] {
            assert_eq!(matcher, Matcher::All);
            assert!(matcher.matches("Bash"));
            assert!(matcher.matches("startup"));
        }
    }

    #[test]
    fn plain_names_and_lists_match_exactly() {
        let one = m("Bash");
        assert!(one.matches("Bash"));
        assert!(!one.matches("BashOutput"));
        assert!(!one.matches("bash"), "case-sensitive");
        let list = m("Edit|Write|MultiEdit");
        assert!(list.matches("Edit") && list.matches("Write"));
        assert!(!list.matches("NotebookEdit"));
        assert!(!list.matches("MultiEditX"));
        let commas = m("Edit, Write");
        assert!(commas.matches("Write"));
        // An exact-set name that no tool carries matches nothing.
        assert!(!m("mcp__memory").matches("mcp__memory__create"));
    }

    #[test]
    fn other_characters_make_an_unanchored_regex() {
        let re = m("Edit.*");
        assert!(re.matches("Edit") && re.matches("NotebookEdit"));
        let anchored = m("^Edit$");
        assert!(!anchored.matches("NotebookEdit"));
        assert!(m("mcp__memory__.*").matches("mcp__memory__create_entities"));
        assert!(m("my-plugin:reviewer").matches("my-plugin:reviewer"));
        assert!(Matcher::parse(Some("Bash(")).is_err());
    }

    #[test]
    fn task_and_agent_are_one_tool() {
        assert!(m("Task").matches("Agent"));
        assert!(m("Agent").matches("Task"));
        assert!(m("^Task$").matches("Agent"));
        assert!(!m("Bash").matches("Agent"));
    }
}
