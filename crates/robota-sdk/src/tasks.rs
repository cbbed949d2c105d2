//! `/tasks`: what works in the background of a session — the Bash tool's background jobs
//! and the subagents running — listed with their ids, each of which `/tasks stop <id>`
//! stops on its own (a subagent's turn is interrupted; a job's process group is killed).

use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use robota_tools::BashTool;

use crate::commands::CommandError;

/// The background work of one session.
#[derive(Debug, Default)]
pub(crate) struct TaskBoard {
    bash: Option<Arc<BashTool>>,
    subagents: Mutex<Vec<RunningSubagent>>,
}

#[derive(Debug)]
struct RunningSubagent {
    id: String,
    agent_type: String,
    description: String,
    started: Instant,
    cancel: CancellationToken,
}

/// Keeps a subagent on the board while it runs; dropping it takes the subagent off.
pub(crate) struct SubagentOnBoard {
    board: Arc<TaskBoard>,
    id: String,
}

impl Drop for SubagentOnBoard {
    fn drop(&mut self) {
        if let Ok(mut list) = self.board.subagents.lock() {
            list.retain(|s| s.id != self.id);
        }
    }
}

impl TaskBoard {
    /// A board for a session whose background jobs run in `bash` (`None`: no Bash tool).
    pub fn new(bash: Option<Arc<BashTool>>) -> Self {
        TaskBoard {
            bash,
            subagents: Mutex::new(Vec::new()),
        }
    }

    /// Puts a running subagent on the board until the returned guard is dropped;
    /// `/tasks stop <id>` cancels `cancel`.
    pub(crate) fn subagent_started(
        self: &Arc<Self>,
        id: &str,
        agent_type: &str,
        description: &str,
        cancel: CancellationToken,
    ) -> SubagentOnBoard {
        if let Ok(mut list) = self.subagents.lock() {
            list.push(RunningSubagent {
                id: id.to_string(),
                agent_type: agent_type.to_string(),
                description: description.to_string(),
                started: Instant::now(),
                cancel,
            });
        }
        SubagentOnBoard {
            board: self.clone(),
            id: id.to_string(),
        }
    }

    /// Sends the Bash commands running in the foreground now to the background (their
    /// calls return the job at once); whether one was running.
    pub(crate) fn send_bash_to_background(&self) -> bool {
        self.bash
            .as_ref()
            .is_some_and(|bash| bash.send_to_background())
    }

    /// Background jobs still running.
    pub(crate) fn running_jobs(&self) -> usize {
        self.bash
            .as_ref()
            .map_or(0, |bash| bash.running_background_jobs())
    }

    /// `/tasks`: every background job (running or finished, with its output file) and
    /// every running subagent, with how to stop one.
    pub fn report(&self) -> String {
        let jobs = self
            .bash
            .as_ref()
            .map(|b| b.background_jobs())
            .unwrap_or_default();
        let subagents: Vec<String> = self
            .subagents
            .lock()
            .map(|list| {
                list.iter()
                    .map(|s| {
                        format!(
                            "  {:<14} {} ({}) — running {}s",
                            s.id,
                            s.description,
                            s.agent_type,
                            s.started.elapsed().as_secs()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if jobs.is_empty() && subagents.is_empty() {
            return "No background tasks: no background Bash jobs and no subagents running."
                .to_string();
        }
        let mut out = String::new();
        if !jobs.is_empty() {
            let _ = writeln!(out, "Background Bash jobs:");
            for job in &jobs {
                let state = match job.exit_code {
                    None => "running".to_string(),
                    Some(code) => format!("exited with {code}"),
                };
                let _ = writeln!(
                    out,
                    "  {:<14} {state:<16} {}  (output: {})",
                    job.id,
                    one_line(&job.command),
                    job.output_path.display()
                );
            }
        }
        if !subagents.is_empty() {
            let _ = writeln!(out, "Subagents:");
            for line in subagents {
                let _ = writeln!(out, "{line}");
            }
        }
        out.push_str("Stop one with /tasks stop <id>.");
        out
    }

    /// `/tasks stop <id>`: stops that job or subagent.
    pub fn stop(&self, id: &str) -> Result<String, CommandError> {
        let id = id.trim();
        if let Ok(list) = self.subagents.lock()
            && let Some(subagent) = list.iter().find(|s| s.id == id)
        {
            subagent.cancel.cancel();
            return Ok(format!("Stopped subagent {id} ({}).", subagent.description));
        }
        if let Some(bash) = &self.bash {
            match bash.stop_background_job(id) {
                Some(true) => return Ok(format!("Stopped background job {id}.")),
                Some(false) => return Err(CommandError::TaskFinished(id.to_string())),
                None => {}
            }
        }
        Err(CommandError::NoTask(id.to_string()))
    }

    /// `/tasks [stop <id>]`.
    pub fn run(&self, args: &str) -> Result<String, CommandError> {
        let args = args.trim();
        match args.split_once(char::is_whitespace) {
            _ if args.is_empty() => Ok(self.report()),
            Some(("stop", id)) if !id.trim().is_empty() => self.stop(id),
            _ if args == "stop" => Err(CommandError::usage("/tasks stop <id>", None)),
            _ => Err(CommandError::usage("/tasks [stop <id>]", Some(args))),
        }
    }
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut short: String = line.chars().take(80).collect();
    if line.chars().count() > 80 || text.lines().nth(1).is_some() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_job_is_listed_and_stopped_by_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let bash = Arc::new(BashTool::new(dir.path()));
        let board = TaskBoard::new(Some(bash.clone()));
        assert!(board.report().starts_with("No background tasks"));
        let marker = dir.path().join("still-running");
        let job = bash
            .start_background_job(
                &format!("sleep 30; touch {}", marker.display()),
                dir.path(),
                &[],
            )
            .unwrap();
        let report = board.run("").unwrap();
        assert!(report.contains(&job.id), "{report}");
        assert!(report.contains("running"), "{report}");
        assert_eq!(
            board.run(&format!("stop {}", job.id)).unwrap(),
            format!("Stopped background job {}.", job.id)
        );
        // The job's shell reports its end in its log once it is killed.
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        while bash.background_jobs()[0].exit_code.is_none() && Instant::now() < deadline {
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(bash.background_jobs()[0].exit_code.is_some());
        assert!(!marker.exists());
        assert!(matches!(
            board.stop(&job.id),
            Err(CommandError::TaskFinished(id)) if id == job.id
        ));
        assert!(
            board
                .stop("bash_99")
                .unwrap_err()
                .to_string()
                .contains("No background task")
        );
        assert!(
            board
                .run("stop")
                .unwrap_err()
                .to_string()
                .starts_with("Usage: /tasks stop")
        );
    }

    #[test]
    fn a_subagent_is_listed_while_it_runs_and_stopping_it_cancels_only_it() {
        let board = Arc::new(TaskBoard::new(None));
        let parent = CancellationToken::new();
        let (a, b) = (parent.child_token(), parent.child_token());
        let guard_a = board.subagent_started("agent-1", "Explore", "find the parser", a.clone());
        let _guard_b = board.subagent_started("agent-2", "Plan", "plan the change", b.clone());
        let report = board.report();
        assert!(
            report.contains("agent-1") && report.contains("find the parser"),
            "{report}"
        );
        assert!(
            report.contains("agent-2") && report.contains("(Plan)"),
            "{report}"
        );
        board.stop("agent-1").unwrap();
        assert!(a.is_cancelled());
        assert!(!b.is_cancelled() && !parent.is_cancelled());
        drop(guard_a);
        assert!(!board.report().contains("agent-1"));
    }
}
