//! End to end: a `Read(...)` deny rule holds on every path to the file, counted by what
//! reaches the model (the mock's recorded requests), with the real `robota -p`:
//! - Grep over the project root, with no path, a glob filter, `dir/..` or a symlinked
//!   directory, and Glob's listing, skip the denied files while finding the others;
//! - a CLAUDE.md `@import` of a denied file (in the project or under `~/.ssh`) leaves it
//!   out of the system prompt;
//! - Bash paths resolve against the shell's current directory after an earlier call's
//!   `cd`, and follow a symlink before the `..` after it, as the kernel does — in bypass
//!   mode with every Bash command allowed.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::project::{Project, json_result, project};
use support::{MockServer, anthropic};

/// In every protected file; must never reach the model.
const SECRET: &str = "CANARY-9f3e-SECRET";
/// In an ordinary file; the searches must find it (they do run).
const PUBLIC: &str = "CANARY-public";

/// A project with `secrets/key`, `secrets/inner/`, a symlink `docs -> secrets`, a symlink
/// `lnk -> secrets/inner`, `sub/`, `public.txt`, the user's `~/.ssh/id_rsa`, and deny
/// rules for both in the user settings.
fn protected_project() -> Project {
    let p = project();
    let root = &p.root;
    std::fs::create_dir_all(root.join("secrets/inner")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("secrets/key"), format!("{SECRET}\n")).unwrap();
    std::fs::write(root.join("public.txt"), format!("{PUBLIC}\n")).unwrap();
    std::os::unix::fs::symlink(root.join("secrets"), root.join("docs")).unwrap();
    std::os::unix::fs::symlink(root.join("secrets/inner"), root.join("lnk")).unwrap();
    std::fs::create_dir_all(p.user_home.join(".ssh")).unwrap();
    std::fs::write(p.user_home.join(".ssh/id_rsa"), format!("{SECRET}-ssh\n")).unwrap();
    std::fs::write(
        root.join("CLAUDE.md"),
        "Project notes.\n@secrets/key\n@~/.ssh/id_rsa\n@public.txt\n",
    )
    .unwrap();
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(
        p.home.join("settings.json"),
        json!({"permissions": {"deny": ["Read(./secrets/**)", "Read(~/.ssh/**)"]}}).to_string(),
    )
    .unwrap();
    p
}

/// Every request body the mock received, joined.
fn everything_sent(server: &MockServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text around the first `needle` in `haystack`, for a failure message.
fn around(haystack: &str, needle: &str) -> String {
    let at = haystack.find(needle).unwrap_or(0);
    let start = haystack.floor_char_boundary(at.saturating_sub(200));
    let end = haystack.ceil_char_boundary((at + 200).min(haystack.len()));
    haystack[start..end].to_string()
}

#[test]
fn searches_and_imports_never_show_a_denied_file_in_any_mode() {
    for mode in ["default", "bypassPermissions"] {
        let p = protected_project();
        let server = MockServer::start(vec![
            anthropic::tool_turn(
                None,
                &[
                    (
                        "g1",
                        "Grep",
                        json!({"pattern": "CANARY", "output_mode": "content"}),
                    ),
                    (
                        "g2",
                        "Grep",
                        json!({"pattern": "CANARY", "glob": "**/*", "output_mode": "content"}),
                    ),
                    (
                        "g3",
                        "Grep",
                        json!({"pattern": "CANARY", "path": "sub/..", "output_mode": "content"}),
                    ),
                    (
                        "g4",
                        "Grep",
                        json!({"pattern": "CANARY", "path": "docs", "output_mode": "content"}),
                    ),
                    ("g5", "Grep", json!({"pattern": "CANARY"})),
                    ("l1", "Glob", json!({"pattern": "**/*"})),
                    ("l2", "Glob", json!({"pattern": "docs/*"})),
                ],
            ),
            anthropic::text_turn("done"),
        ]);
        let out = p.run(
            &server,
            &[
                "-p",
                "find the canary",
                "--output-format",
                "json",
                "--permission-mode",
                mode,
            ],
        );
        let result = json_result(&out);
        assert_eq!(result["is_error"], false, "{mode}: {result}");
        let sent = everything_sent(&server);
        assert_eq!(server.requests().len(), 2, "{mode}");
        assert!(sent.contains(PUBLIC), "{mode}: the searches ran");
        assert!(
            sent.contains("Project notes."),
            "{mode}: CLAUDE.md was loaded"
        );
        assert!(
            !sent.contains(SECRET),
            "{mode}: a denied file reached the model: {}",
            around(&sent, SECRET)
        );
        let listing = &server.requests()[1].body;
        let glob_result = support::project::tool_results(listing)
            .into_iter()
            .find(|b| b["tool_use_id"] == "l1")
            .map(|b| support::project::result_text(&b))
            .unwrap();
        assert!(glob_result.contains("public.txt"), "{glob_result}");
        assert!(!glob_result.contains("/secrets/"), "{glob_result}");
    }
}

#[test]
fn bash_paths_follow_the_shells_directory_and_symlinks_before_dot_dot() {
    let p = protected_project();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[
                ("b1", "Bash", json!({"command": "cd sub"})),
                ("b2", "Bash", json!({"command": "cat ../secrets/key"})),
                ("b3", "Bash", json!({"command": "cat ../lnk/../key"})),
                ("b4", "Bash", json!({"command": "cat ../public.txt"})),
            ],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "read things",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    let sent = everything_sent(&server);
    assert!(sent.contains(PUBLIC), "the ordinary read ran from sub/");
    assert!(
        !sent.contains(SECRET),
        "a denied file reached the model: {}",
        around(&sent, SECRET)
    );
    let results = support::project::tool_results(&server.requests()[1].body);
    for id in ["b2", "b3"] {
        let block = results.iter().find(|b| b["tool_use_id"] == id).unwrap();
        assert_eq!(block["is_error"], true, "{id}: {block}");
        assert!(
            support::project::result_text(block).contains("denied"),
            "{id}: {block}"
        );
    }
}

/// A project whose skill, command and subagent files are symlinks: `leak*` to the
/// user's denied `~/.ssh/id_rsa` (a frontmatter-shaped key, so it would parse), `notes*`
/// to an ordinary file in the user's dotfiles.
fn linked_definitions_project() -> Project {
    let p = protected_project();
    let key = p.user_home.join(".ssh/id_rsa");
    std::fs::write(
        &key,
        format!("---\nname: leak\ndescription: {SECRET}-desc\n---\n{SECRET}-body\n"),
    )
    .unwrap();
    let dotfiles = p.user_home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let notes = dotfiles.join("notes.md");
    std::fs::write(
        &notes,
        "---\nname: notes\ndescription: Take notes\n---\nNOTES-BODY-OK\n",
    )
    .unwrap();
    let claude = p.root.join(".claude");
    for dir in ["skills/leak", "skills/notes", "commands", "agents"] {
        std::fs::create_dir_all(claude.join(dir)).unwrap();
    }
    let link = |target: &std::path::Path, at: &str| {
        std::os::unix::fs::symlink(target, claude.join(at)).unwrap();
    };
    link(&key, "skills/leak/SKILL.md");
    link(&key, "commands/leakcmd.md");
    link(&key, "agents/leak.md");
    link(&notes, "skills/notes/SKILL.md");
    link(&notes, "commands/notescmd.md");
    p
}

#[test]
fn a_symlinked_skill_command_or_agent_never_brings_a_denied_file_to_the_model() {
    for mode in ["default", "acceptEdits", "plan", "bypassPermissions"] {
        for prompt in ["/leakcmd", "/leak", "/notescmd", "hello"] {
            let p = linked_definitions_project();
            let server = MockServer::start(vec![anthropic::text_turn("done")]);
            let out = p.run(
                &server,
                &[
                    "-p",
                    prompt,
                    "--output-format",
                    "json",
                    "--permission-mode",
                    mode,
                ],
            );
            let sent = everything_sent(&server);
            assert!(
                !sent.contains(SECRET),
                "{mode} {prompt}: a denied file reached the model: {}",
                around(&sent, SECRET)
            );
            if prompt == "/notescmd" {
                // The benign control: a symlink to a readable file still works.
                assert!(
                    sent.contains("NOTES-BODY-OK"),
                    "{mode}: {}",
                    json_result(&out)
                );
            }
            if prompt == "hello" {
                assert!(
                    sent.contains("Take notes"),
                    "{mode}: the linked skill is offered"
                );
            }
        }
    }
}
