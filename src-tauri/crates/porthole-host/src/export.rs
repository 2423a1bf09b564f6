//! Exporting a conversation: Markdown for reading (what was said, each tool call with its
//! arguments and what the model got), or JSON with everything the store keeps (to import
//! again). Used by `porthole export` and the window's conversation menu.

use std::fmt::Write as _;
use std::path::Path;

use porthole_store::{ExportedConversation, MessageRole, MessageStatus, Store, ToolCallRecord};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// How a conversation is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// For reading.
    Markdown,
    /// Everything the store keeps, to import again.
    Json,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

/// The conversation `id` of `store`, as `format`.
pub fn export(store: &Store, id: &str, format: ExportFormat) -> anyhow::Result<String> {
    let exported = store.export_conversation(id)?;
    Ok(match format {
        ExportFormat::Json => serde_json::to_string_pretty(&exported)? + "\n",
        ExportFormat::Markdown => markdown(&exported),
    })
}

/// Reads an exported conversation (JSON) and adds it to `store` as a new conversation.
pub fn import(store: &Store, text: &str) -> anyhow::Result<porthole_store::Conversation> {
    let exported: ExportedConversation = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("this is not an exported Porthole conversation (JSON): {e}"))?;
    Ok(store.import_conversation(&exported)?)
}

/// A file name for the export of a conversation titled `title`: its words, safe on every
/// file system.
pub fn file_name(title: &str, format: ExportFormat) -> String {
    let mut name = safe_file_stem(title);
    if name.is_empty() {
        name = "conversation".into();
    }
    format!("{name}.{}", format.extension())
}

/// `title`'s letters, digits, `-` and `_` (other characters as single spaces), at most 80
/// characters: a file name's stem (empty when nothing is left).
pub fn safe_file_stem(title: &str) -> String {
    let mut name: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    name.truncate(name.char_indices().nth(80).map_or(name.len(), |(i, _)| i));
    name
}

/// The text parts of a message's parts, joined.
fn text_of(parts: &Value, kind: &str) -> String {
    parts
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] == kind)
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn block(out: &mut String, lang: &str, text: &str) {
    let f = fence(text);
    let _ = writeln!(out, "{f}{lang}\n{}\n{f}\n", text.trim_end());
}

/// What the model got of a call, in words: its text, and a line for anything else.
fn model_text(call: &ToolCallRecord) -> String {
    let Some(facing) = &call.model_facing else {
        return call.error.clone().unwrap_or_else(|| "(no result)".into());
    };
    facing["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| match c["type"].as_str() {
            Some("text") => c["text"].as_str().unwrap_or_default().to_string(),
            Some("image") => format!("[image, {}]", c["mimeType"].as_str().unwrap_or("?")),
            Some("audio") => format!("[audio, {}]", c["mimeType"].as_str().unwrap_or("?")),
            Some("resource_link") => format!("[resource {}]", c["uri"].as_str().unwrap_or("?")),
            Some("resource") => match c["resource"]["text"].as_str() {
                Some(text) => text.to_string(),
                None => format!("[resource {}]", c["resource"]["uri"].as_str().unwrap_or("?")),
            },
            other => format!("[{}]", other.unwrap_or("content")),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tool_call(out: &mut String, call: &ToolCallRecord) {
    let status = serde_json::to_value(call.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let duration = call.duration_ms.map(|ms| format!(", {ms} ms")).unwrap_or_default();
    let _ = writeln!(
        out,
        "**Tool call** `{}` / `{}` — {status}{duration}\n",
        call.server, call.tool
    );
    block(
        out,
        "json",
        &serde_json::to_string_pretty(&call.arguments).unwrap_or_default(),
    );
    let _ = writeln!(out, "What the model got:\n");
    block(out, "", &model_text(call));
}

/// The conversation for reading: its title, each message (the person's and the model's), each
/// tool call where it was made, with its arguments and what the model got.
pub fn markdown(exported: &ExportedConversation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", exported.conversation.title.trim());
    let _ = writeln!(
        out,
        "_Exported from Porthole: {} messages, {} tool calls._\n",
        exported.messages.len(),
        exported.tool_calls.len()
    );
    let mut shown = std::collections::HashSet::new();
    for message in &exported.messages {
        let calls: Vec<&ToolCallRecord> = exported
            .tool_calls
            .iter()
            .filter(|c| c.message_id == message.id)
            .collect();
        match message.role {
            MessageRole::User => {
                let _ = writeln!(out, "## You\n\n{}\n", text_of(&message.parts, "text").trim());
            }
            MessageRole::Assistant => {
                let text = text_of(&message.parts, "text");
                if !text.trim().is_empty() || message.error.is_some() {
                    let _ = writeln!(out, "## Assistant\n");
                    if !text.trim().is_empty() {
                        let _ = writeln!(out, "{}\n", text.trim());
                    }
                    match message.status {
                        MessageStatus::Interrupted | MessageStatus::Streaming => {
                            let _ = writeln!(out, "_(the reply was cut short)_\n");
                        }
                        _ => {}
                    }
                    if let Some(error) = &message.error {
                        let _ = writeln!(out, "_Error: {error}_\n");
                    }
                }
                for call in calls {
                    shown.insert(call.id);
                    tool_call(&mut out, call);
                }
            }
            // Results are shown with their calls; a tools-panel run has its own empty message.
            MessageRole::Tool => {
                for call in calls {
                    shown.insert(call.id);
                    tool_call(&mut out, call);
                }
            }
        }
    }
    for call in exported.tool_calls.iter().filter(|c| !shown.contains(&c.id)) {
        tool_call(&mut out, call);
    }
    out
}

impl Host {
    /// Exports conversation `id` as `format` to a file the person chooses; returns the file's
    /// path, or `None` when they cancelled.
    pub async fn export_conversation(&self, id: &str, format: ExportFormat) -> AppResult<Option<String>> {
        let conversation = self.existing_conversation(id)?;
        let text = export(self.store()?, id, format).map_err(|e| AppError::invalid(format!("{e:#}")))?;
        let suggested = file_name(&conversation.title, format);
        let Some(path) = self
            .inner
            .desktop
            .save_file("Export the conversation", &suggested)
            .await
        else {
            return Ok(None);
        };
        write_file(&path, &text)?;
        Ok(Some(path.display().to_string()))
    }
}

fn write_file(path: &Path, text: &str) -> AppResult<()> {
    std::fs::write(path, text).map_err(|e| AppError::io(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use porthole_store::{NewToolCall, ToolCallFinish, ToolCallStatus};
    use serde_json::json;

    fn conversation(store: &Store) -> String {
        let id = store.create_conversation("Weather: Paris / Oslo?").unwrap().id;
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        store
            .append_message(
                &id,
                MessageRole::User,
                &text("Weather in Paris?"),
                MessageStatus::Complete,
            )
            .unwrap();
        let asked = store
            .append_message(
                &id,
                MessageRole::Assistant,
                &json!([{"type": "text", "text": "Let me check."}, {"type": "tool_use", "id": "c1", "name": "forecast", "arguments": {"city": "Paris"}}]),
                MessageStatus::Complete,
            )
            .unwrap();
        let call = store
            .insert_tool_call(&NewToolCall {
                conversation_id: id.clone(),
                message_id: asked,
                call_id: "c1".into(),
                server: "weather".into(),
                tool: "forecast".into(),
                arguments: json!({"city": "Paris"}),
                status: ToolCallStatus::Running,
            })
            .unwrap();
        store
            .finish_tool_call(
                call,
                &ToolCallFinish {
                    status: ToolCallStatus::Ok,
                    model_facing: Some(json!({"content": [{"type": "text", "text": "18°C, ```sunny```"}, {"type": "image", "mimeType": "image/png", "data": "AA=="}], "isError": false})),
                    view_facing: Some(json!({"structuredContent": {"c": 18}})),
                    error: None,
                    duration_ms: 42,
                },
            )
            .unwrap();
        store
            .set_widget_state(call, &json!({"selectedDay": "Wednesday"}))
            .unwrap();
        store
            .append_message(
                &id,
                MessageRole::Assistant,
                &text("Sunny, 18°C."),
                MessageStatus::Complete,
            )
            .unwrap();
        id
    }

    #[test]
    fn markdown_reads_as_the_conversation_went() {
        let store = Store::open_in_memory().unwrap();
        let id = conversation(&store);
        let md = export(&store, &id, ExportFormat::Markdown).unwrap();
        let you = md.find("## You\n\nWeather in Paris?").unwrap();
        let check = md.find("Let me check.").unwrap();
        let call = md.find("**Tool call** `weather` / `forecast` — ok, 42 ms").unwrap();
        let answer = md.find("Sunny, 18°C.").unwrap();
        assert!(you < check && check < call && call < answer, "{md}");
        assert!(md.contains("\"city\": \"Paris\""), "{md}");
        // A result with backticks gets a longer fence; an image is named, not dumped.
        assert!(md.contains("````\n18°C, ```sunny```\n[image, image/png]\n````"), "{md}");
        assert!(!md.contains("AA=="));
    }

    #[test]
    fn json_comes_back_whole_as_a_new_conversation() {
        let store = Store::open_in_memory().unwrap();
        let id = conversation(&store);
        let text = export(&store, &id, ExportFormat::Json).unwrap();
        let other = Store::open_in_memory().unwrap();
        let imported = import(&other, &text).unwrap();
        assert_ne!(imported.id, id);
        assert_eq!(imported.title, "Weather: Paris / Oslo?");
        let again = other.export_conversation(&imported.id).unwrap();
        let before: ExportedConversation = serde_json::from_str(&text).unwrap();
        let strip = |e: &ExportedConversation| {
            (
                e.messages
                    .iter()
                    .map(|m| (m.role, m.parts.clone(), m.status, m.created_at))
                    .collect::<Vec<_>>(),
                e.tool_calls
                    .iter()
                    .map(|c| {
                        (
                            c.call_id.clone(),
                            c.status,
                            c.model_facing.clone(),
                            c.view_facing.clone(),
                            c.duration_ms,
                        )
                    })
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(strip(&again), strip(&before));
        // The widget's kept state comes along, on the new call.
        assert_eq!(before.widget_states.len(), 1);
        let call = other.tool_calls(&imported.id).unwrap()[0].id;
        assert_eq!(
            other.widget_state(call).unwrap(),
            Some(json!({"selectedDay": "Wednesday"}))
        );
        // It is searchable like any other.
        assert_eq!(other.search("Paris", 10).unwrap()[0].conversation_id, imported.id);
        // Not an export: a clear refusal, nothing added.
        let refused = import(&other, r#"{"format": "something-else", "version": 1}"#).unwrap_err();
        assert!(
            format!("{refused:#}").contains("not an exported Porthole conversation"),
            "{refused:#}"
        );
        assert_eq!(other.list_conversations().unwrap().len(), 1);
    }

    #[test]
    fn file_names_keep_the_titles_words() {
        assert_eq!(
            file_name("Weather: Paris / Oslo?", ExportFormat::Markdown),
            "Weather Paris Oslo.md"
        );
        assert_eq!(file_name("../../etc", ExportFormat::Json), "etc.json");
        assert_eq!(file_name("???", ExportFormat::Json), "conversation.json");
    }
}
