//! A live connection to one MCP server over rmcp: starting it (a child process in a process
//! group of its own for stdio; a reqwest client with the configured headers for streamable
//! HTTP, through `http`, and for legacy SSE, through `sse`), the `initialize` handshake,
//! listing its tools and prompts, calling them, and shutting it down (the stdio server sees
//! its stdin close and its whole group is killed at once).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    GetPromptRequestParams, GetPromptResult, Implementation, Prompt, ProtocolVersion,
    Tool as McpToolInfo,
};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use crate::web::fetch::chain;
use robota_core::credentials::ChildEnv;
use robota_core::process_group::{ProcessGroup, StopPolicy, spawn_in_new_group};

use super::http::McpHttpClient;
use super::sdk_transport::SdkMcpRouter;
use super::server_config::McpServerConfig;

/// How much of a stdio server's stderr is kept for error messages.
const STDERR_TAIL: usize = 2_000;
/// How long a stdio server that failed its handshake has to exit by itself (its exit status
/// explains the failure), and the bound on closing a session.
const EXIT_GRACE: Duration = Duration::from_millis(300);

/// Why a server could not be connected; each holds the message, causes included.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The server answered 401: it wants credentials (OAuth or a header).
    #[error("{0}")]
    NeedsAuth(String),
    /// Anything else that kept the connection from being made.
    #[error("{0}")]
    Failed(String),
}

impl ConnectError {
    /// The message, causes included.
    pub fn message(&self) -> &str {
        match self {
            ConnectError::NeedsAuth(m) | ConnectError::Failed(m) => m,
        }
    }

    fn from_message(message: String) -> Self {
        let lower = message.to_ascii_lowercase();
        if lower.contains("401")
            || lower.contains("unauthorized")
            || lower.contains("auth required")
        {
            ConnectError::NeedsAuth(message)
        } else {
            ConnectError::Failed(message)
        }
    }
}

/// A request to a connected server that failed in the protocol or on the way (a tool's
/// own failure is a result with `is_error`, not this); shown with its causes.
#[derive(Debug, thiserror::Error)]
#[error("{}", chain(.0))]
pub struct McpRequestError(#[source] pub ServiceError);

/// What the server said about itself and offers.
#[derive(Debug, Clone, Default)]
pub struct ServerOffer {
    /// The tools it offers.
    pub tools: Vec<McpToolInfo>,
    /// The prompts it offers (empty when it offers none or listing them failed).
    pub prompts: Vec<Prompt>,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
}

/// The child process of a stdio server.
struct ServerProcess {
    child: Child,
    group: Option<ProcessGroup>,
}

/// A connected server.
pub struct McpConnection {
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    process: tokio::sync::Mutex<Option<ServerProcess>>,
    stderr: Arc<Mutex<String>>,
}

impl McpConnection {
    /// Starts (stdio) or reaches (http, sse) the server and completes the handshake, then
    /// lists what it offers. `env` is the session's extra environment for a stdio server,
    /// below the server's own `env`; it starts in `cwd`.
    pub async fn connect(
        config: &McpServerConfig,
        cwd: &Path,
        env: &[(String, String)],
        sdk: Option<&Arc<dyn SdkMcpRouter>>,
    ) -> Result<(McpConnection, ServerOffer), ConnectError> {
        let stderr = Arc::new(Mutex::new(String::new()));
        let (service, process) = match config {
            McpServerConfig::Stdio {
                command,
                args,
                env: own,
            } => {
                let mut cmd = Command::new(command);
                let project_dir = [("CLAUDE_PROJECT_DIR", cwd), ("ROBOTA_PROJECT_DIR", cwd)];
                let session = env.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v)));
                let dirs = project_dir.map(|(k, v)| (OsStr::new(k), v.as_os_str()));
                let own_env = own.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v)));
                ChildEnv::new(session.chain(dirs).chain(own_env)).apply(&mut cmd);
                cmd.args(args)
                    .current_dir(cwd)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let (mut child, group) = spawn_in_new_group(&mut cmd)
                    .map_err(|e| ConnectError::Failed(format!("cannot start `{command}`: {e}")))?;
                if let Some(err) = child.stderr.take() {
                    keep_stderr_tail(err, stderr.clone());
                }
                let (Some(out), Some(inp)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(ConnectError::Failed(
                        "the server's pipes are missing".into(),
                    ));
                };
                let mut process = ServerProcess { child, group };
                match client_info().serve((out, inp)).await {
                    Ok(service) => (service, Some(process)),
                    Err(e) => {
                        let status = tokio::time::timeout(EXIT_GRACE, process.child.wait())
                            .await
                            .ok()
                            .and_then(Result::ok);
                        stop(&mut process).await;
                        let mut message = chain(&e);
                        if let Some(status) = status {
                            message = format!("the server exited ({status}) during the handshake");
                        }
                        let tail = tail_of(&stderr);
                        if !tail.is_empty() {
                            message.push_str(&format!("; its stderr: {tail}"));
                        }
                        return Err(ConnectError::Failed(message));
                    }
                }
            }
            McpServerConfig::Http { url, headers } => {
                let client = http_client(headers)?;
                let transport = StreamableHttpClientTransport::with_client(
                    McpHttpClient(client),
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()),
                );
                let service = client_info()
                    .serve(transport)
                    .await
                    .map_err(|e| ConnectError::from_message(chain(&e)))?;
                (service, None)
            }
            McpServerConfig::Sdk { name } => {
                let router = sdk.ok_or_else(|| {
                    ConnectError::Failed(
                        "an SDK server is reachable only when an Agent SDK program runs robota"
                            .into(),
                    )
                })?;
                let service = client_info()
                    .serve(super::sdk_transport::connect(name, router.clone()))
                    .await
                    .map_err(|e| ConnectError::Failed(chain(&e)))?;
                (service, None)
            }
            McpServerConfig::Sse { url, headers } => {
                let client = http_client(headers)?;
                let transport = super::sse::SseTransport::connect(client, url)
                    .await
                    .map_err(|e| ConnectError::from_message(chain(&e)))?;
                let service = client_info()
                    .serve(transport)
                    .await
                    .map_err(|e| ConnectError::from_message(chain(&e)))?;
                (service, None)
            }
        };
        let peer = service.peer().clone();
        let connection = McpConnection {
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            process: tokio::sync::Mutex::new(process),
            stderr,
        };
        match connection.offer().await {
            Ok(offer) => Ok((connection, offer)),
            Err(error) => {
                connection.shutdown().await;
                Err(error)
            }
        }
    }

    async fn offer(&self) -> Result<ServerOffer, ConnectError> {
        let info = self.peer.peer_info();
        let capabilities = info.as_ref().map(|i| i.capabilities.clone());
        let tools = match capabilities.as_ref().and_then(|c| c.tools.as_ref()) {
            Some(_) => self.peer.list_all_tools().await.map_err(|e| {
                ConnectError::from_message(format!("tools/list failed: {}", chain(&e)))
            })?,
            None => Vec::new(),
        };
        // Prompts are extras: a server that fails to list them still serves its tools.
        let prompts = match capabilities.as_ref().and_then(|c| c.prompts.as_ref()) {
            Some(_) => self.peer.list_all_prompts().await.unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(ServerOffer {
            tools,
            prompts,
            instructions: info.and_then(|i| i.instructions.clone()),
        })
    }

    /// Calls a tool; `Err` is a protocol or transport failure (a tool's own failure is a
    /// result with `is_error`).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, McpRequestError> {
        self.peer
            .call_tool({
                let mut params = CallToolRequestParams::new(name.to_string());
                params.arguments = arguments;
                params
            })
            .await
            .map_err(McpRequestError)
    }

    /// Expands a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult, McpRequestError> {
        self.peer
            .get_prompt({
                let mut params = GetPromptRequestParams::new(name);
                params.arguments = arguments;
                params
            })
            .await
            .map_err(McpRequestError)
    }

    /// Whether the connection has ended (the server exited or hung up).
    pub fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// The last lines the server wrote to stderr (stdio servers).
    pub fn stderr_tail(&self) -> String {
        tail_of(&self.stderr)
    }

    /// Ends the connection after the session's last answer: the session is cancelled (a
    /// stdio server's stdin closes) and the server's whole process group is killed at
    /// once — nothing more will be asked of it, so a server that ignores its stdin's end
    /// (or SIGTERM) adds nothing to the session's exit.
    pub async fn shutdown(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(EXIT_GRACE, service.cancel()).await;
        }
        if let Some(mut process) = self.process.lock().await.take() {
            kill(&mut process).await;
        }
    }
}

/// Kills a server process and everything in its group at once (SIGKILL), and reaps it.
async fn kill(process: &mut ServerProcess) {
    match process.group.take() {
        Some(group) => group.stop(&mut process.child, StopPolicy::Kill).await,
        None => {
            let _ = process.child.start_kill();
            let _ = process.child.wait().await;
        }
    }
}

/// Stops a server that failed its handshake: a moment to exit by itself (so its exit
/// status can explain the failure), then SIGTERM and SIGKILL to its group.
async fn stop(process: &mut ServerProcess) {
    let exited = tokio::time::timeout(EXIT_GRACE, process.child.wait()).await;
    match process.group.take() {
        Some(group) if exited.is_err() => {
            group
                .stop(&mut process.child, StopPolicy::TermThenKill(EXIT_GRACE))
                .await;
        }
        // The leader is gone; anything it left in its group goes with it.
        Some(group) => drop(group),
        None => {
            let _ = process.child.start_kill();
            let _ = process.child.wait().await;
        }
    }
}

/// What robota says about itself in `initialize`: the newest protocol version that still
/// has that handshake (servers answer with the version they speak).
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("robota", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

fn http_client(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<reqwest::Client, ConnectError> {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ConnectError::Failed(format!("header name {name:?} is not valid")))?;
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
            ConnectError::Failed(format!("the value of header {name} is not valid"))
        })?;
        map.insert(name, value);
    }
    robota_core::http_client::client_builder()
        .default_headers(map)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ConnectError::Failed(format!("cannot build an HTTP client: {e}")))
}

/// Reads the server's stderr to its end in the background, keeping the last
/// [`STDERR_TAIL`] bytes.
fn keep_stderr_tail(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(mut t) = tail.lock() {
                t.push_str(&line);
                t.push('\n');
                if t.len() > STDERR_TAIL * 2 {
                    let cut = t.len() - STDERR_TAIL;
                    let cut = (cut..t.len()).find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                    t.drain(..cut);
                }
            }
        }
    });
}

fn tail_of(tail: &Mutex<String>) -> String {
    let text = tail.lock().map(|t| t.clone()).unwrap_or_default();
    let text = text.trim();
    let start = text.len().saturating_sub(STDERR_TAIL);
    let start = (start..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    text[start..].replace('\n', " | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unauthorized_answers_are_told_apart() {
        let e = ConnectError::from_message("HTTP status client error (401 Unauthorized)".into());
        assert!(matches!(e, ConnectError::NeedsAuth(_)));
        let e = ConnectError::from_message("connection refused".into());
        assert_eq!(e, ConnectError::Failed("connection refused".into()));
        assert_eq!(e.message(), "connection refused");
    }
}
