//! Which model provider, endpoint, model and key a run uses: the command-line flags (or their
//! environment variables), else what the profile's settings say, else the provider's defaults.
//! Shared by `porthole run` and the desktop app; the flags are checked by the same rules as the
//! settings form ([`crate::settings::check_base_url`], [`crate::settings::check_model`]).

use std::sync::Arc;

use anyhow::{Result, bail};
use porthole_agent::keys::{KeySource, find_key, keyring_entry};
use porthole_agent::providers::{self, ProviderConfig, ProviderKind, default_base_url, key_env_var};
use porthole_agent::{Provider, RetryPolicy};
use porthole_secrets::SecretStore;
use porthole_store::Store;
use serde::Serialize;
use serde_json::{Value, json};
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::settings::{check_base_url, check_model};

/// What the command line (`--provider`, `--base-url`, `--model`, or their `PORTHOLE_*`
/// variables) fixes for this run; each wins over the settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFlags {
    pub provider: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
}

impl ModelFlags {
    /// Model `model` of the OpenAI-compatible server at `base_url` (a local server, or the fake
    /// LLM of tests and benchmarks).
    pub fn openai_compatible(base_url: impl Into<String>, model: impl Into<String>) -> ModelFlags {
        ModelFlags {
            provider: Some(ProviderKind::OpenAi),
            base_url: Some(base_url.into()),
            model: Some(model.into()),
        }
    }
}

/// The setting (in the store) that holds the chosen provider, base URL and model.
pub const MODEL_SETTING: &str = "model";

/// A resolved choice.
#[derive(Clone)]
pub struct ModelChoice {
    pub kind: ProviderKind,
    pub base_url: String,
    /// May still be empty: [`ModelChoice::resolve_model`] asks the provider.
    pub model: Option<String>,
    pub key_source: Option<KeySource>,
    pub provider: Arc<dyn Provider>,
}

impl ModelChoice {
    /// Combines the flags with the stored settings and finds the key. `keyring` is opened only
    /// when the environment has no key. Fails, with what to do, when a hosted provider has no key.
    pub fn new(args: &ModelFlags, store: Option<&Store>, keyring: &dyn Fn() -> Arc<dyn SecretStore>) -> Result<Self> {
        let saved = store
            .and_then(|s| s.setting(MODEL_SETTING).ok().flatten())
            .unwrap_or(json!({}));
        let (kind, base_url, model) = chosen(args, &saved);
        // A wrong flag is a usage error (the command exits 2).
        let base_url =
            check_base_url(&base_url).map_err(|e| crate::exit::usage(anyhow::anyhow!("--base-url: {}", e.message)))?;
        let model =
            check_model(model.as_deref()).map_err(|e| crate::exit::usage(anyhow::anyhow!("--model: {}", e.message)))?;
        let env = |var: &str| std::env::var(var).ok();
        let found = if env(key_env_var(kind)).is_some_and(|v| !v.trim().is_empty()) {
            find_key(kind, env, None)?
        } else {
            let store = keyring();
            find_key(kind, env, Some(store.as_ref()))?
        };
        let hosted = base_url.trim_end_matches('/') == default_base_url(kind).trim_end_matches('/');
        if found.is_none() && hosted {
            bail!(
                "no API key for {kind}: set {} or run `porthole key set {kind}` (it is kept in the OS keyring), or save one in Settings → Model; a local server (an OpenAI-compatible address) needs none",
                key_env_var(kind)
            );
        }
        let (api_key, key_source) = match found {
            Some((key, source)) => (Some(key), Some(source)),
            None => (None, None),
        };
        let provider = providers::build(ProviderConfig {
            kind,
            base_url: Some(base_url.clone()),
            api_key,
            retry: RetryPolicy::default(),
            max_tokens: None,
        });
        Ok(ModelChoice {
            kind,
            base_url,
            model,
            key_source,
            provider,
        })
    }

    /// The model to use: the chosen one, else the provider's only model; fails naming the
    /// models the provider lists when it cannot pick one.
    pub async fn resolve_model(&self) -> Result<String> {
        if let Some(model) = &self.model {
            return Ok(model.clone());
        }
        let models = self.provider.list_models().await.map_err(|e| {
            anyhow::anyhow!("no model given (--model NAME), and listing the provider's models failed: {e}")
        })?;
        match models.as_slice() {
            [only] => Ok(only.clone()),
            [] => bail!("no model given (--model NAME), and {} lists none", self.base_url),
            many => {
                let shown: Vec<&str> = many.iter().take(12).map(String::as_str).collect();
                bail!(
                    "no model given: pass --model NAME; {} offers {}{}",
                    self.base_url,
                    shown.join(", "),
                    if many.len() > shown.len() { ", …" } else { "" }
                )
            }
        }
    }
}

/// The provider, base URL and model that the flags and the saved `model` setting choose, before
/// any key is looked for: the flags win; the saved base URL and model count only for the saved
/// provider; otherwise the provider's default base URL and no model.
pub fn chosen(args: &ModelFlags, saved: &Value) -> (ProviderKind, String, Option<String>) {
    let saved_kind = saved
        .get("provider")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<ProviderKind>().ok());
    let kind = args.provider.or(saved_kind).unwrap_or(ProviderKind::OpenAi);
    let same_provider = saved_kind == Some(kind);
    let saved_field = |field: &str| {
        same_provider
            .then(|| saved.get(field).and_then(|v| v.as_str()).map(String::from))
            .flatten()
    };
    let base_url = args
        .base_url
        .clone()
        .or_else(|| saved_field("baseUrl"))
        .unwrap_or_else(|| default_base_url(kind).to_string());
    let model = args.model.clone().or_else(|| saved_field("model"));
    (kind, base_url, model)
}

/// The keyring entry name for a provider's key (for `porthole key`).
pub fn key_entry(kind: ProviderKind) -> String {
    keyring_entry(kind)
}

/// The model this run talks to, as far as it is known without asking the provider.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub provider: Option<ProviderKind>,
    pub base_url: Option<String>,
    /// `None`: the provider's only model is used (known once a message is sent).
    pub model: Option<String>,
    pub key_source: Option<String>,
    /// Why no model can be used, in words (e.g. no API key).
    pub error: Option<String>,
}

impl Host {
    /// The model choice of the flags and the settings, with its key.
    pub(crate) fn model_choice(&self) -> AppResult<ModelChoice> {
        let store = self.inner.store.as_ref().ok();
        let keyring = self.inner.keyring.clone();
        ModelChoice::new(&self.inner.model_flags, store, &|| keyring.clone())
            .map_err(|e| AppError::provider(format!("{e:#}")))
    }

    pub fn model_info(&self) -> ModelInfo {
        match self.model_choice() {
            Ok(choice) => ModelInfo {
                provider: Some(choice.kind),
                base_url: Some(choice.base_url.clone()),
                model: choice.model.clone(),
                key_source: choice.key_source.as_ref().map(ToString::to_string),
                error: None,
            },
            Err(error) => ModelInfo {
                provider: None,
                base_url: None,
                model: None,
                key_source: None,
                error: Some(error.message),
            },
        }
    }
}

/// Views' sampling requests, once the person approved them, go to the model the settings (or
/// flags) name, with no tools. Holds the app weakly: it is kept by the app's own views.
pub(crate) struct HostSampler {
    host: std::sync::Weak<crate::HostInner>,
    /// Whether a model is set up, as last found, and when; found off the caller's thread (it
    /// may open the keyring, which may ask the person), at most every [`SAMPLER_RECHECK`].
    known: Arc<std::sync::Mutex<SamplerKnown>>,
}

#[derive(Default)]
struct SamplerKnown {
    checked: Option<std::time::Instant>,
    available: bool,
    checking: bool,
}

/// How long whether a model is set up is taken as known.
const SAMPLER_RECHECK: std::time::Duration = std::time::Duration::from_secs(30);

impl HostSampler {
    /// A sampler for `host`; whether a model is set up is found in the background: at once, or
    /// once the window is ready when the host's servers wait for it (opening the keyring is
    /// then off the way to the first paint; no view can ask before the window is up).
    pub(crate) fn new(host: std::sync::Weak<crate::HostInner>, wait_for_window: bool) -> HostSampler {
        let sampler = HostSampler {
            host,
            known: Arc::default(),
        };
        match sampler.host.upgrade() {
            Some(inner) if wait_for_window => {
                let mut ready = inner.window_ready.subscribe();
                let later = HostSampler {
                    host: sampler.host.clone(),
                    known: sampler.known.clone(),
                };
                inner.runtime.spawn(async move {
                    let _ = tokio::time::timeout(crate::WINDOW_WAIT_AT_MOST, ready.wait_for(|r| *r)).await;
                    later.recheck();
                });
            }
            _ => sampler.recheck(),
        }
        sampler
    }

    fn recheck(&self) {
        let Some(inner) = self.host.upgrade() else { return };
        {
            let mut known = self.known.lock().unwrap();
            if known.checking {
                return;
            }
            known.checking = true;
        }
        let known = self.known.clone();
        let runtime = inner.runtime.clone();
        runtime.spawn_blocking(move || {
            let available = crate::Host { inner }.model_choice().is_ok();
            let mut known = known.lock().unwrap();
            *known = SamplerKnown {
                checked: Some(std::time::Instant::now()),
                available,
                checking: false,
            };
        });
    }
}

impl crate::views::Sampler for HostSampler {
    /// As last found (never blocking: a view's `ui/initialize` is answered on the window's
    /// thread); found again in the background when older than [`SAMPLER_RECHECK`].
    fn available(&self) -> bool {
        let (stale, available) = {
            let known = self.known.lock().unwrap();
            (
                known.checked.is_none_or(|t| t.elapsed() > SAMPLER_RECHECK),
                known.available,
            )
        };
        if stale {
            self.recheck();
        }
        available
    }

    fn complete(
        &self,
        system: Option<String>,
        messages: Vec<crate::views::SampledMessage>,
        max_tokens: u32,
    ) -> futures::future::BoxFuture<'static, Result<(String, String), String>> {
        let inner = self.host.upgrade();
        Box::pin(async move {
            let host = crate::Host {
                inner: inner.ok_or("the app is closing")?,
            };
            let choice = host.model_choice().map_err(|e| e.message)?;
            sample(&choice, &[], system, &messages, max_tokens).await
        })
    }
}

/// How long the provider's model list is waited for when a request names models it prefers.
const HINTS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// One answer of the model `choice` names (no tools): its text and the model that wrote it.
/// When `hints` name models (a sampling request's preferences, best first), the first one the
/// provider has (by name, or as part of one of its models' names) answers instead.
pub async fn sample(
    choice: &ModelChoice,
    hints: &[String],
    system: Option<String>,
    messages: &[crate::views::SampledMessage],
    max_tokens: u32,
) -> Result<(String, String), String> {
    let messages = messages
        .iter()
        .map(|m| porthole_agent::Message {
            role: if m.role == "assistant" {
                porthole_agent::Role::Assistant
            } else {
                porthole_agent::Role::User
            },
            parts: vec![porthole_agent::Part::Text { text: m.text.clone() }],
        })
        .collect();
    let preferred = if hints.is_empty() {
        None
    } else {
        match tokio::time::timeout(HINTS_WAIT, choice.provider.list_models()).await {
            Ok(Ok(models)) => preferred_model(hints, &models),
            _ => None,
        }
    };
    let model = match preferred {
        Some(model) => model,
        None => choice.resolve_model().await.map_err(|e| format!("{e:#}"))?,
    };
    let request = porthole_agent::ModelRequest {
        model: model.clone(),
        system,
        messages,
        tools: Vec::new(),
        max_tokens: Some(max_tokens),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let reply = choice
        .provider
        .stream(&request, events, tokio_util::sync::CancellationToken::new())
        .await
        .map_err(|e| e.to_string())?;
    let text: String = reply
        .parts
        .iter()
        .filter_map(|p| match p {
            porthole_agent::Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    Ok((text, model))
}

/// The first of `hints` the provider has: a model of that name, else one whose name holds it.
fn preferred_model(hints: &[String], models: &[String]) -> Option<String> {
    hints.iter().find_map(|hint| {
        let hint = hint.to_ascii_lowercase();
        models
            .iter()
            .find(|m| m.to_ascii_lowercase() == hint)
            .or_else(|| models.iter().find(|m| m.to_ascii_lowercase().contains(&hint)))
            .cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hinted_model_is_used_when_the_provider_has_it() {
        let models = ["gpt-4o".to_string(), "claude-3-5-sonnet-latest".to_string()];
        let hints = |h: &[&str]| h.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            preferred_model(&hints(&["claude-3-5-sonnet"]), &models).as_deref(),
            Some("claude-3-5-sonnet-latest")
        );
        assert_eq!(
            preferred_model(&hints(&["gemini", "GPT-4o"]), &models).as_deref(),
            Some("gpt-4o")
        );
        assert_eq!(preferred_model(&hints(&["gemini"]), &models), None);
    }

    fn no_keyring() -> Arc<dyn SecretStore> {
        Arc::new(porthole_secrets::MemorySecrets::default())
    }

    #[test]
    fn the_flags_are_checked_by_the_settings_forms_rules() {
        let flags = |base_url: &str| ModelFlags {
            provider: Some(ProviderKind::OpenAi),
            base_url: Some(base_url.into()),
            model: Some("m".into()),
        };
        let refused = ModelChoice::new(&flags("http://user:secret@localhost:11434/v1"), None, &no_keyring)
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("--base-url"), "{refused}");
        assert!(refused.contains("user name or password"), "{refused}");
        assert!(!refused.contains("secret"), "the password is not repeated: {refused}");
        let refused = ModelChoice::new(&flags("ftp://localhost/v1"), None, &no_keyring)
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("http:// or https://"), "{refused}");
        let blank_model = ModelFlags {
            model: Some("  ".into()),
            ..flags("http://localhost:11434/v1")
        };
        assert!(ModelChoice::new(&blank_model, None, &no_keyring).is_err());
        let ok = ModelChoice::new(&flags(" http://localhost:11434/v1 "), None, &no_keyring).unwrap();
        assert_eq!(ok.base_url, "http://localhost:11434/v1");
        assert_eq!(ok.model.as_deref(), Some("m"));
    }
}
