//! The dispatcher against real `sh` processes, a loopback HTTP server and a scripted model.

use super::*;
use crate::hooks::protocol::ToolPermission;
use crate::provider::ProviderErrorKind;
use std::sync::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn env(dir: &std::path::Path) -> HookEnvironment {
    HookEnvironment {
        session_id: "sess-1".into(),
        transcript_path: Some(dir.join("log.jsonl")),
        cwd: dir.to_path_buf(),
        project_dir: dir.to_path_buf(),
        permission_mode: "default".into(),
        env: vec![("FROM_SETTINGS".into(), "yes".into())],
    }
}

fn runner(hooks: Value) -> HookRunner {
    let (config, warnings) = HookConfig::from_hooks(&hooks, None);
    assert!(warnings.is_empty(), "{warnings:?}");
    HookRunner::new(config)
}

async fn fire(
    runner: &HookRunner,
    env: &HookEnvironment,
    request: HookRequest<'_>,
) -> (HookOutcome, Vec<HookProgress>) {
    let seen = Mutex::new(Vec::new());
    let observer = |p: HookProgress| seen.lock().unwrap().push(p);
    let outcome = runner
        .fire(env, request, &observer, &CancellationToken::new())
        .await;
    (outcome, seen.into_inner().unwrap())
}

#[tokio::test]
async fn matching_hooks_get_the_stdin_json_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("input.json");
    let vars = dir.path().join("vars.txt");
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("cat > {}", out.display())},
            {"type": "command", "command": format!("echo \"$CLAUDE_PROJECT_DIR|$ROBOTA_PROJECT_DIR|$FROM_SETTINGS\" > {}", vars.display())}
        ]},
        {"matcher": "Read", "hooks": [{"type": "command", "command": "exit 2"}]}
    ]});
    let runner = runner(hooks);
    let env = env(dir.path());
    let request = HookRequest::new(
        HookEvent::PreToolUse,
        Some("Bash"),
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}),
    );
    let (outcome, progress) = fire(&runner, &env, request).await;
    assert_eq!(outcome.ran, 2, "the Read group did not run");
    assert!(outcome.blocks.is_empty());
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(input["session_id"], "sess-1");
    assert_eq!(
        input["transcript_path"],
        dir.path().join("log.jsonl").to_string_lossy().as_ref()
    );
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["tool_input"]["command"], "ls");
    assert_eq!(input["tool_use_id"], "toolu_1");
    let root = dir.path().to_string_lossy();
    assert_eq!(
        std::fs::read_to_string(&vars).unwrap().trim(),
        format!("{root}|{root}|yes")
    );
    let finished: Vec<&HookRunRecord> = progress
        .iter()
        .filter_map(|p| match p {
            HookProgress::Finished(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2);
    assert!(
        finished
            .iter()
            .all(|r| r.hook_name == "PreToolUse:Bash" && r.outcome == RunOutcome::Success)
    );
    assert_eq!(progress.len(), 4);
}

#[tokio::test]
async fn handlers_of_one_event_run_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    // Each waits for the other's marker: sequential runs would time out.
    let wait_for = |mine: &std::path::Path, theirs: &std::path::Path| {
        format!(
            "touch {}; while [ ! -e {} ]; do sleep 0.01; done; echo '{{\"systemMessage\":\"met\"}}'",
            mine.display(),
            theirs.display()
        )
    };
    let hooks = json!({"Stop": [{"hooks": [
        {"type": "command", "command": wait_for(&a, &b), "timeout": 20},
        {"type": "command", "command": wait_for(&b, &a), "timeout": 20}
    ]}]});
    let runner = runner(hooks);
    let (outcome, _) = fire(
        &runner,
        &env(dir.path()),
        HookRequest::new(HookEvent::Stop, None, json!({})),
    )
    .await;
    assert_eq!(
        outcome.system_messages,
        vec!["met".to_string(), "met".to_string()]
    );
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
}

#[tokio::test]
async fn a_hanging_hook_times_out_with_a_notice_and_decides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.3},
        {"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'"}
    ]}]});
    let runner = runner(hooks);
    let request = HookRequest::new(HookEvent::PreToolUse, Some("Bash"), json!({}));
    let (outcome, progress) = fire(&runner, &env(dir.path()), request).await;
    assert_eq!(
        outcome.permission.as_ref().unwrap().decision,
        ToolPermission::Allow
    );
    assert_eq!(outcome.notices.len(), 1);
    assert!(outcome.notices[0].contains("timed out"));
    assert!(
        progress
            .iter()
            .any(|p| matches!(p, HookProgress::Finished(r) if r.outcome == RunOutcome::TimedOut))
    );
}

#[tokio::test]
async fn if_rules_identical_handlers_and_non_tool_events() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({
        "PostToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": "echo '{\"systemMessage\":\"commit\"}'", "if": "Bash(git commit:*)"},
                {"type": "command", "command": "echo '{\"systemMessage\":\"any\"}'"}
            ]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"systemMessage\":\"any\"}'"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "echo '{\"systemMessage\":\"never\"}'", "if": "Bash"}]}]
    });
    let runner = runner(hooks);
    let env = env(dir.path());
    let is_commit = |rule: &str| rule == "Bash(git commit:*)";
    let not_commit = |_: &str| false;
    let mut request = HookRequest::new(HookEvent::PostToolUse, Some("Bash"), json!({}));
    request.condition = Some(&is_commit);
    let (outcome, _) = fire(&runner, &env, request).await;
    assert_eq!(
        outcome.system_messages,
        vec!["commit", "any"],
        "the duplicate ran once"
    );
    let mut request = HookRequest::new(HookEvent::PostToolUse, Some("Bash"), json!({}));
    request.condition = Some(&not_commit);
    let (outcome, _) = fire(&runner, &env, request).await;
    assert_eq!(outcome.system_messages, vec!["any"]);
    let (outcome, _) = fire(
        &runner,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({})),
    )
    .await;
    assert_eq!(outcome.ran, 0, "`if` handlers never run on non-tool events");
}

#[tokio::test]
async fn http_hooks_post_the_input_and_read_the_body() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut bodies = Vec::new();
        for status in ["200 OK", "500 Internal Server Error"] {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut data = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = conn.read(&mut chunk).await.unwrap();
                data.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&data).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length: usize = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if data.len() >= end + 4 + length {
                        bodies.push((text[..end].to_string(), text[end + 4..].to_string()));
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let body = r#"{"decision":"block","reason":"from http"}"#;
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            conn.write_all(response.as_bytes()).await.unwrap();
        }
        bodies
    });
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({"Stop": [{"hooks": [{"type": "http", "url": format!("http://{addr}/hook"), "headers": {"X-Hook": "yes"}}]}]});
    let runner = runner(hooks);
    let env = env(dir.path());
    let (outcome, _) = fire(
        &runner,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({"stop_hook_active": false})),
    )
    .await;
    assert_eq!(outcome.block_reason().as_deref(), Some("from http"));
    let (outcome, _) = fire(
        &runner,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({})),
    )
    .await;
    assert!(outcome.blocks.is_empty(), "a non-2xx status cannot block");
    assert!(
        outcome.notices[0].contains("HTTP 500"),
        "{:?}",
        outcome.notices
    );
    let bodies = server.await.unwrap();
    assert!(bodies[0].0.to_ascii_lowercase().contains("x-hook: yes"));
    let sent: Value = serde_json::from_str(&bodies[0].1).unwrap();
    assert_eq!(sent["hook_event_name"], "Stop");
    assert_eq!(sent["stop_hook_active"], false);
}

struct ScriptedModel(Mutex<Vec<String>>, Mutex<Vec<String>>);

#[async_trait]
impl ModelHookRunner for ScriptedModel {
    async fn ask(
        &self,
        prompt: &str,
        _model: Option<&str>,
        _cancel: &CancellationToken,
    ) -> Result<String, ProviderError> {
        self.1.lock().unwrap().push(prompt.to_string());
        self.0
            .lock()
            .unwrap()
            .pop()
            .ok_or_else(|| ProviderError::new(ProviderErrorKind::Server, "no answer"))
    }
}

#[tokio::test]
async fn prompt_hooks_ask_the_model_and_read_ok_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel(
        Mutex::new(vec![
            "not json at all".into(),
            "Sure: {\"ok\": false, \"reason\": \"tests still fail\"}".into(),
        ]),
        Mutex::new(vec![]),
    ));
    let hooks = json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the work done? $ARGUMENTS"}]}]});
    let runner = runner(hooks).with_model_runner(model.clone());
    let env = env(dir.path());
    let (outcome, _) = fire(
        &runner,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({"stop_hook_active": true})),
    )
    .await;
    assert_eq!(outcome.block_reason().as_deref(), Some("tests still fail"));
    let asked = model.1.lock().unwrap()[0].clone();
    assert!(
        asked.starts_with("Is the work done? {") && asked.contains("\"stop_hook_active\":true"),
        "{asked}"
    );
    let (outcome, _) = fire(
        &runner,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({})),
    )
    .await;
    assert!(outcome.blocks.is_empty());
    assert!(
        outcome.notices[0].contains("did not answer"),
        "{:?}",
        outcome.notices
    );
    let no_model = runner_without_model();
    let (outcome, _) = fire(
        &no_model,
        &env,
        HookRequest::new(HookEvent::Stop, None, json!({})),
    )
    .await;
    assert!(outcome.notices[0].contains("need a model"));
}

fn runner_without_model() -> HookRunner {
    runner(json!({"Stop": [{"hooks": [{"type": "agent", "prompt": "check"}]}]}))
}

#[test]
fn session_end_hooks_get_a_short_budget_unless_they_ask() {
    let (config, _) = HookConfig::from_hooks(
        &json!({"SessionEnd": [{"hooks": [
            {"type": "command", "command": "a"},
            {"type": "command", "command": "b", "timeout": 5},
            {"type": "command", "command": "c", "timeout": 600}
        ]}]}),
        None,
    );
    let handlers = &config.groups(HookEvent::SessionEnd)[0].handlers;
    let t = |i: usize| HookRunner::timeout_for(&handlers[i], HookEvent::SessionEnd);
    assert_eq!(t(0), SESSION_END_DEFAULT_TIMEOUT);
    assert_eq!(t(1), Duration::from_secs(5));
    assert_eq!(t(2), SESSION_END_MAX_TIMEOUT);
    assert_eq!(
        HookRunner::timeout_for(&handlers[0], HookEvent::Stop),
        Duration::from_secs(60)
    );
}
