//! The full-screen application: the event loop over terminal input, session events and the
//! frame scheduler, and the popups stacked above the transcript and composer.

pub mod permission;
pub mod picker;
pub mod scheduler;
pub mod setup;
pub mod trust;
