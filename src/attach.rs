//! `robota attach <id>`: the full-screen app as a client of a background session
//! ([`robota_cli::attach`]). Its launcher opens that session and nothing else: `/resume`
//! and the setup screen belong to sessions of this process.

use std::path::PathBuf;

use robota::sdk::settings::setup_save::SetupProfile;
use robota::tui::app::{
    self, ExitTranscript, LaunchError, Launcher, LauncherError, Notifications, OpenTarget,
    OpenedSession, SessionEntry, StartOptions,
};
use robota_cli::{EXIT_ERROR, EXIT_OK};

use crate::interactive::{has_terminal, say};

/// Runs the app attached to the background session `query` names; returns the exit
/// status.
pub fn run(robota_home: PathBuf, query: String) -> u8 {
    // An unknown id fails here, before the screen changes.
    let id = match robota_cli::attach_target(&robota_home, &query) {
        Ok(id) => id,
        Err(e) => {
            eprintln!("Error: {e}");
            return EXIT_ERROR;
        }
    };
    if !has_terminal() {
        return EXIT_ERROR;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let options = StartOptions {
        prompt: None,
        pick_session: false,
        history_path: None,
        cwd,
        exit_transcript: ExitTranscript::default(),
        notifications: Notifications::default(),
        status_line: None,
        vim: false,
    };
    let launcher = Box::new(AttachLauncher {
        robota_home,
        query: id.clone(),
    });
    let runtime = match robota_cli::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let result = runtime.block_on(app::run(launcher, options));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(exit) => {
            if let Some(message) = exit.message {
                say(&mut std::io::stderr(), &message);
            }
            if exit.failed {
                return EXIT_ERROR;
            }
            say(
                &mut std::io::stdout(),
                &format!("Detached. To come back: robota attach {id}"),
            );
            EXIT_OK
        }
        Err(e) => {
            say(
                &mut std::io::stderr(),
                &format!("Error: the terminal failed: {e}"),
            );
            EXIT_ERROR
        }
    }
}

struct AttachLauncher {
    robota_home: PathBuf,
    /// The session's id.
    query: String,
}

impl Launcher for AttachLauncher {
    fn open(&mut self, target: OpenTarget) -> Result<OpenedSession, LaunchError> {
        if let OpenTarget::Resume(_) = target {
            return Err(LaunchError::Failed(
                "robota attach shows one background session; detach (Ctrl+B d) to resume another"
                    .into(),
            ));
        }
        let attached = robota_cli::attach(&self.robota_home, &self.query)
            .map_err(|e| LaunchError::Failed(e.to_string()))?;
        Ok(OpenedSession {
            session: attached.session,
            history: Vec::new(),
            older_history: None,
            model: attached.model,
            provider: String::new(),
            mode: attached.mode,
            name: attached.name,
            git_branch: robota::sdk::system_prompt::git_branch(&attached.cwd),
            project_dir: attached.cwd,
            notices: attached.notices,
            instructions: None,
        })
    }

    fn sessions(&self) -> Vec<SessionEntry> {
        Vec::new()
    }

    fn models(&self) -> Vec<String> {
        Vec::new()
    }

    fn trust_question(&self) -> Option<(PathBuf, Vec<String>)> {
        None
    }

    fn trust(&mut self) -> Result<(), LauncherError> {
        Ok(())
    }

    fn save_setup(&mut self, _profile: &SetupProfile) -> Result<PathBuf, LauncherError> {
        Err(LauncherError::SetupCheck(
            "robota attach does not set up providers; run robota on its own".into(),
        ))
    }
}
