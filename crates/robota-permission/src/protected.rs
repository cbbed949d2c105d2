//! The guard the agent cannot disarm: files whose change alters what runs later or what
//! the rules are — settings, hooks, git's hooks and config — given as `Edit(...)` rules.
//! A tool call that may write one asks in every mode, bypass included (and so is refused
//! where nobody can be asked, as in `-p`), unless an allow rule names that very path. A
//! Bash command the checker cannot read asks when its text names one of them. Which
//! files these are is the caller's knowledge (`sdk::settings::protected_paths`); core only
//! applies it.

use super::paths::PathContext;
use super::rules::{PermissionRule, RuleList};
use super::targets::{Certainty, FileTarget};
use super::{PermissionPolicy, Verdict};

/// The protected files, and words that give them away in a command line.
#[derive(Debug, Clone, Default)]
pub struct ProtectedPaths {
    /// `Edit(...)` rules naming them (matched like ask rules: surely or possibly).
    pub rules: Vec<PermissionRule>,
    /// Lower-case fragments of their names (`.claude`, `.git/hooks`).
    pub words: Vec<String>,
}

impl ProtectedPaths {
    /// The rule a write to `target` may hit, if any. A path known only at run time
    /// (`> "$f"`) is left to the sandbox: asking for every such write would make bypass
    /// mode unusable for scripts.
    pub(super) fn hit(
        &self,
        target: &FileTarget,
        ctx: &PathContext<'_>,
    ) -> Option<&PermissionRule> {
        if matches!(target, FileTarget::Unknown) {
            return None;
        }
        self.rules
            .iter()
            .find(|rule| target.rule_match(rule, ctx, RuleList::Ask).is_some())
    }

    /// Whether `command` names a protected file in its text.
    pub(super) fn named_in(&self, command: &str) -> Option<&str> {
        let lower = command.to_lowercase();
        self.words
            .iter()
            .find(|word| lower.contains(word.as_str()))
            .map(String::as_str)
    }
}

impl PermissionPolicy {
    /// The guard's verdict on writing `target`: ask, unless an allow rule names the path.
    pub(super) fn guard_write(
        &self,
        target: &FileTarget,
        tool: &str,
        ctx: &PathContext<'_>,
    ) -> Option<Verdict> {
        if self.mode == super::PermissionMode::Plan {
            // Plan mode refuses every write anyway.
            return None;
        }
        let rule = self.protected.hit(target, ctx)?;
        let named = self.allow.iter().any(|allow| {
            allow.specifier.is_some()
                && allow.applies_to(tool, RuleList::Allow)
                && target.rule_match(allow, ctx, RuleList::Allow) == Some(Certainty::Sure)
        });
        (!named).then(|| Verdict::Ask {
            reason: format!(
                "{} is protected ({}): changing settings, hooks or git's hooks and config always needs your approval",
                target.describe(),
                rule.specifier.as_deref().unwrap_or_default()
            ),
        })
    }
}
