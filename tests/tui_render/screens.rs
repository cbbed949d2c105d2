//! The full-screen prompts: the session and model pickers (a CJK title, filtered, empty,
//! colours off), every step of the first-run setup (the key masked), and the workspace
//! trust question, at 80×24 and 20 columns, and the picker in a 1×1 area.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use robota::tui::app::picker::{Picker, PickerItem, age_label};
use robota::tui::app::setup::SetupScreen;
use robota::tui::app::trust::TrustPrompt;

use crate::assert_buffer_snapshot;

/// The sizes every screen is snapshotted at: a usual terminal and a narrow one.
const SIZES: [(u16, u16); 2] = [(80, 24), (20, 24)];

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn draw(width: u16, height: u16, render: impl FnOnce(Rect, &mut Buffer)) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    render(buf.area, &mut buf);
    buf
}

fn sessions(colors: bool) -> Picker {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    let at = |secs: u64| age_label(now - Duration::from_secs(secs), now);
    let item = |id: &str, title: &str, age: u64, messages: u32| PickerItem {
        id: id.into(),
        title: title.into(),
        detail: format!("{} · {messages} messages", at(age)),
    };
    Picker::new(
        "Resume a session",
        vec![
            item("s1", "Fix the flaky login test on CI", 40, 12),
            item("s2", "로그인 버그 고치기 — 세션 만료 처리", 3 * 3600, 4),
            item("s3", "日本語のドキュメントを更新する", 2 * 86_400, 7),
            item(
                "s4",
                "Refactor the settings loader so that every layer keeps its provenance and errors name the file",
                9 * 60,
                31,
            ),
            item("s5", "Write release notes", 40 * 86_400, 2),
        ],
        colors,
    )
}

fn models() -> Picker {
    let item = |id: &str, detail: &str| PickerItem {
        id: id.into(),
        title: id.into(),
        detail: detail.into(),
    };
    Picker::new(
        "Switch model",
        vec![
            item("claude-sonnet-4-6", "200K context · $3/$15"),
            item("claude-opus-4-6", "200K context · $5/$25"),
            item("claude-haiku-4-5", "200K context · $1/$5"),
        ],
        true,
    )
    .with_selected("claude-opus-4-6")
}

#[test]
fn session_picker() {
    for (w, h) in SIZES {
        let picker = sessions(true);
        assert_buffer_snapshot!(
            format!("screens_sessions_{w}"),
            draw(w, h, |a, b| picker.render(a, b))
        );
    }
    let mut picker = sessions(true);
    for c in "로그".chars() {
        picker.handle_key(key(KeyCode::Char(c)));
    }
    assert_eq!(picker.visible().count(), 1);
    assert_buffer_snapshot!(
        "screens_sessions_filtered_80",
        draw(80, 24, |a, b| picker.render(a, b))
    );
    let mut picker = sessions(false);
    picker.handle_key(key(KeyCode::Down));
    assert_buffer_snapshot!(
        "screens_sessions_no_color_80",
        draw(80, 24, |a, b| picker.render(a, b))
    );
    picker.paste("zzz");
    assert_buffer_snapshot!(
        "screens_sessions_no_matches_20",
        draw(20, 8, |a, b| picker.render(a, b))
    );
    let empty = Picker::new("Resume a session", vec![], true)
        .with_empty_message("No earlier sessions in this folder");
    assert_buffer_snapshot!(
        "screens_sessions_empty_80",
        draw(80, 24, |a, b| empty.render(a, b))
    );
}

#[test]
fn picker_in_a_one_by_one_area() {
    let picker = sessions(true);
    let buf = draw(1, 1, |a, b| picker.render(a, b));
    assert_eq!(
        picker.cursor_position(buf.area).map(|p| (p.x, p.y)),
        Some((0, 0))
    );
    assert_buffer_snapshot!("screens_picker_1x1", buf);
}

#[test]
fn model_picker() {
    let picker = models();
    for (w, h) in SIZES {
        assert_buffer_snapshot!(
            format!("screens_models_{w}"),
            draw(w, h, |a, b| picker.render(a, b))
        );
    }
}

/// The setup screen after `keys` (characters typed one by one).
fn setup_after(colors: bool, keys: &[KeyCode], typed: &str) -> SetupScreen {
    let mut screen = SetupScreen::new(colors);
    for &code in keys {
        screen.handle_key(key(code));
    }
    for c in typed.chars() {
        screen.handle_key(key(KeyCode::Char(c)));
    }
    screen
}

const KEY: &str = "sk-ant-api03-Zx81kQ2mN4pL7vR0tY5uW3eB9cD6fG1hJ8kL2-AbCd";

#[test]
fn setup_steps() {
    let steps: [(&str, SetupScreen); 6] = [
        ("provider", setup_after(true, &[KeyCode::Down], "")),
        ("key", setup_after(true, &[KeyCode::Enter], KEY)),
        (
            "env_var",
            setup_after(true, &[KeyCode::Char('2'), KeyCode::Tab], ""),
        ),
        ("base_url", setup_after(true, &[KeyCode::Char('4')], "")),
        (
            "model",
            setup_after(true, &[KeyCode::Char('1')], "")
                .tap(|s| s.paste(KEY))
                .tap(|s| {
                    s.handle_key(key(KeyCode::Enter));
                }),
        ),
        (
            "custom_model",
            setup_after(
                true,
                &[KeyCode::Char('4'), KeyCode::Enter, KeyCode::Enter],
                "qwen3-coder-30b",
            ),
        ),
    ];
    for (name, screen) in &steps {
        for (w, h) in SIZES {
            let buf = draw(w, h, |a, b| screen.render(a, b));
            let text: String = buf.content().iter().map(|c| c.symbol()).collect();
            assert!(!text.contains("Zx81"), "{name} at {w} shows the key");
            if let Some(p) = screen.cursor_position(buf.area) {
                assert!(buf.area.contains(p), "{name} at {w}: cursor {p:?} outside");
            }
            assert_buffer_snapshot!(format!("screens_setup_{name}_{w}"), buf);
        }
    }
    let mut failed = setup_after(false, &[KeyCode::Enter], KEY);
    failed.handle_key(key(KeyCode::Enter));
    failed.set_error("cannot write /home/u/.robota/settings.json: Permission denied".into());
    assert_buffer_snapshot!(
        "screens_setup_save_error_no_color_80",
        draw(80, 24, |a, b| failed.render(a, b))
    );
}

#[test]
fn trust_prompt() {
    let prompt = TrustPrompt::new(
        Path::new("/home/u/src/큰-프로젝트/web-app"),
        vec![
            "hooks (PreToolUse, Stop)".into(),
            "allow rules: Bash(npm test), Bash(npm run lint:*)".into(),
            "provider baseURL".into(),
        ],
        true,
    );
    for (w, h) in SIZES {
        assert_buffer_snapshot!(
            format!("screens_trust_{w}"),
            draw(w, h, |a, b| prompt.render(a, b))
        );
    }
    let mut declining = TrustPrompt::new(Path::new("/tmp/x"), vec!["hooks (Stop)".into()], false);
    declining.handle_key(key(KeyCode::Down));
    assert_buffer_snapshot!(
        "screens_trust_no_color_40",
        draw(40, 16, |a, b| declining.render(a, b))
    );
}

/// Applies `f` to a value and returns it, for building screens inline.
trait Tap: Sized {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

impl Tap for SetupScreen {}

fn rewind_points() -> Vec<robota::sdk::RewindPoint> {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    let stamp = |secs_ago: u64| {
        let at = jiff::Timestamp::try_from(now - Duration::from_secs(secs_ago)).unwrap();
        Some(format!("{at:.3}"))
    };
    let point = |id: &str, prompt: &str, ago: u64, files: &[&str], checkpoint: bool| {
        robota::sdk::RewindPoint {
            message_id: id.into(),
            prompt: prompt.into(),
            timestamp: checkpoint.then(|| stamp(ago)).flatten(),
            files_changed: files.iter().map(|f| f.to_string()).collect(),
            not_restorable: Vec::new(),
            has_checkpoint: checkpoint,
        }
    };
    vec![
        point(
            "m4",
            "tidy up: remove the old script and rename calc.py",
            60,
            &["calc.py", "calc2.py", "test_calc.sh"],
            true,
        ),
        point("m3", "fix add\nand add a test", 9 * 60, &["calc.py"], true),
        point("m2", "what does calc.py do?", 3 * 3600, &[], true),
        point("m1", "an old prompt from before checkpoints", 0, &[], false),
    ]
}

#[test]
fn rewind_pickers() {
    use robota::tui::app::rewind::{action_items, point_items};
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    let points = rewind_points();
    let items = point_items(&points, now);
    assert_eq!(items[0].detail, "1 min ago · 3 files changed");
    assert_eq!(items[1].detail, "9 min ago · changed calc.py");
    assert_eq!(items[3].detail, "no checkpoint");
    for (w, h) in SIZES {
        let picker = Picker::new("Rewind to before a prompt", items.clone(), true);
        assert_buffer_snapshot!(
            format!("screens_rewind_points_{w}"),
            draw(w, h, |a, b| picker.render(a, b))
        );
    }
    let mut point = points[0].clone();
    point.not_restorable = vec!["big.bin".into()];
    let actions = Picker::new(
        "Rewind to before “tidy up: remove the old script and rename calc.py”",
        action_items(Some(&point)),
        true,
    );
    assert_eq!(
        actions.visible().map(|i| i.id.as_str()).collect::<Vec<_>>(),
        ["both", "conversation", "code", "summarize", "cancel"]
    );
    assert_buffer_snapshot!(
        "screens_rewind_actions_80",
        draw(80, 12, |a, b| actions.render(a, b))
    );
}
