//! The session's ways to the program on the other end of the pipe: hook callbacks
//! (`CallbackBridge`) and messages for its in-process MCP servers (`McpBridge`) become asks
//! for the driver's loop, which owns stdout and reads the answers. Also the startup wait,
//! during which the program's MCP servers are answered before the loop runs.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::core::hooks::{HookCallbackError, HookCallbacks};
use crate::tools::mcp::{SdkMcpAnswer, SdkMcpError, SdkMcpRouter};

use super::super::super::printer::Printer;

/// One hook callback to ask of the program.
pub(super) struct CallbackAsk {
    pub(super) callback_id: String,
    pub(super) input: Value,
    pub(super) answer: oneshot::Sender<Result<Value, HookCallbackError>>,
}

/// The session's way to the program's hook callbacks: each call becomes a `CallbackAsk`
/// for the driver's loop, which owns stdout and reads the answer.
pub(super) struct CallbackBridge {
    pub(super) asks: mpsc::UnboundedSender<CallbackAsk>,
}

#[async_trait::async_trait]
impl HookCallbacks for CallbackBridge {
    async fn call(
        &self,
        callback_id: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<Value, HookCallbackError> {
        let (answer, answered) = oneshot::channel();
        self.asks
            .send(CallbackAsk {
                callback_id: callback_id.to_string(),
                input: input.clone(),
                answer,
            })
            .map_err(|_| {
                HookCallbackError::Unanswered(
                    "the program that registered the hook is gone".to_string(),
                )
            })?;
        tokio::select! {
            answer = answered => answer.unwrap_or_else(|_| Err(HookCallbackError::Unanswered("the hook callback got no answer".to_string()))),
            _ = cancel.cancelled() => Err(HookCallbackError::Cancelled),
        }
    }
}

/// The ids of the control requests robota sends the program (`robota_hook_1`,
/// `robota_mcp_2` …): one counter for every kind, so no two requests share an id.
#[derive(Debug)]
pub(super) struct RequestIds(u64);

impl Default for RequestIds {
    fn default() -> Self {
        RequestIds(1)
    }
}

impl RequestIds {
    /// The next id for a request of `kind` (`hook`, `mcp`, `perm`).
    pub(super) fn next(&mut self, kind: &str) -> String {
        let id = format!("robota_{kind}_{}", self.0);
        self.0 += 1;
        id
    }
}

/// What happened on the pipe while the MCP servers connected.
#[derive(Default)]
pub(super) struct Early {
    /// Input lines read meanwhile, for the driver to handle in order.
    pub(super) lines: Vec<String>,
    /// `mcp_message`s still unanswered when the wait ended.
    pub(super) mcp_calls: HashMap<String, oneshot::Sender<Result<Option<Value>, SdkMcpError>>>,
    pub(super) request_ids: RequestIds,
    pub(super) input_closed: bool,
}

/// Waits (up to the startup wait) for the MCP servers to connect, sending the program's
/// in-process servers their messages and reading their answers meanwhile; other input
/// lines are kept for later.
pub(super) async fn settle_servers(
    mcp: &crate::sdk::mcp::McpManager,
    printer: &mut Printer,
    lines: &mut mpsc::UnboundedReceiver<String>,
    asks: &mut mpsc::UnboundedReceiver<McpAsk>,
) -> Early {
    let mut early = Early::default();
    let settled = mcp.wait_settled(crate::sdk::mcp::startup_wait());
    tokio::pin!(settled);
    loop {
        tokio::select! {
            () = &mut settled => break,
            Some(ask) = asks.recv(), if !early.input_closed => {
                let request_id = early.request_ids.next("mcp");
                printer.print(&mcp_message(&request_id, &ask).to_string());
                early.mcp_calls.insert(request_id, ask.answer);
            }
            line = lines.recv(), if !early.input_closed => match line {
                Some(line) => {
                    let answered = serde_json::from_str::<Value>(&line).ok().and_then(|v| {
                        let response = v.get("response")?;
                        let id = response.get("request_id")?.as_str()?;
                        let waiting = early.mcp_calls.remove(id)?;
                        let _ = waiting.send(mcp_answer(response));
                        Some(())
                    });
                    if answered.is_none() {
                        early.lines.push(line);
                    }
                }
                None => early.input_closed = true,
            },
        }
    }
    early
}

/// The `control_request` that carries one message to a program's MCP server.
pub(super) fn mcp_message(request_id: &str, ask: &McpAsk) -> Value {
    json!({
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "mcp_message",
            "server_name": ask.server,
            "message": ask.message,
        },
    })
}

/// The server's answer in a `control_response` to an `mcp_message`.
pub(super) fn mcp_answer(response: &Value) -> Result<Option<Value>, SdkMcpError> {
    if response.get("subtype").and_then(Value::as_str) == Some("success") {
        Ok(response
            .get("response")
            .and_then(|r| r.get("mcp_response"))
            .cloned())
    } else {
        let error = response.get("error").and_then(Value::as_str).unwrap_or("");
        Err(SdkMcpError::Failed(error.to_string()))
    }
}

/// One message for a program's MCP server, for the driver's loop to send.
pub(super) struct McpAsk {
    pub(super) server: String,
    pub(super) message: Value,
    pub(super) answer: oneshot::Sender<Result<Option<Value>, SdkMcpError>>,
}

/// The session's way to the program's in-process MCP servers: each message becomes an
/// `McpAsk` for the driver's loop, which owns stdout and reads the answer.
pub(super) struct McpBridge {
    pub(super) asks: mpsc::UnboundedSender<McpAsk>,
}

impl SdkMcpRouter for McpBridge {
    fn message(&self, server: &str, message: Value) -> SdkMcpAnswer {
        let (answer, answered) = oneshot::channel();
        let ask = McpAsk {
            server: server.to_string(),
            message,
            answer,
        };
        if let Err(mpsc::error::SendError(ask)) = self.asks.send(ask) {
            let _ = ask.answer.send(Err(SdkMcpError::Unanswered(
                "the program that runs the SDK server is gone".to_string(),
            )));
        }
        answered
    }
}
