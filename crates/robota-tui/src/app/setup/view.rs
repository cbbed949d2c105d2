//! How the setup screen looks at each step: a welcome line and the step count, the step's
//! heading and explanation, its choices or field (a key always masked), a red error line
//! when something was refused, and the keys that work, pinned to the bottom.

use ratatui::text::Span;

use super::{KeyEntry, SetupProvider, SetupScreen, Step};
use crate::widgets::screen_kit::{
    Palette, ScreenLayout, ScreenRow, choice_rows, content_width, field_row, prose,
};
use robota_core::models;

/// What each provider is, shown beside its name.
fn provider_detail(provider: SetupProvider) -> &'static str {
    match provider {
        SetupProvider::Anthropic => "Claude models · ANTHROPIC_API_KEY",
        SetupProvider::OpenAi => "GPT models · OPENAI_API_KEY",
        SetupProvider::Google => "Gemini models · GEMINI_API_KEY",
        SetupProvider::OpenAiCompatible => "a local server: llama.cpp, Ollama, vLLM, LM Studio",
    }
}

/// "200K context", "1M context".
fn context_label(model: &str) -> String {
    let tokens = models::lookup(model).context_window;
    if tokens >= 1_000_000 {
        let millions = tokens as f64 / 1e6;
        let text = format!("{millions:.2}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text}M context")
    } else {
        format!("{}K context", tokens / 1000)
    }
}

impl SetupScreen {
    /// (step number, number of steps) for the step counter.
    fn step_number(&self) -> (usize, usize) {
        let local = self.provider() == SetupProvider::OpenAiCompatible;
        let total = if local { 4 } else { 3 };
        let number = match self.step {
            Step::Provider => 1,
            Step::BaseUrl => 2,
            Step::Credentials => total - 1,
            Step::Model => total,
        };
        (number, total)
    }

    pub(super) fn layout(&self, width: u16) -> ScreenLayout {
        let palette = Palette::new(self.colors);
        let width = content_width(width);
        let (number, total) = self.step_number();
        const WELCOME: &str = "Welcome to robota";
        let counter = format!("step {number} of {total}");
        let mut top = if WELCOME.len() + 2 + counter.len() <= width {
            vec![ScreenRow::new(vec![
                Span::styled(WELCOME, palette.title),
                Span::styled(format!("  {counter}"), palette.dim),
            ])]
        } else {
            vec![
                ScreenRow::styled(WELCOME, palette.title),
                ScreenRow::styled(counter, palette.dim),
            ]
        };
        top.push(ScreenRow::blank());
        let hint = match self.step {
            Step::Provider => {
                top.extend(self.provider_rows(width, &palette));
                "↑↓ select · enter continue · esc quit"
            }
            Step::BaseUrl => {
                top.extend(self.base_url_rows(width, &palette));
                "enter continue · esc back"
            }
            Step::Credentials => {
                top.extend(self.credential_rows(width, &palette));
                match self.key_entry {
                    KeyEntry::Key => "enter continue · tab use an env var · esc back",
                    KeyEntry::EnvVar => "enter continue · tab paste a key · esc back",
                }
            }
            Step::Model => {
                top.extend(self.model_rows(width, &palette));
                if self.custom_model.is_some() {
                    "enter finish · esc back"
                } else {
                    "↑↓ select · enter finish · esc back"
                }
            }
        };
        if let Some(error) = &self.error {
            top.push(ScreenRow::blank());
            top.extend(prose(error, palette.error, width, 0));
        }
        ScreenLayout {
            top,
            bottom: prose(hint, palette.dim, width, 0),
        }
    }

    fn provider_rows(&self, width: usize, palette: &Palette) -> Vec<ScreenRow> {
        let mut rows = prose("Choose a model provider", palette.title, width, 0);
        rows.extend(prose(
            "robota saves your choice as a provider profile in its settings file.",
            palette.dim,
            width,
            0,
        ));
        rows.push(ScreenRow::blank());
        let choices: Vec<(String, String)> = SetupProvider::ALL
            .iter()
            .map(|p| (p.label().to_string(), provider_detail(*p).to_string()))
            .collect();
        rows.extend(choice_rows(&choices, self.provider_index, width, palette));
        rows
    }

    fn base_url_rows(&self, width: usize, palette: &Palette) -> Vec<ScreenRow> {
        let mut rows = prose("Server address", palette.title, width, 0);
        rows.extend(prose(
            "The OpenAI-compatible endpoint of your server (its URL ends in /v1).",
            palette.dim,
            width,
            0,
        ));
        rows.push(ScreenRow::blank());
        rows.push(field_row(&self.base_url, "", false, width, palette));
        rows
    }

    fn credential_rows(&self, width: usize, palette: &Palette) -> Vec<ScreenRow> {
        let provider = self.provider();
        let optional = provider.key_is_optional();
        let mut rows = Vec::new();
        match self.key_entry {
            KeyEntry::Key => {
                rows.extend(prose(
                    &format!("{} API key", provider.label()),
                    palette.title,
                    width,
                    0,
                ));
                let explanation = if optional {
                    "If your server needs a key, paste it; if not, press Enter to skip. It is saved in robota's settings file, readable only by you."
                } else {
                    "Paste your key. It is saved in robota's settings file, readable only by you."
                };
                rows.extend(prose(explanation, palette.dim, width, 0));
                rows.push(ScreenRow::blank());
                let placeholder = if optional { "no key" } else { "" };
                rows.push(field_row(&self.key, placeholder, true, width, palette));
            }
            KeyEntry::EnvVar => {
                rows.extend(prose(
                    "Environment variable with the key",
                    palette.title,
                    width,
                    0,
                ));
                let name = self.env_var.text();
                let name = name.trim().trim_start_matches('$');
                let explanation = if name.is_empty() {
                    "robota reads the key from this variable each time it starts; the key itself is not saved.".to_string()
                } else {
                    format!(
                        "Saved as $ENV:{name}: robota reads the key from it each time it starts; the key itself is not saved."
                    )
                };
                rows.extend(prose(&explanation, palette.dim, width, 0));
                rows.push(ScreenRow::blank());
                rows.push(field_row(
                    &self.env_var,
                    "VARIABLE_NAME",
                    false,
                    width,
                    palette,
                ));
            }
        }
        rows
    }

    fn model_rows(&self, width: usize, palette: &Palette) -> Vec<ScreenRow> {
        let provider = self.provider();
        if let Some(field) = &self.custom_model {
            let mut rows = prose("Model id", palette.title, width, 0);
            let explanation = if provider == SetupProvider::OpenAiCompatible {
                "The name your server knows the model by (its /v1/models lists them)."
            } else {
                "The exact model id, as the provider's documentation spells it."
            };
            rows.extend(prose(explanation, palette.dim, width, 0));
            rows.push(ScreenRow::blank());
            rows.push(field_row(field, "", false, width, palette));
            return rows;
        }
        let mut rows = prose("Choose a model", palette.title, width, 0);
        rows.extend(prose(
            "You can switch later with /model.",
            palette.dim,
            width,
            0,
        ));
        rows.push(ScreenRow::blank());
        let mut choices: Vec<(String, String)> = provider
            .models()
            .into_iter()
            .enumerate()
            .map(|(i, model)| {
                let context = context_label(model);
                let detail = if i == 0 {
                    format!("recommended · {context}")
                } else {
                    context
                };
                (model.to_string(), detail)
            })
            .collect();
        choices.push(("Type another model id…".to_string(), String::new()));
        rows.extend(choice_rows(&choices, self.model_index, width, palette));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::context_label;

    #[test]
    fn context_sizes_read_naturally() {
        assert_eq!(context_label("claude-sonnet-4-6"), "200K context");
        assert_eq!(context_label("gemini-2.5-pro"), "1.05M context");
        assert_eq!(context_label("gpt-5.4"), "1.05M context");
    }
}
