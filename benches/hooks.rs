//! Hook dispatch overhead: firing PreToolUse with one no-op `command` hook (`true`, and
//! `exit 0`) through `HookRunner::fire` — matcher selection, the stdin JSON, `sh -c` in
//! its own process group, capture, interpretation — against a bare `sh -c true` spawned
//! with `std::process` and an event with no matching hook.
//!
//! `cargo bench --bench hooks -- [RUNS]` (default 200). Prints median and p95 per case.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::time::{Duration, Instant};

use robota::core::hooks::{HookConfig, HookEnvironment, HookEvent, HookRequest, HookRunner};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    let median = percentile(&mut samples, 0.5);
    let p95 = percentile(&mut samples, 0.95);
    println!(
        "{name:<44} median {:>8.3} ms   p95 {:>8.3} ms   ({} runs)",
        median.as_secs_f64() * 1000.0,
        p95.as_secs_f64() * 1000.0,
        samples.len()
    );
}

fn runner(command: &str) -> HookRunner {
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]});
    let (config, warnings) = HookConfig::from_hooks(&hooks, None);
    assert!(warnings.is_empty(), "{warnings:?}");
    HookRunner::new(config)
}

fn time_fire(
    rt: &tokio::runtime::Runtime,
    runner: &HookRunner,
    env: &HookEnvironment,
    tool: &str,
    runs: usize,
) -> Vec<Duration> {
    let cancel = CancellationToken::new();
    let observer = |_p| {};
    let mut samples = Vec::with_capacity(runs);
    for i in 0..=runs {
        let request = HookRequest::new(
            HookEvent::PreToolUse,
            Some(tool),
            json!({"tool_name": tool, "tool_input": {"command": "npm test"}, "tool_use_id": "toolu_1"}),
        );
        let started = Instant::now();
        let outcome = rt.block_on(runner.fire(env, request, &observer, &cancel));
        if i > 0 {
            samples.push(started.elapsed());
        }
        assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    }
    samples
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir();
    let env = HookEnvironment {
        session_id: "bench".into(),
        transcript_path: None,
        cwd: dir.clone(),
        project_dir: dir.clone(),
        permission_mode: "default".into(),
        env: vec![],
    };

    let mut bare = Vec::with_capacity(runs);
    for i in 0..=runs {
        let started = Instant::now();
        let status = std::process::Command::new("/bin/sh")
            .args(["-c", "true"])
            .current_dir(&dir)
            .status()
            .expect("sh");
        if i > 0 {
            bare.push(started.elapsed());
        }
        assert!(status.success());
    }
    report("bare std::process `sh -c true`", bare);
    report(
        "HookRunner::fire, one `true` hook",
        time_fire(&rt, &runner("true"), &env, "Bash", runs),
    );
    report(
        "HookRunner::fire, one `exit 0` hook",
        time_fire(&rt, &runner("exit 0"), &env, "Bash", runs),
    );
    report(
        "HookRunner::fire, no matching hook",
        time_fire(&rt, &runner("true"), &env, "Read", runs),
    );
}
