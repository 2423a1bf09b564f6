//! The model providers: thin streaming clients of the OpenAI Chat Completions API (and the many
//! servers compatible with it) and of the Anthropic Messages API, converting the
//! provider-neutral conversation at the boundary.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::provider::{Provider, RetryPolicy};

pub mod anthropic;
mod content;
mod http;
pub mod openai;
pub mod sse;
#[cfg(test)]
mod test_server;

pub use anthropic::AnthropicProvider;
pub use openai::OpenAiProvider;

/// Which wire protocol a provider speaks (`openai` or `anthropic` in settings and flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions, and the servers compatible with it (Ollama `/v1`, llama.cpp,
    /// LM Studio, vLLM, OpenRouter, ...).
    #[default]
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {0:?} (expected \"openai\" or \"anthropic\")")]
pub struct UnknownProviderKind(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProviderKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            _ => Err(UnknownProviderKind(s.to_string())),
        }
    }
}

/// Everything needed to build a provider.
#[derive(Clone, Default)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// `None` means [`default_base_url`]. The client appends `/chat/completions` (OpenAI) or
    /// `/messages` (Anthropic), and `/models`.
    pub base_url: Option<String>,
    /// `None` (or blank): no key is sent (fine for local OpenAI-compatible servers).
    pub api_key: Option<String>,
    pub retry: RetryPolicy,
    /// Used when a request sets none. Anthropic requires one (8192 when neither sets it);
    /// OpenAI-compatible servers get one only when set.
    pub max_tokens: Option<u32>,
}

impl fmt::Debug for ProviderConfig {
    // Hand-written so the API key never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("retry", &self.retry)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

/// The provider `config` describes.
pub fn build(config: ProviderConfig) -> Arc<dyn Provider> {
    match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(config)),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)),
    }
}

/// The public API's base URL for `kind`.
pub fn default_base_url(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => "https://api.openai.com/v1",
        ProviderKind::Anthropic => "https://api.anthropic.com/v1",
    }
}

/// The environment variable that holds `kind`'s API key.
pub fn key_env_var(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => "OPENAI_API_KEY",
        ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
    }
}

/// Tool arguments as the reply carries them: a JSON object; `{}` for nothing; otherwise the raw
/// text (the agent loop tells the model it was invalid).
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_kind_parses_and_displays() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.to_string().parse::<ProviderKind>().unwrap(), kind);
        }
        assert_eq!("OpenAI".parse::<ProviderKind>().unwrap(), ProviderKind::OpenAi);
        assert!("gemini".parse::<ProviderKind>().is_err());
        assert_eq!(key_env_var(ProviderKind::Anthropic), "ANTHROPIC_API_KEY");
        assert_eq!(default_base_url(ProviderKind::OpenAi), "https://api.openai.com/v1");
    }

    #[test]
    fn build_picks_the_kind_and_debug_hides_the_key() {
        let config = ProviderConfig {
            kind: ProviderKind::Anthropic,
            api_key: Some("sk-secret".into()),
            ..Default::default()
        };
        assert!(!format!("{config:?}").contains("sk-secret"));
        assert_eq!(build(config.clone()).kind(), "anthropic");
        assert_eq!(
            build(ProviderConfig {
                kind: ProviderKind::OpenAi,
                ..config
            })
            .kind(),
            "openai"
        );
    }
}
