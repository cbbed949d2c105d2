//! Bash decision tests: compound commands, wrappers, opaque lines, read-only commands,
//! redirections and file arguments, modes. (The adversarial suite is in
//! `tests/permission_adversarial.rs`.)

use std::path::Path;

use crate::RiskClass;
use crate::{CallFacts, PermissionMode, PermissionPolicy, PermissionRule, Verdict};

fn policy(mode: PermissionMode, allow: &str, ask: &str, deny: &str) -> PermissionPolicy {
    PermissionPolicy {
        mode,
        allow: PermissionRule::parse_list(allow),
        ask: PermissionRule::parse_list(ask),
        deny: PermissionRule::parse_list(deny),
        home: Some("/home/u".into()),
        ..PermissionPolicy::default()
    }
}

fn bash(cmd: &str) -> CallFacts<'_> {
    CallFacts::new("Bash", RiskClass::Execute, Some(cmd), Path::new("/repo"))
}

fn verdict(p: &PermissionPolicy, cmd: &str) -> &'static str {
    match p.evaluate(&bash(cmd)) {
        Verdict::Allow => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

#[test]
fn deny_beats_allow_and_catches_any_part_of_a_compound_command() {
    let p = policy(PermissionMode::BypassPermissions, "Bash", "", "Bash(rm *)");
    for cmd in [
        "rm -rf /",
        "ls && rm -rf /",
        "ls; rm x",
        "echo hi | rm x",
        "(rm x)",
        "ls\nrm x",
        "true || rm x",
        "ls $(rm x)",
        "ls `rm x`",
        "sh -c 'rm x'",
        "eval 'rm x'",
        "timeout 5 rm x",
        "sudo -u root rm x",
        "find . -exec rm {} \\;",
        "echo a | xargs rm",
        "/bin/rm x",
        "\\rm x",
        "'r'm x",
        "if true; then rm x; fi",
        "f() { rm x; }; f",
    ] {
        assert_eq!(verdict(&p, cmd), "deny", "{cmd}");
    }
    assert_eq!(verdict(&p, "ls -la"), "allow");
    assert_eq!(verdict(&p, "echo rm"), "allow");
    assert_eq!(verdict(&p, "rmdir x"), "allow");
    for cmd in ["$(echo rm) -rf /", "eval \"$x\"", "sh -c \"$x\"", "$CMD x"] {
        assert_eq!(
            verdict(&p, cmd),
            "ask",
            "{cmd} must ask even in bypass mode"
        );
    }
}

#[test]
fn allow_needs_every_part_and_never_covers_opaque_parts() {
    let p = policy(
        PermissionMode::Default,
        "Bash(git status),Bash(npm test:*)",
        "",
        "",
    );
    assert_eq!(verdict(&p, "git status"), "allow");
    assert_eq!(verdict(&p, "git status && npm test -- --watch"), "allow");
    assert_eq!(
        verdict(&p, "timeout 60 npm test"),
        "allow",
        "wrappers are looked through"
    );
    assert_eq!(verdict(&p, "NODE_ENV=test npm test"), "allow");
    for cmd in [
        "git status && cargo build",
        "npm test $(cargo build)",
        "eval npm test",
        "bash -c 'npm test'",
        "sudo npm test",
        "PATH=/tmp npm test",
        "npm test > out.txt",
        "git status; git push",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
}

#[test]
fn read_only_commands_never_ask_inside_the_working_directories() {
    let p = policy(PermissionMode::Default, "", "", "");
    for cmd in [
        "ls -la",
        "cat src/main.rs | head -5",
        "git status && git diff HEAD~1 && git log --oneline -5",
        "grep -rn foo src | wc -l",
        "find . -name '*.rs' -exec grep -l foo {} +",
        "cd src && ls *.rs",
        "echo hi > /dev/null 2>&1",
        "wc -l src/*.rs",
        "rg TODO -g '*.rs'",
        "while read line; do echo \"$line\"; done < notes.txt",
        "diff <(sort a) <(sort b)",
        "{ ls; pwd; } 2> /dev/null",
    ] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
    for cmd in [
        "cat /etc/passwd",
        "ls ..",
        "cd /tmp && ls",
        "ls > listing.txt",
        "find . -delete",
        "git push",
        "cat $FILE",
        "sed -i s/a/b/ x",
        "cd \"$d\" && cat x",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
}

#[test]
fn redirections_are_file_writes() {
    let p = policy(
        PermissionMode::BypassPermissions,
        "",
        "",
        "Edit(.env) Read(~/.ssh/**)",
    );
    assert_eq!(verdict(&p, "echo x > .env"), "deny");
    assert_eq!(verdict(&p, "echo x >> sub/.env"), "deny");
    assert_eq!(verdict(&p, "cat < ~/.ssh/id_rsa"), "deny");
    assert_eq!(verdict(&p, "cat ~/.ssh/id_rsa"), "deny");
    assert_eq!(verdict(&p, "cp ~/.ssh/id_rsa /tmp/x"), "deny");
    assert_eq!(verdict(&p, "rm .env"), "deny");
    assert_eq!(verdict(&p, "echo x > \"$f\""), "ask");
    assert_eq!(verdict(&p, "echo x > out.txt"), "allow");
    let edits = policy(PermissionMode::AcceptEdits, "", "", "");
    assert_eq!(verdict(&edits, "echo x > out.txt"), "allow");
    assert_eq!(verdict(&edits, "echo x > /tmp/out.txt"), "ask");
    assert_eq!(
        verdict(&edits, "mkdir -p build && touch build/x && cp a build/"),
        "allow"
    );
    assert_eq!(verdict(&edits, "mv a /tmp/"), "ask");
    assert_eq!(verdict(&edits, "rm a"), "ask");
    let default = policy(PermissionMode::Default, "Edit(logs/**)", "", "");
    assert_eq!(verdict(&default, "ls > logs/ls.txt"), "allow");
    assert_eq!(verdict(&default, "ls > other.txt"), "ask");
    let plan = policy(PermissionMode::Plan, "", "", "");
    assert_eq!(verdict(&plan, "ls > x"), "deny");
}

#[test]
fn ask_rules_and_possible_matches() {
    let p = policy(
        PermissionMode::BypassPermissions,
        "Bash",
        "Bash(git push *)",
        "Bash(curl *)",
    );
    assert_eq!(verdict(&p, "git push origin main"), "ask");
    assert_eq!(verdict(&p, "git -C sub push"), "ask");
    assert_eq!(verdict(&p, "git $sub origin"), "ask");
    assert_eq!(verdict(&p, "git status"), "allow");
    assert_eq!(verdict(&p, "CURL http://x"), "ask", "case look-alike");
    assert_eq!(
        verdict(&p, "cur\u{0142} http://x"),
        "ask",
        "non-ASCII look-alike"
    );
    assert_eq!(verdict(&p, "wget http://x"), "allow");
    assert_eq!(verdict(&p, "cp /usr/bin/curl ./c && ./c x"), "ask");
}

#[test]
fn parameter_rules() {
    let p = policy(
        PermissionMode::BypassPermissions,
        "",
        "",
        "Bash(run_in_background:true)",
    );
    let input = serde_json::json!({"command": "sleep 100", "run_in_background": true});
    let call = CallFacts {
        input: Some(&input),
        ..bash("sleep 100")
    };
    assert!(matches!(p.evaluate(&call), Verdict::Deny { .. }));
    assert_eq!(verdict(&p, "sleep 100"), "allow");
}

#[test]
fn empty_and_comment_lines_do_nothing() {
    let p = policy(PermissionMode::Default, "", "", "Bash(rm *)");
    assert_eq!(verdict(&p, ""), "allow");
    assert_eq!(verdict(&p, "# rm -rf /"), "allow");
}

#[test]
fn options_are_read_as_getopt_reads_them() {
    let p = policy(PermissionMode::BypassPermissions, "Bash", "", "Bash(rm *)");
    // The command an option names, however it is spelled, is read for deny rules.
    for cmd in [
        "env -iS'rm -f x'",
        "env --split-s='rm x'",
        "flock lock -c'rm x'",
        "flock lock --comm 'rm x'",
        "tar -xf t.tar --to-comm='rm x'",
        "tar --to-c 'rm x' -xf t.tar",
        "git rebase --exe 'rm x' HEAD~1",
        "git rebase -x'rm x' HEAD~1",
    ] {
        assert_eq!(verdict(&p, cmd), "deny", "{cmd}");
    }
    // Inline code and commands in attached or abbreviated options are opaque.
    for cmd in [
        "perl -e'unlink q(x)'",
        "perl -we'unlink q(x)'",
        "perl -lne 'print' f",
        "perl -0777ne 'print' f",
        "python3 -Ic'import os'",
        "node --ev='1'",
        "sed -e'1e ls' f",
        "sed -ne'1e ls' f",
        "sed --expr='1e ls' f",
        "awk -e'BEGIN{system(\"ls\")}'",
        "make --ev=x",
        "sort --compress-prog=./z f",
        "git difftool --extc=./z",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
    for cmd in [
        "perl -Mstrict x.pl",
        "python3 -m pytest -q",
        "node --version",
        "perl -I lib x.pl",
        "sed -i.bak 's/a/b/' f",
        "sed -n -e 's/a/b/p' f",
        "tar --totals -cf o.tar src",
        "tar -xzf o.tgz --to-stdout",
        "sort -S 1M -k2 f",
        "rsync --compress -a a/ b/",
    ] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
}

#[test]
fn sort_writing_a_file_is_not_read_only_however_the_option_is_spelled() {
    let p = policy(PermissionMode::Default, "", "", "");
    for cmd in [
        "sort -no out.txt f",
        "sort -oout.txt f",
        "sort --out=out.txt f",
        "sort --o out.txt f",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
    for cmd in ["sort -n f", "sort -k2 -t, f", "sort -S 1M f"] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
}

#[test]
fn run_time_variable_names_are_opaque() {
    let p = policy(PermissionMode::BypassPermissions, "Bash", "", "Bash(rm *)");
    for cmd in [
        "printf -v \"$n\" x",
        "printf -v\"$n\" x",
        "read \"$n\" <<< x",
        "read -r -a \"$n\" <<< x",
        "test -v \"$n\"",
        "[ -v \"$n\" ]",
        "[[ -v $n ]]",
        "declare -n r=$n",
        "local -n r=x",
        "declare \"$n=1\"",
        "mapfile -t \"$n\" < f",
        "getopts ab \"$n\"",
        "wait -p \"$n\"",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
    for cmd in [
        "printf -v out '%s' \"$x\"",
        "printf '%s\\n' \"$x\"",
        "read -r -p \"$prompt\" line",
        "test -v HOME",
        "[[ -v HOME ]]",
        "export FOO=\"$HOME\"",
        "declare -a a; a+=(1 2)",
        "mapfile -t lines < f",
        "wait \"$pid\"",
    ] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
}

#[test]
fn programs_that_run_their_argument_are_read_or_opaque() {
    let p = policy(PermissionMode::BypassPermissions, "Bash", "", "Bash(rm *)");
    for cmd in [
        "prlimit --nofile=100 rm x",
        "setarch x86_64 rm x",
        "linux64 rm x",
        "logsave /dev/null rm x",
        "fakeroot -- rm x",
        "choom -n 0 -- rm x",
        "faketime 2020-01-01 rm x",
        "eatmydata rm x",
    ] {
        assert_eq!(verdict(&p, cmd), "deny", "{cmd}");
    }
    for cmd in [
        "sg root -c 'ls'",
        "runuser -u root -- ls",
        "capsh -- -c ls",
        "run-parts d",
        "hyperfine 'ls'",
        "xterm -e ls",
    ] {
        assert_eq!(verdict(&p, cmd), "ask", "{cmd}");
    }
}

#[test]
fn files_changed_during_the_session_make_what_runs_them_ask() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in ["Makefile", "x.sh", "package.json"] {
        std::fs::write(root.join(name), "x").unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(root.join(name))
            .unwrap();
        file.set_modified(old).unwrap();
    }
    let marker = root.join(".start");
    std::fs::write(&marker, "").unwrap();
    let start = std::fs::metadata(&marker).unwrap().modified().unwrap();
    let p = PermissionPolicy {
        session_start: Some(start),
        ..policy(
            PermissionMode::Default,
            "Bash(make:*) Bash(./x.sh) Bash(npm test) Bash(bash:*)",
            "",
            "",
        )
    };
    let at = |cmd: &'static str| CallFacts::new("Bash", RiskClass::Execute, Some(cmd), &root);
    let v = |cmd: &'static str| match p.evaluate(&at(cmd)) {
        Verdict::Allow => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    };
    for cmd in ["make", "./x.sh", "npm test", "bash x.sh"] {
        assert_eq!(v(cmd), "allow", "{cmd} before anything changed");
    }
    std::fs::write(root.join("Makefile"), "all:\n\trm -rf ~\n").unwrap();
    std::fs::write(root.join("x.sh"), "rm -rf ~\n").unwrap();
    std::fs::write(root.join("package.json"), "{}").unwrap();
    for cmd in ["make", "make -s all", "./x.sh", "npm test", "bash x.sh"] {
        assert_eq!(
            v(cmd),
            "ask",
            "{cmd} after the session changed what it runs"
        );
    }
    // Without a session start (a policy built only to match rules) nothing is checked.
    let q = PermissionPolicy {
        session_start: None,
        ..p.clone()
    };
    assert_eq!(q.evaluate(&at("make")), Verdict::Allow);
}

#[test]
fn a_whole_tool_allow_runs_writes_and_opaque_lines_but_not_past_deny_ask_or_protected() {
    let p = PermissionPolicy {
        protected: crate::ProtectedPaths {
            rules: PermissionRule::parse_list("Edit(~/.bashrc)"),
            words: vec![".bashrc".into()],
        },
        ..policy(PermissionMode::Default, "Bash", "", "")
    };
    for cmd in [
        "echo x > out.txt",
        "python3 -c 'open(\"f\", \"w\").write(\"x\")'",
        "bash -c 'touch made.txt'",
        "sed -i s/a/b/ x",
        "rm -rf build",
        "PATH=/tmp make",
    ] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
    assert_eq!(verdict(&p, "echo x >> /home/u/.bashrc"), "ask", "protected");
    let with_rules = policy(
        PermissionMode::Default,
        "Bash",
        "Bash(git push:*)",
        "Bash(rm:*)",
    );
    assert_eq!(verdict(&with_rules, "rm -rf build"), "deny");
    assert_eq!(verdict(&with_rules, "git push origin main"), "ask");
    assert_eq!(verdict(&with_rules, "bash -c 'rm -rf build'"), "deny");
    assert_eq!(
        verdict(&with_rules, "eval \"$CMD\""),
        "ask",
        "an opaque line cannot be checked against the deny rule"
    );
    assert_eq!(verdict(&with_rules, "echo x > out.txt"), "allow");
    let narrow = policy(PermissionMode::Default, "Bash(echo:*)", "", "");
    assert_eq!(
        verdict(&narrow, "echo x > out.txt"),
        "ask",
        "a narrow rule asks for the redirect"
    );
    let plan = policy(PermissionMode::Plan, "Bash", "", "");
    assert_eq!(verdict(&plan, "ls"), "allow");
    assert_eq!(
        verdict(&plan, "echo x > out.txt"),
        "deny",
        "plan mode stays read-only"
    );
    assert_eq!(verdict(&plan, "python3 -c 'print(1)'"), "deny");
}

#[test]
fn program_runners_the_analyzer_once_missed_do_not_get_past_a_program_rule() {
    let p = policy(PermissionMode::BypassPermissions, "", "", "Bash(rm:*)");
    let mut through = Vec::new();
    for cmd in [
        "setarch x86_64 rm victim",
        "setarch -R rm victim",
        "setarch x86_64 -R rm victim",
        "perf stat rm victim",
        "perf stat -e cycles -- rm victim",
        "perf record -o /dev/null rm victim",
        "perf trace rm victim",
        "git grep --open-files-in-pager='rm' x",
        "git grep -O'rm' x",
        "perl -M'Foo;system(q(rm victim))' -e1",
        "perl -MPOSIX=x -e1",
        "node --import='data:text/javascript,require(\"fs\").unlinkSync(\"victim\")' -e 1",
        "echo 'BEGIN{system(\"rm victim\")}' > x.awk; awk -W exec=x.awk",
        "echo 'BEGIN{system(\"rm victim\")}' > x.awk; awk -Wexec=x.awk",
        "echo 'BEGIN{system(\"rm victim\")}' > x.awk; awk --exec x.awk",
        "echo 'BEGIN{system(\"rm victim\")}' > x.awk; awk -W exec x.awk",
        "ed victim < script",
        "printf '!rm victim\\n' | ed",
        "ex -sc '!rm victim' -c q",
        "vim -Es -c '!rm victim' -c q",
        "vi -c '!rm victim'",
        "sqlite3 db '.shell rm victim'",
        "sqlite3 db '.system rm victim'",
        "echo '.shell rm victim' | sqlite3 db",
        "printf 'Host h\\n ProxyCommand rm victim\\n' > cfg; ssh -F cfg h",
        "printf 'Host h\\n ProxyCommand rm victim\\n' > cfg; ssh -Fcfg h",
        "ssh -o ProxyCommand='rm victim' host",
        "echo 'x:;rm victim' > Makefile && make x",
        "printf '{\"scripts\":{\"test\":\"rm victim\"}}' > package.json && npm test",
        "echo '{}' > package.json; npm run build",
    ] {
        if verdict(&p, cmd) == "allow" {
            through.push(cmd);
        }
    }
    assert!(through.is_empty(), "{through:#?}");
    for cmd in [
        "sqlite3 db 'select 1'",
        "ed -s victim",
        "perf list",
        "setarch --list",
        "make",
        "npm test",
    ] {
        assert_eq!(verdict(&p, cmd), "allow", "{cmd}");
    }
}
