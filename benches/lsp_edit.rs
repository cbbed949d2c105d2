//! Language servers (issue 30): the time an Edit's diagnostics add with a warm server
//! (median and p95 of `BENCH_RUNS` edits, alternating one that breaks the types and one that
//! fixes them), the server's resident memory after them, and that a session whose files
//! are of no configured language starts nothing and spends nothing (a Read and an Edit of
//! such a file through the wrapped tools).
//!
//! `BENCH_LSP_DIR=<npm prefix with pyright> cargo bench --bench lsp_edit` (`.ci/run`
//! installs it under `~/.cache/robota-ci/lsp`; `ROBOTA_TEST_LSP_DIR` is read too).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use robota::lsp::{LspManager, LspSection, LspServerConfig};

fn main() {
    let Some(dir) = ["BENCH_LSP_DIR", "ROBOTA_TEST_LSP_DIR"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(PathBuf::from)
        .filter(|d| d.join("node_modules/.bin/pyright-langserver").exists())
    else {
        println!("lsp_edit: skipped — set BENCH_LSP_DIR to an npm prefix with pyright installed");
        return;
    };
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        warm_edits(&dir, runs).await;
        untouched_language().await;
    });
}

fn pyright(dir: &std::path::Path) -> LspServerConfig {
    serde_json::from_value(serde_json::json!({
        "command": dir.join("node_modules/.bin/pyright-langserver"),
        "args": ["--stdio"],
        "extensionToLanguage": {".py": "python"},
    }))
    .unwrap()
}

async fn warm_edits(dir: &std::path::Path, runs: usize) {
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("shapes.py");
    let good = "def area(w: int, h: int) -> int:\n    return w * h\n\n\nsize: int = area(2, 3)\n";
    let bad = good.replace("area(2, 3)", "\"large\"");
    std::fs::write(&file, good).unwrap();
    let section: LspSection =
        serde_json::from_value(serde_json::json!({"diagnosticsTimeoutMs": 30000})).unwrap();
    let lsp = Arc::new(LspManager::new(
        vec![("pyright".into(), pyright(dir))],
        section,
        project.path().to_path_buf(),
        Vec::new(),
    ));
    let started = Instant::now();
    let first = lsp.diagnostics_after_write(&file, &bad).await;
    let cold = started.elapsed();
    assert!(
        first.is_some_and(|d| d.errors == 1),
        "pyright answered the first edit"
    );
    let mut times = Vec::new();
    for i in 0..runs {
        let text = if i % 2 == 0 {
            good.to_string()
        } else {
            bad.clone()
        };
        let started = Instant::now();
        let report = lsp.diagnostics_after_write(&file, &text).await;
        times.push(started.elapsed());
        let errors = report.map(|r| r.errors);
        assert_eq!(errors, Some(usize::from(i % 2 == 1)), "edit {i}");
    }
    times.sort();
    let pid = lsp.status()[0].pid.unwrap();
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
        .unwrap_or_default();
    println!(
        "Edit + diagnostics, pyright warm, {runs} edits: median {:.1} ms, p95 {:.1} ms, max {:.1} ms (cold first edit incl. start: {:.0} ms); server RSS {rss}",
        ms(times[times.len() / 2]),
        ms(times[(times.len() * 95 / 100).min(times.len() - 1)]),
        ms(times[times.len() - 1]),
        ms(cold),
    );
    lsp.shutdown().await;
}

/// A session with a configured server, editing a file of another language: nothing starts.
async fn untouched_language() {
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("notes.txt");
    std::fs::write(&file, "a\n").unwrap();
    let config: LspServerConfig = serde_json::from_value(serde_json::json!({
        "command": "/nonexistent/server", "extensionToLanguage": {".py": "python"}
    }))
    .unwrap();
    let lsp = Arc::new(LspManager::new(
        vec![("py".into(), config)],
        LspSection::default(),
        project.path().to_path_buf(),
        Vec::new(),
    ));
    let runs = 10_000;
    let started = Instant::now();
    for _ in 0..runs {
        lsp.file_was_read(&file);
        assert!(lsp.diagnostics_after_write(&file, "b\n").await.is_none());
    }
    let each = started.elapsed() / runs;
    assert!(lsp.status().is_empty(), "nothing started");
    println!(
        "A file of no configured language: Read + Edit hooks cost {:.2} µs each, no server started",
        each.as_secs_f64() * 1e6
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
