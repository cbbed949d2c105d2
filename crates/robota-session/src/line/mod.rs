//! The session log's line format, one typed enum shared by the writer (`log`), the replay
//! and the session store: [`LogLine`] is tagged by `type` — the `session` header, `user` /
//! `assistant` message lines in Claude Code's transcript shape, and `event` lines whose
//! [`LogEvent`] is tagged by `event`. Line and event types this version does not know
//! (a later version's, or another tool's such as Claude Code's `summary`) read as
//! `Unknown` and are skipped. Also the one header constructor and the one timestamp format
//! (RFC 3339 UTC with milliseconds, as Claude Code writes it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, Error as _};
use serde::ser::{Error as _, SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use robota_core::{Block, Message, MessageState, ProviderErrorKind, Role, TodoItem, Usage};

use crate::error::HeaderError;

/// How the compaction summary is introduced at the head of the history (Claude Code's
/// words, so a model trained on its sessions reads it as it is meant).
pub const CONTEXT_SUMMARY_PREFIX: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

/// Keys of an event line that are the line's, not the event's.
const EVENT_LINE_KEYS: [&str; 4] = ["type", "event", "sessionId", "timestamp"];

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LogLine {
    /// The first line.
    Session(SessionHeader),
    /// A user message: a prompt, tool results, a note.
    User(MessageLine),
    /// A model's answer.
    Assistant(MessageLine),
    /// Anything else the session records (see [`LogEvent`]).
    Event(EventLine),
    /// A line type this version does not know; never written.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl LogLine {
    /// Reads one line. The same as deserialising a `LogLine`, but without first buffering
    /// the whole line to find its `type` (replay reads thousands of message lines).
    pub fn from_slice(line: &[u8]) -> serde_json::Result<LogLine> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: Option<std::borrow::Cow<'a, str>>,
        }
        let kind = serde_json::from_slice::<Kind>(line)?.kind;
        Ok(match kind.as_deref() {
            Some("session") => LogLine::Session(serde_json::from_slice(line)?),
            Some("user") => LogLine::User(serde_json::from_slice(line)?),
            Some("assistant") => LogLine::Assistant(serde_json::from_slice(line)?),
            Some("event") => LogLine::Event(serde_json::from_slice(line)?),
            Some(_) => LogLine::Unknown,
            None => {
                return Err(<serde_json::Error as serde::de::Error>::custom(
                    "the line has no type",
                ));
            }
        })
    }
}

/// The first line of every log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// The session's id, the log's file name without `.jsonl`.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// The directory the session was started in.
    pub cwd: PathBuf,
    /// RFC 3339 (written with milliseconds, UTC).
    #[serde(default)]
    pub created: String,
    /// The robota version that created the log.
    #[serde(default)]
    pub version: String,
    /// The model at the start (later `model` events change it).
    #[serde(default)]
    pub model: String,
    /// The name of the provider the session talked to.
    #[serde(default)]
    pub provider: String,
    /// The id of the session this one was forked from.
    #[serde(
        rename = "forkedFrom",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub forked_from: Option<String>,
    /// The git branch checked out when the session began (shown by the picker). Claude
    /// Code writes it on every message line instead; older logs have neither.
    #[serde(rename = "gitBranch", default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
}

impl SessionHeader {
    /// The header of a session created now by this version of robota: the one constructor
    /// every new log (and fork) uses.
    pub fn new(session_id: &str, cwd: &Path, model: &str, provider: &str) -> Self {
        SessionHeader {
            session_id: session_id.to_string(),
            cwd: cwd.to_path_buf(),
            created: now_rfc3339(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            model: model.to_string(),
            provider: provider.to_string(),
            forked_from: None,
            git_branch: None,
        }
    }

    /// Reads a header line; the error says what is wrong with it.
    pub fn from_line(line: &Value) -> Result<SessionHeader, HeaderError> {
        match LogLine::deserialize(line) {
            Ok(LogLine::Session(header)) => header.checked(),
            Ok(_) => Err(HeaderError::NotSession),
            Err(e) => Err(HeaderError::Invalid(e)),
        }
    }

    /// Reads the header from the first line's bytes; the error says what is wrong with it.
    pub fn parse(line: &[u8]) -> Result<SessionHeader, HeaderError> {
        let line = serde_json::from_slice::<Value>(line).map_err(HeaderError::NotJson)?;
        SessionHeader::from_line(&line)
    }

    fn checked(self) -> Result<SessionHeader, HeaderError> {
        if self.session_id.is_empty() {
            return Err(HeaderError::NoSessionId);
        }
        Ok(self)
    }
}

/// A `user` or `assistant` line: Claude Code's transcript shape plus our `seq` (message
/// lines ever written, compaction or not) and `state` (only when interrupted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageLine {
    /// The message's id.
    pub uuid: String,
    /// The `uuid` of the previous message line (the lines form a chain); `None` for the
    /// first.
    #[serde(rename = "parentUuid", default)]
    pub parent_uuid: Option<String>,
    /// The session that wrote the line.
    #[serde(rename = "sessionId", default)]
    pub session_id: String,
    /// When the line was written, RFC 3339.
    #[serde(default)]
    pub timestamp: String,
    /// The session's working directory.
    #[serde(default)]
    pub cwd: String,
    /// The line's number among the message lines ever written to the log, from 1; absent
    /// in Claude Code's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The message: its role, content, model, stop reason and usage.
    pub message: MessageBody,
    /// `Interrupted` when the message was cut short; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<MessageState>,
}

/// The `message` of a message line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBody {
    /// Written always; when absent the line's type says the role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Claude Code may write plain string content: it reads as one text block.
    #[serde(deserialize_with = "blocks_or_text")]
    pub content: Vec<Block>,
    /// The model that wrote an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// A usage this version cannot read is dropped, not the message.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_usage"
    )]
    pub usage: Option<Usage>,
}

/// Assistant extras written inside `message` next to the content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageExtra {
    /// The model that wrote the message.
    pub model: Option<String>,
    /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`…).
    pub stop_reason: Option<String>,
}

impl MessageLine {
    /// The line of `message`, in its place in the chain.
    pub fn new(message: &Message, extra: MessageExtra, place: LinePlace<'_>) -> Self {
        MessageLine {
            uuid: message.id.clone(),
            parent_uuid: place.parent_uuid.map(str::to_string),
            session_id: place.session_id.to_string(),
            timestamp: now_rfc3339(),
            cwd: place.cwd.to_string(),
            seq: Some(place.seq),
            message: MessageBody {
                role: Some(message.role),
                content: message.content.clone(),
                model: extra.model,
                stop_reason: extra.stop_reason,
                usage: message.usage,
            },
            state: (message.state == MessageState::Interrupted)
                .then_some(MessageState::Interrupted),
        }
    }

    /// The message this line holds; `role` is the line's type, used when the body has none.
    pub fn into_message(self, role: Role) -> Message {
        Message {
            id: self.uuid,
            role: self.message.role.unwrap_or(role),
            content: self.message.content,
            state: self.state.unwrap_or_default(),
            usage: self.message.usage,
        }
    }

    /// The `user` or `assistant` line of this message line, by its role.
    pub fn into_log_line(self) -> LogLine {
        match self.message.role {
            Some(Role::Assistant) => LogLine::Assistant(self),
            _ => LogLine::User(self),
        }
    }
}

/// Where a message line sits: its session, its parent in the chain, its number.
#[derive(Debug, Clone, Copy)]
pub struct LinePlace<'a> {
    /// The session writing the line.
    pub session_id: &'a str,
    /// The session's working directory.
    pub cwd: &'a str,
    /// The `uuid` of the previous message line; `None` for the first.
    pub parent_uuid: Option<&'a str>,
    /// The line's number among the log's message lines, from 1.
    pub seq: u64,
}

/// An `event` line: the event, stamped with the session and the time. Written as
/// `{"type":"event","event":kind,"sessionId","timestamp",…the event's fields}` (the
/// session store finds renames by that prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct EventLine {
    /// The session that wrote the line.
    pub session_id: String,
    /// When the line was written, RFC 3339.
    pub timestamp: String,
    /// What happened.
    pub event: LogEvent,
}

impl EventLine {
    /// `event` stamped now.
    pub fn new(session_id: &str, event: LogEvent) -> Self {
        EventLine {
            session_id: session_id.to_string(),
            timestamp: now_rfc3339(),
            event,
        }
    }
}

impl Serialize for EventLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = serde_json::to_value(&self.event).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("an event must serialise to an object"));
        };
        let mut map = serializer.serialize_map(None)?;
        if let Some(kind) = fields.get("event") {
            map.serialize_entry("event", kind)?;
        }
        map.serialize_entry("sessionId", &self.session_id)?;
        map.serialize_entry("timestamp", &self.timestamp)?;
        for (key, value) in &fields {
            if !EVENT_LINE_KEYS.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for EventLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(rename = "sessionId", default)]
            session_id: String,
            #[serde(default)]
            timestamp: String,
            #[serde(flatten)]
            event: LogEvent,
        }
        let raw = Raw::deserialize(deserializer)?;
        Ok(EventLine {
            session_id: raw.session_id,
            timestamp: raw.timestamp,
            event: raw.event,
        })
    }
}

/// What an event line records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LogEvent {
    /// A tool call began (after the gate allowed it).
    ToolStart {
        /// The tool's name.
        tool: String,
        /// The call's id.
        tool_use_id: String,
        /// The call's input.
        input: Value,
    },
    /// A tool call finished.
    ToolEnd {
        /// The tool's name.
        tool: String,
        /// The call's id.
        tool_use_id: String,
        /// The tool reported an error.
        is_error: bool,
        /// How long the call ran, in milliseconds.
        duration_ms: u64,
        /// The length of the output text, in bytes.
        output_chars: usize,
    },
    /// A gate decision that was not the policy's silent allow.
    Permission {
        /// The tool's name.
        tool: String,
        /// The call's id.
        tool_use_id: String,
        /// What the gate decided.
        decision: PermissionDecision,
        /// Why: the rule, the mode, the hook or the user's answer.
        reason: String,
    },
    /// One finished hook run.
    Hook(HookRun),
    /// One provider call's tokens.
    Usage {
        /// The model called.
        model: String,
        /// The tokens the provider reported.
        usage: Usage,
        /// How long the call took, in milliseconds.
        api_duration_ms: u64,
    },
    /// The context estimate after a model call.
    Context {
        /// Estimated tokens in use.
        used_tokens: u64,
        /// The model's context window, in tokens.
        window: u64,
    },
    /// The provider call is retried after an error.
    Retry {
        /// The retry's number, from 1.
        attempt: u32,
        /// The retries the policy allows.
        max_attempts: u32,
        /// The wait before the retry, in milliseconds.
        delay_ms: u64,
        /// What failed.
        error: String,
        /// The HTTP status, when the server answered.
        status: Option<u16>,
    },
    /// Everything before is summarised by `summary`; replay starts here, with the last
    /// `kept` messages before the line (the unfinished turn's) after the summary.
    CompactBoundary {
        /// The summary that stands for everything before the line.
        summary: String,
        /// The id of the summary message (a new one when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uuid: Option<String>,
        /// `manual` or `auto`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trigger: Option<String>,
        /// The context estimate before, in tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pre_tokens: Option<u64>,
        /// The context estimate after, in tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        post_tokens: Option<u64>,
        /// How many messages before the line follow the summary (0 when absent).
        #[serde(default, skip_serializing_if = "is_zero")]
        kept: usize,
    },
    /// The session's name (empty clears it). Repeated so it stays in the file's tail.
    Rename {
        /// The new name.
        #[serde(default)]
        name: String,
    },
    /// The permission mode changed.
    Mode {
        /// The new mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`).
        mode: String,
    },
    /// The model changed.
    Model {
        /// The model asked from here on.
        model: String,
    },
    /// TodoWrite's list after a call.
    Todos {
        /// The list, in order.
        todos: Vec<TodoItem>,
    },
    /// The conversation was emptied (the log keeps what was said).
    Clear {},
    /// The conversation goes on from message `to` (inclusive; with `before`, from just
    /// before it): what came after is left out from here on (the log keeps it).
    /// `--resume-session-at` and `/rewind` write it.
    Rewind {
        /// The id of the message the conversation goes on from.
        to: String,
        /// Go on from just before `to` instead of including it.
        #[serde(default, skip_serializing_if = "is_false")]
        before: bool,
    },
    /// A user prompt opened a checkpoint: `snapshot` (in the project's checkpoint store)
    /// holds the files as they were before prompt `message` ran.
    Checkpoint {
        /// The id of the prompt's message.
        message: String,
        /// The snapshot's id in the checkpoint store.
        snapshot: String,
        /// What the snapshot left out (too many files, unreadable paths).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        incomplete: Option<String>,
    },
    /// The turn of prompt `message` ended with the files as in `snapshot`; `files` changed
    /// during it, of which `not_restorable` cannot be put back (too large, unreadable).
    CheckpointFiles {
        /// The id of the prompt's message.
        message: String,
        /// The snapshot's id in the checkpoint store.
        snapshot: String,
        /// Paths of the files changed during the turn.
        #[serde(default)]
        files: Vec<String>,
        /// Those of `files` that cannot be restored.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_restorable: Vec<String>,
    },
    /// The user interrupted the turn.
    Interrupted {},
    /// A provider error ended the turn.
    Error {
        /// The error's message.
        message: String,
        /// What kind of error it is.
        kind: ProviderErrorKind,
        /// The HTTP status, when the server answered.
        status: Option<u16>,
    },
    /// The turn hit its round limit.
    MaxTurns {
        /// The tool rounds the turn ran.
        rounds: u32,
    },
    /// The context passed 95% of the window and the turn stopped.
    ContextFull {},
    /// A hook said `continue: false`.
    HookStopped {
        /// The hook's `stopReason`.
        reason: String,
    },
    /// A UserPromptSubmit hook refused the prompt.
    PromptBlocked {
        /// The hook's reason.
        reason: String,
    },
    /// What a resume needs of everything before the line, written right after each
    /// `compact_boundary`, so a resume reads the log from its last boundary on (versions
    /// that do not know it skip it).
    ResumeState(ResumeState),
    /// An event this version does not know; never written.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// The session's state as a `resume_state` event records it: what the lines before it
/// set, so a resume need not read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeState {
    /// The name of the last `rename` (`None`: never named or cleared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The permission mode of the last `mode` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The model of the last `model` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The list of the last `todos` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todos: Option<Vec<TodoItem>>,
    /// The tokens every answer before the line used, by model.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub usage_by_model: BTreeMap<String, Usage>,
    /// Message lines written before the line.
    #[serde(default)]
    pub message_lines: usize,
    /// The uuid of the last message line before the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_uuid: Option<String>,
}

/// What the gate decided about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    /// The call may run (a rule, the mode, a hook or the user allowed it).
    Allow,
    /// The call was refused.
    Deny,
    /// A hook replaced the call's input (the policy judges the new input).
    InputUpdated,
}

/// A `hook` event: one finished run, its output cut to an excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRun {
    /// A fresh id of this run.
    pub hook_id: String,
    /// The event that fired it (`PreToolUse`, `Stop`…).
    pub hook_event: String,
    /// `Event` or `Event:query` (`PreToolUse:Bash`).
    pub hook_name: String,
    /// The handler type (`command`, `http`, `prompt`…).
    pub hook_type: String,
    /// The command, URL or prompt.
    pub command: String,
    /// The command's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// `success`, `blocked`, `error`, `timeout` or `cancelled`.
    pub outcome: String,
    /// An excerpt of its standard output.
    pub stdout: String,
    /// An excerpt of its standard error.
    pub stderr: String,
    /// The notice the run produced for the user, if any.
    pub notice: Option<String>,
}

/// The user message that stands for everything before a compaction boundary.
pub fn compact_summary_message(summary: &str, id: &str) -> Message {
    Message {
        id: id.to_string(),
        role: Role::User,
        content: vec![Block::text(format!("{CONTEXT_SUMMARY_PREFIX}{summary}"))],
        state: MessageState::Complete,
        usage: None,
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The current time, RFC 3339 UTC with milliseconds, as Claude Code writes it.
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}

fn blocks_or_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Block>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<Block>),
    }
    match Content::deserialize(deserializer) {
        Ok(Content::Text(text)) => Ok(vec![Block::text(text)]),
        Ok(Content::Blocks(blocks)) => Ok(blocks),
        Err(_) => Err(D::Error::custom("content is neither text nor blocks")),
    }
}

fn lenient_usage<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Usage>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

#[cfg(test)]
mod tests;
