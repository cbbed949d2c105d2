//! The status line under the composer: model, permission mode, context use (green under
//! 70 %, yellow under 90 %, red above), tokens and cost, session name, git branch, and
//! while a turn runs a spinner with the elapsed seconds and "esc to interrupt" (or the
//! retry notice), and how many background jobs run. Rendering is a pure function of `StatusLine` and the time; a line too
//! wide for the screen drops its last segments whole instead of cutting one mid-word.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use robota_core::context::ContextState;
use robota_core::permission::PermissionMode;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct StatusLine {
    /// The model name, as the session reports it.
    pub model: String,
    /// The permission mode (Shift+Tab cycles it).
    pub mode: PermissionMode,
    /// How full the context window is; `None` until the session reports it.
    pub context: Option<ContextState>,
    /// Tokens used so far: input, output and cache reads and writes together; the
    /// tokens-and-cost segment is hidden while 0.
    pub tokens: u64,
    /// `None` while no call was priced, or when a price is unknown.
    pub cost_usd: Option<f64>,
    /// Set when the session could not price a call: shows "cost unknown" instead of a price.
    pub cost_unknown: bool,
    /// The session's name, when it has one.
    pub session_name: Option<String>,
    /// The git branch of the working directory, when known.
    pub git_branch: Option<String>,
    /// Set while a turn runs.
    pub busy_since: Option<Instant>,
    /// "retrying in 4 s (attempt 2 of 4)" while a retry waits.
    pub retry: Option<String>,
    /// Background jobs still running.
    pub background_jobs: usize,
    /// Whether to draw with colours (off under `NO_COLOR`).
    pub colors: bool,
}

impl StatusLine {
    fn style(&self, color: Color) -> Style {
        if self.colors {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    /// The colour of the context share: green < 70 %, yellow < 90 %, red above.
    pub fn context_color(percent: u8) -> Color {
        match percent {
            0..70 => Color::Green,
            70..90 => Color::Yellow,
            _ => Color::Red,
        }
    }

    /// The line at time `now` (the spinner frame and elapsed seconds come from it).
    pub fn line(&self, now: Instant) -> Line<'static> {
        self.join(self.segments(now))
    }

    /// The line cut to `width` columns at a segment boundary: the last segments (branch,
    /// session name, tokens, …) are dropped whole rather than cut mid-word; only a first
    /// segment wider than the line is clipped.
    pub fn line_for_width(&self, width: u16, now: Instant) -> Line<'static> {
        let mut segments = self.segments(now);
        while segments.len() > 1 && self.join(segments.clone()).width() > usize::from(width) {
            segments.pop();
        }
        self.join(segments)
    }

    fn dim(&self) -> Style {
        self.style(Color::DarkGray)
    }

    fn join(&self, segments: Vec<Vec<Span<'static>>>) -> Line<'static> {
        let mut spans = Vec::new();
        for (i, segment) in segments.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" · ", self.dim()));
            }
            spans.extend(segment);
        }
        Line::from(spans)
    }

    /// The line's parts, most important first; none before a session is open (the setup
    /// and trust screens have no model or mode to show).
    fn segments(&self, now: Instant) -> Vec<Vec<Span<'static>>> {
        let mut segments = Vec::new();
        if self.model.is_empty() {
            return segments;
        }
        if let Some(since) = self.busy_since {
            let elapsed = now.saturating_duration_since(since);
            let frame = (elapsed.as_millis() / 80) as usize % SPINNER.len();
            let spinner = Span::styled(format!("{} ", SPINNER[frame]), self.style(Color::Cyan));
            match &self.retry {
                Some(retry) => segments.push(vec![
                    spinner,
                    Span::styled(retry.clone(), self.style(Color::Yellow)),
                ]),
                None => {
                    segments.push(vec![spinner, Span::raw(format!("{}s", elapsed.as_secs()))]);
                    segments.push(vec![Span::raw("esc to interrupt")]);
                }
            }
        }
        segments.push(vec![Span::styled(
            self.model.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        )]);
        let mode_color = match self.mode {
            PermissionMode::Default => Color::Reset,
            PermissionMode::AcceptEdits => Color::Green,
            PermissionMode::Plan => Color::Blue,
            PermissionMode::BypassPermissions => Color::Red,
        };
        segments.push(vec![Span::styled(
            self.mode.as_str().to_string(),
            self.style(mode_color),
        )]);
        match self.background_jobs {
            0 => {}
            1 => segments.push(vec![Span::styled(
                "1 background job",
                self.style(Color::Cyan),
            )]),
            n => segments.push(vec![Span::styled(
                format!("{n} background jobs"),
                self.style(Color::Cyan),
            )]),
        }
        if let Some(ctx) = self.context {
            let pct = ctx.percent();
            segments.push(vec![Span::styled(
                format!("ctx {pct}%"),
                self.style(Self::context_color(pct)),
            )]);
        }
        if self.tokens > 0 {
            let cost = match (self.cost_usd, self.cost_unknown) {
                (_, true) => "cost unknown".to_string(),
                (Some(c), false) => format!("${c:.2}"),
                (None, false) => "$0.00".to_string(),
            };
            segments.push(vec![
                Span::raw(format!("{} tok", short_count(self.tokens))),
                Span::styled(" · ", self.dim()),
                Span::raw(cost),
            ]);
        }
        if let Some(name) = &self.session_name {
            segments.push(vec![Span::raw(name.clone())]);
        }
        if let Some(branch) = &self.git_branch {
            segments.push(vec![Span::styled(format!("⎇ {branch}"), self.dim())]);
        }
        if self.mode != PermissionMode::Default && self.busy_since.is_none() {
            // How to leave the mode again, as Claude Code says; the first to go when
            // the line is narrow.
            segments.push(vec![Span::styled("shift+tab to cycle", self.dim())]);
        }
        segments
    }

    /// Draws the line into `area`, fitted to its width; `now` drives the spinner and
    /// the elapsed time.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        Paragraph::new(self.line_for_width(area.width, now)).render(area, buf);
    }

    /// How soon the line changes by itself (the spinner), if at all.
    pub fn next_change(&self) -> Option<Duration> {
        self.busy_since.map(|_| Duration::from_millis(80))
    }
}

/// 1234 → "1.2k", 2_500_000 → "2.5M".
pub fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn idle_and_busy_lines_show_what_matters() {
        let now = Instant::now();
        let mut s = StatusLine {
            model: "claude-sonnet-4-6".into(),
            mode: PermissionMode::AcceptEdits,
            context: Some(ContextState {
                used_tokens: 150_000,
                window: 200_000,
            }),
            tokens: 12_345,
            cost_usd: Some(0.1234),
            session_name: Some("fix-tests".into()),
            git_branch: Some("main".into()),
            colors: true,
            ..StatusLine::default()
        };
        assert_eq!(
            text(&s.line(now)),
            "claude-sonnet-4-6 · acceptEdits · ctx 75% · 12.3k tok · $0.12 · fix-tests · ⎇ main · shift+tab to cycle"
        );
        let ctx_span = s
            .line(now)
            .spans
            .into_iter()
            .find(|sp| sp.content.starts_with("ctx"))
            .unwrap();
        assert_eq!(ctx_span.style.fg, Some(Color::Yellow));
        s.busy_since = Some(now - Duration::from_secs(3));
        assert!(text(&s.line(now)).contains("3s · esc to interrupt"));
        s.retry = Some("retrying in 4 s (attempt 1 of 4)".into());
        assert!(text(&s.line(now)).contains("retrying in 4 s"));
        s.cost_unknown = true;
        assert!(text(&s.line(now)).contains("cost unknown"));
    }

    #[test]
    fn no_session_no_line() {
        let s = StatusLine::default();
        assert_eq!(text(&s.line(Instant::now())), "");
    }

    #[test]
    fn a_narrow_line_drops_whole_segments_from_the_end() {
        let now = Instant::now();
        let s = StatusLine {
            model: "claude-sonnet-4-6".into(),
            mode: PermissionMode::AcceptEdits,
            context: Some(ContextState {
                used_tokens: 80_000,
                window: 200_000,
            }),
            tokens: 48_210,
            cost_usd: Some(0.43),
            session_name: Some("fix-login".into()),
            git_branch: Some("main".into()),
            colors: true,
            ..StatusLine::default()
        };
        let full = text(&s.line(now));
        assert_eq!(text(&s.line_for_width(200, now)), full);
        assert_eq!(
            text(&s.line_for_width(80, now)),
            "claude-sonnet-4-6 · acceptEdits · ctx 40% · 48.2k tok · $0.43 · fix-login"
        );
        assert_eq!(
            text(&s.line_for_width(40, now)),
            "claude-sonnet-4-6 · acceptEdits"
        );
        assert_eq!(
            text(&s.line_for_width(5, now)),
            "claude-sonnet-4-6",
            "clipped by the area"
        );
    }

    #[test]
    fn context_colours_follow_the_thresholds() {
        assert_eq!(StatusLine::context_color(0), Color::Green);
        assert_eq!(StatusLine::context_color(69), Color::Green);
        assert_eq!(StatusLine::context_color(70), Color::Yellow);
        assert_eq!(StatusLine::context_color(89), Color::Yellow);
        assert_eq!(StatusLine::context_color(90), Color::Red);
    }

    #[test]
    fn no_color_mode_styles_nothing_by_colour() {
        let s = StatusLine {
            model: "m".into(),
            context: Some(ContextState {
                used_tokens: 95,
                window: 100,
            }),
            colors: false,
            ..StatusLine::default()
        };
        assert!(
            s.line(Instant::now())
                .spans
                .iter()
                .all(|sp| sp.style.fg.is_none() || sp.style.fg == Some(Color::Reset))
        );
    }
}
