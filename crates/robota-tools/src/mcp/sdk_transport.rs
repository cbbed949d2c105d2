//! The transport to an MCP server that lives inside the Claude Agent SDK program which
//! started robota (`create_sdk_mcp_server` in Python): every JSON-RPC message rmcp's client
//! writes is handed to an [`SdkMcpRouter`] (the protocol driver, which sends it as an
//! `mcp_message` control request and waits for the program's `mcp_response`), and the
//! response is fed back to the client. rmcp sees an ordinary newline-delimited stream, so
//! the handshake, listing and calls are the same code as for stdio servers.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};

/// How much one direction of the in-memory stream buffers.
const PIPE_BYTES: usize = 256 * 1024;

/// Why a message to a program's in-process server got no answer; the text goes back to
/// the client as the JSON-RPC error's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdkMcpError {
    /// The message could not be passed on, or nobody will answer it any more; says why.
    #[error("{0}")]
    Unanswered(String),
    /// The program answered with an error (its message).
    #[error("the SDK MCP server failed: {0}")]
    Failed(String),
    /// The driver dropped the question without answering it.
    #[error("the SDK server's answer was lost")]
    Lost,
}

/// The program's answer to one message: a JSON-RPC response for a request (anything or
/// nothing for a notification), or why there is none.
pub type SdkMcpAnswer = oneshot::Receiver<Result<Option<Value>, SdkMcpError>>;

/// Where messages for a program's in-process MCP servers go.
pub trait SdkMcpRouter: Send + Sync {
    /// Hands one JSON-RPC message for the program's server `server` on, in the order of
    /// the calls; the answer comes on the receiver.
    fn message(&self, server: &str, message: Value) -> SdkMcpAnswer;
}

/// The client's ends of a stream whose other end carries each message to `router` for
/// `server`. The bridge ends when the client closes its end.
pub fn connect(
    server: &str,
    router: Arc<dyn SdkMcpRouter>,
) -> (ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) {
    let (client, bridge) = tokio::io::duplex(PIPE_BYTES);
    let (bridge_read, mut bridge_write) = tokio::io::split(bridge);
    let (answers, mut to_write) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        while let Some(answer) = to_write.recv().await {
            let mut line = answer.to_string();
            line.push('\n');
            if bridge_write.write_all(line.as_bytes()).await.is_err() {
                return;
            }
        }
    });
    let server = server.to_string();
    tokio::spawn(async move {
        let mut lines = BufReader::new(bridge_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                tracing::warn!("mcp {server}: the client wrote a line that is not JSON");
                continue;
            };
            let id = message.get("id").cloned();
            let is_request = id.is_some() && message.get("method").is_some();
            // Passed on in order; each answer is awaited on its own (a slow tool call does
            // not hold back a cancel).
            let answer = router.message(&server, message);
            let answers = answers.clone();
            tokio::spawn(async move {
                let answer = answer.await.unwrap_or(Err(SdkMcpError::Lost));
                if !is_request {
                    return;
                }
                let response = match answer {
                    Ok(Some(response)) => response,
                    Ok(None) => serde_json::json!({
                        "jsonrpc": "2.0", "id": id,
                        "error": {"code": -32603, "message": "the SDK server sent no response"},
                    }),
                    Err(error) => serde_json::json!({
                        "jsonrpc": "2.0", "id": id,
                        "error": {"code": -32603, "message": error.to_string()},
                    }),
                };
                let _ = answers.send(response);
            });
        }
    });
    tokio::io::split(client)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    struct Echo {
        seen: Mutex<Vec<(String, Value)>>,
    }

    impl SdkMcpRouter for Echo {
        fn message(&self, server: &str, message: Value) -> SdkMcpAnswer {
            self.seen
                .lock()
                .unwrap()
                .push((server.to_string(), message.clone()));
            let (tx, rx) = oneshot::channel();
            let answer = if message["method"] == "fail" {
                Err(SdkMcpError::Unanswered("the program is gone".into()))
            } else {
                Ok(Some(
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"echo": message["method"]}}),
                ))
            };
            let _ = tx.send(answer);
            rx
        }
    }

    #[tokio::test]
    async fn requests_are_answered_and_notifications_are_only_passed_on() {
        let router = Arc::new(Echo {
            seen: Mutex::new(Vec::new()),
        });
        let (read, mut write) = connect("calc", router.clone());
        let mut lines = BufReader::new(read).lines();
        for message in [
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ] {
            write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let answer: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["result"]["echo"], "tools/list");
        write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fail\"}\n")
            .await
            .unwrap();
        let failed: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(failed["error"]["message"], "the program is gone");
        let seen = router.seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(
            seen[0].1["method"], "notifications/initialized",
            "order kept"
        );
        assert!(seen.iter().all(|(server, _)| server == "calc"));
    }
}
