//! The app with its overlays: where the permission popup lands over the base screen and
//! where the cursor goes, how an answer reaches the request, and a picker taking pastes
//! and closing on Ctrl+C.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use serde_json::json;
use tokio::sync::oneshot;

use super::launcher::{
    LaunchError, Launcher, LauncherError, OpenTarget, OpenedSession, SessionEntry,
};
use super::options::StartOptions;
use super::permission::{PermissionPopup, permission_popup};
use super::state::App;
use crate::theme::Theme;
use robota_sdk::settings::setup_save::SetupProfile;
use robota_sdk::{PermissionAnswer, PermissionRequest, SessionEvent};

struct TestLauncher;

impl Launcher for TestLauncher {
    fn open(&mut self, _target: OpenTarget) -> Result<OpenedSession, LaunchError> {
        Err(LaunchError::Failed("no sessions here".into()))
    }
    fn sessions(&self) -> Vec<SessionEntry> {
        Vec::new()
    }
    fn models(&self) -> Vec<String> {
        vec!["model-a".into(), "model-b".into()]
    }
    fn trust_question(&self) -> Option<(PathBuf, Vec<String>)> {
        None
    }
    fn trust(&mut self) -> Result<(), LauncherError> {
        Ok(())
    }
    fn save_setup(&mut self, _profile: &SetupProfile) -> Result<PathBuf, LauncherError> {
        Err(LauncherError::SetupCheck("not here".into()))
    }
}

const CWD: &str = "/nonexistent-robota-app-test";

fn app() -> App {
    let options = StartOptions {
        cwd: PathBuf::from(CWD),
        ..StartOptions::default()
    };
    let mut app = App::new(Box::new(TestLauncher), options, Theme::new(true));
    app.input.composer_mut().set_text("half-typed prompt");
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn bash_request() -> (PermissionRequest, oneshot::Receiver<PermissionAnswer>) {
    let (tx, rx) = oneshot::channel();
    let request = PermissionRequest::new(
        "t1".into(),
        "Bash".into(),
        json!({"command": "cargo test\ncargo clippy"}),
        String::new(),
        "Bash(cargo *)".into(),
        None,
        tx,
    );
    (request, rx)
}

fn render(app: &mut App, width: u16, height: u16) -> (Buffer, Option<Position>) {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    let cursor = app.render(buf.area, &mut buf, Instant::now());
    (buf, cursor)
}

#[test]
fn the_permission_popup_sits_on_the_composer_and_places_the_cursor_only_for_feedback() {
    for (width, height) in [(80, 24), (40, 12), (30, 6)] {
        let mut base = app();
        let (mut expected, _) = render(&mut base, width, height);
        let (request, _rx) = bash_request();
        let theme = Theme::new(true);
        let mut popup = permission_popup(&request, Path::new(CWD), width, &theme);
        // As tall as it wants: its bottom on the composer's top row when the room above
        // the composer holds it, else over the composer too, as tall as the screen allows.
        let above = height - 1;
        let composer = base.input.desired_height(width).min((above / 2).max(1));
        let area_for = |popup: &PermissionPopup| {
            let wanted = popup.height(width);
            if wanted <= above - composer {
                Rect::new(0, above - composer - wanted, width, wanted)
            } else {
                let popup_height = wanted.min(above);
                Rect::new(0, above - popup_height, width, popup_height)
            }
        };
        let area = area_for(&popup);
        popup.render(area, &mut expected);

        let mut app = app();
        app.width = width;
        app.on_session_event(SessionEvent::PermissionRequest(request));
        let (buf, cursor) = render(&mut app, width, height);
        assert_eq!(buf, expected, "{width}x{height}");
        assert_eq!(cursor, None, "no field in use: the cursor is hidden");

        for code in [KeyCode::Char('3'), KeyCode::Char('x')] {
            app.on_key(key(code));
            popup.handle_key(key(code));
        }
        let (_, cursor) = render(&mut app, width, height);
        // The feedback line made the popup taller.
        assert_eq!(
            cursor,
            popup.cursor_position(area_for(&popup)),
            "{width}x{height}"
        );
        assert!(cursor.is_some());
    }
}

#[test]
fn an_answer_reaches_the_request_and_closes_the_popup() {
    let mut app = app();
    let (request, mut rx) = bash_request();
    app.on_session_event(SessionEvent::PermissionRequest(request));
    assert!(!app.layers.is_empty());
    app.on_paste("ignored until feedback is typed");
    app.on_key(key(KeyCode::Char('1')));
    assert!(app.layers.is_empty());
    assert!(matches!(rx.try_recv(), Ok(PermissionAnswer::Allow)));
    assert_eq!(
        app.input.composer().display_text(),
        "half-typed prompt",
        "the paste went to the popup"
    );
}

#[test]
fn a_picker_covers_the_screen_takes_pastes_and_closes_on_ctrl_c() {
    let mut app = app();
    app.submit("/model".into());
    let (buf, cursor) = render(&mut app, 60, 12);
    let text = format!("{buf:?}");
    assert!(text.contains("Choose a model") && text.contains("model-b"));
    assert!(!text.contains("half-typed"), "the base is hidden");
    assert_eq!(cursor.map(|c| c.y), Some(1), "in the filter field");
    app.on_paste("b");
    let (buf, _) = render(&mut app, 60, 12);
    let text = format!("{buf:?}");
    assert!(text.contains("> b"), "{text}");
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.layers.is_empty());
    let (_, cursor) = render(&mut app, 60, 12);
    assert!(cursor.is_some(), "back in the composer");
}

#[test]
fn notification_settings_choose_osc_9_the_bell_or_nothing() {
    use super::options::Notifications;
    use serde_json::json;
    let of = |v: serde_json::Value| {
        Notifications::from_settings(&serde_json::from_value(v).expect("a settings model"))
    };
    assert_eq!(of(json!({})), Notifications::Osc9);
    assert_eq!(of(json!({"notifications": "bell"})), Notifications::Bell);
    assert_eq!(of(json!({"notifications": false})), Notifications::Off);
    assert_eq!(
        of(json!({"preferredNotifChannel": "terminal_bell"})),
        Notifications::Bell
    );
    assert_eq!(
        of(json!({"preferredNotifChannel": "notifications_disabled"})),
        Notifications::Off
    );
    assert_eq!(
        Notifications::Osc9.sequence("done\x07\x1b]"),
        Some("\x1b]9;done]\x07".to_string()),
        "control characters never reach the terminal"
    );
    assert_eq!(Notifications::Bell.sequence("x"), Some("\x07".to_string()));
    assert_eq!(Notifications::Off.sequence("x"), None);
}

#[test]
fn vim_esc_goes_to_normal_mode_and_esc_in_normal_mode_keeps_its_meaning() {
    use crate::composer::vim::VimMode;
    let mut app = app();
    app.input.composer_mut().clear();
    app.input.composer_mut().set_vim(true);
    for c in "draft".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let (buf, _) = render(&mut app, 80, 24);
    let status: String = (0..80).map(|x| buf[(x, 23)].symbol().to_string()).collect();
    assert!(status.starts_with("-- INSERT --"), "{status}");
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.input.composer().vim_mode(), Some(VimMode::Normal));
    assert_eq!(app.esc_at, None, "the first Esc only left insert mode");
    app.on_key(key(KeyCode::Char('x')));
    assert_eq!(app.input.composer().display_text(), "draf");
    let (buf, _) = render(&mut app, 80, 24);
    let status: String = (0..80).map(|x| buf[(x, 23)].symbol().to_string()).collect();
    assert!(status.starts_with("NORMAL"), "{status}");
    // Emptied in normal mode, Esc is the empty composer's Esc again (twice: rewind).
    app.on_key(key(KeyCode::Char('d')));
    app.on_key(key(KeyCode::Char('d')));
    assert!(app.input.composer().is_empty());
    app.on_key(key(KeyCode::Esc));
    assert!(
        app.esc_at.is_some(),
        "Esc on the empty composer arms the rewind"
    );
    assert_eq!(app.input.composer().vim_mode(), Some(VimMode::Normal));
}
