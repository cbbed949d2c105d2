//! End to end: compaction with the real `robota` binary in print mode against the loopback
//! mock Anthropic server — automatic before a user turn once the reported usage passes the
//! threshold, `/compact focus` on a resumed session, once mid-turn when the provider says
//! the prompt is too long, the PreCompact / PostCompact / SessionStart(compact) hooks, the
//! `compact_boundary` log line and stream-json message, and resume from the boundary.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::Output;

use serde_json::{Value, json};
use support::project::{Project, log_lines, project, stream_json_run};
use support::{MockServer, anthropic};

const SUMMARY_OPENING: &str = "This session is being continued from a previous conversation";

/// Every text of every message of a recorded request, in order.
fn texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => {
                for block in blocks {
                    if let Some(t) = block["text"].as_str() {
                        out.push(t.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn stdout_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn boundary_lines(p: &Project) -> Vec<Value> {
    let logs = p.session_logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    log_lines(&logs[0])
        .into_iter()
        .filter(|l| l["event"] == "compact_boundary")
        .collect()
}

fn write_settings(p: &Project, settings: Value) {
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

fn hook_script(p: &Project, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = p.root.join(".claude/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

const TASK_ONE: &str = "Task one: rename add to plus in calc.py and keep the signature (a, b)";

#[test]
fn a_session_past_the_threshold_compacts_before_the_next_turn() {
    let p = project();
    std::fs::write(
        p.root.join("CLAUDE.md"),
        "# Rules\nBe brief.\n\n## Compact Instructions\nAlways keep the function names.\n",
    )
    .unwrap();
    let todos = json!({"todos": [
        {"content": "Rename add to plus", "status": "in_progress", "activeForm": "Renaming"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]});
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_1", "TodoWrite", todos)]),
        anthropic::tool_turn(
            None,
            &[("toolu_2", "Read", json!({"file_path": "calc.py"}))],
        ),
        // 170,000 of claude-sonnet-4-5's 200,000: past 83.5 %.
        anthropic::text_turn_with_input_tokens("Renamed add to plus.", 170_000),
        anthropic::text_turn(
            "<analysis>notes</analysis><summary>The user asked to rename add to plus in calc.py; done.</summary>",
        ),
        anthropic::text_turn("Tests added."),
    ]);
    let out = stream_json_run(&p, &server, &[], &[TASK_ONE, "Task two: add tests"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);

    // The summary request: no tools, the whole first task, the instructions.
    let summary = &requests[3].body;
    assert!(
        summary.get("tools").is_none_or(|t| t == &json!([])),
        "{summary}"
    );
    assert!(summary["system"].to_string().contains("summarizing"));
    let asked = texts(summary).join("\n");
    assert!(asked.contains(&format!("[User]\n{TASK_ONE}")), "{asked}");
    assert!(asked.contains("[Tool call Read toolu_2]"), "{asked}");
    assert!(asked.contains("def add(a, b):"), "the Read result: {asked}");
    assert!(asked.contains("quoted verbatim"));
    assert!(asked.contains(
        "Compact Instructions from the project (follow them):\nAlways keep the function names."
    ));
    assert!(
        !asked.contains("Task two"),
        "the new prompt is not summarised"
    );

    // The real turn: the summary (with the todo list verbatim) instead of the old messages.
    let turn = &requests[4].body;
    assert!(!turn["tools"].as_array().unwrap().is_empty());
    assert!(
        turn["system"]
            .to_string()
            .contains("Always keep the function names.")
    );
    let sent = texts(turn);
    assert!(sent[0].starts_with(SUMMARY_OPENING), "{sent:?}");
    assert!(sent[0].contains("The user asked to rename add to plus in calc.py; done."));
    assert!(!sent[0].contains("<analysis>"));
    assert!(
        sent[0].contains("\"content\": \"Rename add to plus\""),
        "{}",
        sent[0]
    );
    assert!(sent[0].contains("\"status\": \"in_progress\""));
    assert_eq!(sent.last().unwrap(), "Task two: add tests");
    assert!(!sent.iter().any(|t| t.contains(TASK_ONE)), "{sent:?}");
    assert_eq!(turn["messages"].as_array().unwrap().len(), 2);

    let lines = stdout_lines(&out);
    let boundary = lines
        .iter()
        .find(|l| l["subtype"] == "compact_boundary")
        .expect("a compact_boundary message");
    assert_eq!(boundary["type"], "system");
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto");
    let pre = boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap();
    let post = boundary["compact_metadata"]["post_tokens"]
        .as_u64()
        .unwrap();
    assert!(pre >= 170_000, "{pre}");
    assert!(post < 5_000, "{post}");
    eprintln!("scripted session compacted: {pre} -> {post} tokens");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.last().unwrap()["result"], "Tests added.");

    let logged = boundary_lines(&p);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["trigger"], "auto");
    assert_eq!(logged[0]["pre_tokens"], pre);
    assert_eq!(logged[0]["post_tokens"], post);
    assert!(
        logged[0]["summary"]
            .as_str()
            .unwrap()
            .contains("rename add to plus")
    );
}

#[test]
fn auto_compaction_can_be_turned_off() {
    let p = project();
    write_settings(&p, json!({"autoCompactThreshold": false}));
    let server = MockServer::start(vec![
        anthropic::text_turn_with_input_tokens("one", 170_000),
        anthropic::text_turn("two"),
    ]);
    let out = stream_json_run(&p, &server, &[], &["first", "second"]);
    assert_eq!(out.status.code(), Some(0));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no summary call");
    assert_eq!(texts(&requests[1].body)[0], "first");
    assert!(boundary_lines(&p).is_empty());
}

#[test]
fn manual_compact_in_print_mode_then_resume_sends_only_the_boundary_onward() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("The API has three endpoints."),
        anthropic::text_turn("Summary: the user explored the API (three endpoints)."),
        anthropic::text_turn("Next done."),
    ]);
    let first = p.run(&server, &["-p", "first task: explore the API"]);
    assert_eq!(first.status.code(), Some(0));

    let compact = p.run(
        &server,
        &[
            "-c",
            "-p",
            "/compact keep the API details",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    assert_eq!(
        compact.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&compact.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let asked = texts(&requests[1].body).join("\n");
    assert!(
        asked.contains("[User]\nfirst task: explore the API"),
        "{asked}"
    );
    assert!(asked.ends_with("focus on: keep the API details"), "{asked}");
    let lines = stdout_lines(&compact);
    let boundary = lines
        .iter()
        .find(|l| l["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "success");
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .starts_with("Compacted the conversation: "),
        "{result}"
    );

    let next = p.run(&server, &["-c", "-p", "next"]);
    assert_eq!(next.status.code(), Some(0));
    let sent = texts(&server.requests()[2].body);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].starts_with(SUMMARY_OPENING));
    assert!(sent[0].contains("the user explored the API (three endpoints)"));
    assert_eq!(sent[1], "next");
    assert!(!sent.iter().any(|t| t.contains("first task")));
}

#[test]
fn a_too_long_prompt_mid_turn_compacts_once_and_the_turn_goes_on() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("Earlier answer."),
        anthropic::tool_turn(
            None,
            &[("toolu_1", "Read", json!({"file_path": "calc.py"}))],
        ),
        anthropic::error_status(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
            None,
        ),
        anthropic::text_turn("Summary of the earlier task."),
        anthropic::text_turn("calc.py subtracts."),
        anthropic::text_turn("You are welcome."),
    ]);
    assert_eq!(
        p.run(&server, &["-p", "earlier task"]).status.code(),
        Some(0)
    );
    let out = p.run(
        &server,
        &[
            "-c",
            "-p",
            "what does calc.py do?",
            "--output-format",
            "json",
        ],
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(result["result"], "calc.py subtracts.");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let asked = texts(&requests[3].body).join("\n");
    assert!(asked.contains("[User]\nearlier task"), "{asked}");
    assert!(
        !asked.contains("what does calc.py do?"),
        "the unfinished turn is kept, not summarised"
    );
    // The retry: the summary, then the whole unfinished turn (prompt, call, result).
    let retry = &requests[4].body;
    let messages = retry["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{retry}");
    assert!(texts(retry)[0].starts_with(SUMMARY_OPENING));
    assert_eq!(texts(retry)[1], "what does calc.py do?");
    assert_eq!(messages[2]["content"][0]["type"], "tool_use");
    assert_eq!(messages[3]["content"][0]["type"], "tool_result");
    let logged = boundary_lines(&p);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["kept"], 3);

    // Resume keeps the same shape: summary, the kept turn, its answer, the new prompt.
    assert_eq!(
        p.run(&server, &["-c", "-p", "thanks"]).status.code(),
        Some(0)
    );
    let sent = texts(&server.requests()[5].body);
    assert!(sent[0].starts_with(SUMMARY_OPENING));
    assert_eq!(sent[1], "what does calc.py do?");
    assert_eq!(sent.last().unwrap(), "thanks");
}

#[test]
fn compaction_hooks_block_and_observe() {
    let p = project();
    let out_dir = p.root.join("hook-out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let blocker = hook_script(
        &p,
        "pre.sh",
        &format!(
            "#!/bin/sh\ncat > {dir}/pre.json\nif [ -f {dir}/block ]; then echo 'not while the tests run' >&2; exit 2; fi\n",
            dir = out_dir.display()
        ),
    );
    let post = hook_script(
        &p,
        "post.sh",
        &format!("#!/bin/sh\ncat > {}/post.json\n", out_dir.display()),
    );
    let start = hook_script(
        &p,
        "start.sh",
        &format!(
            "#!/bin/sh\ncat >> {}/start.jsonl\necho\n",
            out_dir.display()
        ),
    );
    let hook = |command: &str| json!([{"hooks": [{"type": "command", "command": command}]}]);
    write_settings(
        &p,
        json!({"hooks": {
            "PreCompact": hook(&blocker),
            "PostCompact": hook(&post),
            "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": start}]}],
        }}),
    );
    let server = MockServer::start(vec![
        anthropic::text_turn("first answer"),
        anthropic::text_turn("The summary."),
        anthropic::text_turn("after"),
    ]);
    assert_eq!(p.run(&server, &["-p", "first"]).status.code(), Some(0));

    // Blocked: exit 2's reason is shown, nothing is sent, nothing is logged.
    std::fs::write(out_dir.join("block"), "").unwrap();
    let blocked = p.run(
        &server,
        &[
            "-c",
            "-p",
            "/compact keep it short",
            "--output-format",
            "json",
        ],
    );
    let result: Value = serde_json::from_slice(&blocked.stdout).unwrap();
    assert_eq!(blocked.status.code(), Some(1), "{result}");
    assert!(
        result["errors"][0]
            .as_str()
            .unwrap()
            .contains("blocked by a PreCompact hook: not while the tests run"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(boundary_lines(&p).is_empty());
    let pre: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("pre.json")).unwrap()).unwrap();
    assert_eq!(pre["hook_event_name"], "PreCompact");
    assert_eq!(pre["trigger"], "manual");
    assert_eq!(pre["custom_instructions"], "keep it short");

    // Allowed: PostCompact gets the summary, then SessionStart runs with source compact.
    std::fs::remove_file(out_dir.join("block")).unwrap();
    let done = p.run(&server, &["-c", "-p", "/compact"]);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let post: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("post.json")).unwrap()).unwrap();
    assert_eq!(post["hook_event_name"], "PostCompact");
    assert_eq!(post["trigger"], "manual");
    assert_eq!(post["compact_summary"], "The summary.");
    let starts = std::fs::read_to_string(out_dir.join("start.jsonl")).unwrap();
    let start: Value = serde_json::from_str(starts.lines().next().unwrap()).unwrap();
    assert_eq!(start["hook_event_name"], "SessionStart");
    assert_eq!(start["source"], "compact");
    assert_eq!(boundary_lines(&p).len(), 1);
}

#[test]
fn compact_with_nothing_to_compact_says_so() {
    let p = project();
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "/compact", "--output-format", "json"]);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{result}");
    assert!(
        result["errors"][0]
            .as_str()
            .unwrap()
            .contains("Nothing to compact")
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_resumed_session_past_the_threshold_compacts_before_its_next_turn() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_with_input_tokens("Long work done.", 180_000),
        anthropic::text_turn("Summary of the long work."),
        anthropic::text_turn("Continuing."),
    ]);
    assert_eq!(p.run(&server, &["-p", "long work"]).status.code(), Some(0));
    let out = p.run(&server, &["-c", "-p", "go on"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Continuing.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        texts(&requests[1].body)
            .join("\n")
            .contains("[User]\nlong work")
    );
    let sent = texts(&requests[2].body);
    assert!(sent[0].starts_with(SUMMARY_OPENING));
    assert_eq!(sent[1], "go on");
    assert_eq!(boundary_lines(&p)[0]["pre_tokens"], 180_007);
}
