//! [`Telemetry`]: what a session records — Claude Code's metrics and events under their
//! names and attributes, and robota's own — handed to the export pipelines. Every method
//! only queues (a counter add, a log record into the batch); none touches the network.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _};
use opentelemetry::metrics::{Counter, Meter, MeterProvider as _};
use opentelemetry_sdk::logs::SdkLogger;
use robota_core::Usage;

use crate::TelemetryError;
use crate::config::TelemetryConfig;
use crate::export::Pipelines;

/// The instrumentation scope of robota's meters and loggers.
const SCOPE: &str = "robota";

/// How the session began (`start_type` of `claude_code.session.count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartType {
    /// A new session.
    Fresh,
    /// `--resume`.
    Resume,
    /// `--continue`.
    Continue,
}

/// One provider call that answered.
#[derive(Debug, Clone, Copy)]
pub struct ApiRequest<'a> {
    /// The model called.
    pub model: &'a str,
    /// Its tokens.
    pub usage: &'a Usage,
    /// Its cost; `None` when the model's price is unknown (recorded as 0).
    pub cost_usd: Option<f64>,
    /// How long it took.
    pub duration: Duration,
    /// `main` or `subagent`.
    pub query_source: &'a str,
}

/// One provider call that failed.
#[derive(Debug, Clone, Copy)]
pub struct ApiError<'a> {
    /// The model called.
    pub model: &'a str,
    /// What failed.
    pub error: &'a str,
    /// The HTTP status, when there was a response.
    pub status_code: Option<u16>,
    /// The attempt that failed (1: the first).
    pub attempt: u32,
}

/// Whether a tool call was let run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It ran.
    Accept,
    /// It was refused.
    Reject,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
        }
    }
}

/// Who decided (Claude Code's `source` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionSource {
    /// Rules, the mode, or a tool that needs no approval.
    Config,
    /// A PreToolUse or PermissionRequest hook.
    Hook,
    /// The user, saving a rule.
    UserPermanent,
    /// The user, this once.
    UserTemporary,
    /// The user closed the question.
    UserAbort,
    /// The user said no.
    UserReject,
}

impl DecisionSource {
    fn as_str(self) -> &'static str {
        match self {
            DecisionSource::Config => "config",
            DecisionSource::Hook => "hook",
            DecisionSource::UserPermanent => "user_permanent",
            DecisionSource::UserTemporary => "user_temporary",
            DecisionSource::UserAbort => "user_abort",
            DecisionSource::UserReject => "user_reject",
        }
    }
}

/// A permission decision on a tool call.
#[derive(Debug, Clone, Copy)]
pub struct ToolDecision<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// The provider's id of the call.
    pub tool_use_id: &'a str,
    /// Run or refused.
    pub decision: Decision,
    /// Who decided.
    pub source: DecisionSource,
    /// The edited file's language, for the code-editing tools (counted in
    /// `claude_code.code_edit_tool.decision`); `None` for other tools.
    pub edit_language: Option<&'a str>,
}

/// A tool call that finished.
#[derive(Debug, Clone, Copy)]
pub struct ToolResult<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// The provider's id of the call.
    pub tool_use_id: &'a str,
    /// Whether it succeeded.
    pub success: bool,
    /// How long it ran.
    pub duration: Duration,
    /// The decision that let it run.
    pub decision: Option<(Decision, DecisionSource)>,
    /// Its input's size, as JSON.
    pub input_size_bytes: usize,
    /// Its result's size.
    pub result_size_bytes: usize,
}

pub(crate) struct Instruments {
    session: Counter<u64>,
    lines: Counter<u64>,
    pull_requests: Counter<u64>,
    commits: Counter<u64>,
    cost: Counter<f64>,
    tokens: Counter<u64>,
    edit_decisions: Counter<u64>,
    active_time: Counter<f64>,
    pub(crate) compactions: Counter<u64>,
    sandbox_refusals: Counter<u64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Self {
        let count = |name: &'static str, description: &'static str, unit: &'static str| {
            meter
                .u64_counter(name)
                .with_description(description)
                .with_unit(unit)
                .build()
        };
        let amount = |name: &'static str, description: &'static str, unit: &'static str| {
            meter
                .f64_counter(name)
                .with_description(description)
                .with_unit(unit)
                .build()
        };
        Instruments {
            session: count(
                "claude_code.session.count",
                "Count of CLI sessions started",
                "count",
            ),
            lines: count(
                "claude_code.lines_of_code.count",
                "Count of lines of code modified",
                "count",
            ),
            pull_requests: count(
                "claude_code.pull_request.count",
                "Number of pull requests created",
                "count",
            ),
            commits: count(
                "claude_code.commit.count",
                "Number of git commits created",
                "count",
            ),
            cost: amount("claude_code.cost.usage", "Cost of the session", "USD"),
            tokens: count("claude_code.token.usage", "Number of tokens used", "tokens"),
            edit_decisions: count(
                "claude_code.code_edit_tool.decision",
                "Count of code editing tool permission decisions",
                "count",
            ),
            active_time: amount(
                "claude_code.active_time.total",
                "Total active time in seconds",
                "s",
            ),
            compactions: count(
                "robota.compaction.count",
                "Count of conversation compactions",
                "count",
            ),
            sandbox_refusals: count(
                "robota.sandbox.refusal.count",
                "Count of sandboxed commands the sandbox stopped",
                "count",
            ),
        }
    }
}

/// Who the records are about: the session, and the anonymous id of this installation
/// (`user.id`). robota signs in with API keys and has no account, so Claude Code's
/// `user.account_uuid`, `organization.id` and `user.email` (from its OAuth login) have no
/// value here and are never sent; `OTEL_METRICS_INCLUDE_ACCOUNT_UUID` has nothing to turn off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The session's id (`session.id`).
    pub session_id: String,
    /// A random id kept per installation (`user.id`), when one could be kept.
    pub user_id: Option<String>,
}

/// The attributes Claude Code puts on every metric data point: `user.id`, and as the
/// configuration asks `session.id` (`OTEL_METRICS_INCLUDE_SESSION_ID`, on by default),
/// `app.version` (`OTEL_METRICS_INCLUDE_VERSION`) and `terminal.type` (`TERM_PROGRAM`).
fn metric_attributes(config: &TelemetryConfig, version: &str, who: &Identity) -> Vec<KeyValue> {
    let mut attributes = Vec::new();
    if let Some(user) = &who.user_id {
        attributes.push(KeyValue::new("user.id", user.clone()));
    }
    if config.include_session_id {
        attributes.push(KeyValue::new("session.id", who.session_id.clone()));
    }
    if config.include_version {
        attributes.push(KeyValue::new("app.version", version.to_string()));
    }
    if let Some(terminal) = &config.terminal_type {
        attributes.push(KeyValue::new("terminal.type", terminal.clone()));
    }
    attributes
}

/// What events carry beside their own attributes; changes with `/clear` and each prompt.
#[derive(Default)]
struct Current {
    who: Identity,
    prompt_id: Option<String>,
}

/// A session's telemetry: record with its methods, then [`shutdown`](Self::shutdown).
pub struct Telemetry {
    pipelines: Mutex<Option<Pipelines>>,
    instruments: Option<Instruments>,
    logger: Option<SdkLogger>,
    current: Mutex<Current>,
    sequence: AtomicU64,
    pub(crate) config: TelemetryConfig,
    version: String,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Starts the export pipelines `config` describes for the session and installation
    /// `who` names; `version` is robota's (`service.version`, and `app.version` when asked
    /// for).
    pub fn start(
        config: TelemetryConfig,
        version: &str,
        who: Identity,
    ) -> Result<Self, TelemetryError> {
        let pipelines = Pipelines::build(&config, version)?;
        let instruments = pipelines
            .meters
            .as_ref()
            .map(|p| Instruments::new(&p.meter(SCOPE)));
        let logger = pipelines.loggers.as_ref().map(|p| p.logger(SCOPE));
        Ok(Telemetry {
            pipelines: Mutex::new(Some(pipelines)),
            instruments,
            logger,
            current: Mutex::new(Current {
                who,
                prompt_id: None,
            }),
            sequence: AtomicU64::new(0),
            config,
            version: version.to_string(),
        })
    }

    /// Flushes what is queued and stops exporting, waiting at most `budget`; whether all
    /// of it was taken in time. Later records are dropped.
    pub fn shutdown(&self, budget: Duration) -> bool {
        let pipelines = self
            .pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        pipelines.is_none_or(|p| p.shutdown(budget))
    }

    /// The session's id changed (`/clear`).
    pub fn set_session_id(&self, session_id: &str) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.who.session_id != session_id {
            current.who.session_id = session_id.to_string();
        }
    }

    /// `claude_code.session.count`.
    pub fn session_started(&self, start: StartType) {
        let start_type = match start {
            StartType::Fresh => "fresh",
            StartType::Resume => "resume",
            StartType::Continue => "continue",
        };
        self.count(
            |i| &i.session,
            1,
            &[KeyValue::new("start_type", start_type)],
        );
    }

    /// `claude_code.user_prompt`: a new prompt (and a new `prompt.id` for what follows).
    /// Its text goes out only with `OTEL_LOG_USER_PROMPTS`.
    pub fn user_prompt(&self, text: &str) {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .prompt_id = Some(uuid::Uuid::new_v4().to_string());
        let prompt = if self.config.log_user_prompts {
            text
        } else {
            "<REDACTED>"
        };
        self.event(
            "claude_code.user_prompt",
            "user_prompt",
            vec![
                (
                    "prompt_length",
                    AnyValue::from(text.chars().count().to_string()),
                ),
                ("prompt", AnyValue::from(prompt.to_string())),
            ],
        );
    }

    /// `claude_code.api_request`, with `claude_code.token.usage` and
    /// `claude_code.cost.usage`.
    pub fn api_request(&self, request: &ApiRequest<'_>) {
        let usage = request.usage;
        let model = KeyValue::new("model", request.model.to_string());
        let source = KeyValue::new("query_source", request.query_source.to_string());
        for (kind, tokens) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("cacheRead", usage.cache_read_input_tokens),
            ("cacheCreation", usage.cache_creation_input_tokens),
        ] {
            self.count(
                |i| &i.tokens,
                tokens,
                &[KeyValue::new("type", kind), model.clone(), source.clone()],
            );
        }
        let cost = request.cost_usd.unwrap_or(0.0);
        self.amount(|i| &i.cost, cost, &[model, source]);
        self.event(
            "claude_code.api_request",
            "api_request",
            vec![
                ("model", AnyValue::from(request.model.to_string())),
                ("cost_usd", AnyValue::from(cost.to_string())),
                ("duration_ms", AnyValue::from(millis(request.duration))),
                (
                    "input_tokens",
                    AnyValue::from(usage.input_tokens.to_string()),
                ),
                (
                    "output_tokens",
                    AnyValue::from(usage.output_tokens.to_string()),
                ),
                (
                    "cache_read_tokens",
                    AnyValue::from(usage.cache_read_input_tokens.to_string()),
                ),
                (
                    "cache_creation_tokens",
                    AnyValue::from(usage.cache_creation_input_tokens.to_string()),
                ),
                (
                    "query_source",
                    AnyValue::from(request.query_source.to_string()),
                ),
            ],
        );
    }

    /// `claude_code.api_error`.
    pub fn api_error(&self, error: &ApiError<'_>) {
        let mut attributes = vec![
            ("model", AnyValue::from(error.model.to_string())),
            ("error", AnyValue::from(error.error.to_string())),
            ("attempt", AnyValue::from(error.attempt.to_string())),
        ];
        if let Some(status) = error.status_code {
            attributes.push(("status_code", AnyValue::from(i64::from(status))));
        }
        self.event("claude_code.api_error", "api_error", attributes);
    }

    /// `claude_code.tool_decision`, and `claude_code.code_edit_tool.decision` for the
    /// code-editing tools.
    pub fn tool_decision(&self, decision: &ToolDecision<'_>) {
        if let Some(language) = decision.edit_language {
            self.count(
                |i| &i.edit_decisions,
                1,
                &[
                    KeyValue::new("tool_name", decision.tool_name.to_string()),
                    KeyValue::new("decision", decision.decision.as_str()),
                    KeyValue::new("source", decision.source.as_str()),
                    KeyValue::new("language", language.to_string()),
                ],
            );
        }
        self.event(
            "claude_code.tool_decision",
            "tool_decision",
            vec![
                ("tool_name", AnyValue::from(decision.tool_name.to_string())),
                (
                    "tool_use_id",
                    AnyValue::from(decision.tool_use_id.to_string()),
                ),
                ("decision", AnyValue::from(decision.decision.as_str())),
                ("source", AnyValue::from(decision.source.as_str())),
            ],
        );
    }

    /// `claude_code.tool_result`.
    pub fn tool_result(&self, result: &ToolResult<'_>) {
        let mut attributes = vec![
            ("tool_name", AnyValue::from(result.tool_name.to_string())),
            (
                "tool_use_id",
                AnyValue::from(result.tool_use_id.to_string()),
            ),
            ("success", AnyValue::from(result.success.to_string())),
            ("duration_ms", AnyValue::from(millis(result.duration))),
            (
                "tool_input_size_bytes",
                AnyValue::from(result.input_size_bytes.to_string()),
            ),
            (
                "tool_result_size_bytes",
                AnyValue::from(result.result_size_bytes.to_string()),
            ),
        ];
        if let Some((decision, source)) = result.decision {
            attributes.push(("decision_type", AnyValue::from(decision.as_str())));
            attributes.push(("decision_source", AnyValue::from(source.as_str())));
        }
        self.event("claude_code.tool_result", "tool_result", attributes);
    }

    /// `claude_code.lines_of_code.count`, `type` added and removed.
    pub fn lines_changed(&self, added: u64, removed: u64) {
        for (kind, lines) in [("added", added), ("removed", removed)] {
            if lines > 0 {
                self.count(|i| &i.lines, lines, &[KeyValue::new("type", kind)]);
            }
        }
    }

    /// `claude_code.commit.count`.
    pub fn commit(&self) {
        self.count(|i| &i.commits, 1, &[]);
    }

    /// `claude_code.pull_request.count`.
    pub fn pull_request(&self) {
        self.count(|i| &i.pull_requests, 1, &[]);
    }

    /// `claude_code.active_time.total`, `type` `cli` (the session working) or `user`.
    pub fn active_time(&self, kind: &'static str, time: Duration) {
        self.amount(
            |i| &i.active_time,
            time.as_secs_f64(),
            &[KeyValue::new("type", kind)],
        );
    }

    /// `robota.sandbox.refusal.count`: a sandboxed command failed the way the sandbox
    /// makes commands fail.
    pub fn sandbox_refusal(&self, tool_name: &str) {
        self.count(
            |i| &i.sandbox_refusals,
            1,
            &[KeyValue::new("tool_name", tool_name.to_string())],
        );
    }

    /// `extra` and the standard attributes of every metric ([`metric_attributes`]).
    fn standard(&self, extra: &[KeyValue]) -> Vec<KeyValue> {
        let mut attributes = extra.to_vec();
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        attributes.extend(metric_attributes(&self.config, &self.version, &current.who));
        attributes
    }

    pub(crate) fn count(
        &self,
        which: impl Fn(&Instruments) -> &Counter<u64>,
        value: u64,
        extra: &[KeyValue],
    ) {
        if let Some(instruments) = &self.instruments {
            which(instruments).add(value, &self.standard(extra));
        }
    }

    fn amount(
        &self,
        which: impl Fn(&Instruments) -> &Counter<f64>,
        value: f64,
        extra: &[KeyValue],
    ) {
        if let Some(instruments) = &self.instruments {
            which(instruments).add(value, &self.standard(extra));
        }
    }

    /// Queues event `name` (`event.name` is `short`) with the standard attributes, its
    /// timestamp and sequence number and the current `prompt.id`.
    pub(crate) fn event(
        &self,
        name: &'static str,
        short: &'static str,
        attributes: Vec<(&'static str, AnyValue)>,
    ) {
        let Some(logger) = &self.logger else { return };
        let mut record = logger.create_log_record();
        record.set_event_name(name);
        record.set_body(AnyValue::from(name));
        record.set_timestamp(std::time::SystemTime::now());
        let (who, prompt_id) = {
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            (current.who.clone(), current.prompt_id.clone())
        };
        if let Some(user) = who.user_id {
            record.add_attribute("user.id", user);
        }
        record.add_attribute("session.id", who.session_id);
        if let Some(terminal) = &self.config.terminal_type {
            record.add_attribute("terminal.type", terminal.clone());
        }
        if self.config.include_version {
            record.add_attribute("app.version", self.version.clone());
        }
        record.add_attribute("event.name", short);
        record.add_attribute("event.timestamp", jiff::Timestamp::now().to_string());
        record.add_attribute(
            "event.sequence",
            self.sequence.fetch_add(1, Ordering::Relaxed) as i64,
        );
        if let Some(prompt_id) = prompt_id {
            record.add_attribute("prompt.id", prompt_id);
        }
        record.add_attributes(attributes);
        logger.emit(record);
    }
}

impl Drop for Telemetry {
    /// A session dropped without [`shutdown`](Telemetry::shutdown) stops its pipelines on
    /// a thread of its own: the SDK's own shutdown may wait seconds for a collector.
    fn drop(&mut self) {
        let pipelines = self
            .pipelines
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(pipelines) = pipelines {
            let _ = std::thread::Builder::new()
                .name("robota-telemetry-drop".into())
                .spawn(move || pipelines.shutdown(Duration::from_secs(1)));
        }
    }
}

/// A duration in whole milliseconds, as the events write it.
pub(crate) fn millis(duration: Duration) -> String {
    duration.as_millis().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> TelemetryConfig {
        let lookup = |name: &str| {
            [("CLAUDE_CODE_ENABLE_TELEMETRY", "1")]
                .iter()
                .chain(vars)
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        TelemetryConfig::from_lookup(&lookup, &mut Vec::new()).unwrap()
    }

    fn keys(attributes: &[KeyValue]) -> Vec<String> {
        attributes.iter().map(|kv| kv.key.to_string()).collect()
    }

    #[test]
    fn metrics_carry_the_user_the_session_and_what_the_variables_ask_for() {
        let who = Identity {
            session_id: "s-1".into(),
            user_id: Some("u-1".into()),
        };
        let plain = metric_attributes(&config(&[]), "1.2.3", &who);
        assert_eq!(keys(&plain), ["user.id", "session.id"]);
        assert_eq!(plain[1].value.as_str(), "s-1");
        let all = config(&[
            ("OTEL_METRICS_INCLUDE_VERSION", "true"),
            ("OTEL_METRICS_INCLUDE_ACCOUNT_UUID", "true"),
            ("TERM_PROGRAM", "WezTerm"),
        ]);
        let attributes = metric_attributes(&all, "1.2.3", &who);
        assert_eq!(
            keys(&attributes),
            ["user.id", "session.id", "app.version", "terminal.type"]
        );
        assert_eq!(attributes[2].value.as_str(), "1.2.3");
        // No account: nothing of Claude Code's OAuth login, whatever is asked.
        assert!(
            keys(&attributes)
                .iter()
                .all(|k| !k.contains("account") && k != "organization.id" && k != "user.email")
        );
        let without = config(&[("OTEL_METRICS_INCLUDE_SESSION_ID", "false")]);
        let anonymous = Identity {
            session_id: "s-1".into(),
            user_id: None,
        };
        assert!(metric_attributes(&without, "1.2.3", &anonymous).is_empty());
    }
}
