//! Test support: a loopback mock model server (DESIGN §13). `MockServer` is a synchronous,
//! thread-based HTTP/1.1 server on 127.0.0.1 built on `std::net`, usable from plain
//! `#[test]`s that spawn the real binary and from tokio tests alike. It serves a script of
//! responses in order, one per POST, each SSE chunk written and flushed on its own, can cut
//! a stream or hold it open, and records every request. `anthropic` builds real Anthropic
//! SSE bytes and replays the recorded fixtures.

#![allow(dead_code)]

pub mod acp_peer;
pub mod anthropic;
pub mod background;
pub mod big_log;
pub mod gemini;
pub mod harness;
pub mod mitm;
pub mod openai_chat;
pub mod openai_responses;
pub mod process;
pub mod project;
pub mod pty;
pub mod python;
pub mod sdk_peer;
pub mod session;
pub mod skip;
pub mod tls;

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// The recorded provider streams (`tests/fixtures/wire/`, copies of the shared corpus).
pub fn wire_fixture_path(relative: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wire")).join(relative)
}

/// A loopback URL nothing listens on (a port bound, then freed): connections are refused.
pub fn refused_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(9);
    format!("http://127.0.0.1:{port}")
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum MockResponse {
    /// `200 text/event-stream`, no content length, `Connection: close`; each chunk is one write.
    Sse {
        chunks: Vec<Vec<u8>>,
        /// Drop the connection after this many chunks.
        cut_after: Option<usize>,
        /// After this many chunks, write nothing until `release_held()` or the client leaves.
        hold_after: Option<usize>,
    },
    /// A complete response with a content length.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Bytes written as they are (status line, headers and body), then the connection closes.
    Raw(Vec<u8>),
    /// `200 text/event-stream`: the `head` chunks, then one byte of an event that never
    /// completes every `every`, at most `bytes` of them, then the connection closes.
    Trickle {
        head: Vec<Vec<u8>>,
        every: Duration,
        bytes: usize,
    },
}

impl MockResponse {
    pub fn sse(chunks: Vec<Vec<u8>>) -> MockResponse {
        MockResponse::Sse {
            chunks,
            cut_after: None,
            hold_after: None,
        }
    }
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when it is not JSON.
    pub body: serde_json::Value,
    /// The body bytes as received.
    pub raw_body: Vec<u8>,
    /// How long the mock took to parse the body (a bench subtracts the mock's own time).
    pub parsed_in: Duration,
}

impl RecordedRequest {
    /// A header value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Answers a request from what it holds (a mock that decides rather than replays).
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> MockResponse + Send + Sync>;

#[derive(Default)]
struct State {
    script: VecDeque<MockResponse>,
    /// When set, every POST is answered by it and no request is kept.
    responder: Option<Responder>,
    requests: Vec<RecordedRequest>,
    shutdown: bool,
    held_now: usize,
    release_epoch: u64,
    early_release: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// Time a responder mock spent parsing requests and deciding answers, in ns.
    busy_ns: std::sync::atomic::AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The loopback mock model server. Dropping it stops accepting and ends held streams.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Serves `script` in order, one response per POST; past its end every POST gets a 500
    /// `api_error` "mock script exhausted".
    pub fn start(script: Vec<MockResponse>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        shared.lock().script = script.into();
        let accept_shared = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if accept_shared.lock().shutdown {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let conn_shared = Arc::clone(&accept_shared);
                std::thread::spawn(move || serve_connection(conn_shared, conn));
            }
        });
        MockServer {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// Answers every POST with `respond(request)` instead of a script, keeping no requests
    /// (a long bench's thousands of large bodies would fill the bench's own memory).
    pub fn start_responder(respond: Responder) -> MockServer {
        let server = MockServer::start(Vec::new());
        server.shared.lock().responder = Some(respond);
        server
    }

    /// The time a responder mock has spent so far parsing requests and deciding answers.
    pub fn busy(&self) -> Duration {
        Duration::from_nanos(
            self.shared
                .busy_ns
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The loopback address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `n` requests arrived; false when `timeout` passed first.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let guard = self.shared.lock();
        let (guard, _) = self
            .shared
            .changed
            .wait_timeout_while(guard, timeout, |st| st.requests.len() < n)
            .unwrap_or_else(|p| p.into_inner());
        guard.requests.len() >= n
    }

    /// Lets the streams held now finish; when none is held, the next one to reach its hold
    /// point is not held.
    pub fn release_held(&self) {
        let mut st = self.shared.lock();
        if st.held_now > 0 {
            st.release_epoch += 1;
        } else {
            st.early_release = true;
        }
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Appends responses to the script.
    pub fn push(&self, response: MockResponse) {
        self.shared.lock().script.push_back(response);
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn exhausted() -> MockResponse {
    MockResponse::Http {
        status: 500,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"api_error","message":"mock script exhausted"}}"#
            .to_string(),
    }
}

fn serve_connection(shared: Arc<Shared>, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    let _ = stream.set_read_timeout(None);
    let responder = shared.lock().responder.clone();
    let response = if let Some(respond) = responder.filter(|_| request.method == "POST") {
        let deciding = std::time::Instant::now();
        let response = respond(&request);
        let busy = request.parsed_in + deciding.elapsed();
        shared.busy_ns.fetch_add(
            u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX),
            std::sync::atomic::Ordering::Relaxed,
        );
        response
    } else {
        let mut st = shared.lock();
        let is_post = request.method == "POST";
        st.requests.push(request);
        if is_post {
            st.script.pop_front().unwrap_or_else(exhausted)
        } else {
            MockResponse::Http {
                status: 404,
                headers: vec![],
                body: r#"{"type":"error","error":{"type":"not_found_error","message":"mock serves POST only"}}"#.into(),
            }
        }
    };
    shared.changed.notify_all();
    match response {
        MockResponse::Raw(bytes) => {
            let _ = stream.write_all(&bytes).and_then(|_| stream.flush());
        }
        MockResponse::Http {
            status,
            headers,
            body,
        } => {
            let _ = stream.write_all(&http_bytes(status, &headers, &body));
            let _ = stream.flush();
        }
        MockResponse::Sse {
            chunks,
            cut_after,
            hold_after,
        } => write_sse(&shared, &mut stream, &chunks, cut_after, hold_after),
        MockResponse::Trickle { head, every, bytes } => {
            write_sse(&shared, &mut stream, &head, None, None);
            // The server's own pace (not a test waiting on time): `data: xxxx…` with no end.
            let mut event = b"data: ".to_vec();
            event.resize(bytes, b'x');
            for byte in event {
                std::thread::sleep(every);
                if stream
                    .write_all(&[byte])
                    .and_then(|_| stream.flush())
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}

fn write_sse(
    shared: &Arc<Shared>,
    stream: &mut TcpStream,
    chunks: &[Vec<u8>],
    cut_after: Option<usize>,
    hold_after: Option<usize>,
) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                request-id: req_mock\r\nconnection: close\r\n\r\n";
    if stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.flush())
        .is_err()
    {
        return;
    }
    for i in 0..=chunks.len() {
        if cut_after == Some(i) {
            return;
        }
        if hold_after == Some(i) && !hold(shared, stream) {
            return;
        }
        let Some(chunk) = chunks.get(i) else { return };
        if stream
            .write_all(chunk)
            .and_then(|_| stream.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Blocks until released, the client disconnects or the server stops; true = go on writing.
fn hold(shared: &Arc<Shared>, stream: &TcpStream) -> bool {
    let disconnected = Arc::new(AtomicBool::new(false));
    if let Ok(mut watch) = stream.try_clone() {
        let flag = Arc::clone(&disconnected);
        let shared = Arc::clone(shared);
        // Learns of the client going away: its read ends at EOF or reset. It also ends when
        // this connection is shut down after the stream, so it never outlives it for long.
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            loop {
                match watch.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            let guard = shared.lock();
            flag.store(true, Ordering::SeqCst);
            drop(guard);
            shared.changed.notify_all();
        });
    }
    let mut st = shared.lock();
    if st.early_release {
        st.early_release = false;
        return true;
    }
    st.held_now += 1;
    let epoch = st.release_epoch;
    while !st.shutdown && st.release_epoch == epoch && !disconnected.load(Ordering::SeqCst) {
        st = shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
    }
    st.held_now -= 1;
    !st.shutdown && !disconnected.load(Ordering::SeqCst)
}

fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut piece).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split_whitespace();
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let content_length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < content_length {
        let n = stream.read(&mut piece).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&piece[..n]);
    }
    let raw_body = body;
    let parsing = std::time::Instant::now();
    let body = serde_json::from_slice(&raw_body).unwrap_or(serde_json::Value::Null);
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        raw_body,
        parsed_in: parsing.elapsed(),
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn http_bytes(status: u16, headers: &[(String, String)], body: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        out.push_str("content-type: application/json\r\n");
    }
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
