//! End to end: `apiKeyHelper`, a command that prints the API key. The real binary runs it
//! at start, again when the server answers 401 (the request is then sent again with the
//! new key), and again once `CLAUDE_CODE_API_KEY_HELPER_TTL_MS` has passed; a project file
//! may not name it. The helper counts its runs in a file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::PathBuf;

use serde_json::json;
use support::project::{Project, json_result, output_text, project};
use support::{MockResponse, MockServer, anthropic};

/// A helper printing `sk-helper-N` on its Nth run; returns its command and count file.
fn helper(p: &Project) -> (String, PathBuf) {
    let count = p.user_home.join("helper-runs");
    let script = p.user_home.join("key-helper.sh");
    std::fs::write(
        &script,
        format!(
            "echo run >> '{count}'\necho \"sk-helper-$(wc -l < '{count}' | tr -d ' ')\"\n",
            count = count.display()
        ),
    )
    .unwrap();
    (format!("sh '{}'", script.display()), count)
}

fn runs(count: &PathBuf) -> usize {
    std::fs::read_to_string(count)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn user_settings(p: &Project, value: serde_json::Value) {
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(p.home.join("settings.json"), value.to_string()).unwrap();
}

fn unauthorized() -> MockResponse {
    MockResponse::Http {
        status: 401,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            .to_string(),
    }
}

#[test]
fn a_401_runs_the_helper_again_and_the_request_goes_out_with_the_new_key() {
    let p = project();
    let (command, count) = helper(&p);
    user_settings(&p, json!({"apiKeyHelper": command}));
    let server = MockServer::start(vec![
        unauthorized(),
        anthropic::text_turn("fresh key works"),
    ]);
    let out = p
        .command(&server, &["-p", "hi", "--output-format", "json"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(result["result"], "fresh key works");
    assert_eq!(runs(&count), 2, "run at start and after the 401");
    let keys: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("x-api-key").unwrap_or_default().to_string())
        .collect();
    assert_eq!(keys, ["sk-helper-1", "sk-helper-2"]);
}

#[test]
fn the_helper_runs_again_after_its_time_to_live() {
    let p = project();
    let (command, count) = helper(&p);
    user_settings(&p, json!({"apiKeyHelper": command}));
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_1", "Glob", json!({"pattern": "*.py"}))]),
        anthropic::text_turn("done"),
    ]);
    let out = p
        .command(&server, &["-p", "hi", "--output-format", "json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env("CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(
        runs(&count),
        3,
        "at start, then before each of the two requests"
    );
    let keys: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("x-api-key").unwrap_or_default().to_string())
        .collect();
    assert_eq!(keys, ["sk-helper-2", "sk-helper-3"]);
}

#[test]
fn a_project_file_cannot_name_the_helper() {
    let p = project();
    let (command, count) = helper(&p);
    let server = MockServer::start(vec![anthropic::text_turn("never")]);
    let trust = p.command(&server, &["trust"]).output().unwrap();
    assert_eq!(trust.status.code(), Some(0), "{}", output_text(&trust));
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        json!({"apiKeyHelper": command}).to_string(),
    )
    .unwrap();
    let out = p
        .command(&server, &["-p", "hi"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(runs(&count), 0, "the project's helper never ran");
    assert!(server.requests().is_empty());
}
