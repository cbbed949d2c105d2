//! Grep and Glob against ripgrep on the same tree (DESIGN §12: within 1.5× of `rg`).
//!
//! `cargo bench --bench search -- [DIR]` (default: the cargo registry's unpacked sources).
//! Each case runs the tool in-process and `rg` as a subprocess (when it is installed),
//! five times after one warm-up, and prints the medians. The last case adds a glob Read
//! deny rule, which every walked entry is checked against (`rg` walks without it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::Arc;

use robota::core::permission::{PermissionMode, PermissionPolicy, PermissionRule};
use robota::core::{Tool, ToolContext};
use robota::tools::{GlobTool, GrepTool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 5;

/// A case: its name, the tool and its input, whether deny rules are in force, and the `rg`
/// arguments that do the same.
type Case = (&'static str, Box<dyn Tool>, Value, bool, Vec<&'static str>);

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time_tool(
    rt: &tokio::runtime::Runtime,
    tool: &dyn Tool,
    input: Value,
    root: &Path,
    deny: bool,
) -> (Duration, usize) {
    let read_denial = deny.then(|| {
        let mut policy = PermissionPolicy::new(PermissionMode::Default);
        policy.deny = PermissionRule::parse_list("Read(.env), Read(./secrets/**)");
        Arc::new(policy.read_denial(root).expect("a read deny rule"))
    });
    let ctx = ToolContext {
        cwd: root.to_path_buf(),
        cancel: CancellationToken::new(),
        tool_use_id: "bench".into(),
        env: vec![],
        read_denial,
        progress: Default::default(),
    };
    let mut lines = 0;
    let mut samples = Vec::new();
    for i in 0..=RUNS {
        let start = Instant::now();
        let out = rt.block_on(tool.call(input.clone(), &ctx));
        if i > 0 {
            samples.push(start.elapsed());
        }
        lines = out.content.lines().count();
    }
    (median(samples), lines)
}

fn time_rg(args: &[&str], root: &Path) -> Option<(Duration, usize)> {
    let mut samples = Vec::new();
    let mut lines = 0;
    for i in 0..=RUNS {
        let start = Instant::now();
        let out = Command::new("rg")
            .args(args)
            .current_dir(root)
            .output()
            .ok()?;
        if i > 0 {
            samples.push(start.elapsed());
        }
        lines = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
    }
    Some((median(samples), lines))
}

fn main() {
    let root: PathBuf = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src")))
        .expect("give a directory");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("tree: {}", root.display());
    println!("| case | robota | lines | rg | lines | ratio |");
    println!("|---|---|---|---|---|---|");
    let cases: Vec<Case> = vec![
        (
            "Grep files_with_matches `fn main`",
            Box::new(GrepTool),
            json!({"pattern": "fn main", "head_limit": 0}),
            false,
            vec!["-l", "fn main"],
        ),
        (
            "Grep content `unsafe impl`",
            Box::new(GrepTool),
            json!({"pattern": "unsafe impl", "output_mode": "content", "head_limit": 0}),
            false,
            vec!["-n", "unsafe impl"],
        ),
        (
            "Grep count -i `todo`",
            Box::new(GrepTool),
            json!({"pattern": "todo", "-i": true, "output_mode": "count", "head_limit": 0}),
            false,
            vec!["-c", "-i", "todo"],
        ),
        (
            "Glob `**/*.rs` / rg --files",
            Box::new(GlobTool),
            json!({"pattern": "**/*.rs"}),
            false,
            vec!["--files", "-g", "*.rs"],
        ),
        (
            "Grep files_with_matches `fn main`, 2 Read deny rules",
            Box::new(GrepTool),
            json!({"pattern": "fn main", "head_limit": 0}),
            true,
            vec!["-l", "fn main"],
        ),
    ];
    for (name, tool, input, deny, rg_args) in cases {
        let (ours, our_lines) = time_tool(&rt, tool.as_ref(), input, &root, deny);
        match time_rg(&rg_args, &root) {
            Some((theirs, their_lines)) => println!(
                "| {name} | {:.1} ms | {our_lines} | {:.1} ms | {their_lines} | {:.2}× |",
                ours.as_secs_f64() * 1e3,
                theirs.as_secs_f64() * 1e3,
                ours.as_secs_f64() / theirs.as_secs_f64()
            ),
            None => println!(
                "| {name} | {:.1} ms | {our_lines} | rg not installed | | |",
                ours.as_secs_f64() * 1e3
            ),
        }
    }
}
