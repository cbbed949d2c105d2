//! What the app asks of the composition root: opening a session (new, as the command line
//! says, or resumed by id), the sessions and models to pick from, the workspace-trust
//! question, and saving the first-run setup. The CLI implements [`Launcher`]; the app
//! never sees providers, settings files or the session log.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use robota_core::Message;
use robota_core::permission::PermissionMode;
use robota_sdk::InteractiveSession;
use robota_sdk::instructions::Instructions;
use robota_sdk::settings::setup_save::{SettingsWriteError, SetupProfile};

/// Which session to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenTarget {
    /// What the command line asked for: a new session, `--continue`, or `--resume <id>`.
    FromArgs,
    /// A session picked in the app.
    Resume(String),
}

/// A started session and what the screen shows about it.
pub struct OpenedSession {
    /// The running session the app drives.
    pub session: InteractiveSession,
    /// The conversation so far (resumed sessions), rendered before anything else.
    pub history: Vec<Message>,
    /// Where a resumed log's older history is (before `history`), for the transcript to
    /// load when the user scrolls up to it.
    pub older_history: Option<robota_sdk::OlderHistory>,
    /// The model the session runs, for the status line and the welcome header.
    pub model: String,
    /// The provider type (`anthropic`, `openai`, …), for the welcome header.
    pub provider: String,
    /// The permission mode it starts in.
    pub mode: PermissionMode,
    /// The session's name, when it has one (shown in the status line).
    pub name: Option<String>,
    /// The git branch of the working directory, when it is a repository.
    pub git_branch: Option<String>,
    /// The project directory "don't ask again" rules are saved under.
    pub project_dir: PathBuf,
    /// Lines shown as notices at the top (zero-config choice, held-back settings, …).
    pub notices: Vec<String>,
    /// What its system prompt is built from: the files `/memory` edits, the user
    /// settings `/reset` moves aside.
    pub instructions: Option<Arc<Instructions>>,
}

/// Why a session could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// No provider is configured: the setup screen should run.
    #[error("{0}")]
    NeedsSetup(String),
    /// Anything else (bad settings, unknown session, …): shown, and the app exits.
    #[error("{0}")]
    Failed(String),
}

/// Why the composition root could not keep what the user chose in the app.
#[derive(Debug, thiserror::Error)]
pub enum LauncherError {
    /// Trust in the working directory could not be saved under `robota_home`.
    #[error("cannot save trust in {}: {source}", robota_home.display())]
    Trust {
        /// The robota home directory the trust file lives in.
        robota_home: PathBuf,
        /// The write that failed.
        #[source]
        source: std::io::Error,
    },
    /// A rule saved with "don't ask again" could not be recorded under `robota_home`.
    #[error("cannot record the rule in {}: {source}", robota_home.display())]
    RuleRecord {
        /// The robota home directory the rule is recorded in.
        robota_home: PathBuf,
        /// The write that failed.
        #[source]
        source: std::io::Error,
    },
    /// The setup choice cannot be used as it is (a key that is not set, a server that
    /// does not answer); the composition root's check says what to fix.
    #[error(transparent)]
    SetupCheck(Box<dyn std::error::Error + Send + Sync>),
    /// The setup choice could not be written to the user settings.
    #[error(transparent)]
    SetupSave(#[from] SettingsWriteError),
}

/// A session of this directory, for the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEntry {
    /// The session's id, which `OpenTarget::Resume` takes.
    pub id: String,
    /// Its name, or its first prompt.
    pub title: String,
    /// When its log was last written.
    pub modified: SystemTime,
    /// User and assistant messages in its log (tool calls and results are messages too).
    pub messages: usize,
    /// The git branch it began on, when known.
    pub git_branch: Option<String>,
}

/// The composition root's side of the app.
pub trait Launcher {
    /// Builds and starts a session (on the current tokio runtime).
    fn open(&mut self, target: OpenTarget) -> Result<OpenedSession, LaunchError>;
    /// Sessions of the working directory, newest first.
    fn sessions(&self) -> Vec<SessionEntry>;
    /// Models offered by `/model` for the current provider (the app adds the current one).
    fn models(&self) -> Vec<String>;
    /// What the untrusted project's settings would add, when the question must be asked.
    fn trust_question(&self) -> Option<(PathBuf, Vec<String>)>;
    /// Remembers that the working directory is trusted.
    fn trust(&mut self) -> Result<(), LauncherError>;
    /// Saves the setup screen's choice; returns the file written.
    fn save_setup(&mut self, profile: &SetupProfile) -> Result<PathBuf, LauncherError>;
    /// Remembers that the user saved `rule` for the working directory ("don't ask
    /// again"), so it applies at the next start without the trust question.
    fn rule_saved(&mut self, _rule: &str) -> Result<(), LauncherError> {
        Ok(())
    }
}
