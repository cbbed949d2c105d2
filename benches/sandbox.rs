//! The Bash sandbox's start-up cost per call: the Bash tool running `true` through
//! `BashTool::call` unsandboxed, sandboxed (user, mount and network namespaces, Landlock),
//! and sandboxed with Read deny rules whose glob is resolved by walking a working
//! directory of 2,000 files at every call, and with allowed domains (the proxy's relay is
//! started by exec for each command: this bench binary dispatches to it first thing in
//! `main`); and in bypass mode with deny rules, where the call runs in the filesystem-only
//! confinement (the same walk, binds and Landlock, no network namespace). The difference
//! is what the sandbox adds.
//!
//! The deny-rule walk is kept between calls and reads again only the directories that
//! changed (`DeniedWalkCache`); the last case creates a file before each call.
//!
//! `cargo bench --bench sandbox -- [RUNS]` (default 200). Prints median and p95 per case.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use robota::core::permission::{PermissionMode, PermissionPolicy, PermissionRule, SandboxPolicy};
use robota::core::{Tool, ToolContext};
use robota::tools::BashTool;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    let median = percentile(&mut samples, 0.5);
    let p95 = percentile(&mut samples, 0.95);
    println!(
        "{name:<48} median {:>8.3} ms   p95 {:>8.3} ms   ({} runs)",
        median.as_secs_f64() * 1000.0,
        p95.as_secs_f64() * 1000.0,
        samples.len()
    );
    median
}

fn time_calls(
    rt: &tokio::runtime::Runtime,
    bash: &BashTool,
    dir: &std::path::Path,
    runs: usize,
) -> Vec<Duration> {
    time_calls_changing(rt, bash, dir, runs, false)
}

/// [`time_calls`], with a file created in the project before each call when `changing`
/// (so the deny-rule walk of the last call cannot be reused).
fn time_calls_changing(
    rt: &tokio::runtime::Runtime,
    bash: &BashTool,
    dir: &std::path::Path,
    runs: usize,
    changing: bool,
) -> Vec<Duration> {
    let ctx = ToolContext {
        cwd: dir.to_path_buf(),
        cancel: CancellationToken::new(),
        tool_use_id: "toolu_bench".to_string(),
        env: Vec::new(),
        read_denial: None,
        progress: Default::default(),
    };
    let mut samples = Vec::with_capacity(runs);
    for i in 0..=runs {
        if changing {
            std::fs::write(dir.join(format!("dir{}/new{i}.txt", i % 20)), "x").unwrap();
        }
        let started = Instant::now();
        let out = rt.block_on(bash.call(json!({"command": "true"}), &ctx));
        assert!(!out.is_error, "{}", out.content);
        if i > 0 {
            samples.push(started.elapsed());
        }
    }
    samples
}

fn sandboxed(dir: &std::path::Path, deny: &str) -> BashTool {
    sandboxed_with(dir, deny, &[])
}

fn sandboxed_with(dir: &std::path::Path, deny: &str, domains: &[&str]) -> BashTool {
    let bash = BashTool::new(dir);
    let mut sandbox = SandboxPolicy {
        available: true,
        ..SandboxPolicy::default()
    };
    sandbox.settings.allowed_domains = domains.iter().map(|d| d.to_string()).collect();
    let policy = PermissionPolicy {
        deny: PermissionRule::parse_list(deny),
        sandbox,
        ..PermissionPolicy::new(PermissionMode::Default)
    };
    bash.sandboxed_by(Arc::new(Mutex::new(policy)));
    bash
}

/// The filesystem-only confinement of bypass mode: the machine can confine, the mode
/// puts no call in the sandbox, and `deny` rules are present.
fn files_only(dir: &std::path::Path, deny: &str) -> BashTool {
    let bash = BashTool::new(dir);
    let sandbox = SandboxPolicy {
        available: true,
        files_guard: true,
        ..SandboxPolicy::default()
    };
    let policy = PermissionPolicy {
        deny: PermissionRule::parse_list(deny),
        sandbox,
        ..PermissionPolicy::new(PermissionMode::BypassPermissions)
    };
    bash.sandboxed_by(Arc::new(Mutex::new(policy)));
    bash
}

fn main() {
    #[cfg(unix)]
    robota::tools::sandbox::relay::run_if_requested();
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    if let Some(why) = &robota::tools::sandbox::support().missing {
        println!("the sandbox cannot run here: {why}");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for d in 0..20 {
        let sub = dir.path().join(format!("dir{d}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("file{f}.txt")), "x").unwrap();
        }
    }
    std::fs::write(dir.path().join("dir3/.env"), "secret").unwrap();

    let plain = report(
        "Bash `true`, no sandbox",
        time_calls(&rt, &BashTool::new(dir.path()), dir.path(), runs),
    );
    let boxed = report(
        "Bash `true`, sandboxed",
        time_calls(&rt, &sandboxed(dir.path(), ""), dir.path(), runs),
    );
    let walked = report(
        "Bash `true`, sandboxed, Read(.env) over 2,000 files",
        time_calls(&rt, &sandboxed(dir.path(), "Read(.env)"), dir.path(), runs),
    );
    let proxied = report(
        "Bash `true`, sandboxed, allowedDomains (relay)",
        time_calls(
            &rt,
            &sandboxed_with(dir.path(), "", &["github.com"]),
            dir.path(),
            runs,
        ),
    );
    let bypass = report(
        "Bash `true`, bypass: files only, Read(.env) Bash(rm:*)",
        time_calls(
            &rt,
            &files_only(dir.path(), "Read(.env) Bash(rm:*)"),
            dir.path(),
            runs,
        ),
    );
    let rewalked = report(
        "  the same, a file created before each call",
        time_calls_changing(
            &rt,
            &files_only(dir.path(), "Read(.env) Bash(rm:*)"),
            dir.path(),
            runs,
            true,
        ),
    );
    println!(
        "bypass's confinement when a file was created since the last call (its directory read again): {:.3} ms",
        (rewalked.as_secs_f64() - plain.as_secs_f64()) * 1000.0
    );
    println!(
        "sandbox start-up cost per call (median difference): {:.3} ms; with the deny-rule walk: {:.3} ms; with the domain proxy's relay: {:.3} ms; bypass's filesystem-only confinement with deny rules: {:.3} ms",
        (boxed.as_secs_f64() - plain.as_secs_f64()) * 1000.0,
        (walked.as_secs_f64() - plain.as_secs_f64()) * 1000.0,
        (proxied.as_secs_f64() - plain.as_secs_f64()) * 1000.0,
        (bypass.as_secs_f64() - plain.as_secs_f64()) * 1000.0
    );
}
