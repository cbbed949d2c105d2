//! Permission evaluation cost per tool call with 200 rules (120 Bash prefix rules, 50 path
//! rules, 20 WebFetch domains, 10 MCP rules across allow, ask and deny), timed with
//! `std::time` over many iterations, in a real project directory (paths are resolved
//! through the file system). Reported: the best of five rounds of wall time, and of the
//! thread's CPU time (which a busy shared machine does not inflate).
//! Run: `cargo bench --bench permissions`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use robota::core::RiskClass;
use robota::core::permission::{CallFacts, PermissionMode, PermissionPolicy, PermissionRule};
use serde_json::json;

fn policy(home: &Path) -> PermissionPolicy {
    let mut allow = Vec::new();
    let mut ask = Vec::new();
    let mut deny = Vec::new();
    let tools = [
        "npm", "cargo", "git", "make", "pytest", "go", "docker", "kubectl", "yarn", "pnpm",
    ];
    for i in 0..120 {
        let rule = format!("Bash({} sub{i} *)", tools[i % tools.len()]);
        match i % 6 {
            0 => deny.push(rule),
            1 => ask.push(rule),
            _ => allow.push(rule),
        }
    }
    for i in 0..50 {
        let rule = match i % 5 {
            0 => format!("Read(~/.secret{i}/**)"),
            1 => format!("Edit(src/mod{i}/**)"),
            2 => format!("Read(//etc/conf{i}/*.conf)"),
            3 => format!("Edit(/docs/part{i}.md)"),
            _ => format!("Read(.env{i})"),
        };
        if i % 2 == 0 {
            deny.push(rule)
        } else {
            allow.push(rule)
        }
    }
    for i in 0..20 {
        allow.push(format!("WebFetch(domain:site{i}.example.com)"));
    }
    for i in 0..10 {
        allow.push(format!("mcp__server{i}__*"));
    }
    let parse = |list: Vec<String>| {
        list.iter()
            .filter_map(|r| PermissionRule::parse(r))
            .collect()
    };
    PermissionPolicy {
        mode: PermissionMode::Default,
        allow: parse(allow),
        ask: parse(ask),
        deny: parse(deny),
        home: Some(home.to_path_buf()),
        ..PermissionPolicy::default()
    }
}

/// CPU time this thread has used (zero where it is not read: Windows).
#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    Duration::ZERO
}

/// CPU time this thread has used.
#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn time(label: &str, iterations: u32, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let mut wall = Duration::MAX;
    let mut cpu = Duration::MAX;
    for _ in 0..5 {
        let (start, start_cpu) = (Instant::now(), thread_cpu_time());
        for _ in 0..iterations {
            f();
        }
        wall = wall.min(start.elapsed() / iterations);
        cpu = cpu.min((thread_cpu_time() - start_cpu) / iterations);
    }
    println!(
        "{label:<58} {:>7.2} µs wall {:>7.2} µs cpu",
        wall.as_secs_f64() * 1e6,
        cpu.as_secs_f64() * 1e6
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let project = root.join("home/u/projects/app");
    for sub in ["src/mod11", "docs", ".git"] {
        std::fs::create_dir_all(project.join(sub))?;
    }
    std::fs::write(project.join("src/mod11/lib.rs"), "fn main() {}\n")?;
    let policy = policy(&root.join("home/u"));
    let cwd = project.as_path();
    println!(
        "{} rules ({} allow, {} ask, {} deny)",
        policy.allow.len() + policy.ask.len() + policy.deny.len(),
        policy.allow.len(),
        policy.ask.len(),
        policy.deny.len()
    );
    let edit_path = project.join("src/mod11/lib.rs");
    let edit_path = edit_path.to_str().ok_or("non-UTF-8 temp path")?;
    let n = 20_000;
    let bash = |cmd: &'static str| {
        let policy = &policy;
        move || {
            let facts = CallFacts::new("Bash", RiskClass::Execute, Some(cmd), cwd);
            black_box(policy.evaluate(black_box(&facts)));
        }
    };
    time("Bash `git status`", n, bash("git status"));
    time(
        "Bash `cargo sub7 build --release`",
        n,
        bash("cargo sub7 build --release"),
    );
    time(
        "Bash compound with pipe, substitution and redirect",
        n,
        bash(
            "cd src && grep -rn \"$(git rev-parse HEAD)\" . | head -20 > /dev/null 2>&1 && npm sub3 test",
        ),
    );
    time(
        "Bash wrapped and opaque `timeout 60 sh -c 'make sub0 all'`",
        n,
        bash("timeout 60 sh -c 'make sub0 all'"),
    );
    let edit_input = json!({"file_path": edit_path, "old_string": "a", "new_string": "b"});
    time("Edit <project>/src/mod11/lib.rs", n, || {
        let facts = CallFacts {
            input: Some(&edit_input),
            ..CallFacts::new("Edit", RiskClass::Edit, Some(edit_path), cwd)
        };
        black_box(policy.evaluate(black_box(&facts)));
    });
    time("Read /etc/hostname (outside the project)", n, || {
        let facts = CallFacts::new("Read", RiskClass::Read, Some("/etc/hostname"), cwd);
        black_box(policy.evaluate(black_box(&facts)));
    });
    time("WebFetch https://site7.example.com/x", n, || {
        let facts = CallFacts::new(
            "WebFetch",
            RiskClass::Network,
            Some("https://site7.example.com/x"),
            cwd,
        );
        black_box(policy.evaluate(black_box(&facts)));
    });
    time("mcp__server3__query", n, || {
        let facts = CallFacts::new("mcp__server3__query", RiskClass::Execute, None, cwd);
        black_box(policy.evaluate(black_box(&facts)));
    });
    Ok(())
}
