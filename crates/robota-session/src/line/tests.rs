//! Tests of the line module.
use super::*;
use serde_json::json;

/// Both ways of reading a line, which must agree.
fn parse(line: &str) -> LogLine {
    let derived: LogLine = serde_json::from_str(line).unwrap();
    assert_eq!(LogLine::from_slice(line.as_bytes()).unwrap(), derived);
    derived
}

#[test]
fn event_lines_keep_their_key_order_and_round_trip() {
    let line = LogLine::Event(EventLine {
        session_id: "s".into(),
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        event: LogEvent::Rename {
            name: "work".into(),
        },
    });
    let text = serde_json::to_string(&line).unwrap();
    assert_eq!(
        text,
        r#"{"type":"event","event":"rename","sessionId":"s","timestamp":"2026-01-01T00:00:00.000Z","name":"work"}"#
    );
    assert_eq!(parse(&text), line);
    let clear = serde_json::to_string(&LogLine::Event(EventLine {
        event: LogEvent::Clear {},
        ..match line {
            LogLine::Event(e) => e,
            _ => unreachable!(),
        }
    }))
    .unwrap();
    assert_eq!(
        clear,
        r#"{"type":"event","event":"clear","sessionId":"s","timestamp":"2026-01-01T00:00:00.000Z"}"#
    );
}

#[test]
fn unknown_line_and_event_types_read_as_unknown() {
    assert_eq!(
        parse(r#"{"type":"summary","summary":"x"}"#),
        LogLine::Unknown
    );
    assert_eq!(
        parse(r#"{"type":"event","event":"bookmark","sessionId":"s","files":3}"#),
        LogLine::Event(EventLine {
            session_id: "s".into(),
            timestamp: String::new(),
            event: LogEvent::Unknown,
        })
    );
    assert!(serde_json::to_string(&LogLine::Unknown).is_err());
}

#[test]
fn the_header_has_one_constructor_with_millisecond_utc_timestamps() {
    let header = SessionHeader::new("id", Path::new("/p"), "m", "anthropic");
    assert!(header.created.parse::<jiff::Timestamp>().is_ok());
    assert!(
        header.created.ends_with('Z') && header.created.len() == 24,
        "{}",
        header.created
    );
    let line = serde_json::to_value(LogLine::Session(header.clone())).unwrap();
    assert_eq!(
        line.as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "type",
            "sessionId",
            "cwd",
            "created",
            "version",
            "model",
            "provider"
        ]
    );
    assert_eq!(SessionHeader::from_line(&line).unwrap(), header);
    // Headers written before (nanoseconds) still read.
    let old = json!({"type":"session","sessionId":"a","cwd":"/p",
        "created":"2026-11-23T21:45:15.327768236Z","version":"0.1.0"});
    assert_eq!(
        SessionHeader::from_line(&old).unwrap().created,
        "2026-11-23T21:45:15.327768236Z"
    );
    for bad in [
        json!({"type":"user"}),
        json!({"type":"session","cwd":"/"}),
        json!({"type":"session","sessionId":"","cwd":"/"}),
        json!({"type":"session","sessionId":"a"}),
    ] {
        assert!(SessionHeader::from_line(&bad).is_err(), "{bad}");
    }
}

#[test]
fn message_lines_read_claude_code_string_content_and_tolerate_odd_usage() {
    let line = parse(
        r#"{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hello","usage":"n/a"}}"#,
    );
    let LogLine::User(line) = line else {
        panic!("{line:?}")
    };
    let message = line.into_message(Role::User);
    assert_eq!(message.text(), "hello");
    assert_eq!(message.usage, None);
    for bad in [
        r#"{"type":"user","uuid":7,"message":{}}"#,
        r#"{"uuid":"u"}"#,
        "[1,2]",
        r#"{"type":"assis"#,
    ] {
        assert!(serde_json::from_str::<LogLine>(bad).is_err(), "{bad}");
        assert!(LogLine::from_slice(bad.as_bytes()).is_err(), "{bad}");
    }
}
