//! The signals that make the full-screen app quit cleanly (the terminal restored) instead
//! of ending the process with it in raw mode: SIGTERM and SIGHUP on Unix; on Windows the
//! console's close, log-off and shut-down events. (Ctrl+C is a key in raw mode.)

use std::io;

/// The registered quit signals.
pub(crate) struct QuitSignals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
    #[cfg(windows)]
    logoff: tokio::signal::windows::CtrlLogoff,
    #[cfg(windows)]
    shutdown: tokio::signal::windows::CtrlShutdown,
}

impl QuitSignals {
    /// Registers the handlers (before the terminal is altered, so no signal can take the
    /// default action once it is).
    #[cfg(unix)]
    pub(crate) fn install() -> io::Result<QuitSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(QuitSignals {
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Registers the handlers (before the terminal is altered).
    #[cfg(windows)]
    pub(crate) fn install() -> io::Result<QuitSignals> {
        use tokio::signal::windows::{ctrl_close, ctrl_logoff, ctrl_shutdown};
        Ok(QuitSignals {
            close: ctrl_close()?,
            logoff: ctrl_logoff()?,
            shutdown: ctrl_shutdown()?,
        })
    }

    /// Waits for the next quit signal.
    #[cfg(unix)]
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }

    /// Waits for the next quit signal.
    #[cfg(windows)]
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = self.close.recv() => {}
            _ = self.logoff.recv() => {}
            _ = self.shutdown.recv() => {}
        }
    }
}
