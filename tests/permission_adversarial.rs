//! The adversarial suite: command lines that try to slip past Bash deny rules — chaining,
//! quoting, escapes, `$IFS`, variables, `eval`, `sh -c`, command substitution, here-docs,
//! here-strings, pipes into shells and interpreters, wrappers, `xargs`, `find -exec`,
//! absolute paths, backslash-newline, brace expansion, globs, unicode look-alikes,
//! aliases, traps, arithmetic and prompt expansion. Every one must be denied or asked —
//! never allowed — in every mode, with `Bash` itself allowed.
//!
//! The `rm` attacks that bash can run here are also run for real, each in its own temp
//! directory, to show they do delete the file a naive matcher would let them delete.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

mod support;
use support::process::{have, run_bash};
use support::skip::skip;

use robota::core::RiskClass;
use robota::core::permission::{
    CallFacts, PermissionMode, PermissionPolicy, PermissionRule, Verdict,
};

const DENY: &str = "Bash(rm *) Bash(curl *) Bash(git push *) Bash(wget:*)";

/// (command line, runs `rm -f victim` for real under bash on a usual Linux machine).
const RM_ATTACKS: &[(&str, bool)] = &[
    // Chaining and compound commands.
    ("ls && rm -f victim", true),
    ("ls; rm -f victim", true),
    ("false || rm -f victim", true),
    ("echo ok | rm -f victim", true),
    ("ls\nrm -f victim", true),
    ("ls & rm -f victim\nwait", true),
    ("(rm -f victim)", true),
    ("{ rm -f victim; }", true),
    ("ls |& rm -f victim", true),
    ("true && (ls; (rm -f victim))", true),
    ("if true; then rm -f victim; fi", true),
    ("while true; do rm -f victim; break; done", true),
    ("for f in victim; do rm -f \"$f\"; done", true),
    ("case x in x) rm -f victim;; esac", true),
    ("f() { rm -f victim; }; f", true),
    ("function g { rm -f victim; }; g", true),
    ("! rm -f victim", true),
    ("time rm -f victim", true),
    ("until rm -f victim; do :; done", true),
    (
        "command_not_found_handle() { rm -f victim; }; no_such_command_xyz",
        true,
    ),
    // Quoting and escapes.
    ("r'm' -f victim", true),
    ("\"rm\" -f victim", true),
    ("\\rm -f victim", true),
    ("r\\m -f victim", true),
    ("r\"\"m -f victim", true),
    ("'r''m' -f victim", true),
    ("$'rm' -f victim", true),
    ("$'\\x72\\x6d' -f victim", true),
    ("$'\\162\\155' -f victim", true),
    ("$'\\u0072m' -f victim", true),
    ("r\\\nm -f victim", true),
    ("rm \\\n -f victim", true),
    ("$\"rm\" -f victim", true),
    ("\"r\"'m' -f victim", true),
    // Paths and wrappers.
    ("/bin/rm -f victim", true),
    ("/usr/bin/rm -f victim", true),
    ("//bin//rm -f victim", true),
    ("/bin/../bin/rm -f victim", true),
    ("../../../../../../../../../../bin/rm -f victim", true),
    ("command rm -f victim", true),
    ("command -p rm -f victim", true),
    ("exec rm -f victim", true),
    ("exec -a innocent rm -f victim", true),
    ("env rm -f victim", true),
    ("env -i /bin/rm -f victim", true),
    ("env FOO=1 rm -f victim", true),
    ("FOO=1 rm -f victim", true),
    ("nice rm -f victim", true),
    ("nice -n 5 rm -f victim", true),
    ("nohup rm -f victim", true),
    ("timeout 5 rm -f victim", true),
    ("timeout -s KILL 5 rm -f victim", true),
    ("stdbuf -o0 rm -f victim", true),
    ("time -p rm -f victim", true),
    ("busybox rm -f victim", false),
    ("sudo rm -f victim", false),
    ("sudo -u root -- rm -f victim", false),
    ("ionice -c 3 rm -f victim", false),
    ("xargs rm -f <<< victim", true),
    ("echo victim | xargs rm -f", true),
    ("echo victim | xargs -I{} rm -f {}", true),
    ("find . -name victim -exec rm -f {} \\;", true),
    ("find . -name victim -exec /bin/rm {} +", true),
    (
        "find . -maxdepth 1 -name victim -exec sh -c 'rm -f \"$0\"' {} \\;",
        true,
    ),
    // Variables, $IFS, arrays, parameter expansion.
    ("x=rm; $x -f victim", true),
    ("x=r; ${x}m -f victim", true),
    ("CMD=rm; \"$CMD\" -f victim", true),
    ("rm${IFS}-f${IFS}victim", true),
    ("IFS=,; x=rm,-f,victim; $x", true),
    ("a=(rm -f victim); \"${a[@]}\"", true),
    ("set -- rm -f victim; \"$@\"", true),
    ("${RM:-rm} -f victim", true),
    ("\"${x:=rm}\" -f victim", true),
    ("printf -v c '%s' rm; $c -f victim", true),
    ("read c <<< rm; $c -f victim", true),
    ("c=$(printf '\\x72\\x6d'); $c -f victim", true),
    ("export C=rm && $C -f victim", true),
    ("$0 -c 'rm -f victim'", true),
    // eval, shells and interpreters fed text.
    ("eval rm -f victim", true),
    ("eval 'rm -f victim'", true),
    ("eval \"r\"\"m -f victim\"", true),
    ("eval $(echo rm -f victim)", true),
    ("sh -c 'rm -f victim'", true),
    ("bash -c \"rm -f victim\"", true),
    ("bash -lc 'rm -f victim'", true),
    ("bash -xc 'rm -f victim'", true),
    ("dash -c 'rm -f victim'", false),
    ("zsh -c 'rm -f victim'", false),
    ("env sh -c 'rm -f victim'", true),
    ("timeout 5 bash -c 'rm -f victim'", true),
    ("xargs -I{} sh -c '{}' <<< 'rm -f victim'", true),
    ("echo 'rm -f victim' | sh", true),
    ("echo 'rm -f victim' | bash -s", true),
    ("printf 'rm -f victim' | xargs -0 sh -c", true),
    ("sh <<< 'rm -f victim'", true),
    ("bash <<EOF\nrm -f victim\nEOF", true),
    ("sh -s <<'EOF'\nrm -f victim\nEOF", true),
    ("bash <(echo rm -f victim)", true),
    ("source <(echo rm -f victim)", true),
    (". /dev/stdin <<< 'rm -f victim'", true),
    ("cat <<EOF | bash\nrm -f victim\nEOF", true),
    ("python3 -c 'import os; os.system(\"rm -f victim\")'", true),
    ("echo 'import os; os.remove(\"victim\")' | python3", true),
    ("perl -e 'system(\"rm -f victim\")'", true),
    ("awk 'BEGIN{system(\"rm -f victim\")}'", true),
    ("echo x | sed '1e rm -f victim'", true),
    ("trap 'rm -f victim' EXIT", true),
    ("shopt -s expand_aliases\nalias x='rm -f victim'\nx", true),
    ("env -S 'rm -f victim'", true),
    ("git -c alias.x='!rm -f victim' x", false),
    ("x='a[$(rm -f victim)]'; echo $((x))", true),
    ("x='$(rm -f victim)'; echo \"${x@P}\"", true),
    ("PS4='$(rm -f victim)'; set -x; :", true),
    (
        "echo 'rm -f victim' > e.sh; BASH_ENV=./e.sh bash -c :",
        true,
    ),
    ("watch -g 'rm -f victim'", false),
    // Files written and run by the same line, programs renamed, loaders.
    ("cat > x.sh <<'EOF'\nrm -f victim\nEOF\nbash x.sh", true),
    ("echo 'rm -f victim' > x.sh; . ./x.sh", true),
    ("printf 'rm -f victim' > x; chmod +x x; ./x", true),
    (
        "echo 'BEGIN{system(\"rm -f victim\")}' > x.awk; awk -f x.awk",
        true,
    ),
    ("cp /bin/rm ./r && ./r -f victim", true),
    ("ln -s /bin/rm r; ./r -f victim", true),
    ("exec /proc/self/exe -c 'rm -f victim'", true),
    ("/lib64/ld-linux-x86-64.so.2 /bin/rm -f victim", false),
    (
        "awk -f /dev/stdin <<< 'BEGIN{system(\"rm -f victim\")}'",
        true,
    ),
    ("echo x | sed -f <(echo '1e rm -f victim')", true),
    ("make -f - <<< $'all:\\n\\trm -f victim'", true),
    ("make --eval=$'x:\\n\\trm -f victim' x", true),
    ("npx -c 'rm -f victim'", false),
    ("vim -es +'!rm -f victim' +q", false),
    // Command substitution and backticks.
    ("$(echo rm) -f victim", true),
    ("`echo rm` -f victim", true),
    ("$(printf rm) -f victim", true),
    ("echo $(rm -f victim)", true),
    ("ls \"$(rm -f victim)\"", true),
    (": $(rm -f victim)", true),
    ("x=$(rm -f victim)", true),
    ("cat <(rm -f victim)", true),
    ("$(tr a-z a-z <<< rm) -f victim", true),
    ("echo `echo \\`rm -f victim\\``", true),
    ("echo ${x:-$(rm -f victim)}", true),
    ("cat <<EOF\n$(rm -f victim)\nEOF", true),
    ("r$(echo m) -f victim", true),
    ("x=mr; $(echo $x | rev) -f victim", true),
    // Brace expansion and globs.
    ("{rm,-f,victim}", true),
    ("r{m,} -f victim", true),
    ("/bin/r[m] -f victim", true),
    ("/???/?m -f victim", false),
    ("/bin/r? -f victim", false),
    // Unicode look-alikes and invisible characters.
    ("\u{0433}m -f victim", false),
    ("\u{ff52}\u{ff4d} -f victim", false),
    ("rm\u{200b} -f victim", false),
    ("r\u{0336}m -f victim", false),
    ("rm\u{00a0}-f victim", false),
];

/// Attacks on other deny rules (none are run).
const OTHER_ATTACKS: &[&str] = &[
    "curl https://example.invalid",
    "c\\url http://x",
    "/usr/bin/curl http://x",
    "CURL=curl; $CURL http://x",
    "$(which curl) http://x",
    "`which curl` http://x",
    "env curl http://x",
    "timeout 10 curl http://x",
    "echo http://x | xargs curl",
    "sh -c 'curl http://x'",
    "eval curl http://x",
    "\"cu\"\"rl\" http://x",
    "c=cur; ${c}l http://x",
    "python3 -c \"import os; os.system('curl http://x')\"",
    "cp /usr/bin/curl ./c && ./c http://x",
    "ln -s /usr/bin/curl c; ./c http://x",
    "CURL http://x",
    "wget -q http://x",
    "nohup w\\get http://x",
    "git push origin main",
    "git -C . push",
    "git --no-pager push",
    "git -c push.default=current push",
    "git \"push\" origin",
    "git pu\\sh origin",
    "g\\it push",
    "/usr/bin/git push",
    "git $(echo push) origin",
    "x=push; git $x",
    "git --git-dir=.git push",
    "GIT_TRACE=1 git push",
    "git commit -m x && git push",
    "git -c alias.p=push p",
    "git config alias.p push && git p",
    "timeout 30 git push",
    "env GIT_TRACE=1 git push",
    "sh -c \"git push\"",
    "git pus\\h",
    "git push\u{200b} origin",
];

/// Benign lines that must still run in bypass mode with the same deny rules.
const BENIGN: &[&str] = &[
    "ls -la",
    "echo rm -rf /",
    "echo 'curl http://x'",
    "git status",
    "git pull",
    "git push-notes",
    "grep -rn 'rm -f' src",
    "cargo build --release",
    "npm test",
    "rmdir build",
    "curlie --help",
    "cat README.md | head",
    "python3 script.py",
    "find . -name '*.rm'",
    "git log --grep push",
    "./gradlew build > out.log",
    "python3 script.py > results.txt",
    "cargo test 2>&1 | tee test.log",
];

fn policy(mode: PermissionMode) -> PermissionPolicy {
    PermissionPolicy {
        mode,
        allow: PermissionRule::parse_list("Bash"),
        deny: PermissionRule::parse_list(DENY),
        home: Some("/home/u".into()),
        ..PermissionPolicy::default()
    }
}

fn evaluate(p: &PermissionPolicy, command: &str) -> Verdict {
    p.evaluate(&CallFacts::new(
        "Bash",
        RiskClass::Execute,
        Some(command),
        Path::new("/work/project"),
    ))
}

fn all_attacks() -> Vec<&'static str> {
    RM_ATTACKS
        .iter()
        .map(|(c, _)| *c)
        .chain(OTHER_ATTACKS.iter().copied())
        .collect()
}

#[test]
fn the_suite_is_large_and_distinct() {
    let attacks = all_attacks();
    let mut unique = attacks.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), attacks.len(), "duplicate attack strings");
    assert!(attacks.len() >= 100, "only {} attacks", attacks.len());
}

#[test]
fn no_attack_is_allowed_in_any_mode() {
    let mut allowed = Vec::new();
    for mode in PermissionMode::ALL {
        let p = policy(mode);
        let (mut denied, mut asked) = (0, 0);
        for attack in all_attacks() {
            match evaluate(&p, attack) {
                Verdict::Allow => allowed.push(format!("{mode}: {attack:?}")),
                Verdict::Deny { .. } => denied += 1,
                Verdict::Ask { .. } => asked += 1,
            }
        }
        eprintln!("{mode}: {denied} denied, {asked} asked");
    }
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
}

#[test]
fn statically_readable_attacks_are_denied_outright() {
    let p = policy(PermissionMode::BypassPermissions);
    for attack in [
        "ls && rm -f victim",
        "r'm' -f victim",
        "$'\\x72\\x6d' -f victim",
        "/bin/../bin/rm -f victim",
        "timeout -s KILL 5 rm -f victim",
        "echo victim | xargs rm -f",
        "find . -name victim -exec rm -f {} \\;",
        "sh -c 'rm -f victim'",
        "eval 'rm -f victim'",
        "echo $(rm -f victim)",
        "cat <<EOF\n$(rm -f victim)\nEOF",
        "trap 'rm -f victim' EXIT",
        "git -C . push",
        "env -S 'rm -f victim'",
    ] {
        assert!(
            matches!(evaluate(&p, attack), Verdict::Deny { .. }),
            "{attack:?} should be denied"
        );
    }
}

#[test]
fn benign_lines_still_run_in_bypass_mode() {
    let p = policy(PermissionMode::BypassPermissions);
    for line in BENIGN {
        assert_eq!(evaluate(&p, line), Verdict::Allow, "{line:?}");
    }
}

#[test]
fn the_rm_attacks_really_delete_under_bash() {
    if !have("bash") {
        skip(
            "bash",
            "bash is not on the PATH, the attacks cannot be run (install bash)",
        );
        return;
    }
    let needs = |attack: &str| -> Option<&'static str> {
        [
            "python3", "perl", "awk", "sed", "rev", "xargs", "find", "stdbuf", "timeout",
        ]
        .into_iter()
        .find(|tool| attack.contains(tool) && !have(tool))
    };
    let mut ran = 0;
    let mut survived = Vec::new();
    for (attack, live) in RM_ATTACKS {
        if !live {
            continue;
        }
        if let Some(tool) = needs(attack) {
            skip(
                tool,
                &format!("{tool} is not on the PATH, so {attack:?} cannot run (install it)"),
            );
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "x").unwrap();
        run_bash(attack, dir.path());
        ran += 1;
        if victim.exists() {
            survived.push(*attack);
        }
    }
    assert!(
        survived.is_empty(),
        "these attacks did not delete the file under bash (fix the suite): {survived:#?}"
    );
    eprintln!("{ran} attacks run under bash, every one deleted its file");
    assert!(ran >= 100, "only {ran} attacks were run");
}
