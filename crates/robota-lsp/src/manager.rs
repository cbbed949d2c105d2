//! The session's language servers: which server handles a file (by its extension), one
//! server per (server, workspace root) started lazily in the background on the first file
//! of its language, restarted at most `maxRestarts` times when it crashed or failed to
//! start, then reported; every wait for one is bounded by its caller's deadline. Nothing
//! starts until a file of a configured language is touched.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::LspError;
use crate::config::{LspSection, LspServerConfig};
use crate::server::Server;

/// Files whose last-seen text is kept for [`LspManager::diagnostics_after_command`].
const MAX_KNOWN_FILES: usize = 20;

/// A file text's hash: enough to tell that a command changed it.
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Starts of a server allowed after the first (each crash or failed start uses one).
const DEFAULT_MAX_RESTARTS: u32 = 3;

/// Where a server is in its life.
#[derive(Clone)]
enum SlotState {
    Starting,
    Ready(Arc<Server>),
    Failed(String),
}

struct Slot {
    state: watch::Receiver<SlotState>,
    restarts: u32,
    last_error: Option<String>,
}

/// One server's state as `/lsp` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The server's name (`pyright`).
    pub name: String,
    /// The workspace root it runs for.
    pub root: PathBuf,
    /// `starting`, `running`, `crashed` or `failed`.
    pub state: String,
    /// Its process id while it runs.
    pub pid: Option<u32>,
    /// Restarts so far.
    pub restarts: u32,
    /// The last error (a failed start, a crash, with the tail of its stderr).
    pub last_error: Option<String>,
}

/// The language servers of a session.
pub struct LspManager {
    servers: Vec<(String, Arc<LspServerConfig>)>,
    section: LspSection,
    env: Vec<(String, String)>,
    root: PathBuf,
    slots: Mutex<HashMap<(usize, PathBuf), Slot>>,
    /// The files of a configured language robota read or edited, with the hash of the
    /// text it last saw, oldest first: a command's changes to them are found by comparing.
    known: Mutex<Vec<(PathBuf, u64)>>,
    /// Fires at shutdown: a server still starting is stopped.
    stopping: CancellationToken,
    /// The tasks starting servers, awaited at shutdown.
    starts: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for LspManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspManager")
            .field("servers", &self.server_names())
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl LspManager {
    /// A manager of `servers` (the first that handles an extension wins) for a session in
    /// `root`, starting processes with `env`.
    pub fn new(
        servers: Vec<(String, LspServerConfig)>,
        section: LspSection,
        root: PathBuf,
        env: Vec<(String, String)>,
    ) -> Self {
        LspManager {
            servers: servers
                .into_iter()
                .map(|(name, config)| (name, Arc::new(config)))
                .collect(),
            section,
            env,
            root,
            slots: Mutex::default(),
            known: Mutex::default(),
            stopping: CancellationToken::new(),
            starts: Mutex::default(),
        }
    }

    /// The settings section it was made with.
    pub fn section(&self) -> &LspSection {
        &self.section
    }

    /// The names of the servers it knows, in order.
    pub fn server_names(&self) -> Vec<String> {
        self.servers.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The server handling `path` and the language id it gives it.
    pub(crate) fn server_for(&self, path: &Path) -> Option<(usize, &str, &str)> {
        self.servers.iter().enumerate().find_map(|(i, (name, c))| {
            c.language_of(path)
                .map(|language| (i, name.as_str(), language))
        })
    }

    /// The workspace root of `path`: the session's root when the file is under it, else
    /// the file's directory.
    fn root_of(&self, path: &Path) -> PathBuf {
        if path.starts_with(&self.root) {
            self.root.clone()
        } else {
            path.parent().unwrap_or(Path::new("/")).to_path_buf()
        }
    }

    /// Records `text` as what robota last saw of `path` (a Read, an edit, a command's
    /// change); the oldest record goes when there are more than `MAX_KNOWN_FILES`.
    pub(crate) fn remember(&self, path: &Path, text: &str) {
        let Ok(mut known) = self.known.lock() else {
            return;
        };
        known.retain(|(p, _)| p != path);
        known.push((path.to_path_buf(), text_hash(text)));
        if known.len() > MAX_KNOWN_FILES {
            known.remove(0);
        }
    }

    /// The files robota has seen, with the hash of the text it last saw.
    pub(crate) fn known_files(&self) -> Vec<(PathBuf, u64)> {
        self.known.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// Starts the server of `path` in the background if it is not running (no wait).
    pub fn warm_up(self: &Arc<Self>, path: &Path) {
        let _ = self.slot_state(path);
    }

    /// The running server of `path` and its language id, waiting until `deadline` for it
    /// to start; `Ok(None)` when no server handles the file.
    pub(crate) async fn server(
        self: &Arc<Self>,
        path: &Path,
        deadline: Instant,
    ) -> Result<Option<(Arc<Server>, String, String)>, LspError> {
        let Some((mut state, name, language)) = self.slot_state(path)? else {
            return Ok(None);
        };
        let ready = tokio::time::timeout_at(deadline, async {
            loop {
                let current = state.borrow_and_update().clone();
                match current {
                    SlotState::Ready(server) => return Ok(server),
                    SlotState::Failed(error) => return Err(LspError::Unavailable(error)),
                    SlotState::Starting => {
                        if state.changed().await.is_err() {
                            return Err(LspError::Closed);
                        }
                    }
                }
            }
        })
        .await
        .map_err(|_| LspError::StillStarting(name.clone()))??;
        Ok(Some((ready, name, language)))
    }

    /// The state of the server for `path` (started or restarted when it is not running
    /// and may be), its name and the file's language; `Ok(None)` when no server handles
    /// the file, `Err` when it failed too often.
    #[allow(clippy::type_complexity)]
    fn slot_state(
        self: &Arc<Self>,
        path: &Path,
    ) -> Result<Option<(watch::Receiver<SlotState>, String, String)>, LspError> {
        let Some((index, name, language)) = self.server_for(path) else {
            return Ok(None);
        };
        let (name, language) = (name.to_string(), language.to_string());
        let key = (index, self.root_of(path));
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| LspError::Unavailable("the server table is poisoned".into()))?;
        let max_restarts = self.servers[index]
            .1
            .max_restarts
            .unwrap_or(DEFAULT_MAX_RESTARTS);
        if let Some(slot) = slots.get_mut(&key) {
            let broken = match &*slot.state.borrow() {
                SlotState::Starting => None,
                SlotState::Ready(server) if !server.is_dead() => None,
                SlotState::Ready(server) => Some(crash_report(server)),
                SlotState::Failed(error) => Some(error.clone()),
            };
            let Some(error) = broken else {
                return Ok(Some((slot.state.clone(), name, language)));
            };
            slot.last_error = Some(error.clone());
            if slot.restarts >= max_restarts {
                return Err(LspError::Unavailable(format!(
                    "{name} stopped after {} restarts: {error}",
                    slot.restarts
                )));
            }
            slot.restarts += 1;
            slot.state = self.spawn_start(index, key.1.clone());
            return Ok(Some((slot.state.clone(), name, language)));
        }
        let state = self.spawn_start(index, key.1.clone());
        slots.insert(
            key,
            Slot {
                state: state.clone(),
                restarts: 0,
                last_error: None,
            },
        );
        Ok(Some((state, name, language)))
    }

    /// Starts server `index` for `root` in a task of its own (a waiter that gives up does
    /// not cancel it).
    fn spawn_start(&self, index: usize, root: PathBuf) -> watch::Receiver<SlotState> {
        let (tx, rx) = watch::channel(SlotState::Starting);
        let (name, config) = self.servers[index].clone();
        let env = self.env.clone();
        let stopping = self.stopping.clone();
        let task = tokio::spawn(async move {
            // Dropping a start half-way (at shutdown) kills the server's process group.
            let started = tokio::select! {
                started = Server::start(&config, &root, &env) => started,
                _ = stopping.cancelled() => Err(LspError::Unavailable("the session ended".into())),
            };
            let state = match started {
                Ok(server) => SlotState::Ready(Arc::new(server)),
                Err(error) => {
                    tracing::warn!(server = %name, %error, "language server did not start");
                    SlotState::Failed(error.to_string())
                }
            };
            let _ = tx.send(state);
        });
        if let Ok(mut starts) = self.starts.lock() {
            starts.retain(|t| !t.is_finished());
            starts.push(task);
        }
        rx
    }

    /// Every server started so far, with its state.
    pub fn status(&self) -> Vec<ServerStatus> {
        let Ok(slots) = self.slots.lock() else {
            return Vec::new();
        };
        let mut report: Vec<ServerStatus> = slots
            .iter()
            .map(|((index, root), slot)| {
                let (state, pid, error) = match &*slot.state.borrow() {
                    SlotState::Starting => ("starting", None, None),
                    SlotState::Ready(server) if server.is_dead() => {
                        ("crashed", None, Some(crash_report(server)))
                    }
                    SlotState::Ready(server) => ("running", server.pid, None),
                    SlotState::Failed(error) => ("failed", None, Some(error.clone())),
                };
                ServerStatus {
                    name: self.servers[*index].0.clone(),
                    root: root.clone(),
                    state: state.to_string(),
                    pid,
                    restarts: slot.restarts,
                    last_error: error.or_else(|| slot.last_error.clone()),
                }
            })
            .collect();
        report.sort_by(|a, b| (&a.name, &a.root).cmp(&(&b.name, &b.root)));
        report
    }

    /// Stops every server (asked to shut down, then its process group stopped).
    pub async fn shutdown(&self) {
        self.stopping.cancel();
        let starts: Vec<_> = match self.starts.lock() {
            Ok(mut starts) => starts.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        for start in starts {
            let _ = start.await;
        }
        let running: Vec<Arc<Server>> = match self.slots.lock() {
            Ok(mut slots) => slots
                .drain()
                .filter_map(|(_, slot)| match &*slot.state.borrow() {
                    SlotState::Ready(server) => Some(server.clone()),
                    _ => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let stops: Vec<_> = running
            .into_iter()
            .map(|server| tokio::spawn(async move { server.shutdown().await }))
            .collect();
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            for stop in stops {
                let _ = stop.await;
            }
        })
        .await;
    }
}

/// What a crashed server left: "exited" and the tail of its stderr.
fn crash_report(server: &Server) -> String {
    let tail = server.stderr_tail();
    if tail.is_empty() {
        "the server exited".to_string()
    } else {
        format!("the server exited: {}", tail.join(" | "))
    }
}
