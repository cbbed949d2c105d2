//! End to end: plugins in Claude Code's layout, loaded by the real `robota` binary in print
//! mode against the loopback mock Anthropic server — a plugin folder given with
//! `--plugin-dir` and one installed the way Claude Code installs them
//! (`~/.claude/plugins/installed_plugins.json` + `enabledPlugins`). Each part is counted
//! where its effect lands: the command's prompt in the request, the skill's body in the
//! Skill tool's result, the agent's prompt as the child's system prompt, the hook's marker
//! file, the MCP server's answer.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::project::{Project, json_result, project, result_text, tool_results};
use support::{MockServer, anthropic};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn system_text(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Every text of every message of a request, joined.
fn all_text(request: &Value) -> String {
    request["messages"].to_string()
}

/// A plugin named `kit` at `root` with a command, a skill, an agent, a PreToolUse hook
/// writing `marker` in the plugin folder, and a stdio MCP server (the fake server copied
/// into the plugin, started through `${CLAUDE_PLUGIN_ROOT}`).
fn kit(root: &Path) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        "\u{feff}{\"name\": \"kit\", \"version\": \"1.0.0\", \"author\": {\"name\": \"Tester\"}, \"homepage\": \"x\"}",
    );
    write(
        &root.join("commands/ship.md"),
        "---\ndescription: Ships a release\nargument-hint: <version>\n---\nShip version $ARGUMENTS now.\n",
    );
    write(
        &root.join("skills/check/SKILL.md"),
        "---\ndescription: Checks the release notes\n---\nCheck the notes for $ARGUMENTS carefully.\n",
    );
    write(
        &root.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change\ntools: Read, Grep\n---\nYou are the kit reviewer.\n",
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{"description": "marks Bash calls", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "printf '%s' \"$CLAUDE_PLUGIN_ROOT\" > \"${CLAUDE_PLUGIN_ROOT}/marker\""}]}]}}"#,
    );
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client/fake_server.py"),
        root.join("server.py"),
    )
    .unwrap();
    write(
        &root.join(".mcp.json"),
        r#"{"mcpServers": {"fake": {"command": "python3", "args": ["${CLAUDE_PLUGIN_ROOT}/server.py", "serve"]}}}"#,
    );
}

fn with_kit(p: &Project) -> PathBuf {
    let dir = p.root.parent().unwrap().join("plugins/kit");
    kit(&dir);
    dir
}

#[test]
fn a_plugin_command_runs_as_plugin_colon_command() {
    let p = project();
    let dir = with_kit(&p);
    let server = MockServer::start(vec![anthropic::text_turn("Shipped.")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "/kit:ship 2.1",
            "--plugin-dir",
            dir.to_str().unwrap(),
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_result(&out)["result"], "Shipped.");
    let text = all_text(&server.requests()[0].body);
    assert!(text.contains("Ship version 2.1 now."), "{text}");
    // No note that the flag is not acted on any more.
    assert!(
        !stderr(&out).contains("--plugin-dir is accepted"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_model_invokes_a_plugin_skill_and_delegates_to_a_plugin_agent() {
    let p = project();
    let dir = with_kit(&p);
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_s",
                "Skill",
                json!({"skill": "kit:check", "args": "v2"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[(
                "toolu_a",
                "Agent",
                json!({"description": "review", "prompt": "Review calc.py.", "subagent_type": "kit:reviewer"}),
            )],
        ),
        anthropic::text_turn("REVIEWED"),
        anthropic::text_turn("All done."),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "check and review",
            "--plugin-dir",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let skill_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("the Skill tool is offered");
    assert!(
        skill_tool["description"]
            .as_str()
            .unwrap()
            .contains("kit:check: Checks the release notes"),
        "{skill_tool}"
    );
    let skill_result = &tool_results(&requests[1].body)[0];
    assert_ne!(skill_result["is_error"], true, "{skill_result}");
    assert!(
        result_text(skill_result).contains("Check the notes for v2 carefully."),
        "{skill_result}"
    );
    let child = &requests[2].body;
    assert!(
        system_text(child).starts_with("You are the kit reviewer."),
        "{}",
        system_text(child)
    );
    let agent_result = &tool_results(&requests[3].body)[0];
    assert!(
        result_text(agent_result).contains("REVIEWED"),
        "{agent_result}"
    );
}

#[test]
fn a_plugin_hook_runs_with_its_root_and_its_mcp_server_answers() {
    let p = project();
    let dir = with_kit(&p);
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("toolu_b", "Bash", json!({"command": "echo hi"})),
                (
                    "toolu_m",
                    "mcp__plugin_kit_fake__shout",
                    json!({"text": "from plugin"}),
                ),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p
        .command(
            &server,
            &[
                "-p",
                "go",
                "--plugin-dir",
                dir.to_str().unwrap(),
                "--allowedTools",
                "Bash(echo:*) mcp__plugin_kit_fake",
            ],
        )
        .env("MCP_TIMEOUT", "20000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let marker = std::fs::read_to_string(dir.join("marker")).expect("the plugin hook ran");
    assert_eq!(marker, dir.to_string_lossy());
    let requests = server.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"mcp__plugin_kit_fake__shout"),
        "{offered:?}"
    );
    let results = tool_results(&requests[1].body);
    assert_eq!(results[1]["tool_use_id"], "toolu_m");
    assert_eq!(result_text(&results[1]), "FROM PLUGIN");
    assert_ne!(results[1]["is_error"], true);
}

/// Installs `kit` the way Claude Code does and turns it on or off in the user's settings.
fn install(p: &Project, enabled: bool) -> PathBuf {
    let dir = p.user_home.join(".claude/plugins/cache/tools/kit/1.0.0");
    kit(&dir);
    write(
        &p.user_home.join(".claude/plugins/installed_plugins.json"),
        &json!({"version": 2, "plugins": {"kit@tools": [{
            "scope": "user", "installPath": dir, "version": "1.0.0",
            "installedAt": "2026-01-01T00:00:00.000Z", "lastUpdated": "2026-01-01T00:00:00.000Z",
            "isLocal": false
        }]}})
        .to_string(),
    );
    write(
        &p.user_home.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"kit@tools": enabled}}).to_string(),
    );
    dir
}

#[test]
fn an_installed_plugin_is_used_when_enabled_and_not_when_disabled() {
    let p = project();
    install(&p, true);
    let server = MockServer::start(vec![anthropic::text_turn("Shipped.")]);
    let out = p.run(&server, &["-p", "/kit:ship 3.0"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(all_text(&server.requests()[0].body).contains("Ship version 3.0 now."));

    install(&p, false);
    let server = MockServer::start(vec![anthropic::text_turn("never")]);
    let out = p.run(&server, &["-p", "/kit:ship 3.0"]);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !all_text(&r.body).contains("Ship version")),
        "a disabled plugin's command ran"
    );
    assert!(stderr(&out).contains("kit:ship"), "{}", stderr(&out));
}

#[test]
fn a_broken_plugin_is_a_warning_and_the_session_goes_on() {
    let p = project();
    let dir = p.root.parent().unwrap().join("broken");
    write(&dir.join(".claude-plugin/plugin.json"), "{\"name\": ");
    let missing = p.root.parent().unwrap().join("nowhere");
    let server = MockServer::start(vec![anthropic::text_turn("still fine")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "hi",
            "--plugin-dir",
            dir.to_str().unwrap(),
            "--plugin-dir",
            missing.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "still fine");
    let err = stderr(&out);
    assert!(err.contains("plugin.json: invalid JSON"), "{err}");
    assert!(err.contains("nowhere: not a directory"), "{err}");
}

#[test]
fn a_plugin_turned_on_by_an_untrusted_project_starts_no_mcp_server_until_trusted() {
    let p = project();
    install(&p, false);
    // The user's settings say nothing; the repository's own settings turn the plugin on.
    std::fs::remove_file(p.user_home.join(".claude/settings.json")).unwrap();
    write(
        &p.root.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"kit@tools": true}}).to_string(),
    );
    let offered_mcp = |server: &MockServer| {
        server.requests()[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"].as_str().unwrap().starts_with("mcp__plugin_kit_"))
    };
    let server = MockServer::start(vec![anthropic::text_turn("a"), anthropic::text_turn("b")]);
    let out = p
        .command(&server, &["-p", "hi"])
        .env("MCP_TIMEOUT", "20000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !offered_mcp(&server),
        "an untrusted project started a plugin's server"
    );
    let err = stderr(&out);
    assert!(
        err.contains("plugins it turns on were held back: MCP servers of plugin kit"),
        "{err}"
    );
    assert_eq!(p.run(&server, &["trust"]).status.code(), Some(0));
    let server = MockServer::start(vec![anthropic::text_turn("c")]);
    let out = p
        .command(&server, &["-p", "hi"])
        .env("MCP_TIMEOUT", "20000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        offered_mcp(&server),
        "a trusted project's plugin server is missing"
    );
}

#[test]
fn plugin_list_shows_what_each_plugin_adds_and_init_names_them() {
    let p = project();
    let dir = with_kit(&p);
    let server = MockServer::start(vec![anthropic::text_turn("ok")]);
    let out = p.run(
        &server,
        &["plugin", "list", "--plugin-dir", dir.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("kit 1.0.0  (--plugin-dir)"), "{listing}");
    assert!(
        listing.contains("adds: 1 command, 1 skill, 1 agent, 1 hook, 1 MCP server"),
        "{listing}"
    );
    assert!(
        listing.contains("/kit:check, /kit:ship, agent kit:reviewer, mcp plugin_kit_fake"),
        "{listing}"
    );
    let out = p.run(&server, &["plugin", "list"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "No plugins.");

    let out = p.run(
        &server,
        &[
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            "--verbose",
            "--plugin-dir",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let init: Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["subtype"] == "init")
        .unwrap();
    assert_eq!(
        init["plugins"],
        json!([{"name": "kit", "path": dir.to_string_lossy()}])
    );
    assert!(
        init["slash_commands"]
            .as_array()
            .unwrap()
            .contains(&json!("kit:ship")),
        "{init}"
    );
}
