//! Test support for the HTTP transports' tests: reading one HTTP/1.1 request off a
//! loopback connection (request line, headers, a `Content-Length` body), writing chunks
//! of a chunked response, and a tiny MCP server's answers (`initialize`, an `echo` tool),
//! so fake MCP servers need no HTTP framework.

use serde_json::{Value, json};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One request as the fake servers see it.
pub struct Request {
    /// `METHOD /path?query HTTP/1.1`.
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }
}

/// Reads the next request; `None` when the peer hung up first.
pub async fn read_request(conn: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if conn.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if conn.read_line(&mut header).await.ok()? == 0 {
            return None;
        }
        let header = header.trim();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut request = Request {
        line: line.trim().to_string(),
        headers,
        body: Vec::new(),
    };
    let length: usize = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    request.body = vec![0; length];
    conn.read_exact(&mut request.body).await.ok()?;
    Some(request)
}

/// Writes `text` as one chunk of a chunked body.
pub async fn write_chunk(conn: &mut TcpStream, text: &str) -> std::io::Result<()> {
    let chunk = format!("{:x}\r\n{text}\r\n", text.len());
    conn.write_all(chunk.as_bytes()).await
}

/// The fake server's answer to a JSON-RPC message: `initialize`, `tools/list` (one `echo`
/// tool) and `tools/call` (echoing `message`); nothing for anything else.
pub fn answer_to(message: &Value) -> Option<Value> {
    let result = match message["method"].as_str()? {
        "initialize" => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({
            "content": [{"type": "text", "text": message["params"]["arguments"]["message"]}],
        }),
        _ => return None,
    };
    Some(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
}
