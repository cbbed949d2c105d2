//! JSON-RPC 2.0 over a language server's stdio: the `Content-Length` framing, requests
//! matched to their responses by id (each with a deadline), notifications sent, and what
//! the server sends unasked — its notifications handed to a callback, its requests answered
//! by another (`workspace/configuration`, progress tokens, capability registration).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::LspError;

/// Largest message read from a server (a workspace-symbol answer can be large).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, LspError>>>>>;

/// Called with each notification's method and params.
pub(crate) type NotificationHandler = Box<dyn Fn(&str, Value) + Send + Sync>;
/// Called with each server request's method and params; its result, or `None` for
/// "method not found".
pub(crate) type RequestHandler = Box<dyn Fn(&str, &Value) -> Option<Value> + Send + Sync>;

/// What the server sends unasked: `on_notification(method, params)`, and
/// `on_request(method, params)` whose answer is sent back (`Err` is a JSON-RPC error).
pub(crate) struct Handlers {
    /// A notification (`textDocument/publishDiagnostics`, `window/logMessage`, …).
    pub on_notification: NotificationHandler,
    /// A request from the server; its result, or `None` for "method not found".
    pub on_request: RequestHandler,
}

/// One JSON-RPC connection to a server.
pub(crate) struct Connection {
    outgoing: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: AtomicI64,
    /// Fires when the server's output ends (it exited or closed stdout).
    closed: CancellationToken,
}

impl Connection {
    /// Starts reading `input` and writing `output` in the background.
    pub(crate) fn start<R, W>(input: R, output: W, handlers: Handlers) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, queue) = mpsc::unbounded_channel();
        let pending: Pending = Arc::default();
        let closed = CancellationToken::new();
        tokio::spawn(write_loop(output, queue, closed.clone()));
        tokio::spawn(read_loop(
            BufReader::new(input),
            pending.clone(),
            outgoing.clone(),
            handlers,
            closed.clone(),
        ));
        Connection {
            outgoing,
            pending,
            next_id: AtomicI64::new(1),
            closed,
        }
    }

    /// Whether the server's output has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Sends a request and waits for its result, at most `deadline`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        deadline: Duration,
    ) -> Result<Value, LspError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.outgoing.send(message).is_err() {
            self.forget(id);
            return Err(LspError::Closed);
        }
        let answer = tokio::select! {
            answer = rx => answer.unwrap_or(Err(LspError::Closed)),
            _ = self.closed.cancelled() => Err(LspError::Closed),
            _ = tokio::time::sleep(deadline) => Err(LspError::Timeout {
                method: method.to_string(),
                after: deadline,
            }),
        };
        if answer.is_err() {
            self.forget(id);
            if matches!(answer, Err(LspError::Timeout { .. })) {
                self.notify("$/cancelRequest", json!({"id": id}));
            }
        }
        answer
    }

    /// Sends a notification (no answer).
    pub(crate) fn notify(&self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = self.outgoing.send(message);
    }

    fn forget(&self, id: i64) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&id);
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut output: W,
    mut queue: mpsc::UnboundedReceiver<Value>,
    closed: CancellationToken,
) {
    while let Some(message) = queue.recv().await {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        if output.write_all(frame.as_bytes()).await.is_err() || output.flush().await.is_err() {
            closed.cancel();
            return;
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut input: BufReader<R>,
    pending: Pending,
    outgoing: mpsc::UnboundedSender<Value>,
    handlers: Handlers,
    closed: CancellationToken,
) {
    while let Ok(Some(message)) = read_message(&mut input).await {
        dispatch(message, &pending, &outgoing, &handlers);
    }
    closed.cancel();
    if let Ok(mut pending) = pending.lock() {
        for (_, waiter) in pending.drain() {
            let _ = waiter.send(Err(LspError::Closed));
        }
    }
}

/// Routes one message: a response to its waiter, a request to `on_request` (answered), a
/// notification to `on_notification`.
fn dispatch(
    message: Value,
    pending: &Pending,
    outgoing: &mpsc::UnboundedSender<Value>,
    handlers: &Handlers,
) {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(method), Some(id)) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let answer = match (handlers.on_request)(method, &params) {
                Some(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                None => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("robota does not handle {method}")}}),
            };
            let _ = outgoing.send(answer);
        }
        (Some(method), None) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            (handlers.on_notification)(method, params);
        }
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let waiter = pending.lock().ok().and_then(|mut p| p.remove(&id));
            let Some(waiter) = waiter else { return };
            let result = match message.get("error") {
                Some(error) => Err(LspError::Rpc {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                }),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiter.send(result);
        }
        (None, None) => {}
    }
}

/// Reads one framed message; `None` at the end of the stream.
async fn read_message<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
) -> Result<Option<Value>, LspError> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let header = line.trim_end();
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE_BYTES {
        return Err(LspError::Protocol(format!(
            "a message of {length} bytes is over the limit"
        )));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body).await?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| LspError::Protocol(format!("a message is not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Handlers {
        Handlers {
            on_notification: Box::new(|_, _| {}),
            on_request: Box::new(|method, _| (method == "known").then(|| json!(42))),
        }
    }

    async fn write_frame<W: AsyncWrite + Unpin>(out: &mut W, value: Value) {
        let body = value.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        out.write_all(frame.as_bytes()).await.unwrap();
    }

    #[tokio::test]
    async fn a_request_gets_its_answer_and_server_requests_are_answered() {
        let (client_side, server_side) = tokio::io::duplex(4096);
        let (client_read, client_write) = tokio::io::split(client_side);
        let connection = Connection::start(client_read, client_write, quiet());
        let (server_read, mut server_write) = tokio::io::split(server_side);
        let mut server_read = BufReader::new(server_read);
        let ask = connection.request("hello", json!({}), Duration::from_secs(5));
        let serve = async {
            let request = read_message(&mut server_read).await.unwrap().unwrap();
            assert_eq!(request["method"], "hello");
            write_frame(
                &mut server_write,
                json!({"jsonrpc": "2.0", "id": 7, "method": "known"}),
            )
            .await;
            write_frame(
                &mut server_write,
                json!({"jsonrpc": "2.0", "id": 8, "method": "other"}),
            )
            .await;
            let answer = read_message(&mut server_read).await.unwrap().unwrap();
            assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 7, "result": 42}));
            let refusal = read_message(&mut server_read).await.unwrap().unwrap();
            assert_eq!(refusal["error"]["code"], -32601);
            let id = request["id"].clone();
            write_frame(
                &mut server_write,
                json!({"jsonrpc": "2.0", "id": id, "result": "hi"}),
            )
            .await;
        };
        let (answer, ()) = tokio::join!(ask, serve);
        assert_eq!(answer.unwrap(), json!("hi"));
    }

    #[tokio::test]
    async fn a_silent_server_times_out_and_a_closed_one_fails_at_once() {
        let (client_side, server_side) = tokio::io::duplex(4096);
        let (client_read, client_write) = tokio::io::split(client_side);
        let connection = Connection::start(client_read, client_write, quiet());
        let answer = connection
            .request("slow", json!({}), Duration::from_millis(50))
            .await;
        assert!(
            matches!(answer, Err(LspError::Timeout { .. })),
            "{answer:?}"
        );
        drop(server_side);
        let answer = connection
            .request("gone", json!({}), Duration::from_secs(30))
            .await;
        assert!(matches!(answer, Err(LspError::Closed)), "{answer:?}");
        assert!(connection.is_closed());
    }
}
