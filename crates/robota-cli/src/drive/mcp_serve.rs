//! `robota mcp serve`: robota as an MCP server on stdio (on the `rmcp` crate), so other
//! agents can delegate to it, as Codex's MCP server does. Two tools: `robota` runs a
//! prompt in a new session in a given directory with a permission mode, `robota-reply`
//! continues a session by id; both return the answer as text and, as structured content,
//! the session id, whether it failed, and the run's cost.
//!
//! Each call is one headless run, `robota -p … --output-format json`, of this same binary
//! in the call's directory: calls are isolated from each other (their own working
//! directory, permission mode and process group), run concurrently, and a cancelled call
//! ends its run. Nothing can ask for approval in such a run: calls that need it are denied
//! and listed in `permission_denials` (allow them with `permission_mode`).

use std::path::PathBuf;
use std::process::Stdio;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::headless::{EXIT_ERROR, EXIT_OK};

/// The `robota` tool's input.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RunRequest {
    /// The task for robota.
    pub prompt: String,
    /// The working directory of the session (default: the server's).
    pub cwd: Option<String>,
    /// default, acceptEdits, plan or bypassPermissions (default: the settings' default).
    pub permission_mode: Option<String>,
    /// The model (default: the settings' or the provider's).
    pub model: Option<String>,
}

/// The `robota-reply` tool's input.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReplyRequest {
    /// The session to continue (the `session_id` a `robota` call returned).
    pub session_id: String,
    /// The next message.
    pub prompt: String,
    /// The working directory the session ran in (default: the server's).
    pub cwd: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RobotaServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RobotaServer {
    fn new() -> Self {
        RobotaServer {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "robota",
        description = "Run a coding task with robota in a new session: it reads, edits and runs commands in the directory (within its permission rules) and returns its answer and the session id to continue with robota-reply."
    )]
    async fn run(
        &self,
        Parameters(request): Parameters<RunRequest>,
    ) -> Result<CallToolResult, McpError> {
        let mut args = vec![request.prompt];
        if let Some(mode) = request.permission_mode {
            args.extend(["--permission-mode".to_string(), mode]);
        }
        if let Some(model) = request.model {
            args.extend(["--model".to_string(), model]);
        }
        Ok(run_headless(args, request.cwd).await)
    }

    #[tool(
        name = "robota-reply",
        description = "Continue a robota session by id with another message; returns the answer."
    )]
    async fn reply(
        &self,
        Parameters(request): Parameters<ReplyRequest>,
    ) -> Result<CallToolResult, McpError> {
        let args = vec![request.prompt, "--resume".to_string(), request.session_id];
        Ok(run_headless(args, request.cwd).await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RobotaServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("robota", env!("CARGO_PKG_VERSION")))
            .with_instructions(
            "robota is a coding agent. Use the robota tool to give it a task in a directory, robota-reply to continue that session.",
        )
    }
}

/// Serves MCP on stdin/stdout until the client disconnects.
pub async fn run() -> u8 {
    let service = match RobotaServer::new().serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(e) => {
            eprintln!("robota mcp serve: the client did not initialize: {e}");
            return EXIT_ERROR;
        }
    };
    match service.waiting().await {
        Ok(_) => EXIT_OK,
        Err(e) => {
            eprintln!("robota mcp serve: {e}");
            EXIT_ERROR
        }
    }
}

/// One headless run of this binary (`-p <args> --output-format json`) in `cwd`, as a tool
/// result: the answer as text; session id, error flag, cost and denials as structured
/// content. A failed run is an error result carrying robota's own error line.
async fn run_headless(args: Vec<String>, cwd: Option<String>) -> CallToolResult {
    let failed = |text: String| CallToolResult::error(vec![ContentBlock::text(text)]);
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return failed(format!("robota cannot find its own binary: {e}")),
    };
    let dir = match cwd {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => return failed(format!("no working directory: {e}")),
        },
    };
    if !dir.is_dir() {
        return failed(format!("cwd {} is not a directory", dir.display()));
    }
    let output = tokio::process::Command::new(exe)
        .arg("-p")
        .args(&args)
        .args(["--output-format", "json"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A cancelled call drops this future: its run ends with it.
        .kill_on_drop(true)
        .output()
        .await;
    let output = match output {
        Ok(output) => output,
        Err(e) => return failed(format!("cannot start robota: {e}")),
    };
    let result: Value = match serde_json::from_slice(&output.stdout) {
        Ok(result) => result,
        Err(_) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return failed(format!("robota failed: {}", stderr.trim()));
        }
    };
    let answer = result["result"].as_str().unwrap_or_default().to_string();
    let is_error = result["is_error"].as_bool().unwrap_or(true);
    let structured = json!({
        "session_id": result["session_id"],
        "result": answer,
        "is_error": is_error,
        "subtype": result["subtype"],
        "total_cost_usd": result["total_cost_usd"],
        "permission_denials": result["permission_denials"],
    });
    let text = if is_error {
        let errors: Vec<&str> = result["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        format!("robota failed: {}", errors.join("; "))
    } else {
        answer
    };
    let mut tool_result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    tool_result.structured_content = Some(structured);
    tool_result
}
