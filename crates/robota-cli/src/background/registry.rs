//! Where the background sessions live and what each one is doing. Each has a directory
//! `$ROBOTA_HOME/background/<id>/` (mode 0700) holding `launch.json` (how to start it),
//! `state.json` (what `robota ps` shows, written whole and renamed into place),
//! `events.jsonl` (every stream-json line the session wrote, and each prompt sent to it)
//! and `control.sock` (its control socket while it runs). A session is running only
//! while its socket answers: one left behind by a killed process or a machine restart is
//! stale, and the session shows as failed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a background session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Its process is starting the session.
    Starting,
    /// A prompt is being answered.
    Running,
    /// A tool call waits for a permission answer from an attached client
    /// (`robota attach`).
    WaitingForPermission,
    /// Every prompt is answered; it waits for `robota send`.
    Idle,
    /// It ended on its own.
    Finished,
    /// It ended with an error, or its process is gone.
    Failed,
    /// `robota stop` ended it.
    Stopped,
}

impl Phase {
    /// Whether its process should still be there.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            Phase::Starting | Phase::Running | Phase::WaitingForPermission | Phase::Idle
        )
    }

    /// The word `robota ps` shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Running => "running",
            Phase::WaitingForPermission => "waiting for permission",
            Phase::Idle => "idle",
            Phase::Finished => "finished",
            Phase::Failed => "failed",
            Phase::Stopped => "stopped",
        }
    }
}

/// How the supervisor starts the session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Launch {
    /// The arguments of the `robota` child (after the program name).
    pub args: Vec<String>,
    /// The first prompt (empty: none; a session moved to the background with `/bg`
    /// waits).
    pub prompt: String,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// The worktree made for it (`-w`), removed with it.
    #[serde(default)]
    pub worktree: Option<PathBuf>,
    /// The worktree's branch.
    #[serde(default)]
    pub branch: Option<String>,
}

/// What `robota ps` shows of a session.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// The session id.
    pub id: String,
    /// Its name (`--name`), if any.
    pub name: Option<String>,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// The worktree made for it (`-w`), removed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// The worktree's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The supervisor's process id, which leads the session's process group.
    pub pid: u32,
    /// When it started (RFC 3339).
    pub started: String,
    /// What it is doing.
    pub state: Phase,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Prompts answered.
    pub turns: u32,
    /// Its cost so far, in US dollars.
    pub cost_usd: f64,
}

/// The directory of all background sessions.
pub fn root(robota_home: &Path) -> PathBuf {
    robota_home.join("background")
}

/// The files of one session.
#[derive(Debug, Clone)]
pub struct SessionDir {
    /// The directory.
    pub dir: PathBuf,
}

impl SessionDir {
    /// The session `id` under `robota_home`.
    pub fn new(robota_home: &Path, id: &str) -> Self {
        SessionDir {
            dir: root(robota_home).join(id),
        }
    }

    /// `launch.json`.
    pub fn launch(&self) -> PathBuf {
        self.dir.join("launch.json")
    }
    /// `state.json`.
    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    /// `events.jsonl`.
    pub fn events(&self) -> PathBuf {
        self.dir.join("events.jsonl")
    }
    /// `control.sock`.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("control.sock")
    }
    /// `stderr.log`: what the session's process wrote to stderr.
    pub fn stderr(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }

    /// Creates the directory, readable by the user only.
    pub fn create(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
    }

    /// Writes `state` whole (a reader never sees half of it).
    pub fn write_state(&self, state: &State) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
        let partial = self.dir.join("state.json.partial");
        std::fs::write(&partial, text)?;
        std::fs::rename(partial, self.state())
    }

    /// The state as written, corrected when its process is gone: a live state whose
    /// socket does not answer is failed.
    pub fn read_state(&self) -> Option<State> {
        let text = std::fs::read(self.state()).ok()?;
        let mut state: State = serde_json::from_slice(&text).ok()?;
        if state.state.is_live() && !self.answers() {
            state.state = Phase::Failed;
            state.reason = Some("its process is gone (killed, or the machine restarted)".into());
        }
        Some(state)
    }

    /// The id of the conversation the session runs, as its `system/init` line in
    /// `events.jsonl` says (a resumed conversation keeps its own id).
    pub fn conversation_id(&self) -> Option<String> {
        use std::io::BufRead;
        let file = std::fs::File::open(self.events()).ok()?;
        let lines = std::io::BufReader::new(file).lines().map_while(Result::ok);
        init_line(lines)?["session_id"].as_str().map(str::to_string)
    }

    /// Whether something listens on the control socket.
    pub fn answers(&self) -> bool {
        std::os::unix::net::UnixStream::connect(self.socket()).is_ok()
    }
}

/// The session's `system/init` line among `lines` (of `events.jsonl`): its conversation
/// id, model and permission mode.
pub fn init_line(lines: impl IntoIterator<Item = String>) -> Option<serde_json::Value> {
    lines
        .into_iter()
        .filter(|line| line.contains("\"init\""))
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .find(|v| v["type"] == "system" && v["subtype"] == "init")
}

/// Every background session under `robota_home`, newest first.
pub fn list(robota_home: &Path) -> Vec<(SessionDir, State)> {
    let Ok(entries) = std::fs::read_dir(root(robota_home)) else {
        return Vec::new();
    };
    let mut found: Vec<(SessionDir, State)> = entries
        .flatten()
        .map(|e| SessionDir { dir: e.path() })
        .filter_map(|d| d.read_state().map(|s| (d, s)))
        .collect();
    found.sort_by(|a, b| b.1.started.cmp(&a.1.started));
    found
}

/// Why no background session was chosen.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// More than one id starts with the query.
    #[error("{0:?} starts more than one background session's id; give more of it")]
    Ambiguous(String),
    /// Nothing matches.
    #[error("no background session {0:?} (robota ps lists them)")]
    Missing(String),
}

/// The session whose id or name is `query`, or whose id starts with it (when only one
/// does).
pub fn find(robota_home: &Path, query: &str) -> Result<(SessionDir, State), FindError> {
    let all = list(robota_home);
    if let Some(exact) = all
        .iter()
        .find(|(_, s)| s.id == query || s.name.as_deref() == Some(query))
    {
        return Ok(exact.clone());
    }
    let mut prefixed = all.into_iter().filter(|(_, s)| s.id.starts_with(query));
    match (prefixed.next(), prefixed.next()) {
        (Some(one), None) => Ok(one),
        (Some(_), Some(_)) => Err(FindError::Ambiguous(query.to_string())),
        (None, _) => Err(FindError::Missing(query.to_string())),
    }
}
