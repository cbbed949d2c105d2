//! Unit tests of the Grep tool against real trees in temp dirs.

use super::*;
use crate::test_support::{assert_error_contains, assert_ok, call, ctx};
use std::fs::{File, FileTimes};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A git-like tree: files written oldest first (one minute apart), an ignored directory,
/// a hidden file and a binary file that all contain the word too.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    let files: [(&str, &[u8]); 7] = [
        (".gitignore", b"ignored/\n"),
        ("src/a.rs", b"fn main() {\n    let needle = 1;\n    other();\n    other();\n    let Needle = 2;\n}\n"),
        ("src/b.py", b"needle = 'x'\n"),
        ("docs/notes.md", b"no match here\n"),
        ("ignored/c.rs", b"needle\n"),
        (".hidden.rs", b"needle\n"),
        ("blob.bin", b"needle\0\x01\x02"),
    ];
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (i, (name, content)) in files.iter().enumerate() {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(FileTimes::new().set_modified(start + Duration::from_secs(60 * i as u64)))
            .unwrap();
    }
    dir
}

fn p(root: &Path, name: &str) -> String {
    root.join(name).display().to_string()
}

async fn grep(root: &Path, input: Value) -> String {
    assert_ok(&call(&GrepTool, root, input).await).to_string()
}

#[tokio::test]
async fn files_mode_lists_matching_files_newest_first_skipping_ignored_hidden_and_binary() {
    let dir = fixture();
    let root = dir.path();
    let out = grep(root, json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        format!(
            "Found 2 files\n{}\n{}",
            p(root, "src/b.py"),
            p(root, "src/a.rs")
        )
    );
    let out = grep(root, json!({"pattern": "absent"})).await;
    assert_eq!(out, "No files found");
}

#[tokio::test]
async fn content_mode_prints_path_line_text_with_and_without_numbers() {
    let dir = fixture();
    let root = dir.path();
    let a = p(root, "src/a.rs");
    let out = grep(
        root,
        json!({"pattern": "needle", "output_mode": "content", "type": "rust", "path": "src"}),
    )
    .await;
    assert_eq!(out, format!("{a}:2:    let needle = 1;"));
    let out = grep(root, json!({"pattern": "needle", "output_mode": "content", "-i": true, "-n": false, "path": "src/a.rs"})).await;
    assert_eq!(
        out,
        format!("{a}:    let needle = 1;\n{a}:    let Needle = 2;")
    );
}

#[tokio::test]
async fn context_lines_use_dashes_and_groups_are_separated() {
    let dir = fixture();
    let root = dir.path();
    let a = p(root, "src/a.rs");
    let b = p(root, "src/b.py");
    let out = grep(
        root,
        json!({"pattern": "needle", "output_mode": "content", "-i": true, "-B": 1}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "{a}-1-fn main() {{\n{a}:2:    let needle = 1;\n--\n{a}-4-    other();\n{a}:5:    let Needle = 2;\n--\n{b}:1:needle = 'x'"
        )
    );
    let out = grep(
        root,
        json!({"pattern": "let needle", "output_mode": "content", "-C": 1, "path": "src"}),
    )
    .await;
    assert_eq!(
        out,
        format!("{a}-1-fn main() {{\n{a}:2:    let needle = 1;\n{a}-3-    other();")
    );
    let out = grep(
        root,
        json!({"pattern": "let needle", "output_mode": "content", "-A": 2, "-C": 0, "path": "src"}),
    )
    .await;
    assert_eq!(
        out,
        format!("{a}:2:    let needle = 1;\n{a}-3-    other();\n{a}-4-    other();")
    );
}

#[tokio::test]
async fn count_mode_counts_matching_lines_per_file() {
    let dir = fixture();
    let root = dir.path();
    let out = grep(
        root,
        json!({"pattern": "needle", "output_mode": "count", "-i": true}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "{}:2\n{}:1\n\nFound 3 matching lines across 2 files.",
            p(root, "src/a.rs"),
            p(root, "src/b.py")
        )
    );
}

#[tokio::test]
async fn glob_and_type_filters() {
    let dir = fixture();
    let root = dir.path();
    let only_py = format!("Found 1 file\n{}", p(root, "src/b.py"));
    assert_eq!(
        grep(root, json!({"pattern": "needle", "glob": "*.py"})).await,
        only_py
    );
    assert_eq!(
        grep(root, json!({"pattern": "needle", "glob": "!*.rs"})).await,
        only_py
    );
    assert_eq!(
        grep(root, json!({"pattern": "needle", "type": "py"})).await,
        only_py
    );
    let both = grep(
        root,
        json!({"pattern": "needle", "glob": "*.{rs,py}", "path": "src"}),
    )
    .await;
    assert!(both.starts_with("Found 2 files"));
    let both = grep(
        root,
        json!({"pattern": "needle", "glob": "*.rs, *.py", "path": "src"}),
    )
    .await;
    assert!(both.starts_with("Found 2 files"));
    let out = call(
        &GrepTool,
        root,
        json!({"pattern": "needle", "type": "klingon"}),
    )
    .await;
    assert_error_contains(&out, "Unknown file type \"klingon\"");
}

#[tokio::test]
async fn head_limit_caps_entries_with_a_note() {
    let dir = fixture();
    let root = dir.path();
    let out = grep(root, json!({"pattern": "needle", "head_limit": 1})).await;
    assert_eq!(
        out,
        format!(
            "Found 2 files\n{}\n\n(Showing the first 1 of 2 files (head_limit). Raise head_limit or narrow the search to see more.)",
            p(root, "src/b.py")
        )
    );
    let out = grep(
        root,
        json!({"pattern": "e", "output_mode": "content", "head_limit": 2, "path": "src/a.rs"}),
    )
    .await;
    assert!(out.starts_with(&format!("{}:2:", p(root, "src/a.rs"))));
    assert!(out.contains("(Showing the first 2 of 4 lines (head_limit)"));
    let out = grep(
        root,
        json!({"pattern": "needle", "output_mode": "count", "head_limit": 1}),
    )
    .await;
    assert!(out.contains("(Showing the first 1 of 2 files"));
    assert!(out.ends_with("Found 2 matching lines across 2 files."));
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let dir = fixture();
    let root = dir.path();
    let a = p(root, "src/a.rs");
    let input = json!({"pattern": "needle = 1;\\s+other", "output_mode": "content"});
    assert_eq!(grep(root, input.clone()).await, "No matches found");
    let mut multi = input;
    multi["multiline"] = json!(true);
    assert_eq!(
        grep(root, multi).await,
        format!("{a}:2:    let needle = 1;\n{a}:3:    other();")
    );
}

#[tokio::test]
async fn long_lines_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("min.js"),
        format!("{}needle\n", "x".repeat(900)),
    )
    .unwrap();
    let out = grep(
        dir.path(),
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    assert!(out.ends_with(" [… line truncated]"));
    assert!(out.len() < 700);
}

#[tokio::test]
async fn invalid_input_regex_and_paths_are_error_results() {
    let dir = fixture();
    let root = dir.path();
    let out = call(&GrepTool, root, json!({"path": "."})).await;
    assert_eq!(
        out.content,
        "Invalid input for Grep: missing required field \"pattern\""
    );
    let out = call(&GrepTool, root, json!({"pattern": "(unclosed"})).await;
    assert_error_contains(&out, "Invalid regex pattern");
    let out = call(
        &GrepTool,
        root,
        json!({"pattern": "a", "output_mode": "lines"}),
    )
    .await;
    assert_error_contains(
        &out,
        "\"output_mode\" must be one of \"files_with_matches\", \"content\", \"count\", got \"lines\"",
    );
    let out = call(&GrepTool, root, json!({"pattern": "a", "-A": "two"})).await;
    assert_error_contains(&out, "\"-A\" must be a non-negative integer");
    let out = call(&GrepTool, root, json!({"pattern": "a", "-i": 1})).await;
    assert_error_contains(&out, "\"-i\" must be a boolean");
    let out = call(&GrepTool, root, json!({"pattern": "a", "path": "missing"})).await;
    assert_error_contains(
        &out,
        &format!("Path does not exist: {}", p(root, "missing")),
    );
    let context = ctx(root);
    context.cancel.cancel();
    let out = GrepTool.call(json!({"pattern": "needle"}), &context).await;
    assert_error_contains(&out, "interrupted by user");
}

#[tokio::test]
async fn content_collection_stops_at_the_byte_cap_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("needle {}\n", "x".repeat(100));
    std::fs::write(dir.path().join("huge.log"), line.repeat(60_000)).unwrap();
    let out = grep(
        dir.path(),
        json!({"pattern": "needle", "output_mode": "content", "head_limit": 3}),
    )
    .await;
    assert!(
        out.contains("(Output limit reached: the search stopped early."),
        "{}",
        &out[out.len() - 300..]
    );
    assert!(out.starts_with(&format!("{}:1:needle", p(dir.path(), "huge.log"))));
}
