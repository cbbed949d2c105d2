//! The HTTP side of rmcp's streamable HTTP client transport, on the workspace's reqwest
//! 0.12 client (rmcp's own implementation needs reqwest 0.13): POSTing JSON-RPC messages
//! and sorting the answers (accepted, one JSON message, or an event stream), opening the
//! server's GET event stream, and deleting the session. rmcp's worker drives the
//! protocol — sessions, the `MCP-Protocol-Version` header, resuming streams.
//!
//! Statuses are mapped as rmcp maps them: 401 and 403 with a `WWW-Authenticate`
//! challenge are auth errors, 429 and 5xx carry their status and `Retry-After`, 404 on a
//! session is an expired session, 405 on the GET stream means the server has none, and
//! a JSON-RPC error in an error response is passed on as that error. (rmcp's own client
//! also re-addresses a rejected `server/discover`; robota's handshake is `initialize`, so
//! it never sends one.)

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    HEADER_LAST_EVENT_ID, HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::event_stream::{
    EVENT_STREAM, EventStream, JSON, MAX_EVENT_BYTES, events, media_type_is,
};

type HttpError = StreamableHttpError<McpHttpRequestError>;

/// A request to an MCP server that failed on the way, in words with its causes: rmcp keeps
/// only the text of the error it is handed, so the causes (an untrusted certificate, which
/// then names the variable to set) must be in that text.
#[derive(Debug, thiserror::Error)]
#[error("{}", robota_core::http_client::describe_error(.0))]
pub struct McpHttpRequestError(#[source] reqwest::Error);

/// rmcp's client error for a failed request.
fn request_failed(error: reqwest::Error) -> HttpError {
    StreamableHttpError::Client(McpHttpRequestError(error))
}

/// The reqwest client (with the server's configured headers) rmcp's worker sends through.
#[derive(Clone)]
pub struct McpHttpClient(pub reqwest::Client);

impl StreamableHttpClient for McpHttpClient {
    type Error = McpHttpRequestError;

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<EventStream, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_EVENT_BYTES,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<EventStream, HttpError> {
        let mut request = self.0.get(uri.as_ref()).header(ACCEPT, ACCEPTED_TYPES);
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        if let Some(last_event_id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, last_event_id);
        }
        let request = with_headers(request, auth_header, custom_headers)?;
        let response = request.send().await.map_err(request_failed)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        auth_challenge(response.status(), response.headers())?;
        if let Some(error) = status_error(response.status(), response.headers()) {
            return Err(error.into());
        }
        let response = response.error_for_status().map_err(request_failed)?;
        let content_type = response.headers().get(CONTENT_TYPE);
        match content_type {
            Some(ct)
                if media_type_is(ct.as_bytes(), EVENT_STREAM)
                    || media_type_is(ct.as_bytes(), JSON) => {}
            other => {
                return Err(StreamableHttpError::UnexpectedContentType(
                    other.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned()),
                ));
            }
        }
        Ok(events(response, max_sse_event_size))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let request = self
            .0
            .delete(uri.as_ref())
            .header(HEADER_SESSION_ID, session_id.as_ref());
        let request = with_headers(request, auth_header, custom_headers)?;
        let response = request.send().await.map_err(request_failed)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            tracing::debug!("the MCP server does not support deleting its session");
            return Ok(());
        }
        response
            .error_for_status()
            .map(drop)
            .map_err(request_failed)
    }

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let body = serde_json::to_vec(&message)?;
        let mut request = self
            .0
            .post(uri.as_ref())
            .header(ACCEPT, ACCEPTED_TYPES)
            .header(CONTENT_TYPE, JSON)
            .body(body);
        let session_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let request = with_headers(request, auth_header, custom_headers)?;
        let response = request.send().await.map_err(request_failed)?;
        let status = response.status();
        auth_challenge(status, response.headers())?;
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        let is = |expected: &str| {
            content_type
                .as_ref()
                .is_some_and(|ct| media_type_is(ct.as_bytes(), expected))
        };
        let is_json = is(JSON);
        // A rate limit, or a server failure without a JSON body, is its status.
        let status_error = match status_error(status, response.headers()) {
            Some(error) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            other => other,
        };
        let session_id = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        // Nothing waits for an answer to a notification or a response.
        let awaits_nothing = matches!(
            message,
            JsonRpcMessage::Notification(_)
                | JsonRpcMessage::Response(_)
                | JsonRpcMessage::Error(_)
        );
        if status.is_success() && response.content_length() == Some(0) && awaits_nothing {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            return failure(response, is_json, status_error, session_id, &limits).await;
        }
        if is(EVENT_STREAM) {
            let stream = events(response, limits.max_sse_event_size);
            return Ok(StreamableHttpPostResponse::Sse(stream, session_id));
        }
        if is_json {
            if response
                .content_length()
                .is_some_and(|n| n > limits.max_json_response_size as u64)
            {
                return Err(StreamableHttpError::ResponseBodyTooLarge {
                    max_size: limits.max_json_response_size,
                });
            }
            let body = read_bounded(response, limits.max_json_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session_id)),
                Err(e) if awaits_nothing => {
                    tracing::warn!("an MCP server answered a notification with unusable JSON: {e}");
                    Ok(StreamableHttpPostResponse::Accepted)
                }
                Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!(
                        "the answer is not a JSON-RPC message ({e}): {}",
                        String::from_utf8_lossy(&body[..body.len().min(256)])
                    ),
                ))),
            };
        }
        if awaits_nothing {
            // Some servers answer `notifications/initialized` with an empty 200.
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned()),
        ))
    }
}

/// The answer to a POST that failed: the JSON-RPC error in its body when it has one, else
/// its status (and the start of its body).
async fn failure(
    response: reqwest::Response,
    is_json: bool,
    status_error: Option<HttpStatusError>,
    session_id: Option<String>,
    limits: &StreamableHttpResponseLimits,
) -> Result<StreamableHttpPostResponse, HttpError> {
    let status = response.status();
    // An unchallenged 401 or 403 keeps its status rather than pass as a JSON-RPC error.
    let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let limit = if is_json && !auth_failure {
        limits.max_json_response_size
    } else {
        limits.max_error_response_size
    };
    let body = read_prefix(response, limit).await;
    if is_json
        && !auth_failure
        && let Ok(error @ JsonRpcMessage::Error(_)) =
            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
    {
        return Ok(StreamableHttpPostResponse::Json(error, session_id));
    }
    if let Some(error) = status_error {
        return Err(error.into());
    }
    let shown = &body[..body.len().min(limits.max_error_response_size)];
    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
        format!("HTTP {status}: {}", String::from_utf8_lossy(shown)),
    )))
}

/// What a request accepts in return.
const ACCEPTED_TYPES: &str = "text/event-stream, application/json";

/// Adds the bearer token and the worker's headers (`MCP-Protocol-Version` and the
/// standard request headers); headers the transport sets itself are refused.
fn with_headers(
    mut request: reqwest::RequestBuilder,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> Result<reqwest::RequestBuilder, HttpError> {
    if let Some(token) = auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom_headers {
        let reserved = [ACCEPT.as_str(), HEADER_SESSION_ID, HEADER_LAST_EVENT_ID]
            .iter()
            .any(|r| name.as_str().eq_ignore_ascii_case(r));
        if reserved
            && !name
                .as_str()
                .eq_ignore_ascii_case(HEADER_MCP_PROTOCOL_VERSION)
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        request = request.header(name, value);
    }
    Ok(request)
}

/// A 401 or 403 that carries a `WWW-Authenticate` challenge.
fn auth_challenge(status: StatusCode, headers: &HeaderMap) -> Result<(), HttpError> {
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(());
    }
    let Some(header) = headers.get(reqwest::header::WWW_AUTHENTICATE) else {
        return Ok(());
    };
    let header = header.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(
            "invalid www-authenticate header value".into(),
        )
    })?;
    if status == StatusCode::UNAUTHORIZED {
        return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            header.to_string(),
        )));
    }
    Err(StreamableHttpError::InsufficientScope(
        InsufficientScopeError::new(header.to_string(), scope_of(header)),
    ))
}

/// The `scope` parameter of a challenge, quoted or not.
fn scope_of(challenge: &str) -> Option<String> {
    let at = challenge.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = &challenge[at..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.find('"').map(|end| quoted[..end].to_string());
    }
    let end = rest
        .find(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

/// A 429 or 5xx with its `Retry-After`.
fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// The whole body, failing once it passes `limit` bytes.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(request_failed)?;
        if chunk.len() > limit - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most the first `limit` bytes of the body (what was read if reading fails).
async fn read_prefix(response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while body.len() < limit {
        let Some(Ok(chunk)) = chunks.next().await else {
            break;
        };
        let take = chunk.len().min(limit - body.len());
        body.extend_from_slice(&chunk[..take]);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::test_http::{answer_to, read_request, write_chunk};
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use std::sync::Mutex;
    use tokio::io::{AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};

    /// A streamable HTTP server on loopback: `initialize` gets a JSON answer and a session,
    /// `tools/list` an event stream, `tools/call` JSON again; GET has no stream (405).
    /// Each request is kept as `METHOD session-header`.
    async fn fake_server() -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(serve(conn, log.clone()));
            }
        });
        (url, seen)
    }

    async fn serve(conn: TcpStream, seen: Arc<Mutex<Vec<String>>>) {
        let mut conn = BufReader::new(conn);
        while let Some(request) = read_request(&mut conn).await {
            let method = request.line.split(' ').next().unwrap_or("").to_string();
            let session = request.header("mcp-session-id").unwrap_or("-").to_string();
            seen.lock().unwrap().push(format!("{method} {session}"));
            let conn = conn.get_mut();
            let message = request.json();
            let reply = match (method.as_str(), answer_to(&message)) {
                ("POST", Some(answer)) if message["method"] == "tools/list" => {
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    conn.write_all(head.as_bytes()).await.unwrap();
                    write_chunk(
                        conn,
                        &format!(": hello\n\nevent: message\ndata: {answer}\n\n"),
                    )
                    .await
                    .unwrap();
                    write_chunk(conn, "").await.unwrap();
                    continue;
                }
                ("POST", Some(answer)) => {
                    let body = answer.to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                }
                ("POST", None) => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into(),
                ("DELETE", _) => "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".into(),
                _ => "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n".into(),
            };
            conn.write_all(reply.as_bytes()).await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_session_runs_over_json_and_event_stream_answers() {
        let (url, seen) = fake_server().await;
        let transport = StreamableHttpClientTransport::with_client(
            McpHttpClient(reqwest::Client::new()),
            StreamableHttpClientTransportConfig::with_uri(url.as_str()),
        );
        let client =
            ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"));
        let service = client.serve(transport).await.unwrap();
        let tools = service.peer().list_all_tools().await.unwrap();
        assert_eq!(tools[0].name, "echo");
        let mut arguments = serde_json::Map::new();
        arguments.insert("message".into(), serde_json::json!("over http"));
        let result = service
            .peer()
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text().unwrap().text, "over http");
        let _ = service.cancel().await;
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0], "POST -", "initialize opens the session: {seen:?}");
        assert!(seen[1..].iter().all(|r| r.ends_with(" s1")), "{seen:?}");
        assert!(seen.contains(&"DELETE s1".to_string()), "{seen:?}");
    }

    #[test]
    fn scopes_are_read_from_challenges() {
        assert_eq!(
            scope_of(r#"Bearer realm="mcp", scope="files:read files:write""#).as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(
            scope_of("Bearer scope=read:data, x=1").as_deref(),
            Some("read:data")
        );
        assert_eq!(scope_of(r#"Bearer realm="mcp""#), None);
    }

    #[test]
    fn only_rate_limits_and_server_failures_are_status_errors() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        let error = status_error(StatusCode::TOO_MANY_REQUESTS, &headers).unwrap();
        assert_eq!(
            (error.status, error.retry_after.as_deref()),
            (429, Some("7"))
        );
        assert!(status_error(StatusCode::BAD_GATEWAY, &HeaderMap::new()).is_some());
        assert!(status_error(StatusCode::BAD_REQUEST, &headers).is_none());
    }

    #[test]
    fn a_challenge_is_an_auth_error_and_its_absence_is_not() {
        let mut headers = HeaderMap::new();
        assert!(auth_challenge(StatusCode::UNAUTHORIZED, &headers).is_ok());
        headers.insert(
            reqwest::header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer scope="admin""#),
        );
        assert!(matches!(
            auth_challenge(StatusCode::UNAUTHORIZED, &headers),
            Err(StreamableHttpError::AuthRequired(_))
        ));
        match auth_challenge(StatusCode::FORBIDDEN, &headers) {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                assert_eq!(e.required_scope.as_deref(), Some("admin"))
            }
            other => panic!("{other:?}"),
        }
        assert!(auth_challenge(StatusCode::OK, &headers).is_ok());
    }

    #[test]
    fn the_transport_s_own_headers_cannot_be_overridden() {
        let client = reqwest::Client::new();
        let version = HashMap::from([(
            HeaderName::from_static("mcp-protocol-version"),
            HeaderValue::from_static("2025-11-25"),
        )]);
        assert!(with_headers(client.get("http://h/"), None, version).is_ok());
        let session = HashMap::from([(
            HeaderName::from_static("mcp-session-id"),
            HeaderValue::from_static("x"),
        )]);
        assert!(matches!(
            with_headers(client.get("http://h/"), None, session),
            Err(StreamableHttpError::ReservedHeaderConflict(_))
        ));
    }
}
