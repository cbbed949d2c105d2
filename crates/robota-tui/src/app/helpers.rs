//! The helper programs the UI starts — the clipboard tool for `/copy` and Ctrl+V, the
//! status-line command — never run on its loop: each runs in a task with a deadline
//! (`robota_core::helper_program`), and what it did comes back to the loop as a
//! [`HelperDone`] on the app's channel, where the app applies it (a notice, an image in the
//! composer, the status line, a page of older history read in a blocking task). Keys keep
//! working meanwhile.

use std::future::Future;

use tokio::sync::mpsc;

use super::clipboard::{self, ClipboardPlace, Delivery};
use super::state::App;
use super::status_command::StatusRun;
use crate::transcript::NoticeKind;
use robota_core::message::ImageSource;

/// What a helper did, for the loop to apply.
#[derive(Debug)]
pub enum HelperDone {
    /// `/copy` ended.
    Copy(Delivery),
    /// Ctrl+V's image, or why there is none.
    Image(Result<ImageSource, super::images::ClipboardImageError>),
    /// The status-line command ended.
    StatusLine(StatusRun),
    /// A page of a resumed log's older history was read (`older_history.rs`).
    OlderHistory(super::older_history::OlderHistoryRead),
}

/// The channel helpers report on: the app keeps the sender, the loop takes the receiver.
#[derive(Debug)]
pub struct Helpers {
    tx: mpsc::UnboundedSender<HelperDone>,
    rx: Option<mpsc::UnboundedReceiver<HelperDone>>,
}

impl Default for Helpers {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Helpers { tx, rx: Some(rx) }
    }
}

impl Helpers {
    /// Runs `work` in a task of its own; what it returns comes back on the channel.
    /// Outside a runtime (nothing to run it on) the work is dropped, unstarted.
    pub fn spawn(&self, work: impl Future<Output = HelperDone> + Send + 'static) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no async runtime: a helper program was not started");
            return;
        };
        let tx = self.tx.clone();
        runtime.spawn(async move {
            let _ = tx.send(work.await);
        });
    }

    /// The receiving end, for the loop (once).
    pub fn take_receiver(&mut self) -> Option<mpsc::UnboundedReceiver<HelperDone>> {
        self.rx.take()
    }
}

impl App {
    /// Copies `text` (`/copy`): through a clipboard program off the loop when the place
    /// has one, else through the terminal at once.
    pub(super) fn start_copy(&mut self, text: String) {
        let place = ClipboardPlace::from_env();
        if place.programs().is_empty() {
            self.copied(clipboard::through_terminal(&text, place));
            return;
        }
        self.helpers.spawn(async move {
            HelperDone::Copy(clipboard::deliver(&text, place, clipboard::feed_program).await)
        });
    }

    /// A helper ended: what it did goes into the app.
    pub fn helper_done(&mut self, done: HelperDone) {
        match done {
            HelperDone::Copy(delivery) => self.copied(delivery),
            HelperDone::Image(read) => self.clipboard_image_read(read),
            HelperDone::StatusLine(run) => self.status_command_done(run),
            HelperDone::OlderHistory(read) => self.older_history_read(read),
        }
    }

    fn copied(&mut self, delivery: Delivery) {
        self.outbox.extend(delivery.terminal_bytes);
        let kind = if delivery.copied {
            NoticeKind::Info
        } else {
            NoticeKind::Warning
        };
        self.notice(kind, delivery.message);
    }
}
