//! The real `robota` binary started as the Claude Agent SDK starts it
//! (`--output-format stream-json --verbose --input-format stream-json`), over real pipes:
//! messages written one at a time, every stdout line read as JSON.
#![allow(dead_code)]

use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::MockServer;
use super::project::Project;

pub const SDK_FLAGS: &[&str] = &[
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

/// A running robota on the other end of two pipes.
pub struct Peer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<Value>,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
}

impl Peer {
    pub fn start(p: &Project, server: &MockServer, print: bool) -> Peer {
        Peer::start_with(p, server, if print { &["-p"] } else { &[] })
    }

    pub fn start_with(p: &Project, server: &MockServer, extra: &[&str]) -> Peer {
        Peer::start_with_env(p, server, extra, &[])
    }

    /// `start_with`, with these environment variables set for robota.
    pub fn start_with_env(
        p: &Project,
        server: &MockServer,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Peer {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend_from_slice(SDK_FLAGS);
        let mut command = p.command(server, &args);
        command.envs(env.iter().copied());
        let mut child = command
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
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, value: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn user(&mut self, text: &str) {
        self.send(json!({
            "type": "user",
            "session_id": "",
            "parent_tool_use_id": null,
            "message": {"role": "user", "content": text},
        }));
    }

    pub fn control(&mut self, id: &str, request: Value) {
        self.send(json!({"type": "control_request", "request_id": id, "request": request}));
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

    pub fn result(&mut self) -> Value {
        self.until("result", |v| v["type"] == "result")
    }

    /// The `response` of the control_response to `id`.
    pub fn response(&mut self, id: &str) -> Value {
        let id = id.to_string();
        self.until("control_response", move |v| {
            v["type"] == "control_response" && v["response"]["request_id"] == id.as_str()
        })["response"]
            .clone()
    }

    /// Closes stdin and waits for the exit; returns the exit code and what was left.
    pub fn finish(mut self) -> (Option<i32>, Vec<Value>) {
        drop(self.stdin.take());
        let rest: Vec<Value> = self.lines.iter().collect();
        let status = self.child.wait().unwrap();
        (status.code(), rest)
    }
}

/// How many `result` messages are among these.
pub fn peer_results(values: &[Value]) -> usize {
    values.iter().filter(|v| v["type"] == "result").count()
}
