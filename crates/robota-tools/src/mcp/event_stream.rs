//! Reading a `text/event-stream` response body for the MCP client's HTTP transports
//! (streamable HTTP in `http`, the legacy SSE transport in `sse`): a body's events, each
//! held to a size limit before it is parsed (a server cannot make robota buffer one
//! endless event), and the media-type test both transports use on `Content-Type`.

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use sse_stream::{Sse, SseStream};

pub const EVENT_STREAM: &str = "text/event-stream";
pub const JSON: &str = "application/json";

/// The largest event accepted by default (rmcp's default too).
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// A body's events, in order; the stream ends with the body or after its first error.
pub type EventStream = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// Why a body stopped before its end.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("reading the event stream failed: {0}")]
    Read(#[source] reqwest::Error),
    #[error("an event of the stream is larger than {0} bytes")]
    EventTooLarge(usize),
}

/// Whether a `Content-Type` value names `expected` (parameters and case ignored).
pub fn media_type_is(value: &[u8], expected: &str) -> bool {
    value
        .split(|b| *b == b';')
        .next()
        .and_then(|essence| std::str::from_utf8(essence).ok())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// The events of `response`'s body, none larger than `max_event_bytes`.
pub fn events(response: reqwest::Response, max_event_bytes: usize) -> EventStream {
    events_of(response.bytes_stream(), max_event_bytes)
}

fn events_of<S>(body: S, max_event_bytes: usize) -> EventStream
where
    S: futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    let limited = body.scan(
        (EventSize::new(max_event_bytes), false),
        move |(size, failed), chunk| {
            let item = if *failed {
                None
            } else {
                Some(match chunk {
                    Ok(bytes) if size.admits(&bytes) => Ok(bytes),
                    Ok(_) => Err(BodyError::EventTooLarge(max_event_bytes)),
                    Err(e) => Err(BodyError::Read(e)),
                })
            };
            *failed = matches!(item, Some(Err(_)));
            std::future::ready(item)
        },
    );
    SseStream::from_bytes_stream(limited).boxed()
}

/// Counts the bytes the parser keeps for the event being read: its field lines (comment
/// lines are dropped by the parser) up to the blank line that ends it.
#[derive(Debug)]
struct EventSize {
    max: usize,
    event: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    fn new(max: usize) -> Self {
        EventSize {
            max,
            event: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    /// Takes in the next bytes of the body; `false` once the current event is too large.
    fn admits(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        self.event = 0;
                    } else if !self.comment {
                        // The parser joins data lines with a newline.
                        self.event = self.event.saturating_add(self.line + 1);
                    }
                    self.line = 0;
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            if self.event.saturating_add(self.line) > self.max {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(
        chunks: &[&'static str],
    ) -> impl futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static {
        futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok(Bytes::from_static(c.as_bytes())))
                .collect::<Vec<_>>(),
        )
    }

    #[tokio::test]
    async fn events_are_parsed_across_chunks() {
        let mut events = events_of(
            body(&[
                "event: endpoint\ndata: /mess",
                "age?s=1\n\n: ping\n\ndata: {}\r\n\r\n",
            ]),
            1024,
        );
        let first = events.next().await.unwrap().unwrap();
        assert_eq!(first.event.as_deref(), Some("endpoint"));
        assert_eq!(first.data.as_deref(), Some("/message?s=1"));
        let mut rest = Vec::new();
        while let Some(event) = events.next().await {
            rest.push(event.unwrap());
        }
        assert!(
            rest.iter().any(|e| e.data.as_deref() == Some("{}")),
            "{rest:?}"
        );
    }

    #[tokio::test]
    async fn an_event_over_the_limit_ends_the_stream_with_an_error() {
        let mut events = events_of(body(&["data: 0123456789\n", "data: 0123456789\n\n"]), 20);
        let error = events.next().await.unwrap().unwrap_err();
        assert!(
            error.to_string().contains("larger than 20 bytes"),
            "{error}"
        );
        assert!(events.next().await.is_none());
    }

    #[test]
    fn blank_lines_and_comments_do_not_count() {
        let mut size = EventSize::new(12);
        assert!(size.admits(b"data: 12345\n\n"));
        assert!(size.admits(b"data: 12345\r\n\r\n"));
        assert!(size.admits(b": abc\ndata: 12345\n\n"));
        assert!(!size.admits(b"data: 123456\n"));
    }

    #[test]
    fn media_types_ignore_parameters_and_case() {
        assert!(media_type_is(
            b"Text/Event-Stream; charset=utf-8",
            EVENT_STREAM
        ));
        assert!(media_type_is(b"application/json", JSON));
        assert!(!media_type_is(b"application/jsonx", JSON));
        assert!(!media_type_is(b"", JSON));
    }
}
