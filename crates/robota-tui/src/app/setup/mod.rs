//! The first-run setup screen, shown when no provider is configured: a small state
//! machine — pick a provider; for an OpenAI-compatible server, its address; the API key
//! (typed or pasted, shown masked) or the name of the environment variable holding it;
//! then a model from the provider's short list or typed in. Esc goes back a step (on the
//! first step it cancels). The result, [`SetupChoice`], maps onto the settings profile
//! that `sdk::settings::setup_save` writes.
//! Its field editor and drawing helpers are the shared ones in `tui::widgets`.

mod view;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::overlay::{AppAction, Cursor, EventResult, Overlay, Stage};
use crate::widgets::line_input::LineInput;
use robota_core::models;
use robota_sdk::settings::setup_save::SetupProfile;

/// The address offered for a local OpenAI-compatible server (llama.cpp's default port).
pub const DEFAULT_LOCAL_BASE_URL: &str = "http://127.0.0.1:8080/v1";

/// The providers the setup offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupProvider {
    /// Anthropic's API (Claude models).
    Anthropic,
    /// OpenAI's API.
    OpenAi,
    /// Google's Gemini API.
    Google,
    /// A local or self-hosted server speaking OpenAI's API, at an address the user types.
    OpenAiCompatible,
}

impl SetupProvider {
    /// In the order offered.
    pub const ALL: [SetupProvider; 4] = [
        SetupProvider::Anthropic,
        SetupProvider::OpenAi,
        SetupProvider::Google,
        SetupProvider::OpenAiCompatible,
    ];

    /// The profile `type` the provider setup parses.
    pub fn kind(self) -> &'static str {
        match self {
            SetupProvider::Anthropic => "anthropic",
            SetupProvider::OpenAi => "openai",
            SetupProvider::Google => "google",
            SetupProvider::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The name of the profile saved under `providers`.
    pub fn profile_name(self) -> &'static str {
        match self {
            SetupProvider::OpenAiCompatible => "local",
            other => other.kind(),
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            SetupProvider::Anthropic => "Anthropic",
            SetupProvider::OpenAi => "OpenAI",
            SetupProvider::Google => "Google Gemini",
            SetupProvider::OpenAiCompatible => "OpenAI-compatible",
        }
    }

    /// The environment variable the provider's key is usually in.
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            SetupProvider::Anthropic => Some("ANTHROPIC_API_KEY"),
            SetupProvider::OpenAi => Some("OPENAI_API_KEY"),
            SetupProvider::Google => Some("GEMINI_API_KEY"),
            SetupProvider::OpenAiCompatible => None,
        }
    }

    /// Whether the key may be left out (a local server usually needs none).
    pub fn key_is_optional(self) -> bool {
        self == SetupProvider::OpenAiCompatible
    }

    /// The models offered, the zero-config default first.
    pub fn models(self) -> Vec<&'static str> {
        models::default_models(self.kind())
    }
}

/// What the user set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupChoice {
    /// The provider picked.
    pub provider: SetupProvider,
    /// A literal key, or `$ENV:NAME`.
    pub api_key: Option<String>,
    /// The server's address; set only for `SetupProvider::OpenAiCompatible`.
    pub base_url: Option<String>,
    /// The model picked.
    pub model: String,
}

impl SetupChoice {
    /// The settings profile to save.
    pub fn to_profile(&self) -> SetupProfile {
        SetupProfile {
            name: self.provider.profile_name().to_string(),
            kind: self.provider.kind(),
            api_key: self.api_key.clone(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
        }
    }
}

/// Where the screen is after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupOutcome {
    /// Still in progress.
    Pending,
    /// The user finished: here is what to save.
    Done(SetupChoice),
    /// The user left (Esc on the first step, or Ctrl+C).
    Cancelled,
}

/// The steps, in order (the address step only for an OpenAI-compatible server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Provider,
    BaseUrl,
    Credentials,
    Model,
}

/// How the key is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyEntry {
    Key,
    EnvVar,
}

/// The setup screen's state.
#[derive(Debug, Clone)]
pub struct SetupScreen {
    step: Step,
    provider_index: usize,
    /// The provider the fields below were filled for.
    filled_for: Option<SetupProvider>,
    base_url: LineInput,
    key_entry: KeyEntry,
    key: LineInput,
    env_var: LineInput,
    /// The credential accepted on leaving the key step (`None`: none needed).
    credential: Option<String>,
    model_index: usize,
    /// `Some` while a model id is typed instead of picked.
    custom_model: Option<LineInput>,
    error: Option<String>,
    colors: bool,
    /// Whether an environment variable is set to something (the process environment;
    /// tests give their own).
    variable_set: fn(&str) -> bool,
}

/// Whether `name` is set, not empty, in this process's environment.
fn variable_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|value| !value.is_empty())
}

/// Why the key step cannot go on; shown under the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum CredentialError {
    #[error("Paste your API key, or press Tab to name an environment variable")]
    NoKey,
    #[error("An API key has no spaces in it")]
    KeyHasSpaces,
    #[error("Type the name of the variable that holds your key")]
    NoVarName,
    #[error("{0:?} is not a variable name (A-Z, 0-9, _)")]
    BadVarName(String),
    #[error(
        "{0} is not set in this environment: export it before starting robota, or press Tab and paste the key itself"
    )]
    VarUnset(String),
}

impl SetupScreen {
    /// The screen at its first step (the provider list); `colors` off draws it without colour.
    pub fn new(colors: bool) -> Self {
        SetupScreen {
            step: Step::Provider,
            provider_index: 0,
            filled_for: None,
            base_url: LineInput::with_text(DEFAULT_LOCAL_BASE_URL),
            key_entry: KeyEntry::Key,
            key: LineInput::default(),
            env_var: LineInput::default(),
            credential: None,
            model_index: 0,
            custom_model: None,
            error: None,
            colors,
            variable_set,
        }
    }

    /// Shows a message (in red) on the current step, e.g. when saving the choice failed.
    pub fn set_error(&mut self, msg: String) {
        self.error = Some(msg);
    }

    fn provider(&self) -> SetupProvider {
        SetupProvider::ALL[self.provider_index]
    }

    /// The model list offered: the provider's models, then "type another".
    fn model_count(&self) -> usize {
        self.provider().models().len() + 1
    }

    /// Handles a key press. Ctrl+C cancels from any step.
    pub fn handle_key(&mut self, key: KeyEvent) -> SetupOutcome {
        if key.kind == KeyEventKind::Release {
            return SetupOutcome::Pending;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return SetupOutcome::Cancelled;
        }
        self.error = None;
        match self.step {
            Step::Provider => self.provider_key(key),
            Step::BaseUrl => self.base_url_key(key),
            Step::Credentials => self.credentials_key(key),
            Step::Model => self.model_key(key),
        }
    }

    /// Pasted text goes into the field being edited (trimmed: a pasted key often ends in
    /// a line break).
    pub fn paste(&mut self, text: &str) {
        let text = text.trim();
        if let Some(field) = self.active_field_mut() {
            field.insert(text);
            self.error = None;
        }
    }

    fn active_field_mut(&mut self) -> Option<&mut LineInput> {
        match self.step {
            Step::Provider => None,
            Step::BaseUrl => Some(&mut self.base_url),
            Step::Credentials => Some(match self.key_entry {
                KeyEntry::Key => &mut self.key,
                KeyEntry::EnvVar => &mut self.env_var,
            }),
            Step::Model => self.custom_model.as_mut(),
        }
    }

    fn provider_key(&mut self, key: KeyEvent) -> SetupOutcome {
        let count = SetupProvider::ALL.len();
        match key.code {
            KeyCode::Esc => return SetupOutcome::Cancelled,
            KeyCode::Up | KeyCode::Char('k') => {
                self.provider_index = self.provider_index.saturating_sub(1);
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.provider_index = (self.provider_index + 1).min(count - 1);
            }
            KeyCode::Char(c @ '1'..='9') => {
                let index = usize::from(c as u8 - b'1');
                if index < count {
                    self.choose_provider(index);
                }
            }
            KeyCode::Enter => self.choose_provider(self.provider_index),
            _ => {}
        }
        SetupOutcome::Pending
    }

    fn choose_provider(&mut self, index: usize) {
        self.provider_index = index;
        if self.filled_for != Some(self.provider()) {
            // A key for one provider is no use for another: start its fields afresh.
            self.filled_for = Some(self.provider());
            self.key.clear();
            self.env_var = LineInput::with_text(self.provider().key_var().unwrap_or(""));
            self.key_entry = KeyEntry::Key;
            self.model_index = 0;
            self.custom_model = None;
        }
        self.step = if self.provider() == SetupProvider::OpenAiCompatible {
            Step::BaseUrl
        } else {
            Step::Credentials
        };
    }

    fn base_url_key(&mut self, key: KeyEvent) -> SetupOutcome {
        match key.code {
            KeyCode::Esc => self.step = Step::Provider,
            KeyCode::Enter => {
                let url = self.base_url.text().trim().to_string();
                if valid_url(&url) {
                    self.step = Step::Credentials;
                } else {
                    self.error = Some(
                        "Enter the server's address, starting with http:// or https://".into(),
                    );
                }
            }
            _ => {
                self.base_url.handle_key(key);
            }
        }
        SetupOutcome::Pending
    }

    fn credentials_key(&mut self, key: KeyEvent) -> SetupOutcome {
        match key.code {
            KeyCode::Esc => {
                self.step = if self.provider() == SetupProvider::OpenAiCompatible {
                    Step::BaseUrl
                } else {
                    Step::Provider
                };
            }
            KeyCode::Tab | KeyCode::BackTab => {
                self.key_entry = match self.key_entry {
                    KeyEntry::Key => KeyEntry::EnvVar,
                    KeyEntry::EnvVar => KeyEntry::Key,
                };
            }
            KeyCode::Enter => match self.credential() {
                Ok(credential) => {
                    self.credential = credential;
                    self.enter_model_step();
                }
                Err(problem) => self.error = Some(problem.to_string()),
            },
            _ => {
                if let Some(field) = self.active_field_mut() {
                    field.handle_key(key);
                }
            }
        }
        SetupOutcome::Pending
    }

    /// The key as it will be saved (`None`: skipped), or why it cannot be used.
    fn credential(&self) -> Result<Option<String>, CredentialError> {
        let optional = self.provider().key_is_optional();
        match self.key_entry {
            KeyEntry::Key => {
                let key = self.key.text().trim().to_string();
                if key.is_empty() {
                    return if optional {
                        Ok(None)
                    } else {
                        Err(CredentialError::NoKey)
                    };
                }
                if key.chars().any(char::is_whitespace) {
                    return Err(CredentialError::KeyHasSpaces);
                }
                Ok(Some(key))
            }
            KeyEntry::EnvVar => {
                let text = self.env_var.text();
                let name = text.trim().trim_start_matches('$');
                if name.is_empty() {
                    return if optional {
                        Ok(None)
                    } else {
                        Err(CredentialError::NoVarName)
                    };
                }
                if !valid_var_name(name) {
                    return Err(CredentialError::BadVarName(name.to_string()));
                }
                if !(self.variable_set)(name) {
                    return Err(CredentialError::VarUnset(name.to_string()));
                }
                Ok(Some(format!("$ENV:{name}")))
            }
        }
    }

    fn enter_model_step(&mut self) {
        self.step = Step::Model;
        if self.provider().models().is_empty() && self.custom_model.is_none() {
            self.custom_model = Some(LineInput::default());
        }
    }

    fn model_key(&mut self, key: KeyEvent) -> SetupOutcome {
        if let Some(field) = &mut self.custom_model {
            match key.code {
                KeyCode::Esc => {
                    self.custom_model = None;
                    if self.provider().models().is_empty() {
                        self.step = Step::Credentials;
                    }
                }
                KeyCode::Enter => {
                    let model = field.text().trim().to_string();
                    if model.is_empty() || model.chars().any(char::is_whitespace) {
                        self.error = Some("Type the model's id, e.g. qwen3-coder".into());
                    } else {
                        return self.done(model);
                    }
                }
                _ => {
                    field.handle_key(key);
                }
            }
            return SetupOutcome::Pending;
        }
        let count = self.model_count();
        match key.code {
            KeyCode::Esc => self.step = Step::Credentials,
            KeyCode::Up | KeyCode::Char('k') => {
                self.model_index = self.model_index.saturating_sub(1);
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                self.model_index = (self.model_index + 1).min(count - 1);
            }
            KeyCode::Char(c @ '1'..='9') => {
                let index = usize::from(c as u8 - b'1');
                if index < count {
                    self.model_index = index;
                    return self.choose_model();
                }
            }
            KeyCode::Enter => return self.choose_model(),
            _ => {}
        }
        SetupOutcome::Pending
    }

    fn choose_model(&mut self) -> SetupOutcome {
        match self.provider().models().get(self.model_index) {
            Some(model) => self.done(model.to_string()),
            None => {
                self.custom_model = Some(LineInput::default());
                SetupOutcome::Pending
            }
        }
    }

    fn done(&self, model: String) -> SetupOutcome {
        let base_url = (self.provider() == SetupProvider::OpenAiCompatible)
            .then(|| self.base_url.text().trim().to_string());
        SetupOutcome::Done(SetupChoice {
            provider: self.provider(),
            api_key: self.credential.clone(),
            base_url,
            model,
        })
    }

    /// Draws the current step over the whole `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.layout(area.width).render(area, buf);
    }

    /// Where the terminal cursor goes: in the field being edited, if any.
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        self.layout(area.width).cursor(area)
    }
}

impl Overlay for SetupScreen {
    fn on_key(&mut self, key: KeyEvent) -> EventResult {
        match self.handle_key(key) {
            SetupOutcome::Pending => EventResult::Consumed,
            SetupOutcome::Done(choice) => EventResult::Done(AppAction::SetupDone(Some(choice))),
            SetupOutcome::Cancelled => EventResult::Done(AppAction::SetupDone(None)),
        }
    }

    fn on_paste(&mut self, text: &str) {
        self.paste(text);
    }

    fn is_full_screen(&self) -> bool {
        true
    }

    fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        self.render(stage.screen, buf);
    }

    fn cursor(&self, stage: &Stage) -> Cursor {
        self.cursor_position(stage.screen).into()
    }
}

fn valid_url(url: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        url.strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace))
    })
}

fn valid_var_name(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.chars().next().is_some_and(|c| !c.is_ascii_digit())
}

#[cfg(test)]
mod tests;
