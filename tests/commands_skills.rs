//! End to end: custom commands, skills (typed by the user and invoked by the model through
//! the `Skill` tool), `@file` attachments and model aliases — the real `robota` binary in
//! print mode, in a temp git repository with `.claude/` files, against the loopback mock
//! Anthropic server. Effects are counted where they happen: the request the model got,
//! files a command's shell lines made (or did not make).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::project::{json_result, project, result_text, stream_json_run, tool_results};
use support::{MockServer, anthropic};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The text of every block of the last user message of a request.
fn last_user_texts(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &last["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_custom_command_fills_in_its_arguments_runs_its_shell_lines_and_attaches_files() {
    let p = project();
    write(
        &p.user_home.join(".claude/commands/fix.md"),
        "---\ndescription: Fix an issue\nargument-hint: <issue> <priority>\nallowed-tools: Bash(touch:*)\n---\nFix issue $0 with priority $ARGUMENTS[1].\nMade: !`touch made.txt && echo done-touching`\nSee @calc.py.\n",
    );
    let server = MockServer::start(vec![anthropic::text_turn("Fixed.")]);
    let out = p.run(
        &server,
        &["-p", "/fix \"bug 12\" high", "--output-format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_result(&out)["result"], "Fixed.");
    assert!(p.root.join("made.txt").exists());
    let texts = last_user_texts(&server.requests()[0].body);
    assert!(
        texts[0].starts_with(
            "Fix issue bug 12 with priority high.\nMade: done-touching\nSee @calc.py."
        ),
        "{texts:?}"
    );
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[1].contains("return a - b"), "{texts:?}");
}

#[test]
fn an_untrusted_projects_command_cannot_pre_approve_its_shell_lines() {
    let p = project();
    write(
        &p.root.join(".claude/commands/setup.md"),
        "---\nallowed-tools: Bash(touch:*)\n---\nSetup: !`touch pwned.txt`\n",
    );
    let server = MockServer::start(vec![
        anthropic::text_turn("not set up"),
        anthropic::text_turn("set up"),
    ]);
    let out = p.run(&server, &["-p", "/setup"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!p.root.join("pwned.txt").exists());
    let err = stderr(&out);
    assert!(
        err.contains("`touch pwned.txt` was not run: the shell command permission check failed"),
        "{err}"
    );
    assert!(err.contains("not trusted"), "{err}");
    let texts = last_user_texts(&server.requests()[0].body);
    assert!(
        texts[0].starts_with("Setup: [`touch pwned.txt` was not run: "),
        "{texts:?}"
    );
    // Once the user trusts the directory, the command's own rule applies.
    assert_eq!(p.run(&server, &["trust"]).status.code(), Some(0));
    let out = p.run(&server, &["-p", "/setup"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(p.root.join("pwned.txt").exists());
}

#[test]
fn a_refused_shell_line_leaves_the_commands_other_lines_running() {
    let p = project();
    write(
        &p.user_home.join(".claude/commands/report.md"),
        "---\nallowed-tools: Bash(echo:*)\n---\nFirst: !`echo one`\nRisky: !`sh -c \"$DANGER\"`\nLast: !`echo three`\n",
    );
    let server = MockServer::start(vec![anthropic::text_turn("Reported.")]);
    let out = p.run(&server, &["-p", "/report", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_result(&out)["result"], "Reported.");
    let texts = last_user_texts(&server.requests()[0].body);
    assert!(
        texts[0].starts_with("First: one\nRisky: [`sh -c \"$DANGER\"` was not run: "),
        "{texts:?}"
    );
    assert!(texts[0].ends_with("]\nLast: three\n"), "{texts:?}");
    let err = stderr(&out);
    assert!(err.contains("no rule can allow it"), "{err}");
}

#[test]
fn a_skill_typed_by_the_user_sends_its_body_with_its_folder() {
    let p = project();
    write(
        &p.root.join(".claude/skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from the git log\n---\nWrite release notes for version $ARGUMENTS. Use template.md beside this file.\n",
    );
    write(
        &p.root.join(".claude/skills/release-notes/template.md"),
        "# Notes\n",
    );
    let server = MockServer::start(vec![anthropic::text_turn("Notes written.")]);
    let out = p.run(
        &server,
        &["-p", "/release-notes 2.0", "--output-format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &server.requests()[0].body;
    let texts = last_user_texts(body);
    let dir = p.root.join(".claude/skills/release-notes");
    assert_eq!(
        texts[0],
        format!(
            "Base directory for this skill: {}\n\nWrite release notes for version 2.0. Use template.md beside this file.\n",
            dir.display()
        )
    );
    let skill_tool = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("the Skill tool is offered");
    assert!(
        skill_tool["description"]
            .as_str()
            .unwrap()
            .contains("- release-notes: Writes release notes from the git log")
    );
}

#[test]
fn the_model_invokes_a_skill_whose_grant_lasts_for_that_turn_only() {
    let p = project();
    write(
        &p.user_home.join(".claude/skills/scaffold/SKILL.md"),
        "---\ndescription: Creates the scaffold files\nallowed-tools: Bash(touch:*)\n---\nCreate the file named $ARGUMENTS with touch.\n",
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_s",
                "Skill",
                json!({"skill": "scaffold", "args": "one.txt"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[("toolu_t", "Bash", json!({"command": "touch one.txt"}))],
        ),
        anthropic::text_turn("Created one.txt."),
        // The second prompt: without the skill, touch needs approval again.
        anthropic::tool_turn(
            None,
            &[("toolu_u", "Bash", json!({"command": "touch two.txt"}))],
        ),
        anthropic::text_turn("Could not."),
    ]);
    let out = stream_json_run(&p, &server, &[], &["scaffold one.txt", "now two.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let skill_result = &tool_results(&requests[1].body)[0];
    assert_ne!(skill_result["is_error"], true, "{skill_result}");
    assert!(result_text(skill_result).contains("Create the file named one.txt with touch."));
    assert!(p.root.join("one.txt").exists());
    assert!(!p.root.join("two.txt").exists());
    let denied = &tool_results(&requests[4].body)[0];
    assert_eq!(denied["is_error"], true);
}

#[test]
fn an_unknown_skill_is_answered_with_the_names_there_are() {
    let p = project();
    write(
        &p.user_home.join(".claude/skills/lint/SKILL.md"),
        "---\ndescription: Lints\n---\nRun the linter.",
    );
    write(
        &p.user_home.join(".claude/skills/secret/SKILL.md"),
        "---\ndescription: Only for people\ndisable-model-invocation: true\n---\nHidden.",
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_a", "Skill", json!({"skill": "deploy"})),
                ("toolu_b", "Skill", json!({"skill": "secret"})),
            ],
        ),
        anthropic::text_turn("ok"),
    ]);
    let out = p.run(&server, &["-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&server.requests()[1].body);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        result_text(&results[0]).contains("Available: lint"),
        "{:?}",
        results[0]
    );
    assert_eq!(results[1]["is_error"], true);
    assert!(result_text(&results[1]).contains("only be invoked by the user"));
    let description = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!description.contains("secret"), "{description}");
}

#[test]
fn at_mentions_attach_files_and_missing_ones_are_reported() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("Seen.")]);
    let out = p.run(&server, &["-p", "compare @calc.py with @nothing/here.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("@nothing/here.py: no such file or directory"));
    let texts = last_user_texts(&server.requests()[0].body);
    assert_eq!(texts[0], "compare @calc.py with @nothing/here.py");
    assert!(texts[1].starts_with(&format!(
        "<attached-file path=\"{}\">",
        p.root.join("calc.py").display()
    )));
    assert!(texts[1].contains("return a - b"));
}

#[test]
fn model_aliases_reach_the_wire_as_model_ids() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn("a"),
        anthropic::text_turn("b"),
        anthropic::text_turn("c"),
        anthropic::text_turn("d"),
    ]);
    assert_eq!(
        p.run(&server, &["-p", "hi", "--model", "opus"])
            .status
            .code(),
        Some(0)
    );
    write(
        &p.user_home.join(".claude/settings.json"),
        r#"{"model": "haiku"}"#,
    );
    assert_eq!(p.run(&server, &["-p", "hi"]).status.code(), Some(0));
    write(
        &p.user_home.join(".claude/commands/quick.md"),
        "---\nmodel: sonnet\n---\nQuick question.",
    );
    let out = stream_json_run(&p, &server, &[], &["/quick", "after"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        models,
        [
            "claude-opus-4-6",
            "claude-haiku-4-5",
            "claude-sonnet-4-6",
            "claude-haiku-4-5"
        ]
    );
}

#[test]
fn commands_are_listed_suggested_and_announced() {
    let p = project();
    write(
        &p.root.join(".claude/commands/review.md"),
        "---\ndescription: Review the diff\n---\nReview.",
    );
    write(
        &p.root.join(".claude/commands/frontend/component.md"),
        "Make $0.",
    );
    let server = MockServer::start(vec![]);
    let out = p.run(&server, &["-p", "/reviw"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean /review?"),
        "{}",
        stderr(&out)
    );
    let out = p.run(&server, &["-p", "/help"]);
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(help.contains("From project files:"), "{help}");
    assert!(help.contains("/frontend:component"), "{help}");
    assert!(
        help.contains("/review") && help.contains("Review the diff"),
        "{help}"
    );
    let out = p.run(
        &server,
        &["-p", "/help", "--output-format", "stream-json", "--verbose"],
    );
    let init: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let names = init["slash_commands"].as_array().unwrap();
    assert!(names.contains(&json!("review")) && names.contains(&json!("frontend:component")));
    assert!(server.requests().is_empty());
}

#[test]
fn a_forked_skill_runs_in_a_subagent_typed_or_invoked() {
    let p = project();
    write(
        &p.user_home.join(".claude/skills/investigate/SKILL.md"),
        "---\ndescription: Investigates a bug in a fresh context\ncontext: fork\nagent: Explore\n---\nInvestigate: $ARGUMENTS\n",
    );
    let server = MockServer::start(vec![
        // Typed: the subagent's call only; its report joins the conversation.
        anthropic::text_turn("FORK-REPORT-1"),
        anthropic::text_turn("Noted."),
        // Invoked by the model through Skill.
        anthropic::tool_turn(
            None,
            &[(
                "toolu_s",
                "Skill",
                json!({"skill": "investigate", "args": "the crash"}),
            )],
        ),
        anthropic::text_turn("FORK-REPORT-2"),
        anthropic::text_turn("Done."),
    ]);
    let out = stream_json_run(
        &p,
        &server,
        &[],
        &[
            "/investigate the leak",
            "what did it find?",
            "look into the crash",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let child = &requests[0].body;
    assert_eq!(child["model"], "claude-haiku-4-5");
    assert!(last_user_texts(child)[0].contains("Investigate: the leak"));
    assert!(
        child["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "Agent")
    );
    // The parent's next turn knows the report; its own history did not include the fork's
    // prompt as a turn of its own.
    let parent = serde_json::to_string(&requests[1].body["messages"]).unwrap();
    assert!(parent.contains("FORK-REPORT-1"), "{parent}");
    assert!(last_user_texts(&requests[3].body)[0].contains("Investigate: the crash"));
    let skill_result = &tool_results(&requests[4].body)[0];
    assert!(
        result_text(skill_result).starts_with("FORK-REPORT-2"),
        "{skill_result}"
    );
    let results: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "result")
        .collect();
    assert!(
        results[0]["result"]
            .as_str()
            .unwrap()
            .starts_with("FORK-REPORT-1")
    );
}

#[test]
fn agents_skills_status_and_init_commands() {
    let p = project();
    write(
        &p.root.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs\nmodel: haiku\n---\nReview.",
    );
    write(
        &p.root.join(".claude/skills/lint/SKILL.md"),
        "---\ndescription: Runs the linter\ndisable-model-invocation: true\n---\nLint.",
    );
    write(&p.user_home.join(".claude/commands/hi.md"), "Say hi.");
    let server = MockServer::start(vec![anthropic::text_turn("Wrote AGENTS.md.")]);
    let text = |args: &[&str]| {
        let out = p.run(&server, args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let agents = text(&["-p", "/agents"]);
    for expected in [
        "general-purpose",
        "Explore",
        "Plan",
        "reviewer",
        "[project; model haiku] Reviews diffs",
    ] {
        assert!(agents.contains(expected), "{expected} in {agents}");
    }
    let skills = text(&["-p", "/skills"]);
    assert!(
        skills.contains("Skills: 1") && skills.contains("/lint"),
        "{skills}"
    );
    assert!(
        skills.contains("[project skill] (user only) Runs the linter"),
        "{skills}"
    );
    assert!(
        skills.contains("Custom commands: 1") && skills.contains("/hi"),
        "{skills}"
    );
    let status = text(&["-p", "/status"]);
    assert!(
        status.contains(&format!("Directory:   {}", p.root.display())),
        "{status}"
    );
    assert!(
        status.contains("Model:       claude-sonnet-4-6"),
        "{status}"
    );
    assert!(
        status.contains("1 custom commands, 1 skills, 4 subagent types"),
        "{status}"
    );
    assert!(server.requests().is_empty());
    let init = text(&["-p", "/init focus on tests"]);
    assert_eq!(init.trim(), "Wrote AGENTS.md.");
    let sent = last_user_texts(&server.requests()[0].body)[0].clone();
    assert!(
        sent.starts_with("Study this repository and write an AGENTS.md"),
        "{sent}"
    );
    assert!(sent.ends_with("The user adds: focus on tests"), "{sent}");
}

#[test]
fn a_long_skill_reaches_the_model_whole() {
    let p = project();
    // 35,000 characters of instructions, as three of the real public skills are.
    let body: String = (0..800)
        .map(|i| format!("Step {i:04}: check the next thing carefully.\n"))
        .collect();
    assert!(body.len() > 34_000, "{}", body.len());
    write(
        &p.user_home.join(".claude/skills/audit/SKILL.md"),
        &format!("---\ndescription: Audits the code\n---\n{body}The end of the audit skill.\n"),
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_a", "Skill", json!({"skill": "audit"}))]),
        anthropic::text_turn("Audited."),
    ]);
    let out = p.run(&server, &["-p", "audit this"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = result_text(&tool_results(&server.requests()[1].body)[0]);
    assert!(result.contains(body.as_str()), "the body arrives uncut");
    assert!(result.contains("The end of the audit skill."));
}

#[test]
fn a_skill_named_like_a_built_in_is_still_the_models_to_invoke() {
    let p = project();
    write(
        &p.root.join(".claude/skills/memory/SKILL.md"),
        "---\ndescription: Records a decision in the project's memory file\n---\nAppend the decision to docs/DECISIONS.md.\n",
    );
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("toolu_m", "Skill", json!({"skill": "memory"}))]),
        anthropic::text_turn("Recorded."),
    ]);
    let out = stream_json_run(&p, &server, &[], &["remember this"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let skill_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("the Skill tool is offered")
        .clone();
    assert!(
        skill_tool["description"]
            .as_str()
            .unwrap()
            .contains("- memory: Records a decision"),
        "{skill_tool}"
    );
    let result = &tool_results(&requests[1].body)[0];
    assert_ne!(result["is_error"], true, "{result}");
    assert!(result_text(result).contains("Append the decision to docs/DECISIONS.md."));
    // Typed, `/memory` stays the built-in (a command of the full-screen UI): the skill is
    // not offered as a slash command.
    let init: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let slash = init["slash_commands"].as_array().unwrap();
    assert!(!slash.contains(&json!("memory")), "{init}");
    assert!(slash.contains(&json!("help")), "{init}");
}
