//! The frame scheduler: redraw requests are coalesced into at most one frame per
//! `min_interval` (about 120 fps), nothing is drawn when nothing changed, and animations
//! (the spinner) ask for their next frame at a time of their choosing — so an idle UI
//! sleeps in `select!` and costs no CPU.

use std::time::{Duration, Instant};

/// Coalesces redraw requests.
#[derive(Debug, Clone)]
pub struct FrameScheduler {
    min_interval: Duration,
    last_frame: Option<Instant>,
    /// The earliest time a frame is wanted, if any.
    wanted: Option<Instant>,
}

impl FrameScheduler {
    /// A scheduler that draws at most one frame per `min_interval`.
    pub fn new(min_interval: Duration) -> Self {
        FrameScheduler {
            min_interval,
            last_frame: None,
            wanted: None,
        }
    }

    /// Something changed: draw as soon as the frame budget allows.
    pub fn request(&mut self, now: Instant) {
        self.request_at(now);
    }

    /// Draw at `at` (or earlier if something else asks).
    pub fn request_at(&mut self, at: Instant) {
        self.wanted = Some(match self.wanted {
            Some(w) => w.min(at),
            None => at,
        });
    }

    /// When the next frame should be drawn; `None` when nothing is pending.
    pub fn deadline(&self) -> Option<Instant> {
        let wanted = self.wanted?;
        Some(match self.last_frame {
            Some(last) => wanted.max(last + self.min_interval),
            None => wanted,
        })
    }

    /// Whether a frame is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.deadline().is_some_and(|d| d <= now)
    }

    /// A frame was drawn.
    pub fn drawn(&mut self, now: Instant) {
        self.last_frame = Some(now);
        self.wanted = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_coalesce_and_respect_the_frame_budget() {
        let t0 = Instant::now();
        let mut s = FrameScheduler::new(Duration::from_millis(8));
        assert_eq!(s.deadline(), None, "idle: nothing to draw");
        s.request(t0);
        s.request(t0 + Duration::from_millis(1));
        assert_eq!(s.deadline(), Some(t0));
        s.drawn(t0);
        assert_eq!(s.deadline(), None);
        s.request(t0 + Duration::from_millis(2));
        assert_eq!(
            s.deadline(),
            Some(t0 + Duration::from_millis(8)),
            "at most one frame per 8 ms"
        );
        assert!(!s.due(t0 + Duration::from_millis(5)));
        assert!(s.due(t0 + Duration::from_millis(8)));
    }

    #[test]
    fn animations_ask_for_a_later_frame() {
        let t0 = Instant::now();
        let mut s = FrameScheduler::new(Duration::from_millis(8));
        s.drawn(t0);
        s.request_at(t0 + Duration::from_millis(80));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(80)));
        s.request(t0 + Duration::from_millis(10));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(10)));
    }
}
