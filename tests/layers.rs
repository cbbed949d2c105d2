//! The layer rule of DESIGN §2, checked from the source so it cannot rot: every
//! `use crate::…` / `crate::…` path in a module may only reach the layers it is allowed to.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

const RULES: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("providers", &["core"]),
    ("tools", &["core"]),
    ("session", &["core"]),
    ("sdk", &["core", "session", "tools"]),
    ("tui", &["sdk", "core"]),
    (
        "cli",
        &["core", "providers", "tools", "session", "sdk", "tui"],
    ),
];

const LAYERS: &[&str] = &["core", "providers", "tools", "session", "sdk", "tui", "cli"];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Layers named by `crate::<layer>` anywhere in the text (use lines and inline paths).
fn referenced_layers(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if LAYERS.contains(&name.as_str()) {
                found.push((n + 1, name));
            }
            rest = after;
        }
        // `use crate::{core::x, session::y}` groups.
        if let Some(i) = code.find("crate::{") {
            for part in code[i + "crate::{".len()..].split([',', '{', '}']) {
                let name = part.trim().split("::").next().unwrap_or("");
                if LAYERS.contains(&name) {
                    found.push((n + 1, name.to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut checked = 0;
    for (layer, allowed) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "layer {layer} has no source files");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                text.trim_start().starts_with("//!"),
                "{} must open with a //! header saying what it owns",
                file.display()
            );
            for (line, used) in referenced_layers(&text) {
                checked += 1;
                if used != *layer && !allowed.contains(&used.as_str()) {
                    violations.push(format!(
                        "{}:{line}: {layer} may not use {used}",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(
        checked > 10,
        "the scan found too few crate paths to be real"
    );
    assert!(
        violations.is_empty(),
        "layer violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scanner_sees_grouped_and_inline_paths() {
    let text = "use crate::{core::Message, session::Session};\nfn f() { crate::providers::x(); }\n// crate::tui ignored";
    let layers: Vec<String> = referenced_layers(text)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert!(layers.contains(&"core".to_string()));
    assert!(layers.contains(&"session".to_string()));
    assert!(layers.contains(&"providers".to_string()));
    assert!(!layers.contains(&"tui".to_string()));
}
