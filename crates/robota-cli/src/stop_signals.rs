//! The signals that end a headless run's turn cleanly instead of killing the process:
//! SIGINT (Ctrl+C), SIGTERM (a supervisor stopping it) and SIGHUP (its terminal closed).
//! Each is registered before any output; the first to arrive interrupts the turn (the
//! partial answer is kept, the result printed) and decides the exit code, 128 + the
//! signal's number as shells report it: 130, 143, 129.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Exit code after SIGINT.
pub const EXIT_SIGINT: u8 = 130;
/// Exit code after SIGTERM.
pub const EXIT_SIGTERM: u8 = 143;
/// Exit code after SIGHUP.
pub const EXIT_SIGHUP: u8 = 129;

/// The registered stop signals.
pub struct StopSignals {
    handlers: Vec<(Signal, u8)>,
}

impl StopSignals {
    /// Registers the handlers; one that cannot be registered is reported on stderr and left
    /// to its default action.
    pub fn install() -> Self {
        let mut handlers = Vec::new();
        for (kind, name, code) in [
            (SignalKind::interrupt(), "Ctrl+C", EXIT_SIGINT),
            (SignalKind::terminate(), "SIGTERM", EXIT_SIGTERM),
            (SignalKind::hangup(), "SIGHUP", EXIT_SIGHUP),
        ] {
            match signal(kind) {
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
