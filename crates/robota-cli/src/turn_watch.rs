//! What a headless turn is waiting on, told from its events: the provider (a model call in
//! flight), a hook, a tool or an MCP server's tool. It names the wait when the turn's wall
//! deadline (`--max-turn-seconds`, setting `maxTurnSeconds`) passes, and writes the
//! keepalive lines of `--output-format stream-json` while the turn runs: Claude Code's
//! `tool_progress` for each tool running longer than the interval, otherwise a
//! `system/keepalive` line naming the hook or provider call the turn waits on. Quiet is
//! then never silence: a driver tells a slow turn from a dead one by these lines.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::sdk::{ErrorKind, ProviderEndpoint, SessionEvent, TurnError};

/// How long a turn stopped at its deadline has to wind down (a cancelled tool gets three
/// seconds) before the run ends without it.
pub const ABORT_GRACE: Duration = Duration::from_secs(5);
/// How long a run stopped at its deadline waits for its session to close (SessionEnd
/// hooks, MCP servers) once the result is out.
pub const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The wall deadline of each turn: `--max-turn-seconds`, else the setting
/// `maxTurnSeconds`; `None` when neither is set or it is 0.
pub fn turn_deadline(
    args: &crate::args::Args,
    assembled: &crate::assemble::Assembled,
) -> Option<Duration> {
    let seconds = args.max_turn_seconds.or(assembled.max_turn_seconds);
    seconds.filter(|s| *s > 0).map(Duration::from_secs)
}

/// How often keepalive lines are written unless `ROBOTA_KEEPALIVE_MS` says otherwise.
const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(10);

/// The interval between keepalive lines: `ROBOTA_KEEPALIVE_MS` (milliseconds, at least 10)
/// or ten seconds.
pub fn keepalive_interval() -> Duration {
    std::env::var("ROBOTA_KEEPALIVE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|ms| Duration::from_millis(ms.max(10)))
        .unwrap_or(DEFAULT_KEEPALIVE)
}

/// A tool call that runs now.
struct RunningTool {
    id: String,
    name: String,
    started: Instant,
}

/// A hook that runs now.
struct RunningHook {
    id: String,
    name: String,
    label: String,
    started: Instant,
}

/// What the running turn waits on, kept up to date from its events.
pub struct TurnWatch {
    /// `anthropic at http://…`: the provider, as the deadline error names it.
    provider: String,
    /// When the model call in flight began, if one is.
    model_call: Option<Instant>,
    tools: Vec<RunningTool>,
    hooks: Vec<RunningHook>,
    /// A submission has started and not ended: it hears an abort (before it starts, the
    /// session may be busy elsewhere, e.g. in a SessionStart hook).
    in_turn: bool,
}

impl TurnWatch {
    /// A watch of a session whose provider is reached at `endpoint`.
    pub fn new(endpoint: &ProviderEndpoint) -> Self {
        let provider = match (endpoint.provider.as_str(), endpoint.base_url.as_str()) {
            ("", _) => "the provider".to_string(),
            (name, "") => format!("the provider ({name})"),
            (name, url) => format!("the provider ({name} at {url})"),
        };
        TurnWatch {
            provider,
            model_call: None,
            tools: Vec::new(),
            hooks: Vec::new(),
            in_turn: false,
        }
    }

    /// Whether a submission runs now (it started and has not ended).
    pub fn in_turn(&self) -> bool {
        self.in_turn
    }

    /// Notes what `event` starts or ends.
    pub fn observe(&mut self, event: &SessionEvent) {
        let now = Instant::now();
        match event {
            SessionEvent::SubmissionStarted { .. } => {
                self.reset();
                self.model_call = Some(now);
                self.in_turn = true;
            }
            SessionEvent::SubmissionEnded { .. } => {
                self.reset();
                self.in_turn = false;
            }
            SessionEvent::AssistantMessage { .. } => self.model_call = None,
            SessionEvent::ToolResults(_) => self.model_call = Some(now),
            SessionEvent::ToolStarted { id, name, .. } => {
                self.model_call = None;
                self.tools.push(RunningTool {
                    id: id.clone(),
                    name: name.clone(),
                    started: now,
                });
            }
            SessionEvent::ToolFinished { id, .. } => self.tools.retain(|t| t.id != *id),
            SessionEvent::HookStarted {
                hook_id,
                hook_name,
                label,
                ..
            } => self.hooks.push(RunningHook {
                id: hook_id.clone(),
                name: hook_name.clone(),
                label: label.clone(),
                started: now,
            }),
            SessionEvent::HookFinished(record) => self.hooks.retain(|h| h.id != record.hook_id),
            _ => {}
        }
    }

    fn reset(&mut self) {
        self.model_call = None;
        self.tools.clear();
        self.hooks.clear();
    }

    /// What the turn waits on now, for people: the hooks first (they hold tools and model
    /// calls up), then the tools, then the provider.
    pub fn waiting_on(&self) -> String {
        if !self.hooks.is_empty() {
            return join(self.hooks.iter().map(describe_hook));
        }
        if !self.tools.is_empty() {
            return join(self.tools.iter().map(|t| describe_tool(&t.name)));
        }
        match self.model_call {
            Some(_) => format!("{}: no complete answer yet", self.provider),
            None => "robota itself between steps".to_string(),
        }
    }

    /// The error that ends a turn whose deadline of `limit` passed.
    pub fn deadline_error(&self, limit: Duration) -> TurnError {
        TurnError::new(
            ErrorKind::Timeout,
            format!(
                "The turn ran past its deadline of {} s, waiting on {}",
                limit.as_secs(),
                self.waiting_on()
            ),
        )
        .with_hint("raise --max-turn-seconds (setting maxTurnSeconds), or 0 for no deadline")
    }

    /// The keepalive lines due now (see the module header), for a stream whose session is
    /// `session_id`; `every` is the interval between them (a wait shorter than half of it
    /// is not worth a line yet).
    pub fn keepalive_lines(&self, session_id: &str, every: Duration) -> Vec<Value> {
        let now = Instant::now();
        let every = every / 2;
        let long_tools: Vec<Value> = self
            .tools
            .iter()
            .filter(|t| now.duration_since(t.started) >= every)
            .map(|t| {
                json!({
                    "type": "tool_progress",
                    "tool_use_id": t.id,
                    "tool_name": t.name,
                    "parent_tool_use_id": null,
                    "elapsed_time_seconds": seconds(now.duration_since(t.started)),
                    "uuid": uuid::Uuid::new_v4().to_string(),
                    "session_id": session_id,
                })
            })
            .collect();
        if !self.tools.is_empty() {
            return long_tools;
        }
        let since = self
            .hooks
            .iter()
            .map(|h| h.started)
            .min()
            .or(self.model_call);
        match since.map(|s| now.duration_since(s)) {
            Some(elapsed) if elapsed >= every => vec![json!({
                "type": "system",
                "subtype": "keepalive",
                "waiting_on": self.waiting_on(),
                "elapsed_time_seconds": seconds(elapsed),
                "uuid": uuid::Uuid::new_v4().to_string(),
                "session_id": session_id,
            })],
            _ => Vec::new(),
        }
    }
}

fn seconds(elapsed: Duration) -> f64 {
    (elapsed.as_secs_f64() * 10.0).round() / 10.0
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join(" and ")
}

fn describe_hook(hook: &RunningHook) -> String {
    format!("the {} hook `{}`", hook.name, hook.label)
}

/// `the Bash tool`; an MCP tool (`mcp__<server>__<tool>`) names its server and tool.
fn describe_tool(name: &str) -> String {
    match name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => format!("the MCP server `{server}` (its tool `{tool}`)"),
        None => format!("the {name} tool"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_hooks_and_the_provider_are_named() {
        let endpoint = ProviderEndpoint {
            provider: "anthropic".into(),
            base_url: "http://127.0.0.1:9".into(),
            ..ProviderEndpoint::default()
        };
        let mut watch = TurnWatch::new(&endpoint);
        assert_eq!(watch.waiting_on(), "robota itself between steps");
        watch.model_call = Some(Instant::now());
        assert_eq!(
            watch.waiting_on(),
            "the provider (anthropic at http://127.0.0.1:9): no complete answer yet"
        );
        watch.observe(&SessionEvent::ToolStarted {
            id: "t1".into(),
            name: "mcp__fake__stall".into(),
            input: Value::Null,
        });
        assert_eq!(
            watch.waiting_on(),
            "the MCP server `fake` (its tool `stall`)"
        );
        watch.observe(&SessionEvent::HookStarted {
            hook_id: "h1".into(),
            hook_name: "PreToolUse:Bash".into(),
            event: crate::core::hooks::HookEvent::PreToolUse,
            label: "sleep 1000".into(),
        });
        assert_eq!(watch.waiting_on(), "the PreToolUse:Bash hook `sleep 1000`");
        assert_eq!(describe_tool("Bash"), "the Bash tool");
    }

    #[test]
    fn keepalive_names_long_tools_only() {
        let mut watch = TurnWatch::new(&ProviderEndpoint::default());
        watch.observe(&SessionEvent::ToolStarted {
            id: "t1".into(),
            name: "Bash".into(),
            input: Value::Null,
        });
        assert!(
            watch
                .keepalive_lines("s", Duration::from_secs(60))
                .is_empty()
        );
        let lines = watch.keepalive_lines("s", Duration::ZERO);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["type"], "tool_progress");
        assert_eq!(lines[0]["tool_name"], "Bash");
        assert_eq!(lines[0]["tool_use_id"], "t1");
    }
}
