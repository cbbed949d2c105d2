//! The whole app frame (`App::render`) and the widgets drawn only inside it: the status
//! line at the three context colours, busy, retrying and without colours; a conversation
//! at 80×24, 20 columns, 120×40 and 1×1; a queued prompt with the Ctrl+C hint; the
//! permission popup (an Edit diff, Bash without a rule, Korean feedback being typed) over
//! the frame; and the slash popup opened by typing `/co`. Each app snapshot ends with the
//! terminal cursor's position.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Color;
use robota::core::context::ContextState;
use robota::core::permission::PermissionMode;
use robota::sdk::settings::setup_save::SetupProfile;
use robota::sdk::{QueuedSubmission, SessionEvent, SessionState, SubmissionId};
use robota::tui::app::permission::PermissionPopup;
use robota::tui::app::{
    App, LaunchError, Launcher, LauncherError, OpenTarget, OpenedSession, SessionEntry,
    StartOptions,
};
use robota::tui::diff::DiffView;
use robota::tui::markdown::{StreamingMarkdown, highlight};
use robota::tui::status::StatusLine;
use robota::tui::theme::Theme;
use robota::tui::transcript::{Cell, ToolCallCell};
use unicode_width::UnicodeWidthStr;

use crate::assert_buffer_snapshot;

/// A launcher that opens nothing: these tests fill the app's state by hand.
struct NoLauncher;

impl Launcher for NoLauncher {
    fn open(&mut self, _target: OpenTarget) -> Result<OpenedSession, LaunchError> {
        Err(LaunchError::Failed("no sessions in render tests".into()))
    }
    fn sessions(&self) -> Vec<SessionEntry> {
        Vec::new()
    }
    fn models(&self) -> Vec<String> {
        Vec::new()
    }
    fn trust_question(&self) -> Option<(PathBuf, Vec<String>)> {
        None
    }
    fn trust(&mut self) -> Result<(), LauncherError> {
        Ok(())
    }
    fn save_setup(&mut self, _profile: &SetupProfile) -> Result<PathBuf, LauncherError> {
        Err(LauncherError::SetupCheck("not in render tests".into()))
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// The text of one buffer row, as the terminal shows it (the cells a wide grapheme
/// covers are skipped).
fn row(buf: &Buffer, y: u16) -> String {
    let mut text = String::new();
    let mut x = buf.area.left();
    while x < buf.area.right() {
        let symbol = buf[(x, y)].symbol();
        text.push_str(symbol);
        x += u16::try_from(UnicodeWidthStr::width(symbol).max(1)).unwrap_or(1);
    }
    text
}

/// The status line's usual content, at `used` tokens of a 200k window.
fn status(used: u64, colors: bool) -> StatusLine {
    StatusLine {
        model: "claude-sonnet-4-6".into(),
        mode: PermissionMode::AcceptEdits,
        context: Some(ContextState {
            used_tokens: used,
            window: 200_000,
        }),
        tokens: 48_210,
        cost_usd: Some(0.4321),
        session_name: Some("fix-login".into()),
        git_branch: Some("main".into()),
        colors,
        ..StatusLine::default()
    }
}

fn render_status(line: &StatusLine, width: u16, now: Instant) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, 1));
    line.render(buf.area, &mut buf, now);
    buf
}

/// The foreground colour of the cell where `text` starts on row 0.
fn color_of(buf: &Buffer, text: &str) -> Option<Color> {
    let line = row(buf, 0);
    let column = line.find(text)?;
    let x = u16::try_from(UnicodeWidthStr::width(&line[..column])).ok()?;
    Some(buf[(x, 0)].fg)
}

#[test]
fn status_line_context_colours() {
    let now = Instant::now();
    for (used, percent, color) in [
        (80_000, 40, Color::Green),
        (160_000, 80, Color::Yellow),
        (190_000, 95, Color::Red),
    ] {
        let buf = render_status(&status(used, true), 100, now);
        assert!(row(&buf, 0).contains(&format!("ctx {percent}%")));
        assert_eq!(color_of(&buf, "ctx"), Some(color), "{percent}%");
        assert_buffer_snapshot!(format!("app_status_ctx_{percent}"), buf);
    }
}

#[test]
fn status_line_busy_retrying_and_without_colours() {
    let now = Instant::now();
    let mut busy = status(80_000, true);
    busy.busy_since = Some(now - Duration::from_secs(12));
    let buf = render_status(&busy, 120, now);
    assert!(row(&buf, 0).starts_with("⠋ 12s · esc to interrupt · claude-sonnet-4-6"));
    assert_buffer_snapshot!("app_status_busy", buf);

    busy.retry = Some("retrying in 4 s (attempt 2 of 4)".into());
    let buf = render_status(&busy, 120, now);
    assert!(row(&buf, 0).contains("retrying in 4 s (attempt 2 of 4)"));
    assert!(!row(&buf, 0).contains("esc to interrupt"));
    assert_eq!(color_of(&buf, "retrying"), Some(Color::Yellow));
    assert_buffer_snapshot!("app_status_retry", buf);

    let mut plain = status(190_000, false);
    plain.busy_since = Some(now - Duration::from_secs(12));
    let buf = render_status(&plain, 120, now);
    assert!(row(&buf, 0).contains("ctx 95%"));
    assert!(
        buf.content()
            .iter()
            .all(|cell| cell.fg == Color::Reset && cell.bg == Color::Reset),
        "no colour without colours"
    );
    assert_buffer_snapshot!("app_status_no_color", buf);
}

/// An app with a short conversation, typed text and a full status line.
fn conversation_app() -> App {
    highlight::load_blocking();
    let theme = Theme::new(true);
    let options = StartOptions {
        cwd: PathBuf::from("/nonexistent-robota-render-test"),
        ..StartOptions::default()
    };
    let mut app = App::new(Box::new(NoLauncher), options, theme);
    app.transcript.push(Cell::UserPrompt(
        "Why does the login test fail? 로그인 테스트가 왜 실패하나요?".into(),
    ));
    app.transcript
        .push(Cell::Assistant(StreamingMarkdown::from_text(
            theme,
            "The session **expires** before the retry.\n\n\
         - `login()` sets a 1 s timeout\n\
         - the test waits 2 s\n\n\
         ```rust\nlet timeout = Duration::from_secs(1);\n```\n",
        )));
    let mut call = ToolCallCell::new("c1", "Bash");
    call.summary = "cargo test login".into();
    call.finish(
        "running 1 test\ntest login_retries ... FAILED\n",
        true,
        None,
    );
    call.duration = Some(Duration::from_millis(1_250));
    app.transcript.push(Cell::ToolCall(call));
    app.input
        .composer_mut()
        .set_text("raise the timeout to 5 s");
    app.status = status(80_000, true);
    app
}

fn render_app(app: &mut App, width: u16, height: u16, now: Instant) -> (Buffer, Option<Position>) {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    let cursor = app.render(buf.area, &mut buf, now);
    (buf, cursor)
}

/// Snapshots a frame with the cursor's position under it.
fn assert_frame_snapshot(name: &str, buf: &Buffer, cursor: Option<Position>) {
    crate::with_snapshot_settings(|| {
        insta::assert_snapshot!(name.to_string(), format!("{buf:?}\ncursor: {cursor:?}"));
    });
}

/// Every row's cells add up to the width: no wide grapheme hangs over the edge.
fn assert_no_spill(buf: &Buffer) {
    for y in buf.area.top()..buf.area.bottom() {
        let mut x = buf.area.left();
        while x < buf.area.right() {
            let width = UnicodeWidthStr::width(buf[(x, y)].symbol()).max(1);
            assert!(
                usize::from(x) + width <= usize::from(buf.area.right()),
                "row {y} spills: {:?}",
                row(buf, y)
            );
            x += u16::try_from(width).unwrap_or(1);
        }
    }
}

#[test]
fn app_frame_at_80x24() {
    let mut app = conversation_app();
    let now = Instant::now();
    let (buf, cursor) = render_app(&mut app, 80, 24, now);
    assert!(row(&buf, 23).starts_with("claude-sonnet-4-6 · acceptEdits · ctx 40%"));
    assert!(
        row(&buf, 23).trim_end().ends_with("· fix-login"),
        "the branch that does not fit is dropped whole"
    );
    let text: Vec<String> = (0..24).map(|y| row(&buf, y)).collect();
    assert!(
        text.iter()
            .any(|r| r.contains("Why does the login test fail?"))
    );
    assert!(text.iter().any(|r| r.contains("cargo test login")));
    assert!(text.iter().any(|r| r.contains("raise the timeout to 5 s")));
    let cursor = cursor.expect("the composer places the cursor");
    assert!(row(&buf, cursor.y).contains("raise the timeout"));
    assert_no_spill(&buf);
    assert_frame_snapshot("app_frame_80x24", &buf, Some(cursor));
}

#[test]
fn app_frame_at_other_sizes() {
    let now = Instant::now();
    for (width, height) in [(20, 24), (120, 40), (1, 1)] {
        let mut app = conversation_app();
        let (buf, cursor) = render_app(&mut app, width, height, now);
        if height > 1 {
            assert!(row(&buf, height - 1).starts_with("claude-sonnet"));
            let cursor = cursor.expect("the composer places the cursor");
            assert!(buf.area.contains(cursor));
        }
        assert_no_spill(&buf);
        assert_frame_snapshot(&format!("app_frame_{width}x{height}"), &buf, cursor);
    }
}

#[test]
fn app_with_a_queued_prompt_and_the_exit_hint() {
    let mut app = conversation_app();
    let now = Instant::now();
    // The queue is the session's: it arrives in a state event.
    app.on_session_event(SessionEvent::State(SessionState {
        session_id: "s".into(),
        name: Some("fix-login".into()),
        model: "claude-sonnet-4-6".into(),
        mode: PermissionMode::AcceptEdits,
        usage: Default::default(),
        cost_usd: None,
        models: Vec::new(),
        context: None,
        running: Some(SubmissionId(1)),
        queue: vec![QueuedSubmission {
            id: SubmissionId(2),
            text: "then update the changelog\nand bump the version".into(),
        }],
        steering: Vec::new(),
    }));
    app.status = status(80_000, true);
    app.status.busy_since = Some(now - Duration::from_secs(12));
    app.input.composer_mut().set_text("");
    app.hint = Some("Press Ctrl+C again to exit".into());
    let (buf, cursor) = render_app(&mut app, 80, 24, now);
    assert_eq!(row(&buf, 23).trim_end(), "Press Ctrl+C again to exit");
    let queued = (0..23)
        .find(|&y| row(&buf, y).contains("queued: then update the changelog …"))
        .expect("the queued prompt is shown");
    let cursor = cursor.expect("the composer places the cursor");
    assert!(
        queued < cursor.y,
        "the queued prompt sits above the composer"
    );
    assert_frame_snapshot("app_queued_and_hint", &buf, Some(cursor));
}

/// The rectangle `App::render` gives a permission popup: above the composer, as tall as
/// the popup wants and the room allows.
fn popup_area(app: &mut App, popup: &PermissionPopup, screen: Rect) -> Rect {
    let above = screen.height - 1;
    let composer = app
        .input
        .desired_height(screen.width)
        .min((above / 2).max(1));
    // Above the composer when it fits there, else over the composer too (as the app's
    // permission overlay places it).
    let wanted = popup.height(screen.width);
    if wanted <= above - composer {
        return Rect::new(0, above - composer - wanted, screen.width, wanted);
    }
    let height = wanted.min(above);
    Rect::new(0, above - height, screen.width, height)
}

/// The app frame with `popup` drawn where the app puts it; returns the popup's cursor.
fn frame_with_popup(
    popup: &PermissionPopup,
    width: u16,
    height: u16,
) -> (Buffer, Option<Position>) {
    let mut app = conversation_app();
    let now = Instant::now();
    app.status.busy_since = Some(now - Duration::from_secs(12));
    app.input.composer_mut().set_text("");
    let (mut buf, _) = render_app(&mut app, width, height, now);
    let area = popup_area(&mut app, popup, buf.area);
    popup.render(area, &mut buf);
    (buf, popup.cursor_position(area))
}

fn edit_popup(width: u16) -> PermissionPopup {
    let theme = Theme::new(true);
    let before = "fn login(client: &Client) -> Result<Session> {\n    let timeout = Duration::from_secs(1);\n    client.login(timeout)\n}\n";
    let after = before.replace("from_secs(1)", "from_secs(5)");
    let diff = DiffView::new("src/auth.rs", Some(before), &after);
    let preview = diff.render(width.saturating_sub(4).max(20), true, &theme);
    PermissionPopup::new(
        "Edit",
        "src/auth.rs".into(),
        preview,
        "Edit(src/**)".into(),
        true,
    )
    .with_diff(diff, theme)
}

#[test]
fn permission_popup_for_an_edit_over_the_frame() {
    for width in [80, 40] {
        let popup = edit_popup(width);
        let (buf, cursor) = frame_with_popup(&popup, width, 24);
        assert_eq!(cursor, None, "no text field, no cursor");
        let text: Vec<String> = (0..24).map(|y| row(&buf, y)).collect();
        assert!(text.iter().any(|r| r.contains("Do you want to proceed?")));
        assert!(text.iter().any(|r| r.contains("secs(5)")));
        assert!(text.iter().any(|r| r.contains("3. No")));
        assert!(text[23].contains("esc to interrupt"), "status line stays");
        assert_no_spill(&buf);
        assert_buffer_snapshot!(format!("app_permission_edit_{width}"), buf);
    }
}

#[test]
fn permission_popup_for_bash_without_a_rule() {
    let popup = PermissionPopup::new(
        "Bash",
        "cargo test login -- --nocapture".into(),
        Vec::new(),
        String::new(),
        true,
    );
    let (buf, _) = frame_with_popup(&popup, 80, 24);
    let text: Vec<String> = (0..24).map(|y| row(&buf, y)).collect();
    assert!(text.iter().any(|r| r.contains("1. Yes")));
    assert!(text.iter().any(|r| r.contains("2. No")));
    assert!(!text.iter().any(|r| r.contains("don't ask again")));
    assert_buffer_snapshot!("app_permission_bash_no_rule", buf);
}

#[test]
fn permission_popup_typing_korean_feedback() {
    for width in [80, 40] {
        let mut popup = edit_popup(width);
        popup.handle_key(key(KeyCode::Char('3')));
        for c in "타임아웃은 3초로 해 주세요".chars() {
            popup.handle_key(key(KeyCode::Char(c)));
        }
        let (buf, cursor) = frame_with_popup(&popup, width, 24);
        let text: String = (0..24).map(|y| row(&buf, y) + "\n").collect();
        assert!(text.contains("Tell robota what to do"), "{text}");
        assert!(text.contains("주세요"), "{text}");
        let cursor = cursor.expect("the cursor follows the typed feedback");
        let cursor_row = row(&buf, cursor.y);
        assert!(cursor_row.contains("주세요"), "{cursor_row}");
        assert_eq!(
            buf[(cursor.x - 2, cursor.y)].symbol(),
            "요",
            "right after the text"
        );
        assert_no_spill(&buf);
        assert_frame_snapshot(
            &format!("app_permission_feedback_{width}"),
            &buf,
            Some(cursor),
        );
    }
}

#[test]
fn permission_popup_in_a_short_frame_keeps_its_options() {
    let mut popup = edit_popup(80);
    popup.handle_key(key(KeyCode::Char('3')));
    popup.handle_key(key(KeyCode::Char('x')));
    let (buf, cursor) = frame_with_popup(&popup, 80, 14);
    let text: Vec<String> = (0..14).map(|y| row(&buf, y)).collect();
    assert!(
        text.iter().any(|r| r.contains("src/auth.rs")),
        "the summary stays"
    );
    assert!(
        text.iter()
            .any(|r| r.contains("- ") && r.contains("from_secs(1)"))
            && text
                .iter()
                .any(|r| r.contains("+ ") && r.contains("from_secs(5)")),
        "the changed lines stay, their context gives way: {text:#?}"
    );
    assert!(
        text.iter().any(|r| r.contains("3. No")),
        "every option stays"
    );
    let cursor = cursor.expect("the cursor follows the typed feedback");
    assert!(row(&buf, cursor.y).contains("instead: x"));
    assert_frame_snapshot("app_permission_short_frame", &buf, Some(cursor));
}

#[test]
fn slash_popup_opened_by_typing() {
    let mut app = conversation_app();
    app.input.composer_mut().set_text("");
    for c in "/co".chars() {
        app.input.handle_key(key(KeyCode::Char(c)));
    }
    assert!(app.input.popup_open(), "typing /co opens the slash popup");
    let (buf, cursor) = render_app(&mut app, 80, 24, Instant::now());
    let text: Vec<String> = (0..24).map(|y| row(&buf, y)).collect();
    for command in ["/context", "/cost", "/copy"] {
        assert!(text.iter().any(|r| r.contains(command)), "{command}");
    }
    let cursor = cursor.expect("the composer places the cursor");
    assert!(
        row(&buf, cursor.y).contains("/co"),
        "the cursor stays in the composer"
    );
    assert_frame_snapshot("app_slash_popup", &buf, Some(cursor));
}

#[test]
fn tiny_frames_keep_inside_their_area() {
    for (width, height) in [(2, 2), (5, 3), (20, 4)] {
        let mut app = conversation_app();
        let (buf, cursor) = render_app(&mut app, width, height, Instant::now());
        assert!(row(&buf, height - 1).starts_with(&"claude"[..usize::from(width).min(6)]));
        assert!(cursor.is_none_or(|c| buf.area.contains(c)), "{cursor:?}");
        assert_no_spill(&buf);
    }
}
