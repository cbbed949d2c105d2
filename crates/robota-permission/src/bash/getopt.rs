//! Options read the way getopt and getopt_long read them: short options clustered behind
//! one dash (`-ne'1e cmd'` is `-n -e '1e cmd'`), a short option's value attached
//! (`-c'cmd'`) or in the next word, `--long=value` or `--long value`, and a long option
//! named by any prefix of it (`--to-comm=` is `--to-command=`). A prefix matching several
//! options is taken as each of them: the program would reject it, so treating it as the
//! dangerous one only over-asks for a line that fails anyway.

/// A value an option was given: the text, or None when computed at run time.
pub(super) type Value = Option<String>;

/// Where short option `letter` appears in `arg` as getopt would read it, given the letters
/// of options that take a value (`valued`): the value attached after it (or None when it
/// takes the next word). `Some(None)` also when `letter` takes no value and is present.
/// Letters before it must be known flags or unknown letters; a valued letter before it
/// swallows the rest of the word.
pub(super) fn short_in(arg: &str, letter: char, valued: &str) -> Option<Option<String>> {
    let letters = arg.strip_prefix('-')?;
    if letters.is_empty() || letters.starts_with('-') {
        return None;
    }
    for (i, c) in letters.char_indices() {
        if c == letter {
            let rest = &letters[i + c.len_utf8()..];
            return Some((!rest.is_empty()).then(|| rest.to_string()));
        }
        if valued.contains(c) || !c.is_ascii_alphanumeric() {
            return None;
        }
    }
    None
}

/// The value of short option `letter` at `args[i]` (attached or the next word), when
/// `args[i]` holds it. The outer None: not this option; the inner: computed at run time.
pub(super) fn short_value(
    args: &[Option<String>],
    i: usize,
    letter: char,
    valued: &str,
) -> Option<Value> {
    let arg = args.get(i)?.as_deref()?;
    match short_in(arg, letter, valued)? {
        Some(attached) => Some(Some(attached)),
        None => Some(args.get(i + 1).cloned().flatten()),
    }
}

/// `--name` or `--name=value` split, when `arg` is a long option.
pub(super) fn long_parts(arg: &str) -> Option<(&str, Option<&str>)> {
    let body = arg.strip_prefix("--")?;
    if body.is_empty() {
        return None;
    }
    Some(match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    })
}

/// Whether `arg` names long option `option` (given without dashes) — exactly or by a
/// prefix of at least `min` letters.
pub(super) fn names_long(arg: &str, option: &str, min: usize) -> bool {
    long_parts(arg)
        .is_some_and(|(name, _)| name == option || (name.len() >= min && option.starts_with(name)))
}

/// The value of long option `option` at `args[i]` (`--opt=value` or `--opt value`), when
/// `args[i]` names it.
pub(super) fn long_value(
    args: &[Option<String>],
    i: usize,
    option: &str,
    min: usize,
) -> Option<Value> {
    let arg = args.get(i)?.as_deref()?;
    if !names_long(arg, option, min) {
        return None;
    }
    Some(match long_parts(arg).and_then(|(_, v)| v) {
        Some(value) => Some(value.to_string()),
        None => args.get(i + 1).cloned().flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Option<String>> {
        words.iter().map(|w| Some((*w).to_string())).collect()
    }

    #[test]
    fn short_options_clustered_and_attached() {
        assert_eq!(short_in("-e", 'e', "ef"), Some(None));
        assert_eq!(short_in("-ex", 'e', "ef"), Some(Some("x".into())));
        assert_eq!(short_in("-ne1e rm", 'e', "ef"), Some(Some("1e rm".into())));
        assert_eq!(short_in("-fe", 'e', "ef"), None, "-f swallows the rest");
        assert_eq!(short_in("--expression", 'e', "ef"), None);
        assert_eq!(short_in("-", 'e', "ef"), None);
        assert_eq!(short_in("-n", 'e', "ef"), None);
        let a = args(&["-ne", "1e rm", "x"]);
        assert_eq!(short_value(&a, 0, 'e', "e"), Some(Some("1e rm".into())));
        assert_eq!(short_value(&a, 2, 'e', "e"), None);
    }

    #[test]
    fn long_options_by_prefix() {
        assert!(names_long("--to-comm=x", "to-command", 2));
        assert!(names_long("--to-command", "to-command", 2));
        assert!(!names_long("--to-stdout", "to-command", 2));
        assert!(!names_long("--t", "to-command", 2));
        assert!(!names_long("-to-command", "to-command", 2));
        let a = args(&["--expr", "1e rm", "--file=f"]);
        assert_eq!(
            long_value(&a, 0, "expression", 2),
            Some(Some("1e rm".into()))
        );
        assert_eq!(long_value(&a, 2, "file", 2), Some(Some("f".into())));
        assert_eq!(long_value(&a, 1, "file", 2), None);
    }
}
