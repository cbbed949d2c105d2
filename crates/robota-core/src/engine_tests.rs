//! The loop against a scripted provider (a stand-in for the model API) and small tools.

use super::*;
use crate::provider::AssistantTurn;
use serde_json::json;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Scripted {
    turns: Mutex<VecDeque<Result<AssistantTurn, ProviderError>>>,
    requests: Mutex<Vec<ProviderRequest>>,
}

impl Scripted {
    fn new(turns: Vec<Result<AssistantTurn, ProviderError>>) -> Self {
        Scripted {
            turns: Mutex::new(turns.into()),
            requests: Mutex::new(vec![]),
        }
    }
}

#[async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn stream(
        &self,
        request: &ProviderRequest,
        events: crate::provider::StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        self.requests.lock().unwrap().push(request.clone());
        let next = self.turns.lock().unwrap().pop_front();
        match next {
            Some(Ok(turn)) => {
                for block in &turn.content {
                    if let Block::Text { text, .. } = block {
                        events(StreamEvent::TextDelta(text.clone()));
                    }
                }
                Ok(turn)
            }
            Some(Err(e)) if e.kind == ProviderErrorKind::Cancelled => {
                events(StreamEvent::TextDelta("partial ans".into()));
                cancel.cancel();
                Err(e)
            }
            Some(Err(e)) => Err(e),
            None => Ok(text_turn("done")),
        }
    }
}

fn text_turn(text: &str) -> AssistantTurn {
    AssistantTurn {
        id: None,
        model: "m".into(),
        content: vec![Block::text(text)],
        stop_reason: StopReason::EndTurn,
        usage: Some(Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        }),
    }
}

fn tool_turn(calls: &[(&str, &str, Value)]) -> AssistantTurn {
    AssistantTurn {
        id: None,
        model: "m".into(),
        content: calls
            .iter()
            .map(|(id, name, input)| Block::ToolUse {
                id: id.to_string(),
                name: name.to_string(),
                input: input.clone(),
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
        usage: None,
    }
}

/// Echoes its `v` argument; waits for `gate` (if set) so concurrency can be observed.
struct Echo {
    name: &'static str,
    risk: RiskClass,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

#[async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "echo"
    }
    fn input_schema(&self) -> Value {
        json!({"type":"object"})
    }
    fn risk(&self) -> RiskClass {
        self.risk
    }
    fn primary_argument(&self, input: &Value) -> Option<String> {
        input["v"].as_str().map(str::to_string)
    }
    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        if input["hang"].as_bool() == Some(true) {
            ctx.cancel.cancelled().await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            return ToolOutput::error("stopped");
        }
        tokio::task::yield_now().await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        ToolOutput::ok(format!(
            "{}:{}",
            self.name,
            input["v"].as_str().unwrap_or("")
        ))
    }
}

struct AllowAll;
#[async_trait]
impl ToolGate for AllowAll {
    async fn check(&self, call: &ToolCall, _c: &CancellationToken) -> GateDecision {
        if call.argument.as_deref() == Some("forbidden") {
            GateDecision::Deny("Permission denied".into())
        } else {
            GateDecision::Allow(call.input.clone())
        }
    }
}

fn registry(peak: &Arc<AtomicUsize>) -> ToolRegistry {
    let running = Arc::new(AtomicUsize::new(0));
    ToolRegistry::new(vec![
        Arc::new(Echo {
            name: "Read",
            risk: RiskClass::Read,
            running: running.clone(),
            peak: peak.clone(),
        }),
        Arc::new(Echo {
            name: "Bash",
            risk: RiskClass::Execute,
            running,
            peak: peak.clone(),
        }),
    ])
}

fn config() -> TurnConfig {
    TurnConfig {
        model: "m".into(),
        system: "sys".into(),
        max_tokens: 1000,
        thinking_budget: None,
        max_rounds: None,
        context_window: 200_000,
        cwd: std::env::temp_dir(),
        env: vec![],
        server_tools: vec![],
        wire: None,
        read_denial: None,
    }
}

async fn run(
    provider: &Scripted,
    config: &TurnConfig,
    cancel: &CancellationToken,
) -> (TurnOutcome, Vec<Message>, Vec<EngineEvent>, usize) {
    let peak = Arc::new(AtomicUsize::new(0));
    let tools = registry(&peak);
    let events = Mutex::new(vec![]);
    let sink = |e: EngineEvent| events.lock().unwrap().push(e);
    let engine = Engine {
        provider,
        tools: &tools,
        gate: &AllowAll,
        sink: &sink,
        steering: None,
    };
    let mut history = vec![Message::user_text("go")];
    let mut tracker = ContextTracker::new(10);
    let outcome = engine
        .run_turn(&mut history, &mut tracker, config, cancel)
        .await;
    let events = events.into_inner().unwrap();
    (outcome, history, events, peak.load(Ordering::SeqCst))
}

fn results(message: &Message) -> Vec<(String, String, bool)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.clone(), content.to_string(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn reads_run_in_parallel_and_results_keep_request_order() {
    let provider = Scripted::new(vec![
        Ok(tool_turn(&[
            ("a", "Read", json!({"v":"1"})),
            ("b", "Read", json!({"v":"2"})),
            ("c", "Bash", json!({"v":"3"})),
            ("d", "Nope", json!({})),
            ("e", "Bash", json!({"v":"forbidden"})),
            ("f", "Read", json!({INVALID_INPUT_KEY: "{\"v\":"})),
        ])),
        Ok(text_turn("all done")),
    ]);
    let (outcome, history, _events, peak) =
        run(&provider, &config(), &CancellationToken::new()).await;
    assert_eq!(outcome.stop, TurnStop::Completed(StopReason::EndTurn));
    assert_eq!(outcome.rounds, 2);
    assert_eq!(peak, 2, "the two reads overlapped");
    let r = results(&history[2]);
    assert_eq!(r[0], ("a".into(), "Read:1".into(), false));
    assert_eq!(r[1], ("b".into(), "Read:2".into(), false));
    assert_eq!(r[2], ("c".into(), "Bash:3".into(), false));
    assert!(r[3].1.contains("No such tool available: Nope") && r[3].1.contains("Read, Bash"));
    assert_eq!(r[4], ("e".into(), "Permission denied".into(), true));
    assert!(r[5].2 && r[5].1.contains("not valid JSON"));
    assert_eq!(history[3].text(), "all done");
    // The second request carried the tool results.
    let requests = provider.requests.lock().unwrap();
    assert_eq!(requests[1].messages.len(), 3);
}

#[tokio::test]
async fn cancellation_answers_every_issued_tool_use() {
    let provider = Scripted::new(vec![Ok(tool_turn(&[
        ("a", "Bash", json!({"v":"1","hang":true})),
        ("b", "Bash", json!({"v":"2"})),
    ]))]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let provider_ref = &provider;
    let (outcome, history, _e, _p) = tokio::join!(
        async { run(provider_ref, &config(), &cancel).await },
        async move {
            tokio::task::yield_now().await;
            trigger.cancel();
        }
    )
    .0;
    assert_eq!(outcome.stop, TurnStop::Interrupted);
    let r = results(&history[2]);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, is_error)| *is_error));
    assert_eq!(r[1].1, INTERRUPTED_RESULT);
}

#[tokio::test]
async fn an_aborted_stream_commits_the_partial_answer_as_interrupted() {
    let provider = Scripted::new(vec![Err(ProviderError::cancelled())]);
    let (outcome, history, _e, _p) = run(&provider, &config(), &CancellationToken::new()).await;
    assert_eq!(outcome.stop, TurnStop::Interrupted);
    assert_eq!(history[1].text(), "partial ans");
    assert_eq!(history[1].state, MessageState::Interrupted);
}

#[tokio::test]
async fn the_round_cap_ends_with_a_tool_less_summary_call() {
    let provider = Scripted::new(vec![
        Ok(tool_turn(&[("a", "Read", json!({"v":"1"}))])),
        Ok(tool_turn(&[("b", "Read", json!({"v":"2"}))])),
        Ok(text_turn("summary")),
    ]);
    let mut cfg = config();
    cfg.max_rounds = Some(2);
    let (outcome, history, _e, _p) = run(&provider, &cfg, &CancellationToken::new()).await;
    assert_eq!(outcome.stop, TurnStop::MaxRounds);
    assert_eq!(outcome.rounds, 3);
    assert_eq!(history.last().unwrap().text(), "summary");
    let requests = provider.requests.lock().unwrap();
    assert!(requests[2].tools_disabled);
    assert_eq!(requests[2].messages.last().unwrap().text(), SUMMARY_REQUEST);
    assert!(!requests[1].tools_disabled);
}

#[tokio::test]
async fn context_guards_skip_results_and_refuse_rounds() {
    let provider = Scripted::new(vec![Ok(tool_turn(&[
        ("a", "Read", json!({"v":"x".repeat(4000)})),
        ("b", "Read", json!({"v":"2"})),
    ]))]);
    let mut cfg = config();
    cfg.context_window = 1500;
    let (outcome, history, _e, _p) = run(&provider, &cfg, &CancellationToken::new()).await;
    let r = results(&history[2]);
    assert!(r[0].1.starts_with("Read:xxx"));
    assert_eq!(r[1].1, SKIPPED_RESULT);
    assert_eq!(outcome.stop, TurnStop::ContextFull);
}

/// Denies the call whose argument is "halt" and asks to end the turn from then on.
struct HaltingGate(Mutex<Option<String>>);
#[async_trait]
impl ToolGate for HaltingGate {
    async fn check(&self, call: &ToolCall, _c: &CancellationToken) -> GateDecision {
        if call.argument.as_deref() == Some("halt") {
            *self.0.lock().unwrap() = Some("hook said stop".into());
            return GateDecision::Deny("stopped by hook".into());
        }
        GateDecision::Allow(call.input.clone())
    }
    fn halted(&self) -> Option<String> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_halting_gate_ends_the_turn_and_answers_every_call() {
    let provider = Scripted::new(vec![Ok(tool_turn(&[
        ("a", "Bash", json!({"v":"1"})),
        ("b", "Bash", json!({"v":"halt"})),
        ("c", "Bash", json!({"v":"3"})),
    ]))]);
    let peak = Arc::new(AtomicUsize::new(0));
    let tools = registry(&peak);
    let gate = HaltingGate(Mutex::new(None));
    let sink = |_e: EngineEvent| {};
    let engine = Engine {
        provider: &provider,
        tools: &tools,
        gate: &gate,
        sink: &sink,
        steering: None,
    };
    let mut history = vec![Message::user_text("go")];
    let mut tracker = ContextTracker::new(10);
    let outcome = engine
        .run_turn(
            &mut history,
            &mut tracker,
            &config(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.stop, TurnStop::HookStopped("hook said stop".into()));
    assert_eq!(outcome.rounds, 1);
    let r = results(&history[2]);
    assert_eq!(r[0].1, "Bash:1");
    assert_eq!(r[1], ("b".into(), "stopped by hook".into(), true));
    assert_eq!(r[2], ("c".into(), HALTED_RESULT.into(), true));
}

#[tokio::test]
async fn provider_errors_end_the_turn_with_the_error() {
    let err = ProviderError::new(ProviderErrorKind::Auth, "bad key").with_status(401);
    let provider = Scripted::new(vec![Err(err.clone())]);
    let (outcome, history, _e, _p) = run(&provider, &config(), &CancellationToken::new()).await;
    assert_eq!(outcome.stop, TurnStop::Failed(err));
    assert_eq!(history.len(), 1);
}

#[tokio::test]
async fn a_paused_turn_is_resumed_by_sending_the_answer_back() {
    let mut paused = text_turn("searching…");
    paused.stop_reason = StopReason::PauseTurn;
    let provider = Scripted::new(vec![Ok(paused), Ok(text_turn("found it"))]);
    let (outcome, history, _e, _p) = run(&provider, &config(), &CancellationToken::new()).await;
    assert_eq!(outcome.stop, TurnStop::Completed(StopReason::EndTurn));
    assert_eq!(outcome.rounds, 2);
    assert_eq!(history.last().unwrap().text(), "found it");
    let requests = provider.requests.lock().unwrap();
    assert_eq!(requests[1].messages.last().unwrap().text(), "searching…");
}
