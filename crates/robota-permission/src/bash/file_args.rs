//! The file arguments of common commands and what each does with them: readers (`cat`,
//! `head`, `grep` after its pattern, `find`'s start points …) read them, writers (`rm`,
//! `mv`, `tee`, `touch`, `sed -i`, `chmod` …) change them, copiers read all but the target.

use crate::shell::Word;

/// What a command does with one of its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileUse {
    Read,
    Write,
}

const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "nl",
    "tac",
    "rev",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "base64",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "shasum",
    "cksum",
    "sum",
    "wc",
    "stat",
    "file",
    "du",
    "tree",
    "ls",
    "diff",
    "cmp",
    "comm",
    "join",
    "paste",
    "sort",
    "uniq",
    "cut",
    "column",
    "expand",
    "fold",
    "fmt",
    "realpath",
    "readlink",
    "cd",
    "pushd",
    "source",
    ".",
    "bat",
    "view",
    "iconv",
    "tr",
];
const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "sed", "awk", "gawk", "jq",
];
const WRITERS: &[&str] = &[
    "rm", "rmdir", "mkdir", "touch", "shred", "unlink", "truncate", "tee", "mv",
];
const COPIERS: &[&str] = &["cp", "ln", "install", "rsync", "scp"];
const MODE_FIRST: &[&str] = &["chmod", "chown", "chgrp"];
/// Options whose value is the next word, for the commands above.
fn valued_options(name: &str) -> &'static [&'static str] {
    match name {
        "head" | "tail" => &["-n", "-c", "--lines", "--bytes"],
        "grep" | "egrep" | "fgrep" => &[
            "-e",
            "-f",
            "-m",
            "-A",
            "-B",
            "-C",
            "-d",
            "-D",
            "--regexp",
            "--file",
            "--max-count",
        ],
        "rg" | "ag" => &[
            "-e",
            "-f",
            "-g",
            "-t",
            "-T",
            "-m",
            "-A",
            "-B",
            "-C",
            "-j",
            "-M",
            "-E",
            "-r",
            "--regexp",
            "--file",
            "--glob",
            "--type",
            "--type-not",
            "--max-count",
            "--replace",
        ],
        "sed" => &["-e", "-f", "--expression", "--file", "-l"],
        "awk" | "gawk" => &["-f", "-F", "-v", "--file", "--assign", "-e", "--source"],
        "jq" => &[
            "--arg",
            "--argjson",
            "--slurpfile",
            "--rawfile",
            "-f",
            "--from-file",
        ],
        "cp" | "mv" | "ln" | "install" => &["-S", "--suffix", "-m", "-o", "-g"],
        "truncate" => &["-s", "--size", "-r", "--reference"],
        "sort" => &["-k", "-t", "-S", "-T", "--key", "--field-separator"],
        "cut" => &["-d", "-f", "-c", "-b"],
        "du" | "tree" => &["-d", "--max-depth", "-L", "-I", "-P"],
        "diff" => &["-U", "-C", "--label"],
        _ => &[],
    }
}

/// The file arguments of a command and what it does with each.
pub(super) fn file_arguments(name: &str, words: &[Word]) -> Vec<(FileUse, Word)> {
    let mut operands = Vec::new();
    let mut target_dir = None;
    let mut explicit_pattern = false;
    let mut in_place = false;
    let mut i = 1;
    let mut options_done = false;
    while let Some(word) = words.get(i) {
        let text = word.as_literal();
        match text.as_deref() {
            Some("--") if !options_done => options_done = true,
            Some(t) if !options_done && t.starts_with('-') && t.len() > 1 => {
                if matches!(t, "-e" | "-f" | "--regexp" | "--file" | "--expression") {
                    explicit_pattern = true;
                }
                if name == "sed"
                    && (t == "-i"
                        || t.starts_with("--in-place")
                        || (t.starts_with("-i") && !t.starts_with("--")))
                {
                    in_place = true;
                }
                if let Some(dir) = t.strip_prefix("--target-directory=") {
                    target_dir = Some(Word::literal(dir));
                } else if t == "-t" && COPIERS.contains(&name) || t == "--target-directory" {
                    target_dir = words.get(i + 1).cloned();
                    i += 1;
                } else if valued_options(name).contains(&t) {
                    i += 1;
                }
            }
            _ => operands.push(word.clone()),
        }
        i += 1;
    }
    let all = |use_: FileUse, words: Vec<Word>| words.into_iter().map(|w| (use_, w)).collect();
    if name == "find" {
        return words
            .get(1..)
            .unwrap_or_default()
            .iter()
            .take_while(|w| {
                w.as_literal()
                    .is_none_or(|t| !t.starts_with('-') && t != "(" && t != "!")
            })
            .map(|w| (FileUse::Read, w.clone()))
            .collect();
    }
    if name == "dd" {
        return words
            .get(1..)
            .unwrap_or_default()
            .iter()
            .filter_map(|w| {
                let t = w.as_literal()?;
                if let Some(p) = t.strip_prefix("of=") {
                    Some((FileUse::Write, Word::literal(p)))
                } else {
                    t.strip_prefix("if=")
                        .map(|p| (FileUse::Read, Word::literal(p)))
                }
            })
            .collect();
    }
    if READERS.contains(&name) {
        return all(FileUse::Read, operands);
    }
    if PATTERN_FIRST.contains(&name) {
        if !explicit_pattern && !operands.is_empty() {
            operands.remove(0);
        }
        let use_ = if name == "sed" && in_place {
            FileUse::Write
        } else {
            FileUse::Read
        };
        return all(use_, operands);
    }
    if WRITERS.contains(&name) {
        return all(FileUse::Write, operands);
    }
    if MODE_FIRST.contains(&name) {
        if !operands.is_empty() {
            operands.remove(0);
        }
        return all(FileUse::Write, operands);
    }
    if COPIERS.contains(&name) {
        let mut out: Vec<(FileUse, Word)> = Vec::new();
        let target = target_dir.or_else(|| operands.pop());
        out.extend(operands.into_iter().map(|w| (FileUse::Read, w)));
        out.extend(target.map(|w| (FileUse::Write, w)));
        return out;
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn words(text: &str) -> Vec<Word> {
        parse(text).commands.remove(0).words
    }

    #[test]
    fn file_arguments_by_command() {
        let shown = |text: &str| -> Vec<(FileUse, String)> {
            let w = words(text);
            let name = w[0].as_literal().unwrap();
            file_arguments(&name, &w)
                .into_iter()
                .map(|(u, w)| (u, w.display()))
                .collect()
        };
        use FileUse::*;
        assert_eq!(
            shown("cat -n a b"),
            [(Read, "a".into()), (Read, "b".into())]
        );
        assert_eq!(shown("grep -A 3 pat f"), [(Read, "f".into())]);
        assert_eq!(shown("grep -e pat f"), [(Read, "f".into())]);
        assert_eq!(
            shown("cp a b dst"),
            [
                (Read, "a".into()),
                (Read, "b".into()),
                (Write, "dst".into())
            ]
        );
        assert_eq!(
            shown("cp -t dst a"),
            [(Read, "a".into()), (Write, "dst".into())]
        );
        assert_eq!(shown("sed -i s/a/b/ f"), [(Write, "f".into())]);
        assert_eq!(shown("chmod +x a"), [(Write, "a".into())]);
        assert_eq!(shown("rm -rf -- -x"), [(Write, "-x".into())]);
        assert_eq!(shown("find src -name x"), [(Read, "src".into())]);
        assert_eq!(
            shown("dd if=a of=b"),
            [(Read, "a".into()), (Write, "b".into())]
        );
        assert_eq!(shown("echo a"), []);
    }
}
