//! The setup screen's steps driven by keys: choices, back-steps, masking and validation.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;

const KEY: &str = "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz-WXYZ";

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(s: &mut SetupScreen, code: KeyCode) -> SetupOutcome {
    s.handle_key(key(code))
}

fn type_text(s: &mut SetupScreen, text: &str) {
    for c in text.chars() {
        assert_eq!(press(s, KeyCode::Char(c)), SetupOutcome::Pending);
    }
}

fn screen_text(s: &SetupScreen, width: u16, height: u16) -> String {
    let buf = crate::composer::test_support::render(width, height, |area, buf| s.render(area, buf));
    crate::composer::test_support::rows_text(&buf)
}

#[test]
fn anthropic_with_a_pasted_key_and_the_default_model() {
    let mut s = SetupScreen::new(true);
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    s.paste(&format!("{KEY}\n"));
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    let SetupOutcome::Done(choice) = press(&mut s, KeyCode::Enter) else {
        panic!("the first model is chosen with Enter");
    };
    assert_eq!(
        choice,
        SetupChoice {
            provider: SetupProvider::Anthropic,
            api_key: Some(KEY.into()),
            base_url: None,
            model: "claude-sonnet-4-6".into(),
        }
    );
    let profile = choice.to_profile();
    assert_eq!(
        (profile.name.as_str(), profile.kind),
        ("anthropic", "anthropic")
    );
}

#[test]
fn the_key_is_masked_on_screen_at_every_width() {
    let mut s = SetupScreen::new(false);
    press(&mut s, KeyCode::Char('2'));
    type_text(&mut s, KEY);
    for width in [80, 40, 20, 8] {
        let text = screen_text(&s, width, 24);
        assert!(!text.contains("0123"), "key shown at {width}: {text}");
        assert!(!text.contains("sk-ant"), "key shown at {width}: {text}");
        if width >= 20 {
            assert!(text.contains('•'), "{text}");
        }
    }
    assert!(screen_text(&s, 80, 24).contains("•WXYZ"));
}

#[test]
fn an_environment_variable_instead_of_a_key() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Char('3'));
    press(&mut s, KeyCode::Tab);
    let text = screen_text(&s, 80, 24);
    assert!(text.contains("GEMINI_API_KEY"), "prefilled: {text}");
    for _ in 0.."GEMINI_API_KEY".len() {
        press(&mut s, KeyCode::Backspace);
    }
    type_text(&mut s, "2BAD");
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    assert!(screen_text(&s, 80, 24).contains("not a variable name"));
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Backspace);
    type_text(&mut s, "$MY_GEMINI_KEY");
    s.variable_set = |_| false;
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    let text = screen_text(&s, 80, 24);
    assert!(
        text.contains("MY_GEMINI_KEY is not set"),
        "refused at the key step: {text}"
    );
    s.variable_set = |name| name == "MY_GEMINI_KEY";
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Down);
    let SetupOutcome::Done(choice) = press(&mut s, KeyCode::Enter) else {
        panic!("the second model is chosen");
    };
    assert_eq!(choice.provider, SetupProvider::Google);
    assert_eq!(choice.api_key.as_deref(), Some("$ENV:MY_GEMINI_KEY"));
    assert_eq!(choice.model, "gemini-2.5-flash");
}

#[test]
fn a_required_key_cannot_be_skipped() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Enter);
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    assert!(screen_text(&s, 80, 24).contains("Paste your API key, or press Tab"));
    type_text(&mut s, "abc def");
    press(&mut s, KeyCode::Enter);
    assert!(screen_text(&s, 80, 24).contains("no spaces"));
    assert!(
        !screen_text(&s, 80, 24).contains("abc"),
        "even a short key stays hidden"
    );
}

#[test]
fn a_local_server_with_its_address_no_key_and_a_typed_model() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Char('4'));
    assert!(screen_text(&s, 80, 24).contains("http://127.0.0.1:8080/v1"));
    for _ in 0.."8080/v1".len() {
        press(&mut s, KeyCode::Backspace);
    }
    type_text(&mut s, "11434/v1");
    press(&mut s, KeyCode::Enter);
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        SetupOutcome::Pending,
        "no key: skipped"
    );
    assert!(screen_text(&s, 80, 24).contains("Model id"));
    assert_eq!(press(&mut s, KeyCode::Enter), SetupOutcome::Pending);
    assert!(screen_text(&s, 80, 24).contains("Type the model's id"));
    s.paste("qwen3-coder");
    let SetupOutcome::Done(choice) = press(&mut s, KeyCode::Enter) else {
        panic!("done");
    };
    assert_eq!(
        choice,
        SetupChoice {
            provider: SetupProvider::OpenAiCompatible,
            api_key: None,
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            model: "qwen3-coder".into(),
        }
    );
    let profile = choice.to_profile();
    assert_eq!(
        (profile.name.as_str(), profile.kind),
        ("local", "openai-compatible")
    );
}

#[test]
fn a_bad_address_is_refused() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Char('4'));
    s.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut s, "localhost:8080");
    press(&mut s, KeyCode::Enter);
    assert!(screen_text(&s, 80, 24).contains("starting with http://"));
    assert!(
        screen_text(&s, 80, 24).contains("Server address"),
        "still on the step"
    );
}

#[test]
fn esc_goes_back_one_step_and_cancels_from_the_first() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Char('4'));
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Enter);
    assert!(screen_text(&s, 80, 24).contains("Model id"));
    press(&mut s, KeyCode::Esc);
    assert!(screen_text(&s, 80, 24).contains("API key"));
    press(&mut s, KeyCode::Esc);
    assert!(screen_text(&s, 80, 24).contains("Server address"));
    press(&mut s, KeyCode::Esc);
    assert!(screen_text(&s, 80, 24).contains("Choose a model provider"));
    assert_eq!(press(&mut s, KeyCode::Esc), SetupOutcome::Cancelled);

    // With a model list, Esc from typing a model returns to the list, then to the key.
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Enter);
    type_text(&mut s, KEY);
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Char('4'));
    assert!(screen_text(&s, 80, 24).contains("Model id"));
    press(&mut s, KeyCode::Esc);
    assert!(screen_text(&s, 80, 24).contains("Choose a model"));
    press(&mut s, KeyCode::Esc);
    assert!(screen_text(&s, 80, 24).contains("Anthropic API key"));
    press(&mut s, KeyCode::Esc);
    press(&mut s, KeyCode::Enter);
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        SetupOutcome::Pending,
        "back at the key step, the key typed is kept"
    );
    assert!(screen_text(&s, 80, 24).contains("Choose a model"));
}

#[test]
fn choosing_another_provider_forgets_the_key() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Enter);
    type_text(&mut s, KEY);
    press(&mut s, KeyCode::Esc);
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Enter);
    assert!(screen_text(&s, 80, 24).contains("OpenAI API key"));
    assert!(!screen_text(&s, 80, 24).contains("WXYZ"));
}

#[test]
fn ctrl_c_cancels_and_a_save_error_is_shown() {
    let mut s = SetupScreen::new(true);
    press(&mut s, KeyCode::Enter);
    s.set_error("cannot write /x/settings.json: permission denied".into());
    assert!(screen_text(&s, 80, 24).contains("permission denied"));
    press(&mut s, KeyCode::Left);
    assert!(!screen_text(&s, 80, 24).contains("permission denied"));
    assert_eq!(
        s.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        SetupOutcome::Cancelled
    );
}

#[test]
fn the_cursor_is_in_the_field_and_absent_on_lists() {
    let mut s = SetupScreen::new(true);
    let area = Rect::new(0, 0, 80, 24);
    assert_eq!(s.cursor_position(area), None);
    press(&mut s, KeyCode::Enter);
    let at = s.cursor_position(area).expect("a cursor in the key field");
    type_text(&mut s, "abc");
    let after = s.cursor_position(area).expect("still there");
    assert_eq!((after.x - at.x, after.y), (3, at.y));
    for (w, h) in [(1, 1), (20, 3), (0, 0)] {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        s.render(buf.area, &mut buf);
        if let Some(p) = s.cursor_position(buf.area) {
            assert!(buf.area.contains(p));
        }
    }
}
