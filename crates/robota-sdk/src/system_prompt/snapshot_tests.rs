//! What the model is told, reviewed as snapshots (`snapshots/system_prompt_*.snap`): the
//! main system prompt, the plan-mode reminder and the general-purpose subagent's prompt,
//! built in a temp git repository whose path and the platform are replaced by fixed
//! values; and that every subagent's prompt, built-in or custom, has the working rules.

use super::*;
use crate::agents::{AgentCatalog, builtins};
use crate::commands::DefinitionRoots;

/// Runs `f` with snapshots stored in `<repo>/snapshots/`.
fn with_snapshot_dir(f: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(f);
}

/// A git repository on `main` with two commits and an untracked file.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(
        dir.path().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "calc: first version"]);
    std::fs::write(
        dir.path().join("calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    git(&["commit", "-qam", "calc: add() adds"]);
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    dir
}

/// The main prompt of a `-p` session in `dir`, with fixed values for what varies.
fn main_prompt(dir: &Path) -> String {
    let files = vec![ContextFile {
        path: dir.join("AGENTS.md"),
        content: "Run ./test.sh before committing.".into(),
    }];
    build(&PromptParts {
        cwd: dir,
        model: "claude-sonnet-4-6",
        date: "2026-11-28",
        replace: None,
        append: None,
        context_files: &files,
        language: None,
        unattended: true,
    })
}

/// `prompt` with the temp directory and the platform replaced by fixed text.
fn stable(prompt: &str, dir: &Path) -> String {
    let platform = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    prompt
        .replace(&dir.display().to_string(), "/project")
        .replace(&platform, "<platform>")
}

#[test]
fn main_system_prompt() {
    let dir = repository();
    let prompt = stable(&main_prompt(dir.path()), dir.path());
    with_snapshot_dir(|| insta::assert_snapshot!("system_prompt_main", prompt));
}

#[test]
fn plan_mode_reminder() {
    let reminder = robota_core::hooks::protocol::system_reminder(
        robota_session::conversation::PLAN_MODE_REMINDER,
    );
    with_snapshot_dir(|| insta::assert_snapshot!("system_prompt_plan_mode", reminder));
}

#[test]
fn general_purpose_subagent_prompt() {
    let dir = repository();
    let general = builtins()
        .into_iter()
        .find(|a| a.name == "general-purpose")
        .unwrap();
    let prompt = subagent(&general.prompt, &main_prompt(dir.path()), BUILT_IN);
    let prompt = stable(&prompt, dir.path());
    with_snapshot_dir(|| insta::assert_snapshot!("system_prompt_general_purpose", prompt));
}

#[test]
fn every_subagent_prompt_has_the_working_rules_after_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = tmp.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: Read, Grep\n---\nYou review code.\n",
    )
    .unwrap();
    let roots = DefinitionRoots::new(&crate::paths::ProjectPaths::new(
        tmp.path(),
        None,
        tmp.path().join("robota-home"),
    ));
    let catalog = AgentCatalog::discover(&roots);
    assert_eq!(
        catalog.names(),
        ["general-purpose", "Explore", "Plan", "code-reviewer"]
    );
    let parent = main_prompt(tmp.path());
    let replaced = build(&PromptParts {
        replace: Some("You are a custom agent."),
        ..PromptParts {
            cwd: tmp.path(),
            model: "m",
            date: "d",
            replace: None,
            append: None,
            context_files: &[],
            language: None,
            unattended: false,
        }
    });
    for agent in &catalog.agents {
        for (parent, head) in [(&parent, BUILT_IN), (&replaced, "You are a custom agent.")] {
            let prompt = subagent(&agent.prompt, parent, head);
            assert!(prompt.starts_with(agent.prompt.trim_end()), "{prompt}");
            let rules = prompt.find(WORKING_RULES.trim_end());
            let environment = prompt.find("\n# Environment\n");
            assert!(
                rules.is_some() && rules < environment,
                "{}: {prompt}",
                agent.name
            );
            assert!(prompt.contains("# Reporting\nYou are a subagent"));
            assert!(!prompt.contains("You are robota"), "{prompt}");
            assert!(!prompt.contains("You are a custom agent."), "{prompt}");
        }
    }
}
