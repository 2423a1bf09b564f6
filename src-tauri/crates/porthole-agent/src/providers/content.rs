//! MCP content blocks (a tool result's `content`) as the model APIs can take them: text, images,
//! and for everything else a line saying what it was, so nothing is silently lost.

use serde_json::Value;

/// One MCP content block, reduced to what a model API can carry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Text(String),
    /// An image in a format both APIs accept; `data` is base64.
    Image {
        media_type: String,
        data: String,
    },
}

/// The image formats both APIs accept.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Converts MCP content blocks; text blocks that are empty are dropped.
pub(crate) fn blocks(content: &[Value]) -> Vec<Block> {
    content
        .iter()
        .filter_map(block)
        .filter(|b| !matches!(b, Block::Text(t) if t.is_empty()))
        .collect()
}

/// What the model gets for something the person attached to their message from `server`: an
/// embedded resource's text under a line naming it (so the model knows what it is reading),
/// images as images, and anything else as [`blocks`] gives it.
pub(crate) fn attachment(server: &str, content: &Value) -> Vec<Block> {
    let resource = content
        .get("resource")
        .filter(|_| content.get("type").and_then(Value::as_str) == Some("resource"));
    if let Some(resource) = resource
        && let Some(text) = resource.get("text").and_then(Value::as_str)
    {
        let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
        return vec![Block::Text(format!("[{uri} from {server}]\n{text}"))];
    }
    blocks(std::slice::from_ref(content))
}

fn block(value: &Value) -> Option<Block> {
    let str_field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    Some(match kind {
        "text" => Block::Text(str_field(value, "text")?),
        "image" => image(
            str_field(value, "mimeType").unwrap_or_default(),
            str_field(value, "data").unwrap_or_default(),
            "image",
        ),
        "audio" => Block::Text(format!(
            "[audio {} omitted: the model cannot be sent audio]",
            str_field(value, "mimeType").unwrap_or_else(|| "of unknown type".into())
        )),
        "resource" => {
            let resource = value.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri").unwrap_or_default();
            let mime = str_field(resource, "mimeType");
            if let Some(text) = str_field(resource, "text") {
                Block::Text(text)
            } else if let Some(blob) = str_field(resource, "blob") {
                match mime {
                    Some(mime) if mime.starts_with("image/") => image(mime, blob, &format!("resource {uri}")),
                    mime => Block::Text(format!(
                        "[resource {uri} ({}): binary content not shown]",
                        mime.as_deref().unwrap_or("unknown type")
                    )),
                }
            } else {
                Block::Text(format!("[resource {uri}]"))
            }
        }
        "resource_link" => {
            let uri = str_field(value, "uri").unwrap_or_default();
            let mut line = format!("[resource link: {uri}");
            if let Some(name) = str_field(value, "name").filter(|n| !n.is_empty() && *n != uri) {
                line.push_str(&format!(" ({name})"));
            }
            if let Some(description) = str_field(value, "description").filter(|d| !d.is_empty()) {
                line.push_str(&format!(": {description}"));
            }
            line.push(']');
            Block::Text(line)
        }
        // Unknown to this client: the model gets the JSON rather than nothing.
        _ => Block::Text(value.to_string()),
    })
}

fn image(media_type: String, data: String, what: &str) -> Block {
    let media_type = match media_type.to_ascii_lowercase().as_str() {
        "image/jpg" => "image/jpeg".to_string(),
        other => other.to_string(),
    };
    if IMAGE_TYPES.contains(&media_type.as_str()) && !data.is_empty() {
        Block::Image { media_type, data }
    } else {
        Block::Text(format!(
            "[{what} of type {media_type} omitted: the model cannot be sent that format]"
        ))
    }
}

/// A person's message with a text, an embedded Markdown resource and an image attached, as both
/// providers' tests send it.
#[cfg(test)]
pub(crate) fn message_with_attachments() -> crate::conversation::Message {
    use crate::conversation::{Message, Part, Role};
    use serde_json::json;
    Message {
        role: Role::User,
        parts: vec![
            Part::Text {
                text: "Summarise".into(),
            },
            Part::Attachment {
                server: "docs".into(),
                content: json!({"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}}),
            },
            Part::Attachment {
                server: "docs".into(),
                content: json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_attached_text_resource_is_named_above_its_text() {
        let text = json!({"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"}});
        assert_eq!(
            attachment("docs", &text),
            vec![Block::Text("[file:///a.md from docs]\n# A".into())]
        );
        let image = json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"});
        assert_eq!(
            attachment("docs", &image),
            vec![Block::Image {
                media_type: "image/png".into(),
                data: "iVBOR".into()
            }]
        );
    }

    #[test]
    fn every_block_kind_becomes_text_or_an_image() {
        let content = vec![
            json!({"type": "text", "text": "hello"}),
            json!({"type": "text", "text": ""}),
            json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}),
            json!({"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"}),
            json!({"type": "audio", "data": "UklGR", "mimeType": "audio/wav"}),
            json!({"type": "resource", "resource": {"uri": "file:///a.txt", "text": "file text"}}),
            json!({"type": "resource", "resource": {"uri": "file:///b.jpg", "mimeType": "image/jpg", "blob": "/9j/"}}),
            json!({"type": "resource", "resource": {"uri": "file:///c.bin", "mimeType": "application/zip", "blob": "UEs="}}),
            json!({"type": "resource_link", "uri": "file:///d.md", "name": "d.md", "description": "notes"}),
            json!({"type": "mystery", "x": 1}),
        ];
        assert_eq!(
            blocks(&content),
            vec![
                Block::Text("hello".into()),
                Block::Image {
                    media_type: "image/png".into(),
                    data: "iVBOR".into()
                },
                Block::Text("[image of type image/svg+xml omitted: the model cannot be sent that format]".into()),
                Block::Text("[audio audio/wav omitted: the model cannot be sent audio]".into()),
                Block::Text("file text".into()),
                Block::Image {
                    media_type: "image/jpeg".into(),
                    data: "/9j/".into()
                },
                Block::Text("[resource file:///c.bin (application/zip): binary content not shown]".into()),
                Block::Text("[resource link: file:///d.md (d.md): notes]".into()),
                Block::Text(r#"{"type":"mystery","x":1}"#.into()),
            ]
        );
    }
}
