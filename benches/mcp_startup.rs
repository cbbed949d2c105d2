//! MCP servers at start-up (issue 15): how long from starting a session's servers until
//! each real server is ready, with one hanging server among them, and that starting them
//! costs the caller nothing (they connect in the background; the first frame never waits).
//!
//! `BENCH_MCP_DIR=<dir with node_modules/.bin/mcp-server-everything and
//! mcp-server-filesystem> cargo bench --bench mcp_startup` (`.ci/run` installs them under
//! `~/.cache/robota-ci/mcp`; `ROBOTA_TEST_MCP_DIR` is read too). Five servers: two
//! `server-everything`, two `server-filesystem` and one that never answers; the median of
//! `BENCH_RUNS` (default 5) runs. The first-frame side of the same question is
//! `BENCH_MCP_DIR=… cargo bench --bench tui_startup` (robota started with the same five
//! servers in its user settings).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use robota::sdk::mcp::{McpManager, ServerList, ServerStatus};
use serde_json::json;

fn main() {
    let Some(dir) = ["BENCH_MCP_DIR", "ROBOTA_TEST_MCP_DIR"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(PathBuf::from)
        .filter(|d| d.join("node_modules/.bin/mcp-server-everything").exists())
    else {
        println!(
            "mcp_startup: skipped — set BENCH_MCP_DIR to a directory with the npm MCP servers installed"
        );
        return;
    };
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut start_calls = Vec::new();
    let mut all_ready = Vec::new();
    let mut per_server: Vec<Vec<Duration>> = vec![Vec::new(); 4];
    for _ in 0..runs {
        let sample = runtime.block_on(run_once(&dir));
        start_calls.push(sample.0);
        all_ready.push(sample.1);
        for (i, d) in sample.2.into_iter().enumerate() {
            per_server[i].push(d);
        }
    }
    println!(
        "MCP start-up, 5 servers (one hanging): start() returns in median {:.2} ms; all 4 real servers ready in median {:.0} ms (min {:.0}, max {:.0})",
        ms(median(start_calls)),
        ms(median(all_ready.clone())),
        ms(*all_ready.iter().min().unwrap()),
        ms(*all_ready.iter().max().unwrap()),
    );
    for (name, times) in [
        "everything-1",
        "everything-2",
        "filesystem-1",
        "filesystem-2",
    ]
    .iter()
    .zip(per_server)
    {
        println!("  {name}: ready in median {:.0} ms", ms(median(times)));
    }
}

/// The five servers as settings would configure them.
fn servers(dir: &Path, files: &Path) -> ServerList {
    let bin = dir.join("node_modules/.bin");
    let everything = bin.join("mcp-server-everything").display().to_string();
    let filesystem = bin.join("mcp-server-filesystem").display().to_string();
    let mut list = ServerList::default();
    let root = files.display().to_string();
    list.add(
        "everything-1",
        &json!({"command": everything, "args": ["stdio"]}),
        "bench",
    );
    list.add(
        "everything-2",
        &json!({"command": everything, "args": ["stdio"]}),
        "bench",
    );
    list.add(
        "filesystem-1",
        &json!({"command": filesystem, "args": [root]}),
        "bench",
    );
    list.add(
        "filesystem-2",
        &json!({"command": filesystem, "args": [root]}),
        "bench",
    );
    list.add(
        "hanging",
        &json!({"command": "sleep", "args": ["600"]}),
        "bench",
    );
    list
}

async fn run_once(dir: &Path) -> (Duration, Duration, Vec<Duration>) {
    let files = tempfile::tempdir().unwrap();
    let list = servers(dir, files.path());
    let manager = McpManager::new(
        list.servers,
        files.path().to_path_buf(),
        Vec::new(),
        None,
        Vec::new(),
    );
    let mut changes = manager.subscribe();
    let started = Instant::now();
    manager.start();
    let start_call = started.elapsed();
    let mut ready: Vec<Option<Duration>> = vec![None; 4];
    let deadline = started + Duration::from_secs(60);
    while ready.iter().any(Option::is_none) && Instant::now() < deadline {
        for (i, report) in manager.reports().iter().take(4).enumerate() {
            if ready[i].is_none() {
                match report.status {
                    ServerStatus::Connected => ready[i] = Some(started.elapsed()),
                    ServerStatus::Failed | ServerStatus::NeedsAuth => panic!(
                        "{} failed: {}",
                        report.name,
                        report.error.clone().unwrap_or_default()
                    ),
                    ServerStatus::Pending => {}
                }
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), changes.changed()).await;
    }
    let all = started.elapsed();
    let hanging = &manager.reports()[4];
    assert_ne!(
        hanging.status,
        ServerStatus::Connected,
        "the hanging server never answers"
    );
    manager.shutdown().await;
    (
        start_call,
        ready.iter().flatten().copied().max().unwrap_or(all),
        ready.into_iter().map(|r| r.unwrap_or(all)).collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
