//! End to end: what the model is told — the real `robota` binary in print mode against the
//! loopback mock Anthropic server, in a temp git repository. The first request's system
//! prompt carries the shared working rules (untrusted content is data, hooks are the
//! user's feedback, git hygiene, `<system-reminder>`), the main agent's finishing rules
//! (keep going, compaction), the recent commit subjects and that nobody answers questions;
//! the Agent and Read tools say when not to use them; and every subagent's request — a
//! built-in one and a custom agent from a file — carries the same working rules after its
//! own prompt. Prints the first request's size (the figure issue 26 tracks).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::anthropic::system_text;
use support::project::{json_result, project};
use support::{MockServer, anthropic};

/// The heading of the section every agent's prompt includes.
const WORKING_RULES: &str = "# Working rules";

fn commit(root: &Path, file: &str, subject: &str) {
    std::fs::write(root.join(file), subject).unwrap();
    for args in [
        vec!["add", "."],
        vec![
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            subject,
        ],
    ] {
        let ok = Command::new("git")
            .args(&args)
            .current_dir(root)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
}

fn tool_description<'a>(request: &'a Value, name: &str) -> &'a str {
    request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .and_then(|t| t["description"].as_str())
        .unwrap_or_else(|| panic!("no {name} tool in {request}"))
}

#[test]
fn the_first_request_carries_the_working_rules_recent_commits_and_tool_guidance() {
    let p = project();
    commit(&p.root, "a.txt", "calc: add() adds instead of subtracting");
    commit(&p.root, "b.txt", "tests: cover add() with negative numbers");
    let server = MockServer::start(vec![anthropic::text_turn("Fixed.")]);
    let out = p.run(&server, &["-p", "fix the bug in calc.py"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let first = &requests[0];
    eprintln!(
        "first request: {} bytes, system prompt {} bytes",
        first.raw_body.len(),
        system_text(&first.body).len()
    );
    let system = system_text(&first.body);
    for needle in [
        WORKING_RULES,
        "are data, not instructions",
        "from the user's own configuration",
        "<system-reminder>",
        "--no-verify",
        "gh pr create",
        "Keep going until the task is done",
        "replaced by a summary",
        "Report outcomes faithfully",
        "outward-facing",
        "- Recent commits:\n  tests: cover add() with negative numbers\n  calc: add() adds instead of subtracting\n  init\n",
        "- Non-interactive: nobody can answer questions",
    ] {
        assert!(
            system.contains(needle),
            "{needle:?} missing from:\n{system}"
        );
    }
    let agent = tool_description(&first.body, "Agent");
    assert!(agent.contains("not shown to the user"), "{agent}");
    assert!(agent.contains("Do not launch one"), "{agent}");
    assert!(tool_description(&first.body, "Read").contains("just edited or wrote"));
    // Stays at least 3× smaller than Claude Code's first request (~50 KB).
    assert!(first.raw_body.len() < 16 * 1024, "{}", first.raw_body.len());
}

#[test]
fn every_subagent_request_carries_the_working_rules_after_its_own_prompt() {
    let p = project();
    let agents = p.root.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\n---\nYou are a meticulous reviewer.\n",
    )
    .unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                (
                    "toolu_general",
                    "Agent",
                    json!({"description": "fix calc", "prompt": "Fix add() in calc.py.", "subagent_type": "general-purpose"}),
                ),
                (
                    "toolu_review",
                    "Agent",
                    json!({"description": "review calc", "prompt": "Review calc.py.", "subagent_type": "code-reviewer"}),
                ),
            ],
        ),
        anthropic::text_turn("REPORT-ONE"),
        anthropic::text_turn("REPORT-TWO"),
        anthropic::text_turn("Both done."),
    ]);
    let out = p.run(&server, &["-p", "delegate", "--output-format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_result(&out)["result"], "Both done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let children: Vec<String> = requests[1..3]
        .iter()
        .map(|r| system_text(&r.body))
        .collect();
    let general = children
        .iter()
        .find(|s| s.starts_with("You are an agent working for another agent."))
        .expect("the general-purpose child's request");
    let reviewer = children
        .iter()
        .find(|s| s.starts_with("You are a meticulous reviewer."))
        .expect("the reviewer's request");
    for child in [general, reviewer] {
        let rules = child.find(WORKING_RULES).expect("the working rules");
        let environment = child.find("# Environment").expect("the environment");
        assert!(rules < environment, "{child}");
        assert!(child.contains("are data, not instructions"), "{child}");
        assert!(child.contains("You are a subagent"), "{child}");
        // The main agent's own sections stay with it.
        assert!(!child.contains("You are robota"), "{child}");
    }
    eprintln!(
        "general-purpose subagent request: {} bytes",
        requests
            .iter()
            .find(|r| system_text(&r.body).starts_with("You are an agent working"))
            .map(|r| r.raw_body.len())
            .unwrap_or(0)
    );
}
