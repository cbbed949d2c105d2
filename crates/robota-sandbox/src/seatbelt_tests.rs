//! The Seatbelt profile read back and judged: a small SBPL reader and evaluator (deny by
//! default; an operation is allowed when an `allow` rule's operation and filters match)
//! decide, for the policies the sandbox's end-to-end tests use, what the generated text
//! lets a command read, write and reach — and a property test checks over random specs
//! that it is never more than the spec gives, nor less.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone, PartialEq)]
enum Sexp {
    Atom(String),
    Str(String),
    Regex(String),
    List(Vec<Sexp>),
}

/// Reads SBPL text into forms; panics on anything malformed (unbalanced, bad escape).
fn parse(text: &str) -> Vec<Sexp> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut forms = Vec::new();
    while let Some(form) = read_form(&chars, &mut at) {
        forms.push(form);
    }
    forms
}

fn read_string(chars: &[char], at: &mut usize) -> String {
    let mut out = String::new();
    loop {
        let c = chars[*at];
        *at += 1;
        match c {
            '"' => return out,
            '\\' => {
                let e = chars[*at];
                *at += 1;
                out.push(match e {
                    '"' => '"',
                    '\\' => '\\',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => panic!("unknown escape \\{other}"),
                });
            }
            c => out.push(c),
        }
    }
}

fn read_form(chars: &[char], at: &mut usize) -> Option<Sexp> {
    loop {
        match chars.get(*at)? {
            c if c.is_whitespace() => *at += 1,
            ';' => {
                while chars.get(*at).is_some_and(|c| *c != '\n') {
                    *at += 1;
                }
            }
            _ => break,
        }
    }
    let c = chars[*at];
    *at += 1;
    Some(match c {
        '(' => {
            let mut items = Vec::new();
            loop {
                while chars[*at].is_whitespace() {
                    *at += 1;
                }
                if chars[*at] == ')' {
                    *at += 1;
                    break Sexp::List(items);
                }
                items.push(read_form(chars, at).expect("unbalanced"));
            }
        }
        ')' => panic!("unbalanced ) at {at}"),
        '"' => Sexp::Str(read_string(chars, at)),
        '#' => {
            assert_eq!(chars[*at], '"', "only #\"regex\" literals are written");
            *at += 1;
            Sexp::Regex(read_string(chars, at))
        }
        c => {
            let mut atom = c.to_string();
            while chars
                .get(*at)
                .is_some_and(|c| !c.is_whitespace() && *c != '(' && *c != ')')
            {
                atom.push(chars[*at]);
                *at += 1;
            }
            Sexp::Atom(atom)
        }
    })
}

/// What is asked of the profile: an operation on a path or a remote address.
#[derive(Clone, Copy)]
struct Query<'a> {
    op: &'a str,
    path: Option<&'a Path>,
    remote: Option<&'a str>,
}

fn text(s: &Sexp) -> &str {
    match s {
        Sexp::Str(t) | Sexp::Regex(t) | Sexp::Atom(t) => t,
        Sexp::List(_) => panic!("a list where text was expected: {s:?}"),
    }
}

fn filter_matches(filter: &Sexp, q: Query<'_>) -> bool {
    let Sexp::List(items) = filter else {
        panic!("a filter must be a list: {filter:?}")
    };
    let rest = &items[1..];
    match text(&items[0]) {
        "subpath" => q.path.is_some_and(|p| p.starts_with(text(&rest[0]))),
        "literal" => q.path.is_some_and(|p| p == Path::new(text(&rest[0]))),
        "regex" => q.path.is_some_and(|p| {
            regex::Regex::new(text(&rest[0]))
                .unwrap()
                .is_match(&p.to_string_lossy())
        }),
        "require-all" => rest.iter().all(|f| filter_matches(f, q)),
        "require-any" => rest.iter().any(|f| filter_matches(f, q)),
        "require-not" => !filter_matches(&rest[0], q),
        "remote" => {
            assert_eq!(text(&rest[0]), "ip");
            q.remote == Some(text(&rest[1]))
        }
        // Filters on other things (process targets, service names) match no path.
        "target" | "global-name" => false,
        other => panic!("unknown filter {other}"),
    }
}

fn op_matches(rule_op: &str, op: &str) -> bool {
    match rule_op.strip_suffix('*') {
        Some(prefix) => op.starts_with(prefix),
        None => rule_op == op,
    }
}

/// Whether the profile allows `q`: deny by default, any matching allow allows. The
/// profiles have no other deny rule (checked here), so the order of rules cannot matter.
fn allows(forms: &[Sexp], q: Query<'_>) -> bool {
    forms.iter().any(|form| {
        let Sexp::List(items) = form else {
            return false;
        };
        match text(&items[0]) {
            "allow" => {}
            "deny" => {
                assert_eq!(items[1..], [Sexp::Atom("default".into())], "a deny rule");
                return false;
            }
            _ => return false,
        }
        let ops: Vec<&str> = items[1..]
            .iter()
            .take_while(|i| matches!(i, Sexp::Atom(_)))
            .map(text)
            .collect();
        let filters = &items[1 + ops.len()..];
        ops.iter().any(|o| op_matches(o, q.op))
            && (filters.is_empty() || filters.iter().any(|f| filter_matches(f, q)))
    })
}

fn can(forms: &[Sexp], op: &str, path: &Path) -> bool {
    allows(
        forms,
        Query {
            op,
            path: Some(path),
            remote: None,
        },
    )
}

fn reaches(forms: &[Sexp], remote: &str) -> bool {
    allows(
        forms,
        Query {
            op: "network-outbound",
            path: None,
            remote: Some(remote),
        },
    )
}

fn profile_of(spec: &SandboxSpec, port: Option<u16>) -> Vec<Sexp> {
    parse(&profile(&ProfileRules::for_spec(spec, port)).unwrap())
}

/// A project, a temp dir, a home with secrets and a canary outside, as the sandbox's
/// end-to-end tests lay them out.
struct Layout {
    _root: tempfile::TempDir,
    work: PathBuf,
    tmp: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn layout() -> Layout {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let work = base.join("work");
    for dir in [".git/hooks", ".claude", "src"] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
    }
    for file in [".git/config", ".git/HEAD", ".env", "src/main.rs"] {
        std::fs::write(work.join(file), "x").unwrap();
    }
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "secret").unwrap();
    std::fs::create_dir_all(home.join(".robota")).unwrap();
    std::fs::write(home.join(".robota/settings.json"), "{}").unwrap();
    let tmp = base.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("canary"), "alive").unwrap();
    Layout {
        _root: root,
        work,
        tmp,
        home,
        outside,
    }
}

fn base_spec(l: &Layout) -> SandboxSpec {
    SandboxSpec {
        cwd: l.work.clone(),
        writable: vec![l.work.clone(), l.tmp.clone()],
        ..SandboxSpec::default()
    }
}

#[test]
fn writes_outside_the_working_dir_and_temp_dir_are_not_allowed() {
    let l = layout();
    let forms = profile_of(&base_spec(&l), None);
    for path in [
        l.work.join("new.txt"),
        l.work.join("src/main.rs"),
        l.tmp.join("t"),
    ] {
        assert!(can(&forms, "file-write-data", &path), "{}", path.display());
        assert!(
            can(&forms, "file-write-create", &path),
            "{}",
            path.display()
        );
    }
    let canary = l.outside.join("canary");
    for op in [
        "file-write-data",
        "file-write-unlink",
        "file-write-mode",
        "file-write-create",
    ] {
        for path in [&canary, &l.outside, Path::new("/etc/passwd"), &l.home] {
            assert!(!can(&forms, op, path), "{op} {}", path.display());
        }
    }
    assert!(
        can(&forms, "file-read-data", &canary),
        "reading stays allowed"
    );
    assert!(can(&forms, "file-write-data", Path::new("/dev/null")));
    assert!(can(&forms, "file-write-data", Path::new("/dev/ttys003")));
    assert!(!can(&forms, "file-write-unlink", Path::new("/dev/null")));
    assert!(!can(&forms, "file-write-data", Path::new("/dev/disk0")));
}

#[test]
fn denied_reads_are_neither_read_nor_written_nor_renamed_away() {
    let l = layout();
    let spec = SandboxSpec {
        hidden: vec![
            l.work.join(".env"),
            l.home.join(".ssh"),
            l.work.join("gone"),
        ],
        ..base_spec(&l)
    };
    let forms = profile_of(&spec, None);
    for path in [
        l.work.join(".env"),
        l.home.join(".ssh"),
        l.home.join(".ssh/id_rsa"),
    ] {
        for op in [
            "file-read-data",
            "file-read-metadata",
            "file-write-data",
            "file-write-unlink",
        ] {
            assert!(!can(&forms, op, &path), "{op} {}", path.display());
        }
    }
    assert!(can(&forms, "file-read-data", &l.work.join("src/main.rs")));
    assert!(can(
        &forms,
        "file-read-data",
        &l.home.join(".robota/settings.json")
    ));
    // A path that does not exist is no rule (as on Linux): a glob's later file is not hidden.
    assert!(can(&forms, "file-read-data", &l.work.join("gone")));
}

#[test]
fn protected_paths_are_read_only_and_their_directories_cannot_be_moved() {
    let l = layout();
    let settings = l.home.join(".robota/settings.json");
    let spec = SandboxSpec {
        read_only: [".git/hooks", ".git/config", ".claude", ".robota"]
            .iter()
            .map(|p| l.work.join(p))
            .chain([settings.clone()])
            .collect(),
        ..base_spec(&l)
    };
    let rules = ProfileRules::for_spec(&spec, None);
    // The settings file outside the writable roots is read-only anyway: no rule for it.
    assert!(!rules.read_only.iter().any(|r| r.path() == settings));
    assert_eq!(rules.pinned, vec![l.work.join(".git")]);
    let forms = parse(&profile(&rules).unwrap());
    for path in [
        l.work.join(".git/hooks/pre-commit"),
        l.work.join(".git/hooks"),
        l.work.join(".git/config"),
        l.work.join(".claude/settings.json"),
        settings,
    ] {
        for op in ["file-write-data", "file-write-create", "file-write-unlink"] {
            assert!(!can(&forms, op, &path), "{op} {}", path.display());
        }
    }
    // `.git` itself cannot be renamed (its hooks would leave their rule), but what is in it
    // stays writable, and `.robota`, which does not exist, may be created.
    assert!(!can(&forms, "file-write-unlink", &l.work.join(".git")));
    assert!(can(&forms, "file-write-data", &l.work.join(".git/HEAD")));
    assert!(can(&forms, "file-write-create", &l.work.join(".robota")));
    assert!(can(&forms, "file-write-unlink", &l.work.join("src")));
}

#[test]
fn the_network_is_off_unless_allowed_and_allowed_domains_reach_only_the_relay() {
    let l = layout();
    let off = profile_of(&base_spec(&l), Some(40123));
    for remote in [
        "localhost:40123",
        "localhost:3128",
        "example.com:443",
        "*:*",
    ] {
        assert!(!reaches(&off, remote), "{remote}");
    }
    let text = profile(&ProfileRules::for_spec(&base_spec(&l), None)).unwrap();
    assert!(!text.contains("network"), "no network rule at all:\n{text}");

    let proxied = SandboxSpec {
        proxy_socket: Some(l.tmp.join("proxy.sock")),
        ..base_spec(&l)
    };
    let forms = profile_of(&proxied, Some(40123));
    assert!(reaches(&forms, "localhost:40123"));
    for remote in ["localhost:40124", "localhost:*", "example.com:443", "*:*"] {
        assert!(!reaches(&forms, remote), "{remote}");
    }
    for op in ["network-inbound", "network-bind", "system-socket"] {
        let q = Query {
            op,
            path: None,
            remote: Some("localhost:40123"),
        };
        assert!(!allows(&forms, q), "{op}");
    }

    let open = SandboxSpec {
        network: true,
        ..base_spec(&l)
    };
    let forms = profile_of(&open, Some(40123));
    assert!(reaches(&forms, "example.com:443") && reaches(&forms, "localhost:8080"));
}

#[cfg(unix)]
#[test]
fn paths_with_quotes_backslashes_and_newlines_are_escaped_and_read_back_intact() {
    assert_eq!(
        sbpl_string(Path::new(r#"/w/a"b\c"#)).unwrap(),
        r#""/w/a\"b\\c""#
    );
    assert_eq!(sbpl_string(Path::new("/w/a\nb")).unwrap(), r#""/w/a\nb""#);
    assert!(matches!(
        sbpl_string(Path::new("/w/a\u{1b}b")),
        Err(ProfileError::ControlCharacter(_))
    ));
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = std::ffi::OsStr::from_bytes(b"/w/\xff");
        assert!(matches!(
            sbpl_string(Path::new(bytes)),
            Err(ProfileError::NotUtf8(_))
        ));
    }
    // A real directory with such a name: the profile names it exactly, and a quote in it
    // cannot end the string early and smuggle in a rule.
    let root = tempfile::tempdir().unwrap();
    let weird = root
        .path()
        .canonicalize()
        .unwrap()
        .join("we\"ird\\dir\")) (allow file-write* (subpath \"");
    std::fs::create_dir_all(&weird).unwrap();
    let spec = SandboxSpec {
        writable: vec![weird.clone()],
        ..SandboxSpec::default()
    };
    let forms = profile_of(&spec, None);
    assert!(can(&forms, "file-write-data", &weird.join("f")));
    assert!(!can(&forms, "file-write-data", Path::new("/etc/passwd")));
    assert!(!can(&forms, "file-write-data", root.path()));
}

/// The tree the property test draws its specs from.
const TREE: [&str; 11] = [
    "a", "a/x", "a/y", "a/d", "a/d/f", "b", "b/x", "b/d", "b/d/f", "c", "c/x",
];

fn is_file(rel: &str) -> bool {
    rel.ends_with('x') || rel.ends_with('y') || rel.ends_with('f')
}

/// What the spec means, stated directly: `path` may be written when it is in a writable
/// root, not in a read-only path that lies in a writable root, not in a hidden path, and
/// not a directory between a root and a read-only or hidden path.
fn expected_write(spec: &SandboxSpec, path: &Path) -> bool {
    let mut roots = spec.writable.clone();
    roots.sort();
    let in_root = |p: &Path| roots.iter().any(|w| p.starts_with(w));
    let effective_ro: Vec<&PathBuf> = spec.read_only.iter().filter(|r| in_root(r)).collect();
    let excluded: Vec<&PathBuf> = effective_ro.iter().copied().chain(&spec.hidden).collect();
    let pinned = excluded.iter().any(|x| {
        roots.iter().find(|w| x.starts_with(w)).is_some_and(|w| {
            x.as_path() != path && x.starts_with(path) && path.starts_with(w) && path != w
        })
    });
    in_root(path) && !excluded.iter().any(|x| path.starts_with(x)) && !pinned
}

fn pick(mask: u16, base: &Path) -> Vec<PathBuf> {
    TREE.iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, rel)| base.join(rel))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn no_allow_rule_is_broader_than_the_policy_nor_narrower(
        writable in any::<u16>(),
        hidden in any::<u16>(),
        read_only in any::<u16>(),
        network in any::<bool>(),
        proxied in any::<bool>(),
    ) {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        for rel in TREE {
            if is_file(rel) {
                std::fs::write(base.join(rel), "x").unwrap();
            } else {
                std::fs::create_dir_all(base.join(rel)).unwrap();
            }
        }
        let spec = SandboxSpec {
            writable: pick(writable, &base),
            hidden: pick(hidden, &base),
            read_only: pick(read_only, &base),
            network,
            proxy_socket: proxied.then(|| base.join("proxy.sock")),
            ..SandboxSpec::default()
        };
        let forms = profile_of(&spec, Some(40999));
        let probes = TREE
            .iter()
            .map(|rel| base.join(rel))
            .chain(TREE.iter().filter(|rel| !is_file(rel)).map(|rel| base.join(rel).join("new")))
            .chain([base.clone(), base.join("new"), PathBuf::from("/etc/hosts")]);
        for path in probes {
            let hidden = spec.hidden.iter().any(|h| path.starts_with(h));
            prop_assert_eq!(can(&forms, "file-read-data", &path), !hidden, "read {}", path.display());
            for op in ["file-write-data", "file-write-unlink", "file-write-create"] {
                prop_assert_eq!(
                    can(&forms, op, &path),
                    expected_write(&spec, &path),
                    "{} {}", op, path.display()
                );
            }
        }
        prop_assert_eq!(reaches(&forms, "example.com:443"), network);
        prop_assert_eq!(reaches(&forms, "localhost:40999"), network || proxied);
        prop_assert_eq!(reaches(&forms, "localhost:41000"), network);
    }
}
