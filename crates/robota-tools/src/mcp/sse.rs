//! The legacy HTTP+SSE transport of MCP (protocol 2024-11-05), which rmcp dropped in 0.11
//! and servers still offer: the client GETs an event stream whose first `endpoint` event
//! names the URL to POST JSON-RPC messages to (resolved against the stream's URL, and of
//! the same origin); the server's messages arrive as `message` events. A later `endpoint`
//! event moves the POST URL. A stream that breaks is reopened (with `Last-Event-ID`) a few
//! times before the connection counts as closed; a stream the server ends closes it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::Sse;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use url::Url;

use super::event_stream::{
    EVENT_STREAM, EventStream, JSON, MAX_EVENT_BYTES, events, media_type_is,
};

/// How many times a broken stream is reopened before the connection is given up.
const REOPEN_TRIES: usize = 3;
/// How long to wait before reopening, unless the server said otherwise (`retry:`).
const REOPEN_DELAY: Duration = Duration::from_secs(1);
/// How many server messages wait for the client to take them.
const INBOX: usize = 64;
/// How much of an error answer's body is kept for the message.
const ERROR_BODY_BYTES: usize = 500;

/// Why the transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseTransportError {
    #[error("the server's URL is not valid: {0}")]
    BadUrl(#[from] url::ParseError),
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    #[error("the server answered {status}: {body}")]
    Status {
        status: reqwest::StatusCode,
        body: String,
    },
    #[error("the server did not answer with an event stream (content type {0:?})")]
    NotAnEventStream(Option<String>),
    #[error("the event stream ended before its `endpoint` event")]
    NoEndpoint,
    #[error("the event stream broke: {0}")]
    Stream(#[from] sse_stream::Error),
    #[error("the `endpoint` event {endpoint:?} is not a URL of the server's origin{reason}")]
    BadEndpoint { endpoint: String, reason: String },
    #[error("a message could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A connected legacy SSE server.
pub struct SseTransport {
    client: reqwest::Client,
    endpoint: Arc<Mutex<Url>>,
    inbox: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: JoinHandle<()>,
}

impl SseTransport {
    /// Opens the event stream at `url` and waits for the `endpoint` event.
    pub async fn connect(client: reqwest::Client, url: &str) -> Result<Self, SseTransportError> {
        let url = Url::parse(url)?;
        let mut stream = open(&client, &url, None).await?;
        let mut place = Place::default();
        let endpoint = loop {
            let event = stream.next().await.ok_or(SseTransportError::NoEndpoint)??;
            place.note(&event);
            if event.event.as_deref() == Some("endpoint") {
                break endpoint_of(&url, event.data.as_deref().unwrap_or_default())?;
            }
        };
        let endpoint = Arc::new(Mutex::new(endpoint));
        let (to_inbox, inbox) = mpsc::channel(INBOX);
        let reader = Reader {
            client: client.clone(),
            url,
            endpoint: endpoint.clone(),
            inbox: to_inbox,
        };
        let reader = tokio::spawn(reader.run(stream, place));
        Ok(SseTransport {
            client,
            endpoint,
            inbox,
            reader,
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = current(&self.endpoint);
        async move {
            let body = serde_json::to_vec(&item)?;
            let response = client
                .post(endpoint)
                .header(CONTENT_TYPE, JSON)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            if status.is_success() {
                return Ok(());
            }
            let body = response.text().await.unwrap_or_default();
            let cut = (0..=body.len().min(ERROR_BODY_BYTES))
                .rev()
                .find(|i| body.is_char_boundary(*i))
                .unwrap_or(0);
            Err(SseTransportError::Status {
                status,
                body: body[..cut].trim().to_string(),
            })
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.inbox.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.inbox.close();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Where the stream had got to, for reopening it: the last event id and the server's
/// `retry:` delay.
#[derive(Debug, Default)]
struct Place {
    last_id: Option<String>,
    delay: Option<Duration>,
}

impl Place {
    fn note(&mut self, event: &Sse) {
        if let Some(id) = &event.id {
            self.last_id = Some(id.clone());
        }
        if let Some(ms) = event.retry {
            self.delay = Some(Duration::from_millis(ms));
        }
    }
}

/// The task reading the event stream.
struct Reader {
    client: reqwest::Client,
    url: Url,
    endpoint: Arc<Mutex<Url>>,
    inbox: mpsc::Sender<ServerJsonRpcMessage>,
}

impl Reader {
    async fn run(self, mut stream: EventStream, mut place: Place) {
        loop {
            match stream.next().await {
                Some(Ok(event)) => {
                    place.note(&event);
                    if !self.take(event).await {
                        return;
                    }
                }
                // The server ended the stream: the session is over.
                None => return,
                Some(Err(e)) => {
                    tracing::warn!(url = %self.url, "MCP SSE stream broke: {e}");
                    match self.reopen(&place).await {
                        Some(reopened) => stream = reopened,
                        None => return,
                    }
                }
            }
        }
    }

    /// Handles one event; `false` once nobody takes messages any more.
    async fn take(&self, event: Sse) -> bool {
        match event.event.as_deref() {
            None | Some("") | Some("message") => {
                let Some(data) = event.data else {
                    return true;
                };
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => self.inbox.send(message).await.is_ok(),
                    Err(e) => {
                        tracing::debug!("MCP SSE server sent a message that is not JSON-RPC: {e}");
                        true
                    }
                }
            }
            Some("endpoint") => {
                match endpoint_of(&self.url, event.data.as_deref().unwrap_or_default()) {
                    Ok(endpoint) => {
                        if let Ok(mut current) = self.endpoint.lock() {
                            *current = endpoint;
                        }
                    }
                    Err(e) => tracing::warn!("MCP SSE server: {e}"),
                }
                true
            }
            _ => true,
        }
    }

    async fn reopen(&self, place: &Place) -> Option<EventStream> {
        for _ in 0..REOPEN_TRIES {
            tokio::time::sleep(place.delay.unwrap_or(REOPEN_DELAY)).await;
            if self.inbox.is_closed() {
                return None;
            }
            match open(&self.client, &self.url, place.last_id.as_deref()).await {
                Ok(stream) => return Some(stream),
                Err(e) => {
                    tracing::warn!(url = %self.url, "reopening the MCP SSE stream failed: {e}")
                }
            }
        }
        None
    }
}

/// GETs the event stream.
async fn open(
    client: &reqwest::Client,
    url: &Url,
    last_id: Option<&str>,
) -> Result<EventStream, SseTransportError> {
    let mut request = client.get(url.clone()).header(ACCEPT, EVENT_STREAM);
    if let Some(id) = last_id {
        request = request.header("Last-Event-ID", id);
    }
    let response = request.send().await?.error_for_status()?;
    match response.headers().get(CONTENT_TYPE) {
        Some(ct) if media_type_is(ct.as_bytes(), EVENT_STREAM) => {
            Ok(events(response, MAX_EVENT_BYTES))
        }
        other => {
            Err(SseTransportError::NotAnEventStream(other.map(|ct| {
                String::from_utf8_lossy(ct.as_bytes()).into_owned()
            })))
        }
    }
}

/// The POST URL an `endpoint` event names, resolved as `new URL(endpoint, stream)` is in
/// the TypeScript SDK; like it, robota posts only to the stream's own origin (the
/// configured headers, credentials among them, go with every POST).
fn endpoint_of(stream: &Url, endpoint: &str) -> Result<Url, SseTransportError> {
    let bad = |reason: String| SseTransportError::BadEndpoint {
        endpoint: endpoint.to_string(),
        reason,
    };
    let url = stream
        .join(endpoint.trim())
        .map_err(|e| bad(format!(": {e}")))?;
    if url.origin() != stream.origin() {
        return Err(bad(format!(
            " (the stream is at {})",
            stream.origin().ascii_serialization()
        )));
    }
    Ok(url)
}

fn current(endpoint: &Mutex<Url>) -> Url {
    match endpoint.lock() {
        Ok(url) => url.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::test_http::{answer_to, read_request, write_chunk};
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};

    /// A legacy SSE server on loopback: each GET is a stream whose `endpoint` event names
    /// `/message?s=<n>`; answers to POSTed requests go out on the newest stream. With
    /// `break_first`, the first stream breaks (a chunk cut short) right after its endpoint.
    struct FakeServer {
        port: u16,
        gets: Arc<Mutex<Vec<Option<String>>>>,
        posts: Arc<Mutex<Vec<String>>>,
    }

    #[derive(Clone)]
    struct State {
        break_first: bool,
        gets: Arc<Mutex<Vec<Option<String>>>>,
        posts: Arc<Mutex<Vec<String>>>,
        to_stream: mpsc::UnboundedSender<String>,
        answers: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
    }

    impl FakeServer {
        async fn start(break_first: bool) -> FakeServer {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let (to_stream, answers) = mpsc::unbounded_channel();
            let state = State {
                break_first,
                gets: Arc::default(),
                posts: Arc::default(),
                to_stream,
                answers: Arc::new(tokio::sync::Mutex::new(answers)),
            };
            let server = FakeServer {
                port,
                gets: state.gets.clone(),
                posts: state.posts.clone(),
            };
            tokio::spawn(async move {
                while let Ok((conn, _)) = listener.accept().await {
                    tokio::spawn(handle(conn, state.clone()));
                }
            });
            server
        }

        fn url(&self) -> String {
            format!("http://127.0.0.1:{}/sse", self.port)
        }
    }

    async fn handle(conn: TcpStream, state: State) {
        let mut conn = BufReader::new(conn);
        let Some(request) = read_request(&mut conn).await else {
            return;
        };
        let conn = conn.get_mut();
        if request.line.starts_with("GET /sse") {
            let n = {
                let mut gets = state.gets.lock().unwrap();
                gets.push(request.header("last-event-id").map(str::to_string));
                gets.len() - 1
            };
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            conn.write_all(head.as_bytes()).await.unwrap();
            let endpoint = format!("id: {n}\nretry: 10\nevent: endpoint\ndata: /message?s={n}\n\n");
            write_chunk(conn, &endpoint).await.unwrap();
            if n == 0 && state.break_first {
                let _ = conn.write_all(b"ff\r\ndata: cut").await;
                return;
            }
            let mut answers = state.answers.lock().await;
            while let Some(answer) = answers.recv().await {
                let event = format!("event: message\ndata: {answer}\n\n");
                if write_chunk(conn, &event).await.is_err() {
                    return;
                }
            }
            return;
        }
        let message = request.json();
        state.posts.lock().unwrap().push(request.line.clone());
        let reply = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
        conn.write_all(reply.as_bytes()).await.unwrap();
        if let Some(answer) = answer_to(&message) {
            let _ = state.to_stream.send(answer.to_string());
        }
    }

    fn client() -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test", "1"),
        )
    }

    async fn echo_through(server: &FakeServer) -> String {
        let transport = SseTransport::connect(reqwest::Client::new(), &server.url())
            .await
            .unwrap();
        let service = client().serve(transport).await.unwrap();
        let tools = service.peer().list_all_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        let mut arguments = serde_json::Map::new();
        arguments.insert("message".into(), json!("over sse"));
        let result = service
            .peer()
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
            .await
            .unwrap();
        let _ = service.cancel().await;
        result.content[0].as_text().unwrap().text.clone()
    }

    #[tokio::test]
    async fn a_server_is_reached_through_its_endpoint() {
        let server = FakeServer::start(false).await;
        assert_eq!(echo_through(&server).await, "over sse");
        let posts = server.posts.lock().unwrap().clone();
        assert!(
            posts.iter().all(|p| p.starts_with("POST /message?s=0 ")),
            "{posts:?}"
        );
        assert_eq!(*server.gets.lock().unwrap(), vec![None]);
    }

    #[tokio::test]
    async fn a_broken_stream_is_reopened_with_the_last_event_id() {
        let server = FakeServer::start(true).await;
        assert_eq!(echo_through(&server).await, "over sse");
        assert_eq!(
            *server.gets.lock().unwrap(),
            vec![None, Some("0".to_string())]
        );
        let posts = server.posts.lock().unwrap().clone();
        assert!(
            posts
                .last()
                .is_some_and(|p| p.starts_with("POST /message?s=1 ")),
            "the new endpoint is used: {posts:?}"
        );
    }

    #[tokio::test]
    async fn a_url_that_is_no_event_stream_fails_to_connect() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0; 1024];
            let _ = conn.read(&mut buf).await;
            let reply = "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n";
            conn.write_all(reply.as_bytes()).await.unwrap();
        });
        let url = format!("http://127.0.0.1:{port}/sse");
        let error = match SseTransport::connect(reqwest::Client::new(), &url).await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("connected"),
        };
        assert!(error.contains("401 Unauthorized"), "{error}");
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url() {
        let base = Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let at = |e: &str| endpoint_of(&base, e).map(|u| u.to_string());
        assert_eq!(
            at("/message?sessionId=1").unwrap(),
            "http://127.0.0.1:8000/message?sessionId=1"
        );
        assert_eq!(
            at("?sessionId=2").unwrap(),
            "http://127.0.0.1:8000/sse?sessionId=2"
        );
        assert_eq!(at("messages").unwrap(), "http://127.0.0.1:8000/messages");
        assert_eq!(
            at("http://127.0.0.1:8000/m").unwrap(),
            "http://127.0.0.1:8000/m"
        );
        let nested = Url::parse("https://h.example/api/mcp/sse").unwrap();
        assert_eq!(
            endpoint_of(&nested, "messages?x=1").unwrap().as_str(),
            "https://h.example/api/mcp/messages?x=1"
        );
    }

    #[test]
    fn an_endpoint_of_another_origin_is_refused() {
        let base = Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let error = endpoint_of(&base, "http://evil.example/m").unwrap_err();
        assert!(error.to_string().contains("origin"), "{error}");
        assert!(endpoint_of(&base, "http://127.0.0.1:8001/m").is_err());
    }
}
