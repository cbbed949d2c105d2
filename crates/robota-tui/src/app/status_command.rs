//! Claude Code's `statusLine` setting (`{"type": "command", "command": …}`): the command
//! gets the session's facts as JSON on stdin and the first line it prints is shown as the
//! status line while no turn runs. It runs in the background — a frame never waits for it
//! — when the facts change, at most once per `MIN_INTERVAL`, in a process group of its own;
//! at `TIMEOUT` the whole group is killed (a forking `sh -c` leaves nothing behind), and the
//! first run of a streak that hangs is reported once.

use std::future::Future;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use robota_core::helper_program::{HelperError, HelperIo, deadline, describe, run_helper};
use robota_sdk::settings::model::StatusLineSection;
use serde_json::Value;

/// At most this often.
pub const MIN_INTERVAL: Duration = Duration::from_millis(300);
/// A run that takes longer is killed and its output ignored.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The most of its output read for the first line.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusRun {
    /// Its first line, cleaned for the screen.
    Line(String),
    /// It printed nothing or could not run: the last line stays.
    Nothing,
    /// It was killed at this deadline, with everything it started.
    TimedOut(Duration),
}

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
    /// The last run was killed at its deadline (said once per streak).
    stuck: bool,
}

impl StatusCommand {
    /// The command of a `statusLine` setting, if it names one.
    pub fn from_setting(setting: Option<&StatusLineSection>) -> Option<StatusCommand> {
        let setting = setting?;
        let kind = setting.kind.as_deref().unwrap_or("command");
        let command = setting.command.as_deref()?.trim();
        (kind == "command" && !command.is_empty()).then(|| StatusCommand {
            command: command.to_string(),
            due: true,
            running: false,
            last_start: None,
            stuck: false,
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

    /// Starts a run with `input` on stdin: the returned future (for a task off the loop)
    /// runs it to its end.
    pub fn start(&mut self, input: Value) -> impl Future<Output = StatusRun> + Send + 'static {
        self.due = false;
        self.running = true;
        self.last_start = Some(Instant::now());
        let command = self.command.clone();
        async move { run(&command, &input.to_string(), deadline(TIMEOUT)).await }
    }

    /// A run ended as `run` says; returns the warning to show, the first time a streak of
    /// runs hangs.
    pub fn finished(&mut self, run: &StatusRun) -> Option<String> {
        self.running = false;
        let was_stuck = std::mem::replace(&mut self.stuck, matches!(run, StatusRun::TimedOut(_)));
        match run {
            StatusRun::TimedOut(limit) if !was_stuck => Some(format!(
                "The status-line command did not finish in {} and was stopped (with everything it started); the status line keeps its last text",
                describe(*limit)
            )),
            _ => None,
        }
    }
}

/// `sh -c command` (in a group of its own) with `input` on stdin: its first output line,
/// cleaned for the screen. A command that does not read its input is fine.
async fn run(command: &str, input: &str, limit: Duration) -> StatusRun {
    let mut sh = tokio::process::Command::new("sh");
    sh.arg("-c").arg(command);
    robota_core::credentials::ChildEnv::inherited().apply(&mut sh);
    let io = HelperIo {
        input: Some(input.as_bytes().to_vec()),
        output_limit: OUTPUT_LIMIT,
        deadline: limit,
    };
    match run_helper(sh, io).await {
        Ok(out) => match String::from_utf8_lossy(&out.stdout).lines().next() {
            Some(first) => StatusRun::Line(clean_line(first)),
            None => StatusRun::Nothing,
        },
        Err(HelperError::TimedOut(limit)) => StatusRun::TimedOut(limit),
        Err(_) => StatusRun::Nothing,
    }
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

    fn section(value: Value) -> StatusLineSection {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_a_command_setting_makes_a_status_command() {
        assert!(StatusCommand::from_setting(None).is_none());
        assert!(StatusCommand::from_setting(Some(&section(json!({"type": "command"})))).is_none());
        assert!(
            StatusCommand::from_setting(Some(&section(json!({"type": "static", "command": "x"}))))
                .is_none()
        );
        let mut status = StatusCommand::from_setting(Some(&section(
            json!({"type": "command", "command": "echo hi"}),
        )))
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
            TIMEOUT,
        )
        .await;
        assert_eq!(line, StatusRun::Line("m-1".into()));
        assert_eq!(run("exit 3", "", TIMEOUT).await, StatusRun::Nothing);
    }

    #[tokio::test]
    async fn a_hung_command_is_stopped_and_said_once_per_streak() {
        let limit = Duration::from_millis(100);
        let hung = run("sleep 30", "", limit).await;
        assert_eq!(hung, StatusRun::TimedOut(limit));
        let mut status =
            StatusCommand::from_setting(Some(&section(json!({"command": "sleep 30"})))).unwrap();
        let warning = status.finished(&hung).unwrap();
        assert!(warning.contains("did not finish in 100 ms"), "{warning}");
        assert_eq!(status.finished(&hung), None, "said once");
        assert_eq!(status.finished(&StatusRun::Nothing), None);
        assert!(
            status.finished(&hung).is_some(),
            "a new streak is said again"
        );
    }
}
