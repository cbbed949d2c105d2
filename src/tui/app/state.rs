//! The app's state and how it changes: the start sequence (trust question, setup screen,
//! session picker, then the session), session events into the transcript and the status
//! line, permission requests into popups, and what the composer's actions do (prompts,
//! the queue, slash commands, `!` commands). Keys are routed in `keys.rs`, drawing is in
//! `draw.rs`; nothing here touches the terminal.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use tokio::sync::mpsc;

use super::clipboard;
use super::launcher::{LaunchError, Launcher, OpenTarget, OpenedSession};
use super::overlay::Overlays;
use super::permission::{PERMISSION, PermissionChoice, PermissionOverlay};
use super::picker::{Picker, PickerItem, PickerOverlay, PickerPurpose, age_label};
use super::setup::SetupScreen;
use super::trust::TrustPrompt;
use crate::core::models;
use crate::core::permission::PermissionMode;
use crate::sdk::{InteractiveSession, PermissionAnswer, PermissionRequest, SessionEvent, TurnEnd};
use crate::tui::completion::{FileIndexer, PromptInput, builtin_commands};
use crate::tui::composer::{Composer, PromptHistory};
use crate::tui::status::StatusLine;
use crate::tui::theme::Theme;
use crate::tui::transcript::{Cell, NoticeKind, Transcript};

/// How the app was asked to start.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// `robota "prompt"`: sent as soon as the session is open.
    pub prompt: Option<String>,
    /// `robota --resume` without an id: open the session picker first.
    pub pick_session: bool,
    /// Where prompt history is kept (one file per project).
    pub history_path: Option<PathBuf>,
    pub cwd: PathBuf,
}

/// Where the start sequence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Trust,
    Open,
    Running,
}

/// The running session.
pub struct Live {
    pub handle: InteractiveSession,
    pub project_dir: PathBuf,
}

/// The whole app state.
pub struct App {
    pub theme: Theme,
    pub transcript: Transcript,
    pub input: PromptInput,
    pub status: StatusLine,
    /// The overlays above the base screen (popups, pickers, full-screen prompts).
    pub layers: Overlays,
    pub live: Option<Live>,
    pub events: Option<mpsc::UnboundedReceiver<SessionEvent>>,
    /// Permission requests waiting behind the one on screen.
    pending_permissions: VecDeque<PermissionRequest>,
    /// A prompt typed while a turn runs; sent when it ends.
    pub queued: Option<String>,
    /// The last answer, for `/copy`.
    last_answer: String,
    /// When Ctrl+C was pressed on an idle, empty composer (a second press exits).
    pub ctrl_c_at: Option<Instant>,
    /// A one-line hint over the status line ("Press Ctrl+C again to exit").
    pub hint: Option<String>,
    /// Bytes to write to the terminal outside a frame (OSC 52 copies).
    pub outbox: Vec<String>,
    pub quit: bool,
    /// Sessions switched away from, for the loop to close (their end hooks run).
    pub closing: Vec<InteractiveSession>,
    /// Printed after the terminal is restored.
    pub farewell: Option<String>,
    launcher: Box<dyn Launcher + Send>,
    start: Start,
    options: StartOptions,
    /// The screen width at the last draw (permission previews are drawn for it).
    pub width: u16,
}

impl App {
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
            queued: None,
            last_answer: String::new(),
            ctrl_c_at: None,
            hint: None,
            outbox: Vec::new(),
            quit: false,
            closing: Vec::new(),
            farewell: None,
            launcher,
            start: Start::Trust,
            options,
            width: 80,
        }
    }

    /// The open session's project directory (the working directory before one opens).
    fn project_dir(&self) -> PathBuf {
        self.live
            .as_ref()
            .map_or_else(|| self.options.cwd.clone(), |l| l.project_dir.clone())
    }

    pub fn is_busy(&self) -> bool {
        self.status.busy_since.is_some()
    }

    fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
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
                let mut setup = SetupScreen::new(self.theme.color);
                if self.start != Start::Running && self.layers.is_empty() {
                    tracing::info!("first run: {message}");
                } else {
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
        self.transcript.clear();
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
            .find(|m| m.role == crate::core::Role::Assistant && !m.text().is_empty())
            .map(|m| m.text())
            .unwrap_or_default();
        self.live = Some(Live {
            handle: opened.session,
            project_dir: opened.project_dir,
        });
    }

    /// Takes the session off screen (to resume another); returns it for closing.
    pub fn take_session(&mut self) -> Option<InteractiveSession> {
        self.events = None;
        self.pending_permissions.clear();
        self.layers.remove(PERMISSION);
        self.queued = None;
        self.live.take().map(|live| live.handle)
    }

    // ----- session events -------------------------------------------------------------

    /// One event from the session.
    pub fn on_session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::PermissionRequest(request) => {
                self.pending_permissions.push_back(request);
                self.show_next_permission();
                return;
            }
            SessionEvent::TurnStarted { .. } => {
                self.status.busy_since = Some(Instant::now());
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
            SessionEvent::Usage {
                ref usage,
                cost_usd,
                ..
            } => {
                self.status.tokens += usage.input_tokens
                    + usage.output_tokens
                    + usage.cache_read_input_tokens
                    + usage.cache_creation_input_tokens;
                match cost_usd {
                    Some(c) => *self.status.cost_usd.get_or_insert(0.0) += c,
                    None => self.status.cost_unknown = true,
                }
            }
            SessionEvent::Context(state) => {
                self.status.context = Some(state);
            }
            SessionEvent::TurnComplete {
                ref end,
                ref result,
                ..
            } => {
                self.status.busy_since = None;
                self.status.retry = None;
                if !result.is_empty() {
                    self.last_answer = result.clone();
                }
                self.transcript.apply(&event);
                let interrupted = *end == TurnEnd::Interrupted;
                if let Some(queued) = self.queued.take() {
                    if interrupted {
                        // An interrupt gives the queued prompt back instead of sending it.
                        self.restore_to_composer(&queued);
                    } else {
                        self.submit(queued);
                    }
                }
                return;
            }
            _ => {}
        }
        self.transcript.apply(&event);
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
            PermissionChoice::AllowAlways => match request.allow_and_save(&self.project_dir()) {
                Ok(path) => self.notice(
                    NoticeKind::Info,
                    format!(
                        "Saved {} to {} — robota won't ask again",
                        request.suggested_rule,
                        path.display()
                    ),
                ),
                Err(e) => self.notice(
                    NoticeKind::Warning,
                    format!(
                        "Allowed {} for this session, but saving the rule failed: {e}",
                        request.suggested_rule
                    ),
                ),
            },
            PermissionChoice::Deny(feedback) => {
                request.respond(PermissionAnswer::Deny(feedback));
            }
        }
        self.show_next_permission();
    }

    // ----- composer actions ------------------------------------------------------------

    /// Sends a prompt, or queues it behind the running turn.
    pub fn submit(&mut self, prompt: String) {
        if prompt.trim().is_empty() {
            return;
        }
        let Some(live) = &self.live else {
            return;
        };
        if self.is_busy() {
            self.queued = Some(match self.queued.take() {
                Some(before) => format!("{before}\n{prompt}"),
                None => prompt,
            });
            return;
        }
        live.handle.submit(prompt);
        // Busy from now on, so a second Enter before TurnStarted arrives queues.
        self.status.busy_since = Some(Instant::now());
        self.transcript.scroll_to_bottom();
    }

    /// Backspace on an empty composer drops the queued prompt back into it.
    pub fn unqueue(&mut self) -> bool {
        match self.queued.take() {
            Some(queued) => {
                self.restore_to_composer(&queued);
                true
            }
            None => false,
        }
    }

    fn restore_to_composer(&mut self, text: &str) {
        let composer = self.input.composer_mut();
        if composer.is_empty() {
            composer.set_text(text);
        }
    }

    /// Interrupts the running turn.
    pub fn interrupt(&mut self) {
        if let Some(live) = &self.live {
            live.handle.abort();
        }
    }

    /// `!command`.
    pub fn run_shell(&mut self, command: String) {
        if let Some(live) = &self.live {
            live.handle.run_shell(command);
        }
    }

    /// Cycles the permission mode (Shift+Tab).
    pub fn cycle_mode(&mut self) {
        let all = PermissionMode::ALL;
        let at = all.iter().position(|m| *m == self.status.mode).unwrap_or(0);
        let next = all[(at + 1) % all.len()];
        self.status.mode = next;
        if let Some(live) = &self.live {
            live.handle.set_mode(next);
        }
    }

    /// A slash command: the app's own (pickers, clipboard, exit) or the session's.
    pub fn run_command(&mut self, name: &str, args: &str) {
        match name {
            "exit" | "quit" => self.quit = true,
            "resume" if args.is_empty() => self.open_session_picker(),
            "resume" => self.resume(args.to_string()),
            "model" if args.is_empty() => self.open_model_picker(),
            "copy" => self.copy(args),
            _ => self.session_command(name, args),
        }
    }

    fn session_command(&mut self, name: &str, args: &str) {
        let Some(live) = &self.live else {
            return;
        };
        if self.is_busy() && name != "help" {
            self.notice(
                NoticeKind::Warning,
                format!("/{name} cannot run while a turn is in progress"),
            );
            return;
        }
        live.handle.execute_command(name, args);
        match name {
            "clear" => self.transcript.clear(),
            "model" => {
                self.status.model = args.to_string();
                self.status.context = None;
            }
            "mode" | "permissions" => {
                if let Some(mode) = PermissionMode::parse(args) {
                    self.status.mode = mode;
                }
            }
            "rename" if !args.is_empty() => self.status.session_name = Some(args.to_string()),
            _ => {}
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
            Ok(text) => {
                let chars = text.chars().count();
                self.outbox.push(clipboard::osc52(&text));
                self.notice(
                    NoticeKind::Info,
                    format!("Copied {chars} characters to the clipboard"),
                );
            }
            Err(e) => self.notice(NoticeKind::Warning, e),
        }
    }

    fn open_session_picker(&mut self) {
        let now = SystemTime::now();
        let items: Vec<PickerItem> = self
            .launcher
            .sessions()
            .into_iter()
            .map(|s| PickerItem {
                detail: format!(
                    "{} · {} turn{}",
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
            PickerPurpose::Model => self.session_command("model", &id),
            PickerPurpose::Session => self.resume(id),
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
                setup.set_error(e);
                self.layers.push(setup);
            }
        }
    }
}
