//! The programs in `examples/` run as an embedding program runs them, over the real
//! Anthropic adapter against a loopback mock: the one-shot query returns and streams the
//! scripted answer, the interactive loop prints the events of a tool turn and asks about
//! its permission on its input, the custom tool writes its note — or, not allowed,
//! writes nothing — and the project session gets what the command line would read in the
//! directory (settings' rules and hooks, custom commands, the session log).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

#[allow(dead_code)] // its `main` is the example binary's entry point
#[path = "../examples/one_shot.rs"]
mod one_shot;

#[allow(dead_code)]
#[path = "../examples/interactive_loop.rs"]
mod interactive_loop;

#[allow(dead_code)]
#[path = "../examples/custom_tool.rs"]
mod custom_tool;

#[allow(dead_code)]
#[path = "../examples/project_session.rs"]
mod project_session;

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use robota::sdk::TurnEnd;
use serde_json::{Value, json};
use support::{MockServer, anthropic};

const MODEL: &str = "claude-sonnet-4-5";

/// The text of every `tool_result` block in a recorded request, with its error flag.
fn tool_results(body: &Value) -> Vec<(String, bool)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (text, b["is_error"].as_bool().unwrap_or(false))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_returns_and_streams_the_answer_with_the_project_instructions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("AGENTS.md"),
        "Always answer in haiku (marker-7731).",
    )
    .unwrap();
    let server = MockServer::start(vec![anthropic::text_turn("The answer is forty-two.")]);
    let provider = one_shot::provider("sk-test", Some(&server.base_url())).unwrap();

    let (answer, streamed) = one_shot::run(provider, MODEL, dir.path(), "What is the answer?")
        .await
        .unwrap();

    assert_eq!(answer.text, "The answer is forty-two.");
    assert_eq!(streamed, answer.text, "every delta reached the callback");
    assert_eq!(answer.end, TurnEnd::Success);
    assert_eq!(answer.turns, 1, "one provider call");
    assert!(
        answer.usage.input_tokens > 0,
        "usage is summed: {:?}",
        answer.usage
    );
    assert!(!answer.session_id.is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(body["model"], MODEL);
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "What is the answer?"
    );
    let system = body["system"].to_string();
    assert!(
        system.contains("marker-7731"),
        "the project's AGENTS.md is in the system prompt"
    );
    assert!(
        system.contains(&dir.path().display().to_string()),
        "the working directory is in the system prompt"
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"Bash") && tools.contains(&"Read"),
        "{tools:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_loop_prints_the_events_and_runs_the_approved_command() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Creating it."),
            &[("t1", "Bash", json!({"command": "echo hi > made.txt"}))],
        ),
        anthropic::text_turn("made.txt is there."),
    ]);
    let provider = interactive_loop::provider("sk-test", Some(&server.base_url())).unwrap();
    let mut input = Cursor::new("make a file\ny\n/context\n");
    let mut out = Vec::new();

    let outcomes = interactive_loop::run(provider, MODEL, dir.path(), &mut input, &mut out)
        .await
        .unwrap();

    let printed = String::from_utf8(out).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("made.txt")).unwrap(),
        "hi\n",
        "the approved command ran: {printed}"
    );
    assert_eq!(outcomes.len(), 2, "{printed}");
    assert_eq!(outcomes[0].end, TurnEnd::Success);
    assert_eq!(outcomes[0].rounds, 2, "the tool call, then the answer");
    assert_eq!(outcomes[0].result, "made.txt is there.");
    assert_eq!(outcomes[1].end, TurnEnd::Success, "{printed}");
    for expected in [
        "Creating it.",
        "[ask] Bash",
        "[tool] Bash",
        "[done] Bash",
        "made.txt is there.",
        "[end #1: Success, 2 provider calls]",
        "[end #2: Success, 0 provider calls]",
    ] {
        assert!(
            printed.contains(expected),
            "{expected:?} not in:\n{printed}"
        );
    }
    assert!(printed.contains("tokens in"), "{printed}");
    assert_eq!(server.requests().len(), 2, "/context made no provider call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_loop_refused_command_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[("t1", "Bash", json!({"command": "echo hi > made.txt"}))],
        ),
        anthropic::text_turn("Understood."),
    ]);
    let provider = interactive_loop::provider("sk-test", Some(&server.base_url())).unwrap();
    let mut input = Cursor::new("make a file\nn\n");
    let mut out = Vec::new();

    interactive_loop::run(provider, MODEL, dir.path(), &mut input, &mut out)
        .await
        .unwrap();

    let printed = String::from_utf8(out).unwrap();
    assert!(!dir.path().join("made.txt").exists(), "{printed}");
    assert!(printed.contains("[denied] Bash"), "{printed}");
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "the model is told the call failed");
    assert!(
        results[0].0.contains("the user said no"),
        "{:?}",
        results[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_tool_is_offered_and_writes_its_note_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Saving."),
            &[("n1", "SaveNote", json!({"note": "the build is green"}))],
        ),
        anthropic::text_turn("Saved your note."),
    ]);
    let provider = custom_tool::provider("sk-test", Some(&server.base_url())).unwrap();
    let tool = Arc::new(custom_tool::SaveNote::default());

    let answer = custom_tool::run(
        provider,
        MODEL,
        dir.path(),
        "Note that the build is green",
        tool.clone(),
        true,
    )
    .await
    .unwrap();

    assert_eq!(answer.text, "Saved your note.");
    assert_eq!(answer.turns, 2);
    assert_eq!(tool.saved.load(Ordering::SeqCst), 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "the build is green\n"
    );
    let requests = server.requests();
    let first = &requests[0].body;
    let offered = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "SaveNote")
        .expect("SaveNote is offered");
    assert_eq!(offered["input_schema"]["required"], json!(["note"]));
    assert!(
        first["system"]
            .to_string()
            .contains("save it with SaveNote")
    );
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 1);
    assert!(!results[0].1);
    assert!(results[0].0.contains("saved note 1"), "{:?}", results[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_tool_that_changes_files_is_refused_without_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("n1", "SaveNote", json!({"note": "sneaky"}))]),
        anthropic::text_turn("I could not save it."),
    ]);
    let provider = custom_tool::provider("sk-test", Some(&server.base_url())).unwrap();
    let tool = Arc::new(custom_tool::SaveNote::default());

    let answer = custom_tool::run(provider, MODEL, dir.path(), "Note it", tool.clone(), false)
        .await
        .unwrap();

    assert_eq!(answer.text, "I could not save it.");
    assert_eq!(tool.saved.load(Ordering::SeqCst), 0, "the tool never ran");
    assert!(!dir.path().join("notes.txt").exists());
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert!(results[0].1);
    assert!(results[0].0.contains("denied"), "{:?}", results[0]);
}

/// A project as a Claude Code user has it: settings with an allow rule and a
/// UserPromptSubmit hook, a custom command.
fn claude_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        json!({
            "permissions": {"allow": ["Bash(touch:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "echo hook-context-5521"}
            ]}]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        claude.join("commands/greet.md"),
        "---\ndescription: Greets someone\n---\nGreet $ARGUMENTS warmly (marker-cmd-4410).\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_session_builds_the_session_the_command_line_would() {
    let project = claude_project();
    let state = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("t1", "Bash", json!({"command": "touch allowed.txt"})),
                ("t2", "Bash", json!({"command": "mkdir not-allowed"})),
            ],
        ),
        anthropic::text_turn("Hello, Ana!"),
    ]);
    let provider = project_session::provider("sk-test", Some(&server.base_url())).unwrap();
    let paths = robota::sdk::ProjectPaths::new(
        project.path().to_path_buf(),
        Some(state.path().join("home")),
        state.path().join("robota"),
    );
    // As `robota trust` does: a project's allow rules wait for the directory's trust.
    robota::sdk::settings::trust::TrustStore::load(&paths.robota_home)
        .trust(&paths.cwd)
        .unwrap();

    let answer = project_session::run(provider, MODEL, paths, "/greet Ana")
        .await
        .unwrap();

    assert_eq!(answer.text, "Hello, Ana!");
    assert_eq!(answer.end, TurnEnd::Success);
    let requests = server.requests();
    let first = requests[0].body.to_string();
    assert!(
        first.contains("Greet Ana warmly (marker-cmd-4410)"),
        "the project's custom command ran: {first}"
    );
    assert!(
        first.contains("hook-context-5521"),
        "the project's UserPromptSubmit hook ran: {first}"
    );
    let results = tool_results(&requests[1].body);
    assert!(
        project.path().join("allowed.txt").exists(),
        "the project's allow rule let its call run: {results:?}"
    );
    assert!(
        !project.path().join("not-allowed").exists(),
        "a call no rule allows is denied with nobody to ask"
    );
    let log = find_file(
        &state.path().join("robota"),
        &format!("{}.jsonl", answer.session_id),
    );
    let log = log.expect("the session log is under the robota home");
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("Hello, Ana!"), "{text}");
}

/// The file named `name` anywhere below `dir`.
fn find_file(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}
