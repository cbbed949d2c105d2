//! The session's OpenTelemetry export (`robota-telemetry`), fed from its events: each
//! [`SessionEvent`] the session sends its clients is also seen here and turned into
//! Claude Code's metrics and events — prompts, provider calls and their usage and cost,
//! permission decisions, tool results, lines changed, commits and pull requests made, the
//! time the session worked, compactions and sandbox refusals. Configured from the `env` of
//! the user's, `--settings` and managed settings files over the process environment (a
//! project's files may not say where telemetry goes); off unless
//! `CLAUDE_CODE_ENABLE_TELEMETRY` or `ROBOTA_ENABLE_TELEMETRY` is set.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use robota_core::ToolDisplay;
use robota_telemetry::{
    ApiError, ApiRequest, AssistantResponse, Compaction, Decision, DecisionSource, Identity,
    RetriesExhausted, StartType, Telemetry, TelemetryConfig, ToolDecision, ToolResult,
};
use serde_json::Value;

use crate::commands::Submission;
use crate::errors::ErrorKind;
use crate::events::{Outcome, SessionEvent, TurnEnd};
use crate::settings::Settings;

/// The longest a session's end waits for the collector to take what is queued, unless
/// `ROBOTA_TELEMETRY_FLUSH_MS` says otherwise.
pub const FLUSH_BUDGET: Duration = Duration::from_millis(1000);

/// The most one wait between a turn's end and the next submission counts as the user's
/// active time (`claude_code.active_time.total`, `type` `user`). Reading an answer and
/// writing the next prompt takes seconds to a few minutes; a longer wait is the person
/// away from the terminal (a meeting, another window), which is not time spent with
/// robota, so it counts only this much.
pub const USER_GAP_CAP: Duration = Duration::from_secs(5 * 60);

/// The tools whose permission decisions Claude Code counts as code edits.
const EDIT_TOOLS: [&str; 4] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// What robota's sandbox appends to a command's result when it looks like the sandbox
/// stopped it (`robota_tools::sandbox::failure_hint`).
const SANDBOX_HINT: &str = "This command ran in robota's sandbox";

/// A session's telemetry and what it remembers between events.
#[derive(Debug)]
pub struct SessionTelemetry {
    telemetry: Telemetry,
    seen: Mutex<Seen>,
    /// How long [`shutdown`](Self::shutdown) waits at most.
    flush_budget: Duration,
    /// A person is at the terminal: the waits between turns are their active time.
    interactive: bool,
}

#[derive(Debug, Default)]
struct Seen {
    /// Calls a person was asked about, by `tool_use_id`.
    asked: HashSet<String>,
    /// The decision that let each running call run, by `tool_use_id`.
    decided: HashMap<String, (Decision, DecisionSource)>,
    /// The model of the latest state.
    model: String,
    /// The retries of the provider call under way (the last `Retrying` attempt).
    retries: u32,
    /// When the last submission ended, while none runs (the user's turn).
    idle_since: Option<Instant>,
    /// The permission mode of the latest state.
    mode: Option<robota_core::permission::PermissionMode>,
    /// When the provider call under way began (roughly: the submission's start, or the
    /// end of the last call or tool run before it).
    call_began: Option<Instant>,
    /// When the compaction under way began.
    compact_began: Option<Instant>,
}

impl SessionTelemetry {
    /// The telemetry the settings' `env` and the process environment ask for, started for
    /// session `session_id`; `None` when it is off. `interactive` when a person is at the
    /// terminal (their time between turns is recorded); the installation's anonymous
    /// `user.id` is kept in `robota_home`. What cannot be honoured, or why it could not
    /// start, goes to `warnings`.
    pub(crate) fn from_settings(
        settings: &Settings,
        robota_home: &Path,
        session_id: &str,
        start: StartType,
        interactive: bool,
        warnings: &mut Vec<String>,
    ) -> Option<Self> {
        // Not a project file's `env`: it could send the user's OTLP headers elsewhere.
        let env = settings.env_outside_project();
        let lookup = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, v)| k == name && !v.trim().is_empty())
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
        };
        let mut notes = Vec::new();
        let config = TelemetryConfig::from_lookup(&lookup, &mut notes);
        warnings.extend(notes.into_iter().map(|n| format!("telemetry: {n}")));
        let config = config?;
        let who = Identity {
            session_id: session_id.to_string(),
            user_id: installation_id(robota_home, warnings),
        };
        let telemetry = match Telemetry::start(config, env!("CARGO_PKG_VERSION"), who) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!("telemetry is off: {e}"));
                return None;
            }
        };
        telemetry.session_started(start);
        let flush_budget = lookup("ROBOTA_TELEMETRY_FLUSH_MS")
            .and_then(|ms| ms.trim().parse().ok())
            .map_or(FLUSH_BUDGET, Duration::from_millis);
        Some(SessionTelemetry {
            telemetry,
            seen: Mutex::new(Seen::default()),
            flush_budget,
            interactive,
        })
    }

    /// Flushes what is queued, waiting at most the flush budget ([`FLUSH_BUDGET`]).
    pub(crate) fn shutdown(&self) {
        self.telemetry.shutdown(self.flush_budget);
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records what `event` says; `subagent` when a subagent's run sent it.
    pub(crate) fn observe(&self, event: &SessionEvent) {
        self.observe_from(event, "main");
    }

    fn observe_from(&self, event: &SessionEvent, source: &str) {
        let t = &self.telemetry;
        match event {
            SessionEvent::State(state) => self.state(state, source),
            SessionEvent::AssistantMessage { message, model, .. } => {
                let text = message.text();
                if !text.is_empty() {
                    t.assistant_response(&AssistantResponse {
                        text: &text,
                        model,
                        query_source: source,
                    });
                }
            }
            SessionEvent::SubmissionStarted { submission, .. } => {
                self.submission_started(submission, source);
            }
            SessionEvent::SubmissionEnded { outcome, .. } => {
                self.submission_ended(outcome, source);
            }
            SessionEvent::Usage {
                usage,
                model,
                cost_usd,
                api_duration,
            } => {
                {
                    let mut seen = self.seen();
                    seen.retries = 0;
                    seen.call_began = Some(Instant::now());
                }
                t.api_request(&ApiRequest {
                    model,
                    usage,
                    cost_usd: *cost_usd,
                    duration: *api_duration,
                    query_source: source,
                });
            }
            SessionEvent::Retrying { attempt, error, .. } => {
                let model = {
                    let mut seen = self.seen();
                    seen.retries = *attempt;
                    seen.model.clone()
                };
                t.api_error(&ApiError {
                    model: &model,
                    error,
                    status_code: None,
                    attempt: *attempt,
                });
            }
            SessionEvent::PermissionRequest(request) => {
                self.seen().asked.insert(request.tool_use_id.clone());
            }
            SessionEvent::ToolStarted { id, name, input } => {
                self.decided(id, name, input, Decision::Accept);
            }
            SessionEvent::PermissionDenied {
                tool_use_id,
                tool_name,
                input,
                ..
            } => self.decided(tool_use_id, tool_name, input, Decision::Reject),
            SessionEvent::ToolFinished { .. } => {
                self.seen().call_began = Some(Instant::now());
                self.tool_finished(event);
            }
            SessionEvent::CompactStarted { .. } => {
                self.seen().compact_began = Some(Instant::now());
            }
            SessionEvent::Compacted {
                trigger,
                pre_tokens,
                post_tokens,
                ..
            } => {
                let began = self.seen().compact_began.take();
                t.compaction(&Compaction {
                    trigger: trigger_name(*trigger),
                    duration: began.map(|b| b.elapsed()),
                    pre_tokens: *pre_tokens,
                    post_tokens: *post_tokens,
                });
            }
            SessionEvent::Subagent { event, .. } => self.observe_from(event, "subagent"),
            _ => {}
        }
    }

    /// The session's id and model; a change of the main session's permission mode is
    /// `claude_code.permission_mode_changed`.
    fn state(&self, state: &crate::events::SessionState, source: &str) {
        self.telemetry.set_session_id(&state.session_id);
        let before = {
            let mut seen = self.seen();
            seen.model = state.model.clone();
            if source == "main" {
                seen.mode.replace(state.mode)
            } else {
                None
            }
        };
        if let Some(before) = before.filter(|b| *b != state.mode) {
            self.telemetry
                .permission_mode_changed(before.as_str(), state.mode.as_str());
        }
    }

    /// A prompt is `claude_code.user_prompt`; in an interactive session the wait since the
    /// last submission ended was the user's active time.
    fn submission_started(&self, submission: &Submission, source: &str) {
        self.seen().call_began = Some(Instant::now());
        if source == "main" {
            let idle_since = self.seen().idle_since.take();
            if let Some(since) = idle_since.filter(|_| self.interactive) {
                let time = user_active_time(since, Instant::now());
                self.telemetry.active_time("user", time);
            }
        }
        if let Submission::Prompt(text) | Submission::PromptWithImages { text, .. } = submission {
            self.telemetry.user_prompt(text);
        }
    }

    /// The session worked for the submission's duration; a provider failure ended it.
    fn submission_ended(&self, outcome: &Outcome, source: &str) {
        self.telemetry.active_time("cli", outcome.duration);
        if source == "main" {
            self.seen().idle_since = Some(Instant::now());
        }
        let (model, retries, call_began) = {
            let mut seen = self.seen();
            let retries = std::mem::take(&mut seen.retries);
            (seen.model.clone(), retries, seen.call_began.take())
        };
        if let TurnEnd::Error(error) = &outcome.end
            && is_provider_failure(error.kind)
        {
            self.telemetry.api_error(&ApiError {
                model: &model,
                error: &error.message,
                status_code: error.status,
                attempt: retries + 1,
            });
            if retries > 0 {
                self.telemetry.api_retries_exhausted(&RetriesExhausted {
                    model: &model,
                    error: &error.message,
                    status_code: error.status,
                    total_attempts: retries + 1,
                    total_retry_duration: call_began.map(|b| b.elapsed()).unwrap_or_default(),
                });
            }
        }
    }

    /// A permission decision: a person's when they were asked, the configuration's
    /// otherwise.
    fn decided(&self, id: &str, name: &str, input: &Value, decision: Decision) {
        let source = {
            let mut seen = self.seen();
            let source = match (seen.asked.remove(id), decision) {
                (false, _) => DecisionSource::Config,
                (true, Decision::Accept) => DecisionSource::UserTemporary,
                (true, Decision::Reject) => DecisionSource::UserReject,
            };
            if decision == Decision::Accept {
                seen.decided.insert(id.to_string(), (decision, source));
            }
            source
        };
        let language = EDIT_TOOLS.contains(&name).then(|| language_of(input));
        self.telemetry.tool_decision(&ToolDecision {
            tool_name: name,
            tool_use_id: id,
            decision,
            source,
            edit_language: language,
        });
    }

    fn tool_finished(&self, event: &SessionEvent) {
        let SessionEvent::ToolFinished {
            id,
            name,
            input,
            content,
            is_error,
            display,
            duration,
        } = event
        else {
            return;
        };
        let t = &self.telemetry;
        let decision = self.seen().decided.remove(id.as_str());
        t.tool_result(&ToolResult {
            tool_name: name,
            tool_use_id: id,
            success: !is_error,
            duration: *duration,
            decision,
            input_size_bytes: input.to_string().len(),
            result_size_bytes: content.len(),
        });
        if let Some(ToolDisplay::FileDiff { before, after, .. }) = display
            && !is_error
        {
            let (added, removed) = changed_lines(before.as_deref().unwrap_or(""), after);
            t.lines_changed(added, removed);
        }
        if name == "Bash" {
            self.bash_finished(input, content, *is_error);
        }
    }

    /// A Bash call: a `git commit` or a pull request made, or a refusal by the sandbox.
    fn bash_finished(&self, input: &Value, content: &str, is_error: bool) {
        let t = &self.telemetry;
        if is_error {
            if content.contains(SANDBOX_HINT) {
                t.sandbox_refusal("Bash");
            }
            return;
        }
        let command = input.get("command").and_then(Value::as_str).unwrap_or("");
        for words in simple_commands(command) {
            match words.as_slice() {
                ["git", rest @ ..] if git_subcommand(rest) == Some("commit") => t.commit(),
                ["gh", "pr", "create", ..] | ["glab", "mr", "create", ..] => t.pull_request(),
                _ => {}
            }
        }
    }
}

/// The file in `$ROBOTA_HOME` that keeps the installation's anonymous id.
const INSTALLATION_ID_FILE: &str = "telemetry-user-id";

/// The anonymous id of this installation (`user.id`, as Claude Code's): a random UUID made
/// the first time telemetry is on and kept in `robota_home`, so a dashboard can count
/// distinct users without knowing who they are. `None` (and said) when it cannot be kept.
fn installation_id(robota_home: &Path, warnings: &mut Vec<String>) -> Option<String> {
    let path = robota_home.join(INSTALLATION_ID_FILE);
    if let Ok(text) = std::fs::read_to_string(&path)
        && let Ok(id) = uuid::Uuid::parse_str(text.trim())
    {
        return Some(id.to_string());
    }
    let id = uuid::Uuid::new_v4().to_string();
    let kept = std::fs::create_dir_all(robota_home)
        .and_then(|()| crate::checkpoint::write_atomically(&path, id.as_bytes()));
    match kept {
        Ok(()) => Some(id),
        Err(e) => {
            warnings.push(format!(
                "telemetry: cannot keep the anonymous user.id in {}: {e}; it is left out",
                path.display()
            ));
            None
        }
    }
}

/// The user's active time in a wait that began at `since` and ended at `now`: all of it, up
/// to [`USER_GAP_CAP`].
fn user_active_time(since: Instant, now: Instant) -> Duration {
    now.saturating_duration_since(since).min(USER_GAP_CAP)
}

/// The words of each simple command of a command line (split at `&&`, `||`, `;`, `|` and
/// newlines; good enough to spot `git … commit` and `gh pr create`).
fn simple_commands(line: &str) -> Vec<Vec<&str>> {
    line.split(['&', '|', ';', '\n'])
        .map(|part| part.split_whitespace().collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect()
}

/// The subcommand of `git`'s arguments `rest`: the first word that is not an option or
/// the value of `-c`/`-C`.
fn git_subcommand<'a>(rest: &[&'a str]) -> Option<&'a str> {
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        match *word {
            "-c" | "-C" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => return Some(w),
        }
    }
    None
}

/// The provider failures (`claude_code.api_error`), as against hooks, commands and
/// configuration.
fn is_provider_failure(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Auth
            | ErrorKind::Permission
            | ErrorKind::RateLimit
            | ErrorKind::Quota
            | ErrorKind::Overloaded
            | ErrorKind::ContextTooLong
            | ErrorKind::InvalidRequest
            | ErrorKind::Network
            | ErrorKind::Timeout
            | ErrorKind::Server
            | ErrorKind::StreamCut
            | ErrorKind::InvalidResponse
    )
}

fn trigger_name(trigger: crate::events::CompactTrigger) -> &'static str {
    match trigger {
        crate::events::CompactTrigger::Manual => "manual",
        crate::events::CompactTrigger::Auto => "auto",
    }
}

/// Lines added and removed between two texts.
fn changed_lines(before: &str, after: &str) -> (u64, u64) {
    let diff = similar::TextDiff::from_lines(before, after);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// The language of the file an edit tool's input names, as Claude Code reports it.
fn language_of(input: &Value) -> &'static str {
    let path = ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let extension = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match extension.as_str() {
        "rs" => "Rust",
        "py" => "Python",
        "ts" | "tsx" => "TypeScript",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "md" | "markdown" => "Markdown",
        "go" => "Go",
        "java" => "Java",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" => "C++",
        "rb" => "Ruby",
        "sh" | "bash" => "Shell",
        "json" => "JSON",
        "yaml" | "yml" => "YAML",
        "toml" => "TOML",
        "html" => "HTML",
        "css" => "CSS",
        "ipynb" => "Jupyter Notebook",
        _ => "unknown",
    }
}

/// `claude_code.session.count`'s `start_type` for a session started from `start_source`
/// (`startup`, `resume`) — `--continue` resumes the latest.
pub(crate) fn start_type(
    start_source: &str,
    resume: Option<&crate::assembly::ResumeFrom>,
) -> StartType {
    match (start_source, resume) {
        ("resume", Some(crate::assembly::ResumeFrom::Latest)) => StartType::Continue,
        ("resume", _) => StartType::Resume,
        _ => StartType::Fresh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installation_id_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("robota-home");
        let mut warnings = Vec::new();
        let first = installation_id(&home, &mut warnings).unwrap();
        assert!(uuid::Uuid::parse_str(&first).is_ok());
        assert_eq!(installation_id(&home, &mut warnings), Some(first));
        // A home that cannot be made: no id, and a word about it.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "").unwrap();
        assert_eq!(installation_id(&blocked.join("home"), &mut warnings), None);
        assert!(warnings[0].contains("user.id"), "{warnings:?}");
    }

    #[test]
    fn the_user_s_time_is_the_wait_between_turns_capped() {
        let ended = Instant::now();
        let later = |secs| ended + Duration::from_secs(secs);
        assert_eq!(user_active_time(ended, later(42)), Duration::from_secs(42));
        assert_eq!(user_active_time(ended, later(4 * 3600)), USER_GAP_CAP);
        // A clock read out of order counts nothing rather than failing.
        assert_eq!(user_active_time(later(5), ended), Duration::ZERO);
    }

    #[test]
    fn lines_added_and_removed_count_the_diff() {
        assert_eq!(changed_lines("", "a\nb\n"), (2, 0));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), (1, 1));
    }

    #[test]
    fn commits_and_pull_requests_are_spotted_in_command_lines() {
        let commands =
            simple_commands("git add . && git -c user.name=t commit -m x; gh pr create --fill");
        assert_eq!(git_subcommand(&commands[1][1..]), Some("commit"));
        assert_eq!(git_subcommand(&["log", "--grep", "commit"]), Some("log"));
        assert_eq!(commands[2][..3], ["gh", "pr", "create"]);
    }

    #[test]
    fn edit_language_follows_the_extension() {
        assert_eq!(
            language_of(&serde_json::json!({"file_path": "/x/a.PY"})),
            "Python"
        );
        assert_eq!(
            language_of(&serde_json::json!({"file_path": "notes"})),
            "unknown"
        );
    }
}
