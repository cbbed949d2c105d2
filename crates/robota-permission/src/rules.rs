//! Permission rules: `Tool` or `Tool(specifier)` as Claude Code writes them, parsed
//! paren-aware from settings and flags, with the directory of the settings file they came
//! from. Which calls a rule's tool name covers (aliases, `mcp__server`, tool-name globs),
//! and the specifier compiled once into the matcher its tool needs.

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::path_rules::PathPattern;
use super::pattern::Pattern;

/// Which list a rule sits in; some forms are read differently per list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleList {
    /// `permissions.allow`, `--allowedTools`.
    Allow,
    /// `permissions.ask`.
    Ask,
    /// `permissions.deny`, `--disallowedTools`.
    Deny,
}

/// One rule: a tool name (or a glob of names) with an optional specifier.
#[derive(Debug, Clone)]
pub struct PermissionRule {
    /// The tool name or glob of names (`Bash`, `mcp__github__*`).
    pub tool: String,
    /// What of the call the rule names: `npm test:*`, `src/**`, `domain:example.com`.
    pub specifier: Option<String>,
    /// The project directory of the settings file holding the rule: `/path` patterns are
    /// relative to it. `None` (flags, the session) means the session's working directory.
    pub base: Option<PathBuf>,
    compiled: OnceLock<Compiled>,
    tool_glob: OnceLock<Pattern>,
}

impl PartialEq for PermissionRule {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool && self.specifier == other.specifier && self.base == other.base
    }
}

impl Eq for PermissionRule {}

/// Tools whose specifier is a path; `Read(...)` rules cover the first group, `Edit(...)`
/// rules the second.
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead"];
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// Input fields other than the primary one that deny/ask rules may test
/// (`Bash(run_in_background:true)`, `Agent(model:opus)`).
const PARAMETER_KEYS: &[&str] = &["run_in_background", "timeout", "model", "description"];

/// Which file access a tool (or a Bash redirection) makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFamily {
    /// Reading a file: `Read(…)` rules name it.
    Read,
    /// Changing a file: `Edit(…)` rules name it.
    Edit,
}

impl PathFamily {
    /// The family a file tool's rules belong to (`None` for tools that name no file).
    pub fn of_tool(tool: &str) -> Option<Self> {
        if READ_TOOLS.contains(&tool) {
            Some(PathFamily::Read)
        } else if EDIT_TOOLS.contains(&tool) {
            Some(PathFamily::Edit)
        } else {
            None
        }
    }
}

/// A specifier compiled for its tool.
#[derive(Debug, Clone)]
pub(super) enum Compiled {
    Bare,
    Command(CommandPatterns),
    Path(PathFamily, Box<PathPattern>),
    Domain(Pattern),
    Parameter { key: String, value: Pattern },
    Text(Pattern),
}

/// A Bash specifier three ways: as written (allow rules), with the command name reduced
/// to its basename (deny/ask, exact), and also lower-cased (deny/ask, look-alikes).
#[derive(Debug, Clone)]
pub(super) struct CommandPatterns {
    pub as_written: Pattern,
    pub by_name: Pattern,
    pub folded: Pattern,
}

impl PermissionRule {
    /// A rule for `tool` with an optional specifier, compiled once here.
    pub fn new(tool: impl Into<String>, specifier: Option<String>) -> Self {
        let tool = tool.into();
        let tool = if tool == "Task" {
            "Agent".to_string()
        } else {
            tool
        };
        PermissionRule {
            tool,
            specifier,
            base: None,
            compiled: OnceLock::new(),
            tool_glob: OnceLock::new(),
        }
    }

    /// The same rule, anchored at a settings file's project directory.
    pub fn with_base(mut self, base: impl Into<PathBuf>) -> Self {
        self.base = Some(base.into());
        self
    }

    /// Parses `Tool`, `Tool(spec)`; `Task` is read as `Agent`; `Tool(*)` as `Tool`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let (tool, specifier) = match text.find('(') {
            Some(open) if text.ends_with(')') => {
                let spec = text[open + 1..text.len() - 1].trim();
                (
                    &text[..open],
                    (!spec.is_empty() && spec != "*").then(|| spec.to_string()),
                )
            }
            Some(_) => return None,
            None => (text, None),
        };
        let tool = tool.trim();
        if tool.is_empty() || tool.contains(char::is_whitespace) {
            return None;
        }
        Some(PermissionRule::new(tool, specifier))
    }

    /// Splits a flag value such as `"Bash(git diff *),Read Edit"` into rules: commas and
    /// spaces separate rules except inside parentheses.
    pub fn parse_list(text: &str) -> Vec<PermissionRule> {
        split_rule_list(text)
            .iter()
            .filter_map(|item| PermissionRule::parse(item))
            .collect()
    }

    /// Whether the rule's tool name covers `tool` (bare rules; named tools of any rule).
    pub fn names_tool(&self, tool: &str, list: RuleList) -> bool {
        let rule = self.tool.as_str();
        if rule == tool || (rule == "Agent" && tool == "Task") {
            return true;
        }
        if rule.contains('*') {
            // Allow rules take globs only after a literal `mcp__<server>__`.
            if list == RuleList::Allow && !allow_glob_is_scoped(rule) {
                return false;
            }
            return self
                .tool_glob
                .get_or_init(|| Pattern::wildcard(rule))
                .matches_str(tool);
        }
        // `mcp__server` = every tool of that server.
        if let Some(server) = rule.strip_prefix("mcp__")
            && !server.is_empty()
            && !server.contains("__")
        {
            return tool
                .strip_prefix(rule)
                .is_some_and(|rest| rest.starts_with("__"));
        }
        false
    }

    /// Whether the rule applies to calls of `tool` at all (before looking at the call).
    pub(super) fn applies_to(&self, tool: &str, list: RuleList) -> bool {
        match (self.specifier.is_some(), self.compiled()) {
            (true, Compiled::Path(family, _)) => match PathFamily::of_tool(tool) {
                Some(call) => {
                    *family == call
                        || (*family == PathFamily::Read
                            && call == PathFamily::Edit
                            && list != RuleList::Allow)
                }
                None => false,
            },
            _ => self.names_tool(tool, list),
        }
    }

    pub(super) fn compiled(&self) -> &Compiled {
        self.compiled
            .get_or_init(|| compile(&self.tool, self.specifier.as_deref()))
    }
}

fn allow_glob_is_scoped(rule: &str) -> bool {
    rule.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, _)| !server.is_empty() && !server.contains('*'))
}

fn compile(tool: &str, specifier: Option<&str>) -> Compiled {
    let Some(spec) = specifier else {
        return Compiled::Bare;
    };
    if let Some((key, value)) = spec.split_once(':')
        && PARAMETER_KEYS.contains(&key)
        && !value.is_empty()
        && value != "*"
    {
        return Compiled::Parameter {
            key: key.to_string(),
            value: Pattern::wildcard(value),
        };
    }
    if let Some(family) = PathFamily::of_tool(tool) {
        return Compiled::Path(family, Box::new(PathPattern::compile(spec)));
    }
    match tool {
        "Bash" => Compiled::Command(CommandPatterns {
            as_written: Pattern::command(spec, str::to_string),
            by_name: Pattern::command(spec, |n| basename(n).to_string()),
            folded: Pattern::command(spec, |n| basename(n).to_ascii_lowercase()),
        }),
        "WebFetch" => match spec.strip_prefix("domain:") {
            Some(domain) => Compiled::Domain(Pattern::wildcard(domain.trim())),
            None => Compiled::Text(Pattern::wildcard(spec)),
        },
        _ => Compiled::Text(Pattern::wildcard(spec)),
    }
}

/// The last path component of a command name (`/bin/rm` → `rm`).
pub(super) fn basename(name: &str) -> &str {
    let trimmed = name.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(s) => write!(f, "{}({})", self.tool, s),
            None => f.write_str(&self.tool),
        }
    }
}

/// Splits a list of rules or tool names written as one string at commas and whitespace
/// outside parentheses (`Bash(git add:*), Read Grep` is three items).
pub fn split_rule_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                if !current.trim().is_empty() {
                    items.push(current.trim().to_string());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        items.push(current.trim().to_string());
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lists_split_outside_parentheses() {
        let rules = PermissionRule::parse_list("Bash(git diff *),Read Edit(src/**)");
        let shown: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, ["Bash(git diff *)", "Read", "Edit(src/**)"]);
        assert_eq!(
            PermissionRule::parse("Task(Explore)").map(|r| r.tool),
            Some("Agent".into())
        );
        assert_eq!(PermissionRule::parse("Bash(oops"), None);
        assert_eq!(
            PermissionRule::parse("Bash(*)").and_then(|r| r.specifier),
            None
        );
        assert_eq!(
            PermissionRule::parse("Bash(a, b)").and_then(|r| r.specifier),
            Some("a, b".into())
        );
    }

    #[test]
    fn tool_names_globs_and_mcp_servers() {
        let rule = |t: &str| PermissionRule::parse(t).unwrap();
        assert!(rule("*").names_tool("Bash", RuleList::Deny));
        assert!(!rule("*").names_tool("Bash", RuleList::Allow));
        assert!(rule("mcp__*").names_tool("mcp__gh__issue", RuleList::Ask));
        assert!(!rule("mcp__*").names_tool("mcp__gh__issue", RuleList::Allow));
        assert!(rule("mcp__gh__*").names_tool("mcp__gh__issue", RuleList::Allow));
        assert!(rule("mcp__gh").names_tool("mcp__gh__issue", RuleList::Allow));
        assert!(!rule("mcp__gh").names_tool("mcp__ghx__issue", RuleList::Allow));
        assert!(rule("mcp__gh__issue").names_tool("mcp__gh__issue", RuleList::Allow));
        assert!(rule("Agent").names_tool("Task", RuleList::Deny));
        assert!(!rule("Bash").names_tool("BashOutput", RuleList::Deny));
    }

    #[test]
    fn path_rules_cover_their_family_and_read_denies_cover_edits() {
        let read = PermissionRule::parse("Read(.env)").unwrap();
        assert!(read.applies_to("Grep", RuleList::Allow));
        assert!(read.applies_to("Edit", RuleList::Deny));
        assert!(!read.applies_to("Edit", RuleList::Allow));
        let edit = PermissionRule::parse("Edit(src/**)").unwrap();
        assert!(edit.applies_to("Write", RuleList::Allow));
        assert!(!edit.applies_to("Read", RuleList::Deny));
        assert_eq!(basename("/usr/bin/rm"), "rm");
        assert_eq!(basename("rm/"), "rm");
    }
}
