//! The Claude Code compatibility corpus (`../shared/fixtures/claude/`, built only with
//! `--features corpus`): every settings file and plugin `hooks.json` in it parses without a
//! warning, the files merge, and their matchers, `if` rules, timeouts and
//! `${CLAUDE_PLUGIN_ROOT}` evaluate as Claude Code documents.

use std::path::{Path, PathBuf};
use std::time::Duration;

use robota::core::hooks::{HandlerKind, HookConfig, HookEvent};
use robota::sdk::settings::merge;
use serde_json::Value;

/// The corpus directory; panics (failing the test) when it is missing, since these tests
/// only build with `--features corpus`, which promises the corpus is there.
fn corpus() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/claude"
    ));
    assert!(
        dir.is_dir(),
        "the `corpus` feature is on but the Claude Code corpus is missing: expected \
         `../shared/fixtures/claude` beside the repository ({}); put it there or test \
         without `--features corpus`",
        dir.display()
    );
    dir
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn plugin_root(hooks_json: &Path) -> PathBuf {
    hooks_json.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn every_hook_bearing_file_in_the_corpus_parses_and_merges() {
    let mut files = Vec::new();
    json_files(&corpus(), &mut files);
    let mut merged = HookConfig::default();
    let mut settings_files = Vec::new();
    let mut plugin_files = 0;
    for path in &files {
        let value = read(path);
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "hooks.json" {
            let (config, warnings) = HookConfig::from_plugin_file(&value, &plugin_root(path));
            assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
            assert!(!config.is_empty(), "{}", path.display());
            merged.merge(config);
            plugin_files += 1;
        } else if name.starts_with("settings") {
            let (config, warnings) = HookConfig::from_settings(&value);
            assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
            merged.merge(config);
            settings_files.push(path.clone());
        } else if let Some(hooks) = value.get("hooks").filter(|h| h.is_object()) {
            // plugin.json may carry hooks inline.
            let (config, warnings) = HookConfig::from_hooks(hooks, Some(&plugin_root(path)));
            assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
            merged.merge(config);
        }
    }
    assert_eq!(plugin_files, 2, "ralph-wiggum and security-guidance");
    assert_eq!(
        settings_files.len(),
        2,
        "settings-strict and claude-code-action"
    );
    // security-guidance 6 + ralph-wiggum 1 + claude-code-action 1.
    assert_eq!(merged.handler_count(), 8);
    assert_eq!(merged.groups(HookEvent::Stop).len(), 2);

    // The settings files also load through the settings merge robota uses at start-up.
    let mut layered_settings = merge::empty();
    let mut provenance = merge::Provenance::new();
    for file in &settings_files {
        let label = file.display().to_string();
        merge::merge_into(
            &mut layered_settings,
            read(file),
            &label,
            "",
            &mut provenance,
        );
    }
    let (layered, warnings) = HookConfig::from_settings(&layered_settings);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(layered.handler_count(), 1);
}

#[test]
fn security_guidance_hooks_evaluate_as_documented() {
    let path = corpus().join("anthropics/claude-code/plugins/security-guidance/hooks/hooks.json");
    let root = plugin_root(&path);
    let (config, _) = HookConfig::from_plugin_file(&read(&path), &root);
    let start = &config.groups(HookEvent::SessionStart)[0];
    assert!(start.matcher.matches("startup") && start.matcher.matches("resume"));
    assert_eq!(start.handlers[0].timeout, Some(Duration::from_secs(180)));
    let HandlerKind::Command { command, .. } = &start.handlers[0].kind else {
        panic!("a command hook");
    };
    let root_text = root.to_string_lossy();
    assert_eq!(
        command,
        &format!(
            "bash \"{root_text}/hooks/sg-python.sh\" \"{root_text}/hooks/ensure_agent_sdk.py\""
        )
    );
    assert_eq!(
        start.handlers[0].plugin_root.as_deref(),
        Some(root.as_path())
    );

    let post = config.groups(HookEvent::PostToolUse);
    assert_eq!(post.len(), 2);
    // "Edit|Write|MultiEdit|NotebookEdit" is an exact list: MultiEdit is a retired name
    // that simply never fires.
    assert!(post[0].matcher.matches("Edit") && post[0].matcher.matches("NotebookEdit"));
    assert!(!post[0].matcher.matches("Bash") && !post[0].matcher.matches("EditX"));
    assert!(post[1].matcher.matches("Bash") && !post[1].matcher.matches("Read"));
    let conditions: Vec<&str> = post[1]
        .handlers
        .iter()
        .filter_map(|h| h.condition.as_deref())
        .collect();
    assert_eq!(conditions, vec!["Bash(git commit:*)", "Bash(git push:*)"]);
    assert!(
        post[1].handlers.iter().all(|h| h.background),
        "asyncRewake runs in the background"
    );
    assert!(config.groups(HookEvent::Stop)[0].handlers[0].background);
    assert_eq!(
        config.groups(HookEvent::UserPromptSubmit)[0].handlers[0].effective_timeout(),
        Duration::from_secs(60)
    );
}

#[test]
fn ralph_wiggum_and_claude_code_action_hooks_evaluate_as_documented() {
    let path = corpus().join("anthropics/claude-code/plugins/ralph-wiggum/hooks/hooks.json");
    let root = plugin_root(&path);
    let (config, _) = HookConfig::from_plugin_file(&read(&path), &root);
    let stop = &config.groups(HookEvent::Stop)[0];
    assert!(stop.matcher.matches("anything"), "no matcher = all");
    assert_eq!(
        stop.handlers[0].kind,
        HandlerKind::Command {
            command: format!("{}/hooks/stop-hook.sh", root.to_string_lossy()),
            args: None,
        }
    );

    let path = corpus().join("anthropics/claude-code-action/.claude/settings.json");
    let (config, _) = HookConfig::from_settings(&read(&path));
    let post = &config.groups(HookEvent::PostToolUse)[0];
    for tool in ["Edit", "Write", "MultiEdit"] {
        assert!(post.matcher.matches(tool));
    }
    assert!(!post.matcher.matches("NotebookEdit") && !post.matcher.matches("Bash"));
    assert_eq!(
        post.handlers[0].label(),
        "bunx prettier@3.5.3 --no-config --write ."
    );

    let strict = corpus().join("anthropics/claude-code/examples/settings/settings-strict.json");
    let (config, warnings) = HookConfig::from_settings(&read(&strict));
    assert!(
        config.is_empty() && warnings.is_empty(),
        "no hooks, nothing to warn about"
    );
}
