//! The one Server-Sent Events decoder every provider adapter uses (wire.md §0, §7.1): it
//! turns response bytes, as they arrive in reads of any size, into `SseEvent`s. It accepts
//! LF, CRLF and CR line ends, comments, multi-line `data:`, a leading BOM, UTF-8 split across
//! reads and very long lines, flushes a last event that has no trailing blank line, surfaces
//! old llama.cpp's non-standard `error:` field line as an `error` event, and refuses lines or
//! events beyond a size bound instead of buffering without limit.

/// Largest line or event payload the decoder buffers before giving up (16 MiB).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, when the server sent one. An `error:` field line (old llama.cpp)
    /// makes this `Some("error")`.
    pub event: Option<String>,
    /// Every `data:` (and `error:`) value of the event, joined with `\n`.
    pub data: String,
    /// The `id:` value sent within this event, if any.
    pub id: Option<String>,
}

impl SseEvent {
    /// Whether the server flagged this event as an error, by `event: error` or an `error:` line.
    pub fn is_error(&self) -> bool {
        self.event.as_deref() == Some("error")
    }
}

/// Why a stream could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line or an event's accumulated `data` grew past the decoder's limit.
    #[error("server-sent event line or payload exceeds {limit} bytes")]
    TooLarge {
        /// The limit in bytes (`max_event_bytes`).
        limit: usize,
    },
}

/// Incremental SSE decoder: feed it bytes with `push`, call `finish` at end of stream.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// Bytes of the line being read (no terminator). Raw bytes so a UTF-8 sequence split
    /// across reads is joined before conversion: terminators are ASCII and never split one.
    line: Vec<u8>,
    /// The previous byte was a CR, so an LF that follows belongs to the same line end.
    after_cr: bool,
    /// Still at the very start of the stream, where a UTF-8 BOM is dropped.
    at_stream_start: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the default limit of `DEFAULT_MAX_EVENT_BYTES` (16 MiB) per line or
    /// event payload.
    pub fn new() -> Self {
        SseDecoder::with_max_event_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder that refuses lines or event payloads longer than `max_event_bytes`.
    pub fn with_max_event_bytes(max_event_bytes: usize) -> Self {
        SseDecoder {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            at_stream_start: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
        }
    }

    /// Decodes the next read; returns the events it completed (possibly none).
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if self.at_stream_start {
            // While at the start, `line` holds only a proper prefix of a BOM (it may arrive
            // split); three bytes decide whether to drop it.
            let mut head = std::mem::take(&mut self.line);
            head.extend_from_slice(bytes);
            if head.len() < BOM.len() && BOM.starts_with(&head) {
                self.line = head;
                return Ok(out);
            }
            self.at_stream_start = false;
            let rest = head.strip_prefix(BOM).unwrap_or(&head);
            self.feed(rest, &mut out)?;
            return Ok(out);
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        self.feed(bytes, &mut out)?;
        Ok(out)
    }

    /// Ends the stream: a last line without terminator is processed, and an event that was
    /// not followed by a blank line is dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if self.at_stream_start {
            // Only a partial BOM can be pending here; it is not content.
            self.at_stream_start = false;
            self.line.clear();
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            // A field line at EOF cannot overflow: it is already bounded by `push`.
            if self.process_line(&line).is_err() {
                return None;
            }
        }
        self.after_cr = false;
        self.take_event()
    }

    fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = bytes;
        loop {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    if self.line.len() + rest.len() > self.max_event_bytes {
                        return Err(self.too_large());
                    }
                    self.line.extend_from_slice(rest);
                    return Ok(());
                }
                Some(end) => {
                    if self.line.len() + end > self.max_event_bytes {
                        return Err(self.too_large());
                    }
                    let was_cr = rest[end] == b'\r';
                    if self.line.is_empty() {
                        self.end_line(&rest[..end], out)?;
                    } else {
                        self.line.extend_from_slice(&rest[..end]);
                        let line = std::mem::take(&mut self.line);
                        self.end_line(&line, out)?;
                        self.line = line;
                        self.line.clear();
                    }
                    rest = &rest[end + 1..];
                    if was_cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => {
                                self.after_cr = true;
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    fn end_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if let Some(event) = self.take_event() {
                out.push(event);
            }
            return Ok(());
        }
        self.process_line(line)
    }

    fn process_line(&mut self, line: &[u8]) -> Result<(), SseError> {
        if line.first() == Some(&b':') {
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" | b"error" => {
                if name == b"error" {
                    self.event = Some("error".to_string());
                }
                if self.data.len() + value.len() + 1 > self.max_event_bytes {
                    return Err(self.too_large());
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            // An `error:` line already decided the event kind; keep it.
            b"event" if !(self.event.as_deref() == Some("error") && self.has_data) => {
                self.event = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            _ => {} // `retry:` and unknown fields are ignored, as the SSE spec says.
        }
        Ok(())
    }

    /// Dispatches the buffered event; an event without any data line is dropped (SSE spec).
    fn take_event(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let id = self.id.take();
        if !self.has_data {
            self.data.clear();
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event: event.filter(|e| !e.is_empty()),
            data: std::mem::take(&mut self.data),
            id,
        })
    }

    fn too_large(&mut self) -> SseError {
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
        SseError::TooLarge {
            limit: self.max_event_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = d.push(input).unwrap();
        out.extend(d.finish());
        out
    }

    fn decode_bytewise(input: &[u8]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for b in input {
            out.extend(d.push(std::slice::from_ref(b)).unwrap());
        }
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: None,
        }
    }

    #[test]
    fn lf_crlf_and_cr_line_ends_decode_alike() {
        let lf = b"event: a\ndata: 1\n\ndata: 2\n\n";
        let crlf = b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n";
        let cr = b"event: a\rdata: 1\r\rdata: 2\r\r";
        let want = vec![ev(Some("a"), "1"), ev(None, "2")];
        for input in [&lf[..], &crlf[..], &cr[..]] {
            assert_eq!(decode_all(input), want);
            assert_eq!(decode_bytewise(input), want);
        }
    }

    #[test]
    fn comments_multiline_data_and_space_rules() {
        let input = b": keep-alive\ndata:first\ndata:  second\ndata\n: OPENROUTER PROCESSING\n\n";
        assert_eq!(decode_all(input), vec![ev(None, "first\n second\n")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_name_resets() {
        let input = b"event: ping\n\ndata: x\n\n";
        assert_eq!(decode_all(input), vec![ev(None, "x")]);
    }

    #[test]
    fn id_is_carried_and_retry_and_unknown_fields_are_ignored() {
        let input = b"id: 7\nretry: 100\nfoo: bar\ndata: x\n\n";
        let got = decode_all(input);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id.as_deref(), Some("7"));
        assert_eq!(got[0].data, "x");
    }

    #[test]
    fn error_field_line_becomes_an_error_event() {
        let input = b"error: {\"code\":400,\"message\":\"too big\"}\n\n";
        let got = decode_all(input);
        assert_eq!(got.len(), 1);
        assert!(got[0].is_error());
        assert_eq!(got[0].data, "{\"code\":400,\"message\":\"too big\"}");
    }

    #[test]
    fn final_event_without_blank_line_is_flushed_at_finish() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"event: message_stop\ndata: {}").unwrap().is_empty());
        assert_eq!(d.finish(), Some(ev(Some("message_stop"), "{}")));
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn utf8_split_across_reads_is_joined() {
        let text = "data: 925 ÷ 5 = 185 — 한국어\n\n".as_bytes();
        let split = text.iter().position(|&b| b == 0xC3).unwrap() + 1;
        let mut d = SseDecoder::new();
        let mut out = d.push(&text[..split]).unwrap();
        out.extend(d.push(&text[split..]).unwrap());
        assert_eq!(out, vec![ev(None, "925 ÷ 5 = 185 — 한국어")]);
    }

    #[test]
    fn crlf_split_between_reads_is_one_line_end() {
        let mut d = SseDecoder::new();
        let mut out = d.push(b"event: x\r").unwrap();
        out.extend(d.push(b"\ndata: a\r\n\r").unwrap());
        out.extend(d.push(b"\nevent: y\r\ndata: b\r\n\r\n").unwrap());
        assert_eq!(out, vec![ev(Some("x"), "a"), ev(Some("y"), "b")]);
    }

    #[test]
    fn leading_bom_is_dropped_even_when_split() {
        let input = b"\xEF\xBB\xBFdata: x\n\n";
        assert_eq!(decode_all(input), vec![ev(None, "x")]);
        assert_eq!(decode_bytewise(input), vec![ev(None, "x")]);
    }

    #[test]
    fn lines_of_64k_and_more_decode_in_small_reads() {
        let payload = "x".repeat(200 * 1024);
        let input = format!("data: {payload}\n\n");
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for chunk in input.as_bytes().chunks(1000) {
            out.extend(d.push(chunk).unwrap());
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), payload.len());
    }

    #[test]
    fn oversized_line_is_an_error_not_unbounded_memory() {
        let mut d = SseDecoder::with_max_event_bytes(1024);
        let chunk = vec![b'a'; 600];
        assert!(d.push(b"data: ").unwrap().is_empty());
        assert!(d.push(&chunk).unwrap().is_empty());
        assert_eq!(d.push(&chunk), Err(SseError::TooLarge { limit: 1024 }));
    }

    #[test]
    fn oversized_event_across_many_lines_is_an_error() {
        let mut d = SseDecoder::with_max_event_bytes(100);
        let line = format!("data: {}\n", "b".repeat(40));
        assert!(d.push(line.as_bytes()).is_ok());
        assert!(d.push(line.as_bytes()).is_ok());
        assert!(d.push(line.as_bytes()).is_err());
    }
}
