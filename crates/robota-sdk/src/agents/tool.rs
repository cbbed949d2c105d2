//! The `Agent` tool (Claude Code's `Task`): runs a subagent — an in-process child session
//! with its definition's system prompt (then the working rules every agent shares, the
//! parent's environment block and context files, and a note that its answer goes back to
//! the agent that asked: `system_prompt::subagent` puts it together), its own
//! transcript beside the parent's log (`<session>/subagents/agent-<id>.jsonl`), and the
//! parent's provider, permission rules and hooks: a child never gets more than its parent
//! (the rules are the parent's as they stand when it starts; it has no `Agent` tool, so no
//! recursion). What it does reaches the parent's clients as `SessionUpdate::Subagent`;
//! its permission questions are asked through them, naming it. Several Agent calls of one
//! model turn run in parallel (the engine runs read-class calls together; at most
//! [`MAX_PARALLEL`] children at once); aborting the turn stops them all. SubagentStart and
//! SubagentStop hooks fire around each.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use robota_core::engine::TurnStop;
use robota_core::hooks::HookEvent;
use robota_core::permission::PermissionPolicy;
use robota_core::{
    Block, Provider, RiskClass, Role, Tool, ToolContext, ToolOutput, ToolRegistry, ToolSource,
    models,
};
use robota_session::hooks::SessionHooks;
use robota_session::line::SessionHeader;
use robota_session::log::SessionLog;
use robota_session::{Session, SessionConfig, SessionUpdate};

use super::definition::{AgentCatalog, AgentDefinition};

pub(crate) const AGENT_TOOL: &str = "Agent";
/// At most this many subagents run at the same time.
pub(crate) const MAX_PARALLEL: usize = 4;

/// Tools a subagent never gets: delegation (no recursion), the plan approval of its
/// parent's user, and the structured answer of a `--json-schema` run.
const NEVER_FOR_CHILDREN: &[&str] = &[AGENT_TOOL, "ExitPlanMode", "StructuredOutput"];

/// What starting a child session takes from its parent.
pub(crate) struct AgentRuntime {
    pub provider: Arc<dyn Provider>,
    /// The parent's tools (the `Agent` tool is never among a child's).
    pub tools: ToolRegistry,
    pub policy: Arc<Mutex<PermissionPolicy>>,
    pub hooks: Option<Arc<SessionHooks>>,
    /// The parent's configuration when the session started (its directory, environment,
    /// model, answer limit, and system prompt, whose environment part children share).
    pub config: SessionConfig,
    /// The text the parent's prompt starts with (the built-in text, or the
    /// `--system-prompt` that replaced it): a child has its definition's prompt and the
    /// working rules instead.
    pub builtin_prompt: String,
    /// The folder of the session logs (a child's transcript goes to
    /// `<folder>/<session id>/subagents/`); `None` without a session log.
    pub sessions_dir: Option<PathBuf>,
    /// The parent records diagnostics: each child does too, beside its transcript.
    pub diagnostics: bool,
    /// The parent's update sink: a child's updates reach the parent's clients through it.
    pub sink: Arc<dyn Fn(SessionUpdate) + Send + Sync>,
    /// The parent as it is now: `/model` may have changed its model (what `inherit`
    /// means) and `/clear` its session id since the start.
    pub parent_now: Arc<dyn Fn() -> ParentNow + Send + Sync>,
    pub catalog: Arc<AgentCatalog>,
    /// Where running subagents are listed for `/tasks` (which may stop one).
    pub tasks: Arc<crate::tasks::TaskBoard>,
}

/// What of the parent session may change while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentNow {
    pub session_id: String,
    pub model: String,
}

/// The `Agent` tool of one session.
pub(crate) struct AgentTool {
    runtime: AgentRuntime,
    running: Arc<Semaphore>,
    started: AtomicU64,
    description: String,
}

impl AgentTool {
    pub fn new(runtime: AgentRuntime) -> AgentTool {
        let mut description = String::from(
            "Launches a subagent to handle a multi-step task on its own: it works with its own context and tools and returns one report. Use it to search or explore widely, or for independent tasks; launch several in one message to run them in parallel. Give it a complete, self-contained prompt (it cannot see this conversation) and say what to report. Do not launch one for what a few direct calls do (reading a known file, one search): do that yourself. Its report comes back to you and is not shown to the user: relay what matters. Available agent types (subagent_type):\n",
        );
        for agent in &runtime.catalog.agents {
            description.push_str(&format!("- {}: {}\n", agent.name, agent.description));
        }
        AgentTool {
            runtime,
            running: Arc::new(Semaphore::new(MAX_PARALLEL)),
            started: AtomicU64::new(0),
            description,
        }
    }

    /// The child's tools: the parent's minus what children never get, narrowed to the
    /// definition's `tools` and without its `disallowedTools`.
    fn child_tools(&self, definition: &AgentDefinition) -> ToolRegistry {
        let mut tools = self.runtime.tools.clone();
        let allowed = definition.tools.clone();
        let disallowed = definition.disallowed_tools.clone();
        tools.retain(move |name| {
            !NEVER_FOR_CHILDREN.contains(&name)
                && allowed
                    .as_ref()
                    .is_none_or(|list| list.iter().any(|t| t == name))
                && !disallowed.iter().any(|t| t == name)
        });
        tools
    }

    fn child_model(&self, definition: &AgentDefinition, requested: Option<&str>) -> String {
        let parent = &(self.runtime.parent_now)().model;
        let wanted = std::env::var("CLAUDE_CODE_SUBAGENT_MODEL")
            .ok()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| requested.map(str::to_string))
            .or_else(|| definition.model.clone());
        match wanted {
            Some(model) => models::resolve(&model, self.runtime.provider.name(), parent),
            None => parent.clone(),
        }
    }

    fn child_prompt(&self, definition: &AgentDefinition) -> String {
        crate::system_prompt::subagent(
            &definition.prompt,
            &self.runtime.config.system_prompt,
            &self.runtime.builtin_prompt,
        )
    }

    /// The session a subagent runs in: the parent's configuration and permission policy
    /// (never more than the parent's, plus the rules the call was allowed), narrowed to the
    /// definition's tools, model, prompt and turn limit, with its own transcript beside
    /// the parent's log.
    fn child_session(
        &self,
        definition: &AgentDefinition,
        model: &str,
        agent_id: &str,
        allow: &[String],
    ) -> Result<(Session, Option<std::path::PathBuf>), &'static str> {
        let web_search = definition
            .tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == "WebSearch"))
            && !definition.disallowed_tools.iter().any(|t| t == "WebSearch");
        let config = SessionConfig {
            server_tools: if web_search {
                self.runtime.config.server_tools.clone()
            } else {
                Vec::new()
            },
            model: model.to_string(),
            system_prompt: self.child_prompt(definition),
            max_rounds: definition.max_turns,
            context_window: models::lookup(model).context_window,
            session_id: (self.runtime.parent_now)().session_id,
            ..self.runtime.config.clone()
        };
        let transcript = self.runtime.sessions_dir.as_ref().map(|dir| {
            dir.join(&config.session_id)
                .join("subagents")
                .join(format!("agent-{agent_id}.jsonl"))
        });
        let log = transcript.as_ref().and_then(|path| {
            let header = SessionHeader::new(
                &config.session_id,
                &config.cwd,
                model,
                self.runtime.provider.name(),
            );
            let created = SessionLog::create_file(path, &header).and_then(|log| {
                if self.runtime.diagnostics {
                    log.with_diagnostics()
                } else {
                    Ok(log)
                }
            });
            match created {
                Ok(log) => Some(log),
                Err(e) => {
                    (self.runtime.sink)(SessionUpdate::Warning(format!(
                        "The subagent's transcript could not be written: {e}"
                    )));
                    None
                }
            }
        });
        let transcript_path = log.as_ref().map(|l| l.path().to_path_buf());
        let mut policy = match self.runtime.policy.lock() {
            Ok(policy) => policy.clone(),
            Err(_) => return Err("The permission rules are unavailable"),
        };
        policy.allow.extend(
            allow
                .iter()
                .flat_map(|rule| robota_core::permission::PermissionRule::parse_list(rule)),
        );
        let child = Session::new(
            config,
            self.runtime.provider.clone(),
            self.child_tools(definition),
            policy,
            log,
        )
        .with_shared_hooks(self.runtime.hooks.clone())
        .as_subagent();
        Ok((child, transcript_path))
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn name(&self) -> &str {
        AGENT_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The type of agent to use"},
                "model": {"type": "string", "description": "Optional model for this agent (sonnet, opus, haiku or an id)"}
            },
            "required": ["description", "prompt", "subagent_type"],
            "additionalProperties": false
        })
    }

    fn risk(&self) -> RiskClass {
        // Starting a subagent changes nothing; what it then does is asked about call by call.
        RiskClass::Read
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input.get("subagent_type")?.as_str().map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::trim);
        let Some(prompt) = text("prompt").filter(|p| !p.is_empty()) else {
            return ToolOutput::error("Agent needs a \"prompt\": the task for the subagent");
        };
        let task = SubagentTask {
            agent_type: text("subagent_type")
                .filter(|t| !t.is_empty())
                .unwrap_or("general-purpose"),
            description: text("description").unwrap_or(""),
            prompt,
            model: text("model").filter(|m| !m.is_empty()),
            parent_tool_use_id: &ctx.tool_use_id,
            allow: &[],
            cancel: &ctx.cancel,
        };
        self.run(task).await
    }
}

/// One subagent to run: what the `Agent` tool's input says, or a `context: fork` skill.
pub(crate) struct SubagentTask<'a> {
    pub agent_type: &'a str,
    pub description: &'a str,
    pub prompt: &'a str,
    /// An alias or id for this run (else the definition's, else the parent's model).
    pub model: Option<&'a str>,
    /// The id its events are tagged with (the Agent call's, or the skill invocation's).
    pub parent_tool_use_id: &'a str,
    /// Rules the subagent is granted besides its parent's (a forked skill's
    /// `allowed-tools`).
    pub allow: &'a [String],
    pub cancel: &'a tokio_util::sync::CancellationToken,
}

impl AgentTool {
    /// Runs a subagent to its end; its report (or why there is none) is the output.
    pub async fn run(&self, task: SubagentTask<'_>) -> ToolOutput {
        let SubagentTask {
            agent_type,
            description,
            prompt,
            model: requested_model,
            parent_tool_use_id,
            allow,
            cancel,
        } = task;
        let description = description.to_string();
        let Some(definition) = self.runtime.catalog.find(agent_type).cloned() else {
            return ToolOutput::error(format!(
                "Unknown subagent_type {agent_type:?}. Available agent types: {}",
                self.runtime.catalog.names().join(", ")
            ));
        };
        let _permit = tokio::select! {
            permit = self.running.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return ToolOutput::error("The subagent could not start"),
            },
            () = cancel.cancelled() => return ToolOutput::error("Interrupted before the subagent started"),
        };
        let number = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        let agent_id = format!(
            "{}-{number}",
            uuid::Uuid::new_v4()
                .simple()
                .to_string()
                .get(..8)
                .unwrap_or("agent")
        );
        let model = self.child_model(&definition, requested_model);
        let (mut child, transcript_path) =
            match self.child_session(&definition, &model, &agent_id, allow) {
                Ok(child) => child,
                Err(why) => return ToolOutput::error(why),
            };
        let parent_sink = self.runtime.sink.clone();
        let parent_tool_use_id = parent_tool_use_id.to_string();
        let (kind, about) = (definition.name.clone(), description.clone());
        let child_sink = move |update: SessionUpdate| {
            parent_sink(SessionUpdate::Subagent {
                parent_tool_use_id: parent_tool_use_id.clone(),
                agent_type: kind.clone(),
                description: about.clone(),
                update: Box::new(update),
            })
        };
        let sink: &(dyn Fn(SessionUpdate) + Send + Sync) = &*self.runtime.sink;
        let start_fields = json!({"agent_id": agent_id, "agent_type": definition.name});
        let contexts = child
            .fire_hook(
                HookEvent::SubagentStart,
                Some(&definition.name),
                start_fields,
                sink,
            )
            .await;
        let mut blocks = vec![Block::text(prompt)];
        if !contexts.is_empty() {
            blocks.push(Block::text(robota_core::hooks::protocol::system_reminder(
                &contexts.join("\n\n"),
            )));
        }
        // Its own token: `/tasks stop` ends this subagent alone; Esc (the parent's) all.
        let own_cancel = cancel.child_token();
        let on_board = self.runtime.tasks.subagent_started(
            &agent_id,
            &definition.name,
            &description,
            own_cancel.clone(),
        );
        let outcome = child.run_turn(blocks, &child_sink, &own_cancel).await;
        drop(on_board);
        let report = child
            .history()
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())
            .map(|m| m.text())
            .unwrap_or_default();
        let stop_fields = json!({
            "agent_id": agent_id,
            "agent_type": definition.name,
            "agent_transcript_path": transcript_path,
            "last_assistant_message": report,
            "stop_hook_active": false,
        });
        child
            .fire_hook(
                HookEvent::SubagentStop,
                Some(&definition.name),
                stop_fields,
                sink,
            )
            .await;
        let footer = match &transcript_path {
            Some(path) => format!("\n\n(agent {agent_id}; transcript {})", path.display()),
            None => format!("\n\n(agent {agent_id})"),
        };
        report_of(outcome.stop, &report, &footer, cancel)
    }
}

/// Offers the `Agent` tool through a session's tool registry (where `--tools` and deny
/// rules filter it like any other).
pub(crate) struct AgentToolSource(pub Arc<AgentTool>);

impl ToolSource for AgentToolSource {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.0.clone()]
    }
}

/// What the model is told of a subagent that ended with `stop`: its report, or why there
/// is none.
fn report_of(
    stop: TurnStop,
    report: &str,
    footer: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> ToolOutput {
    match stop {
        TurnStop::Completed(_) | TurnStop::MaxRounds | TurnStop::HookStopped(_) => {
            if report.is_empty() {
                ToolOutput::error(format!("The subagent ended without a report.{footer}"))
            } else {
                ToolOutput::ok(format!("{report}{footer}"))
            }
        }
        TurnStop::Interrupted if !cancel.is_cancelled() => ToolOutput::error(format!(
            "The user stopped this subagent (/tasks stop); do not start it again unless asked.{footer}"
        )),
        TurnStop::Interrupted => ToolOutput::error("The subagent was interrupted by the user"),
        TurnStop::Failed(err) => ToolOutput::error(format!(
            "The subagent failed: {}{footer}",
            err.user_message()
        )),
        TurnStop::ContextFull => ToolOutput::error(format!(
            "The subagent's context window filled up.{}{footer}",
            if report.is_empty() {
                String::new()
            } else {
                format!(" Its last words: {report}")
            }
        )),
        TurnStop::PromptBlocked(reason) => {
            ToolOutput::error(format!("The subagent's prompt was blocked: {reason}"))
        }
    }
}
