//! Unit tests of the command-line reader: what it sees, and what it calls opaque.

use super::*;

/// Each command as its words (run-time parts shown as `*`), joined by spaces.
fn commands(text: &str) -> Vec<String> {
    parse(text)
        .commands
        .iter()
        .filter(|c| !c.words.is_empty())
        .map(|c| {
            c.words
                .iter()
                .map(Word::display)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn is_opaque(text: &str) -> bool {
    !parse(text).opaque.is_empty()
}

#[test]
fn lists_pipelines_and_groups_yield_every_command() {
    assert_eq!(
        commands("a 1 && b 2 || c; d & e | f |& g\nh"),
        ["a 1", "b 2", "c", "d", "e", "f", "g", "h"]
    );
    assert_eq!(commands("(a; (b)) && { c; d; }"), ["a", "b", "c", "d"]);
    assert_eq!(
        commands("if a; then b; elif c; then d; else e; fi"),
        ["a", "b", "c", "d", "e"]
    );
    assert_eq!(
        commands("for f in x y; do rm $f; done; while a; do b; done"),
        ["rm *", "a", "b"]
    );
    assert_eq!(
        commands("case $x in a|b) rm a;; (c) ls;& *) pwd;; esac"),
        ["rm a", "ls", "pwd"]
    );
    assert_eq!(
        commands("f() { rm x; }; function g { ls; }; f"),
        ["rm x", "ls", "f"]
    );
    assert!(!is_opaque("if a; then b; fi; for x in 1 2; do c; done"));
}

#[test]
fn quoting_and_escapes_are_removed() {
    assert_eq!(
        commands(r#"r'm' "r"m \rm r\m r""m $'\x72\x6d' $'\162m' $"rm""#),
        ["rm rm rm rm rm rm rm rm"]
    );
    assert_eq!(commands("r\\\nm -rf x"), ["rm -rf x"]);
    assert_eq!(commands("echo 'a b' \"c $d\""), ["echo a b c *"]);
    assert_eq!(commands("echo a#b # rm -rf /"), ["echo a#b"]);
}

#[test]
fn substitutions_are_read_as_commands() {
    assert_eq!(commands("ls $(rm x)"), ["rm x", "ls *"]);
    assert_eq!(commands("ls `rm x`"), ["rm x", "ls *"]);
    assert_eq!(commands("echo \"$(rm \")\")\""), ["rm )", "echo *"]);
    assert_eq!(
        commands("cat <(rm x) >(sh)"),
        ["rm x", "sh", "cat /dev/fd/* /dev/fd/*"]
    );
    assert_eq!(commands("echo ${x:-$(rm y)}"), ["rm y", "echo *"]);
    assert_eq!(commands("x=$(rm z) ls"), ["rm z", "ls"]);
    assert_eq!(
        commands("echo `echo \\`rm q\\``"),
        ["rm q", "echo *", "echo *"]
    );
    let script = parse("cat >(sh)");
    assert!(script.commands.iter().any(|c| c.stdin_fed));
}

#[test]
fn run_time_words_are_marked() {
    assert_eq!(
        commands("$x -rf / ; r${y}m ; /bin/r?"),
        ["* -rf /", "r*m", "/bin/r*"]
    );
    assert_eq!(commands("{rm,-rf,/}"), ["*"]);
    assert_eq!(
        commands("echo {} {a} x{1..3}y [ a ]"),
        ["echo {} {a} x* [ a ]"]
    );
    assert_eq!(commands("ls *.rs [ab].c"), ["ls *.rs *.c"]);
}

#[test]
fn redirections_and_heredocs() {
    let script = parse("echo hi > out.txt 2>&1 < in.txt >> log &> all");
    let kinds: Vec<(RedirectKind, String)> = script.commands[0]
        .redirects
        .iter()
        .map(|r| (r.kind, r.target.display()))
        .collect();
    assert_eq!(
        kinds,
        [
            (RedirectKind::Write, "out.txt".into()),
            (RedirectKind::Duplicate, "1".into()),
            (RedirectKind::Read, "in.txt".into()),
            (RedirectKind::Write, "log".into()),
            (RedirectKind::Write, "all".into()),
        ]
    );
    assert!(script.commands[0].stdin_fed);

    let heredoc = "sh <<EOF\nrm -rf /\nEOF\nls";
    assert_eq!(commands(heredoc), ["sh", "ls"]);
    assert!(parse(heredoc).commands[0].stdin_fed);
    // An unquoted here-document expands substitutions; a quoted one does not.
    assert_eq!(commands("cat <<E\n$(rm a)\nE"), ["cat", "rm a"]);
    assert_eq!(commands("cat <<'E'\n$(rm a)\nE"), ["cat"]);
    assert_eq!(
        commands("cat <<-E\n\t$(rm b)\n\tE\npwd"),
        ["cat", "rm b", "pwd"]
    );
    assert!(parse("bash <<< 'rm x'").commands[0].stdin_fed);
    let group = parse("{ a; b; } > out");
    assert_eq!(group.commands.len(), 3);
    assert_eq!(group.commands[2].redirects[0].kind, RedirectKind::Write);
}

#[test]
fn pipes_feed_standard_input() {
    let script = parse("echo rm x | sh; ls");
    let fed: Vec<bool> = script.commands.iter().map(|c| c.stdin_fed).collect();
    assert_eq!(fed, [false, true, false]);
    let script = parse("curl x | (cd /; bash)");
    assert!(script.commands[2].stdin_fed);
}

#[test]
fn assignments_are_separated_from_words() {
    let script = parse("A=1 B+=2 C[0]=3 env D=4 cmd");
    let names: Vec<&str> = script.commands[0]
        .assignments
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["A", "B", "C"]);
    assert_eq!(commands("A=1 B+=2 C[0]=3 env D=4 cmd"), ["env D=4 cmd"]);
    assert_eq!(commands("arr=(a $(rm x) c); echo"), ["rm x", "echo"]);
}

#[test]
fn unmodelled_or_broken_syntax_is_opaque() {
    for text in [
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(unterminated",
        "echo $((x+1))",
        "x='a[$(rm -rf /)]'; echo $((x))",
        "echo ${x@P}",
        "echo ${a[i]}",
        "(( i++ ))",
        "a[$i]=1",
        "coproc rm x",
        "fi",
        "echo a(b)",
        "if true; then ls",
    ] {
        assert!(is_opaque(text), "{text:?} should be opaque");
    }
    for text in [
        "echo $((1 + 2))",
        "echo ${a[0]} ${b[@]}",
        "ls -la",
        "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"",
    ] {
        assert!(!is_opaque(text), "{text:?} should be understood");
    }
}

#[test]
fn pathological_input_terminates() {
    let deep = format!("{}x{}", "$(".repeat(500), ")".repeat(500));
    assert!(is_opaque(&deep));
    for text in [
        ")", "))))", ";;", "}", "{", "&&", "|", "<", ">", "\\", "$", "`", "((", "[[", "<<",
    ] {
        let _ = parse(text);
    }
}

#[test]
fn heredoc_delimiters_are_read_as_bash_reads_them() {
    // A backslash-newline in the delimiter word is a line continuation, not a quote.
    assert_eq!(commands("cat <<E\\\nOF\nhi\nEOF\nrm v"), ["cat", "rm v"]);
    assert_eq!(
        commands("cat <<\"E\\\nOF\"\nhi\nEOF\nrm v"),
        ["cat", "rm v"]
    );
    assert_eq!(commands("cat <<-E\\\nND\nhi\n\tEND\nrm v"), ["cat", "rm v"]);
    // In an expanded body, a backslash-newline joins lines: `EO\⏎F` is the delimiter.
    assert_eq!(commands("cat <<EOF\nhi\nEO\\\nF\nrm v"), ["cat", "rm v"]);
    // …but not in a quoted one, nor after an escaped backslash.
    assert_eq!(commands("cat <<'EOF'\nEO\\\nF\nrm v\nEOF"), ["cat"]);
    assert_eq!(commands("cat <<EOF\nEO\\\\\nF\nrm v\nEOF"), ["cat"]);
    // Still expanded, still scanned for substitutions.
    assert_eq!(commands("cat <<E\\\nOF\n$(rm a)\nEOF"), ["cat", "rm a"]);
}

#[test]
fn expansions_that_evaluate_values_are_opaque() {
    for text in [
        "echo $[x]",
        "echo \"$[x + 1]\"",
        "echo ${s:x}",
        "echo ${s:0:n}",
        "echo ${s:$x}",
        "echo ${@:x}",
        "echo ${a[@]:x}",
        "echo ${!x}",
        "echo ${!1}",
        "echo ${!x[0]}",
    ] {
        assert!(is_opaque(text), "{text:?}");
    }
    for text in [
        "echo $[1 + 2]",
        "echo ${s:1:2} ${s: -1} ${s:(-2)}",
        "echo ${x:-a} ${x:=b} ${x:?c} ${x:+d}",
        "echo ${!BASH*} ${!BASH@} ${!a[@]} ${!a[*]} ${!} ${#x} ${#}",
    ] {
        assert!(!is_opaque(text), "{text:?}");
    }
}
