//! What the kernel stands in for when it confines a Bash call, so that code the analyzer
//! cannot read (`python3 -c …`, `sh -c …`, `trap …`, `$((…))`) need not be refused only
//! because a deny rule exists.
//!
//! # What is relaxed, and why it is safe
//! - **Path rules** (`Read(…)`, `Edit(…)`) and the **protected files** never made opaque
//!   code ask: the kernel hides what Read rules deny and makes what Edit rules deny and
//!   the protected set read-only, in every mode (the full sandbox, or in bypass the
//!   filesystem-only confinement). Nothing changes for them here.
//! - A file the analyzer cannot name (`> "$f"`, `${d}aude/x`) that **might** be what a
//!   **Read** rule denies no longer asks when the kernel confines: what the rule denies
//!   is hidden (unreadable, unwritable) whatever the command computes. A sure match
//!   still denies with the rule's name; a possible match of an **Edit** rule still asks
//!   (the kernel makes existing files read-only, but cannot stop a denied name that does
//!   not exist yet from being created).
//! - **Program rules** are about a program, not a path, and the kernel's file
//!   confinement does not enforce them. Only rules naming a program that *removes files*
//!   ([`REMOVING_PROGRAMS`]: `Bash(rm:*)`, `Bash(rmdir:*)`, `Bash(unlink:*)`,
//!   `Bash(shred:*)`) can be stood in for: a line that the rules let through only because
//!   the kernel confines it runs **without the right to remove or rename away a file**
//!   (Landlock's remove rights withheld everywhere but the sandbox's private `$TMPDIR`),
//!   so `python3 -c 'import os; os.remove("f")'` fails at the kernel while
//!   `python3 -c 'print(1)'` runs. Copying the program under another name
//!   (`cat /usr/bin/rm > x`) is harmless for the same reason. Opaque code whose text
//!   still names the denied program as a word (`echo 'rm -f x' | bash`,
//!   `eval "$(echo rm) x"`) asks as before: no need to count on the kernel there.
//! - Any other program rule (`Bash(curl:*)`, `Bash(git push:*)`) or any Bash **ask** rule
//!   keeps today's behaviour: opaque code asks (and is refused where nobody can be asked).
//! - Without kernel confinement (no Landlock or no user namespaces) nothing is relaxed;
//!   on macOS (Seatbelt) the program rules are not relaxed either: withholding the remove
//!   rights is the Landlock backend's.
//!
//! Commands the analyzer reads are judged as before: `rm f` is still denied by
//! `Bash(rm:*)`, `x=rm; $x f` still asks; `unlink f` or `find -delete` under `Bash(rm:*)`
//! still run, as in Claude Code, whose program rules are only as strong as its reading of
//! the command line.

use crate::rules::{Compiled, PathFamily, PermissionRule, basename};

/// Programs whose deny rule the kernel can stand in for: each removes files.
pub const REMOVING_PROGRAMS: [&str; 4] = ["rm", "rmdir", "unlink", "shred"];

/// Whether `rule` is a Bash rule naming one of [`REMOVING_PROGRAMS`] (any arguments).
pub(super) fn names_removing_program(rule: &PermissionRule) -> bool {
    if !matches!(rule.compiled(), Compiled::Command(_)) {
        return false;
    }
    program_of(rule).is_some_and(|program| REMOVING_PROGRAMS.contains(&program))
}

/// Whether the kernel enforces `rule` for any path it matches: a `Read(…)` rule (its
/// files are hidden).
pub(super) fn hidden_by_kernel(rule: &PermissionRule) -> bool {
    matches!(rule.compiled(), Compiled::Path(PathFamily::Read, _))
}

/// The program a Bash rule names (`rm` of `Bash(rm -rf:*)`).
fn program_of(rule: &PermissionRule) -> Option<&str> {
    let first = rule.specifier.as_deref()?.split_whitespace().next()?;
    Some(basename(first.strip_suffix(":*").unwrap_or(first)))
}

/// Whether the kernel stands in for every Bash-naming rule: the machine confines the
/// call, no Bash ask rule exists, and every Bash deny rule names a removing program.
pub(super) fn kernel_stands_in(
    kernel_confines: bool,
    deny: &[&PermissionRule],
    ask: &[&PermissionRule],
) -> bool {
    kernel_confines
        && ask.is_empty()
        && !deny.is_empty()
        && deny.iter().all(|r| names_removing_program(r))
}

/// Whether `command`'s text names, as a word, the program of one of the `deny` rules.
pub(super) fn text_names_program(command: &str, deny: &[&PermissionRule]) -> bool {
    let named = |program: &str| {
        command
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .any(|word| word == program)
    };
    deny.iter().filter_map(|r| program_of(r)).any(named)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{CallFacts, PermissionMode, PermissionPolicy, PermissionRule, RiskClass, Verdict};

    fn policy(deny: &str, ask: &str, kernel: bool) -> PermissionPolicy {
        let mut policy = PermissionPolicy {
            mode: PermissionMode::BypassPermissions,
            deny: PermissionRule::parse_list(deny),
            ask: PermissionRule::parse_list(ask),
            ..PermissionPolicy::default()
        };
        policy.sandbox.files_guard = kernel;
        policy
    }

    fn bash(cmd: &str) -> CallFacts<'_> {
        CallFacts::new("Bash", RiskClass::Execute, Some(cmd), Path::new("/repo"))
    }

    fn runs(p: &PermissionPolicy, cmd: &str) -> bool {
        p.evaluate(&bash(cmd)) == Verdict::Allow
    }

    #[test]
    fn opaque_code_runs_under_a_removal_rule_only_when_the_kernel_confines() {
        let confined = policy("Bash(rm:*)", "", true);
        let unconfined = policy("Bash(rm:*)", "", false);
        for cmd in [
            "python3 -c 'print(1)'",
            "trap 'echo bye' EXIT",
            "x=5; echo $((x+1))",
            "cat /usr/bin/rm | wc -c",
        ] {
            assert!(runs(&confined, cmd), "{cmd}");
            assert!(!runs(&unconfined, cmd), "{cmd}");
            assert!(confined.bash_kernel_terms(&bash(cmd)).no_removal, "{cmd}");
        }
        // Read by the analyzer: judged as ever, and run with every right.
        assert!(!runs(&confined, "rm -f x"));
        assert!(!runs(&confined, "x=rm; $x -f victim"));
        assert!(runs(&confined, "ls -la"));
        assert!(!confined.bash_kernel_terms(&bash("ls -la")).no_removal);
    }

    #[test]
    fn opaque_code_naming_the_program_and_other_rules_still_ask() {
        let confined = policy("Bash(rm:*)", "", true);
        for cmd in [
            "echo 'rm -f victim' | bash",
            "eval \"$(echo rm) -f victim\"",
        ] {
            assert!(!runs(&confined, cmd), "{cmd}");
        }
        for (deny, ask) in [("Bash(curl:*)", ""), ("Bash(rm:*)", "Bash(git push:*)")] {
            let p = policy(deny, ask, true);
            assert!(!runs(&p, "python3 -c 'print(1)'"), "{deny} {ask}");
        }
        assert!(super::names_removing_program(
            &PermissionRule::parse("Bash(/bin/rm -rf:*)").unwrap()
        ));
        assert!(!super::names_removing_program(
            &PermissionRule::parse("Bash(rmx:*)").unwrap()
        ));
    }

    #[test]
    fn a_path_a_read_rule_might_deny_runs_when_the_kernel_hides_it() {
        let confined = policy("Read(./secrets/**)", "", true);
        let unconfined = policy("Read(./secrets/**)", "", false);
        let cmd = "d=.cl; echo x > ${d}aude/x";
        assert!(runs(&confined, cmd));
        assert!(!runs(&unconfined, cmd));
        assert!(!runs(&confined, "cat secrets/key.txt"));
    }
}
