//! Servers' prompts in the chat: the composer's `/` menu lists every connected server's prompts,
//! the argument form gets suggestions from `completion/complete`, and a chosen prompt's
//! messages become the person's turn (`send_prompt`); `porthole prompt` prints them.

use std::collections::HashMap;

use porthole_agent::{Message, Part, Role};
use porthole_mcp::{Completing, Offer, ServerState};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// One prompt a server offers.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptEntry {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentEntry>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgumentEntry {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// Every connected server's prompts, and the servers that could not list theirs (a line each).
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptList {
    pub prompts: Vec<PromptEntry>,
    pub problems: Vec<String>,
}

/// What an argument being completed belongs to.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum CompletionTarget {
    /// A prompt, by name.
    Prompt { name: String },
    /// A resource template, by its URI template.
    Resource {
        #[serde(rename = "uriTemplate")]
        uri_template: String,
    },
}

/// Suggestions for an argument's value (none when the server offers no completions).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Completions {
    pub values: Vec<String>,
}

/// At most this many suggestions are passed on (the spec caps a server's answer at 100).
const MAX_SUGGESTIONS: usize = 100;

impl Host {
    /// The names of the servers connected now.
    pub(crate) fn connected_servers(&self) -> Vec<String> {
        self.inner
            .servers
            .statuses()
            .into_iter()
            .filter(|s| s.state == ServerState::Connected)
            .map(|s| s.name)
            .collect()
    }

    /// Every connected server's prompts (`prompts/list`), asked of all servers at once.
    pub async fn list_prompts(&self) -> PromptList {
        let servers = &self.inner.servers;
        let asks = self.connected_servers().into_iter().map(|server| async move {
            if !servers.offers(&server, Offer::Prompts).await {
                return (server, Ok(Vec::new()));
            }
            let listed = servers.list_prompts(&server).await;
            (server, listed)
        });
        let mut list = PromptList::default();
        for (server, listed) in futures::future::join_all(asks).await {
            match listed {
                Ok(prompts) => list.prompts.extend(prompts.into_iter().map(|p| {
                    PromptEntry {
                        server: server.clone(),
                        name: p.name,
                        title: p.title,
                        description: p.description,
                        arguments: p
                            .arguments
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| PromptArgumentEntry {
                                name: a.name,
                                title: a.title,
                                description: a.description,
                                required: a.required.unwrap_or(false),
                            })
                            .collect(),
                    }
                })),
                Err(e) => list
                    .problems
                    .push(format!("{server}: its prompts could not be listed: {e}")),
            }
        }
        list
    }

    /// Suggestions from `server` for `argument` (typed so far: `value`) of a prompt or resource
    /// template, knowing the other arguments' values (`context`).
    pub async fn complete_argument(
        &self,
        server: &str,
        target: CompletionTarget,
        argument: &str,
        value: &str,
        context: HashMap<String, String>,
    ) -> AppResult<Completions> {
        let completing = match target {
            CompletionTarget::Prompt { name } => Completing::Prompt(name),
            CompletionTarget::Resource { uri_template } => Completing::Resource(uri_template),
        };
        let mut values = self
            .inner
            .servers
            .complete(server, completing, argument, value, context)
            .await
            .map_err(|e| AppError::server(format!("{server} could not suggest values for {argument}: {e}")))?;
        values.truncate(MAX_SUGGESTIONS);
        Ok(Completions { values })
    }

    /// The person's turn that prompt `name` of `server` makes with `arguments` (`prompts/get`).
    pub async fn prompt_message(
        &self,
        server: &str,
        name: &str,
        arguments: HashMap<String, String>,
    ) -> AppResult<Message> {
        let (_, messages) = self.get_prompt(server, name, arguments).await?;
        let message = prompt_turn(server, &messages);
        if message.parts.is_empty() {
            return Err(AppError::server(format!("prompt {name} of {server} has no messages")));
        }
        Ok(message)
    }

    /// Prompt `name` of `server` with `arguments` (`prompts/get`): its description and its
    /// messages as JSON (`role` and `content` each).
    pub(crate) async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: HashMap<String, String>,
    ) -> AppResult<(Option<String>, Vec<Value>)> {
        let arguments: Map<String, Value> = arguments.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        let result = self
            .inner
            .servers
            .get_prompt(server, name, (!arguments.is_empty()).then_some(arguments))
            .await
            .map_err(|e| AppError::server(format!("{server} could not give prompt {name}: {e}")))?;
        let messages = serde_json::to_value(&result.messages).map_err(|e| AppError::server(e.to_string()))?;
        Ok((result.description, messages.as_array().cloned().unwrap_or_default()))
    }

    /// Sends prompt `name` of `server` as the person's turn in `conversation_id` (a new
    /// conversation when absent); returns the conversation's id once the turn started.
    pub async fn send_prompt(
        &self,
        conversation_id: Option<String>,
        server: &str,
        name: &str,
        arguments: HashMap<String, String>,
    ) -> AppResult<String> {
        let message = self.prompt_message(server, name, arguments).await?;
        self.send(conversation_id, message, None)
    }
}

/// A prompt's messages (`PromptMessage`s as JSON) as one turn of the person's: text as text,
/// images, audio and resources as attachments from `server`. When the prompt speaks as both
/// sides (a worked example, say), each message's text says whose it is, since the whole of it
/// is the person's turn.
pub fn prompt_turn(server: &str, messages: &[Value]) -> Message {
    let role = |m: &Value| m.get("role").and_then(Value::as_str).unwrap_or("user").to_string();
    let both_sides = messages.iter().any(|m| role(m) == "assistant");
    let mut parts = Vec::new();
    let mut texts = 0;
    for message in messages {
        let Some(content) = message.get("content") else {
            continue;
        };
        if content.get("type").and_then(Value::as_str) == Some("text") {
            let text = content.get("text").and_then(Value::as_str).unwrap_or("");
            let mut out = String::new();
            if texts > 0 {
                out.push_str("\n\n");
            }
            if both_sides {
                out.push_str(if role(message) == "assistant" {
                    "Assistant: "
                } else {
                    "User: "
                });
            }
            out.push_str(text);
            texts += 1;
            parts.push(Part::Text { text: out });
        } else {
            parts.push(Part::Attachment {
                server: server.to_string(),
                content: content.clone(),
            });
        }
    }
    Message {
        role: Role::User,
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_prompts_messages_become_one_turn_of_the_persons() {
        let messages = [
            json!({"role": "user", "content": {"type": "text", "text": "Analyse this:"}}),
            json!({"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://a", "text": "A"}}}),
            json!({"role": "user", "content": {"type": "text", "text": "Briefly."}}),
        ];
        let turn = prompt_turn("everything", &messages);
        assert_eq!(turn.role, Role::User);
        assert_eq!(turn.text(), "Analyse this:\n\nBriefly.");
        let attached: Vec<_> = turn.attachments().collect();
        assert_eq!(attached, [("everything", &messages[1]["content"])]);
    }

    #[test]
    fn a_prompt_that_speaks_as_both_sides_says_whose_each_text_is() {
        let messages = [
            json!({"role": "user", "content": {"type": "text", "text": "Hi"}}),
            json!({"role": "assistant", "content": {"type": "text", "text": "Hello"}}),
            json!({"role": "user", "content": {"type": "text", "text": "Go on"}}),
        ];
        assert_eq!(
            prompt_turn("s", &messages).text(),
            "User: Hi\n\nAssistant: Hello\n\nUser: Go on"
        );
    }
}
