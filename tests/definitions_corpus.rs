//! Every command, skill and agent file of the Claude Code corpus (`../shared/fixtures/claude`,
//! with `--features corpus`) loads through robota's own readers with the fields their
//! authors wrote: descriptions, argument hints, allowed-tools (a comma string of legacy
//! `Bash(cmd:*)` rules, a YAML list), agent tool lists with retired names.

#![cfg(feature = "corpus")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use robota::sdk::agents::AgentCatalog;
use robota::sdk::commands::definition::{read_commands, read_skills};
use robota::sdk::commands::{DefinitionRoots, Origin};

fn corpus() -> PathBuf {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/claude"
    ));
    assert!(
        root.is_dir(),
        "the `corpus` feature is on but the corpus is missing at {}",
        root.display()
    );
    root.to_path_buf()
}

/// Every folder named `name` under `dir`.
fn folders(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == name) {
                out.push(path.clone());
            }
            folders(&path, name, out);
        }
    }
}

#[test]
fn every_corpus_command_and_skill_loads_with_its_frontmatter() {
    let root = corpus();
    let (mut command_dirs, mut skill_dirs) = (Vec::new(), Vec::new());
    folders(&root, "commands", &mut command_dirs);
    folders(&root, "skills", &mut skill_dirs);
    let mut warnings = Vec::new();
    let commands: Vec<_> = command_dirs
        .iter()
        .flat_map(|d| read_commands(d, &Origin::Project, &mut warnings))
        .collect();
    let skills: Vec<_> = skill_dirs
        .iter()
        .flat_map(|d| read_skills(d, &Origin::Project, &mut warnings))
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert_eq!(skills.len(), 2, "{skills:?}");
    for c in commands.iter().chain(&skills) {
        assert!(
            !c.description.is_empty(),
            "{} has no description",
            c.path.display()
        );
        assert!(!c.body.trim().is_empty(), "{}", c.path.display());
    }
    let pr = commands
        .iter()
        .find(|c| c.name == "commit-push-pr")
        .unwrap();
    assert_eq!(pr.description, "Commit, push, and open a PR");
    assert_eq!(pr.allowed_tools.len(), 6);
    assert_eq!(pr.allowed_tools[0], "Bash(git checkout --branch:*)");
    let example = commands
        .iter()
        .find(|c| c.name == "example-command")
        .unwrap();
    assert_eq!(example.argument_hint, "<required-arg> [optional-arg]");
    assert_eq!(example.allowed_tools, ["Read", "Glob", "Grep", "Bash"]);
    let webapp = skills.iter().find(|c| c.name == "webapp-testing").unwrap();
    assert!(webapp.description.starts_with("Toolkit for interacting"));
}

#[test]
fn every_corpus_agent_loads_and_tolerates_retired_tool_names() {
    let root = corpus();
    let mut dirs = Vec::new();
    folders(&root, "agents", &mut dirs);
    assert!(!dirs.is_empty());
    let mut found = Vec::new();
    for dir in &dirs {
        // Each agents folder as a project's `.claude/agents`.
        let project = dir.parent().unwrap().parent().unwrap();
        let roots = DefinitionRoots::new(&robota::sdk::ProjectPaths::new(
            project,
            None,
            "/nonexistent-robota-home",
        ));
        let catalog = AgentCatalog::discover(&roots);
        assert!(catalog.warnings.is_empty(), "{:?}", catalog.warnings);
        found.extend(
            catalog
                .agents
                .into_iter()
                .filter(|a| a.source != "built-in"),
        );
    }
    let reviewer = found
        .iter()
        .find(|a| a.name == "security-code-reviewer")
        .expect("the corpus' reviewer agent");
    assert_eq!(reviewer.model.as_deref(), Some("inherit"));
    let tools = reviewer.tools.clone().unwrap();
    assert!(tools.contains(&"Grep".to_string()) && tools.contains(&"BashOutput".to_string()));
    assert!(
        reviewer
            .prompt
            .starts_with("You are an elite security code reviewer")
    );
}

/// Every plugin of the corpus — folders with `.claude-plugin/plugin.json`, `hooks/hooks.json`
/// or a `.mcp.json` beside a plugin's other folders — loads without a warning, with its
/// manifest's fields, its hooks and its MCP servers.
#[test]
fn every_corpus_plugin_loads_with_its_hooks_and_servers() {
    use robota::sdk::plugins::load_plugin;
    let root = corpus();
    let (mut manifests, mut hook_dirs) = (Vec::new(), Vec::new());
    folders(&root, ".claude-plugin", &mut manifests);
    folders(&root, "hooks", &mut hook_dirs);
    let mut roots: Vec<PathBuf> = manifests
        .iter()
        .filter(|d| d.join("plugin.json").is_file())
        .map(|d| d.parent().unwrap().to_path_buf())
        .collect();
    roots.extend(
        hook_dirs
            .iter()
            .filter(|d| d.join("hooks.json").is_file())
            .map(|d| d.parent().unwrap().to_path_buf()),
    );
    roots.sort();
    roots.dedup();
    assert!(roots.len() >= 3, "{roots:?}");
    let (mut hooks, mut servers) = (0, 0);
    for dir in &roots {
        let mut warnings = Vec::new();
        let plugin = load_plugin(dir, "corpus", &mut warnings)
            .unwrap_or_else(|| panic!("{}: {warnings:?}", dir.display()));
        assert!(warnings.is_empty(), "{}: {warnings:?}", dir.display());
        hooks += plugin.hooks.handler_count();
        servers += plugin.mcp_servers.len();
        if plugin.name == "example-plugin" {
            assert_eq!(plugin.author.as_deref(), Some("Anthropic"));
            assert!(plugin.description.is_some());
            assert_eq!(
                plugin.mcp_servers[0].0,
                "plugin_example-plugin_example-server"
            );
            assert!(
                plugin
                    .commands
                    .iter()
                    .any(|c| c.name == "example-plugin:example-command")
            );
        }
    }
    assert!(hooks >= 2, "{hooks}");
    assert!(servers >= 1, "{servers}");
}
