//! Compaction (DESIGN §4, §15): replacing the conversation so far by a summary the session's
//! own provider writes, without tools. It owns the summary prompt (what must survive: the
//! user's requests verbatim, decisions, files, errors, the current state and the next step,
//! steered by the project's "Compact Instructions" and the user's focus text), the
//! conversation as the text the summariser reads, the current TodoWrite list appended to the
//! summary verbatim, the PreCompact / PostCompact / SessionStart(`compact`) hooks, and the
//! `compact_boundary` log line, and the session's compaction settings and `/compact`. The system prompt and context files are never summarised:
//! they are resent as they are. An interrupted or failed summary leaves the history as it was.

use std::mem::take;
use std::time::Instant;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::context::{AUTO_COMPACT_THRESHOLD, ContextTracker};
use robota_core::engine::EngineEvent;
use robota_core::hooks::{HookEvent, HookRequest};
use robota_core::truncate::truncate_middle;
use robota_core::{
    Block, Message, Provider, ProviderError, ProviderErrorKind, ProviderRequest, Role, StreamEvent,
    TodoItem,
};

use super::conversation::{Session, forwarder, hook_firing};
use super::hooks::HookFiring;
use super::line::{LogEvent, compact_summary_message};
use super::log::SessionLog;
use super::rewind::SUMMARY_FROM_HERE_PREFIX;
use super::update::{CompactReport, CompactTrigger, SessionUpdate, UpdateSink};

/// The system prompt of the summary call.
const SUMMARY_SYSTEM: &str = "You are a helpful AI assistant tasked with summarizing conversations between a user and a coding agent. You never call tools; you answer with the summary only.";

/// What the summary must keep (Claude Code's sections, in its order).
const SUMMARY_INSTRUCTIONS: &str = "Your task is to create a detailed summary of the conversation above. It will replace the conversation: the agent continues the work from this summary alone (the system prompt and project instructions stay), so keep everything needed to go on without losing context.

Write the summary in these sections:
1. Primary request and intent: the user's objective, and every request and instruction the user gave, quoted verbatim in order.
2. Key decisions and constraints: what was decided or agreed, and the constraints and preferences the user stated.
3. Files and code: every file read, created or changed, with what matters about it (the changes made, and short code snippets where they are needed to go on).
4. Errors and fixes: each error met and how it was solved (or that it is not solved yet), including what the user said about it.
5. Pending tasks: what the user asked for that is not done yet.
6. Current state: exactly what was being worked on just before this summary.
7. Next step: the next step, in line with the user's latest request (quote it); none if the work is done.

Answer with the summary only: no preamble, no tool calls.";

/// Tool results in the text the summariser reads are cut to this many characters.
const TOOL_RESULT_CHARS: usize = 2_000;

/// Share of the window the conversation text may fill in the summary call; beyond it the
/// middle is cut (the head holds the objective, the tail the current state).
const SUMMARY_INPUT_SHARE: f64 = 0.6;

/// How compaction is set up for a session.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionConfig {
    /// Share of the window above which compaction runs before a user turn (`None`: never
    /// automatically). Settings: `autoCompactThreshold`.
    pub auto_threshold: Option<f64>,
    /// The "Compact Instructions" of the context files, steering every summary.
    pub instructions: Option<String>,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            auto_threshold: Some(AUTO_COMPACT_THRESHOLD),
            instructions: None,
        }
    }
}

/// Why a compaction did not happen (the history is as it was).
#[derive(Debug, Clone, PartialEq)]
pub enum CompactError {
    /// There is nothing before the kept messages to summarise.
    Empty,
    /// A PreCompact hook refused, with its reason.
    Blocked(String),
    /// The cancellation token fired before the summary was made.
    Interrupted,
    /// The summary call failed.
    Failed(ProviderError),
    /// The model answered with no text.
    EmptySummary,
    /// "Summarise from here" named a message that is not a prompt of the conversation.
    NotAPrompt(String),
}

impl CompactError {
    /// A sentence for the user.
    pub fn message(&self) -> String {
        match self {
            CompactError::Empty => "Nothing to compact yet".to_string(),
            CompactError::Blocked(reason) if reason.is_empty() => {
                "Compaction was blocked by a PreCompact hook".to_string()
            }
            CompactError::Blocked(reason) => {
                format!("Compaction was blocked by a PreCompact hook: {reason}")
            }
            CompactError::Interrupted => "Compaction interrupted".to_string(),
            CompactError::Failed(err) => format!("Compaction failed: {}", err.user_message()),
            CompactError::EmptySummary => {
                "Compaction failed: the model wrote an empty summary".to_string()
            }
            CompactError::NotAPrompt(reason) => reason.clone(),
        }
    }
}

/// A finished compaction and the context SessionStart(`compact`) hooks gave for the next
/// prompt.
pub(super) struct Compacted {
    pub report: CompactReport,
    pub contexts: Vec<String>,
}

/// Everything one compaction uses of its session, borrowed field by field so a running turn
/// can compact between its attempts.
pub(super) struct Compactor<'a> {
    pub provider: &'a dyn Provider,
    pub model: &'a str,
    pub max_tokens: u32,
    pub window: u64,
    pub config: &'a CompactionConfig,
    pub todos: Vec<TodoItem>,
    pub firing: Option<&'a HookFiring<'a>>,
    pub log: Option<&'a SessionLog>,
    /// Records an engine event (usage and retries of the summary call) as a turn does.
    pub forward: &'a (dyn Fn(EngineEvent) + Send + Sync),
    pub sink: UpdateSink<'a>,
}

impl Compactor<'_> {
    /// Replaces `history[..keep_from]` by a summary; the messages from `keep_from` on (the
    /// unfinished turn's) stay after it.
    pub async fn run(
        &self,
        history: &mut Vec<Message>,
        tracker: &mut ContextTracker,
        trigger: CompactTrigger,
        focus: &str,
        keep_from: usize,
        cancel: &CancellationToken,
    ) -> Result<Compacted, CompactError> {
        let keep_from = keep_from.min(history.len());
        if keep_from == 0 {
            return Err(CompactError::Empty);
        }
        let pre_tokens = tracker.estimate(history);
        if let Some(firing) = self.firing {
            let fields = json!({"trigger": trigger.as_str(), "custom_instructions": focus});
            let request = HookRequest::new(HookEvent::PreCompact, Some(trigger.as_str()), fields);
            let outcome = firing.fire(request, cancel).await;
            if let Some(reason) = outcome.block_reason() {
                return Err(CompactError::Blocked(reason));
            }
        }
        if cancel.is_cancelled() {
            return Err(CompactError::Interrupted);
        }
        (self.sink)(SessionUpdate::CompactStarted { trigger });
        let prompt = summary_prompt(
            &history[..keep_from],
            self.config.instructions.as_deref(),
            focus,
            self.window,
        );
        let summary = self.summarise(prompt, cancel).await?;
        let summary = with_todo_list(&summary, &self.todos);

        let message = compact_summary_message(&summary, &uuid::Uuid::new_v4().to_string());
        let kept = history.len() - keep_from;
        let mut compacted = Vec::with_capacity(kept + 1);
        compacted.push(message.clone());
        compacted.extend_from_slice(&history[keep_from..]);
        tracker.reset_reported();
        let post_tokens = tracker.estimate(&compacted);
        if let Some(log) = self.log {
            let written = log.append_event(LogEvent::CompactBoundary {
                summary: summary.clone(),
                uuid: Some(message.id.clone()),
                trigger: Some(trigger.as_str().to_string()),
                pre_tokens: Some(pre_tokens),
                post_tokens: Some(post_tokens),
                kept,
            });
            if let Err(err) = written {
                tracing::warn!("session log: {err}");
            }
        }
        *history = compacted;

        let report = CompactReport {
            trigger,
            pre_tokens,
            post_tokens,
            summary,
        };
        let contexts = self.after_hooks(&report).await;
        (self.sink)(SessionUpdate::Compacted(report.clone()));
        Ok(Compacted { report, contexts })
    }

    /// One tool-less streaming call; its usage and retries are recorded like a turn's.
    async fn summarise(
        &self,
        prompt: String,
        cancel: &CancellationToken,
    ) -> Result<String, CompactError> {
        let request = ProviderRequest {
            model: self.model.to_string(),
            system: SUMMARY_SYSTEM.to_string(),
            messages: vec![Message::user_text(prompt)],
            tools: Vec::new(),
            max_tokens: self.max_tokens,
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            // With diagnostics on, the summary call is recorded like a turn's.
            wire: self
                .log
                .and_then(SessionLog::diagnostics)
                .map(|d| robota_core::wire::WireTap(d.clone())),
        };
        let events = |event: StreamEvent| {
            if matches!(event, StreamEvent::Retrying { .. }) {
                (self.forward)(EngineEvent::Stream(event));
            }
        };
        let started = Instant::now();
        let turn = match self.provider.stream(&request, &events, cancel).await {
            Ok(turn) => turn,
            Err(err) if err.kind == ProviderErrorKind::Cancelled || cancel.is_cancelled() => {
                return Err(CompactError::Interrupted);
            }
            Err(err) => return Err(CompactError::Failed(err)),
        };
        if let Some(usage) = turn.usage {
            (self.forward)(EngineEvent::Usage {
                usage,
                model: turn.model.clone(),
                api_duration: started.elapsed(),
            });
        }
        if cancel.is_cancelled() {
            return Err(CompactError::Interrupted);
        }
        let text = Message::new(Role::Assistant, turn.content).text();
        let summary = extract_summary(&text);
        if summary.is_empty() {
            return Err(CompactError::EmptySummary);
        }
        Ok(summary.to_string())
    }

    /// PostCompact, then SessionStart with source `compact`; returns the context the
    /// latter gave.
    async fn after_hooks(&self, report: &CompactReport) -> Vec<String> {
        let Some(firing) = self.firing else {
            return Vec::new();
        };
        // The hooks run after the fact: an abort of the turn does not undo the compaction.
        let cancel = CancellationToken::new();
        let trigger = report.trigger.as_str();
        let fields = json!({"trigger": trigger, "compact_summary": report.summary});
        let request = HookRequest::new(HookEvent::PostCompact, Some(trigger), fields);
        firing.fire(request, &cancel).await;
        let fields = json!({"source": "compact", "model": self.model});
        let request = HookRequest::new(HookEvent::SessionStart, Some("compact"), fields);
        firing.fire(request, &cancel).await.contexts
    }
}

impl Session {
    /// Compacts by these settings (threshold, Compact Instructions).
    pub fn with_compaction(mut self, compaction: CompactionConfig) -> Self {
        self.compaction = compaction;
        self
    }

    /// The compaction settings in force (threshold, Compact Instructions).
    pub fn compaction(&self) -> &CompactionConfig {
        &self.compaction
    }

    /// TodoWrite's list of a resumed session.
    pub fn with_todos(self, todos: Vec<TodoItem>) -> Self {
        if let Ok(mut list) = self.todos.lock() {
            *list = todos;
        }
        self
    }

    /// A compaction of this session, reporting through `firing`, `forward` and `sink`.
    pub(super) fn compactor<'a>(
        &'a self,
        firing: Option<&'a HookFiring<'a>>,
        forward: &'a (dyn Fn(EngineEvent) + Send + Sync),
        sink: UpdateSink<'a>,
    ) -> Compactor<'a> {
        Compactor {
            provider: self.provider.as_ref(),
            model: &self.config.model,
            max_tokens: self.config.max_tokens,
            window: self.config.context_window,
            config: &self.compaction,
            todos: self.todos.lock().map(|t| t.clone()).unwrap_or_default(),
            firing,
            log: self.log.as_deref(),
            forward,
            sink,
        }
    }

    /// Whether the context estimate is above the auto-compaction threshold.
    pub fn needs_auto_compact(&self) -> bool {
        let Some(threshold) = self.compaction.auto_threshold else {
            return false;
        };
        let window = self.config.context_window;
        !self.history.is_empty()
            && window > 0
            && self.context_estimate() as f64 > threshold * window as f64
    }

    /// Replaces the whole history by a summary (`/compact [focus]`); on `Err` it is as it
    /// was. Interruptible through `cancel`.
    pub async fn compact(
        &mut self,
        trigger: CompactTrigger,
        focus: &str,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<CompactReport, CompactError> {
        let firing = self
            .hooks
            .clone()
            .map(|hooks| hook_firing(hooks, &self.config, &self.policy, &self.log, sink));
        let forward = forwarder(&self.log, &self.usage, &self.todos, sink);
        let keep_from = self.history.len();
        // The compaction borrows the rest of the session: history and tracker move out
        // while it rewrites them, and back after.
        let (mut history, mut tracker) = (take(&mut self.history), take(&mut self.tracker));
        let done = self
            .compactor(firing.as_ref(), &forward, sink)
            .run(
                &mut history,
                &mut tracker,
                trigger,
                focus,
                keep_from,
                cancel,
            )
            .await;
        (self.history, self.tracker) = (history, tracker);
        let done = done?;
        self.pending_context.extend(done.contexts);
        Ok(done.report)
    }
}

impl Session {
    /// "Summarise from here": replaces prompt `message_id` and everything after it by a
    /// summary of them, keeping what came before. Logged as a rewind to before the prompt
    /// and the summary as a user message. Interruptible; on `Err` the history is as it was.
    pub async fn summarize_from(
        &mut self,
        message_id: &str,
        sink: UpdateSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<CompactReport, CompactError> {
        let at = self
            .prompt_index(message_id)
            .map_err(|e| CompactError::NotAPrompt(e.0))?;
        let pre_tokens = self.tracker.estimate(&self.history);
        let prompt = summary_prompt(
            &self.history[at..],
            self.compaction.instructions.as_deref(),
            "",
            self.config.context_window,
        );
        let forward = forwarder(&self.log, &self.usage, &self.todos, sink);
        (sink)(SessionUpdate::CompactStarted {
            trigger: CompactTrigger::Manual,
        });
        let summary = self
            .compactor(None, &forward, sink)
            .summarise(prompt, cancel)
            .await?;
        let summary = with_todo_list(
            &summary,
            &self.todos.lock().map(|t| t.clone()).unwrap_or_default(),
        );
        self.cut_history_before(at);
        self.push_logged(Message::user_text(format!(
            "{SUMMARY_FROM_HERE_PREFIX}{summary}"
        )));
        self.tracker.reset_reported();
        let post_tokens = self.tracker.estimate(&self.history);
        let report = CompactReport {
            trigger: CompactTrigger::Manual,
            pre_tokens,
            post_tokens,
            summary,
        };
        // As `/compact` does: the TUI stops showing "Compacting…", `-p` writes its
        // `compact_boundary`.
        (sink)(SessionUpdate::Compacted(report.clone()));
        Ok(report)
    }
}

/// The summary request: the conversation as text, then what the summary must keep, the
/// project's Compact Instructions and the user's focus.
pub fn summary_prompt(
    messages: &[Message],
    instructions: Option<&str>,
    focus: &str,
    window: u64,
) -> String {
    let budget = (window as f64 * SUMMARY_INPUT_SHARE) as usize * 4;
    let conversation = truncate_middle(&conversation_text(messages), budget.max(8_000));
    let mut prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    prompt.push_str(SUMMARY_INSTRUCTIONS);
    if let Some(instructions) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        prompt.push_str("\n\nCompact Instructions from the project (follow them):\n");
        prompt.push_str(instructions);
    }
    let focus = focus.trim();
    if !focus.is_empty() {
        prompt.push_str("\n\nThe user asks this summary to focus on: ");
        prompt.push_str(focus);
    }
    prompt
}

/// The conversation as the summariser reads it: each message under its role, tool calls
/// with their input, tool results cut to 2,000 characters; thinking left out.
pub fn conversation_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        let role = match message.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
        };
        for block in &message.content {
            match block {
                Block::Text { text, .. } if !text.trim().is_empty() => {
                    out.push_str(&format!("[{role}]\n{}\n\n", text.trim_end()));
                }
                Block::ToolUse { id, name, input } => {
                    out.push_str(&format!("[Tool call {name} {id}]\n{input}\n\n"));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let kind = if *is_error {
                        "Tool error"
                    } else {
                        "Tool result"
                    };
                    let content = truncate_middle(content, TOOL_RESULT_CHARS);
                    out.push_str(&format!("[{kind} {tool_use_id}]\n{content}\n\n"));
                }
                Block::Image { .. } => out.push_str(&format!("[{role}]\n[image]\n\n")),
                _ => {}
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// The text inside `<summary>…</summary>` when the model wrapped it so (after an analysis),
/// else the whole answer; trimmed.
fn extract_summary(text: &str) -> &str {
    let inner = text
        .split_once("<summary>")
        .map(|(_, rest)| rest.split_once("</summary>").map_or(rest, |(s, _)| s));
    inner.unwrap_or(text).trim()
}

/// The summary followed by the TodoWrite list exactly as it stands (never the model's
/// retelling of it).
fn with_todo_list(summary: &str, todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return summary.to_string();
    }
    let list = serde_json::to_string_pretty(todos).unwrap_or_default();
    format!("{summary}\n\nThe current todo list (TodoWrite), exactly as it stands:\n{list}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todo(content: &str, status: &str) -> TodoItem {
        serde_json::from_value(json!({"content": content, "status": status, "activeForm": content}))
            .unwrap()
    }

    #[test]
    fn the_prompt_holds_the_conversation_the_instructions_and_the_focus() {
        let call = Message::new(
            Role::Assistant,
            vec![
                Block::Thinking {
                    thinking: "secret plan".into(),
                    signature: "s".into(),
                },
                Block::ToolUse {
                    id: "t1".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "src/api.rs"}),
                },
            ],
        );
        let result = Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "t1".into(),
                content: "x".repeat(10_000).into(),
                is_error: false,
            }],
        );
        let messages = vec![Message::user_text("port the API to v2"), call, result];
        let prompt = summary_prompt(
            &messages,
            Some("Keep the endpoint names."),
            "the API details",
            200_000,
        );
        assert!(prompt.contains("[User]\nport the API to v2"), "{prompt}");
        assert!(prompt.contains("[Tool call Read t1]\n{\"file_path\":\"src/api.rs\"}"));
        assert!(prompt.contains("output truncated: 10000 chars total"));
        assert!(!prompt.contains("secret plan"));
        assert!(prompt.contains("quoted verbatim"));
        assert!(prompt.contains(
            "Compact Instructions from the project (follow them):\nKeep the endpoint names."
        ));
        assert!(prompt.ends_with("focus on: the API details"));
    }

    #[test]
    fn a_conversation_beyond_the_budget_keeps_its_head_and_tail() {
        let messages = vec![
            Message::user_text(format!("OBJECTIVE {}", "a".repeat(100_000))),
            Message::user_text(format!("{} LATEST", "b".repeat(100_000))),
        ];
        let prompt = summary_prompt(&messages, None, "", 20_000);
        assert!(prompt.len() < 60_000, "{}", prompt.len());
        assert!(prompt.contains("OBJECTIVE") && prompt.contains("LATEST"));
        assert!(!prompt.contains("Compact Instructions"));
    }

    #[test]
    fn the_summary_tag_is_taken_when_present_and_todos_follow_verbatim() {
        assert_eq!(
            extract_summary("<analysis>x</analysis>\n<summary>\nS\n</summary>"),
            "S"
        );
        assert_eq!(extract_summary("  plain  "), "plain");
        assert_eq!(with_todo_list("S", &[]), "S");
        let with = with_todo_list("S", &[todo("write tests", "in_progress")]);
        assert!(with.starts_with("S\n\nThe current todo list"));
        assert!(with.contains("\"content\": \"write tests\""));
        assert!(with.contains("\"status\": \"in_progress\""));
    }
}
