//! Opening a robota session for an ACP client: a new one in the directory the client
//! names, or a recorded one resumed by id (`session/load`), with the client's MCP servers
//! added to the ones robota's settings configure. Also what the client is told of it: the
//! permission modes it may switch between and the model option.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    McpServer, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
    SessionMode, SessionModeState,
};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::core::Message;
use crate::core::models;
use crate::core::permission::PermissionMode;
use crate::sdk::{InteractiveSession, SessionEvent};
use crate::tools::ToolHost;

use super::super::super::args::Args;
use super::super::super::assemble::{AssembleError, assemble_in, options};

/// The id of the model option.
pub const MODEL_OPTION: &str = "model";

/// A session put together and started, with what its client is first told.
pub struct Opened {
    pub session: InteractiveSession,
    pub events: mpsc::UnboundedReceiver<SessionEvent>,
    /// The history a resumed session starts from (empty for a new one).
    pub history: Vec<Message>,
    pub id: String,
    pub model: String,
    pub provider: String,
    pub mode: PermissionMode,
    /// Lines for stderr (settings held back, a skipped log line…).
    pub warnings: Vec<String>,
}

/// Why a session could not be opened for the client (sent back as the request's error).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cwd {} is not an absolute path", .0.display())]
    CwdNotAbsolute(PathBuf),
    #[error("cwd {} is not a directory", .0.display())]
    CwdNotDirectory(PathBuf),
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    #[error("the session's events were already taken")]
    EventsTaken,
}

/// Opens a session in `cwd`: new, or `resume`d by id, its tools using what `host` offers.
pub fn open(
    base: &Args,
    providers: &'static dyn crate::ProviderFactory,
    cwd: &Path,
    resume: Option<&str>,
    servers: &[McpServer],
    host: &ToolHost,
) -> Result<Opened, OpenError> {
    if !cwd.is_absolute() {
        return Err(OpenError::CwdNotAbsolute(cwd.to_path_buf()));
    }
    if !cwd.is_dir() {
        return Err(OpenError::CwdNotDirectory(cwd.to_path_buf()));
    }
    let mut args = Args {
        resume: resume.map(str::to_string),
        continue_session: false,
        fork_session: false,
        session_id: None,
        ..base.clone()
    };
    if let Some(config) = client_servers(servers) {
        args.mcp_config.push(config);
    }
    let options = crate::sdk::ProjectOptions {
        host: host.clone(),
        ..options(&args, false, true)?
    };
    let assembled = assemble_in(&args, cwd.to_path_buf(), options, providers)?;
    let session = assembled.session();
    let id = session.id().to_string();
    let history = session.history().to_vec();
    let mode = session.mode();
    let provider = session.provider_name().to_string();
    let mut warnings: Vec<String> = assembled.notice.clone().into_iter().collect();
    warnings.extend(assembled.warnings.iter().cloned());
    let model = assembled.model.clone();
    let mut session = assembled.start();
    let events = session.events().ok_or(OpenError::EventsTaken)?;
    Ok(Opened {
        session,
        events,
        history,
        id,
        model,
        provider,
        mode,
        warnings,
    })
}

/// The client's MCP servers as one `--mcp-config` value (`None` when it sent none).
fn client_servers(servers: &[McpServer]) -> Option<String> {
    let mut map = Map::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => {
                let env: Map<String, Value> = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), Value::String(v.value.clone())))
                    .collect();
                let command = s.command.to_string_lossy().into_owned();
                (
                    s.name.clone(),
                    json!({"command": command, "args": s.args, "env": env}),
                )
            }
            McpServer::Http(s) => (
                s.name.clone(),
                json!({"type": "http", "url": s.url, "headers": headers(&s.headers)}),
            ),
            McpServer::Sse(s) => (
                s.name.clone(),
                json!({"type": "sse", "url": s.url, "headers": headers(&s.headers)}),
            ),
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        map.insert(name, entry);
    }
    (!map.is_empty()).then(|| json!({"mcpServers": map}).to_string())
}

fn headers(list: &[agent_client_protocol::v1::schema::HttpHeader]) -> Map<String, Value> {
    list.iter()
        .map(|h| (h.name.clone(), Value::String(h.value.clone())))
        .collect()
}

/// The modes a client may switch to: bypassing permissions only when the session started
/// in it (as Shift+Tab in the full-screen UI).
pub fn modes(current: PermissionMode, bypass: bool) -> SessionModeState {
    let available = PermissionMode::ALL
        .iter()
        .filter(|m| bypass || **m != PermissionMode::BypassPermissions)
        .map(|m| SessionMode::new(m.as_str(), mode_name(*m)).description(mode_description(*m)))
        .collect();
    SessionModeState::new(current.as_str(), available)
}

fn mode_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "Default",
        PermissionMode::AcceptEdits => "Accept edits",
        PermissionMode::Plan => "Plan",
        PermissionMode::BypassPermissions => "Bypass permissions",
    }
}

fn mode_description(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "Ask before edits and commands the rules do not allow",
        PermissionMode::AcceptEdits => "Edit files in the project without asking",
        PermissionMode::Plan => "Read and plan only; no edits or commands",
        PermissionMode::BypassPermissions => "Run everything without asking",
    }
}

/// The model option: the current model and the provider's usual ones.
pub fn model_option(provider: &str, current: &str) -> SessionConfigOption {
    let mut names: Vec<String> = models::default_models(provider)
        .into_iter()
        .map(str::to_string)
        .collect();
    if !names.iter().any(|m| m == current) {
        names.insert(0, current.to_string());
    }
    let options: Vec<SessionConfigSelectOption> = names
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.clone(), m.clone()))
        .collect();
    SessionConfigOption::select(MODEL_OPTION, "Model", current.to_string(), options)
        .category(SessionConfigOptionCategory::Model)
        .description("The model the next turns use")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{EnvVariable, McpServerHttp, McpServerStdio};

    #[test]
    fn client_servers_become_one_mcp_config() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("files", "/bin/fs-server")
                    .args(vec!["--root".into(), "/p".into()])
                    .env(vec![EnvVariable::new("TOKEN", "t")]),
            ),
            McpServer::Http(McpServerHttp::new("web", "http://127.0.0.1:9/mcp")),
        ];
        let config: Value = serde_json::from_str(&client_servers(&servers).unwrap()).unwrap();
        assert_eq!(
            config["mcpServers"]["files"],
            json!({"command": "/bin/fs-server", "args": ["--root", "/p"], "env": {"TOKEN": "t"}})
        );
        assert_eq!(config["mcpServers"]["web"]["type"], "http");
        assert_eq!(client_servers(&[]), None);
    }

    #[test]
    fn bypass_is_offered_only_to_a_session_that_started_in_it() {
        let ids = |state: SessionModeState| -> Vec<String> {
            state
                .available_modes
                .iter()
                .map(|m| m.id.0.to_string())
                .collect()
        };
        assert_eq!(
            ids(modes(PermissionMode::Default, false)),
            ["default", "acceptEdits", "plan"]
        );
        assert!(
            ids(modes(PermissionMode::BypassPermissions, true))
                .contains(&"bypassPermissions".to_string())
        );
    }
}
