//! End to end: a company's managed settings (`managed-settings.json`, here in the
//! directory `ROBOTA_MANAGED_SETTINGS_DIR` names) rule over every other layer. The real
//! binary refuses bypassPermissions from the flag, `--dangerously-skip-permissions`, a
//! user's `defaultMode` and `--settings`, each saying what blocked it; ignores project
//! hooks and permission rules when the policy allows its own only; does not start the
//! project's MCP servers; and `robota config` marks the managed values.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::process::Output;

use serde_json::{Value, json};
use support::project::{Project, output_text, project, stream_json_lines_with};
use support::{MockServer, anthropic};

/// Writes `policy` as the managed settings and returns their directory.
fn managed(p: &Project, policy: Value) -> std::path::PathBuf {
    let dir = p.user_home.join("etc-robota");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("managed-settings.json"),
        serde_json::to_string_pretty(&policy).unwrap(),
    )
    .unwrap();
    dir
}

fn run(p: &Project, server: &MockServer, dir: &std::path::Path, args: &[&str]) -> Output {
    p.command(server, args)
        .env("ROBOTA_MANAGED_SETTINGS_DIR", dir)
        .output()
        .unwrap()
}

#[test]
fn bypass_permissions_is_refused_from_every_place_with_the_reason() {
    let p = project();
    let dir = managed(
        &p,
        json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
    );
    let server = MockServer::start(vec![]);
    std::fs::create_dir_all(&p.home).unwrap();
    let attempts: Vec<Vec<&str>> = vec![
        vec!["-p", "hi", "--permission-mode", "bypassPermissions"],
        vec!["-p", "hi", "--dangerously-skip-permissions"],
        vec![
            "-p",
            "hi",
            "--settings",
            r#"{"permissions":{"defaultMode":"bypassPermissions","disableBypassPermissionsMode":"allow"}}"#,
        ],
    ];
    for args in attempts {
        let out = run(&p, &server, &dir, &args);
        assert_ne!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            output_text(&out)
        );
        let policy_file = dir.join("managed-settings.json");
        assert!(
            output_text(&out).contains(&format!(
                "bypassPermissions mode is disabled by managed settings {}",
                policy_file.display()
            )),
            "{args:?} says what blocked it:\n{}",
            output_text(&out)
        );
    }
    // A user's own default mode is refused the same way.
    std::fs::write(
        p.home.join("settings.json"),
        r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
    )
    .unwrap();
    let out = run(&p, &server, &dir, &["-p", "hi"]);
    assert!(
        output_text(&out).contains("bypassPermissions mode is disabled by managed settings"),
        "{}",
        output_text(&out)
    );
    assert!(server.requests().is_empty(), "no turn ran in bypass mode");
}

#[test]
fn managed_only_hooks_and_rules_leave_the_project_s_out_and_config_marks_the_policy() {
    let p = project();
    let claude = p.root.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let hook = json!([{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]);
    std::fs::write(
        claude.join("settings.json"),
        json!({
            "hooks": {"UserPromptSubmit": hook},
            "permissions": {"allow": ["Bash(touch allowed-by-project)"]}
        })
        .to_string(),
    )
    .unwrap();
    let touch = || {
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": "touch allowed-by-project"}),
            )],
        )
    };

    // Without a policy the trusted project's hook runs and its allow rule lets the command
    // run.
    let server = MockServer::start(vec![touch(), anthropic::text_turn("done")]);
    let trust = p.command(&server, &["trust"]).output().unwrap();
    assert_eq!(trust.status.code(), Some(0), "{}", output_text(&trust));
    let none = p.user_home.join("no-policy");
    let out = run(&p, &server, &none, &["-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert!(
        p.root.join("hook-ran").exists(),
        "the control run's hook ran"
    );
    assert!(p.root.join("allowed-by-project").exists());
    std::fs::remove_file(p.root.join("hook-ran")).unwrap();
    std::fs::remove_file(p.root.join("allowed-by-project")).unwrap();

    let dir = managed(
        &p,
        json!({
            "allowManagedHooksOnly": true,
            "allowManagedPermissionRulesOnly": true,
            "cleanupPeriodDays": 7,
            "permissions": {"deny": ["WebFetch"]}
        }),
    );
    let server = MockServer::start(vec![touch(), anthropic::text_turn("done")]);
    let out = run(
        &p,
        &server,
        &dir,
        &[
            "-p",
            "go",
            "--allowedTools",
            "Bash(touch allowed-by-project)",
        ],
    );
    assert!(
        !p.root.join("hook-ran").exists(),
        "the project's hook did not run under allowManagedHooksOnly"
    );
    assert!(
        !p.root.join("allowed-by-project").exists(),
        "neither the project's allow rule nor --allowedTools let the command run:\n{}",
        output_text(&out)
    );

    // The user's own file sets it too; the managed value is the one in effect.
    std::fs::create_dir_all(p.user_home.join(".claude")).unwrap();
    std::fs::write(
        p.user_home.join(".claude/settings.json"),
        r#"{"cleanupPeriodDays": 99}"#,
    )
    .unwrap();
    let out = p
        .command(&server, &["config"])
        .env("ROBOTA_MANAGED_SETTINGS_DIR", &dir)
        .output()
        .unwrap();
    let config = output_text(&out);
    let policy_file = dir.join("managed-settings.json").display().to_string();
    assert!(
        config.contains(&format!(
            "/cleanupPeriodDays = 7    ({policy_file}) [managed: cannot be overridden]"
        )),
        "{config}"
    );
    assert!(
        config.contains("ignored by managed policy: hooks in")
            && config.contains("allowManagedHooksOnly"),
        "{config}"
    );
}

#[test]
fn managed_policy_keeps_the_project_s_mcp_servers_and_denied_servers_from_starting() {
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("ok"), anthropic::text_turn("ok")]);
    let trust = p.command(&server, &["trust"]).output().unwrap();
    assert_eq!(trust.status.code(), Some(0), "{}", output_text(&trust));
    // Each server, if started, leaves a file behind before failing its handshake.
    let starts =
        |name: &str| json!({"command": "sh", "args": ["-c", format!("touch started-{name}")]});
    std::fs::write(
        p.root.join(".mcp.json"),
        json!({"mcpServers": {"project-server": starts("project")}}).to_string(),
    )
    .unwrap();
    let dir = managed(
        &p,
        json!({
            "enableAllProjectMcpServers": false,
            // A plugin's servers are named plugin_<plugin>_<server>, as /mcp lists them.
            "deniedMcpServers": [{"serverName": "denied-server"}, {"serverName": "plugin_kit_kit-server"}]
        }),
    );
    let flag =
        json!({"mcpServers": {"denied-server": starts("denied"), "fine-server": starts("fine")}})
            .to_string();
    // A plugin's server named in the deny list is held back as well.
    let plugin = p.user_home.join("kit");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "kit", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join(".mcp.json"),
        json!({"mcpServers": {"kit-server": starts("plugin")}}).to_string(),
    )
    .unwrap();
    let plugin_dir = plugin.display().to_string();
    let out = run(
        &p,
        &server,
        &dir,
        &[
            "-p",
            "hi",
            "--mcp-config",
            &flag,
            "--plugin-dir",
            &plugin_dir,
        ],
    );
    let said = output_text(&out);
    assert!(
        said.contains("project MCP servers are turned off by managed settings"),
        "{said}"
    );
    assert!(
        said.contains("\"denied-server\" is in deniedMcpServers"),
        "{said}"
    );
    assert!(!p.root.join("started-project").exists(), "{said}");
    assert!(!p.root.join("started-denied").exists(), "{said}");
    assert!(
        said.contains(
            "\"plugin_kit_kit-server\" is in deniedMcpServers (from plugin kit); not started"
        ),
        "the plugin's server is refused by name:\n{said}"
    );
    assert!(!p.root.join("started-plugin").exists(), "{said}");
    assert!(
        p.root.join("started-fine").exists(),
        "a server the policy allows still starts:\n{said}"
    );
}

#[test]
fn no_client_can_switch_to_bypass_under_the_policy_and_the_policy_s_mode_beats_the_flag() {
    let p = project();
    let dir = managed(
        &p,
        json!({"permissions": {"disableBypassPermissionsMode": "disable", "defaultMode": "plan"}}),
    );
    let target = p.root.join("bypassed.txt");
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "w1",
                "Write",
                json!({"file_path": target.display().to_string(), "content": "bypassed\n"}),
            )],
        ),
        anthropic::text_turn("Tried."),
    ]);
    let lines = [
        json!({"type": "control_request", "request_id": "r1",
               "request": {"subtype": "set_permission_mode", "mode": "bypassPermissions"}}),
        json!({"type": "user", "message": {"role": "user", "content": "/mode bypassPermissions"}}),
        json!({"type": "user", "message": {"role": "user", "content": "write the file"}}),
    ];
    let out = stream_json_lines_with(
        &p,
        &server,
        &["--permission-mode", "acceptEdits"],
        &lines,
        |command| {
            command.env("ROBOTA_MANAGED_SETTINGS_DIR", &dir);
        },
    );
    let said = output_text(&out);
    let policy = "bypassPermissions mode is disabled by managed settings";
    let stdout = String::from_utf8_lossy(&out.stdout);
    let messages: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // The policy's mode, not the flag's: the session says plan, and stderr says why.
    let init = messages.iter().find(|m| m["subtype"] == "init").unwrap();
    assert_eq!(init["permissionMode"], "plan", "{said}");
    assert!(
        said.contains("--permission-mode acceptEdits was not used: managed settings"),
        "{said}"
    );
    // The SDK's switch is refused with the reason.
    let answer = messages
        .iter()
        .find(|m| m["type"] == "control_response" && m["response"]["request_id"] == "r1")
        .unwrap();
    assert_eq!(answer["response"]["subtype"], "error", "{answer}");
    assert!(
        answer["response"]["error"]
            .as_str()
            .unwrap()
            .contains(policy),
        "{answer}"
    );
    // `/mode` is refused the same way.
    let mode_result = messages
        .iter()
        .filter(|m| m["type"] == "result")
        .find(|m| m["errors"].to_string().contains(policy));
    assert!(mode_result.is_some(), "/mode says why:\n{stdout}");
    // Still in plan mode: the Write was not carried out.
    assert!(!target.exists(), "the write ran as if in bypass:\n{stdout}");
}
