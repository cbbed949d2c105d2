//! Every `.mcp.json` of the Claude Code corpus (plugins' included; wrapped or bare) parses
//! into servers with valid entries.

use std::path::Path;

use robota::tools::mcp::{McpServerConfig, server_map};

fn mcp_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            mcp_files(&path, out);
        } else if path.file_name().is_some_and(|n| n == ".mcp.json") {
            out.push(path);
        }
    }
}

#[test]
fn corpus_mcp_json_files_parse() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/claude"
    ));
    assert!(
        root.is_dir(),
        "the `corpus` feature is on but the corpus is missing at {}",
        root.display()
    );
    let mut files = Vec::new();
    mcp_files(root, &mut files);
    assert!(!files.is_empty(), "no .mcp.json in {}", root.display());
    for file in files {
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let servers = server_map(&value).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(!servers.is_empty(), "{}", file.display());
        for (name, entry) in servers {
            McpServerConfig::parse(entry)
                .unwrap_or_else(|e| panic!("{} server {name}: {e}", file.display()));
        }
    }
}
