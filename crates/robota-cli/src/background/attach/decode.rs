//! The lines of a background session, read as session events: what `robota attach`
//! draws. Prompts (this client's, another client's, the first one) start submissions in
//! order and each `result` ends one; assistant messages and tool results become the
//! transcript's messages and tool calls (diffs rebuilt as a resumed session's are);
//! `can_use_tool` questions become permission requests, withdrawn when another client
//! answers first. Streamed deltas are drawn only live: the history has the whole
//! messages.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::core::permission::PermissionMode;
use crate::core::{Block, Message, Role};
use crate::sdk::{
    Outcome, PermissionAnswer, PermissionRequest, QueuedSubmission, RemoteSink, SessionEvent,
    Submission, SubmissionId, TurnEnd, TurnError, recorded_display,
};

/// Ids of submissions this client did not make start here (the client's own count up
/// from 1).
const FOREIGN_IDS: u64 = 1 << 40;

/// A permission answer given here, for the session: its request id and the answer.
pub(super) type Answer = (String, PermissionAnswer);

/// What the lines said so far.
pub(super) struct Decoder {
    sink: RemoteSink,
    /// Whether lines arrive as they happen (streamed deltas are drawn then).
    pub live: bool,
    next_foreign: u64,
    running: Option<SubmissionId>,
    /// Prompts seen and not started yet, oldest first.
    waiting: VecDeque<(SubmissionId, Submission)>,
    /// Prompts this client sent and has not seen come back, oldest first.
    mine: VecDeque<(SubmissionId, String)>,
    /// Tool calls made and not finished: id → (name, input).
    tools: HashMap<String, (String, Value)>,
    /// The tool call whose input streams now.
    streaming_tool: Option<String>,
    /// Questions shown here and not answered: request id → tool_use_id.
    questions: HashMap<String, String>,
    /// Request ids already answered (in the history, before they were read).
    answered: HashSet<String>,
    answers: mpsc::UnboundedSender<Answer>,
}

impl Decoder {
    /// A decoder sending to `sink`; permission answers given here come on `answers`;
    /// `answered` are the questions the history answers.
    pub fn new(
        sink: RemoteSink,
        answers: mpsc::UnboundedSender<Answer>,
        answered: HashSet<String>,
    ) -> Self {
        Decoder {
            sink,
            live: false,
            next_foreign: FOREIGN_IDS,
            running: None,
            waiting: VecDeque::new(),
            mine: VecDeque::new(),
            tools: HashMap::new(),
            streaming_tool: None,
            questions: HashMap::new(),
            answered,
            answers,
        }
    }

    /// The sink the client reads.
    pub fn sink(&self) -> &RemoteSink {
        &self.sink
    }

    /// This client sent prompt `text` as submission `id`.
    pub fn sent(&mut self, id: SubmissionId, text: String) {
        self.mine.push_back((id, text));
    }

    /// This client answered question `request_id`.
    pub fn answered_here(&mut self, request_id: &str) {
        self.questions.remove(request_id);
        self.answered.insert(request_id.to_string());
    }

    /// One line of the session.
    pub fn line(&mut self, line: &str) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return;
        };
        // A subagent's messages belong to its Agent call, not to the transcript.
        if value
            .get("parent_tool_use_id")
            .is_some_and(|p| !p.is_null())
        {
            return;
        }
        match value["type"].as_str() {
            Some("system") if value["subtype"] == "init" => self.init(&value),
            Some("user") => self.user(&value["message"]["content"]),
            Some("assistant") => self.assistant(&value["message"]),
            Some("stream_event") if self.live => self.stream_event(&value["event"]),
            Some("result") => self.result(&value),
            Some("control_request") => self.question(&value),
            Some("control_response") => self.settled(&value["response"]),
            _ => {}
        }
    }

    fn init(&mut self, value: &Value) {
        let text = |key: &str| value[key].as_str().map(str::to_string);
        let mode = text("permissionMode").and_then(|m| PermissionMode::parse(&m));
        self.sink.update_state(|state| {
            if let Some(id) = text("session_id") {
                state.session_id = id;
            }
            if let Some(model) = text("model") {
                state.model = model;
            }
            if let Some(mode) = mode {
                state.mode = mode;
            }
        });
    }

    /// A `user` message: a prompt, or the results of the tool calls.
    fn user(&mut self, content: &Value) {
        let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
        if blocks.iter().any(|b| b["type"] == "tool_result") {
            blocks.iter().for_each(|b| self.tool_result(b));
            let results = blocks
                .iter()
                .filter_map(|b| serde_json::from_value(b.clone()).ok())
                .collect();
            self.sink
                .emit(SessionEvent::ToolResults(Message::new(Role::User, results)));
            return;
        }
        let text = match content.as_str() {
            Some(text) => text.to_string(),
            None => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        };
        self.prompt(text);
    }

    fn prompt(&mut self, text: String) {
        let id = match self.mine.front() {
            Some((id, mine)) if *mine == text => {
                let id = *id;
                self.mine.pop_front();
                id
            }
            _ => {
                self.next_foreign += 1;
                SubmissionId(self.next_foreign)
            }
        };
        let submission = Submission::parse(&text);
        if self.running.is_none() {
            self.start(id, submission);
            return;
        }
        self.waiting.push_back((id, submission));
        self.sink
            .emit(SessionEvent::SubmissionQueued(QueuedSubmission {
                id,
                text,
            }));
        self.show_queue();
    }

    fn start(&mut self, id: SubmissionId, submission: Submission) {
        self.running = Some(id);
        self.sink
            .emit(SessionEvent::SubmissionStarted { id, submission });
        self.show_queue();
    }

    /// Puts the running submission and the queue in the state.
    fn show_queue(&self) {
        let queue = self
            .waiting
            .iter()
            .map(|(id, submission)| QueuedSubmission {
                id: *id,
                text: submission.text(),
            })
            .collect();
        let running = self.running;
        self.sink.update_state(|state| {
            state.running = running;
            state.queue = queue;
        });
    }

    fn assistant(&mut self, message: &Value) {
        let content: Vec<Block> = message["content"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|b| serde_json::from_value(b.clone()).ok())
            .collect();
        let message_value = message;
        let message = Message::new(Role::Assistant, content);
        let calls: Vec<(String, String, Value)> = message
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        self.streaming_tool = None;
        self.sink.emit(SessionEvent::AssistantMessage {
            message,
            stop_reason: message_value["stop_reason"].as_str().map(str::to_string),
            model: message_value["model"].as_str().unwrap_or("").to_string(),
        });
        for (id, name, input) in calls {
            self.tools.insert(id.clone(), (name.clone(), input.clone()));
            self.sink
                .emit(SessionEvent::ToolStarted { id, name, input });
        }
    }

    fn tool_result(&mut self, block: &Value) {
        let id = block["tool_use_id"].as_str().unwrap_or("").to_string();
        let (name, input) = self.tools.remove(&id).unwrap_or_default();
        let content = match &block["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        self.sink.emit(SessionEvent::ToolFinished {
            display: recorded_display(&name, &input, &content),
            id,
            name,
            input,
            content,
            is_error: block["is_error"].as_bool().unwrap_or(false),
            duration: Duration::ZERO,
        });
    }

    /// A streamed piece of the answer (Anthropic's stream events, as Claude Code sends
    /// them with `--include-partial-messages`).
    fn stream_event(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("content_block_start") if event["content_block"]["type"] == "tool_use" => {
                let block = &event["content_block"];
                let id = block["id"].as_str().unwrap_or("").to_string();
                self.streaming_tool = Some(id.clone());
                self.sink.emit(SessionEvent::ToolUseStreaming {
                    id,
                    name: block["name"].as_str().unwrap_or("").to_string(),
                });
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                let text = |key: &str| delta[key].as_str().unwrap_or("").to_string();
                match delta["type"].as_str() {
                    Some("text_delta") => self.sink.emit(SessionEvent::TextDelta(text("text"))),
                    Some("thinking_delta") => self
                        .sink
                        .emit(SessionEvent::ThinkingDelta(text("thinking"))),
                    Some("input_json_delta") => {
                        if let Some(id) = self.streaming_tool.clone() {
                            self.sink.emit(SessionEvent::ToolInputDelta {
                                id,
                                partial_json: text("partial_json"),
                            });
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn result(&mut self, value: &Value) {
        let cost = value["total_cost_usd"].as_f64();
        self.sink.update_state(|state| {
            if let Some(cost) = cost {
                state.cost_usd = Some(state.cost_usd.unwrap_or(0.0) + cost);
            }
        });
        if let Some(id) = self.running.take() {
            let outcome = Outcome {
                end: turn_end(value),
                rounds: value["num_turns"].as_u64().unwrap_or(0) as u32,
                duration: Duration::from_millis(value["duration_ms"].as_u64().unwrap_or(0)),
                result: value["result"].as_str().unwrap_or("").to_string(),
            };
            self.sink
                .emit(SessionEvent::SubmissionEnded { id, outcome });
        }
        match self.waiting.pop_front() {
            Some((id, submission)) => self.start(id, submission),
            None => self.show_queue(),
        }
    }

    /// A `can_use_tool` question: shown as a permission request unless it was answered.
    fn question(&mut self, value: &Value) {
        let request = &value["request"];
        let Some(request_id) = value["request_id"].as_str() else {
            return;
        };
        if request["subtype"] != "can_use_tool" || self.answered.contains(request_id) {
            return;
        }
        let text = |key: &str| request[key].as_str().unwrap_or("").to_string();
        let (responder, answer) = oneshot::channel();
        let asked = PermissionRequest::new(
            text("tool_use_id"),
            text("tool_name"),
            request["input"].clone(),
            text("decision_reason"),
            String::new(),
            None,
            responder,
        );
        self.questions
            .insert(request_id.to_string(), asked.tool_use_id.clone());
        let answers = self.answers.clone();
        let request_id = request_id.to_string();
        // An unanswered question dropped by the client (its turn was interrupted) is
        // refused, so that the session does not wait for it.
        tokio::spawn(async move {
            let answer = answer.await.unwrap_or(PermissionAnswer::Deny(None));
            let _ = answers.send((request_id, answer));
        });
        self.sink.emit(SessionEvent::PermissionRequest(asked));
    }

    /// A `control_response` another client sent: the question it answers is closed here.
    fn settled(&mut self, response: &Value) {
        let Some(request_id) = response["request_id"].as_str() else {
            return;
        };
        self.answered.insert(request_id.to_string());
        if let Some(tool_use_id) = self.questions.remove(request_id) {
            self.sink
                .emit(SessionEvent::PermissionWithdrawn { tool_use_id });
        }
    }
}

/// How a `result` line says its submission ended.
fn turn_end(value: &Value) -> TurnEnd {
    match value["stop_reason"].as_str() {
        Some("interrupted") => TurnEnd::Interrupted,
        Some("max_turns") => TurnEnd::MaxTurns,
        Some("context_full") => TurnEnd::ContextFull,
        _ if value["is_error"] != true => TurnEnd::Success,
        _ => TurnEnd::Error(
            serde_json::from_value::<TurnError>(value["error"].clone()).unwrap_or_else(|_| {
                TurnError::new(
                    crate::sdk::ErrorKind::CommandFailed,
                    value["result"].as_str().unwrap_or("the turn failed"),
                )
            }),
        ),
    }
}

/// The history's request ids that a `control_response` answers.
pub(super) fn answered_in(history: &[String]) -> HashSet<String> {
    history
        .iter()
        .filter(|line| line.contains("\"control_response\""))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|v| v["response"]["request_id"].as_str().map(str::to_string))
        .collect()
}
