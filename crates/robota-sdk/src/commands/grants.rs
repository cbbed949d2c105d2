//! Permission rules granted for one turn: a command's or skill's `allowed-tools` apply
//! while the turn that runs it lasts (Claude Code: "the grant lasts for the invoking turn
//! only"). They are added to the session's allow list and taken out again — exactly those,
//! not a rule the user saved meanwhile — when the turn ends.

use std::sync::{Arc, Mutex};

use robota_core::permission::{PermissionPolicy, PermissionRule};

/// The rules granted in the running turn, shared by the session driver (which revokes
/// them when the turn ends) and the `Skill` tool (which grants them mid-turn).
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnGrants {
    granted: Arc<Mutex<Vec<PermissionRule>>>,
}

impl TurnGrants {
    /// Adds `rules` (Claude Code rule strings) to `policy`'s allow list for this turn.
    pub fn grant(&self, policy: &Mutex<PermissionPolicy>, rules: &[String]) {
        let parsed: Vec<PermissionRule> = rules
            .iter()
            .flat_map(|r| PermissionRule::parse_list(r))
            .collect();
        if parsed.is_empty() {
            return;
        }
        if let (Ok(mut policy), Ok(mut granted)) = (policy.lock(), self.granted.lock()) {
            policy.allow.extend(parsed.iter().cloned());
            granted.extend(parsed);
        }
    }

    /// Takes every rule granted this turn out of `policy` again (one copy each).
    pub(crate) fn revoke_all(&self, policy: &Mutex<PermissionPolicy>) {
        let Ok(mut granted) = self.granted.lock() else {
            return;
        };
        if granted.is_empty() {
            return;
        }
        if let Ok(mut policy) = policy.lock() {
            for rule in granted.drain(..) {
                if let Some(i) = policy.allow.iter().rposition(|r| *r == rule) {
                    policy.allow.remove(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robota_core::permission::PermissionMode;

    #[test]
    fn grants_come_and_go_without_touching_saved_rules() {
        let policy = Mutex::new(PermissionPolicy::new(PermissionMode::Default));
        policy.lock().unwrap().allow = PermissionRule::parse_list("Bash(ls:*)");
        let grants = TurnGrants::default();
        grants.grant(
            &policy,
            &[
                "Bash(git add:*), Read".to_string(),
                "Bash(ls:*)".to_string(),
            ],
        );
        assert_eq!(policy.lock().unwrap().allow.len(), 4);
        policy
            .lock()
            .unwrap()
            .allow
            .extend(PermissionRule::parse_list("Bash(make)"));
        grants.revoke_all(&policy);
        let left: Vec<String> = policy
            .lock()
            .unwrap()
            .allow
            .iter()
            .map(|r| format!("{}({})", r.tool, r.specifier.clone().unwrap_or_default()))
            .collect();
        assert_eq!(left, ["Bash(ls:*)", "Bash(make)"]);
    }
}
