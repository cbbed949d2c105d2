//! Property tests of Bash permission decisions: random compositions of commands (lists,
//! pipelines, subshells, groups, `if`/`for`, substitutions, wrappers, assignments, quoted
//! and escaped names, absolute paths) are denied exactly when some part runs a denied
//! command; and arbitrary text is judged the same way every time, without panicking.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use proptest::prelude::*;
use robota::core::RiskClass;
use robota::core::permission::{
    CallFacts, PermissionMode, PermissionPolicy, PermissionRule, Verdict,
};

const DENIED: &[&[&str]] = &[
    &["rm", "-rf", "x"],
    &["curl", "http://h"],
    &["git", "push", "origin"],
];
const BENIGN: &[&[&str]] = &[
    &["ls", "-la"],
    &["echo", "hi"],
    &["git", "status"],
    &["cargo", "build"],
    &["npm", "test"],
    &["grep", "-r", "x", "src"],
    &["cat", "a.txt"],
    &["pwd"],
    &["make", "check"],
    &["rmdir", "d"],
];

fn policy() -> PermissionPolicy {
    PermissionPolicy {
        mode: PermissionMode::BypassPermissions,
        allow: PermissionRule::parse_list("Bash"),
        deny: PermissionRule::parse_list("Bash(rm *) Bash(curl:*) Bash(git push *)"),
        ..PermissionPolicy::default()
    }
}

/// Policies that reach every stage of a decision.
fn fuzz_policies() -> Vec<PermissionPolicy> {
    let rules = |allow: &str, ask: &str, deny: &str, mode| PermissionPolicy {
        mode,
        allow: PermissionRule::parse_list(allow),
        ask: PermissionRule::parse_list(ask),
        deny: PermissionRule::parse_list(deny),
        home: Some("/home/u".into()),
        ..PermissionPolicy::default()
    };
    vec![
        policy(),
        rules(
            "Bash(ls *) Bash(git status) Edit(src/**)",
            "",
            "",
            PermissionMode::Default,
        ),
        rules(
            "Bash(x *)",
            "Bash(sh:*) Edit(.env)",
            "Read(~/.ssh/**)",
            PermissionMode::AcceptEdits,
        ),
        rules("", "", "Bash(rm *)", PermissionMode::Plan),
    ]
}

fn evaluate_with(policy: &PermissionPolicy, command: &str) -> Verdict {
    policy.evaluate(&CallFacts::new(
        "Bash",
        RiskClass::Execute,
        Some(command),
        Path::new("/work/project"),
    ))
}

fn evaluate(command: &str) -> Verdict {
    policy().evaluate(&CallFacts::new(
        "Bash",
        RiskClass::Execute,
        Some(command),
        Path::new("/work/project"),
    ))
}

/// A word written some way the shell reads back as the same word.
fn spelled(word: &'static str) -> impl Strategy<Value = String> {
    (0..6usize, 0..8usize).prop_map(move |(style, at)| {
        let at = at % word.len().max(1);
        match style {
            0 => word.to_string(),
            1 => format!("'{word}'"),
            2 => format!("\"{word}\""),
            3 => format!("{}\\{}", &word[..at], &word[at..]),
            4 => format!("{}''{}", &word[..at], &word[at..]),
            _ => format!("{}\"\"{}", &word[..at], &word[at..]),
        }
    })
}

/// One simple command, possibly wrapped, with whether it is denied.
fn simple() -> impl Strategy<Value = (String, bool)> {
    let denied = (0..DENIED.len()).prop_map(|i| (DENIED[i], true));
    let benign = (0..BENIGN.len()).prop_map(|i| (BENIGN[i], false));
    let prefixes = prop::sample::select(vec![
        "",
        "timeout 5 ",
        "nice ",
        "env X=1 ",
        "command ",
        "nohup ",
        "X=1 ",
        "time ",
        "exec ",
        "nice -n 3 ",
        "stdbuf -o0 ",
    ]);
    (prop_oneof![denied, benign], prefixes, any::<bool>())
        .prop_flat_map(|((words, bad), prefix, absolute)| {
            let spelled_words: Vec<_> = words.iter().map(|w| spelled(w)).collect();
            (spelled_words, Just(bad), Just(prefix), Just(absolute))
        })
        .prop_map(|(words, bad, prefix, absolute)| {
            let mut words = words;
            if absolute {
                words[0] = format!("/usr/bin/{}", words[0]);
            }
            (format!("{prefix}{}", words.join(" ")), bad)
        })
}

/// A composition of simple commands; true when any part is denied.
fn composed() -> impl Strategy<Value = (String, bool)> {
    simple().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec!["&&", "||", ";", "|", "\n", "&", "|&"])
            )
                .prop_map(|((a, x), (b, y), op)| (format!("{a} {op} {b}"), x || y)),
            inner.clone().prop_map(|(a, x)| (format!("( {a} )"), x)),
            inner.clone().prop_map(|(a, x)| (format!("{{ {a}; }}"), x)),
            inner
                .clone()
                .prop_map(|(a, x)| (format!("echo $( {a} )"), x)),
            inner.clone().prop_map(|(a, x)| (format!("cat <({a})"), x)),
            inner
                .clone()
                .prop_map(|(a, x)| (format!("if true; then {a}; fi"), x)),
            inner
                .clone()
                .prop_map(|(a, x)| (format!("for i in 1 2; do {a}; done"), x)),
            inner
                .clone()
                .prop_map(|(a, x)| (format!("f() {{ {a}; }}; f"), x)),
            inner
                .clone()
                .prop_map(|(a, x)| (format!("while false; do {a}; done < /dev/null"), x)),
            inner.prop_map(|(a, x)| (format!("{{ {a}; }} 2> /dev/null"), x)),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_denied_part_denies_the_whole((command, denied) in composed()) {
        let verdict = evaluate(&command);
        if denied {
            prop_assert!(matches!(verdict, Verdict::Deny { .. }), "{command:?} gave {verdict:?}");
        } else {
            prop_assert_eq!(verdict, Verdict::Allow, "{:?}", command);
        }
    }

    #[test]
    fn arbitrary_text_is_judged_consistently(text in "[a-z $'\"`\\\\|&;()<>{}\\[\\]*?!#=~/\n\t.-]{0,60}") {
        for policy in fuzz_policies() {
            let first = evaluate_with(&policy, &text);
            prop_assert_eq!(first, evaluate_with(&policy, &text));
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(text in any::<String>()) {
        for policy in fuzz_policies() {
            let first = evaluate_with(&policy, &text);
            prop_assert_eq!(first, evaluate_with(&policy, &text));
        }
    }

    #[test]
    fn shell_shaped_text_never_panics(
        words in prop::collection::vec(prop::sample::select(vec![
            "ls", "rm", "x", "sh", "-c", "'a b'", "\"$x\"", "$(", ")", "`", "|", "&&", ";", "\n",
            "<", ">", ">>", "2>&1", "<<EOF", "EOF", "<<<", "(", "{", "}", "if", "then", "fi",
            "for", "in", "do", "done", "case", "esac", ";;", "while", "[[", "]]", "((", "))",
            "$((", "${", "}", "find", "-exec", "\\;", "xargs", "timeout", "5", "env", "A=1",
            "sudo", "git", "-C", "push", "cd", "/tmp", "..", "*.rs", "~", "eval", "f()", "<(",
        ]), 0..24)
    ) {
        let text = words.join(" ");
        for policy in fuzz_policies() {
            let first = evaluate_with(&policy, &text);
            prop_assert_eq!(first, evaluate_with(&policy, &text));
        }
    }
}
