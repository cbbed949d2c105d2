//! The full-screen application: one `tokio::select!` over terminal input, the session's
//! events, file-index updates, what helper programs did (`helpers.rs`; none runs on the
//! loop), signals and the frame scheduler. Frames are drawn only when something changed
//! (coalesced to at most one per 8 ms, inside synchronized output); while idle the loop
//! sleeps and costs no CPU. The terminal is restored on every way out: normal exit, panic
//! (hook), SIGTERM/SIGHUP, and around Ctrl+Z.

pub mod clipboard;
pub mod draw;
pub mod helpers;
mod images;
pub mod keys;
pub mod launcher;
mod maintenance;
pub mod older_history;
pub mod options;
pub mod overlay;
pub mod permission;
pub mod picker;
mod quit_signals;
pub mod rewind;
pub mod scheduler;
pub mod setup;
pub mod shortcuts;
pub mod state;
pub mod status_command;
#[cfg(test)]
mod tests;
pub mod transcript_search;
pub mod trust;

use std::io::{self, Stdout, Write};
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use self::keys::KeyOutcome;
pub use self::launcher::{
    LaunchError, Launcher, LauncherError, OpenTarget, OpenedSession, SessionEntry,
};
pub use self::options::{ExitTranscript, Notifications, StartOptions};
use self::scheduler::FrameScheduler;
pub use self::state::App;
use crate::markdown::highlight;
use crate::terminal::TerminalGuard;
use crate::theme::Theme;
use robota_sdk::SessionEvent;

/// The shortest time between two frames (about 120 fps).
const FRAME_INTERVAL: Duration = Duration::from_millis(8);
/// The spinner's frame time.
const SPINNER_INTERVAL: Duration = Duration::from_millis(80);
/// How long leaving waits for the session's end hooks.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// How the app ended.
#[derive(Debug)]
pub struct AppExit {
    /// What stays in the scrollback: the last answer or the conversation (`exitTranscript`).
    pub transcript: Option<String>,
    /// A line to print once the terminal is restored (an error, or how to resume).
    pub message: Option<String>,
    /// Whether it ended in an error (exit status 1).
    pub failed: bool,
    /// `/bg`: the session to go on with in the background, and its next prompt (may be
    /// empty). The session is closed when this is returned.
    pub to_background: Option<ToBackground>,
}

/// A session the user moved to the background with `/bg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToBackground {
    /// The session to resume there.
    pub session_id: String,
    /// What to send it first (empty: nothing; it waits for `robota send` or attach).
    pub prompt: String,
}

type Term = Terminal<CrosstermBackend<Stdout>>;

/// Runs the app until the user leaves. The terminal is put back before this returns.
pub async fn run(launcher: Box<dyn Launcher + Send>, options: StartOptions) -> io::Result<AppExit> {
    // Handlers first: a SIGTERM or SIGHUP that arrives once the terminal is altered must
    // reach the loop below (which restores it), never the default action (which would end
    // the process with the terminal left in raw mode on the alternate screen).
    let mut quit_signals = quit_signals::QuitSignals::install()?;
    let guard = TerminalGuard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    wipe(&mut terminal)?;
    let mut app = App::new(launcher, options, Theme::from_env());
    draw(&mut terminal, &mut app)?;

    let (wake_tx, mut wake_rx) = mpsc::unbounded_channel::<()>();
    let wake = wake_tx.clone();
    // Syntaxes load when the first code block needs them (they cost ~50 MiB), not here.
    highlight::set_ready_hook(move || {
        let _ = wake.send(());
    });
    let mut input = EventStream::new();
    let mut index_updates = app.input.file_indexer().subscribe();
    let mut scheduler = FrameScheduler::new(FRAME_INTERVAL);
    let mut session_events: Option<mpsc::UnboundedReceiver<SessionEvent>> = None;
    let mut helper_results = app.helpers.take_receiver();
    let mut next_spin: Option<Instant> = None;

    app.advance_start();
    scheduler.request(Instant::now());
    let mut suspend = false;
    let mut clear = false;
    while !app.quit {
        if let Some(events) = app.events.take() {
            session_events = Some(events);
        }
        for session in app.closing.drain(..) {
            tokio::spawn(session.close());
        }
        if suspend {
            suspend = false;
            guard.suspend()?;
            clear = true;
        }
        if let Some(path) = app.take_editor_request() {
            // The input reader stops first, so the editor gets every key.
            drop(input);
            let result = guard.hand_over(maintenance::run_editor(&path)).await?;
            // Dropping the stream left a wake-up pending in crossterm's poller. Taken now,
            // before the user can type: were it still pending with their first key, the
            // poller would return on the wake-up and never read that key.
            let _ = crossterm::event::poll(std::time::Duration::ZERO);
            input = EventStream::new();
            app.editor_closed(&path, result);
            clear = true;
        }
        if clear {
            clear = false;
            wipe(&mut terminal)?;
            scheduler.request(Instant::now());
        }
        let now = Instant::now();
        run_timers(&mut app, &mut scheduler, &mut next_spin, now);
        if scheduler.due(now) {
            draw(&mut terminal, &mut app)?;
            scheduler.drawn(Instant::now());
            continue;
        }
        let deadline = scheduler.deadline().map(tokio::time::Instant::from_std);
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => match on_terminal_event(&mut app, event) {
                    KeyOutcome::Nothing => {}
                    KeyOutcome::Redraw => scheduler.request(Instant::now()),
                    KeyOutcome::FullRedraw => clear = true,
                    KeyOutcome::Suspend => suspend = true,
                },
                Some(Err(e)) => {
                    tracing::warn!("terminal input failed: {e}");
                    app.quit = true;
                }
                None => app.quit = true,
            },
            event = next_message(&mut session_events), if session_events.is_some() => {
                match event {
                    Some(event) => {
                        app.on_session_event(event);
                        // Take whatever else already arrived before drawing once.
                        while let Some(rx) = &mut session_events
                            && let Ok(event) = rx.try_recv()
                        {
                            app.on_session_event(event);
                        }
                    }
                    None => session_events = None,
                }
                scheduler.request(Instant::now());
            },
            Ok(()) = index_updates.changed() => {
                app.input.refresh_completion();
                scheduler.request(Instant::now());
            },
            Some(()) = wake_rx.recv() => scheduler.request(Instant::now()),
            Some(done) = next_message(&mut helper_results) => {
                app.helper_done(done);
                scheduler.request(Instant::now());
            },
            () = quit_signals.recv() => app.quit = true,
            () = sleep_until(deadline), if deadline.is_some() => {},
        }
        if !app.outbox.is_empty() {
            let out = terminal.backend_mut();
            for sequence in app.outbox.drain(..) {
                out.write_all(sequence.as_bytes())?;
            }
            out.flush()?;
        }
    }

    Ok(leave(app, terminal, guard).await)
}

/// Runs what is due at `now` and asks `scheduler` for the next frame the timers want: the
/// spinner of a busy turn or running tools, the status line's look at background jobs,
/// the `statusLine` command, and the hint's expiry.
fn run_timers(
    app: &mut App,
    scheduler: &mut FrameScheduler,
    next_spin: &mut Option<Instant>,
    now: Instant,
) {
    let animating = app.is_busy() || app.transcript.has_running_tools();
    if animating {
        let at = *next_spin.get_or_insert(now + SPINNER_INTERVAL);
        if at <= now {
            app.transcript.tick();
            *next_spin = Some(now + SPINNER_INTERVAL);
            scheduler.request(now);
        } else {
            scheduler.request_at(at);
        }
    } else {
        *next_spin = None;
    }
    if app.status.background_jobs > 0 {
        // A background job may end any time: the status line looks again each second.
        scheduler.request_at(now + std::time::Duration::from_secs(1));
    }
    if let Some(at) = app.status_command_start(now) {
        if at <= now {
            app.start_status_command();
        } else {
            scheduler.request_at(at);
        }
    }
    if let Some(at) = app.hint_deadline() {
        if at <= now {
            app.expire_hint();
            scheduler.request(now);
        } else {
            scheduler.request_at(at);
        }
    }
}

/// Leaves after the loop: closes the session (for at most `CLOSE_TIMEOUT`), puts the
/// terminal back, and says what to print.
async fn leave(mut app: App, terminal: Term, guard: TerminalGuard) -> AppExit {
    let transcript = app.exit_transcript();
    let session_id = app.session_id();
    let had_turns = app
        .transcript
        .cells()
        .any(|c| matches!(c, crate::transcript::Cell::UserPrompt(_)));
    if let Some(session) = app.take_session() {
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, session.close()).await;
    }
    drop(terminal);
    drop(guard);
    let failed = app
        .farewell
        .as_deref()
        .is_some_and(|m| m.starts_with("Error"));
    let to_background = app
        .background_prompt
        .take()
        .zip(session_id.clone())
        .map(|(prompt, session_id)| ToBackground { session_id, prompt });
    let message = app.farewell.take().or_else(|| {
        session_id
            .filter(|_| had_turns && to_background.is_none())
            .map(|id| format!("Resume this session with: robota --resume {id}"))
    });
    AppExit {
        transcript,
        message,
        failed,
        to_background,
    }
}

/// The next message on `channel`; never, when there is none.
async fn next_message<T>(channel: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match channel {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn on_terminal_event(app: &mut App, event: Event) -> KeyOutcome {
    match event {
        Event::Key(key) => app.on_key(key),
        Event::Paste(text) => {
            app.on_paste(&text);
            KeyOutcome::Redraw
        }
        Event::Mouse(mouse) => {
            if app.on_mouse(&mouse) {
                KeyOutcome::Redraw
            } else {
                KeyOutcome::Nothing
            }
        }
        Event::Resize(..) => KeyOutcome::Redraw,
        Event::FocusGained => {
            app.focused = true;
            KeyOutcome::Redraw
        }
        Event::FocusLost => {
            app.focused = false;
            KeyOutcome::Nothing
        }
    }
}

/// Clears the screen and forgets what is on it, so the next frame is drawn whole.
/// (`Terminal::clear` would ask the terminal for the cursor position first.)
fn wipe(terminal: &mut Term) -> io::Result<()> {
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

/// One frame inside synchronized output, so the terminal shows it whole.
fn draw(terminal: &mut Term, app: &mut App) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(|frame| app.draw(frame))?;
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}
