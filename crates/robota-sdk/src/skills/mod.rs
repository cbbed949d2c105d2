//! Skills for the model: the `Skill` tool (Claude Code's name and input, `{skill, args}`),
//! whose description lists the skills and commands the model may invoke — names and
//! descriptions only, within a budget of 8,000 characters — and whose call loads one: its body with
//! the arguments put in and its `` !`commands` `` run (as a user's `/name` would), its
//! folder named so the model can read the files beside `SKILL.md`, and its
//! `allowed-tools` granted until the turn ends. The body is loaded only when invoked.

use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use serde_json::{Value, json};

use robota_core::permission::PermissionPolicy;
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput, ToolSource};
use robota_session::hooks::HookHandle;

use super::agents::{AgentTool, SubagentTask};
use super::commands::expand::{ExpandContext, expand};
use super::commands::grants::TurnGrants;
use super::commands::{CommandRegistry, PromptCommand};

/// The tool's name, as Claude Code's.
pub(crate) const SKILL_TOOL: &str = "Skill";
/// The listing of skills in the tool's description stays within this many characters
/// (about 2,000 tokens); skills past it are named without their descriptions, and past
/// twice that they are only counted.
pub(crate) const LISTING_BUDGET: usize = 8_000;
/// One description in the listing is cut at this many characters.
const DESCRIPTION_CAP: usize = 250;

const INTRO: &str = "Loads a skill: instructions (and files beside them) for a kind of task. When a task matches a skill's description, invoke it before starting, with `skill` set to its name and `args` to anything it needs. The skill's instructions come back as the result; follow them. Available skills:\n";

/// The `Skill` tool of one session.
pub(crate) struct SkillTool {
    registry: Arc<CommandRegistry>,
    policy: Arc<Mutex<PermissionPolicy>>,
    grants: TurnGrants,
    session_id: String,
    description: String,
    /// Runs `context: fork` skills as subagents (set once the session's Agent tool exists).
    subagents: OnceLock<Arc<AgentTool>>,
    /// The session's hooks, asked before a skill's shell lines run.
    hooks: OnceLock<HookHandle>,
}

impl SkillTool {
    pub fn new(
        registry: Arc<CommandRegistry>,
        policy: Arc<Mutex<PermissionPolicy>>,
        grants: TurnGrants,
        session_id: String,
    ) -> SkillTool {
        let description = format!("{INTRO}{}", listing(registry.model_invocable()));
        SkillTool {
            registry,
            policy,
            grants,
            session_id,
            description,
            subagents: OnceLock::new(),
            hooks: OnceLock::new(),
        }
    }

    /// Lets `context: fork` skills run as subagents of `agents`.
    pub(crate) fn set_subagents(&self, agents: Arc<AgentTool>) {
        let _ = self.subagents.set(agents);
    }

    /// Lets the session's hooks (`PreSkillShellCommand`) see the skills' shell lines.
    pub(crate) fn set_hooks(&self, hooks: HookHandle) {
        let _ = self.hooks.set(hooks);
    }

    fn available(&self) -> String {
        let names: Vec<&str> = self
            .registry
            .model_invocable()
            .map(|c| c.name.as_str())
            .collect();
        names.join(", ")
    }
}

/// `- name: description` lines within the budget.
pub fn listing<'a>(commands: impl Iterator<Item = &'a Arc<PromptCommand>>) -> String {
    let mut out = String::new();
    let mut unlisted = 0usize;
    for command in commands {
        let line = if out.len() < LISTING_BUDGET {
            let description: String = command.description.chars().take(DESCRIPTION_CAP).collect();
            let cut = if description.len() < command.description.len() {
                "…"
            } else {
                ""
            };
            format!("- {}: {description}{cut}\n", command.name)
        } else if out.len() < 2 * LISTING_BUDGET {
            format!("- {}\n", command.name)
        } else {
            unlisted += 1;
            continue;
        };
        out.push_str(&line);
    }
    if unlisted > 0 {
        out.push_str(&format!("(and {unlisted} more not listed)\n"));
    }
    out
}

#[async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &str {
        SKILL_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name, as listed"},
                "args": {"type": "string", "description": "Arguments for the skill, if it takes any"}
            },
            "required": ["skill"],
            "additionalProperties": false
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input.get("skill")?.as_str().map(str::to_string)
    }

    /// A skill's instructions reach the model whole, however long (Claude Code cuts none).
    fn max_result_chars(&self) -> Option<usize> {
        None
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let Some(name) = input.get("skill").and_then(Value::as_str) else {
            return ToolOutput::error(format!(
                "Skill needs \"skill\": the name of one of: {}",
                self.available()
            ));
        };
        let name = name.trim().trim_start_matches('/');
        let args = input.get("args").and_then(Value::as_str).unwrap_or("");
        let Some(command) = self.registry.find(name) else {
            return ToolOutput::error(format!(
                "No skill named {name:?}. Available: {}",
                self.available()
            ));
        };
        if command.disable_model_invocation {
            return ToolOutput::error(format!(
                "The skill {name:?} can only be invoked by the user (/{name})"
            ));
        }
        let policy = match self.policy.lock() {
            Ok(p) => p.clone(),
            Err(_) => return ToolOutput::error("The permission rules are unavailable"),
        };
        let context = ExpandContext {
            cwd: &ctx.cwd,
            env: &ctx.env,
            session_id: &self.session_id,
            policy,
            cancel: &ctx.cancel,
            hooks: self.hooks.get(),
        };
        let text = match expand(&command, args, context).await {
            Ok(expanded) => expanded.prompt,
            Err(refused) => return ToolOutput::error(refused.to_string()),
        };
        match (&command.fork_agent, self.subagents.get()) {
            (Some(agent_type), Some(agents)) => {
                let task = SubagentTask {
                    agent_type,
                    description: &command.name,
                    prompt: &text,
                    model: command.model.as_deref(),
                    parent_tool_use_id: &ctx.tool_use_id,
                    allow: &command.allowed_tools,
                    cancel: &ctx.cancel,
                };
                agents.run(task).await
            }
            _ => {
                self.grants.grant(&self.policy, &command.allowed_tools);
                ToolOutput::ok(text)
            }
        }
    }
}

/// Offers the `Skill` tool through a session's tool registry (where `--tools` and deny
/// rules filter it like any other).
pub(crate) struct SkillToolSource(pub Arc<SkillTool>);

impl ToolSource for SkillToolSource {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.0.clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{DefinitionKind, Origin};
    use std::path::PathBuf;

    fn skill(name: &str, description: &str) -> Arc<PromptCommand> {
        Arc::new(PromptCommand::from_text(
            &format!("---\ndescription: {description}\n---\nDo {name}."),
            name.to_string(),
            DefinitionKind::Skill,
            Origin::Project,
            PathBuf::from(format!("/p/.claude/skills/{name}/SKILL.md")),
        ))
    }

    #[test]
    fn the_listing_keeps_its_budget() {
        let many: Vec<Arc<PromptCommand>> = (0..2000)
            .map(|i| skill(&format!("skill-{i}"), &"d".repeat(300)))
            .collect();
        let text = listing(many.iter());
        assert!(text.len() < 2 * LISTING_BUDGET + 200, "{}", text.len());
        assert!(text.starts_with("- skill-0: ddd"));
        assert!(text.contains("…\n"));
        assert!(text.ends_with("more not listed)\n"));
        let fifty: Vec<Arc<PromptCommand>> = (0..50)
            .map(|i| {
                skill(
                    &format!("skill-{i}"),
                    "Creates release notes from the git log",
                )
            })
            .collect();
        let text = listing(fifty.iter());
        assert_eq!(text.lines().count(), 50);
    }
}
