//! The MCP servers of a session while it runs: each connects in the background (all at
//! once, bounded by [`CONNECT_TIMEOUT`]), never holding anything up; their status
//! (pending, connected, failed, needs-auth) with tool counts and the last error; a bounded
//! wait for clients that must not start before the servers settle (a `-p` run, for at
//! most `MCP_TIMEOUT`, and only for the servers whose tools the session can offer); reconnecting one; shutting them all down. As a [`ToolSource`] it
//! offers the tools of the connected servers, so a server that connects late joins the
//! next model request.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use robota_core::{Tool, ToolSource};
use robota_tools::mcp::{
    ConnectError, McpConfigError, McpConnection, McpServerConfig, McpTool, SdkMcpRouter,
};

use super::error::McpError;
use super::sources::ConfiguredServer;

/// How long one server may take to connect before it is marked failed (and stopped).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a `-p` run waits for the servers before its first request, unless
/// `MCP_TIMEOUT` (milliseconds) says otherwise.
pub(crate) const DEFAULT_STARTUP_WAIT: Duration = Duration::from_millis(2_000);

/// `MCP_TIMEOUT` in milliseconds, else two seconds.
pub fn startup_wait() -> Duration {
    std::env::var("MCP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_STARTUP_WAIT)
}

/// A server's state, with Claude Code's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerStatus {
    /// Still connecting.
    Pending,
    /// Connected; its tools are offered to the model.
    Connected,
    /// The connection or the configuration failed; the report's `error` says why.
    Failed,
    /// The server asks for authorization (OAuth) robota cannot give it.
    NeedsAuth,
}

impl ServerStatus {
    /// The name clients print: `pending`, `connected`, `failed`, `needs-auth`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerStatus::Pending => "pending",
            ServerStatus::Connected => "connected",
            ServerStatus::Failed => "failed",
            ServerStatus::NeedsAuth => "needs-auth",
        }
    }
}

/// What a client shows about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// The server's name in its configuration.
    pub name: String,
    /// Where its connection stands.
    pub status: ServerStatus,
    /// `stdio`, `http`, `sse` or `sdk` (`?` when its configuration is broken).
    pub transport: &'static str,
    /// The file (or flag, or plugin) that configured it.
    pub source: String,
    /// The names of the tools it offers, once connected.
    pub tools: Vec<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

struct SlotState {
    status: ServerStatus,
    error: Option<String>,
    connection: Option<Arc<McpConnection>>,
    tools: Vec<Arc<dyn Tool>>,
    task: Option<JoinHandle<()>>,
}

struct Slot {
    name: String,
    source: String,
    config: Result<McpServerConfig, McpConfigError>,
    state: Mutex<SlotState>,
    /// Whether a start-up wait waits for it: not when the session can offer none of its
    /// tools (see [`McpManager::wait_only_for_offered`]).
    awaited: AtomicBool,
}

/// The session's MCP servers.
pub struct McpManager {
    slots: Vec<Arc<Slot>>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    /// Where an Agent SDK program's in-process servers are reached (none outside it).
    sdk: Option<Arc<dyn SdkMcpRouter>>,
    changed: watch::Sender<u64>,
    /// The project's servers not started until the directory is trusted
    /// (`.mcp.json: a, b`), for `/mcp` to say so.
    waiting: Vec<String>,
}

impl McpManager {
    /// The servers of `list`, not yet started; `env` is the session's extra environment
    /// for stdio servers, which start in `cwd`; `sdk` reaches the servers of the Agent SDK
    /// program that runs robota, if one does; `waiting` names the project's servers that
    /// wait for the directory to be trusted.
    pub fn new(
        list: Vec<ConfiguredServer>,
        cwd: PathBuf,
        env: Vec<(String, String)>,
        sdk: Option<Arc<dyn SdkMcpRouter>>,
        waiting: Vec<String>,
    ) -> Arc<Self> {
        let slots = list
            .into_iter()
            .map(|s| {
                let (status, error) = match &s.config {
                    Ok(_) => (ServerStatus::Pending, None),
                    Err(e) => (
                        ServerStatus::Failed,
                        Some(format!("invalid configuration: {e}")),
                    ),
                };
                Arc::new(Slot {
                    name: s.name,
                    source: s.source,
                    config: s.config,
                    awaited: AtomicBool::new(true),
                    state: Mutex::new(SlotState {
                        status,
                        error,
                        connection: None,
                        tools: Vec::new(),
                        task: None,
                    }),
                })
            })
            .collect();
        Arc::new(McpManager {
            slots,
            cwd,
            env,
            sdk,
            changed: watch::channel(0).0,
            waiting,
        })
    }

    /// The project's servers that wait for the directory to be trusted.
    pub fn waiting_for_trust(&self) -> &[String] {
        &self.waiting
    }

    /// Whether no server is configured at all.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Starts connecting every configured server in the background (on the current tokio
    /// runtime); returns at once.
    pub fn start(self: &Arc<Self>) {
        for slot in &self.slots {
            if slot.config.is_ok() {
                self.spawn_connect(slot);
            }
        }
    }

    fn spawn_connect(self: &Arc<Self>, slot: &Arc<Slot>) {
        let manager = self.clone();
        let task_slot = slot.clone();
        let task = tokio::spawn(async move { manager.connect(&task_slot).await });
        if let Ok(mut state) = slot.state.lock() {
            state.task = Some(task);
        }
    }

    async fn connect(&self, slot: &Slot) {
        let Ok(config) = &slot.config else { return };
        let attempt = McpConnection::connect(config, &self.cwd, &self.env, self.sdk.as_ref());
        let result = match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
            Ok(result) => result,
            Err(_) => Err(ConnectError::Failed(format!(
                "no answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            ))),
        };
        let update = match result {
            Ok((connection, offer)) => {
                let connection = Arc::new(connection);
                let tools: Vec<Arc<dyn Tool>> = offer
                    .tools
                    .iter()
                    .map(|t| {
                        Arc::new(McpTool::new(&slot.name, t, connection.clone())) as Arc<dyn Tool>
                    })
                    .collect();
                tracing::info!(server = %slot.name, tools = tools.len(), "MCP server connected");
                (ServerStatus::Connected, None, Some(connection), tools)
            }
            Err(e) => {
                tracing::warn!(server = %slot.name, error = %e.message(), "MCP server failed");
                let status = match e {
                    ConnectError::NeedsAuth(_) => ServerStatus::NeedsAuth,
                    ConnectError::Failed(_) => ServerStatus::Failed,
                };
                (status, Some(e.message().to_string()), None, Vec::new())
            }
        };
        if let Ok(mut state) = slot.state.lock() {
            (state.status, state.error, state.connection, state.tools) = update;
            state.task = None;
        }
        self.changed.send_modify(|n| *n += 1);
    }

    /// Marks connected servers whose connection ended as failed.
    fn notice_closed(&self) {
        let mut any = false;
        for slot in &self.slots {
            let Ok(mut state) = slot.state.lock() else {
                continue;
            };
            if state.status == ServerStatus::Connected
                && state.connection.as_ref().is_some_and(|c| c.is_closed())
            {
                let tail = state
                    .connection
                    .as_ref()
                    .map(|c| c.stderr_tail())
                    .unwrap_or_default();
                state.status = ServerStatus::Failed;
                state.error = Some(if tail.is_empty() {
                    "the server closed the connection".to_string()
                } else {
                    format!("the server closed the connection; its stderr: {tail}")
                });
                state.tools.clear();
                state.connection = None;
                any = true;
            }
        }
        if any {
            self.changed.send_modify(|n| *n += 1);
        }
    }

    /// Waits until no server the first request needs is pending (see
    /// [`wait_only_for_offered`](Self::wait_only_for_offered)), or `limit` has passed.
    pub async fn wait_settled(&self, limit: Duration) {
        let mut changes = self.changed.subscribe();
        let settled = async {
            loop {
                if !self.slots.iter().any(|slot| {
                    slot.awaited.load(Ordering::Relaxed)
                        && slot
                            .state
                            .lock()
                            .is_ok_and(|s| s.status == ServerStatus::Pending)
                }) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(limit, settled).await;
    }

    /// Leaves out of the start-up wait the servers none of whose tools the session can
    /// offer: `offers` is asked with a server's name as tool names spell it (`--tools`
    /// names none of its tools, a deny rule removes them all). They still connect, for
    /// their prompts and `/mcp`; the first request would not carry their tools anyway.
    pub fn wait_only_for_offered(&self, offers: impl Fn(&str) -> bool) {
        for slot in &self.slots {
            let name = robota_tools::mcp::normalize(&slot.name);
            slot.awaited.store(offers(&name), Ordering::Relaxed);
        }
    }

    /// A receiver that changes whenever a server's status does.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Every server, in configuration order.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.notice_closed();
        self.slots
            .iter()
            .filter_map(|slot| {
                let state = slot.state.lock().ok()?;
                Some(ServerReport {
                    name: slot.name.clone(),
                    status: state.status,
                    transport: slot.config.as_ref().map(|c| c.transport()).unwrap_or("?"),
                    source: slot.source.clone(),
                    tools: state.tools.iter().map(|t| t.name().to_string()).collect(),
                    error: state.error.clone(),
                })
            })
            .collect()
    }

    /// Ends the server's connection (if any) and connects it again, waiting for the
    /// outcome; `Err` names no such server.
    pub(crate) async fn reconnect(self: &Arc<Self>, name: &str) -> Result<ServerReport, McpError> {
        let slot = self
            .slots
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| self.no_server(name))?;
        let (old, task) = match slot.state.lock() {
            Ok(mut state) => {
                state.status = ServerStatus::Pending;
                state.error = None;
                state.tools.clear();
                (state.connection.take(), state.task.take())
            }
            Err(_) => (None, None),
        };
        if let Some(task) = task {
            task.abort();
        }
        if let Some(old) = old {
            old.shutdown().await;
        }
        self.changed.send_modify(|n| *n += 1);
        self.connect(&slot).await;
        self.reports()
            .into_iter()
            .find(|r| r.name == name)
            .ok_or_else(|| self.no_server(name))
    }

    fn no_server(&self, name: &str) -> McpError {
        McpError::NoServer {
            name: name.to_string(),
            configured: self.slots.iter().map(|s| s.name.clone()).collect(),
        }
    }

    /// Stops every server: connections in progress are abandoned (their processes
    /// killed), connected ones shut down.
    pub async fn shutdown(&self) {
        let mut connections = Vec::new();
        for slot in &self.slots {
            if let Ok(mut state) = slot.state.lock() {
                if let Some(task) = state.task.take() {
                    task.abort();
                }
                connections.extend(state.connection.take());
                state.tools.clear();
            }
        }
        futures_util::future::join_all(connections.iter().map(|c| c.shutdown())).await;
    }
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.slots.iter().map(|s| &s.name))
            .finish()
    }
}

impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.slots
            .iter()
            .filter_map(|s| s.state.lock().ok().map(|st| st.tools.clone()))
            .flatten()
            .collect()
    }
}
