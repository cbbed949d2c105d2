//! Start-up of the full-screen UI, measured in a pseudo-terminal: the time from exec to
//! the first complete frame (the screen shows the agent's ready marker: for robota the
//! status line with the model, i.e. the session is open; for the peers their prompt
//! footer), then peak and
//! current RSS and the CPU time spent over 10 s of idling. The harness answers the
//! terminal queries a real terminal would (cursor position, device attributes), so peers
//! that ask before drawing are measured fairly.
//!
//! `cargo bench --bench tui_startup` measures `target/release/robota`; set
//! `BENCH_PEERS=<prefix>` to add Claude Code and Codex from that prefix
//! (`../shared/bench/install-peers.sh`), `BENCH_RUNS` (default 5) and `BENCH_IDLE_SECS`
//! (default 10) to change the run, `BENCH_DEFINITIONS=N` to start in a project with N
//! skills and N custom commands, `BENCH_MCP_DIR=<dir with the npm MCP servers>` to start
//! robota with five MCP servers in its user settings (two `server-everything`, two
//! `server-filesystem`, one that never answers).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

struct Agent {
    name: &'static str,
    command: CommandBuilder,
    /// Text on the screen once the first full frame is drawn.
    ready: &'static str,
}

struct Screen {
    parser: vt100::Parser,
    scanned: usize,
    raw: Vec<u8>,
    closed: bool,
}

struct Sample {
    first_frame: Duration,
    peak_rss_kib: u64,
    rss_kib: u64,
    idle_cpu: Duration,
}

fn main() {
    let runs: usize = env_or("BENCH_RUNS", 5);
    let idle = Duration::from_secs(env_or("BENCH_IDLE_SECS", 10));
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(project.join("README.md"), "# bench\n").expect("readme");
    let _ = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status();
    // BENCH_DEFINITIONS=N puts N skills and N custom commands in the project's .claude/.
    for i in 0..env_or("BENCH_DEFINITIONS", 0usize) {
        let skill = project.join(format!(".claude/skills/skill-{i}"));
        let commands = project.join(".claude/commands");
        std::fs::create_dir_all(&skill).expect("skill dir");
        std::fs::create_dir_all(&commands).expect("commands dir");
        std::fs::write(
            skill.join("SKILL.md"),
            format!("---\ndescription: Skill {i} for the bench\n---\nDo {i}.\n"),
        )
        .expect("skill");
        std::fs::write(
            commands.join(format!("command-{i}.md")),
            format!("---\ndescription: Command {i}\n---\nRun {i} on $ARGUMENTS.\n"),
        )
        .expect("command");
    }

    let mut agents = vec![robota(work.path(), &project)];
    if let Ok(prefix) = std::env::var("BENCH_PEERS") {
        agents.extend(peers(Path::new(&prefix), work.path(), &project));
    }
    println!(
        "| agent | first frame (median, min–max) | peak RSS | RSS after {} s idle | CPU while idle |",
        idle.as_secs()
    );
    println!("|---|---|---|---|---|");
    for agent in agents {
        let mut samples = Vec::new();
        for _ in 0..runs {
            match measure(&agent, &project, idle) {
                Ok(sample) => samples.push(sample),
                Err(e) => {
                    eprintln!("{}: {e}", agent.name);
                    break;
                }
            }
        }
        if samples.is_empty() {
            continue;
        }
        samples.sort_by_key(|s| s.first_frame);
        let median = &samples[samples.len() / 2];
        println!(
            "| {} | {:.1} ms ({:.1}–{:.1}) | {:.1} MiB | {:.1} MiB | {} ms |",
            agent.name,
            ms(median.first_frame),
            ms(samples[0].first_frame),
            ms(samples[samples.len() - 1].first_frame),
            median.peak_rss_kib as f64 / 1024.0,
            median.rss_kib as f64 / 1024.0,
            median.idle_cpu.as_millis(),
        );
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn base_command(program: &Path, home: &Path, project: &Path) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(program);
    cmd.cwd(project);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd
}

fn robota(work: &Path, project: &Path) -> Agent {
    let binary = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/robota");
    let home = work.join("robota-user");
    std::fs::create_dir_all(&home).expect("home");
    let mut command = base_command(&binary, &home, project);
    command.env("ROBOTA_HOME", work.join("robota-home"));
    if let Ok(dir) = std::env::var("BENCH_MCP_DIR") {
        let bin = Path::new(&dir).join("node_modules/.bin");
        let everything = bin.join("mcp-server-everything").display().to_string();
        let filesystem = bin.join("mcp-server-filesystem").display().to_string();
        let root = project.display().to_string();
        let settings = serde_json::json!({"mcpServers": {
            "everything-1": {"command": everything, "args": ["stdio"]},
            "everything-2": {"command": everything, "args": ["stdio"]},
            "filesystem-1": {"command": filesystem, "args": [root]},
            "filesystem-2": {"command": filesystem, "args": [root]},
            "hanging": {"command": "sleep", "args": ["600"]}
        }});
        std::fs::create_dir_all(work.join("robota-home")).expect("robota home");
        std::fs::write(work.join("robota-home/settings.json"), settings.to_string())
            .expect("settings");
    }
    command.env("ANTHROPIC_API_KEY", "dummy-key-for-the-bench");
    command.env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
    Agent {
        name: "robota",
        command,
        // The status line names the model once the session is open.
        ready: "claude-sonnet",
    }
}

fn peers(prefix: &Path, work: &Path, project: &Path) -> Vec<Agent> {
    let bin = prefix.join("node_modules/.bin");
    let mut agents = Vec::new();
    let claude = bin.join("claude");
    if claude.exists() {
        let home = work.join("claude-home");
        std::fs::create_dir_all(&home).expect("home");
        let key = "sk-ant-bench-dummy-key-000000000000";
        // Onboarding, the trust dialog and the custom-key question answered beforehand.
        let config = serde_json::json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
            "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}}
        });
        std::fs::write(home.join(".claude.json"), config.to_string()).expect("claude config");
        let mut command = base_command(&claude, &home, project);
        for (k, v) in [
            ("ANTHROPIC_API_KEY", key),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_TELEMETRY", "1"),
        ] {
            command.env(k, v);
        }
        agents.push(Agent {
            name: "Claude Code",
            command,
            ready: "shift+tab to cycle",
        });
    }
    let codex = bin.join("codex");
    if codex.exists() {
        let home = work.join("codex-home");
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home).expect("codex home");
        let config = format!(
            "model = \"gpt-5-codex\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
             [analytics]\nenabled = false\n\
             [model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n\
             [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            project.display()
        );
        std::fs::write(codex_home.join("config.toml"), config).expect("codex config");
        let mut command = base_command(&codex, &home, project);
        command.env("CODEX_HOME", &codex_home);
        command.env("MOCK_API_KEY", "dummy");
        command.env("CODEX_MANAGED_BY_NPM", "1");
        agents.push(Agent {
            name: "Codex",
            command,
            ready: "Ask Codex",
        });
    }
    agents
}

fn measure(agent: &Agent, _project: &Path, idle: Duration) -> Result<Sample, String> {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut child = pty
        .slave
        .spawn_command(agent.command.clone())
        .map_err(|e| e.to_string())?;
    drop(pty.slave);
    let pid = child.process_id().ok_or("no pid")?;
    let mut reader = pty.master.try_clone_reader().map_err(|e| e.to_string())?;
    let writer = Arc::new(Mutex::new(
        pty.master.take_writer().map_err(|e| e.to_string())?,
    ));
    let screen = Arc::new((
        Mutex::new(Screen {
            parser: vt100::Parser::new(
                std::num::NonZeroU16::MIN.saturating_add(39),
                std::num::NonZeroU16::MIN.saturating_add(119),
                0,
            ),
            scanned: 0,
            raw: Vec::new(),
            closed: false,
        }),
        Condvar::new(),
    ));
    let feed = Arc::clone(&screen);
    let answer = Arc::clone(&writer);
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        loop {
            let n = reader.read(&mut buf).unwrap_or(0);
            let (lock, cvar) = &*feed;
            let Ok(mut state) = lock.lock() else { return };
            if n == 0 {
                state.closed = true;
                cvar.notify_all();
                return;
            }
            state.parser.process(&buf[..n]);
            state.raw.extend_from_slice(&buf[..n]);
            let replies = terminal_replies(&mut state);
            if !replies.is_empty()
                && let Ok(mut w) = answer.lock()
            {
                let _ = w.write_all(&replies);
                let _ = w.flush();
            }
            cvar.notify_all();
        }
    });

    let (lock, cvar) = &*screen;
    let deadline = started + Duration::from_secs(30);
    let first_frame = {
        let mut state = lock.lock().map_err(|_| "poisoned")?;
        loop {
            if state.parser.screen().contents().contains(agent.ready) {
                break started.elapsed();
            }
            let now = Instant::now();
            if now >= deadline || state.closed {
                let text = state.parser.screen().contents();
                let _ = child.kill();
                return Err(format!(
                    "no ready marker {:?}; screen:\n{text}",
                    agent.ready
                ));
            }
            state = cvar
                .wait_timeout(state, deadline - now)
                .map_err(|_| "poisoned")?
                .0;
        }
    };
    let cpu_before = process_tree_cpu(pid);
    std::thread::sleep(idle);
    let idle_cpu = process_tree_cpu(pid).saturating_sub(cpu_before);
    let (peak_rss_kib, rss_kib) = rss(pid);
    let _ = child.kill();
    let _ = child.wait();
    Ok(Sample {
        first_frame,
        peak_rss_kib,
        rss_kib,
        idle_cpu,
    })
}

/// Replies to the queries in the new output: cursor position (`CSI 6 n`), primary device
/// attributes (`CSI c`), and the keyboard protocol query (`CSI ? u`). An escape sequence
/// cut by the end of the output is looked at again with the next read.
fn terminal_replies(state: &mut Screen) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = state.scanned;
    while i < state.raw.len() {
        let rest = &state.raw[i..];
        if rest[0] != 0x1b {
            i += 1;
            continue;
        }
        if rest.len() < 4 {
            break;
        }
        if rest.starts_with(b"\x1b[6n") {
            let (row, col) = state.parser.screen().cursor_position();
            out.extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            i += 4;
        } else if rest.starts_with(b"\x1b[0c") || rest.starts_with(b"\x1b[?u") {
            out.extend_from_slice(if rest[2] == b'?' {
                b"\x1b[?0u".as_slice()
            } else {
                b"\x1b[?62;22c".as_slice()
            });
            i += 4;
        } else if rest.starts_with(b"\x1b[c") {
            out.extend_from_slice(b"\x1b[?62;22c");
            i += 3;
        } else {
            i += 1;
        }
    }
    state.scanned = i;
    out
}

/// User + system CPU time of a process and its descendants, from /proc.
fn process_tree_cpu(root: u32) -> Duration {
    let ticks_per_sec = 100.0;
    let mut total = 0u64;
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = after.split_whitespace().collect();
            // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the name.
            total += fields
                .get(11)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            total += fields
                .get(12)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            stack.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    Duration::from_secs_f64(total as f64 / ticks_per_sec)
}

/// (VmHWM, VmRSS) in KiB of the largest process in the tree.
fn rss(root: u32) -> (u64, u64) {
    let mut best = (0, 0);
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let field = |name: &str| {
                status
                    .lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let (hwm, now) = (field("VmHWM:"), field("VmRSS:"));
            if hwm > best.0 {
                best = (hwm, now);
            }
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            stack.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    best
}
