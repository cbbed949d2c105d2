//! The real `robota acp` binary as an editor runs it, over real pipes: JSON-RPC 2.0 lines
//! written and read, requests from robota (`session/request_permission`) answered by the
//! test.
#![allow(dead_code)]

use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::MockServer;
use super::project::Project;

pub struct AcpPeer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<Value>,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
    next_id: u64,
}

impl AcpPeer {
    pub fn start(p: &Project, server: &MockServer, extra: &[&str]) -> AcpPeer {
        let mut args = vec!["acp"];
        args.extend_from_slice(extra);
        let mut child = p
            .command(server, &args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                assert_eq!(value["jsonrpc"], "2.0", "{value}");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        AcpPeer {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            next_id: 1,
        }
    }

    pub fn send(&mut self, value: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers a request robota sent.
    pub fn respond(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Reads until a message matches; fails after 30 s.
    pub fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            let value = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("no {what} ({e}); read so far: {:#?}", self.seen));
            self.seen.push(value.clone());
            if matches(&value) {
                return value;
            }
        }
    }

    /// The whole response (result or error) to request `id`.
    pub fn response(&mut self, id: u64) -> Value {
        self.until(&format!("response {id}"), |v| {
            v["id"] == id && v.get("method").is_none()
        })
    }

    /// The result of request `id`; fails on an error response.
    pub fn result(&mut self, id: u64) -> Value {
        let response = self.response(id);
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// The next request robota sends with `method`.
    pub fn incoming(&mut self, method: &str) -> Value {
        self.until(method, |v| v["method"] == method && v.get("id").is_some())
    }

    pub fn initialize(&mut self) -> Value {
        self.initialize_offering(
            json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}),
        )
    }

    /// `initialize` with these `clientCapabilities`.
    pub fn initialize_offering(&mut self, capabilities: Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        );
        self.result(id)
    }

    /// Reads until the response to request `id`, answering every request robota sends with
    /// `answer(method, params)` (`None`: left unanswered). Returns the response.
    pub fn serve_until(
        &mut self,
        id: u64,
        mut answer: impl FnMut(&str, &Value) -> Option<Value>,
    ) -> Value {
        loop {
            let message = self.until(&format!("response {id}"), |_| true);
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            if let (Some(method), Some(request_id)) =
                (message["method"].as_str(), message.get("id"))
                && let Some(result) = answer(method, &message["params"])
            {
                self.respond(&request_id.clone(), result);
            }
        }
    }

    /// The methods of the requests robota sent so far, in order.
    pub fn requests_received(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|v| v.get("id").is_some())
            .filter_map(|v| v["method"].as_str().map(str::to_string))
            .collect()
    }

    /// `session/new` in `cwd`; returns the session id.
    pub fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        self.result(id)["sessionId"].as_str().unwrap().to_string()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// The `update`s of the `session/update` notifications read so far, in order.
    pub fn updates(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|v| v["method"] == "session/update")
            .map(|v| v["params"]["update"].clone())
            .collect()
    }

    /// Closes stdin and waits for the exit; returns the exit code.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let rest: Vec<Value> = self.lines.iter().collect();
        self.seen.extend(rest);
        self.child.wait().unwrap().code()
    }
}

/// The text of the `*_chunk` updates of one kind, joined.
pub fn chunk_text(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}
