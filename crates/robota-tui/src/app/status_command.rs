//! Claude Code's `statusLine` setting (`{"type": "command", "command": …}`): the command
//! gets the session's facts as JSON on stdin and the first line it prints is shown as the
//! status line while no turn runs. It runs in the background — a frame never waits for it
//! — when the facts change, at most once per `MIN_INTERVAL`, and is killed after `TIMEOUT`.

use std::process::Stdio;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// At most this often.
pub const MIN_INTERVAL: Duration = Duration::from_millis(300);
/// A run that takes longer is killed and its output ignored.
const TIMEOUT: Duration = Duration::from_secs(5);

/// ANSI escape sequences (colours, cursor moves): dropped from the shown line.
static ANSI: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|.)").ok());

/// The configured command and when it last ran.
#[derive(Debug)]
pub struct StatusCommand {
    command: String,
    /// The facts changed since the last run started.
    due: bool,
    running: bool,
    last_start: Option<Instant>,
}

impl StatusCommand {
    /// The command of a `statusLine` setting, if it names one.
    pub fn from_setting(setting: Option<&Value>) -> Option<StatusCommand> {
        let setting = setting?;
        let kind = setting
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("command");
        let command = setting.get("command").and_then(Value::as_str)?.trim();
        (kind == "command" && !command.is_empty()).then(|| StatusCommand {
            command: command.to_string(),
            due: true,
            running: false,
            last_start: None,
        })
    }

    /// The facts it shows changed: run again (soon).
    pub fn mark_due(&mut self) {
        self.due = true;
    }

    /// When the next run may start (`now` at the earliest), if one is due and none runs.
    pub fn next_start(&self, now: Instant) -> Option<Instant> {
        if !self.due || self.running {
            return None;
        }
        Some(match self.last_start {
            Some(at) => (at + MIN_INTERVAL).max(now),
            None => now,
        })
    }

    /// Starts a run with `input` on stdin; its line (or `None` on failure) comes on `done`.
    pub fn start(&mut self, input: Value, done: mpsc::UnboundedSender<Option<String>>) {
        self.due = false;
        self.running = true;
        self.last_start = Some(Instant::now());
        let command = self.command.clone();
        tokio::spawn(async move {
            let line = tokio::time::timeout(TIMEOUT, run(&command, &input.to_string()))
                .await
                .ok()
                .flatten();
            let _ = done.send(line);
        });
    }

    /// A run ended.
    pub fn finished(&mut self) {
        self.running = false;
    }
}

/// `sh -c command` with `input` on stdin: its first output line, cleaned for the screen.
async fn run(command: &str, input: &str) -> Option<String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input is fine.
        let _ = stdin.write_all(input.as_bytes()).await;
    }
    let output = child.wait_with_output().await.ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.lines().next()?;
    Some(clean_line(first))
}

/// The line without escape sequences or other control characters.
pub fn clean_line(line: &str) -> String {
    let without_ansi = match ANSI.as_ref() {
        Some(ansi) => ansi.replace_all(line, "").into_owned(),
        None => line.to_string(),
    };
    without_ansi.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_command_setting_makes_a_status_command() {
        assert!(StatusCommand::from_setting(None).is_none());
        assert!(StatusCommand::from_setting(Some(&json!({"type": "command"}))).is_none());
        assert!(
            StatusCommand::from_setting(Some(&json!({"type": "static", "command": "x"}))).is_none()
        );
        let mut status =
            StatusCommand::from_setting(Some(&json!({"type": "command", "command": "echo hi"})))
                .unwrap();
        let now = Instant::now();
        assert_eq!(status.next_start(now), Some(now), "due at start");
        status.due = false;
        assert!(status.next_start(now).is_none());
        status.mark_due();
        status.running = true;
        assert!(status.next_start(now).is_none(), "one run at a time");
    }

    #[test]
    fn colours_and_controls_are_dropped_from_the_line() {
        assert_eq!(
            clean_line("\x1b[1;32mmain\x1b[0m · \x1b]8;;http://x\x07link\x1b]8;;\x07\x07"),
            "main · link"
        );
    }

    #[tokio::test]
    async fn the_first_line_of_a_command_that_reads_its_input() {
        let line = run(
            "python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"model\"][\"id\"]); print(\"second\")'",
            r#"{"model": {"id": "m-1"}}"#,
        )
        .await;
        assert_eq!(line.as_deref(), Some("m-1"));
        assert_eq!(run("exit 3", "").await, None);
    }
}
