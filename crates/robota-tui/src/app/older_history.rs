//! Older history on demand in the full-screen UI: once the user scrolls to the top of a
//! resumed transcript with older history above it, a page of it is read off the loop (a
//! blocking task: the session layer reads the log, `OlderHistory::read_page`) and comes
//! back as a [`HelperDone::OlderHistory`] for the transcript to put above its cells. At
//! most [`PAGE_MESSAGES`] messages come in per read, so even a log of hundreds of MB
//! costs one page at a time; the next scroll to the top reads the next one.

use super::helpers::HelperDone;
use super::state::App;
use robota_sdk::{LogError, OlderHistory, OlderPage};

/// Messages read per scroll to the top.
pub const PAGE_MESSAGES: usize = 2_000;

/// Why a page of older history did not arrive.
#[derive(Debug, thiserror::Error)]
pub enum OlderHistoryError {
    /// The log could not be read, or changed since the resume.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The reading task ended without an answer.
    #[error("the reader stopped: {0}")]
    Stopped(#[from] tokio::task::JoinError),
}

/// A page of older history read (or not) for the transcript.
#[derive(Debug)]
pub struct OlderHistoryRead {
    /// The part it was read from.
    pub source: OlderHistory,
    /// The page, or why there is none.
    pub page: Result<OlderPage, OlderHistoryError>,
}

impl App {
    /// After a scroll: when the view reached the top with older history above, reads its
    /// next page off the loop.
    pub(super) fn load_older_history_at_top(&mut self) {
        let Some(source) = self.transcript.older_wanted() else {
            return;
        };
        self.helpers.spawn(async move {
            let part = source.clone();
            let page = tokio::task::spawn_blocking(move || part.read_page(PAGE_MESSAGES)).await;
            let page = match page {
                Ok(read) => read.map_err(OlderHistoryError::from),
                Err(stopped) => Err(stopped.into()),
            };
            HelperDone::OlderHistory(OlderHistoryRead { source, page })
        });
    }

    /// A page of older history arrived: the transcript puts it above its cells.
    pub(super) fn older_history_read(&mut self, read: OlderHistoryRead) {
        self.transcript.older_loaded(&read.source, read.page);
    }
}
