//! Which files the permission guard protects in every mode (`core::permission::
//! ProtectedPaths`): robota's and Claude Code's settings and everything else under
//! `.claude/` and `.robota/` (hooks, agents, plugins, commands), `$ROBOTA_HOME`, project
//! MCP servers (`.mcp.json`, `~/.claude.json`), and git's hooks, config and common dir
//! (`.git/hooks`, `.git/config`, `.git/commondir`, `~/.gitconfig`) — each a way for one tool call to make code run at a later start or a
//! later git call, or to erase the user's rules.

use std::path::{Path, PathBuf};

use robota_core::permission::{PermissionRule, ProtectedPaths};

/// The protected files of a user whose home is `home` and whose robota state lives in
/// `robota_home` (files under an unknown home are left out rather than guessed at).
pub fn protected_paths(home: Option<&Path>, robota_home: Option<&Path>) -> ProtectedPaths {
    let mut specs: Vec<String> = [
        ".claude",
        ".robota",
        ".mcp.json",
        "**/.git/hooks",
        "**/.git/config",
        // Where git finds the rest of the repository: pointed at a copy whose config sets
        // `core.fsmonitor`, the user's next `git status` runs that program.
        "**/.git/commondir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let absolute = |path: PathBuf| path.to_str().map(|p| format!("/{p}"));
    if let Some(home) = home {
        specs.extend(absolute(home.join(".gitconfig")));
        // Claude Code's user file: its `mcpServers` start with the next session.
        specs.extend(absolute(home.join(".claude.json")));
        specs.extend(absolute(home.join(".config/git")));
    }
    if let Some(dir) = robota_home.and_then(|d| absolute(d.to_path_buf())) {
        specs.push(format!("{dir}/**"));
        specs.push(dir);
    }
    let rules = specs
        .iter()
        .filter_map(|spec| PermissionRule::parse(&format!("Edit({spec})")))
        .collect();
    let mut words: Vec<String> = [
        ".claude",
        ".robota",
        ".mcp.json",
        ".git/hooks",
        ".git/config",
        ".git/commondir",
        ".gitconfig",
        "git/config",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    words.extend(robota_home.and_then(Path::to_str).map(str::to_lowercase));
    ProtectedPaths { rules, words }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robota_core::RiskClass;
    use robota_core::permission::{CallFacts, PermissionMode, PermissionPolicy, Verdict};
    use serde_json::json;

    fn policy(mode: PermissionMode, allow: &str) -> PermissionPolicy {
        PermissionPolicy {
            mode,
            allow: PermissionRule::parse_list(allow),
            home: Some("/home/u".into()),
            protected: protected_paths(
                Some(Path::new("/home/u")),
                Some(Path::new("/home/u/state")),
            ),
            ..PermissionPolicy::default()
        }
    }

    fn write(p: &PermissionPolicy, path: &str) -> Verdict {
        let input = json!({"file_path": path, "content": "x"});
        p.evaluate(&CallFacts {
            input: Some(&input),
            ..CallFacts::new("Write", RiskClass::Edit, Some(path), Path::new("/repo"))
        })
    }

    fn bash(p: &PermissionPolicy, command: &str) -> Verdict {
        p.evaluate(&CallFacts::new(
            "Bash",
            RiskClass::Execute,
            Some(command),
            Path::new("/repo"),
        ))
    }

    fn asks(v: &Verdict) -> bool {
        matches!(v, Verdict::Ask { reason } if reason.contains("protected"))
    }

    #[test]
    fn writes_to_protected_files_ask_in_every_mode() {
        for mode in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::BypassPermissions,
        ] {
            let p = policy(mode, "Edit,Write,Bash");
            for path in [
                ".claude/settings.json",
                ".claude/settings.local.json",
                "/repo/.claude/agents/x.md",
                ".claude",
                ".robota/settings.local.json",
                ".mcp.json",
                ".git/hooks/pre-commit",
                ".git/config",
                "sub/.git/config",
                "/home/u/state/settings.json",
                "/home/u/.robota/settings.json",
                "/home/u/.claude/settings.json",
                "~/.gitconfig",
                ".git/commondir",
                "/home/u/.claude.json",
                "~/.claude.json",
            ] {
                assert!(asks(&write(&p, path)), "{mode:?} Write {path}");
            }
            for command in [
                "echo '{}' > .claude/settings.local.json",
                "cp evil.json /home/u/state/settings.json",
                "cat x >> .git/hooks/post-checkout",
                "ln -sf /tmp/x .git/hooks/pre-commit",
                "cd .git && echo x > config",
                "git config alias.st '!rm -rf ~'",
                "git config --global core.pager 'sh -c evil'",
                "python3 -c \"open('.claude/settings.local.json','w').write('{}')\"",
                "rm -rf .robota",
                "mv .mcp.json /tmp/",
                "echo /tmp/evil-repo/.git > .git/commondir",
                "cp x.json ~/.claude.json",
            ] {
                assert!(asks(&bash(&p, command)), "{mode:?} Bash {command}");
            }
            for (tool_ok, path) in [("Write", "src/main.rs"), ("Write", ".github/ci.yml")] {
                assert!(!asks(&write(&p, path)), "{mode:?} {tool_ok} {path}");
            }
            for command in [
                "echo hi > notes.txt",
                "git config user.name",
                "git status",
                "cat .claude/settings.json",
                "ls .git/hooks",
                "cat .git/commondir",
            ] {
                assert!(!asks(&bash(&p, command)), "{mode:?} Bash {command}");
            }
        }
    }

    #[test]
    fn an_allow_rule_naming_the_path_lets_the_write_through() {
        let p = policy(
            PermissionMode::BypassPermissions,
            "Write(./.claude/settings.local.json),Bash(echo:*)",
        );
        assert_eq!(write(&p, ".claude/settings.local.json"), Verdict::Allow);
        assert!(asks(&write(&p, ".claude/settings.json")));
        // A rule for the whole tool does not name the path.
        let broad = policy(PermissionMode::BypassPermissions, "Write,Edit");
        assert!(asks(&write(&broad, ".claude/settings.local.json")));
    }
}
