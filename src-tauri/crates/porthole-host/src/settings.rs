//! The settings dialog's commands: the model provider (base URL, model, the API key in the OS
//! keyring, a test request) and the general settings (how long views are kept, the theme).
//! Everything is checked here too, whatever the form already checked.

use std::sync::Arc;
use std::time::{Duration, Instant};

use porthole_agent::keys::{find_key, keyring_entry};
use porthole_agent::providers::{self, ProviderConfig, ProviderKind, default_base_url, key_env_var};
use porthole_agent::{Message, ModelRequest, Part, Provider, RetryPolicy};
use porthole_secrets::SecretStore;
use porthole_store::Store;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;
use url::Url;

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::model::{MODEL_SETTING, ModelFlags, chosen};
use crate::theme::{THEME_SETTING, ThemePreference};
use crate::views::DEFAULT_RETENTION_DAYS;

/// The setting that holds how many days a view is kept.
pub const RETENTION_SETTING: &str = "viewRetentionDays";
/// The longest view retention the settings accept, in days.
pub const MAX_RETENTION_DAYS: i64 = 365;
/// How long listing a provider's models may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the test request may take.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// What the test request asks the model.
pub const TEST_PROMPT: &str = "Say OK.";
/// How much of the test reply is shown.
const REPLY_SNIPPET_CHARS: usize = 200;

/// A provider's key, as far as the settings can tell without showing it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKeys {
    provider: ProviderKind,
    default_base_url: String,
    /// e.g. `OPENAI_API_KEY`; a key there wins over the keyring.
    key_env_var: String,
    /// The environment variable holds a key; it wins over the keyring.
    key_from_env: bool,
    /// The OS keyring holds a key for this provider.
    key_stored: bool,
}

/// What the command line or the environment (`--provider`/`PORTHOLE_PROVIDER`, …) fixes for
/// this run; each wins over the settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FlagsOverride {
    provider: Option<ProviderKind>,
    base_url: Option<String>,
    model: Option<String>,
}

/// The model section of the settings.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// The provider, base URL and model this run uses (flags, else the settings, else defaults).
    provider: ProviderKind,
    base_url: String,
    /// `None`: the provider's only model.
    model: Option<String>,
    flags_override: FlagsOverride,
    providers: Vec<ProviderKeys>,
    /// Why keys cannot be kept in an OS keyring (there is none, or it refused), in words.
    keyring_problem: Option<String>,
}

/// The outcome of the test request.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelTest {
    ok: bool,
    model: String,
    /// The start of the model's reply (empty when it answered without text).
    reply: Option<String>,
    /// Why the request failed, in words.
    error: Option<String>,
    /// How long the request took, in milliseconds.
    #[ts(type = "number")]
    ms: u64,
}

/// The general section of the settings.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GeneralSettings {
    #[ts(type = "number")]
    pub view_retention_days: i64,
    theme: ThemePreference,
    /// When not empty, the only origins a view may be granted (of those it declares).
    pub view_origins_allowed: Vec<String>,
    /// Origins (and the names under them) no view is granted, whatever it declares.
    pub view_origins_blocked: Vec<String>,
    /// The OAuth client ID metadata document URL (CIMD), used as the client_id where an
    /// authorization server supports it; else Porthole registers dynamically. From the next start.
    pub client_metadata_url: Option<String>,
    /// The folders servers are given as their roots (absolute paths), unless a server's config
    /// gives it its own.
    pub roots: Vec<String>,
}

/// Where the general settings' origin lists and client metadata URL are kept.
pub const ALLOWED_ORIGINS_SETTING: &str = "viewOriginsAllowed";
pub const BLOCKED_ORIGINS_SETTING: &str = "viewOriginsBlocked";
pub const CLIENT_METADATA_URL_SETTING: &str = "oauthClientMetadataUrl";

/// The rules the settings put over every view's declared origins.
pub fn origin_rules(store: Option<&Store>) -> porthole_apps::csp::OriginRules {
    let general = read_general(store);
    porthole_apps::csp::OriginRules {
        allowed: general.view_origins_allowed,
        blocked: general.view_origins_blocked,
    }
}

/// Checks an origin list from the form (one origin per entry; blank entries are dropped),
/// normalised; what is wrong with each bad entry otherwise.
fn check_origin_list(list: &[String], which: &str) -> AppResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    for (i, entry) in list.iter().enumerate().filter(|(_, e)| !e.trim().is_empty()) {
        match porthole_apps::csp::OriginRules::check_rule(entry) {
            Ok(origin) if !out.contains(&origin) => out.push(origin),
            Ok(_) => {}
            Err(why) => problems.push(format!("line {}: {:?}: {why}", i + 1, entry.trim())),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(AppError::invalid(format!("the {which}: {}", problems.join("; "))))
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Keyring calls may block (a locked keyring asks the user): they run off the async runtime.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> AppResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AppError::keyring(format!("the keyring request stopped: {e}")))
}

/// A base URL the providers can use: `http(s)://host…`, with no user name or password in it
/// (the settings are not the place for secrets). Returns it trimmed.
pub fn check_base_url(base_url: &str) -> AppResult<String> {
    let base_url = base_url.trim();
    if base_url.is_empty() {
        return Err(AppError::invalid("the base URL is empty"));
    }
    // What the messages show of it: never its credentials.
    let shown = porthole_secrets::redact::url(base_url);
    let url =
        Url::parse(base_url).map_err(|e| AppError::invalid(format!("the base URL {shown:?} is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(AppError::invalid(format!(
            "the base URL must start with http:// or https://, not {}://",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(AppError::invalid(format!("the base URL {shown:?} has no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AppError::invalid(
            "the base URL must not carry a user name or password; save the API key instead",
        ));
    }
    Ok(base_url.to_string())
}

/// A model name, when one is given: not blank.
pub fn check_model(model: Option<&str>) -> AppResult<Option<String>> {
    match model {
        None => Ok(None),
        Some(m) if m.trim().is_empty() => Err(AppError::invalid("the model name is empty")),
        Some(m) => Ok(Some(m.trim().to_string())),
    }
}

/// A view retention: a whole number of days from 1 to [`MAX_RETENTION_DAYS`].
pub fn check_retention(days: &Value) -> AppResult<i64> {
    let range = format!("from 1 to {MAX_RETENTION_DAYS}");
    let whole = match days {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(d), _) => d,
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => f as i64,
            (None, Some(f)) => {
                return Err(AppError::invalid(format!(
                    "view retention is a whole number of days ({range}), not {f}"
                )));
            }
            _ => {
                return Err(AppError::invalid(format!(
                    "view retention must be a number of days {range}"
                )));
            }
        },
        _ => {
            return Err(AppError::invalid(format!(
                "view retention must be a number of days {range}"
            )));
        }
    };
    if (1..=MAX_RETENTION_DAYS).contains(&whole) {
        Ok(whole)
    } else {
        Err(AppError::invalid(format!(
            "view retention must be {range} days, not {whole}"
        )))
    }
}

/// What the environment and the keyring hold for each provider, and why the keyring cannot
/// keep keys (if it cannot).
pub fn key_status(
    keyring: &dyn SecretStore,
    env: impl Fn(&str) -> Option<String>,
) -> (Vec<ProviderKeys>, Option<String>) {
    let mut problem = keyring.session_only();
    let mut all = Vec::new();
    for kind in ProviderKind::ALL {
        let key_stored = problem.is_none()
            && match keyring.get(&keyring_entry(kind)) {
                Ok(stored) => stored.is_some_and(|k| !k.is_empty()),
                Err(e) => {
                    problem = Some(e.to_string());
                    false
                }
            };
        all.push(ProviderKeys {
            provider: kind,
            default_base_url: default_base_url(kind).to_string(),
            key_env_var: key_env_var(kind).to_string(),
            key_from_env: env(key_env_var(kind)).is_some_and(|k| !k.trim().is_empty()),
            key_stored,
        });
    }
    (all, problem)
}

/// Puts `key` in the OS keyring as `kind`'s key; refuses when there is no OS keyring (the key
/// would last this session only), pointing at the environment variable.
pub fn store_key(keyring: &dyn SecretStore, kind: ProviderKind, key: &str) -> AppResult<()> {
    let key = key.trim();
    if key.is_empty() {
        return Err(AppError::invalid("the API key is empty"));
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(AppError::invalid(
            "an API key has no spaces or line breaks in it; paste just the key",
        ));
    }
    if let Some(problem) = keyring.session_only() {
        // (The problem may say that secrets are kept in memory: sign-ins are, API keys never.)
        return Err(AppError::keyring(format!(
            "the key was not saved, not even for this session: Porthole keeps API keys only in the OS \
             keyring, and it has none it can use ({problem}). Set {} in the environment instead, or start \
             or unlock the keyring and restart Porthole",
            key_env_var(kind)
        )));
    }
    keyring
        .set(&keyring_entry(kind), key)
        .map_err(|e| keyring_failure("the key was not saved", kind, e))
}

/// A keyring call that failed, in words that say what to do: a keyring that is locked asks the
/// person to unlock it (and fails when they do not); one that is missing cannot keep the key.
fn keyring_failure(what: &str, kind: ProviderKind, e: porthole_secrets::SecretError) -> AppError {
    let env = key_env_var(kind);
    AppError::keyring(match e {
        porthole_secrets::SecretError::Unavailable(why) => format!(
            "{what}: the OS keyring could not be reached ({why}). Check that it is running and unlocked, \
             then try again, or set {env} in the environment"
        ),
        porthole_secrets::SecretError::Refused(why) => format!(
            "{what}: the OS keyring refused ({why}). If it asked to be unlocked, unlock it and try again; \
             or set {env} in the environment"
        ),
    })
}

/// Removes `kind`'s key from the OS keyring.
pub fn remove_key(keyring: &dyn SecretStore, kind: ProviderKind) -> AppResult<()> {
    if let Some(problem) = keyring.session_only() {
        return Err(AppError::keyring(format!(
            "there is no stored key to remove: {problem}"
        )));
    }
    keyring
        .delete(&keyring_entry(kind))
        .map_err(|e| keyring_failure("the key was not removed", kind, e))
}

/// The key for a request from the form: the one typed, else the environment's, else the
/// keyring's.
pub fn key_for(
    kind: ProviderKind,
    typed: Option<&str>,
    keyring: &dyn SecretStore,
    env: impl Fn(&str) -> Option<String>,
) -> AppResult<Option<String>> {
    if let Some(typed) = typed.map(str::trim).filter(|k| !k.is_empty()) {
        return Ok(Some(typed.to_string()));
    }
    find_key(kind, env, Some(keyring))
        .map(|found| found.map(|(key, _)| key))
        .map_err(|e| AppError::keyring(format!("the key could not be read: {e}")))
}

/// A provider for one request from the settings: no retries (the person is waiting), and a
/// hosted API without a key is refused before anything is sent.
pub fn provider_for(kind: ProviderKind, base_url: &str, key: Option<String>) -> AppResult<Arc<dyn Provider>> {
    let hosted = base_url.trim_end_matches('/') == default_base_url(kind).trim_end_matches('/');
    if key.is_none() && hosted {
        return Err(AppError::provider(format!(
            "no API key for {kind}: type one, save one in the OS keyring, or set {}",
            key_env_var(kind)
        )));
    }
    Ok(providers::build(ProviderConfig {
        kind,
        base_url: Some(base_url.to_string()),
        api_key: key,
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        max_tokens: None,
    }))
}

/// The models the provider lists, sorted; an empty list is an error (type the name instead).
/// The model an empty model field means, as a turn takes it: the provider's only model; when it
/// lists several, the person is asked to pick one (some are named).
pub async fn only_model(provider: &dyn Provider, base_url: &str) -> AppResult<String> {
    let models = list_models(provider, base_url).await?;
    match models.as_slice() {
        [only] => Ok(only.clone()),
        many => {
            let shown: Vec<&str> = many.iter().take(8).map(String::as_str).collect();
            Err(AppError::invalid(format!(
                "pick the model to test: this server offers {}{}",
                shown.join(", "),
                if many.len() > shown.len() { ", …" } else { "" }
            )))
        }
    }
}

pub async fn list_models(provider: &dyn Provider, base_url: &str) -> AppResult<Vec<String>> {
    let base_url = porthole_secrets::redact::url(base_url);
    let listed = tokio::time::timeout(LIST_TIMEOUT, provider.list_models())
        .await
        .map_err(|_| {
            AppError::provider(format!(
                "{base_url} did not list its models within {} s",
                LIST_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| AppError::provider(format!("cannot list the models at {base_url}: {e}")))?;
    let mut models = listed;
    models.sort();
    models.dedup();
    if models.is_empty() {
        return Err(AppError::provider(format!(
            "{base_url} lists no models; type the model's name instead"
        )));
    }
    Ok(models)
}

/// Sends [`TEST_PROMPT`] to `model` through the provider's streaming API and says what came
/// back, or why nothing did.
pub async fn run_test(provider: &dyn Provider, model: &str) -> ModelTest {
    let request = ModelRequest {
        model: model.to_string(),
        messages: vec![Message::user(TEST_PROMPT)],
        ..ModelRequest::default()
    };
    let (events, _) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let outcome = tokio::time::timeout(TEST_TIMEOUT, provider.stream(&request, events, cancel.clone())).await;
    let ms = started.elapsed().as_millis() as u64;
    let (reply, error) = match outcome {
        Ok(Ok(reply)) => {
            let text: String = reply
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            (Some(snippet(text.trim())), None)
        }
        Ok(Err(e)) => (None, Some(e.to_string())),
        Err(_) => {
            cancel.cancel();
            (None, Some(format!("no answer within {} s", TEST_TIMEOUT.as_secs())))
        }
    };
    ModelTest {
        ok: error.is_none(),
        model: model.to_string(),
        reply,
        error,
        ms,
    }
}

fn snippet(text: &str) -> String {
    match text.char_indices().nth(REPLY_SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The general settings as stored; anything missing or out of range reads as the default.
pub fn read_general(store: Option<&Store>) -> GeneralSettings {
    let setting = |key: &str| store.and_then(|s| s.setting(key).ok().flatten());
    GeneralSettings {
        view_retention_days: setting(RETENTION_SETTING)
            .and_then(|v| v.as_i64())
            .filter(|d| (1..=MAX_RETENTION_DAYS).contains(d))
            .unwrap_or(DEFAULT_RETENTION_DAYS),
        theme: ThemePreference::from_setting(setting(THEME_SETTING).as_ref()),
        view_origins_allowed: string_list(setting(ALLOWED_ORIGINS_SETTING)),
        view_origins_blocked: string_list(setting(BLOCKED_ORIGINS_SETTING)),
        client_metadata_url: setting(CLIENT_METADATA_URL_SETTING)
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|u| !u.is_empty()),
        roots: crate::roots::app_roots(store),
    }
}

fn string_list(value: Option<Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

// ---- What the settings dialog asks of the app ------------------------------------------------

/// What is saved of a form sent while command-line flags fix some fields: those fields keep
/// their saved values (the flags are for this run only, and the form shows them read-only).
fn without_flags(args: &ModelFlags, saved: &Value, mut sent: Value) -> Value {
    let fixed = [
        ("provider", args.provider.is_some()),
        ("baseUrl", args.base_url.is_some()),
        ("model", args.model.is_some()),
    ];
    for (field, by_flag) in fixed {
        if by_flag {
            sent[field] = saved.get(field).cloned().unwrap_or(Value::Null);
        }
    }
    sent
}

fn not_saved(e: porthole_store::StoreError) -> AppError {
    AppError::store(format!("the settings could not be saved: {e}"))
}

impl Host {
    /// The model section: what this run uses, what the flags fix, and where each provider's
    /// key is.
    pub async fn model_settings(&self) -> AppResult<ModelSettings> {
        let saved = self
            .inner
            .store
            .as_ref()
            .ok()
            .and_then(|s| s.setting(MODEL_SETTING).ok().flatten())
            .unwrap_or(json!({}));
        let args = &self.inner.model_flags;
        let (kind, base_url, model) = chosen(args, &saved);
        let keyring = self.inner.keyring.clone();
        let (providers, keyring_problem) = blocking(move || key_status(keyring.as_ref(), env_var)).await?;
        Ok(ModelSettings {
            provider: kind,
            base_url,
            model,
            flags_override: FlagsOverride {
                provider: args.provider,
                base_url: args.base_url.clone(),
                model: args.model.clone(),
            },
            providers,
            keyring_problem,
        })
    }

    /// Stores the provider, base URL and model (`None`: the provider's only model).
    pub fn save_model_settings(&self, kind: ProviderKind, base_url: &str, model: Option<&str>) -> AppResult<()> {
        let base_url = check_base_url(base_url)?;
        let model = check_model(model)?;
        let store = self.store()?;
        let saved = store.setting(MODEL_SETTING).ok().flatten().unwrap_or(json!({}));
        let sent = json!({ "provider": kind.as_str(), "baseUrl": base_url, "model": model });
        store
            .set_setting(MODEL_SETTING, &without_flags(&self.inner.model_flags, &saved, sent))
            .map_err(not_saved)
    }

    /// The key for a request from the form: the one typed, else the environment's, else the
    /// keyring's (read off the async runtime: a locked keyring may ask the person).
    async fn form_key(&self, kind: ProviderKind, typed: Option<String>) -> AppResult<Option<String>> {
        let keyring = self.inner.keyring.clone();
        blocking(move || key_for(kind, typed.as_deref(), keyring.as_ref(), env_var)).await?
    }

    /// The models the provider lists, with the key typed in the form, else the environment's
    /// or the keyring's.
    pub async fn list_provider_models(
        &self,
        kind: ProviderKind,
        base_url: &str,
        api_key: Option<String>,
    ) -> AppResult<Vec<String>> {
        let base_url = check_base_url(base_url)?;
        let key = self.form_key(kind, api_key).await?;
        let provider = provider_for(kind, &base_url, key)?;
        list_models(provider.as_ref(), &base_url).await
    }

    /// Sends a one-line prompt to the model and reports the reply (or the error) and the time
    /// taken.
    pub async fn test_model(
        &self,
        kind: ProviderKind,
        base_url: &str,
        model: Option<&str>,
        api_key: Option<String>,
    ) -> AppResult<ModelTest> {
        let base_url = check_base_url(base_url)?;
        let model = check_model(model)?;
        let key = self.form_key(kind, api_key).await?;
        let provider = provider_for(kind, &base_url, key)?;
        let model = match model {
            Some(model) => model,
            None => only_model(provider.as_ref(), &base_url).await?,
        };
        Ok(run_test(provider.as_ref(), &model).await)
    }

    /// Puts a provider's API key in the OS keyring (never in a file).
    pub async fn save_api_key(&self, kind: ProviderKind, key: String) -> AppResult<()> {
        let keyring = self.inner.keyring.clone();
        blocking(move || store_key(keyring.as_ref(), kind, &key)).await?
    }

    /// Removes a provider's API key from the OS keyring.
    pub async fn delete_api_key(&self, kind: ProviderKind) -> AppResult<()> {
        let keyring = self.inner.keyring.clone();
        blocking(move || remove_key(keyring.as_ref(), kind)).await?
    }

    pub fn general_settings(&self) -> GeneralSettings {
        read_general(self.inner.store.as_ref().ok())
    }

    /// Stores what is given of the view retention (days), the theme, the view origin lists, the
    /// client metadata URL and the roots, all checked first; a new theme reaches every live view
    /// at once, new origin lists apply to every view opened from now on, and servers are told
    /// their roots changed.
    pub fn save_general_settings(&self, request: &crate::contract::SaveGeneralSettings) -> AppResult<GeneralSettings> {
        let days = request.view_retention_days.as_ref().map(check_retention).transpose()?;
        let allowed = request
            .view_origins_allowed
            .as_deref()
            .map(|l| check_origin_list(l, "allow list of view origins"))
            .transpose()?;
        let blocked = request
            .view_origins_blocked
            .as_deref()
            .map(|l| check_origin_list(l, "block list of view origins"))
            .transpose()?;
        let client_metadata_url = match request.client_metadata_url.as_deref().map(str::trim) {
            Some("") => Some(None),
            Some(url) => {
                porthole_mcp::oauth::check_client_metadata_url(url)
                    .map_err(|why| AppError::invalid(format!("the client metadata document URL: {why}")))?;
                Some(Some(url.to_string()))
            }
            None => None,
        };
        let roots = request.roots.as_deref().map(crate::roots::check_roots).transpose()?;
        let theme = request.theme;
        let store = self.store()?;
        if let Some(days) = days {
            store.set_setting(RETENTION_SETTING, &json!(days)).map_err(not_saved)?;
        }
        if let Some(allowed) = allowed {
            store
                .set_setting(ALLOWED_ORIGINS_SETTING, &json!(allowed))
                .map_err(not_saved)?;
        }
        if let Some(blocked) = blocked {
            store
                .set_setting(BLOCKED_ORIGINS_SETTING, &json!(blocked))
                .map_err(not_saved)?;
        }
        match client_metadata_url {
            Some(Some(url)) => store
                .set_setting(CLIENT_METADATA_URL_SETTING, &json!(url))
                .map_err(not_saved)?,
            Some(None) => drop(store.remove_setting(CLIENT_METADATA_URL_SETTING).map_err(not_saved)?),
            None => {}
        }
        if let Some(theme) = theme {
            store.set_setting(THEME_SETTING, &json!(theme)).map_err(not_saved)?;
            self.inner.views.set_theme_preference(theme);
        }
        if let Some(roots) = roots
            && roots != crate::roots::app_roots(Some(store))
        {
            store
                .set_setting(crate::roots::ROOTS_SETTING, &json!(roots))
                .map_err(not_saved)?;
            let servers = self.inner.servers.clone();
            self.inner.runtime.spawn(async move { servers.roots_changed().await });
        }
        Ok(read_general(Some(store)))
    }

    /// The window's page saw the system's light/dark appearance change (or start): views follow
    /// it while the theme setting is "system".
    pub fn system_theme_changed(&self, dark: bool) {
        self.inner.views.theme_changed(dark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_fixed_by_flags_keep_their_saved_values() {
        let args = ModelFlags {
            provider: None,
            base_url: Some("http://localhost:9/v1".into()),
            model: Some("flag-model".into()),
        };
        let saved = json!({"provider": "openai", "baseUrl": "https://saved.example/v1", "model": "saved-model"});
        let sent = json!({"provider": "anthropic", "baseUrl": "http://localhost:9/v1", "model": "flag-model"});
        assert_eq!(
            without_flags(&args, &saved, sent.clone()),
            json!({"provider": "anthropic", "baseUrl": "https://saved.example/v1", "model": "saved-model"})
        );
        // Nothing saved yet: a fixed field is saved as unset, not as the flag's value.
        assert_eq!(
            without_flags(&args, &json!({}), sent.clone()),
            json!({"provider": "anthropic", "baseUrl": null, "model": null})
        );
        assert_eq!(without_flags(&ModelFlags::default(), &saved, sent.clone()), sent);
    }
    use porthole_fake_llm::{FakeLlm, Reply, Script};
    use porthole_secrets::{MemorySecrets, SecretError};

    /// A keyring that keeps what it is given beyond the session, as the OS keyring does (the
    /// real one needs a Secret Service; `porthole-secrets` tests it).
    #[derive(Default)]
    struct DurableSecrets(MemorySecrets);

    impl SecretStore for DurableSecrets {
        fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
            self.0.get(key)
        }
        fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
            self.0.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<(), SecretError> {
            self.0.delete(key)
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn base_urls_are_http_urls_without_credentials() {
        assert_eq!(
            check_base_url("  http://localhost:11434/v1 ").unwrap(),
            "http://localhost:11434/v1"
        );
        assert!(check_base_url("https://api.openai.com/v1").is_ok());
        for (bad, why) in [
            ("", "empty"),
            ("localhost:11434", "http:// or https://"),
            ("ftp://example.com/v1", "http:// or https://"),
            ("not a url", "not a URL"),
            ("https://user:secret@example.com/v1", "user name or password"),
        ] {
            let refused = check_base_url(bad).unwrap_err();
            assert!(refused.message.contains(why), "{bad:?}: {refused}");
        }
        // A refusal that shows the URL shows it without its credentials.
        let refused = check_base_url("http://user:s3cret@[bad/v1?api_key=k3y").unwrap_err();
        assert!(refused.message.contains("not a URL"), "{refused}");
        assert!(
            !refused.message.contains("s3cret") && !refused.message.contains("k3y"),
            "{refused}"
        );
    }

    #[test]
    fn model_names_are_checked() {
        assert_eq!(check_model(None), Ok(None));
        assert_eq!(check_model(Some(" gpt-test ")), Ok(Some("gpt-test".into())));
        assert!(check_model(Some("  ")).unwrap_err().message.contains("empty"));
    }

    #[test]
    fn retention_is_a_whole_number_of_days_up_to_a_year() {
        assert_eq!(check_retention(&json!(1)), Ok(1));
        assert_eq!(check_retention(&json!(365)), Ok(365));
        assert_eq!(check_retention(&json!(30.0)), Ok(30));
        for (bad, why) in [
            (json!(0), "not 0"),
            (json!(366), "not 366"),
            (json!(-5), "not -5"),
            (json!(2.5), "whole number"),
            (json!("7"), "a number of days"),
            (json!(null), "a number of days"),
        ] {
            let refused = check_retention(&bad).unwrap_err();
            assert!(refused.message.contains(why), "{bad}: {refused}");
            assert!(refused.message.contains("from 1 to 365"), "{bad}: {refused}");
        }
    }

    #[test]
    fn general_settings_read_back_what_was_stored_and_defaults_otherwise() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(
            read_general(Some(&store)),
            GeneralSettings {
                view_retention_days: DEFAULT_RETENTION_DAYS,
                theme: ThemePreference::System,
                view_origins_allowed: vec![],
                view_origins_blocked: vec![],
                client_metadata_url: None,
                roots: vec![],
            }
        );
        store.set_setting(RETENTION_SETTING, &json!(30)).unwrap();
        store.set_setting(THEME_SETTING, &json!("dark")).unwrap();
        let read = read_general(Some(&store));
        assert_eq!(read.view_retention_days, 30);
        assert_eq!(read.theme, ThemePreference::Dark);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            json!({"viewRetentionDays": 30, "theme": "dark", "viewOriginsAllowed": [], "viewOriginsBlocked": [],
                   "clientMetadataUrl": null, "roots": []})
        );
        // A value written by hand that the form would refuse reads as the default.
        store.set_setting(RETENTION_SETTING, &json!(9000)).unwrap();
        assert_eq!(read_general(Some(&store)).view_retention_days, DEFAULT_RETENTION_DAYS);
        assert_eq!(read_general(None).theme, ThemePreference::System);
    }

    #[test]
    fn a_saved_key_is_found_and_removed_and_reported() {
        let keyring = DurableSecrets::default();
        store_key(&keyring, ProviderKind::Anthropic, "  sk-ant-test\n").unwrap();
        assert_eq!(
            keyring.get("api-key:anthropic").unwrap().as_deref(),
            Some("sk-ant-test"),
            "trimmed, under the entry `porthole run` reads"
        );
        let found = find_key(ProviderKind::Anthropic, no_env, Some(&keyring)).unwrap();
        assert_eq!(found.map(|(k, _)| k).as_deref(), Some("sk-ant-test"));

        let env = |var: &str| (var == "OPENAI_API_KEY").then(|| "sk-env".to_string());
        let (status, problem) = key_status(&keyring, env);
        assert_eq!(problem, None);
        let openai = status.iter().find(|p| p.provider == ProviderKind::OpenAi).unwrap();
        let anthropic = status.iter().find(|p| p.provider == ProviderKind::Anthropic).unwrap();
        assert!(openai.key_from_env && !openai.key_stored);
        assert!(!anthropic.key_from_env && anthropic.key_stored);
        assert_eq!(anthropic.key_env_var, "ANTHROPIC_API_KEY");
        assert_eq!(anthropic.default_base_url, "https://api.anthropic.com/v1");

        remove_key(&keyring, ProviderKind::Anthropic).unwrap();
        assert_eq!(keyring.get("api-key:anthropic").unwrap(), None);
        assert!(!key_status(&keyring, no_env).0.iter().any(|p| p.key_stored));

        for bad in ["", "   ", "sk-one two"] {
            assert!(store_key(&keyring, ProviderKind::OpenAi, bad).is_err(), "{bad:?}");
        }
        assert_eq!(keyring.get("api-key:openai").unwrap(), None);
    }

    #[test]
    fn without_an_os_keyring_a_key_is_refused_with_the_environment_variable_to_use() {
        let memory = MemorySecrets::default();
        let refused = store_key(&memory, ProviderKind::OpenAi, "sk-test").unwrap_err();
        assert!(refused.message.contains("not saved"), "{refused}");
        assert!(refused.message.contains("OPENAI_API_KEY"), "{refused}");
        assert_eq!(memory.get("api-key:openai").unwrap(), None, "not even in memory");
        let (status, problem) = key_status(&memory, no_env);
        assert!(problem.unwrap().contains("session only"));
        assert!(status.iter().all(|p| !p.key_stored));
        assert!(remove_key(&memory, ProviderKind::OpenAi).is_err());
    }

    #[test]
    fn the_typed_key_wins_then_the_environment_then_the_keyring() {
        let keyring = DurableSecrets::default();
        store_key(&keyring, ProviderKind::OpenAi, "sk-keyring").unwrap();
        let env = |var: &str| (var == "OPENAI_API_KEY").then(|| "sk-env".to_string());
        let key = |typed: Option<&str>, env: &dyn Fn(&str) -> Option<String>| {
            key_for(ProviderKind::OpenAi, typed, &keyring, env).unwrap()
        };
        assert_eq!(key(Some(" sk-typed "), &env).as_deref(), Some("sk-typed"));
        assert_eq!(key(Some(""), &env).as_deref(), Some("sk-env"));
        assert_eq!(key(None, &no_env).as_deref(), Some("sk-keyring"));
        assert_eq!(key_for(ProviderKind::Anthropic, None, &keyring, no_env).unwrap(), None);
    }

    #[test]
    fn a_hosted_api_without_a_key_is_refused_before_sending() {
        let refused = provider_for(ProviderKind::Anthropic, "https://api.anthropic.com/v1/", None)
            .err()
            .unwrap();
        assert!(refused.message.contains("ANTHROPIC_API_KEY"), "{refused}");
        assert!(provider_for(ProviderKind::OpenAi, "http://localhost:11434/v1", None).is_ok());
    }

    #[tokio::test]
    async fn models_are_listed_sorted_with_the_key() {
        let llm = FakeLlm::start(Script {
            api_key: Some("sk-test".into()),
            models: vec!["zeta".into(), "alpha".into()],
            ..Script::default()
        })
        .await
        .unwrap();
        let provider = provider_for(ProviderKind::OpenAi, &llm.base_url(), Some("sk-test".into())).unwrap();
        assert_eq!(
            list_models(provider.as_ref(), &llm.base_url()).await.unwrap(),
            ["alpha", "zeta"]
        );
        let wrong = provider_for(ProviderKind::OpenAi, &llm.base_url(), Some("sk-wrong".into())).unwrap();
        let refused = list_models(wrong.as_ref(), &llm.base_url()).await.unwrap_err();
        assert!(refused.message.contains("cannot list the models"), "{refused}");
        assert!(refused.message.contains("401"), "{refused}");
    }

    #[tokio::test]
    async fn an_empty_model_means_the_providers_only_one() {
        let llm = FakeLlm::start(Script {
            models: vec!["solo".into()],
            ..Script::default()
        })
        .await
        .unwrap();
        let provider = provider_for(ProviderKind::OpenAi, &llm.base_url(), None).unwrap();
        assert_eq!(only_model(provider.as_ref(), &llm.base_url()).await.unwrap(), "solo");
        let many = FakeLlm::start(Script {
            models: vec!["b".into(), "a".into()],
            ..Script::default()
        })
        .await
        .unwrap();
        let provider = provider_for(ProviderKind::OpenAi, &many.base_url(), None).unwrap();
        let refused = only_model(provider.as_ref(), &many.base_url()).await.unwrap_err();
        assert_eq!(refused.message, "pick the model to test: this server offers a, b");
    }

    #[tokio::test]
    async fn the_test_sends_one_prompt_through_the_streaming_api() {
        for kind in ProviderKind::ALL {
            let llm = FakeLlm::start(Script {
                api_key: Some("sk-test".into()),
                models: vec!["m1".into()],
                ..Script::new(vec![Reply::text("OK")])
            })
            .await
            .unwrap();
            let provider = provider_for(kind, &llm.base_url(), Some("sk-test".into())).unwrap();
            let test = run_test(provider.as_ref(), "m1").await;
            assert!(test.ok, "{kind}: {test:?}");
            assert_eq!(test.reply.as_deref(), Some("OK"));
            assert_eq!(test.error, None);
            let requests: Vec<_> = llm.requests().into_iter().filter(|r| r.method == "POST").collect();
            assert_eq!(requests.len(), 1, "{kind}: one request, no retries");
            let body = &requests[0].body;
            assert_eq!(body["model"], "m1");
            assert_eq!(body["stream"], true);
            assert!(body.to_string().contains(TEST_PROMPT), "{body}");

            // A model the provider does not know: the error, in words.
            let test = run_test(provider.as_ref(), "nope").await;
            assert!(!test.ok);
            assert_eq!(test.reply, None);
            assert!(test.error.as_deref().unwrap().contains("nope"), "{test:?}");
        }
    }

    #[test]
    fn the_form_starts_from_what_the_run_uses() {
        use crate::model::ModelFlags;
        let saved = json!({"provider": "anthropic", "baseUrl": "http://proxy:8080/v1", "model": "claude-test"});
        let none = ModelFlags::default();
        assert_eq!(
            chosen(&none, &saved),
            (
                ProviderKind::Anthropic,
                "http://proxy:8080/v1".into(),
                Some("claude-test".into())
            )
        );
        // A provider fixed by the flags: the saved base URL and model belong to another one.
        let openai = ModelFlags {
            provider: Some(ProviderKind::OpenAi),
            ..ModelFlags::default()
        };
        assert_eq!(
            chosen(&openai, &saved),
            (ProviderKind::OpenAi, "https://api.openai.com/v1".into(), None)
        );
        let model = ModelFlags {
            model: Some("flagged".into()),
            ..ModelFlags::default()
        };
        assert_eq!(chosen(&model, &saved).2.as_deref(), Some("flagged"));
        assert_eq!(
            chosen(&none, &json!({})),
            (ProviderKind::OpenAi, "https://api.openai.com/v1".into(), None)
        );
    }

    #[test]
    fn long_replies_are_cut_to_a_snippet() {
        assert_eq!(snippet("OK"), "OK");
        let long = "é".repeat(REPLY_SNIPPET_CHARS + 5);
        let cut = snippet(&long);
        assert_eq!(cut.chars().count(), REPLY_SNIPPET_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
