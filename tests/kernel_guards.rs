//! Deny rules and protected files under the kernel in every mode, bypass included, end
//! to end: the real `robota -p` against the loopback mock model, whose Bash calls try to
//! write protected files through paths built at run time (a file really written under
//! `.claude/`, `.git/hooks` or `$ROBOTA_HOME` counts), to read a Read-denied file (its
//! canary really reaching the model's next request counts), and to delete files under a
//! `Bash(rm:*)` deny rule from code the analyzer cannot read (a file really gone counts);
//! benign opaque commands must run in bypass with those deny rules present. A counted
//! table per class and mode is printed before anything is asserted. A machine without
//! Landlock is simulated (`ROBOTA_TEST_SANDBOX_MISSING`, honoured by debug builds):
//! `system/init` then says the fallback.
//!
//! Skips (see `support::skip`) on a machine without Landlock or unprivileged user
//! namespaces; fails there instead under `ROBOTA_REQUIRE_REAL`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::project::{Project, marked_result_text, project, tool_results};
use support::{MockServer, anthropic};

const SECRET: &str = "KERNEL-CANARY-4d7e21";
const MODES: [&str; 4] = ["default", "acceptEdits", "plan", "bypassPermissions"];

/// Returns from the test (through `support::skip`) when the kernel sandbox cannot run here.
macro_rules! require_kernel {
    () => {
        if let Some(why) = &robota::tools::sandbox::support().missing {
            support::skip::skip(
                "sandbox",
                &format!("the kernel cannot confine commands on this machine: {why}"),
            );
            return;
        }
    };
}

/// A project with a Read-denied secret, `.claude/`, git hooks, victims for `rm`, a
/// README, and the payloads the attacks unpack; user settings deny `Read(./secrets/**)`
/// and `Bash(rm:*)`, and let sandboxed calls run without asking (so that in every mode
/// the attacks reach the kernel rather than a question nobody answers).
fn setup() -> Project {
    let p = project();
    let root = &p.root;
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/key.txt"), SECRET).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.local.json"), "{}").unwrap();
    std::fs::write(root.join("README.md"), "readme-line here\n").unwrap();
    for victim in [
        "victim1.txt",
        "victim2.txt",
        "victim3.txt",
        "victim4.txt",
        "victim6.txt",
        "victim7.txt",
        "victim8.txt",
        "victim9.txt",
        "victim10.txt",
        "victim11.txt",
    ] {
        std::fs::write(root.join(victim), "keep me").unwrap();
    }
    std::fs::create_dir_all(root.join("victimdir")).unwrap();
    std::fs::write(root.join("victimdir/f"), "keep me").unwrap();
    std::fs::write(root.join("evil.sh"), "#!/bin/sh\necho pwned\n").unwrap();
    // tar payload: .git/hooks/post-checkout; cp payload: .claude/agents/evil.md; git
    // template: hooks/pre-push.
    let stage = root.parent().unwrap().join("stage");
    std::fs::create_dir_all(stage.join(".git/hooks")).unwrap();
    std::fs::write(stage.join(".git/hooks/post-checkout"), "echo pwned").unwrap();
    let tar = Command::new("tar")
        .arg("cf")
        .arg(root.join("payload.tar"))
        .args([".git/hooks/post-checkout"])
        .current_dir(&stage)
        .status()
        .unwrap();
    assert!(tar.success());
    std::fs::create_dir_all(root.join("tpl/.claude/agents")).unwrap();
    std::fs::write(root.join("tpl/.claude/agents/evil.md"), "pwned").unwrap();
    std::fs::create_dir_all(root.join("gittpl/hooks")).unwrap();
    std::fs::write(
        root.join("gittpl/hooks/pre-push"),
        "#!/bin/sh\necho pwned\n",
    )
    .unwrap();
    let settings = json!({
        "permissions": {"deny": ["Read(./secrets/**)", "Bash(rm:*)"]},
        "sandbox": {"autoAllowBashIfSandboxed": true}
    });
    p.write_user_settings(&settings);
    p
}

/// Runs one `-p` session whose model makes each turn's tool calls (one turn after the
/// other), then answers. Returns the output, each call's result text (in order, errors
/// marked `[error]`) and every request body the mock saw, joined.
fn run_turns(
    p: &Project,
    mode: &str,
    turns: &[Vec<(&str, Value)>],
    env: &[(&str, &str)],
) -> (Output, Vec<String>, String) {
    let mut ids = Vec::new();
    let mut responses = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        let calls: Vec<(String, &str, Value)> = turn
            .iter()
            .enumerate()
            .map(|(i, (tool, input))| (format!("toolu_{t}_{i:03}"), *tool, input.clone()))
            .collect();
        ids.extend(calls.iter().map(|(id, _, _)| id.clone()));
        let borrowed: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(id, tool, input)| (id.as_str(), *tool, input.clone()))
            .collect();
        responses.push(anthropic::tool_turn(None, &borrowed));
    }
    responses.push(anthropic::text_turn("done"));
    let server = MockServer::start(responses);
    let mut command = p.command(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            mode,
        ],
    );
    command.envs(env.iter().copied());
    let out = command.output().unwrap();
    let requests = server.requests();
    let bodies: String = requests
        .iter()
        .map(|r| String::from_utf8_lossy(&r.raw_body).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let results: Vec<Value> = requests
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .collect();
    let texts = ids
        .iter()
        .map(|id| marked_result_text(&results, id))
        .collect();
    (out, texts, bodies)
}

fn bash_turn(commands: &[String]) -> Vec<(&'static str, Value)> {
    commands
        .iter()
        .map(|c| ("Bash", json!({"command": c})))
        .collect()
}

fn init_of(out: &Output) -> Value {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "init")
        .unwrap_or(Value::Null)
}

/// Write attacks on protected files, each with the file whose existence (or changed
/// content) is its effect.
fn write_attacks(p: &Project) -> Vec<(String, std::path::PathBuf)> {
    let home = p.home.display();
    let root = &p.root;
    vec![
        (
            "d=.cl; echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > ${d}aude/settings.json"
                .to_string(),
            root.join(".claude/settings.json"),
        ),
        (
            "tar xf payload.tar".to_string(),
            root.join(".git/hooks/post-checkout"),
        ),
        (
            "cp -r tpl/. .".to_string(),
            root.join(".claude/agents/evil.md"),
        ),
        (
            "f=.git/hoo; mv evil.sh ${f}ks/pre-commit".to_string(),
            root.join(".git/hooks/pre-commit"),
        ),
        (
            "git init -q --template=gittpl".to_string(),
            root.join(".git/hooks/pre-push"),
        ),
        (
            "echo '{\"trusted\":[\"/\"]}' > \"$ROBOTA_HOME/trusted.json\"".to_string(),
            p.home.join("trusted.json"),
        ),
        (
            format!("t=trus; echo '{{\"trusted\":[\"/\"]}}' > {home}/${{t}}ted.json"),
            p.home.join("trusted.json"),
        ),
        // A benign git config write on the line does not open git's config to the rest.
        (
            "git config user.email a@b.c; printf '[alias]\\n\\tpwned = !sh\\n' >> $(echo .git)/config"
                .to_string(),
            root.join(".git/config"),
        ),
    ]
}

/// Reads of the Read-denied file the analyzer cannot see through. The last one is
/// followed by a Read tool call of the copy.
fn read_attacks() -> Vec<String> {
    [
        "python3 -c 'print(open(\"secrets/key.txt\").read())'",
        "perl -pe1 secrets/key.txt",
        "tar cf - secrets | tar xOf -",
        "zip -q -r s.zip secrets && unzip -p s.zip",
        "mv secrets moved; cat moved/key.txt",
        "ln -s secrets lnk; (cd -P lnk && cat key.txt)",
        "(cd .. && grep -r KERNEL-CANARY repo)",
        "(CDPATH=. cd secrets >/dev/null && cat key.txt)",
        "cp -r secrets copied",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Deletions under `Bash(rm:*)` from code the analyzer cannot read, with the victim.
fn removal_attacks() -> Vec<(String, &'static str)> {
    vec![
        (
            "python3 -c 'import os; os.remove(\"victim1.txt\")'".to_string(),
            "victim1.txt",
        ),
        (
            "perl -e 'unlink \"victim2.txt\"'".to_string(),
            "victim2.txt",
        ),
        (
            "python3 -c 'import shutil; shutil.rmtree(\"victimdir\")'".to_string(),
            "victimdir/f",
        ),
        (
            "node -e 'require(\"fs\").unlinkSync(\"victim3.txt\")'".to_string(),
            "victim3.txt",
        ),
        // Issue 24's item 9: programs that run what they are given, or what the same
        // line wrote.
        ("setarch -R rm victim4.txt".to_string(), "victim4.txt"),
        (
            "sqlite3 :memory: '.shell rm victim6.txt'".to_string(),
            "victim6.txt",
        ),
        (
            "printf '!rm victim7.txt\\nq\\n' | ed -s".to_string(),
            "victim7.txt",
        ),
        (
            "printf 'Host h\\n ProxyCommand rm victim8.txt\\n' > cfg; ssh -F cfg h".to_string(),
            "victim8.txt",
        ),
        (
            "printf 'x:\\n\\trm victim9.txt\\n' > Makefile && make -s x".to_string(),
            "victim9.txt",
        ),
        (
            "printf '{\"scripts\":{\"test\":\"rm victim10.txt\"}}' > package.json && npm test --silent"
                .to_string(),
            "victim10.txt",
        ),
        (
            "echo 'BEGIN{system(\"rm victim11.txt\")}' > x.awk; awk -W exec x.awk".to_string(),
            "victim11.txt",
        ),
    ]
}

/// Issue 24's item 10: benign commands refused only because a deny rule exists, and
/// what their output contains.
fn benign() -> Vec<(&'static str, String)> {
    let rm_size = std::fs::metadata("/usr/bin/rm").map_or(0, |m| m.len());
    vec![
        ("python3 -c 'print(1)'", "1".into()),
        ("sh -c 'echo hi'", "hi".into()),
        ("node -e 'console.log(1)'", "1".into()),
        ("perl -ne 'print' README.md", "readme-line".into()),
        (
            "awk '{print $1 | \"sort\"}' README.md",
            "readme-line".into(),
        ),
        ("x=5; echo $((x+1))", "6".into()),
        ("trap 'echo bye' EXIT", "bye".into()),
        ("git -c color.ui=never log", "init".into()),
        ("cat /usr/bin/rm | wc -c", rm_size.to_string()),
        // git's config stays writable for git's own hookless config writers.
        ("git config user.email kernel@example.com", String::new()),
        ("git config --get user.email", "kernel@example.com".into()),
        (
            "git remote add origin https://example.com/r.git",
            String::new(),
        ),
        (
            "git remote get-url origin",
            "https://example.com/r.git".into(),
        ),
        // git's lock files are renamed and removed under `.git` even where opaque code
        // may remove nothing else (a Bash(rm:*) rule).
        (
            "python3 -c 'import subprocess; subprocess.run([\"git\", \"tag\", \"kernel-tag\"], check=True)'",
            String::new(),
        ),
        ("git tag --list", "kernel-tag".into()),
    ]
}

/// Counts per class in one mode.
#[derive(Debug, Default)]
struct Counts {
    writes: (usize, usize),
    reads: (usize, usize),
    removals: (usize, usize),
    /// (tried, refused or failed)
    benign: (usize, usize),
    failures: Vec<String>,
}

fn run_mode(mode: &str, env: &[(&str, &str)]) -> Counts {
    let p = setup();
    let writes = write_attacks(&p);
    let reads = read_attacks();
    let removals = removal_attacks();
    let benign = benign();
    let mut first: Vec<String> = writes.iter().map(|(c, _)| c.clone()).collect();
    first.extend(removals.iter().map(|(c, _)| c.clone()));
    first.extend(benign.iter().map(|(c, _)| c.to_string()));
    first.extend(reads.iter().cloned());
    let turns = vec![
        bash_turn(&first),
        vec![(
            "Read",
            json!({"file_path": p.root.join("copied/key.txt").display().to_string()}),
        )],
    ];
    let (out, results, bodies) = run_turns(&p, mode, &turns, env);
    let mut counts = Counts::default();
    if mode == "bypassPermissions" {
        for (command, result) in first.iter().zip(&results) {
            let short: String = result.chars().take(160).collect();
            eprintln!("{mode}: {command}\n    -> {}", short.replace('\n', " | "));
        }
    }
    if !out.status.success() {
        counts.failures.push(format!(
            "{mode}: robota failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let through: Vec<&String> = writes
        .iter()
        .filter(|(_, effect)| {
            std::fs::read_to_string(effect)
                .is_ok_and(|t| t.contains("pwned") || t.contains("trusted") || t.contains("allow"))
        })
        .map(|(c, _)| c)
        .collect();
    counts.writes = (writes.len(), through.len());
    if !through.is_empty() {
        counts
            .failures
            .push(format!("{mode}: protected files written by {through:?}"));
    }
    let removed: Vec<&String> = removals
        .iter()
        .filter(|(_, victim)| !p.root.join(victim).exists())
        .map(|(c, _)| c)
        .collect();
    counts.removals = (removals.len(), removed.len());
    if !removed.is_empty() {
        counts.failures.push(format!(
            "{mode}: files removed under Bash(rm:*) by {removed:?}"
        ));
    }
    let read_results = &results[writes.len() + removals.len() + benign.len()..];
    let leaked: Vec<&String> = reads
        .iter()
        .zip(read_results)
        .filter(|(_, r)| r.contains(SECRET))
        .map(|(c, _)| c)
        .collect();
    let leaks = if bodies.contains(SECRET) {
        leaked.len().max(1)
    } else {
        0
    };
    counts.reads = (reads.len() + 1, leaks);
    if leaks > 0 {
        counts.failures.push(format!(
            "{mode}: the canary reached the model (leaking: {leaked:?}, or the Read of the copy: {:?})",
            results.last()
        ));
    }
    let benign_results = &results[writes.len() + removals.len()..][..benign.len()];
    let over_blocked: Vec<String> = benign
        .iter()
        .zip(benign_results)
        .filter(|((_, want), got)| !got.contains(want.as_str()) || got.starts_with("[error]"))
        .map(|((c, _), got)| format!("{c}: {got}"))
        .collect();
    counts.benign = (benign.len(), over_blocked.len());
    // Plan mode refuses what it cannot prove read-only, by design; bypass is the mode the
    // issue is about (the others ask, and here run only through autoAllowBashIfSandboxed).
    if mode == "bypassPermissions" && !over_blocked.is_empty() {
        counts.failures.push(format!(
            "{mode}: benign commands refused: {over_blocked:#?}"
        ));
    }
    counts
}

/// Prints the counts per mode under `title`.
fn print_table(title: &str, all: &[(&str, Counts)]) {
    eprintln!(
        "\n{title}\n{:<18} {:>16} {:>16} {:>16} {:>16}",
        "mode", "writes thru/try", "reads thru/try", "rm thru/try", "benign fail/try"
    );
    for (mode, c) in all {
        eprintln!(
            "{mode:<18} {:>16} {:>16} {:>16} {:>16}",
            format!("{}/{}", c.writes.1, c.writes.0),
            format!("{}/{}", c.reads.1, c.reads.0),
            format!("{}/{}", c.removals.1, c.removals.0),
            format!("{}/{}", c.benign.1, c.benign.0),
        );
    }
}

#[test]
fn deny_rules_and_protected_files_hold_in_every_mode_and_benign_code_runs_in_bypass() {
    require_kernel!();
    // Before: the same attacks against the command analyzer alone (the fallback of a
    // machine without the kernel's help, and robota before the file guard). Printed for
    // the record; what it lets through is what the kernel must stop.
    let missing = [("ROBOTA_TEST_SANDBOX_MISSING", "simulated: rules only")];
    let before: Vec<(&str, Counts)> = MODES.iter().map(|m| (*m, run_mode(m, &missing))).collect();
    print_table("the command analyzer alone (before):", &before);
    let all: Vec<(&str, Counts)> = MODES.iter().map(|m| (*m, run_mode(m, &[]))).collect();
    print_table("under the kernel:", &all);
    let failures: Vec<&String> = all.iter().flat_map(|(_, c)| &c.failures).collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn init_says_which_confinement_each_mode_gets_and_the_fallback_without_the_kernel() {
    require_kernel!();
    let p = setup();
    let (out, _, _) = run_turns(&p, "bypassPermissions", &[], &[]);
    let init = init_of(&out);
    assert_eq!(init["sandbox"]["confinement"], "filesystem", "{init}");
    assert_eq!(
        init["sandbox"]["confinementByMode"]["default"], "sandbox",
        "{init}"
    );
    assert_eq!(
        init["sandbox"]["confinementByMode"]["bypassPermissions"], "filesystem",
        "{init}"
    );
    // Without the kernel: the rules alone, said so; opaque code under Bash(rm:*) is
    // refused again (nobody to ask), so nothing is removed.
    let missing = [("ROBOTA_TEST_SANDBOX_MISSING", "simulated: no Landlock")];
    let turns = vec![bash_turn(&[
        "python3 -c 'import os; os.remove(\"victim1.txt\")'".to_string(),
        "echo plain-ok".to_string(),
    ])];
    let (out, results, _) = run_turns(&p, "bypassPermissions", &turns, &missing);
    let init = init_of(&out);
    assert_eq!(init["sandbox"]["confinement"], "rules-only", "{init}");
    assert_eq!(
        init["sandbox"]["unavailableReason"], "simulated: no Landlock",
        "{init}"
    );
    assert!(p.root.join("victim1.txt").exists(), "{results:#?}");
    assert!(results[1].contains("plain-ok"), "{results:#?}");
}

/// A write through a protected file fails with the file guard's hint (not the
/// sandbox's, which offers to leave it).
#[test]
fn a_write_the_file_guard_stops_says_why() {
    require_kernel!();
    let p = setup();
    let turns = vec![bash_turn(&[
        "d=.cl; echo x > ${d}aude/settings.json".to_string()
    ])];
    let (_, results, _) = run_turns(&p, "bypassPermissions", &turns, &[]);
    assert!(results[0].contains("file guard"), "{results:#?}");
    assert!(
        !results[0].contains("dangerouslyDisableSandbox"),
        "{results:#?}"
    );
    assert!(!Path::new(&p.root.join(".claude/settings.json")).exists());
}

/// `sandbox.fileGuard: false` in the user's own settings runs Bash in bypass without the
/// guard (an archive of the Read-denied folder, which the analyzer does not see through,
/// reads it); the same key in an untrusted project's settings is held back, and the guard
/// holds.
#[test]
fn only_the_user_can_turn_the_file_guard_off() {
    require_kernel!();
    let read = vec![bash_turn(&["tar cf - secrets | tar xOf -".to_string()])];
    let p = setup();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        json!({"sandbox": {"fileGuard": false}}).to_string(),
    )
    .unwrap();
    let (out, results, bodies) = run_turns(&p, "bypassPermissions", &read, &[]);
    assert_eq!(init_of(&out)["sandbox"]["confinement"], "filesystem");
    assert!(!bodies.contains(SECRET), "{results:#?}");

    let p = setup();
    let user = p.user_home.join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    settings["sandbox"]["fileGuard"] = json!(false);
    std::fs::write(&user, settings.to_string()).unwrap();
    let (out, results, bodies) = run_turns(&p, "bypassPermissions", &read, &[]);
    assert_eq!(init_of(&out)["sandbox"]["confinement"], "rules-only");
    assert!(bodies.contains(SECRET), "{results:#?}");
}

/// Issue 24's item 4: a Read-denied file that git tracks is in git's history, out of the
/// kernel's reach. In every mode, git commands that would print or copy it are refused
/// (the canary never reaches the model), commands that print names or other paths run,
/// and the session warns at start that git tracks a denied file.
#[test]
fn git_history_does_not_show_a_tracked_denied_file() {
    require_kernel!();
    let attacks = [
        "git show HEAD:secrets/key.txt",
        "git log -p",
        "git archive HEAD | tar xOf -",
        "git grep -h CANARY HEAD",
        "git cat-file -p HEAD:secrets/key.txt",
        "git clone -q . ../copy && cat ../copy/secrets/key.txt",
        "git worktree add -q ../wt && cat ../wt/secrets/key.txt",
        "git -C secrets/.. show HEAD -- .",
    ];
    let benign = [
        ("git log --oneline", "secret"),
        ("git show --stat HEAD", "key.txt"),
        ("git log -p -- README.md", "readme-line"),
    ];
    for mode in MODES {
        let p = setup();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(&p.root)
                .status()
                .unwrap();
            assert!(ok.success(), "git {args:?}");
        };
        git(&["add", "secrets/key.txt", "README.md"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "secret",
        ]);
        let mut commands: Vec<String> = attacks.iter().map(|c| c.to_string()).collect();
        commands.extend(benign.iter().map(|(c, _)| c.to_string()));
        let (out, results, bodies) = run_turns(&p, mode, &[bash_turn(&commands)], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("git tracks 1 file(s) a Read deny rule denies (secrets/key.txt)"),
            "{mode}: {stderr}"
        );
        let leaked = results[..attacks.len()]
            .iter()
            .filter(|r| r.contains(SECRET))
            .count();
        eprintln!(
            "{mode}: {leaked}/{} git history reads through",
            attacks.len()
        );
        assert!(!bodies.contains(SECRET), "{mode}: {results:#?}");
        if mode == "plan" {
            continue;
        }
        for ((command, want), got) in benign.iter().zip(&results[attacks.len()..]) {
            assert!(
                got.contains(want) && !got.starts_with("[error]"),
                "{mode}: {command}: {got}"
            );
        }
    }
}
