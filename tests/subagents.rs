//! End to end: subagents through the `Agent` tool — the real `robota` binary in print mode
//! against the loopback mock Anthropic server. Two subagents of one model turn really run
//! at the same time (both requests arrive while the first answer is held), each with its
//! own system prompt, model, tools and transcript; SubagentStart/SubagentStop hooks fire
//! for each; deny rules hold inside them; stream-json tags their messages with the Agent
//! call; an unknown type is answered with the types there are.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::anthropic::system_text;
use support::project::{json_result, project, result_text, tool_results};
use support::{MockServer, anthropic};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_subagents_run_in_parallel_with_their_own_prompts_models_tools_and_transcripts() {
    let p = project();
    write(
        &p.root.join(".claude/agents/reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\nmodel: opus\n---\nYou are a meticulous reviewer.\n",
    );
    // Each hook run writes its input to a file of its own (the two subagents' hooks run
    // at the same time).
    let hook_dir = p.user_home.join("hook-inputs");
    std::fs::create_dir_all(&hook_dir).unwrap();
    let record = format!("cat > \"$(mktemp -p {} run.XXXXXX)\"", hook_dir.display());
    write(
        &p.user_home.join(".claude/settings.json"),
        &json!({"hooks": {
            "SubagentStart": [{"hooks": [{"type": "command", "command": record}]}],
            "SubagentStop": [{"hooks": [{"type": "command", "command": record}]}]
        }})
        .to_string(),
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            Some("Delegating."),
            &[
                (
                    "toolu_explore",
                    "Agent",
                    json!({"description": "find tests", "prompt": "Find the test files.", "subagent_type": "Explore"}),
                ),
                (
                    "toolu_review",
                    "Agent",
                    json!({"description": "review calc", "prompt": "Review calc.py.", "subagent_type": "code-reviewer"}),
                ),
            ],
        ),
        anthropic::text_turn_held("REPORT-ONE", 2),
        anthropic::text_turn("REPORT-TWO"),
        anthropic::text_turn("Both done."),
    ]);
    let child = p
        .command(&server, &["-p", "delegate", "--output-format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The second subagent's request arrives while the first one's answer is still held:
    // they run at the same time.
    let parallel = server.wait_for_requests(3, Duration::from_secs(30));
    server.release_held();
    let out = child.wait_with_output().unwrap();
    assert!(
        parallel,
        "the second subagent did not start while the first ran"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_result(&out)["result"], "Both done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(tool_names(&requests[0].body).contains(&"Agent".to_string()));
    let children = [&requests[1].body, &requests[2].body];
    let explore = children
        .iter()
        .find(|r| system_text(r).contains("read-only code explorer"))
        .expect("the Explore child's request");
    let reviewer = children
        .iter()
        .find(|r| system_text(r).starts_with("You are a meticulous reviewer."))
        .expect("the reviewer's request");
    assert_eq!(explore["model"], "claude-haiku-4-5");
    assert_eq!(reviewer["model"], "claude-opus-4-6");
    assert_eq!(tool_names(reviewer), ["Grep", "Read"]);
    let explore_tools = tool_names(explore);
    assert!(!explore_tools.contains(&"Agent".to_string()));
    assert!(!explore_tools.contains(&"Bash".to_string()));
    assert!(!explore_tools.contains(&"Edit".to_string()));
    assert!(system_text(reviewer).contains("Working directory"));
    assert!(
        system_text(reviewer).contains("you are a subagent")
            || system_text(reviewer).contains("You are a subagent")
    );
    // The parent gets both reports, in its own call order.
    let results = tool_results(&requests[3].body);
    assert_eq!(results.len(), 2);
    let texts: Vec<String> = results.iter().map(result_text).collect();
    assert_eq!(results[0]["tool_use_id"], "toolu_explore");
    assert!(texts.iter().any(|t| t.starts_with("REPORT-ONE")));
    assert!(texts.iter().any(|t| t.starts_with("REPORT-TWO")));
    // Transcripts beside the session log, named in the results.
    let log = &p.session_logs()[0];
    let dir = log.with_extension("").join("subagents");
    let transcripts: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(transcripts.len(), 2, "{dir:?}");
    for t in &transcripts {
        let path = t.path().display().to_string();
        assert!(
            texts.iter().any(|r| r.contains(&path)),
            "{path} not in {texts:?}"
        );
        let content = std::fs::read_to_string(t.path()).unwrap();
        assert!(content.contains("REPORT-"), "{content}");
    }
    // SubagentStart and SubagentStop fired for each.
    let hooks: Vec<Value> = std::fs::read_dir(&hook_dir)
        .unwrap()
        .flatten()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap())
        .collect();
    assert_eq!(hooks.len(), 4, "{hooks:?}");
    let events: Vec<(String, String)> = hooks
        .iter()
        .map(|h| {
            (
                h["hook_event_name"].as_str().unwrap().to_string(),
                h["agent_type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for expected in [
        ("SubagentStart", "Explore"),
        ("SubagentStart", "code-reviewer"),
        ("SubagentStop", "Explore"),
        ("SubagentStop", "code-reviewer"),
    ] {
        assert!(
            events.contains(&(expected.0.to_string(), expected.1.to_string())),
            "{events:?}"
        );
    }
    assert!(
        hooks
            .iter()
            .filter(|h| h["hook_event_name"] == "SubagentStop")
            .all(|h| h["agent_transcript_path"].as_str().is_some())
    );
}

#[test]
fn deny_rules_hold_inside_a_subagent_even_in_bypass_mode() {
    let p = project();
    std::fs::write(p.root.join("canary.txt"), "alive").unwrap();
    write(
        &p.user_home.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_a",
                "Agent",
                json!({"description": "clean", "prompt": "Remove canary.txt", "subagent_type": "general-purpose"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[("toolu_rm", "Bash", json!({"command": "rm -f canary.txt"}))],
        ),
        anthropic::text_turn("I could not remove it."),
        anthropic::text_turn("The subagent could not."),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "clean up",
            "--dangerously-skip-permissions",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(p.root.join("canary.txt")).unwrap(),
        "alive"
    );
    let child_result = &tool_results(&server.requests()[2].body)[0];
    assert_eq!(child_result["is_error"], true);
    let result = json_result(&out);
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_rm");
}

#[test]
fn stream_json_tags_subagent_messages_and_unknown_types_get_the_list() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                (
                    "toolu_gp",
                    "Agent",
                    json!({"description": "look", "prompt": "Look around.", "subagent_type": "general-purpose"}),
                ),
                (
                    "toolu_bad",
                    "Agent",
                    json!({"description": "x", "prompt": "y", "subagent_type": "wizard"}),
                ),
            ],
        ),
        anthropic::text_turn("CHILD-REPORT"),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    );
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let child = lines
        .iter()
        .find(|l| l["type"] == "assistant" && l["parent_tool_use_id"] == "toolu_gp")
        .expect("the subagent's message, tagged with its Agent call");
    assert_eq!(child["message"]["content"][0]["text"], "CHILD-REPORT");
    let top: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "assistant" && l["parent_tool_use_id"].is_null())
        .collect();
    assert_eq!(top.len(), 2);
    let results = tool_results(&server.requests()[2].body);
    let bad = results
        .iter()
        .find(|r| r["tool_use_id"] == "toolu_bad")
        .unwrap();
    assert_eq!(bad["is_error"], true);
    let text = result_text(bad);
    assert!(
        text.contains("Unknown subagent_type \"wizard\"")
            && text.contains("general-purpose, Explore, Plan"),
        "{text}"
    );
}

/// A session that runs `command`, then a prompt whose answer delegates to a
/// general-purpose subagent.
fn delegate_after(command: &str) -> (support::project::Project, MockServer) {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_gp",
                "Agent",
                json!({"description": "look", "prompt": "Look.", "subagent_type": "general-purpose"}),
            )],
        ),
        anthropic::text_turn("CHILD"),
        anthropic::text_turn("done"),
    ]);
    let out = support::project::stream_json_run(&p, &server, &[], &[command, "delegate"]);
    assert_eq!(out.status.code(), Some(0));
    (p, server)
}

#[test]
fn an_inheriting_subagent_uses_the_model_the_session_has_now() {
    let (_project, server) = delegate_after("/model opus");
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(models, ["claude-opus-4-6"; 3]);
}

#[test]
fn after_clear_a_subagents_transcript_goes_with_the_new_session() {
    let (p, _server) = delegate_after("/clear");
    let logs = p.session_logs();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let with_transcript: Vec<_> = logs
        .iter()
        .filter(|log| log.with_extension("").join("subagents").is_dir())
        .collect();
    assert_eq!(with_transcript.len(), 1);
    // The session that delegated (the one after /clear) holds the transcript.
    let log = std::fs::read_to_string(with_transcript[0]).unwrap();
    assert!(log.contains("delegate"), "{log}");
}
