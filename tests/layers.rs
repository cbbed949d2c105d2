//! The layer rule of DESIGN §2/§16, checked from the manifests so it cannot rot: each
//! crate of the workspace may depend only on the crates the table allows, the workspace
//! has no crate the table does not name, and every source file opens with a `//!` header
//! saying what it owns. The compiler enforces the rest: a crate cannot name what it does
//! not depend on.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

/// Each crate of the workspace and the workspace crates it may depend on.
const RULES: &[(&str, &[&str])] = &[
    ("robota-permission", &[]),
    ("robota-core", &["robota-permission"]),
    ("robota-sandbox", &["robota-permission"]),
    ("robota-providers", &["robota-core"]),
    ("robota-tools", &["robota-core", "robota-sandbox"]),
    ("robota-lsp", &["robota-core"]),
    ("robota-session", &["robota-core"]),
    // OpenTelemetry export: records what it is told; the SDK feeds it session events.
    ("robota-telemetry", &["robota-core"]),
    (
        "robota-sdk",
        &[
            "robota-core",
            "robota-session",
            "robota-telemetry",
            "robota-tools",
            "robota-lsp",
        ],
    ),
    ("robota-tui", &["robota-sdk", "robota-core"]),
    // The command line: the provider adapters and the TUI are plugged in by the binary.
    (
        "robota-cli",
        &[
            "robota-core",
            "robota-session",
            "robota-tools",
            "robota-sdk",
        ],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Development-only dependencies the table allows beside it: the SDK's documentation
/// examples build the provider a program hands to it, and the command line's tests
/// build the providers it chooses.
const DEV_ONLY: &[(&str, &[&str])] = &[
    ("robota-sdk", &["robota-providers"]),
    ("robota-cli", &["robota-providers"]),
];

/// The workspace crates a manifest depends on, each with whether it is for development
/// only (`[dev-dependencies]`).
fn workspace_dependencies(manifest: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut section = "";
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if !section.ends_with("dependencies]") {
            continue;
        }
        let name = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or("")
            .trim_matches('"');
        if name.starts_with("robota-") {
            found.push((name.to_string(), section == "[dev-dependencies]"));
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let mut violations = Vec::new();
    for (name, allowed) in RULES {
        let manifest = std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("crate {name} has no manifest: {e}"));
        let dev_only = DEV_ONLY
            .iter()
            .find(|(crate_name, _)| crate_name == name)
            .map_or(&[][..], |(_, extra)| extra);
        for (used, dev) in workspace_dependencies(&manifest) {
            let allowed =
                allowed.contains(&used.as_str()) || (dev && dev_only.contains(&used.as_str()));
            if !allowed {
                violations.push(format!("{name} may not depend on {used}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_workspace_has_no_crate_the_table_does_not_name() {
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !RULES.iter().any(|(known, _)| *known == name) {
            unknown.push(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "crates missing from the layer table: {unknown:?}"
    );
}

#[test]
fn every_source_file_opens_with_a_header_saying_what_it_owns() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for (name, _) in RULES {
        rust_files(&root().join("crates").join(name).join("src"), &mut files);
    }
    assert!(files.len() > 200, "the scan found too few files to be real");
    let headless: Vec<String> = files
        .iter()
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        headless.is_empty(),
        "files without a //! header: {headless:?}"
    );
}

#[test]
fn the_manifest_reader_sees_every_dependency_form() {
    let manifest = "[package]\nname = \"robota-x\"\n\n[dependencies]\nrobota-core.workspace = true\nrobota-sdk = { path = \"../robota-sdk\" }\nserde = \"1\"\n\n[dev-dependencies]\nrobota-tui = { workspace = true }\n\n[features]\nrobota-fake = []\n";
    let found = workspace_dependencies(manifest);
    let expected = [
        ("robota-core", false),
        ("robota-sdk", false),
        ("robota-tui", true),
    ];
    assert_eq!(
        found,
        expected.map(|(name, dev)| (name.to_string(), dev)).to_vec()
    );
}

/// The longest a function of the product may be (DESIGN §14: functions that fit on a
/// screen, with room for a long `match`).
const MAX_FUNCTION_LINES: usize = 150;

/// Functions of `text` longer than the limit, as `(name, lines)`, read from rustfmt's
/// layout: a `fn` line and the `}` at its indentation that closes it. Inline test modules
/// (from a `#[cfg(test)]` line on) are not counted; a `#[cfg(test)] mod tests;` naming
/// another file ends nothing.
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let out_of_line = lines
            .get(i + 1)
            .is_some_and(|next| next.trim_end().ends_with(';'));
        if line.trim_start().starts_with("#[cfg(test)]") && !out_of_line {
            break;
        }
        let indent = line.len() - line.trim_start().len();
        let one_line = line.trim_end().ends_with('}') || line.trim_end().ends_with(';');
        let Some(name) = function_name(line.trim_start()).filter(|_| !one_line) else {
            i += 1;
            continue;
        };
        let close = format!("{}}}", " ".repeat(indent));
        let Some(end) = (i + 1..lines.len()).find(|&j| lines[j] == close) else {
            i += 1;
            continue;
        };
        if end - i + 1 > MAX_FUNCTION_LINES {
            long.push((name, end - i + 1));
        }
        i = end + 1;
    }
    long
}

/// The name of the function a line declares (`pub(crate) async fn name(`), if it does.
fn function_name(line: &str) -> Option<String> {
    let mut rest = line;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(['(', '<'])?;
    Some(name[..end].to_string())
}

#[test]
fn no_function_of_the_product_is_longer_than_a_screen_or_two() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for (name, _) in RULES {
        rust_files(&root().join("crates").join(name).join("src"), &mut files);
    }
    let mut long = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.to_string_lossy().contains("test"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (name, lines) in long_functions(&text) {
            long.push(format!("{}: {name} ({lines} lines)", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_reader_measures_from_fn_to_its_closing_brace() {
    let body = "        x();\n".repeat(MAX_FUNCTION_LINES);
    let text = format!(
        "#[cfg(test)]\nmod tests;\nimpl A {{\n    pub async fn long<T>(&self) {{\n{body}    }}\n\n    fn short() {{}}\n    fn after() {{\n        y();\n    }}\n}}\n#[cfg(test)]\nfn in_tests() {{\n{body}}}\n"
    );
    assert_eq!(
        long_functions(&text),
        [("long".to_string(), MAX_FUNCTION_LINES + 2)]
    );
}
