//! The app's state: `App`, the open session (`Live`) and the start sequence (trust
//! question, setup screen, session picker, then the session; switching sessions). How the
//! state changes is split by cause: `events` (session events, permission requests),
//! `actions` (what the composer's actions do) and `pickers` (the pickers and their
//! choices). Keys are routed in `keys.rs`, drawing is in `draw.rs`; nothing here touches
//! the terminal.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::launcher::{LaunchError, Launcher, OpenTarget, OpenedSession};
use super::overlay::Overlays;
use super::permission::PERMISSION;
use super::setup::SetupScreen;
use super::trust::TrustPrompt;
use crate::completion::{FileIndexer, PromptInput, builtin_commands, command_items};
use crate::composer::{Composer, HistoryEntry, PromptHistory};
use crate::status::StatusLine;
use crate::theme::Theme;
use crate::transcript::{Cell, NoticeKind, Transcript, Welcome};
use robota_core::message::ImageSource;
use robota_sdk::instructions::Instructions;
use robota_sdk::{InteractiveSession, PermissionRequest, SessionEvent, SessionState, SubmissionId};

use super::helpers::Helpers;
use super::options::StartOptions;
use super::status_command::StatusCommand;

mod actions;
mod events;
mod pickers;

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
    /// The resumed log's older history, shown above the transcript on demand (again
    /// after a rewind redraws it).
    pub older_history: Option<robota_sdk::OlderHistory>,
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
    /// The `tool_use_id` of the question last put on screen (another client of a remote
    /// session may answer it first).
    permission_on_screen: Option<String>,
    /// The session's last state (model, mode, usage, queue…), as it sent it.
    session_state: Option<SessionState>,
    /// The running prompt's submission, whose result is the answer `/copy` takes.
    running_prompt: Option<SubmissionId>,
    /// A `/export` with no file: its transcript goes to the clipboard, not the screen.
    exporting: Option<SubmissionId>,
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
    /// Ctrl+B was pressed in an attached client: a `d` next detaches.
    pub(super) detach_prefix: bool,
    /// `/bg` asked to go on in the background, with this next prompt (may be empty).
    pub background_prompt: Option<String>,
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
            permission_on_screen: None,
            session_state: None,
            running_prompt: None,
            exporting: None,
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
            detach_prefix: false,
            background_prompt: None,
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
        self.transcript
            .set_older_history(opened.older_history.clone());
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
            older_history: opened.older_history,
        });
    }

    /// What the open session's system prompt is built from.
    pub(super) fn instructions(&self) -> Option<Arc<Instructions>> {
        self.live.as_ref().and_then(|l| l.instructions.clone())
    }

    /// Whether the open session runs elsewhere (`robota attach`): closing detaches.
    pub fn is_attached(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.handle.is_remote())
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
