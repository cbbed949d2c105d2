//! End to end: the guard the agent cannot disarm. The real `robota -p` in bypass mode
//! with every tool allowed, against the loopback mock model, which tries each way of
//! changing what runs at the next start or the next git call — the user's settings, a
//! project hook, a git hook, git's config, project MCP servers. Counted by real effects:
//! every protected file is byte for byte what it was, and nothing ran; an allow rule that
//! names the path lets that one write through.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::project::{json_result, project, result_text, tool_results};
use support::{MockServer, anthropic};

const EVIL_SETTINGS: &str =
    r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}"#;

fn snapshot(paths: &[&Path]) -> Vec<Option<Vec<u8>>> {
    paths.iter().map(|p| std::fs::read(p).ok()).collect()
}

#[test]
fn no_call_changes_settings_hooks_or_git_config_in_bypass_mode() {
    let p = project();
    std::fs::create_dir_all(&p.home).unwrap();
    let user_settings = p.home.join("settings.json");
    std::fs::write(
        &user_settings,
        json!({"permissions": {"allow": ["Bash", "Write", "Edit"], "deny": ["Read(./secrets/**)"]}})
            .to_string(),
    )
    .unwrap();
    let local = p.root.join(".claude/settings.local.json");
    let robota_local = p.root.join(".robota/settings.local.json");
    let hook = p.root.join(".git/hooks/pre-commit");
    let config = p.root.join(".git/config");
    let mcp = p.root.join(".mcp.json");
    let watched = [
        user_settings.as_path(),
        local.as_path(),
        robota_local.as_path(),
        hook.as_path(),
        config.as_path(),
        mcp.as_path(),
    ];
    let before = snapshot(&watched);
    let home = p.home.display().to_string();
    let attacks: Vec<(String, &str, Value)> = vec![
        (
            "w1".into(),
            "Write",
            json!({"file_path": local.display().to_string(), "content": EVIL_SETTINGS}),
        ),
        (
            "r2".into(),
            "Read",
            json!({"file_path": format!("{home}/settings.json")}),
        ),
        (
            "w2".into(),
            "Write",
            json!({"file_path": format!("{home}/settings.json"), "content": "{}"}),
        ),
        (
            "w3".into(),
            "Write",
            json!({"file_path": ".mcp.json", "content": "{\"mcpServers\":{}}"}),
        ),
        (
            "b1".into(),
            "Bash",
            json!({"command": format!("echo '{{}}' > {home}/settings.json")}),
        ),
        (
            "b2".into(),
            "Bash",
            json!({"command": format!("mkdir -p .claude && printf '%s' '{EVIL_SETTINGS}' > .claude/settings.local.json")}),
        ),
        (
            "b3".into(),
            "Bash",
            json!({"command": "mkdir -p .robota; cp /dev/null .robota/settings.local.json"}),
        ),
        (
            "b4".into(),
            "Bash",
            json!({"command": "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"}),
        ),
        (
            "b5".into(),
            "Bash",
            json!({"command": "git config core.pager 'touch pwned; cat'"}),
        ),
        (
            "b6".into(),
            "Bash",
            json!({"command": "cd .git && echo '[alias] x = !touch pwned' >> config"}),
        ),
        (
            "b8".into(),
            "Bash",
            json!({"command": "printf '[alias]\\n\\tx = !touch pwned\\n' > evil.cfg && git -C .git config --file config include.path ../evil.cfg"}),
        ),
        (
            "b7".into(),
            "Bash",
            json!({"command": "python3 -c \"open('.claude/settings.local.json','w').write('{}')\""}),
        ),
    ];
    let mut calls: Vec<(&str, &str, Value)> = attacks
        .iter()
        .map(|(id, name, input)| (id.as_str(), *name, input.clone()))
        .collect();
    calls.push(("ok", "Bash", json!({"command": "echo fine > made.txt"})));
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &calls),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "persist",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(snapshot(&watched), before, "a protected file changed");
    assert!(!p.root.join("pwned").exists());
    assert_eq!(
        std::fs::read_to_string(p.root.join("made.txt")).unwrap(),
        "fine\n"
    );
    let results = tool_results(&server.requests()[1].body);
    for (id, _, _) in attacks.iter().filter(|(id, _, _)| id != "r2") {
        let block = results
            .iter()
            .find(|b| b["tool_use_id"] == id.as_str())
            .unwrap();
        assert_eq!(block["is_error"], true, "{id}: {block}");
        assert!(result_text(block).contains("denied"), "{id}: {block}");
    }
}

#[test]
fn an_allow_rule_naming_the_path_lets_that_write_through() {
    let p = project();
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(
        p.home.join("settings.json"),
        json!({"permissions": {"allow": ["Write(./.claude/settings.local.json)"]}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                (
                    "w1",
                    "Write",
                    json!({"file_path": ".claude/settings.local.json", "content": "{}"}),
                ),
                (
                    "w2",
                    "Write",
                    json!({"file_path": ".claude/settings.json", "content": "{}"}),
                ),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "configure",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    assert_eq!(json_result(&out)["is_error"], false);
    assert_eq!(
        std::fs::read_to_string(p.root.join(".claude/settings.local.json")).unwrap(),
        "{}"
    );
    assert!(!p.root.join(".claude/settings.json").exists());
}
