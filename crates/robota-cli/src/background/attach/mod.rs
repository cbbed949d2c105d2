//! `robota attach <id>`: the full-screen UI as a client of a background session. The
//! client connects to the session's control socket, reads what happened before it came
//! from `events.jsonl` (up to where the socket's first line says its live lines begin),
//! then follows live. It is an [`InteractiveSession::remote`]: prompts typed are sent as
//! stream-json `user` messages, Esc as an `interrupt`, a mode change as
//! `set_permission_mode`, and permission answers as `control_response`s. Closing the UI
//! (or Ctrl+B d) detaches; the session goes on. A session that has ended opens read-only
//! from its events, with the command that resumes it.

mod decode;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

use super::registry::{self, SessionDir, State};
use super::supervisor::ATTACHED_SUBTYPE;
use crate::core::permission::PermissionMode;
use crate::sdk::{
    InteractiveSession, PermissionAnswer, RemoteEnds, SessionControl, SessionEvent, SessionState,
};
use decode::{Answer, Decoder, answered_in};

/// How long the socket has to say where its live lines begin.
const HELLO_WAIT: Duration = Duration::from_secs(10);

/// A background session the UI is attached to.
pub struct Attached {
    /// The handle the UI drives.
    pub session: InteractiveSession,
    /// The background session's id (what `robota ps` shows).
    pub id: String,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// The model it started with.
    pub model: String,
    /// Its permission mode when the client came.
    pub mode: PermissionMode,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// What to say at the top: how to detach, or how to resume an ended session.
    pub notices: Vec<String>,
}

/// Why `robota attach` could not attach.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// No such session.
    #[error(transparent)]
    NotFound(#[from] registry::FindError),
    /// Its events or socket could not be read.
    #[error("cannot read background session {id}: {source}")]
    Unreadable {
        /// The session.
        id: String,
        /// What failed.
        source: std::io::Error,
    },
}

/// The id of the background session `query` names (id, name or id prefix).
pub fn attach_target(robota_home: &Path, query: &str) -> Result<String, AttachError> {
    Ok(registry::find(robota_home, query)?.1.id)
}

/// Attaches to the background session `query` names (id, name or id prefix). Must run
/// on a tokio runtime: the session's task is spawned on it.
pub fn attach(robota_home: &Path, query: &str) -> Result<Attached, AttachError> {
    let (dir, state) = registry::find(robota_home, query)?;
    let unreadable = |source| AttachError::Unreadable {
        id: state.id.clone(),
        source,
    };
    let connected = if state.state.is_live() {
        connect(&dir).ok()
    } else {
        None
    };
    let (history, socket) = match connected {
        Some((offset, socket)) => (read_events(&dir, Some(offset)), Some(socket)),
        None => (read_events(&dir, None), None),
    };
    let history = history.map_err(unreadable)?;
    let initial = initial_state(&history, &state);
    let live = socket.is_some();
    let notices = notices(&state, &initial, live);
    let socket = match socket.map(tokio::net::UnixStream::from_std).transpose() {
        Ok(socket) => socket,
        Err(e) => return Err(unreadable(e)),
    };
    let attached = Attached {
        id: state.id.clone(),
        cwd: state.worktree.clone().unwrap_or(state.cwd.clone()),
        model: initial.model.clone(),
        mode: initial.mode,
        name: state.name.clone(),
        notices,
        session: InteractiveSession::remote(initial, move |ends| bridge(ends, history, socket)),
    };
    Ok(attached)
}

/// Connects to the socket and reads its first line: where in `events.jsonl` the lines
/// it sends next begin.
fn connect(dir: &SessionDir) -> std::io::Result<(u64, UnixStream)> {
    let socket = UnixStream::connect(dir.socket())?;
    socket.set_read_timeout(Some(HELLO_WAIT))?;
    let mut hello = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte: nothing after the first line may be taken from the socket here.
    while (&socket).read(&mut byte)? == 1 && byte[0] != b'\n' {
        hello.push(byte[0]);
    }
    let value: Value = serde_json::from_slice(&hello).map_err(std::io::Error::other)?;
    let offset = match value["subtype"].as_str() {
        Some(ATTACHED_SUBTYPE) => value["events_offset"].as_u64(),
        _ => None,
    };
    let offset =
        offset.ok_or_else(|| std::io::Error::other("the socket did not say where it begins"))?;
    socket.set_read_timeout(None)?;
    socket.set_nonblocking(true)?;
    Ok((offset, socket))
}

/// The lines of `events.jsonl`, up to byte `offset` when given.
fn read_events(dir: &SessionDir, offset: Option<u64>) -> std::io::Result<Vec<String>> {
    let file = match std::fs::File::open(dir.events()) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let limit = offset.unwrap_or(u64::MAX);
    BufReader::new(file.take(limit)).lines().collect()
}

/// The state the client starts from: the background session's, then what its
/// `system/init` line says.
fn initial_state(history: &[String], state: &State) -> SessionState {
    let init = registry::init_line(history.iter().cloned()).unwrap_or(Value::Null);
    let text = |key: &str| init[key].as_str().map(str::to_string);
    SessionState {
        session_id: text("session_id").unwrap_or_else(|| state.id.clone()),
        name: state.name.clone(),
        model: text("model").unwrap_or_default(),
        mode: text("permissionMode")
            .and_then(|m| PermissionMode::parse(&m))
            .unwrap_or_default(),
        usage: Default::default(),
        cost_usd: Some(state.cost_usd),
        models: Vec::new(),
        context: None,
        running: None,
        queue: Vec::new(),
        steering: Vec::new(),
    }
}

fn notices(state: &State, initial: &SessionState, live: bool) -> Vec<String> {
    if live {
        return vec![format!(
            "Attached to background session {} — Ctrl+B d detaches and leaves it running",
            state.id
        )];
    }
    vec![format!(
        "Background session {} is {}: shown read-only. Continue it with: robota --resume {}",
        state.id,
        state.state.as_str(),
        initial.session_id
    )]
}

/// The remote session's task: draws the history, then carries lines and controls both
/// ways until the client closes or the session ends.
async fn bridge(ends: RemoteEnds, history: Vec<String>, socket: Option<tokio::net::UnixStream>) {
    let RemoteEnds { mut controls, sink } = ends;
    let (answers_tx, mut answers) = mpsc::unbounded_channel::<Answer>();
    let mut decoder = Decoder::new(sink, answers_tx, answered_in(&history));
    for line in &history {
        decoder.line(line);
    }
    decoder.live = true;
    let Some(socket) = socket else {
        read_only(&decoder, &mut controls).await;
        return;
    };
    let (read, mut write) = socket.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    let mut requests = 0u64;
    loop {
        tokio::select! {
            control = controls.recv() => match control {
                Some(control) => {
                    let Some(line) = control_line(&mut decoder, control, &mut requests) else {
                        continue;
                    };
                    if send(&mut write, &line).await.is_err() {
                        break;
                    }
                }
                None => return,
            },
            line = lines.next_line() => match line {
                Ok(Some(line)) => decoder.line(&line),
                _ => break,
            },
            Some((request_id, answer)) = answers.recv() => {
                decoder.answered_here(&request_id);
                let mut lines = vec![answer_line(&request_id, &answer)];
                // Approving a plan also switches the mode.
                if let PermissionAnswer::AllowWithMode(mode) = answer {
                    lines.push(control_line(&mut decoder, SessionControl::SetMode(mode), &mut requests).unwrap_or_default());
                }
                if send_all(&mut write, &lines).await.is_err() {
                    break;
                }
            }
        }
    }
    // The socket closed: the session ended (or was stopped).
    decoder.sink().emit(SessionEvent::Warning(
        "The background session ended; what is on screen is all of it. Quit with Ctrl+D.".into(),
    ));
}

/// A session that has ended takes no prompts: each gets a warning.
async fn read_only(decoder: &Decoder, controls: &mut mpsc::UnboundedReceiver<SessionControl>) {
    while let Some(control) = controls.recv().await {
        if let SessionControl::Submit(..) | SessionControl::Steer(..) = control {
            decoder.sink().emit(SessionEvent::Warning(format!(
                "This background session has ended and is shown read-only; continue it with: robota --resume {}",
                decoder.sink().state().session_id
            )));
        }
    }
}

async fn send(write: &mut OwnedWriteHalf, line: &str) -> std::io::Result<()> {
    write.write_all(format!("{line}\n").as_bytes()).await
}

async fn send_all(write: &mut OwnedWriteHalf, lines: &[String]) -> std::io::Result<()> {
    for line in lines {
        send(write, line).await?;
    }
    Ok(())
}

/// The line a control becomes (`None`: nothing to send).
fn control_line(
    decoder: &mut Decoder,
    control: SessionControl,
    requests: &mut u64,
) -> Option<String> {
    let mut request = |body: Value| {
        *requests += 1;
        json!({"type": "control_request", "request_id": format!("attach-{requests}"), "request": body})
            .to_string()
    };
    match control {
        SessionControl::Submit(id, submission) => {
            let text = submission.text();
            decoder.sent(id, text.clone());
            Some(user_line(&text))
        }
        SessionControl::Steer(id, text) => {
            decoder.sent(id, text.clone());
            Some(user_line(&text))
        }
        SessionControl::Abort => Some(request(json!({"subtype": "interrupt"}))),
        SessionControl::SetMode(mode) => Some(set_mode(decoder, mode, &mut request)),
        SessionControl::CycleMode => {
            let next = decoder.sink().state().mode.next_in_cycle(false);
            Some(set_mode(decoder, next, &mut request))
        }
        // The queue and the context files are the session's own.
        _ => None,
    }
}

fn set_mode(
    decoder: &Decoder,
    mode: PermissionMode,
    request: &mut impl FnMut(Value) -> String,
) -> String {
    decoder.sink().update_state(|state| state.mode = mode);
    request(json!({"subtype": "set_permission_mode", "mode": mode.as_str()}))
}

fn user_line(text: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
}

/// The `control_response` carrying a permission answer given here.
fn answer_line(request_id: &str, answer: &PermissionAnswer) -> String {
    let body = match answer {
        PermissionAnswer::Deny(message) => json!({
            "behavior": "deny",
            "message": message.clone().unwrap_or_else(|| "The user refused this call".into()),
        }),
        PermissionAnswer::AllowWithInput(input) => {
            json!({"behavior": "allow", "updatedInput": input})
        }
        _ => json!({"behavior": "allow"}),
    };
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": body},
    })
    .to_string()
}
