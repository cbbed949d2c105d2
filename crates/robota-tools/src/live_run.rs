//! A shell script run that can be watched and let go: while it runs, the last lines it
//! printed are reported (at most ten times a second, only when they changed, each line
//! capped); on request it is handed over still running (a [`DetachedRun`]), its output so
//! far and from then on going to a log file, for the background jobs to adopt. Capture is
//! bounded as `shell_process` bounds it (head and tail of each stream).

use std::collections::VecDeque;
use std::io::Write;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::process::Child;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::shell_process::{
    BoundedBuffer, CAPTURE_HALF_BYTES, Ending, KILL_GRACE, ShellRun, ShellScript, shell_command,
};
use robota_core::process_group::{
    OutputSink, PipeReader, ProcessGroup, StopPolicy, ending_of, spawn_in_new_group,
};

/// Lines a tail report carries at most.
pub const TAIL_LINES: usize = 5;
/// Characters kept of each tail line.
pub const TAIL_LINE_CHARS: usize = 200;
/// Tail reports come at most this often.
pub const TAIL_EVERY: Duration = Duration::from_millis(100);

/// Asks the runs watching it to go on in the background: each [`DetachSignal::request`]
/// lets go of every run subscribed at that moment.
#[derive(Debug)]
pub struct DetachSignal(watch::Sender<u64>);

impl Default for DetachSignal {
    fn default() -> Self {
        DetachSignal(watch::channel(0).0)
    }
}

impl DetachSignal {
    /// Lets go of the runs watching now.
    pub fn request(&self) {
        self.0.send_modify(|n| *n += 1);
    }

    /// What a run watches (requests made before this are not seen).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.0.subscribe()
    }
}

/// What to tell about a run while it goes on.
#[derive(Default)]
pub struct RunWatch<'a> {
    /// Called with the last lines printed (stdout and stderr as they came), when they
    /// changed, at most every 100 ms (`TAIL_EVERY`).
    pub tail: Option<&'a (dyn Fn(Vec<String>) + Send + Sync)>,
    /// When it fires, the run is handed back still running.
    pub detach: Option<watch::Receiver<u64>>,
}

/// How a watched run ended.
// One per run, moved once: a Windows `Child` (its handles) makes the detached side larger.
#[cfg_attr(windows, allow(clippy::large_enum_variant))]
pub enum WatchedRun {
    /// It ended (exited, timed out, was cancelled).
    Finished(ShellRun),
    /// It was let go while still running.
    Detached(DetachedRun),
}

/// The last lines of output, for a live view.
#[derive(Debug, Default)]
struct TailLines {
    lines: VecDeque<String>,
    partial: String,
    changed: bool,
}

impl TailLines {
    fn push(&mut self, bytes: &[u8]) {
        // Only the last lines of a chunk can show: skip what comes before them.
        let mut breaks = None;
        let mut seen = 0;
        for (at, byte) in bytes.iter().enumerate().rev() {
            if *byte == b'\n' {
                seen += 1;
                if seen > TAIL_LINES {
                    breaks = Some(at);
                    break;
                }
            }
        }
        let bytes = match breaks {
            Some(at) => {
                self.lines.clear();
                self.partial.clear();
                &bytes[at + 1..]
            }
            None => bytes,
        };
        let text = String::from_utf8_lossy(bytes);
        let mut pieces = text.split('\n').peekable();
        while let Some(piece) = pieces.next() {
            // A carriage return redraws the line (progress bars): keep what comes after it.
            match piece.rsplit_once('\r') {
                Some((_, after)) => {
                    self.partial.clear();
                    push_capped(&mut self.partial, after);
                }
                None => push_capped(&mut self.partial, piece),
            }
            if pieces.peek().is_some() {
                let line = std::mem::take(&mut self.partial);
                self.lines.push_back(line);
                if self.lines.len() > TAIL_LINES {
                    self.lines.pop_front();
                }
            }
        }
        self.changed = true;
    }

    /// The last lines (the unfinished one included) when they changed since last asked.
    fn take_changed(&mut self) -> Option<Vec<String>> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        let mut lines: Vec<String> = self.lines.iter().cloned().collect();
        if !self.partial.is_empty() {
            lines.push(self.partial.clone());
        }
        let skip = lines.len().saturating_sub(TAIL_LINES);
        lines.drain(..skip);
        Some(lines)
    }
}

fn push_capped(line: &mut String, more: &str) {
    let have = line.chars().count();
    line.extend(more.chars().take(TAIL_LINE_CHARS.saturating_sub(have)));
}

/// What both pipes of a run feed: the bounded capture, the tail, and once the run was let
/// go, its log file instead.
struct LiveState {
    stdout: BoundedBuffer,
    stderr: BoundedBuffer,
    tail: TailLines,
    /// Whether anyone watches the tail.
    track_tail: bool,
    log: Option<std::fs::File>,
    /// A line the log leaves out (the Bash tool's working-directory marker).
    hide: Option<String>,
}

impl LiveState {
    fn new(track_tail: bool) -> Self {
        LiveState {
            stdout: BoundedBuffer::new(CAPTURE_HALF_BYTES),
            stderr: BoundedBuffer::new(CAPTURE_HALF_BYTES),
            tail: TailLines::default(),
            track_tail,
            log: None,
            hide: None,
        }
    }

    fn write_log(&mut self, text: &str) {
        let text = match &self.hide {
            Some(marker) => without_marker_line(text, marker),
            None => text.to_string(),
        };
        if let Some(log) = &mut self.log {
            let _ = log.write_all(text.as_bytes());
        }
    }
}

/// `text` without the line `marker` starts (and the line break before it).
fn without_marker_line(text: &str, marker: &str) -> String {
    let Some(at) = text.find(marker) else {
        return text.to_string();
    };
    let start = if text[..at].ends_with('\n') {
        at - 1
    } else {
        at
    };
    let end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
    format!("{}{}", &text[..start], &text[end..])
}

fn lock(state: &Mutex<LiveState>) -> MutexGuard<'_, LiveState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// One pipe's end of a [`LiveState`] (the default one feeds nothing).
#[derive(Default)]
struct LiveSink {
    state: Option<Arc<Mutex<LiveState>>>,
    stderr: bool,
}

impl OutputSink for LiveSink {
    fn push(&mut self, bytes: &[u8]) {
        let Some(state) = &self.state else {
            return;
        };
        let mut state = lock(state);
        if state.log.is_some() {
            state.write_log(&String::from_utf8_lossy(bytes));
            return;
        }
        if self.stderr {
            state.stderr.push(bytes);
        } else {
            state.stdout.push(bytes);
        }
        if state.track_tail {
            state.tail.push(bytes);
        }
    }
}

/// A run let go while still running: its process group, pipes and what they captured.
pub struct DetachedRun {
    child: Child,
    group: Option<ProcessGroup>,
    state: Arc<Mutex<LiveState>>,
    readers: [PipeReader<LiveSink>; 2],
}

impl DetachedRun {
    /// The process group's id.
    pub fn group_id(&self) -> Option<i32> {
        self.group.as_ref().map(ProcessGroup::id)
    }

    /// Sends the output so far and all that follows to `log` (leaving out the line
    /// `hide` starts), and returns what waits for the end: it appends
    /// `[exit code: N]` to the log and resolves to the exit code (-1 when killed).
    pub fn into_log(
        self,
        log: std::fs::File,
        hide: Option<String>,
    ) -> impl std::future::Future<Output = i32> + Send + 'static {
        {
            let mut state = lock(&self.state);
            let stdout = std::mem::take(&mut state.stdout).into_text();
            let stderr = std::mem::take(&mut state.stderr).into_text();
            state.log = Some(log);
            state.hide = hide;
            state.write_log(&stdout);
            state.write_log(&stderr);
        }
        let DetachedRun {
            mut child,
            group,
            state,
            readers,
        } = self;
        async move {
            let code = match child.wait().await {
                Ok(status) => status.code().unwrap_or(-1),
                Err(_) => -1,
            };
            for reader in readers {
                reader.finish().await;
            }
            if let Some(group) = group {
                group.release();
            }
            lock(&state).write_log(&format!("\n[exit code: {code}]\n"));
            code
        }
    }
}

/// Runs the script to the end, the timeout or cancellation — or until `watch.detach`
/// fires, when it is handed back still running.
pub async fn run_watched(
    script: &ShellScript<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
    watch: RunWatch<'_>,
) -> std::io::Result<WatchedRun> {
    let mut command = shell_command(script);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, mut group) = spawn_in_new_group(&mut command)?;
    let state = Arc::new(Mutex::new(LiveState::new(watch.tail.is_some())));
    let sink = |stderr| LiveSink {
        state: Some(Arc::clone(&state)),
        stderr,
    };
    let stdout = PipeReader::start(child.stdout.take(), sink(false));
    let stderr = PipeReader::start(child.stderr.take(), sink(true));
    let deadline = tokio::time::Instant::now() + timeout;
    let mut ticker = tokio::time::interval(TAIL_EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut detach = watch.detach;
    let ending = loop {
        tokio::select! {
            status = child.wait() => {
                let status = status?;
                if let Some(group) = group.take() {
                    group.release();
                }
                break ending_of(status);
            }
            _ = tokio::time::sleep_until(deadline) => break Ending::TimedOut,
            _ = cancel.cancelled() => break Ending::Cancelled,
            _ = ticker.tick(), if watch.tail.is_some() => {
                let lines = lock(&state).tail.take_changed();
                if let (Some(lines), Some(report)) = (lines, watch.tail) {
                    report(lines);
                }
            }
            _ = detached(&mut detach) => {
                return Ok(WatchedRun::Detached(DetachedRun {
                    child,
                    group,
                    state,
                    readers: [stdout, stderr],
                }));
            }
        }
    };
    if matches!(ending, Ending::TimedOut | Ending::Cancelled) {
        match group.take() {
            Some(group) => {
                group
                    .stop(&mut child, StopPolicy::TermThenKill(KILL_GRACE))
                    .await;
            }
            None => {
                let _ = child.wait().await;
            }
        }
    }
    stdout.finish().await;
    stderr.finish().await;
    let mut state = lock(&state);
    Ok(WatchedRun::Finished(ShellRun {
        stdout: std::mem::take(&mut state.stdout).into_text(),
        stderr: std::mem::take(&mut state.stderr).into_text(),
        ending,
    }))
}

/// Resolves when a detach is requested; never when there is nothing to watch.
async fn detached(detach: &mut Option<watch::Receiver<u64>>) {
    match detach {
        Some(rx) => {
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_and_the_unfinished_one() {
        let mut tail = TailLines::default();
        tail.push(b"one\ntwo\nthr");
        tail.push(b"ee\nfour\nfive\nsix\nseven");
        assert_eq!(
            tail.take_changed().unwrap(),
            ["three", "four", "five", "six", "seven"]
        );
        assert_eq!(tail.take_changed(), None, "unchanged since");
        tail.push(b"\rprogress 10%\rprogress 20%");
        assert_eq!(tail.take_changed().unwrap().last().unwrap(), "progress 20%");
        tail.push(b"carried\na\nb\nc\nd\ne\nf\ng\nh");
        assert_eq!(tail.take_changed().unwrap(), ["d", "e", "f", "g", "h"]);
        tail.push(b"\n");
        tail.push("x".repeat(1000).as_bytes());
        let lines = tail.take_changed().unwrap();
        assert_eq!(lines.last().unwrap().chars().count(), TAIL_LINE_CHARS);
    }

    #[test]
    fn the_marker_line_is_left_out_of_the_log() {
        assert_eq!(
            without_marker_line("out\n\n__M__/tmp/x\nafter", "__M__"),
            "out\nafter"
        );
        assert_eq!(without_marker_line("plain", "__M__"), "plain");
    }

    /// A fifo `go` in `dir`: the script blocks reading it until the test writes a line.
    fn fifo_in(dir: &std::path::Path) -> std::path::PathBuf {
        let fifo = dir.join("go");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        fifo
    }

    #[tokio::test]
    async fn tails_are_reported_while_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = fifo_in(dir.path());
        let script = ShellScript {
            script: "echo first; echo second >&2; read x < go; echo done",
            args: &[],
            cwd: dir.path(),
            env: &[],
            sandbox: None,
        };
        let seen = Arc::new(Mutex::new(Vec::<Vec<String>>::new()));
        let record = {
            let seen = Arc::clone(&seen);
            move |lines: Vec<String>| seen.lock().unwrap().push(lines)
        };
        let watch = RunWatch {
            tail: Some(&record),
            detach: None,
        };
        let cancel = CancellationToken::new();
        let run = run_watched(&script, Duration::from_secs(30), &cancel, watch);
        let release = async {
            loop {
                if seen.lock().unwrap().iter().any(|l| l.len() == 2) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            std::fs::write(&fifo, "x\n").unwrap();
        };
        let (run, ()) = tokio::join!(run, release);
        let WatchedRun::Finished(run) = run.unwrap() else {
            panic!("not detached");
        };
        assert_eq!(run.stdout, "first\ndone\n");
        assert_eq!(run.ending, Ending::Exited(0));
        let seen = seen.lock().unwrap();
        assert!(seen.contains(&vec!["first".to_string(), "second".to_string()]));
    }

    #[tokio::test]
    async fn a_detached_run_goes_on_into_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = fifo_in(dir.path());
        let script = ShellScript {
            script: "echo before; read x < go; echo after; exit 7",
            args: &[],
            cwd: dir.path(),
            env: &[],
            sandbox: None,
        };
        let signal = DetachSignal::default();
        let watch = RunWatch {
            tail: None,
            detach: Some(signal.subscribe()),
        };
        let cancel = CancellationToken::new();
        let run = run_watched(&script, Duration::from_secs(30), &cancel, watch);
        signal.request();
        let WatchedRun::Detached(detached) = run.await.unwrap() else {
            panic!("it finished");
        };
        let log_path = dir.path().join("job.log");
        let done = detached.into_log(std::fs::File::create(&log_path).unwrap(), None);
        let waiting = tokio::spawn(done);
        std::fs::write(&fifo, "x\n").unwrap();
        assert_eq!(waiting.await.unwrap(), 7);
        let log = std::fs::read_to_string(&log_path).unwrap();
        assert!(log.ends_with("after\n\n[exit code: 7]\n"), "{log:?}");
    }
}
