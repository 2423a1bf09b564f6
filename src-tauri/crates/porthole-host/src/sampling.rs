//! Servers' sampling requests (`sampling/createMessage`, from servers of protocol revisions that
//! still use it). The window shows the server, the messages, the system prompt and the token
//! limit; nothing reaches a model until the person allows it (once, or always for that server).
//! The configured provider answers — with a model the request's hints name, when the provider
//! has one — and the answer is shown to the person before it goes back; they may refuse it.
//! Every request is in the audit log with what became of it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use porthole_mcp::SamplingRequest;
use porthole_store::{AuditKind, NewAuditEntry};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::ports::{MAIN_WINDOW, Outbound};
use crate::views::SampledMessage;

/// A server's sampling request as the window shows it (`sampling-requested`): first to be
/// allowed, then again with the model's answer to be sent back or refused.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerSampling {
    #[ts(type = "number")]
    pub id: u64,
    pub server: String,
    pub system_prompt: Option<String>,
    pub messages: Vec<SampledMessage>,
    #[ts(type = "number")]
    pub max_tokens: u64,
    /// The models the server would prefer, by name (hints, best first).
    pub model_hints: Vec<String>,
    /// The model's answer, once written: the person sends it to the server or refuses it.
    pub answer: Option<SampledAnswer>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SampledAnswer {
    pub text: String,
    pub model: String,
}

/// The window stops asking about request `id` (`sampling-settled`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SamplingSettled {
    #[ts(type = "number")]
    pub id: u64,
}

/// What the person decided: about the request (`allow_once`, `allow_always`, `decline`), then
/// about the answer (`send`, `refuse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SamplingDecision {
    AllowOnce,
    AllowAlways,
    Decline,
    Send,
    Refuse,
}

/// How long the person has to answer each step.
pub const SAMPLING_WAIT: Duration = Duration::from_secs(600);

/// The servers whose sampling requests the person allowed always (a JSON array of names).
const ALWAYS_SETTING: &str = "sampling.always";

/// Requests waiting for the person, by id.
#[derive(Default)]
pub struct ServerSamplings {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<SamplingDecision>>>,
}

/// What a `sampling/createMessage` asks, as the person is shown it and the model is sent it:
/// text as text; other content named (`[image image/png]`), since only text is passed on.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingPrompt {
    pub system_prompt: Option<String>,
    pub messages: Vec<SampledMessage>,
    pub max_tokens: u64,
    pub model_hints: Vec<String>,
}

impl SamplingPrompt {
    pub fn read(params: &Value) -> Result<SamplingPrompt, String> {
        let messages = params["messages"].as_array().ok_or("the request has no messages")?;
        if messages.is_empty() {
            return Err("the request has no messages".into());
        }
        let messages = messages
            .iter()
            .map(|m| SampledMessage {
                role: if m["role"] == "assistant" { "assistant" } else { "user" }.to_string(),
                text: match &m["content"] {
                    Value::Array(blocks) => blocks.iter().map(content_text).collect::<Vec<_>>().join("\n"),
                    block => content_text(block),
                },
            })
            .collect();
        let model_hints = params["modelPreferences"]["hints"]
            .as_array()
            .map(|hints| {
                hints
                    .iter()
                    .filter_map(|h| h["name"].as_str().map(str::to_string))
                    .filter(|h| !h.trim().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Ok(SamplingPrompt {
            system_prompt: params["systemPrompt"].as_str().map(str::to_string),
            messages,
            max_tokens: params["maxTokens"].as_u64().unwrap_or(1024).clamp(1, 32_000),
            model_hints,
        })
    }
}

impl SamplingPrompt {
    /// The answer of `choice`'s model (or one the hints name): its text and the model.
    pub async fn answer_with(&self, choice: &crate::model::ModelChoice) -> Result<(String, String), String> {
        let max_tokens = u32::try_from(self.max_tokens).unwrap_or(32_000);
        crate::model::sample(
            choice,
            &self.model_hints,
            self.system_prompt.clone(),
            &self.messages,
            max_tokens,
        )
        .await
    }
}

fn content_text(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or("").to_string(),
        Some(kind) => format!(
            "[{kind}{}]",
            block["mimeType"].as_str().map(|m| format!(" {m}")).unwrap_or_default()
        ),
        None => String::new(),
    }
}

/// The `CreateMessageResult` for the model's answer.
pub fn create_message_result(text: &str, model: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn",
    })
}

impl Host {
    /// Runs one server's sampling request to its end (see the module's comment) and answers it.
    pub(crate) async fn serve_sampling(&self, request: SamplingRequest) {
        let SamplingRequest {
            server,
            params,
            respond,
        } = request;
        let answer = self.sample_for(&server, &params).await;
        if let Err(why) = &answer {
            tracing::info!(server, "sampling request not answered: {why}");
        }
        respond.send(answer).ok();
    }

    async fn sample_for(&self, server: &str, params: &Value) -> Result<Value, String> {
        let prompt = SamplingPrompt::read(params)?;
        let samplings = &self.inner.samplings;
        let id = samplings.next.fetch_add(1, Ordering::Relaxed);
        let mut shown = ServerSampling {
            id,
            server: server.to_string(),
            system_prompt: prompt.system_prompt.clone(),
            messages: prompt.messages.clone(),
            max_tokens: prompt.max_tokens,
            model_hints: prompt.model_hints.clone(),
            answer: None,
        };
        let settle = || {
            self.inner
                .outbox
                .send(MAIN_WINDOW, Outbound::SamplingSettled(SamplingSettled { id }));
        };
        let always = self.sampling_always(server);
        if !always {
            match self.ask_sampling(&shown).await {
                Some(SamplingDecision::AllowOnce) => {}
                Some(SamplingDecision::AllowAlways) => self.remember_sampling(server),
                decision => {
                    settle();
                    let why = if decision.is_none() {
                        "nobody answered the sampling request in time"
                    } else {
                        "the person declined the sampling request"
                    };
                    self.audit_sampling(server, "declined", json!({}));
                    return Err(why.into());
                }
            }
        }
        let answered = match self.model_choice() {
            Ok(choice) => prompt.answer_with(&choice).await,
            Err(e) => Err(e.message),
        };
        let (text, model) = match answered {
            Ok(answer) => answer,
            Err(e) => {
                settle();
                self.audit_sampling(server, "error", json!({"error": e}));
                return Err(format!("the model could not answer: {e}"));
            }
        };
        shown.answer = Some(SampledAnswer {
            text: text.clone(),
            model: model.clone(),
        });
        let decision = self.ask_sampling(&shown).await;
        settle();
        if decision != Some(SamplingDecision::Send) {
            self.audit_sampling(server, "refused", json!({"model": model, "always": always}));
            return Err("the person did not send the model's answer".into());
        }
        self.audit_sampling(server, "ok", json!({"model": model, "always": always}));
        Ok(create_message_result(&text, &model))
    }

    /// Shows the request (or its answer) in the window; the person's decision, or `None` when
    /// none came in time.
    async fn ask_sampling(&self, shown: &ServerSampling) -> Option<SamplingDecision> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.inner.samplings.waiting.lock().unwrap().insert(shown.id, tx);
        self.inner.outbox.send(MAIN_WINDOW, Outbound::Sampling(shown.clone()));
        let decision = tokio::time::timeout(SAMPLING_WAIT, rx).await.ok().and_then(Result::ok);
        self.inner.samplings.waiting.lock().unwrap().remove(&shown.id);
        decision
    }

    /// The person's decision on server sampling request `id`.
    pub fn answer_server_sampling(&self, id: u64, decision: SamplingDecision) -> AppResult<()> {
        let waiting = self.inner.samplings.waiting.lock().unwrap().remove(&id);
        let respond = waiting.ok_or_else(|| AppError::not_found("that sampling request is no longer waiting"))?;
        respond
            .send(decision)
            .map_err(|_| AppError::expired("the server stopped waiting for this answer"))
    }

    fn sampling_always(&self, server: &str) -> bool {
        let Ok(store) = self.store() else { return false };
        always_servers(store).iter().any(|s| s == server)
    }

    fn remember_sampling(&self, server: &str) {
        let Ok(store) = self.store() else { return };
        let mut always = store.setting(ALWAYS_SETTING).ok().flatten().unwrap_or(json!([]));
        if let Some(list) = always.as_array_mut()
            && !list.iter().any(|s| s == server)
        {
            list.push(json!(server));
        }
        if let Err(e) = store.set_setting(ALWAYS_SETTING, &always) {
            tracing::error!("cannot remember that {server} may always sample: {e}");
        }
    }

    /// Forgets that `server` may always sample (it was removed).
    pub(crate) fn forget_sampling(&self, server: &str) {
        let Ok(store) = self.store() else { return };
        let mut always = store.setting(ALWAYS_SETTING).ok().flatten().unwrap_or(json!([]));
        if let Some(list) = always.as_array_mut() {
            list.retain(|s| s != server);
        }
        if let Err(e) = store.set_setting(ALWAYS_SETTING, &always) {
            tracing::error!("cannot forget that {server} may always sample: {e}");
        }
    }

    fn audit_sampling(&self, server: &str, outcome: &str, mut detail: Value) {
        detail["outcome"] = json!(outcome);
        detail["from"] = json!("server");
        audit_sampling(self.store().ok(), server, detail);
    }
}

/// The servers whose sampling requests the person allowed always.
pub fn always_servers(store: &porthole_store::Store) -> Vec<String> {
    match store.setting(ALWAYS_SETTING).ok().flatten() {
        Some(Value::Array(items)) => items.into_iter().filter_map(|v| v.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

/// Writes a server's sampling request into the audit log (kind `sampling`).
pub fn audit_sampling(store: Option<&porthole_store::Store>, server: &str, detail: Value) {
    let Some(store) = store else { return };
    let entry = NewAuditEntry {
        kind: AuditKind::Other("sampling".into()),
        conversation_id: None,
        server: Some(server.to_string()),
        tool: None,
        uri: None,
        detail,
    };
    if let Err(e) = store.audit(&entry) {
        tracing::error!("cannot write the audit log: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_as_the_person_is_shown_it() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Summarise"}},
                {"role": "user", "content": [{"type": "text", "text": "this"}, {"type": "image", "mimeType": "image/png", "data": "x"}]},
                {"role": "assistant", "content": {"type": "text", "text": "Sure"}},
            ],
            "systemPrompt": "Be brief.",
            "maxTokens": 100,
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}, {"name": ""}]},
        });
        let prompt = SamplingPrompt::read(&params).unwrap();
        assert_eq!(prompt.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(prompt.max_tokens, 100);
        assert_eq!(prompt.model_hints, ["claude-3-sonnet"]);
        let shown: Vec<(&str, &str)> = prompt
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("user", "Summarise"),
                ("user", "this\n[image image/png]"),
                ("assistant", "Sure")
            ]
        );
        assert!(SamplingPrompt::read(&json!({"messages": []})).is_err());
    }
}
