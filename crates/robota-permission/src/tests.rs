//! Policy tests: the order deny → ask → allow → mode, modes by risk class, file tools and
//! the working directories, WebFetch domains, MCP servers, agents, parameter rules.

use std::path::Path;

use serde_json::{Value, json};

use super::*;

fn policy(mode: PermissionMode, allow: &str, deny: &str) -> PermissionPolicy {
    PermissionPolicy {
        mode,
        allow: PermissionRule::parse_list(allow),
        deny: PermissionRule::parse_list(deny),
        home: Some("/home/u".into()),
        ..PermissionPolicy::default()
    }
}

fn call<'a>(tool: &'a str, risk: RiskClass, arg: &'a str) -> CallFacts<'a> {
    CallFacts::new(tool, risk, Some(arg), Path::new("/repo"))
}

fn with_input<'a>(facts: CallFacts<'a>, input: &'a Value) -> CallFacts<'a> {
    CallFacts {
        input: Some(input),
        ..facts
    }
}

fn is_ask(v: &Verdict) -> bool {
    matches!(v, Verdict::Ask { .. })
}

fn is_deny(v: &Verdict) -> bool {
    matches!(v, Verdict::Deny { .. })
}

#[test]
fn mode_policy_follows_risk() {
    let read = call("Read", RiskClass::Read, "/repo/a");
    let edit_in = call("Edit", RiskClass::Edit, "src/a.rs");
    let edit_out = call("Edit", RiskClass::Edit, "../other/a.rs");
    let build = call("Bash", RiskClass::Execute, "cargo build");
    let p = |m| policy(m, "", "");
    assert_eq!(p(PermissionMode::Default).evaluate(&read), Verdict::Allow);
    assert!(is_ask(&p(PermissionMode::Default).evaluate(&edit_in)));
    assert_eq!(
        p(PermissionMode::AcceptEdits).evaluate(&edit_in),
        Verdict::Allow
    );
    assert!(is_ask(&p(PermissionMode::AcceptEdits).evaluate(&edit_out)));
    assert!(is_deny(&p(PermissionMode::Plan).evaluate(&edit_in)));
    assert!(is_deny(&p(PermissionMode::Plan).evaluate(&build)));
    assert_eq!(
        p(PermissionMode::Plan).evaluate(&call("Bash", RiskClass::Execute, "ls")),
        Verdict::Allow,
        "read-only commands run in plan mode"
    );
    assert_eq!(
        p(PermissionMode::BypassPermissions).evaluate(&build),
        Verdict::Allow
    );
    assert_eq!(
        p(PermissionMode::BypassPermissions).evaluate(&edit_out),
        Verdict::Allow
    );
    let fetch = call("WebFetch", RiskClass::Network, "https://example.com");
    assert!(is_ask(&p(PermissionMode::Default).evaluate(&fetch)));
}

#[test]
fn path_rules_glob_relative_to_cwd() {
    let p = policy(PermissionMode::Default, "Edit(src/**)", "Read(//etc/**)");
    assert_eq!(
        p.evaluate(&call("Edit", RiskClass::Edit, "/repo/src/deep/a.rs")),
        Verdict::Allow
    );
    assert!(is_ask(&p.evaluate(&call(
        "Edit",
        RiskClass::Edit,
        "/repo/docs/a.md"
    ))));
    assert!(is_deny(&p.evaluate(&call(
        "Read",
        RiskClass::Read,
        "/etc/passwd"
    ))));
    assert!(is_deny(&p.evaluate(&call(
        "Read",
        RiskClass::Read,
        "/repo/../etc/passwd"
    ))));
    // A Read deny also blocks writing there.
    assert!(is_deny(&p.evaluate(&call(
        "Write",
        RiskClass::Edit,
        "/etc/hosts"
    ))));
}

#[test]
fn files_outside_the_working_directories_ask_except_in_bypass() {
    let mut p = policy(PermissionMode::Default, "Read", "");
    let outside = call("Read", RiskClass::Read, "/var/log/syslog");
    assert!(
        is_ask(&p.evaluate(&outside)),
        "a bare Read allow stays inside"
    );
    assert_eq!(
        p.evaluate(&call("Read", RiskClass::Read, "src/a.rs")),
        Verdict::Allow
    );
    p.additional_dirs.push("/var/log".into());
    assert_eq!(p.evaluate(&outside), Verdict::Allow);
    let named = policy(PermissionMode::Default, "Read(//opt/data/**)", "");
    assert_eq!(
        named.evaluate(&call("Read", RiskClass::Read, "/opt/data/x.csv")),
        Verdict::Allow
    );
    let bypass = policy(PermissionMode::BypassPermissions, "", "");
    assert_eq!(bypass.evaluate(&outside), Verdict::Allow);
    // Glob and Grep are judged by their directory (and a Glob pattern's own).
    let input = json!({"pattern": "*.rs", "path": "/etc"});
    let glob = with_input(call("Glob", RiskClass::Read, "/etc"), &input);
    assert!(is_ask(
        &policy(PermissionMode::Default, "", "").evaluate(&glob)
    ));
    let input = json!({"pattern": "../../**/id_rsa"});
    let glob = with_input(call("Glob", RiskClass::Read, "x"), &input);
    assert!(is_ask(
        &policy(PermissionMode::Default, "", "").evaluate(&glob)
    ));
    let input = json!({"pattern": "src/**/*.rs"});
    let glob = with_input(call("Glob", RiskClass::Read, "x"), &input);
    assert_eq!(
        policy(PermissionMode::Default, "", "").evaluate(&glob),
        Verdict::Allow
    );
}

#[cfg(unix)]
#[test]
fn home_and_symlinks_in_path_rules() {
    let p = policy(PermissionMode::BypassPermissions, "", "Read(~/.ssh/**)");
    assert!(is_deny(&p.evaluate(&call(
        "Read",
        RiskClass::Read,
        "/home/u/.ssh/id_rsa"
    ))));
    assert!(is_deny(&p.evaluate(&call(
        "Read",
        RiskClass::Read,
        "~/.ssh/config"
    ))));

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let secret = root.join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("key"), "k").unwrap();
    let work = root.join("work");
    std::fs::create_dir(&work).unwrap();
    std::os::unix::fs::symlink(&secret, work.join("innocent")).unwrap();
    let rule = format!("Read(/{}/**)", secret.display());
    let p = policy(PermissionMode::BypassPermissions, "", &rule);
    let through_link = CallFacts::new("Read", RiskClass::Read, Some("innocent/key"), &work);
    assert!(
        is_deny(&p.evaluate(&through_link)),
        "deny applies to the link's target"
    );
    let d = policy(PermissionMode::Default, "Read", "");
    assert!(
        is_ask(&d.evaluate(&through_link)),
        "a link leading outside the working directory is outside"
    );
}

#[test]
fn web_fetch_domains() {
    let p = policy(
        PermissionMode::Default,
        "WebFetch(domain:docs.rs) WebFetch(domain:*.example.com)",
        "WebFetch(domain:evil.test)",
    );
    let fetch = |url| call("WebFetch", RiskClass::Network, url);
    assert_eq!(p.evaluate(&fetch("https://docs.rs/serde")), Verdict::Allow);
    assert_eq!(p.evaluate(&fetch("https://DOCS.RS./x")), Verdict::Allow);
    assert!(
        is_ask(&p.evaluate(&fetch("https://docs.rs.evil.test/x")))
            || is_deny(&p.evaluate(&fetch("https://docs.rs.evil.test/x")))
    );
    assert_eq!(
        p.evaluate(&fetch("https://api.example.com/")),
        Verdict::Allow
    );
    assert!(is_ask(&p.evaluate(&fetch("https://example.com/"))));
    assert!(is_deny(&p.evaluate(&fetch("https://evil.test/"))));
    assert!(is_deny(&p.evaluate(&fetch("https://docs.rs@evil.test/"))));
    assert!(
        is_deny(&p.evaluate(&fetch("not a url"))),
        "an unreadable URL meets the deny rule"
    );
}

#[test]
fn mcp_agents_globs_and_parameters() {
    let p = PermissionPolicy {
        mode: PermissionMode::Default,
        allow: PermissionRule::parse_list("mcp__github Agent(Explore) mcp__*"),
        ask: PermissionRule::parse_list("mcp__github__delete_*"),
        deny: PermissionRule::parse_list("Agent(model:opus) mcp__evil"),
        ..PermissionPolicy::default()
    };
    let tool = |name| call(name, RiskClass::Execute, "");
    assert_eq!(
        p.evaluate(&tool("mcp__github__list_issues")),
        Verdict::Allow
    );
    assert!(is_ask(&p.evaluate(&tool("mcp__github__delete_repo"))));
    assert!(is_deny(&p.evaluate(&tool("mcp__evil__anything"))));
    assert!(
        is_ask(&p.evaluate(&tool("mcp__other__x"))),
        "allow globs need a server"
    );
    let explore = json!({"subagent_type": "Explore", "model": "haiku"});
    let agent = with_input(call("Agent", RiskClass::Execute, "Explore"), &explore);
    assert_eq!(p.evaluate(&agent), Verdict::Allow);
    let opus = json!({"subagent_type": "Explore", "model": "opus"});
    assert!(is_deny(&p.evaluate(&with_input(
        call("Task", RiskClass::Execute, "Explore"),
        &opus
    ))));
    let star = policy(PermissionMode::BypassPermissions, "", "*");
    assert!(is_deny(&star.evaluate(&tool("Read"))));
}

#[test]
fn ask_rules_beat_allow_and_bypass() {
    let p = PermissionPolicy {
        mode: PermissionMode::BypassPermissions,
        allow: PermissionRule::parse_list("Edit"),
        ask: PermissionRule::parse_list("Edit(Cargo.toml)"),
        ..PermissionPolicy::default()
    };
    assert!(is_ask(&p.evaluate(&call(
        "Edit",
        RiskClass::Edit,
        "Cargo.toml"
    ))));
    assert_eq!(
        p.evaluate(&call("Edit", RiskClass::Edit, "src/x.rs")),
        Verdict::Allow
    );
}

#[test]
fn legacy_inside_helper() {
    assert!(inside(Path::new("/repo"), "a/../b"));
    assert!(!inside(Path::new("/repo"), "../x"));
}
