//! Permission evaluation (DESIGN §7): the modes, `Tool` / `Tool(specifier)` rules in allow,
//! ask and deny lists, and the decision for one tool call — deny, then ask, then allow,
//! then the mode's policy for the tool's risk class.
//!
//! Bash commands are read by a shell parser (`shell`) into every command they would run,
//! through wrappers and substitutions (`bash`); a deny rule matching any of them denies the
//! whole, and allow needs every one allowed. What cannot be read statically is "opaque":
//! never allowed by a rule, and asked about in every mode whenever a deny or ask rule
//! exists for Bash. File paths — of file tools and of Bash redirections and file
//! arguments — are resolved through `..` and symlinks and matched gitignore-style
//! (`paths`); files outside the working directories always ask, except in bypass mode.

#![deny(missing_docs)]

mod bash;
mod denied_walk;
mod mode;
mod path_denial;
mod path_rules;
mod paths;
mod pattern;
mod protected;
mod risk;
mod rules;
mod sandbox;
mod shell;
mod suggest;
mod targets;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use bash::REMOVING_PROGRAMS;
pub use denied_walk::DeniedWalkCache;
pub use mode::PermissionMode;
pub use path_denial::PathDenial;
pub use paths::{AnchorCache, ResolvedPath, fold};
pub use protected::ProtectedPaths;
pub use risk::RiskClass;
pub use rules::{PathFamily, PermissionRule, RuleList, split_rule_list};
pub use sandbox::{
    Confinement, DISABLE_SANDBOX_FIELD, KernelTerms, SandboxFilesystemSection,
    SandboxNetworkSection, SandboxPolicy, SandboxSection, SandboxSettings, asks_to_leave,
};
pub use suggest::suggested_rule;

use paths::PathContext;
use rules::Compiled;
use targets::{Certainty, FileTarget};

/// The outcome of evaluating one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call runs.
    Allow,
    /// The user is asked first.
    Ask {
        /// Why it needs approval, for the question.
        reason: String,
    },
    /// The call is refused.
    Deny {
        /// Why, for the model and the user.
        reason: String,
    },
}

/// How a deny rule's verdict begins.
pub const DENIED_BY_RULE: &str = "denied by rule";

impl Verdict {
    /// Whether a deny rule refused the call (rather than the mode).
    pub fn denied_by_rule(&self) -> bool {
        matches!(self, Verdict::Deny { reason } if reason.starts_with(DENIED_BY_RULE))
    }
}

/// The tool a model calls in plan mode to present its plan (Claude Code's `ExitPlanMode`):
/// in plan mode it always asks, and an approval leaves plan mode.
pub const PLAN_APPROVAL_TOOL: &str = "ExitPlanMode";

/// Mode, rule lists and the places the session may work in.
#[derive(Debug, Clone, Default)]
pub struct PermissionPolicy {
    /// What calls no rule names are decided by.
    pub mode: PermissionMode,
    /// Rules whose calls run without asking.
    pub allow: Vec<PermissionRule>,
    /// Rules whose calls are always asked about.
    pub ask: Vec<PermissionRule>,
    /// Rules whose calls are refused, in every mode.
    pub deny: Vec<PermissionRule>,
    /// Working directories besides the session's (`additionalDirectories`, `--add-dir`);
    /// relative ones are taken from the session's working directory.
    pub additional_dirs: Vec<PathBuf>,
    /// The user's home, for `~/` in rules and commands.
    pub home: Option<PathBuf>,
    /// Where the directories rules are anchored at really are (filled as needed).
    pub anchors: AnchorCache,
    /// Files no call may write without asking, in any mode.
    pub protected: ProtectedPaths,
    /// When the session started: a file modified since then (by any tool, a Bash line
    /// included) that a command would run — a script by path, a Makefile under `make`,
    /// `package.json` scripts, git hooks and configured commands — makes the command opaque.
    /// None checks nothing (a policy built only to match rules).
    pub session_start: Option<std::time::SystemTime>,
    /// The Bash sandbox: its settings and whether this machine can run it.
    pub sandbox: SandboxPolicy,
    /// Files git tracks that a Read deny rule denies (found at start-up): git commands that
    /// can print them from history or the index are refused (`bash::git_history`).
    pub git_tracked_denied: Vec<PathBuf>,
    /// The deny-rule walks of earlier Bash calls, reused while their directories are
    /// unchanged (shared by every copy of the policy).
    pub denied_walks: DeniedWalkCache,
}

/// What the policy looks at for one call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool's name (`Bash`, `Edit`, `mcp__server__tool`).
    pub tool: &'a str,
    /// What the tool can do to the world.
    pub risk: RiskClass,
    /// The command, path or URL the call acts on.
    pub argument: Option<&'a str>,
    /// The session's working directory (relative paths resolve against it).
    pub cwd: &'a Path,
    /// Where a shell command starts when that is not `cwd`: the Bash tool's current
    /// directory after an earlier call's `cd`. Relative paths of the command resolve there.
    pub shell_dir: Option<&'a Path>,
    /// The call's whole input, when known (paths of Glob/Grep, parameter rules).
    pub input: Option<&'a Value>,
}

impl<'a> CallFacts<'a> {
    /// Facts for a call of `tool` on `argument`, without the raw input.
    pub fn new(tool: &'a str, risk: RiskClass, argument: Option<&'a str>, cwd: &'a Path) -> Self {
        CallFacts {
            tool,
            risk,
            argument,
            cwd,
            shell_dir: None,
            input: None,
        }
    }

    fn input_str(&self, key: &str) -> Option<&'a str> {
        self.input?.get(key)?.as_str()
    }
}

impl PermissionPolicy {
    /// A policy with no rules, in `mode`.
    pub fn new(mode: PermissionMode) -> Self {
        PermissionPolicy {
            mode,
            ..PermissionPolicy::default()
        }
    }

    /// The verdict for one call: deny, then ask, then allow, then the mode's policy for
    /// the tool's risk class.
    pub fn evaluate(&self, call: &CallFacts<'_>) -> Verdict {
        if call.tool == "Bash" {
            return self.sandbox_verdict(call, bash::evaluate(self, call));
        }
        self.evaluate_tool(call)
    }

    /// The working directories: the session's and the additional ones.
    pub fn working_dirs(&self, cwd: &Path) -> Vec<ResolvedPath> {
        std::iter::once(cwd.to_path_buf())
            .chain(self.additional_dirs.iter().map(|d| cwd.join(d)))
            .map(|d| ResolvedPath::of(&d))
            .collect()
    }

    fn path_context<'p>(&'p self, call: &CallFacts<'p>) -> PathContext<'p> {
        PathContext::new(call.cwd, self.home.as_deref(), &self.additional_dirs)
            .with_anchor_cache(&self.anchors)
    }

    fn evaluate_tool(&self, call: &CallFacts<'_>) -> Verdict {
        let ctx = self.path_context(call);
        let target = PathFamily::of_tool(call.tool).and_then(|_| self.file_target(call, &ctx));
        let target = target.as_ref();
        let host = if call.tool == "WebFetch" {
            call.input_str("url").or(call.argument).and_then(host_of)
        } else {
            None
        };
        let host = host.as_deref();
        if let Some(rule) = self
            .deny
            .iter()
            .find(|r| self.rule_hits(r, call, target, host, &ctx, RuleList::Deny))
        {
            return Verdict::Deny {
                reason: format!("{DENIED_BY_RULE} {rule}"),
            };
        }
        if PathFamily::of_tool(call.tool) == Some(PathFamily::Edit)
            && let Some(verdict) = target.and_then(|t| self.guard_write(t, call.tool, &ctx))
        {
            return verdict;
        }
        if let Some(rule) = self
            .ask
            .iter()
            .find(|r| self.rule_hits(r, call, target, host, &ctx, RuleList::Ask))
        {
            return Verdict::Ask {
                reason: format!("rule {rule} asks"),
            };
        }
        let inside = target.map(|t| t.inside(ctx.working_dirs()));
        if inside == Some(false) && self.mode != PermissionMode::BypassPermissions {
            let named = self.allow.iter().any(|r| {
                r.specifier.is_some()
                    && self.rule_hits(r, call, target, host, &ctx, RuleList::Allow)
            });
            if named {
                return Verdict::Allow;
            }
            return Verdict::Ask {
                reason: format!(
                    "{} is outside the working directories",
                    target.map(FileTarget::describe).unwrap_or_default()
                ),
            };
        }
        if self
            .allow
            .iter()
            .any(|r| self.rule_hits(r, call, target, host, &ctx, RuleList::Allow))
        {
            return Verdict::Allow;
        }
        self.mode_policy(call, inside)
    }

    /// The file a file tool's call touches.
    fn file_target(&self, call: &CallFacts<'_>, ctx: &PathContext<'_>) -> Option<FileTarget> {
        match call.tool {
            "Glob" | "Grep" | "LS" => {
                let dir = call.input_str("path").unwrap_or(".");
                let word = match (call.tool, call.input_str("pattern")) {
                    ("Glob", Some(pattern)) => {
                        let joined = if pattern.starts_with('/') {
                            pattern.to_string()
                        } else {
                            format!("{}/{pattern}", dir.trim_end_matches('/'))
                        };
                        glob_word(&joined)
                    }
                    _ => shell::Word::literal(dir),
                };
                FileTarget::of_word(&word, Some(call.cwd), ctx)
            }
            _ => {
                let path = call
                    .input_str("file_path")
                    .or_else(|| call.input_str("notebook_path"))
                    .or(call.argument)?;
                FileTarget::of_word(&shell::Word::literal(path), Some(call.cwd), ctx)
            }
        }
    }

    /// Whether `rule` catches the call (deny/ask: surely or possibly; allow: surely).
    fn rule_hits(
        &self,
        rule: &PermissionRule,
        call: &CallFacts<'_>,
        target: Option<&FileTarget>,
        host: Option<&str>,
        ctx: &PathContext<'_>,
        list: RuleList,
    ) -> bool {
        if !rule.applies_to(call.tool, list) {
            return false;
        }
        let guard = list != RuleList::Allow;
        // Grep and Glob walks skip the files deny rules protect (`PathDenial`), so a walk
        // that only may reach one is not refused whole.
        let walk_filtered = list == RuleList::Deny && matches!(call.tool, "Grep" | "Glob");
        match rule.compiled() {
            Compiled::Bare => true,
            Compiled::Path(..) => target
                .and_then(|t| t.rule_match(rule, ctx, list))
                .is_some_and(|c| c == Certainty::Sure || (guard && !walk_filtered)),
            Compiled::Domain(pattern) => match host {
                Some(host) => pattern.matches_str_ignore_case(host),
                None => guard,
            },
            Compiled::Parameter { key, value } => {
                guard && parameter_matches(call.input, key, value)
            }
            Compiled::Text(pattern) => {
                let text = if call.tool == "Agent" || call.tool == "Task" {
                    call.input_str("subagent_type").or(call.argument)
                } else {
                    call.argument
                };
                text.is_some_and(|t| pattern.matches_str(t))
            }
            Compiled::Command(_) => false,
        }
    }

    fn mode_policy(&self, call: &CallFacts<'_>, inside: Option<bool>) -> Verdict {
        use PermissionMode::*;
        use RiskClass::*;
        if call.tool == PLAN_APPROVAL_TOOL {
            // Leaving plan mode is the user's call; outside it the tool changes nothing.
            return match self.mode {
                Plan => Verdict::Ask {
                    reason: "the plan needs your approval".to_string(),
                },
                _ => Verdict::Allow,
            };
        }
        match (self.mode, call.risk) {
            (_, Read) => Verdict::Allow,
            (BypassPermissions, _) => Verdict::Allow,
            (Plan, Edit | Execute) => Verdict::Deny {
                reason: "plan mode is read-only".to_string(),
            },
            (AcceptEdits, Edit) if inside == Some(true) => Verdict::Allow,
            _ => Verdict::Ask {
                reason: format!("{} needs approval in {} mode", call.tool, self.mode),
            },
        }
    }
}

/// A glob as a word: `**` may cross directories, other glob characters may not.
fn glob_word(pattern: &str) -> shell::Word {
    let mut word = shell::Word::default();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        word.pieces.push(match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                shell::Piece::Descendant
            }
            '*' | '?' | '[' | '{' => shell::Piece::Glob,
            c => shell::Piece::Lit(c),
        });
    }
    word
}

/// The host of a URL, lower-case, without a trailing dot.
fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed
        .host_str()?
        .trim_end_matches('.')
        .to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

fn parameter_matches(input: Option<&Value>, key: &str, value: &pattern::Pattern) -> bool {
    let Some(field) = input.and_then(|i| i.get(key)) else {
        return false;
    };
    let text = match field {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    value.matches_str(&text)
}

/// Whether `path` (absolute, or relative to `cwd`) lies inside `cwd`, after folding `..`.
pub fn inside(cwd: &Path, path: &str) -> bool {
    fold(&cwd.join(path)).starts_with(cwd)
}

#[cfg(test)]
mod tests;
