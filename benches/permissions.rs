//! Permission evaluation cost per tool call with 200 rules (120 Bash prefix rules, 50 path
//! rules, 20 WebFetch domains, 10 MCP rules across allow, ask and deny), timed with
//! `std::time` over many iterations. Run: `cargo bench --bench permissions`.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use robota::core::RiskClass;
use robota::core::permission::{CallFacts, PermissionMode, PermissionPolicy, PermissionRule};
use serde_json::json;

fn policy() -> PermissionPolicy {
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
    let policy = PermissionPolicy {
        mode: PermissionMode::Default,
        allow: parse(allow),
        ask: parse(ask),
        deny: parse(deny),
        home: Some("/home/u".into()),
        ..PermissionPolicy::default()
    };
    assert_eq!(
        policy.allow.len() + policy.ask.len() + policy.deny.len(),
        200
    );
    policy
}

fn time(label: &str, iterations: u32, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    let per_call = start.elapsed() / iterations;
    println!("{label:<58} {:>8.2} µs/call", per_call.as_secs_f64() * 1e6);
}

fn main() {
    let policy = policy();
    let cwd = Path::new("/work/project");
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
    let edit_input = json!({"file_path": "/work/project/src/mod11/lib.rs", "old_string": "a", "new_string": "b"});
    time("Edit /work/project/src/mod11/lib.rs", n, || {
        let facts = CallFacts {
            input: Some(&edit_input),
            ..CallFacts::new(
                "Edit",
                RiskClass::Edit,
                Some("/work/project/src/mod11/lib.rs"),
                cwd,
            )
        };
        black_box(policy.evaluate(black_box(&facts)));
    });
    time("Read /etc/conf2/app.conf", n, || {
        let facts = CallFacts::new("Read", RiskClass::Read, Some("/etc/conf2/app.conf"), cwd);
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
}
