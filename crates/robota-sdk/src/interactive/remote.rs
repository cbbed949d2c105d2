//! Sessions whose work happens elsewhere: [`InteractiveSession::remote`] gives a client
//! (the full-screen UI) the same handle it drives a local session with, while a task the
//! caller supplies carries the client's [`SessionControl`]s to the other side (another
//! process, over its protocol) and brings that side's [`SessionEvent`]s back.

use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use robota_core::permission::PermissionMode;

use super::InteractiveSession;
use crate::commands::{CommandRegistry, Submission, SubmissionId};
use crate::events::{SessionEvent, SessionState};
use crate::tasks::TaskBoard;

/// What a client asks of its session, in the order it asked.
#[derive(Debug)]
pub enum SessionControl {
    /// Run this submission now, or queue it behind the running one.
    Submit(SubmissionId, Submission),
    /// A prompt for the running turn's next model call ("send now").
    Steer(SubmissionId, String),
    /// Interrupt the running submission and drop the queue.
    Abort,
    /// Drop the newest queued submission.
    TakeBackQueued,
    /// Drop every queued submission.
    CancelQueue,
    /// Switch to this permission mode.
    SetMode(PermissionMode),
    /// Move to the next mode of the Shift+Tab cycle.
    CycleMode,
    /// Read the context files again before the next submission.
    ReloadInstructions,
}

/// The far side of a remote session's handle: what its task reads and writes.
pub struct RemoteEnds {
    /// What the client asks; closed when the client closes or drops the session.
    pub controls: mpsc::UnboundedReceiver<SessionControl>,
    /// Where the session's events and state go to the client.
    pub sink: RemoteSink,
}

/// Where a remote session's task sends the client its events and state.
pub struct RemoteSink {
    events: mpsc::UnboundedSender<SessionEvent>,
    state: Arc<Mutex<SessionState>>,
}

impl RemoteSink {
    /// Changes the state the client's [`InteractiveSession::state`] reports and sends it
    /// as a [`SessionEvent::State`].
    pub fn update_state(&self, change: impl FnOnce(&mut SessionState)) {
        let state = {
            let mut state = match self.state.lock() {
                Ok(state) => state,
                Err(poisoned) => poisoned.into_inner(),
            };
            change(&mut state);
            state.clone()
        };
        self.emit(SessionEvent::State(state));
    }

    /// The state as last updated.
    pub fn state(&self) -> SessionState {
        match self.state.lock() {
            Ok(state) => state.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Sends one event to the client.
    pub fn emit(&self, event: SessionEvent) {
        let _ = self.events.send(event);
    }
}

impl InteractiveSession {
    /// A session run elsewhere: `run` gets the client's controls and sends the session's
    /// events, on the current tokio runtime, until the controls close (the client closed
    /// the session) or it has nothing more to send. The handle knows the built-in
    /// commands only (a `/name` of the other side's own is sent as typed), and has no
    /// background jobs of its own.
    pub fn remote<Task>(initial: SessionState, run: impl FnOnce(RemoteEnds) -> Task) -> Self
    where
        Task: Future<Output = ()> + Send + 'static,
    {
        let (controls, control_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = mpsc::unbounded_channel();
        let id = initial.session_id.clone();
        let state = Arc::new(Mutex::new(initial));
        let ends = RemoteEnds {
            controls: control_rx,
            sink: RemoteSink {
                events: event_tx,
                state: state.clone(),
            },
        };
        InteractiveSession {
            controls,
            events: Some(events),
            id,
            commands: Arc::new(CommandRegistry::default()),
            next_id: AtomicU64::new(1),
            state,
            task: tokio::spawn(run(ends)),
            tasks: Arc::new(TaskBoard::new(None)),
            remote: true,
            mode_lock: Default::default(),
            telemetry: None,
        }
    }
}
