//! The app's state and how it changes: the start sequence (trust question, setup screen,
//! session picker, then the session), session events into the transcript and the status
//! line, permission requests into popups, and what the composer's actions do (prompts,
//! the queue, slash commands, `!` commands). Keys are routed in `keys.rs`, drawing is in
//! `draw.rs`; nothing here touches the terminal.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use tokio::sync::mpsc;

use super::clipboard;
use super::launcher::{LaunchError, Launcher, OpenTarget, OpenedSession};
use super::overlay::Overlays;
use super::permission::{PERMISSION, PermissionChoice, PermissionOverlay};
use super::picker::{Picker, PickerItem, PickerOverlay, PickerPurpose, age_label};
use super::setup::SetupScreen;
use super::trust::TrustPrompt;
use crate::completion::{FileIndexer, PromptInput, builtin_commands, command_items};
use crate::composer::{Composer, HistoryEntry, PromptHistory};
use crate::status::StatusLine;
use crate::theme::Theme;
use crate::transcript::{Cell, NoticeKind, Transcript, Welcome};
use robota_core::message::ImageSource;
use robota_core::models;
use robota_sdk::commands::CommandScope;
use robota_sdk::instructions::Instructions;
use robota_sdk::{
    InteractiveSession, PermissionAnswer, PermissionRequest, SessionEvent, SessionState,
    Submission, SubmissionId,
};

use super::helpers::{HelperDone, Helpers};
use super::options::{ExitTranscript, StartOptions};
use super::status_command::{StatusCommand, StatusRun};

/// What `robota --resume` says when this directory has no session to resume.
const NOTHING_TO_RESUME_AT_START: &str =
    "No earlier sessions in this directory to resume; this is a new session.";

/// Where the start sequence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Trust,
    Open,
    Running,
}

/// The running session.
pub struct Live {
    /// The session's handle, to send prompts and answers to.
    pub handle: InteractiveSession,
    /// The project directory "don't ask again" rules are saved under.
    pub project_dir: PathBuf,
    /// What the session's system prompt is built from (the files `/memory` edits).
    pub instructions: Option<Arc<Instructions>>,
}

/// The whole app state.
pub struct App {
    /// The colours and styles everything is drawn with.
    pub theme: Theme,
    /// The conversation on screen.
    pub transcript: Transcript,
    /// The composer and its completion popups.
    pub input: PromptInput,
    /// What the status line shows.
    pub status: StatusLine,
    /// The overlays above the base screen (popups, pickers, full-screen prompts).
    pub layers: Overlays,
    /// The open session; `None` before one is open and while switching sessions.
    pub live: Option<Live>,
    /// The open session's events, until the loop takes them to listen to.
    pub events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    /// Permission requests waiting behind the one on screen.
    pending_permissions: VecDeque<PermissionRequest>,
    /// Questions left unanswered by Esc: held until the turn ends, so the session sees the
    /// interrupt (not a refusal it could go on from).
    stopped_permissions: Vec<PermissionRequest>,
    /// The session's last state (model, mode, usage, queue…), as it sent it.
    session_state: Option<SessionState>,
    /// The running prompt's submission, whose result is the answer `/copy` takes.
    running_prompt: Option<SubmissionId>,
    /// The images of prompts with images that wait in the queue, so a prompt taken back
    /// comes back with them.
    queued_images: Vec<(SubmissionId, Vec<ImageSource>)>,
    /// The last answer, for `/copy`.
    last_answer: String,
    /// When Ctrl+C was pressed on an idle, empty composer (a second press exits).
    pub ctrl_c_at: Option<Instant>,
    /// When Esc was pressed on an idle, empty composer (a second press opens rewind).
    pub esc_at: Option<Instant>,
    /// The prompts the rewind picker shows, and the one chosen (`rewind.rs`).
    pub(super) rewind_points: Vec<robota_sdk::RewindPoint>,
    pub(super) rewind_target: Option<String>,
    /// Whether the terminal has focus (focus events; assumed until told otherwise).
    pub focused: bool,
    status_command: Option<StatusCommand>,
    /// The entries a Ctrl+R search offers, by picker id.
    history_search: Vec<HistoryEntry>,
    /// The last line the status command printed.
    pub status_command_line: Option<String>,
    /// A one-line hint over the status line ("Press Ctrl+C again to exit").
    pub hint: Option<String>,
    /// Bytes to write to the terminal outside a frame (OSC 52 copies).
    pub outbox: Vec<String>,
    /// Where helper programs run off the loop report (`helpers.rs`).
    pub helpers: Helpers,
    pub(crate) quit: bool,
    /// Sessions switched away from, for the loop to close (their end hooks run).
    pub closing: Vec<InteractiveSession>,
    /// Printed after the terminal is restored.
    pub farewell: Option<String>,
    /// An instruction file `/memory` wants opened in the editor (the loop does it).
    pub(super) editor_request: Option<PathBuf>,
    launcher: Box<dyn Launcher + Send>,
    start: Start,
    options: StartOptions,
    /// The screen width at the last draw (permission previews are drawn for it).
    pub width: u16,
    /// The transcript search prompt, while open (`transcript_search.rs`).
    pub search: Option<super::transcript_search::SearchPrompt>,
}

impl App {
    /// The app before its start sequence (trust prompt, opening the session) runs.
    pub fn new(launcher: Box<dyn Launcher + Send>, options: StartOptions, theme: Theme) -> Self {
        let history = options
            .history_path
            .as_ref()
            .and_then(|path| PromptHistory::load(path).ok())
            .unwrap_or_else(PromptHistory::in_memory);
        let mut input = PromptInput::new(
            Composer::new(history),
            builtin_commands(),
            FileIndexer::new(options.cwd.clone()),
        );
        input.set_colors(theme.color);
        input.composer_mut().set_vim(options.vim);
        App {
            theme,
            transcript: Transcript::new(theme),
            input,
            status: StatusLine {
                colors: theme.color,
                ..StatusLine::default()
            },
            layers: Overlays::default(),
            live: None,
            events: None,
            pending_permissions: VecDeque::new(),
            stopped_permissions: Vec::new(),
            session_state: None,
            running_prompt: None,
            queued_images: Vec::new(),
            last_answer: String::new(),
            ctrl_c_at: None,
            esc_at: None,
            rewind_points: Vec::new(),
            rewind_target: None,
            focused: true,
            status_command: StatusCommand::from_setting(options.status_line.as_ref()),
            status_command_line: None,
            history_search: Vec::new(),
            hint: None,
            outbox: Vec::new(),
            helpers: Helpers::default(),
            quit: false,
            closing: Vec::new(),
            farewell: None,
            editor_request: None,
            launcher,
            start: Start::Trust,
            options,
            width: 80,
            search: None,
        }
    }

    /// The open session's project directory (the working directory before one opens).
    pub(super) fn project_dir(&self) -> PathBuf {
        self.live
            .as_ref()
            .map_or_else(|| self.options.cwd.clone(), |l| l.project_dir.clone())
    }

    /// The open session's id as its last state said (`/clear` starts a new one).
    pub fn session_id(&self) -> Option<String> {
        let live = self.live.as_ref()?;
        Some(
            self.session_state
                .as_ref()
                .map_or_else(|| live.handle.id().to_string(), |s| s.session_id.clone()),
        )
    }

    /// The session's queue as shown above the composer, one submission a line (from its
    /// last state).
    pub fn queued(&self) -> Option<String> {
        let queue = &self.session_state.as_ref()?.queue;
        (!queue.is_empty()).then(|| {
            queue
                .iter()
                .map(|q| q.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// The newest prompt sent into the running turn, until the model gets it (from the
    /// session's last state).
    pub fn steering(&self) -> Option<&str> {
        let steering = &self.session_state.as_ref()?.steering;
        steering.last().map(|s| s.text.as_str())
    }

    /// Whether the session runs a submission now (as its last state said).
    pub fn is_busy(&self) -> bool {
        self.session_state
            .as_ref()
            .is_some_and(|s| s.running.is_some())
    }

    pub(super) fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.transcript.push(Cell::Notice {
            kind,
            text: text.into(),
        });
    }

    /// Runs the start sequence up to the next question (or the open session).
    pub fn advance_start(&mut self) {
        if self.start == Start::Trust {
            self.start = Start::Open;
            if let Some((dir, held_back)) = self.launcher.trust_question() {
                self.layers
                    .push(TrustPrompt::new(&dir, held_back, self.theme.color));
                return;
            }
        }
        if self.start == Start::Open {
            if self.options.pick_session {
                self.options.pick_session = false;
                self.open_session_picker();
                if !self.layers.is_empty() {
                    return;
                }
                // Nothing to resume: the new session's screen says so (the picker's notice
                // went with the screen it replaced).
                self.open(OpenTarget::FromArgs);
                if self.live.is_some() {
                    self.notice(NoticeKind::Info, NOTHING_TO_RESUME_AT_START);
                }
                return;
            }
            self.open(OpenTarget::FromArgs);
        }
    }

    /// Opens a session and shows it; a missing provider opens the setup screen.
    fn open(&mut self, target: OpenTarget) {
        match self.launcher.open(target) {
            Ok(opened) => {
                self.start = Start::Running;
                self.show_session(opened);
                if let Some(prompt) = self.options.prompt.take() {
                    self.submit(prompt);
                }
            }
            Err(LaunchError::NeedsSetup(message)) => {
                // An empty message is a first run; else what is wrong with the saved
                // provider (a key variable that is not set…).
                let mut setup = SetupScreen::new(self.theme.color);
                if !message.is_empty() {
                    setup.set_error(message);
                }
                self.layers.push(setup);
            }
            Err(LaunchError::Failed(message)) => {
                if self.live.is_some() {
                    self.notice(NoticeKind::Error, message);
                } else {
                    self.farewell = Some(format!("Error: {message}"));
                    self.quit = true;
                }
            }
        }
    }

    /// Puts an opened session on screen: its history, status and event stream.
    fn show_session(&mut self, mut opened: OpenedSession) {
        self.events = opened.session.events();
        self.input
            .set_commands(command_items(opened.session.command_entries()));
        self.transcript.clear();
        if opened.history.is_empty() {
            self.transcript.push(Cell::Welcome(Welcome {
                model: opened.model.clone(),
                provider: opened.provider.clone(),
                cwd: opened.project_dir.display().to_string(),
            }));
        }
        self.transcript.replay(&opened.history);
        for line in std::mem::take(&mut opened.notices) {
            self.notice(NoticeKind::Info, line);
        }
        self.status.model = opened.model;
        self.status.mode = opened.mode;
        self.status.session_name = opened.name;
        self.status.git_branch = opened.git_branch;
        self.status.context = None;
        self.status.busy_since = None;
        self.status.retry = None;
        self.last_answer = opened
            .history
            .iter()
            .rev()
            .find(|m| m.role == robota_core::Role::Assistant && !m.text().is_empty())
            .map(|m| m.text())
            .unwrap_or_default();
        self.live = Some(Live {
            handle: opened.session,
            project_dir: opened.project_dir,
            instructions: opened.instructions,
        });
    }

    /// What the open session's system prompt is built from.
    pub(super) fn instructions(&self) -> Option<Arc<Instructions>> {
        self.live.as_ref().and_then(|l| l.instructions.clone())
    }

    /// Takes the session off screen (to resume another); returns it for closing.
    pub fn take_session(&mut self) -> Option<InteractiveSession> {
        self.events = None;
        self.pending_permissions.clear();
        self.stopped_permissions.clear();
        self.layers.remove(PERMISSION);
        self.session_state = None;
        self.running_prompt = None;
        self.queued_images.clear();
        self.live.take().map(|live| live.handle)
    }

    // ----- session events -------------------------------------------------------------

    /// One event from the session.
    pub fn on_session_event(&mut self, mut event: SessionEvent) {
        // `/help` here also lists the keys of this UI.
        if let SessionEvent::CommandOutput {
            command, output, ..
        } = &mut event
            && command == "help"
        {
            output.push_str("\n\n");
            output.push_str(&super::shortcuts::shortcuts_text());
        }
        if let SessionEvent::SubmissionStarted { id, .. } = &event {
            self.queued_images.retain(|(queued, _)| queued != id);
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
        let popup = PermissionOverlay::new(request, &self.project_dir(), self.width, &self.theme);
        // Below full-screen overlays (a picker opened meanwhile stays on top).
        self.layers.push_below_full_screen(popup);
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

    // ----- composer actions ------------------------------------------------------------

    /// Sends typed text to the session (which runs it now or queues it); commands only
    /// an interactive client can run (pickers, clipboard, leaving) run here.
    pub fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        let images = self.input.composer_mut().take_submitted_images();
        if !images.is_empty() {
            if let Some(live) = &self.live {
                let id = live
                    .handle
                    .submit(Submission::with_images(text, images.clone()));
                self.queued_images.push((id, images));
            }
            return;
        }
        match Submission::parse(&text) {
            Submission::Command { spec, args } if spec.scope == CommandScope::Client => {
                self.run_client_command(spec.name, &args);
            }
            Submission::Command { spec, args } if spec.name == "model" && args.is_empty() => {
                self.open_model_picker();
            }
            submission => {
                if let Some(live) = &self.live {
                    live.handle.submit(submission);
                }
            }
        }
    }

    /// Tab while a turn runs: the prompt goes with the model's next call.
    pub fn steer(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        if let Some(live) = &self.live {
            live.handle.steer(text);
        }
    }

    /// Backspace on an empty composer takes the newest queued submission back into it.
    pub fn unqueue(&mut self) -> bool {
        match (&self.live, self.queued()) {
            (Some(live), Some(_)) => {
                live.handle.take_back_queued();
                true
            }
            _ => false,
        }
    }

    /// Gives text back to the user: into an empty composer, or after what is typed.
    /// Interrupts the running turn.
    pub fn interrupt(&mut self) {
        if let Some(live) = &self.live {
            live.handle.abort();
        }
    }

    /// Ctrl+B: the Bash commands running now go on in the background; whether one ran.
    pub fn send_to_background(&mut self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|live| live.handle.send_to_background())
    }

    /// Background jobs still running, for the status line.
    pub fn running_background_jobs(&self) -> usize {
        self.live
            .as_ref()
            .map_or(0, |live| live.handle.running_background_jobs())
    }

    /// `!command`.
    pub fn run_shell(&mut self, command: String) {
        if let Some(live) = &self.live {
            live.handle.run_shell(command);
        }
    }

    /// Cycles the permission mode (Shift+Tab).
    pub fn cycle_mode(&mut self) {
        if let Some(live) = &self.live {
            live.handle.cycle_mode();
        }
    }

    /// A command of the app's own: pickers, the clipboard, leaving.
    fn run_client_command(&mut self, name: &str, args: &str) {
        match name {
            "exit" => self.quit = true,
            "resume" if args.is_empty() => self.open_session_picker(),
            "resume" => self.resume(args.to_string()),
            "copy" => self.copy(args),
            "memory" => self.open_memory(args),
            "vim" => self.toggle_vim(),
            "reset" => self.reset_settings(args),
            other => self.notice(
                NoticeKind::Warning,
                format!("/{other} is not available here"),
            ),
        }
    }

    /// `/vim`: vim key bindings on or off in the composer, saved as `editorMode` in the
    /// user settings so the next start has them too.
    fn toggle_vim(&mut self) {
        let on = !self.input.composer().vim_enabled();
        self.input.composer_mut().set_vim(on);
        let value = if on { "vim" } else { "normal" };
        let saved = match self.instructions() {
            Some(instructions) => robota_sdk::settings::setup_save::set_user_setting(
                &instructions.paths.robota_home,
                "editorMode",
                Some(serde_json::Value::String(value.into())),
            )
            .map(|_| ())
            .map_err(|e| e.to_string()),
            None => Err("no session is open".to_string()),
        };
        let state = if on {
            "Vim mode on: Esc for normal mode, i to insert."
        } else {
            "Vim mode off."
        };
        match saved {
            Ok(()) => self.notice(NoticeKind::Info, state),
            Err(e) => self.notice(
                NoticeKind::Warning,
                format!("{state} It was not saved in your settings: {e}"),
            ),
        }
    }

    fn copy(&mut self, args: &str) {
        let block = match args.trim() {
            "" => None,
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    self.notice(NoticeKind::Warning, "Usage: /copy [code block number]");
                    return;
                }
            },
        };
        if self.last_answer.is_empty() {
            self.notice(NoticeKind::Warning, "There is no answer to copy yet.");
            return;
        }
        match clipboard::copy_text(&self.last_answer, block) {
            Ok(text) => self.start_copy(text),
            Err(e) => self.notice(NoticeKind::Warning, e.to_string()),
        }
    }

    /// Gets the user's attention (OSC 9 or the bell) when the terminal is not focused.
    fn notify(&mut self, message: &str) {
        if !self.focused
            && let Some(sequence) = self.options.notifications.sequence(message)
        {
            self.outbox.push(sequence);
        }
    }

    /// The text left in the scrollback on leaving, as `exit_transcript` asks.
    pub fn exit_transcript(&self) -> Option<String> {
        let text = match self.options.exit_transcript {
            ExitTranscript::Nothing => return None,
            ExitTranscript::LastAnswer => self.last_answer.trim().to_string(),
            ExitTranscript::Conversation => {
                let parts: Vec<String> = self
                    .transcript
                    .cells()
                    .filter_map(|cell| match cell {
                        Cell::UserPrompt(prompt) => Some(format!("> {}", prompt.trim())),
                        Cell::Assistant(answer) => Some(answer.source().trim().to_string()),
                        _ => None,
                    })
                    .filter(|part| !part.is_empty())
                    .collect();
                parts.join("\n\n")
            }
        };
        (!text.is_empty()).then_some(text)
    }

    /// Ctrl+R: a picker over the prompts of this project (newest first), then those of
    /// the other projects; the chosen one goes into the composer.
    pub fn open_history_search(&mut self) {
        let mut entries: Vec<(HistoryEntry, &'static str)> = Vec::new();
        let here = self.input.composer().history();
        entries.extend(
            (0..here.len())
                .filter_map(|back| here.get_back(back).cloned())
                .map(|e| (e, "this project")),
        );
        let this_file = self.options.history_path.clone();
        if let Some(dir) = this_file.as_deref().and_then(std::path::Path::parent) {
            let mut others: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| Some(path.as_path()) != this_file.as_deref())
                .collect();
            others.sort();
            for path in others {
                if let Ok(history) = PromptHistory::load(&path) {
                    entries.extend(
                        (0..history.len())
                            .filter_map(|back| history.get_back(back).cloned())
                            .map(|e| (e, "another project")),
                    );
                }
            }
        }
        if entries.is_empty() {
            self.notice(NoticeKind::Info, "No prompts in the history yet.");
            return;
        }
        let items = entries
            .iter()
            .enumerate()
            .map(|(index, (entry, place))| PickerItem {
                id: index.to_string(),
                title: entry.display.replace('\n', " ⏎ "),
                detail: (*place).to_string(),
            })
            .collect();
        self.history_search = entries.into_iter().map(|(entry, _)| entry).collect();
        self.layers.push(PickerOverlay {
            picker: Picker::new("Search the prompt history", items, self.theme.color),
            purpose: PickerPurpose::History,
        });
    }

    fn open_session_picker(&mut self) {
        let now = SystemTime::now();
        let items: Vec<PickerItem> = self
            .launcher
            .sessions()
            .into_iter()
            .map(|s| PickerItem {
                detail: format!(
                    "{}{} · {} turn{}",
                    s.git_branch.map(|b| format!("{b} · ")).unwrap_or_default(),
                    age_label(s.modified, now),
                    s.turns,
                    if s.turns == 1 { "" } else { "s" }
                ),
                id: s.id,
                title: s.title,
            })
            .collect();
        if items.is_empty() {
            self.notice(
                NoticeKind::Info,
                "No earlier sessions in this directory to resume.",
            );
            return;
        }
        self.layers.push(PickerOverlay {
            picker: Picker::new("Resume a session", items, self.theme.color),
            purpose: PickerPurpose::Session,
        });
    }

    fn open_model_picker(&mut self) {
        let mut ids = self.launcher.models();
        if !ids.contains(&self.status.model) {
            ids.insert(0, self.status.model.clone());
        }
        let items: Vec<PickerItem> = ids
            .into_iter()
            .map(|id| {
                let info = models::lookup(&id);
                let current = if id == self.status.model {
                    " · current"
                } else {
                    ""
                };
                PickerItem {
                    title: id.clone(),
                    detail: format!("{}K context{current}", info.context_window / 1000),
                    id,
                }
            })
            .collect();
        self.layers.push(PickerOverlay {
            picker: Picker::new("Choose a model", items, self.theme.color),
            purpose: PickerPurpose::Model,
        });
    }

    /// A picker's choice.
    pub fn picked(&mut self, purpose: PickerPurpose, id: String) {
        match purpose {
            PickerPurpose::Model => self.submit(format!("/model {id}")),
            PickerPurpose::Session => self.resume(id),
            PickerPurpose::RewindPoint => self.rewind_point_picked(id),
            PickerPurpose::RewindAction => self.rewind_action_picked(&id),
            PickerPurpose::History => {
                let chosen = id
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| self.history_search.get(index).cloned());
                if let Some(entry) = chosen {
                    self.input.composer_mut().recall(&entry);
                    self.input.refresh_completion();
                }
                self.history_search.clear();
            }
        }
    }

    /// A picker was closed without a choice; at start that means a new session.
    pub fn picker_cancelled(&mut self) {
        if self.start != Start::Running {
            self.open(OpenTarget::FromArgs);
        }
    }

    /// Switches to session `id`. The old session is handed to `closing` by the loop.
    fn resume(&mut self, id: String) {
        if self.is_busy() {
            self.notice(
                NoticeKind::Warning,
                "/resume cannot run while a turn is in progress",
            );
            return;
        }
        let old = self.take_session();
        self.closing.extend(old);
        self.open(OpenTarget::Resume(id));
    }

    /// The trust question was answered.
    pub fn trust_answered(&mut self, trust: bool) {
        if trust && let Err(e) = self.launcher.trust() {
            self.notice(NoticeKind::Warning, format!("Could not save trust: {e}"));
        }
        self.advance_start();
    }

    /// The setup screen finished (`None`: cancelled).
    pub fn setup_done(&mut self, choice: Option<super::setup::SetupChoice>) {
        let Some(choice) = choice else {
            self.farewell =
                Some("No provider was configured; run robota again to set one up.".into());
            self.quit = true;
            return;
        };
        match self.launcher.save_setup(&choice.to_profile()) {
            Ok(path) => {
                self.notice(
                    NoticeKind::Info,
                    format!("Saved your provider settings to {}", path.display()),
                );
                self.open(OpenTarget::FromArgs);
            }
            Err(e) => {
                let mut setup = SetupScreen::new(self.theme.color);
                setup.set_error(e.to_string());
                self.layers.push(setup);
            }
        }
    }
}
