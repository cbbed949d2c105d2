//! Permission evaluation: the four modes, `Tool` / `Tool(specifier)` rules in allow, ask
//! and deny lists, and the decision for one tool call — deny, then ask, then allow, then the
//! mode's policy for the tool's risk class (DESIGN §7).
//!
//! Bash commands are split at shell control operators before matching: a deny rule that
//! matches any part denies the whole, and an allow rule allows only when every part is
//! allowed. Parts that cannot be judged statically (substitutions, `eval`, shells fed a
//! string) never match an allow rule.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tool::RiskClass;

/// How much the user lets robota do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PermissionMode {
    /// Reads run; edits, commands and network ask.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Edits inside the working directories run without asking.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Read-only: edits and commands are refused.
    #[serde(rename = "plan")]
    Plan,
    /// Everything runs except what a deny or ask rule catches.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }

    /// Parses a mode name as Claude Code spells it (`manual` is an alias of `default`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "default" | "manual" => Some(PermissionMode::Default),
            "acceptEdits" => Some(PermissionMode::AcceptEdits),
            "plan" => Some(PermissionMode::Plan),
            "bypassPermissions" => Some(PermissionMode::BypassPermissions),
            _ => None,
        }
    }

    /// The next mode in the Shift+Tab cycle.
    pub fn next(self) -> Self {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan => PermissionMode::BypassPermissions,
            PermissionMode::BypassPermissions => PermissionMode::Default,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: a tool name (or `*`) with an optional specifier in parentheses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRule {
    pub tool: String,
    pub specifier: Option<String>,
}

impl PermissionRule {
    /// Parses `Tool`, `Tool(spec)`; `Task` is read as `Agent`.
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
        let tool = if tool == "Task" { "Agent" } else { tool };
        Some(PermissionRule {
            tool: tool.to_string(),
            specifier,
        })
    }

    /// Splits a flag value such as `"Bash(git diff *),Read Edit"` into rules: commas and
    /// spaces separate rules except inside parentheses.
    pub fn parse_list(text: &str) -> Vec<PermissionRule> {
        let mut rules = Vec::new();
        let mut depth = 0usize;
        let mut current = String::new();
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
                ',' | ' ' if depth == 0 => {
                    rules.extend(PermissionRule::parse(&current));
                    current.clear();
                }
                _ => current.push(c),
            }
        }
        rules.extend(PermissionRule::parse(&current));
        rules
    }

    fn matches_tool(&self, tool: &str) -> bool {
        self.tool == "*" || self.tool == tool || (self.tool == "Agent" && tool == "Task")
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(s) => write!(f, "{}({})", self.tool, s),
            None => f.write_str(&self.tool),
        }
    }
}

/// The outcome of evaluating one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask { reason: String },
    Deny { reason: String },
}

/// Mode plus rule lists.
#[derive(Debug, Clone, Default)]
pub struct PermissionPolicy {
    pub mode: PermissionMode,
    pub allow: Vec<PermissionRule>,
    pub ask: Vec<PermissionRule>,
    pub deny: Vec<PermissionRule>,
}

/// What the policy looks at for one call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub tool: &'a str,
    pub risk: RiskClass,
    /// The command, path or URL the call acts on.
    pub argument: Option<&'a str>,
    /// The session's working directory (relative paths resolve against it).
    pub cwd: &'a Path,
}

impl PermissionPolicy {
    pub fn evaluate(&self, call: &CallFacts<'_>) -> Verdict {
        if let Some(rule) = self.deny.iter().find(|r| rule_hits(r, call)) {
            return Verdict::Deny {
                reason: format!("denied by rule {rule}"),
            };
        }
        if call.tool == "Bash"
            && self
                .deny
                .iter()
                .chain(&self.ask)
                .any(|r| r.matches_tool("Bash"))
            && call
                .argument
                .is_some_and(|cmd| split_command(cmd).contains(&CommandPart::Opaque))
        {
            return Verdict::Ask {
                reason: "the command builds what it runs at run time, so rules cannot be checked"
                    .to_string(),
            };
        }
        if let Some(rule) = self.ask.iter().find(|r| rule_hits(r, call)) {
            return Verdict::Ask {
                reason: format!("rule {rule} asks"),
            };
        }
        if self.allowed_by_rules(call) {
            return Verdict::Allow;
        }
        self.mode_policy(call)
    }

    /// A bare rule for the tool allows every call; otherwise each part of a Bash command
    /// must be matched by some rule (other tools have one part: the argument).
    fn allowed_by_rules(&self, call: &CallFacts<'_>) -> bool {
        let rules: Vec<&PermissionRule> = self
            .allow
            .iter()
            .filter(|r| r.matches_tool(call.tool))
            .collect();
        if rules.iter().any(|r| r.specifier.is_none()) {
            return true;
        }
        let Some(arg) = call.argument else {
            return false;
        };
        if call.tool != "Bash" {
            return rules.iter().any(|r| rule_hits(r, call));
        }
        let parts = split_command(arg);
        !parts.is_empty()
            && parts.iter().all(|part| match part {
                CommandPart::Plain(cmd) => rules.iter().any(|r| {
                    r.specifier
                        .as_deref()
                        .is_some_and(|spec| command_matches(spec, cmd))
                }),
                CommandPart::Opaque => false,
            })
    }

    fn mode_policy(&self, call: &CallFacts<'_>) -> Verdict {
        use PermissionMode::*;
        use RiskClass::*;
        let ask = || Verdict::Ask {
            reason: format!("{} needs approval in {} mode", call.tool, self.mode),
        };
        match (self.mode, call.risk) {
            (_, Read) => Verdict::Allow,
            (BypassPermissions, _) => Verdict::Allow,
            (Plan, Edit | Execute) => Verdict::Deny {
                reason: "plan mode is read-only".to_string(),
            },
            (AcceptEdits, Edit) if call.argument.is_some_and(|p| inside(call.cwd, p)) => {
                Verdict::Allow
            }
            _ => ask(),
        }
    }
}

/// Whether a deny or ask rule catches the call: for Bash, any part of the command.
fn rule_hits(rule: &PermissionRule, call: &CallFacts<'_>) -> bool {
    if !rule.matches_tool(call.tool) {
        return false;
    }
    let Some(spec) = &rule.specifier else {
        return true;
    };
    let Some(arg) = call.argument else {
        return false;
    };
    if call.tool == "Bash" {
        return split_command(arg).iter().any(|p| match p {
            CommandPart::Plain(cmd) => command_matches(spec, cmd),
            CommandPart::Opaque => false,
        });
    }
    path_or_text_matches(spec, arg, call.cwd)
}

/// One simple command of a compound command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CommandPart {
    Plain(String),
    /// Contains something only a shell can resolve: never allowed by a prefix rule.
    Opaque,
}

/// Splits at `;`, `&`, `|`, newlines and parentheses outside quotes. A part holding `$(`,
/// a backtick, `eval` or a shell invoked with `-c` is opaque.
fn split_command(command: &str) -> Vec<CommandPart> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut opaque = false;
    let mut chars = command.chars().peekable();
    let flush = |current: &mut String, opaque: &mut bool, parts: &mut Vec<CommandPart>| {
        let text = current.trim();
        if *opaque {
            parts.push(CommandPart::Opaque);
        } else if !text.is_empty() {
            let words: Vec<&str> = text.split_whitespace().collect();
            let first = words.first().copied().unwrap_or("");
            let shell_string = matches!(
                first.rsplit('/').next().unwrap_or(first),
                "sh" | "bash" | "zsh" | "dash" | "ksh"
            ) && words.contains(&"-c");
            if first == "eval" || first == "exec" || shell_string {
                parts.push(CommandPart::Opaque);
            } else {
                parts.push(CommandPart::Plain(text.to_string()));
            }
        }
        current.clear();
        *opaque = false;
    };
    while let Some(c) = chars.next() {
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                }
                current.push(c);
            }
            Some(_) => {
                match c {
                    '"' => quote = None,
                    '`' => opaque = true,
                    '$' if chars.peek() == Some(&'(') => opaque = true,
                    '\\' => {
                        current.push(c);
                        if let Some(n) = chars.next() {
                            current.push(n);
                        }
                        continue;
                    }
                    _ => {}
                }
                current.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
                }
                '\\' => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                        current.push(' ');
                    } else {
                        current.push(c);
                        if let Some(n) = chars.next() {
                            current.push(n);
                        }
                    }
                }
                '`' => {
                    opaque = true;
                    current.push(c);
                }
                '$' if chars.peek() == Some(&'(') => {
                    opaque = true;
                    current.push(c);
                }
                ';' | '&' | '|' | '\n' | '(' | ')' | '<' | '>' => {
                    flush(&mut current, &mut opaque, &mut parts);
                }
                _ => current.push(c),
            },
        }
    }
    if quote.is_some() {
        opaque = true;
    }
    flush(&mut current, &mut opaque, &mut parts);
    parts
}

/// `npm test` exact, `npm run *` / legacy `npm run:*` prefix (at a word boundary).
fn command_matches(spec: &str, command: &str) -> bool {
    let command = normalise_spaces(command);
    let prefix = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))
        .or_else(|| spec.strip_suffix('*'));
    match prefix {
        Some(prefix) => {
            let prefix = normalise_spaces(prefix);
            command == prefix
                || command
                    .strip_prefix(&prefix)
                    .is_some_and(|rest| rest.starts_with(' ') || prefix.ends_with(' '))
        }
        None => command == normalise_spaces(spec),
    }
}

fn normalise_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Glob match of a path (resolved against `cwd`) or plain text against a specifier.
fn path_or_text_matches(spec: &str, arg: &str, cwd: &Path) -> bool {
    let spec = spec.strip_prefix("domain:").unwrap_or(spec);
    if spec == arg {
        return true;
    }
    let absolute = if Path::new(arg).is_absolute() {
        arg.to_string()
    } else {
        cwd.join(arg).to_string_lossy().into_owned()
    };
    let pattern = if let Some(rest) = spec.strip_prefix("//") {
        format!("/{rest}")
    } else if spec.starts_with('/') || spec.starts_with("**") {
        spec.to_string()
    } else {
        cwd.join(spec).to_string_lossy().into_owned()
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(&absolute))
        .unwrap_or(false)
}

/// Whether `path` (absolute, or relative to `cwd`) lies inside `cwd`, after resolving `..`.
pub fn inside(cwd: &Path, path: &str) -> bool {
    let joined = cwd.join(path);
    let mut normal = std::path::PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: PermissionMode, allow: &str, deny: &str) -> PermissionPolicy {
        PermissionPolicy {
            mode,
            allow: PermissionRule::parse_list(allow),
            ask: vec![],
            deny: PermissionRule::parse_list(deny),
        }
    }

    fn bash<'a>(cmd: &'a str) -> CallFacts<'a> {
        CallFacts {
            tool: "Bash",
            risk: RiskClass::Execute,
            argument: Some(cmd),
            cwd: Path::new("/repo"),
        }
    }

    #[test]
    fn rule_lists_split_outside_parentheses() {
        let rules = PermissionRule::parse_list("Bash(git diff *),Read Edit(src/**)");
        let shown: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, ["Bash(git diff *)", "Read", "Edit(src/**)"]);
        assert_eq!(
            PermissionRule::parse("Task").map(|r| r.tool),
            Some("Agent".into())
        );
        assert_eq!(PermissionRule::parse("Bash(oops"), None);
    }

    #[test]
    fn prefix_rules_match_at_word_boundaries_in_both_spellings() {
        assert!(command_matches("npm run *", "npm run test"));
        assert!(command_matches("npm run:*", "npm run build"));
        assert!(command_matches("npm run *", "npm run"));
        assert!(!command_matches("npm run *", "npm runner"));
        assert!(command_matches("npm test", "npm  test"));
        assert!(!command_matches("npm test", "npm test --watch"));
    }

    #[test]
    fn deny_beats_allow_and_catches_any_part_of_a_compound_command() {
        let p = policy(PermissionMode::BypassPermissions, "Bash", "Bash(rm *)");
        for cmd in [
            "rm -rf /",
            "ls && rm -rf /",
            "ls; rm x",
            "echo hi | rm x",
            "(rm x)",
            "ls\nrm x",
            "true || rm x",
        ] {
            assert!(
                matches!(p.evaluate(&bash(cmd)), Verdict::Deny { .. }),
                "{cmd} must be denied"
            );
        }
        assert_eq!(p.evaluate(&bash("ls -la")), Verdict::Allow);
        for cmd in [
            "$(echo rm) -rf /",
            "eval 'rm x'",
            "sh -c 'rm x'",
            "ls `echo rm`",
        ] {
            assert!(
                matches!(p.evaluate(&bash(cmd)), Verdict::Ask { .. }),
                "{cmd} must ask even in bypass mode"
            );
        }
    }

    #[test]
    fn allow_needs_every_part_and_never_covers_opaque_parts() {
        let p = policy(PermissionMode::Default, "Bash(git status),Bash(ls *)", "");
        assert_eq!(p.evaluate(&bash("git status")), Verdict::Allow);
        assert_eq!(p.evaluate(&bash("git status && ls -la")), Verdict::Allow);
        for cmd in [
            "git status && rm -rf /",
            "ls $(rm x)",
            "ls `rm x`",
            "eval ls",
            "bash -c 'ls'",
            "ls \"$(whoami)\"",
        ] {
            assert!(
                matches!(p.evaluate(&bash(cmd)), Verdict::Ask { .. }),
                "{cmd} must ask"
            );
        }
    }

    #[test]
    fn mode_policy_follows_risk() {
        let read = CallFacts {
            tool: "Read",
            risk: RiskClass::Read,
            argument: Some("/repo/a"),
            cwd: Path::new("/repo"),
        };
        let edit_in = CallFacts {
            tool: "Edit",
            risk: RiskClass::Edit,
            argument: Some("src/a.rs"),
            cwd: Path::new("/repo"),
        };
        let edit_out = CallFacts {
            argument: Some("../other/a.rs"),
            ..edit_in
        };
        let p = |m| policy(m, "", "");
        assert_eq!(p(PermissionMode::Default).evaluate(&read), Verdict::Allow);
        assert!(matches!(
            p(PermissionMode::Default).evaluate(&edit_in),
            Verdict::Ask { .. }
        ));
        assert_eq!(
            p(PermissionMode::AcceptEdits).evaluate(&edit_in),
            Verdict::Allow
        );
        assert!(matches!(
            p(PermissionMode::AcceptEdits).evaluate(&edit_out),
            Verdict::Ask { .. }
        ));
        assert!(matches!(
            p(PermissionMode::Plan).evaluate(&edit_in),
            Verdict::Deny { .. }
        ));
        assert!(matches!(
            p(PermissionMode::Plan).evaluate(&bash("ls")),
            Verdict::Deny { .. }
        ));
        assert_eq!(
            p(PermissionMode::BypassPermissions).evaluate(&bash("ls")),
            Verdict::Allow
        );
    }

    #[test]
    fn path_rules_glob_relative_to_cwd() {
        let p = policy(PermissionMode::Default, "Edit(src/**)", "Read(//etc/**)");
        let edit = CallFacts {
            tool: "Edit",
            risk: RiskClass::Edit,
            argument: Some("/repo/src/deep/a.rs"),
            cwd: Path::new("/repo"),
        };
        assert_eq!(p.evaluate(&edit), Verdict::Allow);
        let read = CallFacts {
            tool: "Read",
            risk: RiskClass::Read,
            argument: Some("/etc/passwd"),
            cwd: Path::new("/repo"),
        };
        assert!(matches!(p.evaluate(&read), Verdict::Deny { .. }));
    }
}
