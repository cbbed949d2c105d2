//! End to end: `robota attach` (issue 28) — the full-screen UI, in a real pty, as a client
//! of a background session started with `robota --bg` against the loopback mock. It
//! shows the transcript so far, sends prompts, answers the session's permission
//! questions (with two clients, the first answer counts and the other client's question
//! closes), detaches with Ctrl+B d leaving the session running, and opens an ended
//! session read-only. `/bg` in the UI moves its session to the background, where it goes
//! on with the conversation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::time::Duration;

use portable_pty::CommandBuilder;
use serde_json::{Value, json};
use support::background::{ps, robota, wait_for};
use support::project::{Project, output_text, project};
use support::pty::PtySession;
use support::{MockServer, anthropic};

/// Session `id` as `robota ps --json` shows it.
fn ps_entry(p: &Project, server: &MockServer, id: &str) -> Value {
    ps(p, server)
        .into_iter()
        .find(|s| s["id"] == id)
        .unwrap_or(Value::Null)
}

/// `robota attach ID` in a pty.
fn attach(p: &Project, server: &MockServer, id: &str) -> PtySession {
    in_pty(p, server, &["attach", id])
}

/// `robota ARGS` in a pty.
fn in_pty(p: &Project, server: &MockServer, args: &[&str]) -> PtySession {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_robota"));
    cmd.args(args);
    cmd.cwd(&p.root);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", &p.user_home);
    cmd.env("ROBOTA_HOME", &p.home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_BASE_URL", server.base_url());
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-key-0000000000000000");
    PtySession::spawn(cmd, 100, 30)
}

/// Starts a background session answering `prompt` in default mode; returns its id once
/// it answered.
fn background(p: &Project, server: &MockServer, prompt: &str) -> String {
    let id = robota(p, server, &["--bg", prompt, "--permission-mode", "default"]);
    let id = id.trim().to_string();
    wait_for(p, server, &id, "idle", 1);
    id
}

/// The mock's answers: a first text, then a Bash call writing `proof.txt` and its end.
fn hello_then_proof(p: &Project) -> Vec<support::MockResponse> {
    let proof = p.root.join("proof.txt").display().to_string();
    vec![
        anthropic::text_turn("First answer from the background."),
        anthropic::tool_turn(
            None,
            &[(
                "b1",
                "Bash",
                json!({"command": format!("echo attached >> {proof}")}),
            )],
        ),
        anthropic::text_turn("Proof written."),
    ]
}

/// Ctrl+B d detaches; the UI exits and says how to come back.
fn detach(pty: &mut PtySession) {
    pty.send(b"\x02");
    pty.wait_for_text("Press d to detach");
    pty.send(b"d");
    assert_eq!(pty.wait_exit(Duration::from_secs(20)), Some(0));
}

#[test]
fn attach_shows_the_history_sends_prompts_answers_permissions_and_detaches() {
    let p = project();
    let server = MockServer::start(hello_then_proof(&p));
    let id = background(&p, &server, "say hello");

    let mut pty = attach(&p, &server, &id);
    let screen = pty.wait_for_text("First answer from the background.");
    assert!(screen.contains("say hello"), "the first prompt: {screen}");
    assert!(screen.contains("Ctrl+B d detaches"), "{screen}");

    pty.type_text("write the proof");
    pty.send(b"\r");
    let popup = pty.wait_for_text("1. Yes");
    assert!(
        popup.contains("echo attached"),
        "the command asked about: {popup}"
    );
    // Nobody has answered yet: the session says it waits.
    assert_eq!(
        ps_entry(&p, &server, &id)["state"],
        "waiting_for_permission"
    );
    assert!(!p.root.join("proof.txt").exists());
    pty.send(b"1");
    pty.wait_for_text("Proof written.");
    assert_eq!(
        std::fs::read_to_string(p.root.join("proof.txt")).unwrap(),
        "attached\n"
    );
    // The prompt typed here reached the model as the session's second prompt.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("write the proof"), "{second}");

    detach(&mut pty);
    wait_for(&p, &server, &id, "idle", 2);
    let again = attach(&p, &server, &id);
    let screen = again.wait_for_text("Proof written.");
    assert!(screen.contains("write the proof"), "{screen}");
    // The answered question is history, not a question again.
    assert!(!screen.contains("1. Yes"), "{screen}");
}

#[test]
fn two_clients_see_the_same_session_and_the_first_answer_counts() {
    let p = project();
    let server = MockServer::start(hello_then_proof(&p));
    let id = background(&p, &server, "say hello");
    let mut first = attach(&p, &server, &id);
    let mut second = attach(&p, &server, &id);
    first.wait_for_text("First answer from the background.");
    second.wait_for_text("First answer from the background.");

    first.type_text("write the proof");
    first.send(b"\r");
    first.wait_for_text("1. Yes");
    let asked = second.wait_for_text("1. Yes");
    assert!(
        asked.contains("write the proof"),
        "the other client's prompt: {asked}"
    );
    second.send(b"1");
    second.wait_for_text("Proof written.");
    first.wait_for_text("Proof written.");
    // The first client's question closed when the second answered it.
    let screen = first.wait_for("the question to close", Duration::from_secs(20), |s| {
        !s.contains("1. Yes")
    });
    assert!(screen.contains("Proof written."), "{screen}");
    // One answer reached the session: the command ran once.
    assert_eq!(
        std::fs::read_to_string(p.root.join("proof.txt")).unwrap(),
        "attached\n"
    );
    detach(&mut first);
    detach(&mut second);
    wait_for(&p, &server, &id, "idle", 2);
}

#[test]
fn an_ended_session_opens_read_only_and_names_the_resume_command() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn(
        "First answer from the background.",
    )]);
    let id = background(&p, &server, "say hello");
    robota(&p, &server, &["stop", &id]);
    let mut pty = attach(&p, &server, &id);
    let screen = pty.wait_for_text("First answer from the background.");
    assert!(screen.contains("shown read-only"), "{screen}");
    assert!(screen.contains("robota --resume"), "{screen}");
    pty.type_text("are you there");
    pty.send(b"\r");
    pty.wait_for_text("has ended");
    assert_eq!(server.requests().len(), 1, "nothing is sent to a model");
    pty.send(b"\x04");
    assert_eq!(pty.wait_exit(Duration::from_secs(20)), Some(0));
}

#[test]
fn attach_to_an_unknown_session_says_so_without_opening_the_screen() {
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p.command(&server, &["attach", "nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        output_text(&out).contains("no background session \"nope\""),
        "{}",
        output_text(&out)
    );
}

#[test]
fn bg_in_the_ui_moves_the_session_to_the_background_where_it_goes_on() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("First answer in the UI."),
        anthropic::text_turn("Going on in the background."),
    ]);
    let mut pty = in_pty(&p, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text("say hello");
    pty.send(b"\r");
    pty.wait_for_text("First answer in the UI.");
    pty.type_text("/bg keep going");
    pty.wait_for_text("/bg keep going");
    pty.send(b"\r");
    let code = pty.wait_exit(Duration::from_secs(30));
    assert_eq!(code, Some(0), "{}", pty.contents());
    let said = pty.wait_for_text("goes on in the background as");
    assert!(said.contains("robota attach"), "{said}");

    let all = ps(&p, &server);
    assert_eq!(all.len(), 1, "{all:?}");
    let id = all[0]["id"].as_str().unwrap().to_string();
    wait_for(&p, &server, &id, "idle", 1);
    // The background session answered the new prompt with the UI's conversation.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].to_string();
    for said in ["say hello", "First answer in the UI.", "keep going"] {
        assert!(messages.contains(said), "{said} in {messages}");
    }
    // One session log: the background session went on with the UI's.
    assert_eq!(p.session_logs().len(), 1, "{:?}", p.session_logs());
    robota(&p, &server, &["stop", &id]);
}
