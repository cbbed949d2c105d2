//! What the session tells the app: its events into the transcript and the status line,
//! the `statusLine` command's runs, and permission requests into the popup (one on
//! screen, the rest waiting) and the user's answers back to the session.

use std::time::Instant;

use robota_sdk::commands::Submission;
use robota_sdk::{PermissionAnswer, PermissionRequest, SessionEvent, SessionState};

use super::App;
use crate::app::helpers::HelperDone;
use crate::app::permission::{PERMISSION, PermissionChoice, PermissionOverlay};
use crate::app::status_command::StatusRun;
use crate::transcript::NoticeKind;

impl App {
    /// One event from the session.
    pub fn on_session_event(&mut self, mut event: SessionEvent) {
        // `/help` here also lists the keys of this UI.
        if let SessionEvent::CommandOutput {
            command, output, ..
        } = &mut event
            && command == "help"
        {
            output.push_str("\n\n");
            output.push_str(&crate::app::shortcuts::shortcuts_text());
        }
        if let SessionEvent::SubmissionStarted { id, submission } = &event {
            self.queued_images.retain(|(queued, _)| queued != id);
            if let Submission::Command { spec, args } = submission
                && spec.name == "export"
                && args.trim().is_empty()
            {
                self.exporting = Some(*id);
            }
        }
        match event {
            SessionEvent::PermissionRequest(request) => {
                self.notify(&format!(
                    "robota needs your approval to use {}",
                    request.tool_name
                ));
                self.pending_permissions.push_back(request);
                self.show_next_permission();
                return;
            }
            SessionEvent::PermissionWithdrawn { tool_use_id } => {
                self.withdraw_permission(&tool_use_id);
                return;
            }
            SessionEvent::State(state) => {
                self.show_state(state);
                return;
            }
            SessionEvent::SubmissionStarted { id, ref submission }
                if submission.prompt().is_some() =>
            {
                self.running_prompt = Some(id);
                self.transcript.scroll_to_bottom();
            }
            SessionEvent::SubmissionDropped(ref dropped) => {
                let images = match self
                    .queued_images
                    .iter()
                    .position(|(id, _)| *id == dropped.id)
                {
                    Some(at) => self.queued_images.remove(at).1,
                    None => Vec::new(),
                };
                self.input.composer_mut().take_back(&dropped.text, images);
            }
            SessionEvent::CommandOutput { id, output, .. } if self.exporting == Some(id) => {
                self.exporting = None;
                self.start_copy(output);
                return;
            }
            SessionEvent::CommandOutput { ref command, .. } if command == "clear" => {
                self.transcript.clear();
            }
            // The picker and the notice after a rewind say it; the listing is for text
            // clients.
            SessionEvent::CommandOutput { ref command, .. } if command == "rewind" => return,
            SessionEvent::RewindPoints { points, .. } => {
                self.show_rewind_points(points);
                return;
            }
            SessionEvent::Rewound { rewound, .. } => {
                self.show_rewound(rewound);
                return;
            }
            SessionEvent::TextDelta(_) | SessionEvent::AttemptDiscarded => {
                self.status.retry = None;
            }
            SessionEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                ..
            } => {
                self.status.retry = Some(format!(
                    "retrying in {:.0} s (attempt {attempt} of {max_attempts})",
                    delay.as_secs_f64().ceil()
                ));
            }
            // The answer is the last answer as soon as it is committed: leaving (or /copy)
            // before the turn's end work (Stop hooks, the checkpoint) still finds it.
            SessionEvent::AssistantMessage { ref message, .. }
                if self.running_prompt.is_some() && !message.text().trim().is_empty() =>
            {
                self.last_answer = message.text();
            }
            SessionEvent::CommandOutput { ref command, .. } if command == "doctor" => {
                self.transcript.apply(&event);
                let terminal = self.doctor_terminal_report();
                self.notice(NoticeKind::Info, terminal);
                return;
            }
            SessionEvent::SubmissionEnded { id, ref outcome } => {
                self.stopped_permissions.clear();
                self.status.retry = None;
                if self.running_prompt == Some(id) {
                    self.running_prompt = None;
                    self.notify("robota finished and is waiting for you");
                    if !outcome.result.is_empty() {
                        self.last_answer = outcome.result.clone();
                    }
                }
            }
            _ => {}
        }
        self.transcript.apply(&event);
    }

    /// The session's state: the status line and the queue shown above the composer.
    fn show_state(&mut self, state: SessionState) {
        let was_busy = self.is_busy();
        self.status.model = state.model.clone();
        self.status.mode = state.mode;
        self.status.session_name = state.name.clone();
        self.status.context = state.context;
        let u = &state.usage;
        self.status.tokens = u.input_tokens
            + u.output_tokens
            + u.cache_read_input_tokens
            + u.cache_creation_input_tokens;
        self.status.cost_unknown = state.cost_usd.is_none();
        self.status.cost_usd = state.cost_usd.filter(|c| *c > 0.0);
        match (was_busy, state.running.is_some()) {
            (false, true) => self.status.busy_since = Some(Instant::now()),
            (_, false) => {
                self.status.busy_since = None;
                self.status.retry = None;
            }
            (true, true) => {}
        }
        self.session_state = Some(state);
        if let Some(command) = &mut self.status_command {
            command.mark_due();
        }
    }

    /// When the status command should run next, if it should.
    pub fn status_command_start(&self, now: Instant) -> Option<Instant> {
        self.status_command.as_ref()?.next_start(now)
    }

    /// Runs the status command (off the loop) with the session's facts on its stdin.
    pub fn start_status_command(&mut self) {
        let input = self.status_input();
        if let Some(command) = &mut self.status_command {
            let run = command.start(input);
            self.helpers
                .spawn(async move { HelperDone::StatusLine(run.await) });
        }
    }

    /// The status command ended as `run` says (with no line, the last one stays; a first
    /// hang is said in a notice).
    pub fn status_command_done(&mut self, run: StatusRun) {
        let warning = self
            .status_command
            .as_mut()
            .and_then(|command| command.finished(&run));
        if let Some(warning) = warning {
            self.notice(NoticeKind::Warning, warning);
        }
        if let StatusRun::Line(line) = run {
            self.status_command_line = Some(line).filter(|l| !l.trim().is_empty());
        }
    }

    /// What a status command reads on stdin (Claude Code's shape).
    fn status_input(&self) -> serde_json::Value {
        let state = self.session_state.as_ref();
        let dir = self.project_dir().display().to_string();
        serde_json::json!({
            "hook_event_name": "Status",
            "session_id": state.map(|s| s.session_id.clone()).unwrap_or_default(),
            "transcript_path": "",
            "cwd": dir,
            "model": {"id": self.status.model, "display_name": self.status.model},
            "workspace": {"current_dir": dir, "project_dir": dir},
            "version": env!("CARGO_PKG_VERSION"),
            "output_style": {"name": "default"},
            "permission_mode": self.status.mode.as_str(),
            "cost": {
                "total_cost_usd": self.status.cost_usd.unwrap_or(0.0),
                "total_tokens": self.status.tokens,
            },
        })
    }

    fn show_next_permission(&mut self) {
        if self.layers.contains(PERMISSION) {
            return;
        }
        let Some(request) = self.pending_permissions.pop_front() else {
            return;
        };
        self.permission_on_screen = Some(request.tool_use_id.clone());
        let popup = PermissionOverlay::new(request, &self.project_dir(), self.width, &self.theme);
        // Below full-screen overlays (a picker opened meanwhile stays on top).
        self.layers.push_below_full_screen(popup);
    }

    /// Another client answered question `tool_use_id`: it leaves the queue, or the screen
    /// for the next one.
    fn withdraw_permission(&mut self, tool_use_id: &str) {
        self.pending_permissions
            .retain(|request| request.tool_use_id != tool_use_id);
        if self.permission_on_screen.as_deref() == Some(tool_use_id)
            && self.layers.contains(PERMISSION)
        {
            self.permission_on_screen = None;
            self.layers.remove(PERMISSION);
            self.show_next_permission();
        }
    }

    /// The user answered the permission popup.
    pub fn answer_permission(&mut self, mut request: PermissionRequest, choice: PermissionChoice) {
        match choice {
            PermissionChoice::Allow => request.respond(PermissionAnswer::Allow),
            PermissionChoice::AllowWithMode(mode) => {
                request.respond(PermissionAnswer::AllowWithMode(mode));
            }
            PermissionChoice::AllowAlways => match request.allow_and_save(&self.project_dir()) {
                Ok(path) => {
                    if let Err(e) = self.launcher.rule_saved(&request.suggested_rule) {
                        self.notice(NoticeKind::Warning, e.to_string());
                    }
                    self.notice(
                        NoticeKind::Info,
                        format!(
                            "Saved {} to {} — robota won't ask again",
                            request.suggested_rule,
                            path.display()
                        ),
                    );
                }
                Err(e) => self.notice(
                    NoticeKind::Warning,
                    format!(
                        "Allowed {} for this session, but saving the rule failed: {e}",
                        request.suggested_rule
                    ),
                ),
            },
            PermissionChoice::Deny(feedback) => {
                if let Some(text) = &feedback {
                    self.notice(
                        NoticeKind::Info,
                        format!("Refused {}: {text}", request.tool_name),
                    );
                }
                request.respond(PermissionAnswer::Deny(feedback));
            }
            PermissionChoice::DenyAndStop => {
                self.stopped_permissions.push(request);
                self.stopped_permissions
                    .extend(self.pending_permissions.drain(..));
                self.interrupt();
            }
        }
        self.show_next_permission();
    }
}
