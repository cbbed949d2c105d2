//! The terminal's modes for the full-screen UI and their restoration: raw mode, the
//! alternate screen, bracketed paste, mouse reporting, focus events and the keyboard
//! enhancement that tells Shift+Enter from Enter. `TerminalGuard` restores on drop; a
//! panic hook restores before the message prints; `suspend` hands the terminal back for
//! Ctrl+Z and takes it again on `fg`; `hand_over` lends it to an editor.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Whether the UI currently owns the terminal (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the keyboard enhancement was pushed.
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Puts the terminal in full-screen mode; restores it when dropped.
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    pub(crate) fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enter_modes()?;
        Ok(TerminalGuard { _private: () })
    }

    /// Gives the terminal back (Ctrl+Z), stops the process, and takes it again on resume.
    #[cfg(unix)]
    pub fn suspend(&self) -> io::Result<()> {
        restore();
        // SAFETY: raising SIGTSTP on ourselves is the standard job-control stop; the
        // process continues here after SIGCONT.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        enter_modes()
    }

    /// Nothing: Windows consoles have no job control to stop the process with.
    #[cfg(not(unix))]
    pub fn suspend(&self) -> io::Result<()> {
        Ok(())
    }
}

impl TerminalGuard {
    /// Gives the terminal to `program` (an editor, awaited as a tokio child so no runtime
    /// thread blocks on it) as the shell had it, and takes it back when it ends.
    pub async fn hand_over<T>(&self, program: impl Future<Output = T>) -> io::Result<T> {
        restore();
        let out = program.await;
        enter_modes()?;
        Ok(out)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn enter_modes() -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture,
        EnableFocusChange,
        cursor::Show
    )?;
    // Pushed without asking first: the query waits for an answer (up to seconds on
    // terminals that never reply), and terminals without the protocol ignore the push.
    execute!(
        out,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )?;
    ENHANCED.store(true, Ordering::SeqCst);
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Leaves every mode `enter` set. Safe to call more than once and from a panic hook or a
/// signal handler task.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}
