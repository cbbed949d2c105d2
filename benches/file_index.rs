//! `@` file completion on a large tree: index build time and per-keystroke query time.
//!
//! `cargo bench --bench file_index -- [DIR]` (default: a generated tree of 100,000 files
//! in a temp dir). Typing is simulated one character at a time, as the popup sees it:
//! each query narrows from the previous one's matches; a fresh full search is timed too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::path::Path;
use std::time::{Duration, Instant};

use robota::tui::completion::{FileIndex, FileSearch};

const RUNS: usize = 5;
const QUERIES: &[&str] = &["src/mod.rs", "compmodrs", "readme", "zzzz"];

/// CPU time of the whole process (all threads), which load from other processes on the
/// machine does not inflate the way it inflates wall time.
#[cfg(unix)]
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall time since the first call, where the process's CPU clock is not read (Windows).
#[cfg(not(unix))]
fn cpu_time() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// 10 × 10 × 10 directories of 100 files each, with a `.gitignore`d build directory.
fn generate(root: &Path) -> std::io::Result<usize> {
    const TOP: [&str; 10] = [
        "src", "tests", "docs", "crates", "vendor", "assets", "tools", "examples", "benches", "web",
    ];
    const MID: [&str; 10] = [
        "core", "tui", "net", "io", "util", "model", "view", "cli", "store", "auth",
    ];
    const LEAF: [&str; 10] = [
        "alpha", "beta", "gamma", "delta", "parser", "render", "compose", "session", "index",
        "widget",
    ];
    const EXT: [&str; 5] = ["rs", "md", "toml", "ts", "json"];
    let mut files = 0;
    for top in TOP {
        for mid in MID {
            for leaf in LEAF {
                let dir = root.join(top).join(mid).join(leaf);
                std::fs::create_dir_all(&dir)?;
                for i in 0..100 {
                    let name = format!("{leaf}_{mid}_{i:03}.{}", EXT[i % EXT.len()]);
                    std::fs::write(dir.join(name), "")?;
                    files += 1;
                }
            }
        }
    }
    std::fs::create_dir_all(root.join("target/debug"))?;
    std::fs::write(root.join("target/debug/ignored.o"), "")?;
    std::fs::write(root.join(".gitignore"), "target/\n")?;
    Ok(files)
}

fn main() -> std::io::Result<()> {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let temp = tempfile::tempdir()?;
    let root = match &arg {
        Some(dir) => Path::new(dir).to_path_buf(),
        None => {
            let start = Instant::now();
            let files = generate(temp.path())?;
            println!("generated {files} files in {:.1?}", start.elapsed());
            temp.path().to_path_buf()
        }
    };

    let mut builds = Vec::new();
    let mut build_cpu = Vec::new();
    let mut index = FileIndex::build(&root);
    for _ in 0..RUNS {
        let (start, cpu) = (Instant::now(), cpu_time());
        index = FileIndex::build(&root);
        builds.push(start.elapsed());
        build_cpu.push(cpu_time() - cpu);
    }
    println!(
        "index build: {} paths, median {:.1?} wall, {:.1?} CPU (of {RUNS}, after a warm-up)",
        index.len(),
        median(builds),
        median(build_cpu)
    );

    for query in QUERIES {
        let (mut keys, mut keys_cpu, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
        let mut found = 0;
        for _ in 0..RUNS {
            let mut search = FileSearch::default();
            for end in 1..=query.len() {
                let (start, cpu) = (Instant::now(), cpu_time());
                found = search.search(&index, &query[..end], 50).len();
                keys.push(start.elapsed());
                keys_cpu.push(cpu_time() - cpu);
            }
            let start = Instant::now();
            FileSearch::default().search(&index, query, 50);
            fresh.push(start.elapsed());
        }
        let worst = keys.iter().max().copied().unwrap_or_default();
        let worst_cpu = keys_cpu.iter().max().copied().unwrap_or_default();
        println!(
            "query {query:>12}: per keystroke median {:.2?} (worst {:.2?}) wall, {:.2?} (worst {:.2?}) CPU; one full search {:.2?}; {found} shown",
            median(keys),
            worst,
            median(keys_cpu),
            worst_cpu,
            median(fresh)
        );
    }
    Ok(())
}
