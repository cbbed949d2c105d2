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
use support::project::{Project, output_text, project};
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
            "deniedMcpServers": [{"serverName": "denied-server"}]
        }),
    );
    let flag =
        json!({"mcpServers": {"denied-server": starts("denied"), "fine-server": starts("fine")}})
            .to_string();
    let out = run(&p, &server, &dir, &["-p", "hi", "--mcp-config", &flag]);
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
        p.root.join("started-fine").exists(),
        "a server the policy allows still starts:\n{said}"
    );
}
