//! Session hooks: `if` rules, tool response shapes, and a real interactive session whose
//! permission prompt fires a Notification hook in the background; a turn whose effects a
//! barrier holds.

use super::*;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::{PermissionAnswer, Session, SessionConfig};
use robota_core::engine::TurnStop;
use robota_core::{AssistantTurn, RiskClass, StopReason, Tool, ToolContext, ToolRegistry};

fn bash(command: &str) -> ToolCall {
    ToolCall {
        start_dir: None,
        id: "t1".into(),
        name: "Bash".into(),
        input: json!({"command": command}),
        risk: RiskClass::Execute,
        argument: Some(command.into()),
    }
}

#[test]
fn if_rules_match_like_permission_rules() {
    let cwd = Path::new("/tmp");
    assert!(rule_holds(
        "Bash(git commit:*)",
        &bash("git commit -m x"),
        cwd
    ));
    assert!(rule_holds(
        "Bash(git commit:*)",
        &bash("npm test && git commit -m x"),
        cwd
    ));
    assert!(!rule_holds("Bash(git commit:*)", &bash("git push"), cwd));
    assert!(!rule_holds("Bash(git push:*)", &bash("git status"), cwd));
    assert!(rule_holds("Bash", &bash("anything"), cwd));
    assert!(!rule_holds("Edit(*.ts)", &bash("ls"), cwd));
    assert!(
        rule_holds("Bash(unclosed", &bash("ls"), cwd),
        "unparsable rules fail open"
    );
    let edit = ToolCall {
        start_dir: None,
        id: "t2".into(),
        name: "Edit".into(),
        input: json!({"file_path": "/tmp/src/a.ts"}),
        risk: RiskClass::Edit,
        argument: Some("/tmp/src/a.ts".into()),
    };
    assert!(rule_holds("Edit(src/**)", &edit, cwd));
    assert!(!rule_holds("Edit(docs/**)", &edit, cwd));
}

#[test]
fn tool_responses_take_claude_code_shapes() {
    let out = ToolOutput::ok("hello\n");
    assert_eq!(
        tool_response(&bash("echo hello"), &out)["stdout"],
        "hello\n"
    );
    let write = ToolCall {
        start_dir: None,
        id: "t".into(),
        name: "Write".into(),
        input: json!({"file_path": "/p/a.txt", "content": "x"}),
        risk: RiskClass::Edit,
        argument: Some("/p/a.txt".into()),
    };
    let response = tool_response(&write, &ToolOutput::ok("File created"));
    assert_eq!(response["filePath"], "/p/a.txt");
    assert_eq!(response["success"], true);
}

/// Answers with the scripted turns in order.
struct Scripted(Mutex<VecDeque<AssistantTurn>>);

#[async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn stream(
        &self,
        _request: &ProviderRequest,
        _events: robota_core::provider::StreamSink<'_>,
        _cancel: &CancellationToken,
    ) -> Result<robota_core::AssistantTurn, robota_core::ProviderError> {
        let next = self.0.lock().unwrap().pop_front();
        Ok(next.unwrap_or_else(|| turn(vec![robota_core::Block::text("done")])))
    }
}

fn turn(content: Vec<robota_core::Block>) -> AssistantTurn {
    let stop_reason = if content
        .iter()
        .any(|b| matches!(b, robota_core::Block::ToolUse { .. }))
    {
        StopReason::ToolUse
    } else {
        StopReason::EndTurn
    };
    AssistantTurn {
        id: None,
        model: "m".into(),
        content,
        stop_reason,
        usage: None,
    }
}

/// A provider that asks for one `Run` call, then answers "done".
fn calls_run_once() -> Scripted {
    Scripted(Mutex::new(VecDeque::from([turn(vec![
        robota_core::Block::ToolUse {
            id: "toolu_1".into(),
            name: "Run".into(),
            input: json!({}),
        },
    ])])))
}

/// A session working in `dir` whose permission questions go to a client or not.
fn config_in(dir: &std::path::Path, interactive: bool) -> SessionConfig {
    SessionConfig {
        session_id: "s-1".into(),
        cwd: dir.to_path_buf(),
        model: "m".into(),
        system_prompt: String::new(),
        max_tokens: 100,
        thinking_budget: None,
        max_rounds: None,
        context_window: 200_000,
        env: vec![],
        interactive,
        server_tools: Vec::new(),
    }
}

/// An execute-class tool that needs approval in the default mode; records that it ran.
#[derive(Default)]
struct Run(Arc<std::sync::atomic::AtomicBool>);

#[async_trait]
impl Tool for Run {
    fn name(&self) -> &str {
        "Run"
    }
    fn description(&self) -> &str {
        "runs"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn risk(&self) -> RiskClass {
        RiskClass::Execute
    }
    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }
    async fn call(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        ToolOutput::ok("ran")
    }
}

#[tokio::test]
async fn a_permission_prompt_fires_notification_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let notified = dir.path().join("notified.json");
    let hooks = json!({"Notification": [{"matcher": "permission_prompt", "hooks": [
        {"type": "command", "command": format!("cat > {0}.tmp && mv {0}.tmp {0}", notified.display())}
    ]}]});
    let (config, warnings) = HookConfig::from_hooks(&hooks, None);
    assert!(warnings.is_empty());
    let provider = calls_run_once();
    let session_config = config_in(dir.path(), true);
    let mut session = Session::new(
        session_config,
        Arc::new(provider),
        ToolRegistry::new(vec![Arc::new(Run::default())]),
        PermissionPolicy::default(),
        None,
    )
    .with_hooks(config, dir.path().to_path_buf());
    let asked = Mutex::new(0);
    let sink = |update: SessionUpdate| {
        if let SessionUpdate::PermissionAsked { responder, .. } = update {
            *asked.lock().unwrap() += 1;
            let _ = responder.send(PermissionAnswer::Allow);
        }
    };
    let outcome = session
        .run_turn(
            vec![robota_core::Block::text("go")],
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert!(matches!(outcome.stop, TurnStop::Completed(_)));
    assert_eq!(*asked.lock().unwrap(), 1);
    // The hook runs detached; wait for its output file (bounded).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !notified.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&notified).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["notification_type"], "permission_prompt");
    assert_eq!(input["message"], "Claude needs your permission to use Run");
    assert_eq!(
        input["transcript_path"], "",
        "no log: an empty transcript path"
    );
    assert_eq!(input["session_id"], "s-1");
}

#[tokio::test]
async fn the_model_is_asked_while_the_barrier_holds_but_no_tool_runs_until_it_opens() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let provider = Arc::new(calls_run_once());
    let session_config = config_in(dir.path(), false);
    let mut session = Session::new(
        session_config,
        provider.clone(),
        ToolRegistry::new(vec![Arc::new(Run(ran.clone()))]),
        PermissionPolicy::new(robota_core::permission::PermissionMode::BypassPermissions),
        None,
    );
    let (opener, barrier) = crate::barrier::EffectBarrier::new();
    session.hold_effects_until(barrier);
    let sink = |_: SessionUpdate| {};
    let cancel = CancellationToken::new();
    let turn = session.run_turn(vec![robota_core::Block::text("go")], &sink, &cancel);
    let check = async {
        // The first request went out (the scripted turn was taken) with the barrier shut.
        let mut spins = 0;
        while !provider.0.lock().unwrap().is_empty() {
            spins += 1;
            assert!(spins < 100_000, "the model was never asked");
            tokio::task::yield_now().await;
        }
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(
            !ran.load(Ordering::SeqCst),
            "a tool ran before the barrier opened"
        );
        opener.open();
    };
    let (outcome, ()) = tokio::join!(turn, check);
    assert!(matches!(outcome.stop, TurnStop::Completed(_)));
    assert!(ran.load(Ordering::SeqCst));
}
