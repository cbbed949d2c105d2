//! `robota` without `-p`: checks that there is a terminal, then runs the full-screen app
//! with a [`Launcher`] that assembles sessions from the command line (and from sessions
//! picked in the app), answers the trust question from the settings, lists this
//! directory's sessions and saves the first-run setup. It is the binary's, not the
//! command line's, so that an edit to the TUI rebuilds only the binary.

use std::io::IsTerminal;
use std::path::PathBuf;

use robota::core::{ProviderFactory, models};
use robota::sdk::assembly as paths;
use robota::sdk::settings::setup_save::{self, SetupProfile};
use robota::sdk::settings::trust::TrustStore;
use robota::sdk::settings::{LoadOptions, Settings, SettingsError};
use robota::sdk::system_prompt;
use robota::session::log::project_dir_name;
use robota::session::store::SessionStore;
use robota::tui::app::{
    self, ExitTranscript, LaunchError, Launcher, LauncherError, Notifications, OpenTarget,
    OpenedSession, SessionEntry, StartOptions, ToBackground,
};
use robota_cli::{Args, EXIT_ERROR, EXIT_OK, ProviderSetupError, assemble, check_setup};

/// Runs the TUI; returns the process exit status.
pub fn run(args: Args, providers: &'static dyn ProviderFactory) -> u8 {
    if !has_terminal() {
        return EXIT_ERROR;
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("Error: cannot read the working directory: {e}");
            return EXIT_ERROR;
        }
    };
    let project = paths::ProjectPaths::from_env(cwd.clone());
    let home = &project.robota_home;
    let options = StartOptions {
        prompt: args.prompt.clone().filter(|p| !p.trim().is_empty()),
        pick_session: args.resume.as_deref() == Some(""),
        history_path: Some(
            home.join("history")
                .join(format!("{}.jsonl", project_dir_name(&cwd))),
        ),
        cwd: cwd.clone(),
        exit_transcript: ExitTranscript::default(),
        notifications: Notifications::default(),
        status_line: None,
        vim: false,
    };
    let background_args = args.clone();
    let robota_home = project.robota_home.clone();
    let launcher = CliLauncher {
        args,
        providers,
        paths: project,
        provider: String::new(),
    };
    // Settings errors are reported when the session opens; here they mean the defaults.
    let options = match launcher.settings() {
        Ok(settings) => StartOptions {
            exit_transcript: ExitTranscript::from_setting(settings.values.exit_transcript.as_ref()),
            notifications: Notifications::from_settings(&settings.values),
            status_line: settings
                .values
                .status_line
                .clone()
                .filter(|_| !launcher.args.safe_mode),
            vim: settings.values.editor_mode.as_deref() == Some("vim"),
            ..options
        },
        Err(_) => options,
    };
    let runtime = match robota_cli::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let result = runtime.block_on(app::run(Box::new(launcher), options));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    // The terminal may be gone (its window closed): what is left to say is then lost, never
    // a panic.
    match result {
        Ok(exit) => {
            if let Some(transcript) = exit.transcript {
                say(&mut std::io::stdout(), &format!("{transcript}\n"));
            }
            if let Some(moved) = exit.to_background {
                return continue_in_background(&background_args, &robota_home, &moved);
            }
            if let Some(message) = exit.message {
                if exit.failed {
                    say(&mut std::io::stderr(), &message);
                } else {
                    say(&mut std::io::stdout(), &message);
                }
            }
            if exit.failed { EXIT_ERROR } else { EXIT_OK }
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

/// `/bg`: the closed session goes on in the background; says how to reach it.
fn continue_in_background(args: &Args, robota_home: &std::path::Path, moved: &ToBackground) -> u8 {
    match robota_cli::continue_in_background(args, robota_home, &moved.session_id, &moved.prompt) {
        Ok(id) => {
            say(
                &mut std::io::stdout(),
                &format!(
                    "Session {} goes on in the background as {id}.\nFollow it with: robota attach {id} (robota ps lists background sessions)",
                    moved.session_id
                ),
            );
            EXIT_OK
        }
        Err(code) => code,
    }
}

/// Whether stdin and stdout are a terminal; says what to do instead when not.
pub fn has_terminal() -> bool {
    let has = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !has {
        eprintln!(
            "Error: the full-screen UI needs a terminal; run headless with `robota -p \"your prompt\"` (see `robota --help`)."
        );
    }
    has
}

/// Writes a line, ignoring a stream that cannot be written (a closed terminal).
pub fn say(out: &mut impl std::io::Write, line: &str) {
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

struct CliLauncher {
    args: Args,
    /// Builds the provider of each session opened.
    providers: &'static dyn ProviderFactory,
    paths: paths::ProjectPaths,
    /// The provider type of the open session (what `/model` offers models for).
    provider: String,
}

impl CliLauncher {
    fn settings(&self) -> Result<Settings, SettingsError> {
        Settings::load(&LoadOptions {
            paths: &self.paths,
            extra: self.args.settings.as_deref(),
            interactive: true,
        })
    }
}

impl Launcher for CliLauncher {
    fn open(&mut self, target: OpenTarget) -> Result<OpenedSession, LaunchError> {
        let args = match target {
            // `--resume` without an id was the picker's job; closing it means a new session.
            OpenTarget::FromArgs if self.args.resume.as_deref() == Some("") => Args {
                resume: None,
                ..self.args.clone()
            },
            OpenTarget::FromArgs => self.args.clone(),
            OpenTarget::Resume(id) => Args {
                resume: Some(id),
                continue_session: false,
                fork_session: false,
                session_id: None,
                ..self.args.clone()
            },
        };
        let assembled =
            assemble(&args, true, self.providers).map_err(|e| match e.provider_setup() {
                Some(ProviderSetupError::NoProvider) => {
                    // A first run: the setup screen needs no error line.
                    tracing::info!("first run: {e}");
                    LaunchError::NeedsSetup(String::new())
                }
                Some(ProviderSetupError::NoKey { .. }) => LaunchError::NeedsSetup(e.to_string()),
                _ => LaunchError::Failed(e.to_string()),
            })?;
        // A later open (after /resume) starts from the arguments again, not from the
        // session they named.
        self.args.resume = None;
        self.args.continue_session = false;
        self.args.session_id = None;
        let session = assembled.session();
        self.provider = session.provider_name().to_string();
        let history = session.history().to_vec();
        let older_history = assembled.older_history().cloned();
        let mode = session.mode();
        let name = session.name().map(str::to_string);
        let mut notices: Vec<String> = assembled.notice.clone().into_iter().collect();
        notices.extend(assembled.warnings.iter().cloned());
        let model = assembled.model.clone();
        let instructions = assembled.instructions().clone();
        Ok(OpenedSession {
            session: assembled.start(),
            history,
            older_history,
            model,
            provider: self.provider.clone(),
            mode,
            name,
            git_branch: system_prompt::git_branch(&self.paths.cwd),
            project_dir: self.paths.cwd.clone(),
            notices,
            instructions: Some(instructions),
        })
    }

    fn sessions(&self) -> Vec<SessionEntry> {
        SessionStore::new(self.paths.robota_home.clone())
            .list(&self.paths.cwd)
            .into_iter()
            .map(|s| SessionEntry {
                title: s
                    .name
                    .or(s.first_prompt)
                    .map(|t| t.lines().next().unwrap_or("").to_string())
                    .unwrap_or_else(|| "(no prompt)".into()),
                id: s.id,
                modified: s.modified,
                messages: s.message_count,
                git_branch: s.git_branch,
            })
            .collect()
    }

    fn models(&self) -> Vec<String> {
        models::default_models(&self.provider)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn trust_question(&self) -> Option<(PathBuf, Vec<String>)> {
        let settings = self.settings().ok()?;
        let mut held_back = settings.held_back;
        held_back.extend(
            robota::sdk::mcp::untrusted_project_servers(&self.paths)
                .map(|servers| format!("the MCP servers of {servers}")),
        );
        (!settings.trusted && !held_back.is_empty()).then(|| (self.paths.cwd.clone(), held_back))
    }

    fn trust(&mut self) -> Result<(), LauncherError> {
        TrustStore::load(&self.paths.robota_home)
            .trust(&self.paths.cwd)
            .map_err(|source| LauncherError::Trust {
                robota_home: self.paths.robota_home.clone(),
                source,
            })
    }

    fn save_setup(&mut self, profile: &SetupProfile) -> Result<PathBuf, LauncherError> {
        check_setup(profile).map_err(|e| LauncherError::SetupCheck(e.into()))?;
        Ok(setup_save::save_setup(&self.paths.robota_home, profile)?)
    }

    fn rule_saved(&mut self, rule: &str) -> Result<(), LauncherError> {
        TrustStore::load(&self.paths.robota_home)
            .remember_saved_rule(&self.paths.cwd, rule)
            .map_err(|source| LauncherError::RuleRecord {
                robota_home: self.paths.robota_home.clone(),
                source,
            })
    }
}
