//! Settings loading against real files in temp directories.

use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    robota: PathBuf,
    cwd: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let robota = home.join(".robota");
    let cwd = tmp.path().join("repo");
    for d in [
        home.join(".claude"),
        robota.clone(),
        cwd.join(".claude"),
        cwd.join(".robota"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    Dirs {
        _tmp: tmp,
        home,
        robota,
        cwd,
    }
}

fn load(d: &Dirs, extra: Option<&str>, interactive: bool) -> Result<Settings, SettingsError> {
    let paths = ProjectPaths::new(d.cwd.clone(), Some(d.home.clone()), d.robota.clone());
    Settings::load(&LoadOptions {
        paths: &paths,
        extra,
        interactive,
    })
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn eight_layers_merge_in_order() {
    let d = dirs();
    write(
        &d.home.join(".claude/settings.json"),
        r#"{"model":"m1","permissions":{"allow":["Read"]},"env":{"A":"1"}}"#,
    );
    write(&d.robota.join("settings.json"), r#"{"model":"m2"}"#);
    write(
        &d.cwd.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Bash(rm *)"]},"env":{"B":"2"}}"#,
    );
    write(&d.cwd.join(".robota/settings.json"), r#"{"model":"m4"}"#);
    write(
        &d.cwd.join(".claude/settings.local.json"),
        r#"{"permissions":{"ask":["Edit"]}}"#,
    );
    write(
        &d.cwd.join(".robota/settings.local.json"),
        r#"{"model":"m6"}"#,
    );
    let s = load(&d, Some(r#"{"model":"m7"}"#), false).unwrap();
    assert_eq!(s.values.model.as_deref(), Some("m7"));
    assert_eq!(s.source_of("/model"), Some("--settings"));
    assert_eq!(
        s.merged["permissions"]["allow"],
        serde_json::json!(["Read"])
    );
    assert_eq!(
        s.merged["permissions"]["deny"],
        serde_json::json!(["Bash(rm *)"])
    );
    assert_eq!(s.merged["permissions"]["ask"], serde_json::json!(["Edit"]));
    assert_eq!(
        s.env(),
        vec![("A".into(), "1".into()), ("B".into(), "2".into())]
    );
    let rules = s.rules(RuleList::Deny);
    assert_eq!(rules[0].1, Scope::Project);
    assert!(s.describe().contains("/model = \"m7\"    (--settings)"));
}

#[test]
fn merge_conflict_markers_are_named_in_plain_words() {
    let d = dirs();
    let path = d.cwd.join(".claude/settings.local.json");
    let text =
        "{\n<<<<<<< HEAD\n  \"model\": \"a\"\n=======\n  \"model\": \"b\"\n>>>>>>> feature\n}\n";
    write(&path, text);
    let err = load(&d, None, false).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:2: ", path.display())), "{err}");
    assert!(err.contains("unresolved merge-conflict markers"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "left as it was"
    );
}

#[test]
fn malformed_json_and_wrong_types_name_file_line_and_column() {
    let d = dirs();
    let path = d.cwd.join(".claude/settings.json");
    write(
        &path,
        "{\n  \"model\": \"x\",\n  \"permissions\": {\"allow\": [\"Read\",]}\n}",
    );
    let err = load(&d, None, false).unwrap_err().to_string();
    assert!(err.contains(&format!("{}:3:", path.display())), "{err}");
    assert!(err.contains("malformed JSON"));
    write(
        &path,
        "{\n  \"permissions\": {\n    \"allow\": \"Read\"\n  }\n}",
    );
    let err = load(&d, None, false).unwrap_err().to_string();
    assert!(err.contains(&format!("{}:3:", path.display())), "{err}");
    assert!(err.contains("wrong type"), "{err}");
    write(&path, r#"{"someFutureKey": {"x": 1}, "model": "ok"}"#);
    assert_eq!(
        load(&d, None, false).unwrap().values.model.as_deref(),
        Some("ok")
    );
}

#[test]
fn env_references_expand() {
    let d = dirs();
    // SAFETY: a variable only this test reads.
    unsafe { std::env::set_var("ROBOTA_SETTINGS_TEST_KEY", "secret-value") };
    write(
        &d.robota.join("settings.json"),
        r#"{"providers":{"p":{"apiKey":"$ENV:ROBOTA_SETTINGS_TEST_KEY","baseURL":"${ROBOTA_SETTINGS_TEST_UNSET:-http://127.0.0.1:1}"}}}"#,
    );
    let s = load(&d, None, false).unwrap();
    assert_eq!(
        s.values.providers["p"].api_key.as_deref(),
        Some("secret-value")
    );
    assert_eq!(
        s.values.providers["p"].base_url.as_deref(),
        Some("http://127.0.0.1:1")
    );
    assert!(
        s.describe()
            .contains("/providers/p/apiKey = \"[REDACTED]\"")
    );
}

#[test]
fn an_untrusted_projects_status_line_command_waits_for_trust_in_the_ui() {
    let d = dirs();
    write(
        &d.cwd.join(".claude/settings.json"),
        r#"{"statusLine":{"type":"command","command":"touch /tmp/pwned"}}"#,
    );
    let interactive = load(&d, None, true).unwrap();
    assert!(interactive.merged.get("statusLine").is_none());
    assert!(
        interactive
            .held_back
            .iter()
            .any(|h| h.starts_with("statusLine from")),
        "{:?}",
        interactive.held_back
    );
    trust::TrustStore::load(&d.robota).trust(&d.cwd).unwrap();
    let trusted = load(&d, None, true).unwrap();
    assert!(trusted.merged.get("statusLine").is_some());
}

#[test]
fn untrusted_projects_are_held_back_until_trusted() {
    let d = dirs();
    write(
        &d.cwd.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash"],"deny":["Bash(rm *)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}"#,
    );
    let headless = load(&d, None, false).unwrap();
    assert!(!headless.trusted);
    assert_eq!(headless.merged["permissions"].get("allow"), None);
    assert_eq!(
        headless.merged["permissions"]["deny"],
        serde_json::json!(["Bash(rm *)"])
    );
    assert!(
        headless.merged.get("hooks").is_some(),
        "headless keeps project hooks"
    );
    let interactive = load(&d, None, true).unwrap();
    assert!(interactive.merged.get("hooks").is_none());
    assert!(
        interactive
            .held_back
            .iter()
            .any(|h| h.starts_with("hooks from"))
    );
    trust::TrustStore::load(&d.robota).trust(&d.cwd).unwrap();
    let trusted = load(&d, None, true).unwrap();
    assert!(trusted.trusted);
    assert_eq!(
        trusted.merged["permissions"]["allow"],
        serde_json::json!(["Bash"])
    );
    assert!(trusted.held_back.is_empty());
}

/// Over the third-party corpus beside the clone: only with `--features corpus`, and then a
/// missing corpus fails.
#[cfg(feature = "corpus")]
#[test]
fn every_claude_code_fixture_settings_file_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/claude");
    assert!(
        root.is_dir(),
        "the `corpus` feature is on but the Claude Code corpus is missing: expected \
         `../shared/fixtures/claude` beside the repository ({})",
        root.display()
    );
    let mut found = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("settings"))
                && path.extension().is_some_and(|e| e == "json")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                let label = path.display().to_string();
                let mut unknown = Vec::new();
                parse(&text, &label, &mut unknown).unwrap_or_else(|e| panic!("{e}"));
                // Keys robota does not read are named with the file, never an error.
                for key in &unknown {
                    assert_eq!(key.file, label);
                    assert!(
                        !key.key.is_empty()
                            && text.contains(key.key.rsplit('.').next().unwrap_or("")),
                        "{key:?}"
                    );
                }
                found += 1;
            }
        }
    }
    assert!(found >= 1, "no settings fixtures found");
}

#[test]
fn hook_commands_keep_their_shell_variables() {
    let d = dirs();
    write(
        &d.cwd.join(".claude/settings.json"),
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"${CLAUDE_PROJECT_DIR}\"/hooks/stop.sh $HOME"}]}]},"model":"${ROBOTA_SETTINGS_UNSET_MODEL:-m0}"}"#,
    );
    let s = load(&d, None, false).unwrap();
    assert_eq!(
        s.merged["hooks"]["Stop"][0]["hooks"][0]["command"],
        "\"${CLAUDE_PROJECT_DIR}\"/hooks/stop.sh $HOME"
    );
    assert_eq!(s.values.model.as_deref(), Some("m0"));
}

#[test]
fn the_auto_compact_threshold_is_a_share_false_or_the_default() {
    let d = dirs();
    let path = d.cwd.join(".claude/settings.json");
    let threshold = |text: &str| {
        write(&path, text);
        load(&d, None, false).unwrap().auto_compact_threshold()
    };
    assert_eq!(threshold("{}").unwrap(), Some(0.835));
    assert_eq!(
        threshold(r#"{"autoCompactThreshold":0.5}"#).unwrap(),
        Some(0.5)
    );
    assert_eq!(
        threshold(r#"{"autoCompactThreshold":false}"#).unwrap(),
        None
    );
    assert_eq!(threshold(r#"{"autoCompactEnabled":false}"#).unwrap(), None);
    let err = threshold(r#"{"autoCompactThreshold":83.5}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("above 0 and at most 1"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    write(&path, r#"{"autoCompactThreshold":"high"}"#);
    assert!(
        load(&d, None, false)
            .unwrap_err()
            .to_string()
            .contains("wrong type")
    );
}
