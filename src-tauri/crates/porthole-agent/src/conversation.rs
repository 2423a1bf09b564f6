//! The provider-neutral conversation: what is stored, replayed and converted to each provider's
//! wire format at the boundary. It keeps everything any provider needs sent back (reasoning
//! text and signatures, redacted reasoning, tool-call ids) and the tool results exactly as the
//! model is meant to see them (MCP content blocks).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// Tool results, answering the assistant message before them.
    Tool,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    /// Reasoning ("thinking") the model emitted. `signature` is Anthropic's and must go back
    /// byte for byte; `field` is the OpenAI-compatible field it came in (`reasoning_content` or
    /// `reasoning`), so it is returned the same way.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        signature: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        field: Option<String>,
    },
    /// Anthropic's `redacted_thinking`: opaque, sent back unchanged.
    RedactedReasoning {
        data: String,
    },
    /// A tool call the model asked for. `name` is the model-facing tool name; `arguments` is
    /// the parsed JSON (an object), or, if the model sent invalid JSON, the raw string.
    ToolUse {
        id: String,
        name: String,
        arguments: Value,
    },
    /// Content from a server the person put in their message: a resource they attached, or a
    /// prompt's image, audio or embedded resource. `content` is one MCP content block (a text
    /// resource is `{"type": "resource", "resource": {"uri", "mimeType", "text"}}`), kept as the
    /// server sent it.
    Attachment {
        server: String,
        content: Value,
    },
    /// What the model gets back for one tool call: MCP content blocks exactly as the server
    /// returned them (plus at most a host note, see `agent::view_note`), and `isError`.
    ToolResult {
        tool_use_id: String,
        content: Vec<Value>,
        is_error: bool,
    },
}

/// One message of a conversation, in the format the store keeps and the window gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// The message's plain text (its text parts, joined).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let Part::Text { text } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// The message's attachments: (server, MCP content block).
    pub fn attachments(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.parts.iter().filter_map(|p| match p {
            Part::Attachment { server, content } => Some((server.as_str(), content)),
            _ => None,
        })
    }

    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolUse { id, name, arguments } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The model-facing name (`[a-zA-Z0-9_-]{1,64}`).
    pub name: String,
    pub description: String,
    /// The MCP `inputSchema`, passed through untouched.
    pub input_schema: Value,
}

/// The tokens a reply (or a whole turn) used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_read_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
    }
}
