//! The adversarial suite, by class of command-analysis gap (issue 14 item 5): here-document
//! delimiters, expansions that evaluate a value as code or as a variable name, options read
//! as getopt reads them (attached values, long-option abbreviations), programs that run a
//! command or file they are given, and files written during the session that a command
//! then runs.
//!
//! Every attack is run for real under bash, in its own temp directory holding a canary
//! file `victim`: it "gets through" only when the checker allows it — in any permission
//! mode, under a bare `Bash` allow rule or one naming the program, with `Bash(rm *)` denied
//! — and running it really deleted the canary. Benign lines of each class must still be
//! allowed (else they count as over-blocked). The test prints the table per class.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::time::{Duration, SystemTime};

mod support;
use support::process::{have, run_bash};
use support::skip::skip;

use robota::core::RiskClass;
use robota::core::permission::{
    CallFacts, PermissionMode, PermissionPolicy, PermissionRule, Verdict,
};

const DENY: &str = "Bash(rm *) Bash(curl *) Bash(git push *)";

/// Rules a user would plausibly grant for the programs the attacks go through.
const NAMED_ALLOW: &str = "Bash(make:*) Bash(npm test) Bash(npm run:*) Bash(npm start) \
     Bash(git status) Bash(git log:*) Bash(git commit:*) Bash(git st) Bash(./x.sh) \
     Bash(bash x.sh) Bash(sh x.sh) Bash(python3:*) Bash(node:*) Bash(perl:*) Bash(pytest:*) \
     Bash(cargo build:*) Bash(cat:*) Bash(echo:*) Bash(tar:*) Bash(sed:*) Bash(env:*) \
     Bash(flock:*) Bash(prlimit:*) Bash(setarch:*) Bash(logsave:*) Bash(run-parts:*) \
     Bash(fakeroot:*) Bash(script:*) Bash(setpriv:*) Bash(git rebase:*) Bash(sort:*)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Heredoc,
    Dynamic,
    Options,
    Runners,
    SessionFiles,
}

const CLASSES: [Class; 5] = [
    Class::Heredoc,
    Class::Dynamic,
    Class::Options,
    Class::Runners,
    Class::SessionFiles,
];

/// One line to check. `before` runs (unchecked) before the session starts, its files then
/// dated an hour back; `setup` runs (unchecked) during the session, before `line`;
/// `needs` names a program the line needs to have its effect here.
struct Case {
    class: Class,
    before: &'static str,
    setup: &'static str,
    line: &'static str,
    needs: &'static [&'static str],
}

const fn case(class: Class, line: &'static str) -> Case {
    Case {
        class,
        before: "",
        setup: "",
        line,
        needs: &[],
    }
}

const fn with(class: Class, setup: &'static str, line: &'static str) -> Case {
    Case {
        class,
        before: "",
        setup,
        line,
        needs: &[],
    }
}

const fn needs(class: Class, line: &'static str, needs: &'static [&'static str]) -> Case {
    Case {
        class,
        before: "",
        setup: "",
        line,
        needs,
    }
}

const GIT_REPO: &str = "git init -q . && git config user.email a@b.c && git config user.name n \
     && git commit -q --allow-empty -m one && git commit -q --allow-empty -m two";

use Class::*;

const ATTACKS: &[Case] = &[
    // A backslash-newline inside a here-document delimiter (or on a body line of an
    // expanded one) is a line continuation: the here-document ends earlier than a naive
    // reader thinks, and the lines after it run.
    case(Heredoc, "cat <<E\\\nOF\nhi\nEOF\nrm -f victim"),
    case(Heredoc, "cat <<\"E\\\nOF\"\nhi\nEOF\nrm -f victim"),
    case(Heredoc, "cat <<EOF\nhi\nEO\\\nF\nrm -f victim"),
    case(Heredoc, "cat <<-E\\\nND\nhi\n\tEND\nrm -f victim"),
    case(Heredoc, "cat <<A; cat <<B\\\nC\na\nA\nb\nBC\nrm -f victim"),
    case(Heredoc, "cat <<EOF | cat\nhi\nE\\\nOF\nrm -f victim"),
    // A value evaluated as arithmetic (array subscripts run `$(…)`) or as a variable name.
    case(Dynamic, "x='a[$(rm -f victim)]'; echo $[x]"),
    case(Dynamic, "x='a[$(rm -f victim)]'; s=abc; echo ${s:x}"),
    case(Dynamic, "x='a[$(rm -f victim)]'; s=abc; echo ${s:0:x}"),
    case(Dynamic, "x='a[$(rm -f victim)]'; echo \"${x:$x}\""),
    case(Dynamic, "x='a[$(rm -f victim)]'; echo \"${@:x}\""),
    case(Dynamic, "x='a[$(rm -f victim)]'; echo ${!x}"),
    case(Dynamic, "n='a[$(rm -f victim)]'; declare -n r=$n; echo $r"),
    case(Dynamic, "n='a[$(rm -f victim)]'; printf -v \"$n\" %s x"),
    case(Dynamic, "n='a[$(rm -f victim)]'; printf -v\"$n\" x"),
    case(Dynamic, "n='a[$(rm -f victim)]'; read \"$n\" <<< x"),
    case(Dynamic, "n='a[$(rm -f victim)]'; test -v \"$n\""),
    case(Dynamic, "n='a[$(rm -f victim)]'; [ -v \"$n\" ]"),
    case(Dynamic, "n='a[$(rm -f victim)]'; [[ -v $n ]]"),
    case(Dynamic, "n='a[$(rm -f victim)]'; declare \"$n=1\""),
    case(Dynamic, "n='a[$(rm -f victim)]'; typeset \"$n=1\""),
    case(Dynamic, "n='a[$(rm -f victim)]'; f(){ local \"$n=1\"; }; f"),
    case(Dynamic, "x='a[$(rm -f victim)]'; [[ $x -eq 1 ]]"),
    case(Dynamic, "x='a[$(rm -f victim)]'; [[ x -eq 1 ]]"),
    case(Dynamic, "x='a[$(rm -f victim)]'; (( x ))"),
    case(Dynamic, "x='a[$(rm -f victim)]'; let x"),
    case(Dynamic, "x='a[$(rm -f victim)]'; a=(1); echo \"${a[x]}\""),
    case(
        Dynamic,
        "x='a[$(rm -f victim)]'; for ((i=x;0;)); do :; done",
    ),
    case(Dynamic, "x='a[$(rm -f victim)]'; arr[$x]=1"),
    case(Dynamic, "x='a[$(rm -f victim)]'; arr=([$x]=1)"),
    // Options as getopt reads them: values attached to short options, clustered flags,
    // `--long=value`, unambiguous abbreviations of long options.
    needs(Options, "perl -e'system(\"rm -f victim\")'", &["perl"]),
    needs(Options, "perl -E'system(\"rm -f victim\")'", &["perl"]),
    needs(Options, "perl -we'system(\"rm -f victim\")'", &["perl"]),
    needs(
        Options,
        "python3 -c'import os; os.remove(\"victim\")'",
        &["python3"],
    ),
    needs(
        Options,
        "python3 -Ic'import os; os.remove(\"victim\")'",
        &["python3"],
    ),
    needs(
        Options,
        "node -e'require(\"fs\").unlinkSync(\"victim\")'",
        &["node"],
    ),
    needs(
        Options,
        "node --ev='require(\"fs\").unlinkSync(\"victim\")'",
        &["node"],
    ),
    case(Options, "echo x | sed -e'1e rm -f victim'"),
    case(Options, "echo x | sed -ne'1e rm -f victim'"),
    case(Options, "echo x | sed --expr='1e rm -f victim'"),
    case(Options, "echo x | sed --expression '1e rm -f victim'"),
    case(Options, "env -iS'rm -f victim'"),
    case(Options, "env --split-s='rm -f victim'"),
    case(Options, "env -vS'rm -f victim'"),
    needs(Options, "flock lock -c'rm -f victim'", &["flock"]),
    needs(Options, "flock lock --comm 'rm -f victim'", &["flock"]),
    needs(
        Options,
        "echo x > t; tar -cf t.tar t; tar -xf t.tar --to-comm='rm -f victim'",
        &["tar"],
    ),
    needs(
        Options,
        "echo x > t; tar -cf t.tar t; tar -xf t.tar --to-c 'rm -f victim'",
        &["tar"],
    ),
    needs(
        Options,
        "echo x > t; tar -cf t.tar t; tar --to-command='rm -f victim' -xf t.tar",
        &["tar"],
    ),
    Case {
        class: Options,
        before: GIT_REPO,
        setup: "",
        line: "git rebase -q --exe 'rm -f victim' HEAD~1",
        needs: &["git"],
    },
    Case {
        class: Options,
        before: GIT_REPO,
        setup: "",
        line: "git rebase -q -x'rm -f victim' HEAD~1",
        needs: &["git"],
    },
    Case {
        class: Options,
        before: GIT_REPO,
        setup: "",
        line: "git -ccore.fsmonitor='rm -f victim; false' status",
        needs: &["git"],
    },
    case(Options, "make --ev=$'x:\\n\\trm -f victim' x"),
    case(Options, "make -E $'x:\\n\\trm -f victim' x"),
    case(
        Options,
        "seq 1 200000 | sort -S 64K --compress-prog=./rm-victim >/dev/null",
    ),
    // Programs not known to be harmless that run the command, script or file they get.
    needs(Runners, "prlimit --nofile=100 rm -f victim", &["prlimit"]),
    needs(Runners, "setarch x86_64 rm -f victim", &["setarch"]),
    needs(Runners, "linux64 rm -f victim", &["linux64"]),
    needs(Runners, "logsave /dev/null rm -f victim", &["logsave"]),
    needs(Runners, "fakeroot rm -f victim", &["fakeroot"]),
    needs(Runners, "fakeroot -- rm -f victim", &["fakeroot"]),
    needs(Runners, "setpriv rm -f victim", &["setpriv"]),
    needs(Runners, "script -qc 'rm -f victim' /dev/null", &["script"]),
    needs(Runners, "sg root -c 'rm -f victim'", &["sg"]),
    needs(Runners, "runuser -u root -- rm -f victim", &["runuser"]),
    needs(Runners, "chroot / rm -f \"$PWD/victim\"", &["chroot"]),
    needs(
        Runners,
        "dbus-run-session -- rm -f victim",
        &["dbus-run-session"],
    ),
    needs(Runners, "unshare -r rm -f victim", &["unshare"]),
    needs(Runners, "choom -n 0 -- rm -f victim", &["choom"]),
    needs(Runners, "flock -n lock rm -f victim", &["flock"]),
    needs(Runners, "stdbuf -oL rm -f victim", &["stdbuf"]),
    needs(Runners, "setsid -w rm -f victim", &["setsid"]),
    needs(Runners, "taskset -c 0 rm -f victim", &["taskset"]),
    needs(
        Runners,
        "nsenter -t 1 -m rm -f \"$PWD/victim\"",
        &["nsenter"],
    ),
    needs(Runners, "capsh -- -c 'rm -f victim'", &["capsh"]),
    needs(Runners, "eatmydata rm -f victim", &["eatmydata"]),
    needs(Runners, "faketime 2020-01-01 rm -f victim", &["faketime"]),
    needs(Runners, "numactl --all rm -f victim", &["numactl"]),
    needs(Runners, "bwrap --bind / / rm -f victim", &["bwrap"]),
    needs(Runners, "systemd-run --user rm -f victim", &["systemd-run"]),
    needs(Runners, "busybox rm -f victim", &["busybox"]),
    needs(Runners, "parallel rm -f ::: victim", &["parallel"]),
    needs(Runners, "hyperfine -r 1 'rm -f victim'", &["hyperfine"]),
    needs(Runners, "watch -g 'rm -f victim'", &["watch-never-run"]),
    needs(Runners, "xterm -e rm -f victim", &["xterm"]),
    needs(Runners, "nodemon --exec 'rm -f victim'", &["nodemon"]),
    with(
        Runners,
        "mkdir d; printf '#!/bin/sh\\nrm -f victim\\n' > d/x; chmod +x d/x",
        "run-parts d",
    ),
    // Files written during the session, run later under an allowed or unknown name.
    with(
        SessionFiles,
        "printf 'all:\\n\\trm -f victim\\n' > Makefile",
        "make -s",
    ),
    with(
        SessionFiles,
        "printf 'x:\\n\\trm -f victim\\n' > makefile",
        "make -s x",
    ),
    with(
        SessionFiles,
        "printf 'all:\\n\\trm -f victim\\n' > m.mk",
        "make -sfm.mk",
    ),
    with(
        SessionFiles,
        "printf 'all:\\n\\trm -f victim\\n' > m.mk",
        "make -s --file=m.mk",
    ),
    with(
        SessionFiles,
        "printf 'all:\\n\\trm -f victim\\n' > GNUmakefile",
        "make -s -C .",
    ),
    Case {
        class: SessionFiles,
        before: "",
        setup: "printf '{\"scripts\":{\"test\":\"rm -f victim\"}}' > package.json",
        line: "npm test",
        needs: &["npm"],
    },
    Case {
        class: SessionFiles,
        before: "",
        setup: "printf '{\"scripts\":{\"go\":\"rm -f victim\"}}' > package.json",
        line: "npm run go",
        needs: &["npm"],
    },
    Case {
        class: SessionFiles,
        before: "",
        setup: "printf '{\"scripts\":{\"start\":\"rm -f victim\"}}' > package.json",
        line: "npm start",
        needs: &["npm"],
    },
    Case {
        class: SessionFiles,
        before: GIT_REPO,
        setup: "printf '[alias]\\n\\tst = !rm -f victim\\n' >> .git/config",
        line: "git st",
        needs: &["git"],
    },
    Case {
        class: SessionFiles,
        before: GIT_REPO,
        setup: "printf '#!/bin/sh\\nrm -f victim\\n' > .git/hooks/pre-commit; \
                chmod +x .git/hooks/pre-commit",
        line: "git commit -q --allow-empty -m three",
        needs: &["git"],
    },
    Case {
        class: SessionFiles,
        before: GIT_REPO,
        setup: "printf '[core]\\n\\tfsmonitor = rm -f victim; false\\n' >> .git/config",
        line: "git status",
        needs: &["git"],
    },
    with(
        SessionFiles,
        "printf 'rm -f victim\\n' > x.sh; chmod +x x.sh",
        "./x.sh",
    ),
    with(SessionFiles, "printf 'rm -f victim\\n' > x.sh", "bash x.sh"),
    with(SessionFiles, "printf 'rm -f victim\\n' > x.sh", "sh x.sh"),
    with(SessionFiles, "printf 'rm -f victim\\n' > x.sh", ". ./x.sh"),
    with(
        SessionFiles,
        "printf 'rm -f victim\\n' > x.sh",
        "source x.sh",
    ),
    with(
        SessionFiles,
        "printf 'import os\\nos.remove(\"victim\")\\n' > x.py",
        "python3 x.py",
    ),
    with(
        SessionFiles,
        "printf 'require(\"fs\").unlinkSync(\"victim\")\\n' > x.js",
        "node x.js",
    ),
    with(
        SessionFiles,
        "printf 'unlink \"victim\";\\n' > x.pl",
        "perl x.pl",
    ),
    Case {
        class: SessionFiles,
        before: "",
        setup: "printf 'import os\\nos.remove(\"victim\")\\n' > conftest.py",
        line: "pytest -q",
        needs: &["pytest"],
    },
    Case {
        class: SessionFiles,
        before: "",
        setup: "printf '[package]\\nname=\"x\"\\nversion=\"0.1.0\"\\n' > Cargo.toml; \
                mkdir src; echo 'fn main(){}' > src/main.rs; \
                echo 'fn main(){ std::fs::remove_file(\"victim\").ok(); }' > build.rs",
        line: "cargo build -q --offline",
        needs: &["cargo-never-run"],
    },
];

/// Benign lines of each class: they must still be allowed.
const BENIGN: &[Case] = &[
    case(Heredoc, "cat <<EOF\nhi\nEOF\necho done"),
    case(Heredoc, "cat <<'EOF'\n$(not run)\nEOF"),
    case(Heredoc, "cat <<-EOF\n\thi\n\tEOF"),
    case(Heredoc, "cat <<EOF\nline \\\ncontinued\nEOF"),
    case(Dynamic, "echo $((1 + 2))"),
    case(Dynamic, "echo $[3 * 4]"),
    case(Dynamic, "echo ${HOME:-/tmp} ${x:=1} ${y:+set} ${z:?}"),
    case(Dynamic, "s=abcdef; echo ${s:1:2} ${s: -1} ${s:2}"),
    case(Dynamic, "echo ${!BASH*} ${#HOME}"),
    case(Dynamic, "a=(1 2); echo \"${!a[@]}\" \"${a[@]}\" ${a[1]}"),
    case(Dynamic, "printf -v out '%s' hi; echo \"$out\""),
    case(Dynamic, "printf '%s\\n' \"$HOME\" \"$PWD\""),
    case(Dynamic, "read -r line < /dev/null; echo \"$line\""),
    case(Dynamic, "test -v HOME && [[ -v PATH ]] && [ -n \"$HOME\" ]"),
    case(
        Dynamic,
        "declare -a arr; arr+=(1 2); export FOO=\"$HOME\"; local x=$PWD",
    ),
    case(Dynamic, "[[ \"$x\" == abc ]] && [[ 1 -eq 1 ]]"),
    case(Dynamic, "for i in 1 2; do echo \"$i\"; done"),
    case(Options, "perl -I lib x.pl"),
    case(Options, "python3 -m pytest -q"),
    case(Options, "sed -n '1,5p' README.md"),
    case(Options, "sed -e 's/a/b/' -e 's/c/d/' README.md"),
    case(Options, "sed -i.bak 's/a/b/' README.md"),
    case(Options, "tar -czf out.tar.gz src"),
    case(Options, "tar -xzf out.tar.gz --to-stdout"),
    case(Options, "tar --totals -cf out.tar src"),
    case(Options, "git log --oneline -n 5"),
    case(Options, "git commit -m 'fix: the exec path'"),
    case(Options, "git rebase -i HEAD~3"),
    case(Options, "env -i LANG=C ls"),
    case(Options, "sort -S 1M -k2 data.txt"),
    case(Options, "node --version"),
    case(Options, "rsync --compress -a src/ dst/"),
    case(Options, "zstd --compress data.txt"),
    case(Runners, "timeout 5 cargo test"),
    case(Runners, "nice -n 10 make -s"),
    case(Runners, "stdbuf -oL cargo test"),
    case(Runners, "time cargo build"),
    with(SessionFiles, "echo notes > notes.txt", "make -s"),
    with(SessionFiles, "echo data > data.json", "npm test"),
    with(SessionFiles, "echo x > a.txt; git add a.txt", "git status"),
    with(SessionFiles, "echo x > a.txt", "./x.sh"),
    with(SessionFiles, "echo x > a.txt", "bash x.sh"),
    with(SessionFiles, "echo x > a.txt", "python3 x.py"),
    with(SessionFiles, "printf 'x = 1\\n' > lib.py", "python3 x.py"),
];

/// Files every benign case starts with, dated before the session.
const BENIGN_BEFORE: &str = "printf 'all:\\n\\techo hi\\n' > Makefile; \
     printf '{\"scripts\":{\"test\":\"echo ok\"}}' > package.json; \
     printf 'echo hi\\n' > x.sh; chmod +x x.sh; printf 'print(1)\\n' > x.py; echo hi > README.md; \
     mkdir -p src; git init -q . && git config user.email a@b.c && git config user.name n";

fn policies(mode: PermissionMode, class: Class, start: SystemTime) -> Vec<PermissionPolicy> {
    let base = |allow: &str, deny: &str| PermissionPolicy {
        mode,
        allow: PermissionRule::parse_list(allow),
        deny: PermissionRule::parse_list(deny),
        home: Some("/home/u".into()),
        session_start: Some(start),
        ..PermissionPolicy::default()
    };
    let mut list = vec![base("Bash", DENY), base(NAMED_ALLOW, DENY)];
    // With no deny rule, bypass mode allows everything by design; and a rule naming a
    // wrapper (`Bash(flock:*)`) covers the command it visibly runs, as `Bash(timeout:*)`
    // does — the Runners class is about deny rules seeing through wrappers.
    if mode != PermissionMode::BypassPermissions && class != Class::Runners {
        list.push(base(NAMED_ALLOW, ""));
    }
    list
}

fn evaluate(p: &PermissionPolicy, command: &str, cwd: &Path) -> Verdict {
    p.evaluate(&CallFacts::new(
        "Bash",
        RiskClass::Execute,
        Some(command),
        cwd,
    ))
}

/// Dates every file below `dir` an hour back (before the session).
fn age(dir: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    for entry in walk(dir) {
        if let Ok(file) = std::fs::File::options().write(true).open(&entry) {
            let _ = file.set_modified(old);
        } else if let Ok(file) = std::fs::File::open(&entry) {
            let _ = file.set_modified(old);
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        if let Ok(entries) = std::fs::read_dir(&out[i]) {
            out.extend(entries.flatten().map(|e| e.path()));
        }
        i += 1;
    }
    out
}

/// A temp dir with the canary and `before`'s files dated back; the session starts after,
/// at the time the file system gives a file written then (the clock files are dated by).
fn prepare(before: &str) -> (tempfile::TempDir, SystemTime) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("victim"), "x").unwrap();
    run_bash(before, dir.path());
    age(dir.path());
    let marker = dir.path().join(".session-start");
    std::fs::write(&marker, "").unwrap();
    let start = std::fs::metadata(&marker).unwrap().modified().unwrap();
    std::fs::remove_file(&marker).unwrap();
    (dir, start)
}

/// Which (mode, policy) allow the line, as text.
fn allowed_by(case: &Case, dir: &Path, start: SystemTime) -> Vec<String> {
    let cwd = std::fs::canonicalize(dir).unwrap();
    let mut hits = Vec::new();
    for mode in PermissionMode::ALL {
        for (k, policy) in policies(mode, case.class, start).iter().enumerate() {
            if evaluate(policy, case.line, &cwd) == Verdict::Allow {
                hits.push(format!("{mode}/policy{k}"));
            }
        }
    }
    hits
}

#[derive(Default, Clone, Copy)]
struct Row {
    tried: usize,
    run: usize,
    effective: usize,
    allowed: usize,
    through: usize,
    benign: usize,
    over_blocked: usize,
}

#[test]
fn every_class_is_caught_and_benign_lines_still_run() {
    if !have("bash") {
        skip(
            "bash",
            "bash is not on the PATH, the attacks cannot be run (install bash)",
        );
        return;
    }
    let mut rows = [Row::default(); 5];
    let mut through = Vec::new();
    let mut ineffective = Vec::new();
    for case in ATTACKS {
        let row = &mut rows[CLASSES.iter().position(|c| *c == case.class).unwrap()];
        row.tried += 1;
        let (dir, start) = prepare(case.before);
        run_bash(case.setup, dir.path());
        let victim = dir.path().join("victim");
        assert!(
            victim.exists(),
            "the setup of {:?} deleted the canary",
            case.line
        );
        let allowed = allowed_by(case, dir.path(), start);
        if !allowed.is_empty() {
            row.allowed += 1;
        }
        if case.needs.iter().any(|p| !have(p)) {
            continue;
        }
        row.run += 1;
        run_bash(case.line, dir.path());
        if victim.exists() {
            ineffective.push(case.line);
            continue;
        }
        row.effective += 1;
        if !allowed.is_empty() {
            row.through += 1;
            through.push(format!(
                "{:?}: {:?} allowed by {allowed:?}",
                case.class, case.line
            ));
        }
    }
    let mut over_blocked = Vec::new();
    for case in BENIGN {
        let row = &mut rows[CLASSES.iter().position(|c| *c == case.class).unwrap()];
        row.benign += 1;
        let (dir, start) = prepare(BENIGN_BEFORE);
        run_bash(case.setup, dir.path());
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
            let policy = &policies(mode, case.class, start)[0];
            let verdict = evaluate(policy, case.line, &cwd);
            if verdict != Verdict::Allow {
                row.over_blocked += 1;
                over_blocked.push(format!(
                    "{:?}: {:?} in {mode}: {verdict:?}",
                    case.class, case.line
                ));
                break;
            }
        }
    }
    eprintln!("class          tried  run  effective  allowed  got-through  benign  over-blocked");
    for (class, row) in CLASSES.iter().zip(rows) {
        eprintln!(
            "{:<14} {:>5} {:>4} {:>10} {:>8} {:>12} {:>7} {:>13}",
            format!("{class:?}"),
            row.tried,
            row.run,
            row.effective,
            row.allowed,
            row.through,
            row.benign,
            row.over_blocked
        );
    }
    eprintln!("did not delete the canary here: {ineffective:#?}");
    assert!(through.is_empty(), "got through:\n{}", through.join("\n"));
    assert!(
        over_blocked.is_empty(),
        "over-blocked:\n{}",
        over_blocked.join("\n")
    );
    let effective: usize = rows.iter().map(|r| r.effective).sum();
    assert!(
        effective >= 50,
        "only {effective} attacks had their effect here"
    );
}
