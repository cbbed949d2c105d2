//! The signals that end a headless run's turn cleanly instead of killing the process:
//! SIGINT (Ctrl+C), SIGTERM (a supervisor stopping it) and SIGHUP (its terminal closed).
//! Each is registered before any output; the first to arrive interrupts the turn (the
//! partial answer is kept, the result printed) and decides the exit code, 128 + the
//! signal's number as shells report it: 130, 143, 129. On Windows the console's events
//! stand in: Ctrl+C (130), shut-down (143) and the console closed (129).

#[cfg(unix)]
use tokio::signal::unix::{Signal as Handler, SignalKind, signal};

/// Exit code after SIGINT.
pub const EXIT_SIGINT: u8 = 130;
/// Exit code after SIGTERM.
pub const EXIT_SIGTERM: u8 = 143;
/// Exit code after SIGHUP.
pub const EXIT_SIGHUP: u8 = 129;

/// How one handler is registered, what it is called in a warning, and its exit code.
type Registration = (fn() -> std::io::Result<Handler>, &'static str, u8);

#[cfg(unix)]
const REGISTRATIONS: [Registration; 3] = [
    (|| signal(SignalKind::interrupt()), "Ctrl+C", EXIT_SIGINT),
    (|| signal(SignalKind::terminate()), "SIGTERM", EXIT_SIGTERM),
    (|| signal(SignalKind::hangup()), "SIGHUP", EXIT_SIGHUP),
];

#[cfg(windows)]
const REGISTRATIONS: [Registration; 3] = [
    (
        || tokio::signal::windows::ctrl_c().map(Handler::CtrlC),
        "Ctrl+C",
        EXIT_SIGINT,
    ),
    (
        || tokio::signal::windows::ctrl_shutdown().map(Handler::Shutdown),
        "shut-down",
        EXIT_SIGTERM,
    ),
    (
        || tokio::signal::windows::ctrl_close().map(Handler::Close),
        "console close",
        EXIT_SIGHUP,
    ),
];

/// A Windows console event handler.
#[cfg(windows)]
pub enum Handler {
    /// Ctrl+C.
    CtrlC(tokio::signal::windows::CtrlC),
    /// The system shutting down.
    Shutdown(tokio::signal::windows::CtrlShutdown),
    /// The console window closed.
    Close(tokio::signal::windows::CtrlClose),
}

#[cfg(windows)]
impl Handler {
    /// Waits for the next event (`None` when no more can come).
    pub async fn recv(&mut self) -> Option<()> {
        match self {
            Handler::CtrlC(handler) => handler.recv().await,
            Handler::Shutdown(handler) => handler.recv().await,
            Handler::Close(handler) => handler.recv().await,
        }
    }
}

/// The Ctrl+C handler alone (what stream-json input mode interrupts a turn on); `None`
/// when it cannot be registered.
pub fn interrupt() -> Option<Handler> {
    (REGISTRATIONS[0].0)().ok()
}

/// The registered stop signals.
pub struct StopSignals {
    handlers: Vec<(Handler, u8)>,
}

impl StopSignals {
    /// Registers the handlers; one that cannot be registered is reported on stderr and left
    /// to its default action.
    pub fn install() -> Self {
        let mut handlers = Vec::new();
        for (register, name, code) in REGISTRATIONS {
            match register() {
                Ok(handler) => handlers.push((handler, code)),
                Err(e) => eprintln!("robota: warning: cannot handle {name}: {e}"),
            }
        }
        StopSignals { handlers }
    }

    /// Waits for the next stop signal and returns its exit code (never, when none could be
    /// registered).
    pub async fn recv(&mut self) -> u8 {
        if self.handlers.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.handlers.iter_mut().map(|(handler, code)| {
            let code = *code;
            Box::pin(async move {
                handler.recv().await;
                code
            })
        });
        futures_util::future::select_all(waits).await.0
    }
}
