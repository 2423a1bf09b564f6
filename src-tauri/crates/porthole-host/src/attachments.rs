//! Servers' resources as context: the composer's `@` picker (and its attach button) lists every
//! connected server's resources and resource templates; an attached resource is read, checked
//! (text, or an image a model can take; not too large) and sent with the person's message, which
//! keeps it: it survives reopening, retry and edit. `porthole resource read` prints one.

use std::collections::HashMap;

use base64::Engine;
use porthole_agent::Part;
use porthole_mcp::{Offer, uri_template};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// One resource a server lists.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceEntry {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// One resource template a server lists, with the variables its URI asks for.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TemplateEntry {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub variables: Vec<String>,
}

/// Every connected server's resources and templates, and the servers that could not list
/// theirs (a line each).
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceList {
    pub resources: Vec<ResourceEntry>,
    pub templates: Vec<TemplateEntry>,
    pub problems: Vec<String>,
}

/// A resource to attach: `uri`, or a template and its variables' values.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentRef {
    pub server: String,
    pub uri: String,
}

/// An attachment as its chip shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentInfo {
    pub server: String,
    pub uri: String,
    pub mime_type: Option<String>,
    /// Its size in bytes (text as UTF-8, images decoded).
    #[ts(type = "number")]
    pub size: u64,
}

/// The most text one attachment may carry.
pub const MAX_ATTACHED_TEXT: usize = 1024 * 1024;
/// The largest image one attachment may carry (what the model APIs take).
pub const MAX_ATTACHED_IMAGE: usize = 5 * 1024 * 1024;
/// The image types both model APIs take.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

impl Host {
    /// Every connected server's resources and resource templates, asked of all servers at once.
    pub async fn list_attachable(&self) -> ResourceList {
        let servers = &self.inner.servers;
        let asks = self.connected_servers().into_iter().map(|server| async move {
            if !servers.offers(&server, Offer::Resources).await {
                return (server, Ok((Vec::new(), Vec::new())));
            }
            let (resources, templates) = futures::join!(
                servers.list_resources(&server),
                servers.list_resource_templates(&server)
            );
            // A server with resources but no templates may answer the second with an error.
            (server, resources.map(|r| (r, templates.unwrap_or_default())))
        });
        let mut list = ResourceList::default();
        for (server, listed) in futures::future::join_all(asks).await {
            match listed {
                Ok((resources, templates)) => {
                    list.resources.extend(resources.into_iter().map(|r| ResourceEntry {
                        server: server.clone(),
                        uri: r.uri.clone(),
                        name: r.name.clone(),
                        title: r.title.clone(),
                        description: r.description.clone(),
                        mime_type: r.mime_type.clone(),
                    }));
                    list.templates.extend(templates.into_iter().map(|t| TemplateEntry {
                        server: server.clone(),
                        variables: uri_template::variables(&t.uri_template),
                        uri_template: t.uri_template.clone(),
                        name: t.name.clone(),
                        title: t.title.clone(),
                        description: t.description.clone(),
                        mime_type: t.mime_type.clone(),
                    }));
                }
                Err(e) => list
                    .problems
                    .push(format!("{server}: its resources could not be listed: {e}")),
            }
        }
        list
    }

    /// The URI template `uri_template` makes with `values`.
    pub fn template_uri(&self, uri_template: &str, values: &HashMap<String, String>) -> String {
        uri_template::expand(uri_template, values)
    }

    /// Reads resource `uri` of `server` and checks it can go to the model, as the composer
    /// attaches it: what its chip shows, or why it cannot be attached.
    pub async fn attach_resource(&self, server: &str, uri: &str) -> AppResult<AttachmentInfo> {
        let parts = self.attachment_parts(server, uri).await?;
        let mut size = 0u64;
        let mut mime_type = None;
        for part in &parts {
            if let Part::Attachment { content, .. } = part {
                size += attachment_size(content);
                mime_type = mime_type.or_else(|| {
                    content["resource"]["mimeType"]
                        .as_str()
                        .or(content["mimeType"].as_str())
                        .map(str::to_string)
                });
            }
        }
        Ok(AttachmentInfo {
            server: server.to_string(),
            uri: uri.to_string(),
            mime_type,
            size,
        })
    }

    /// The parts resource `uri` of `server` adds to a message: one attachment per content of
    /// it (text resources; images of a type the model APIs take; text sent as a blob becomes
    /// text). Anything else is refused, with why.
    pub(crate) async fn attachment_parts(&self, server: &str, uri: &str) -> AppResult<Vec<Part>> {
        let read = self
            .inner
            .servers
            .read_resource(server, uri)
            .await
            .map_err(|e| AppError::server(format!("{server} could not read {uri}: {e}")))?;
        let value = serde_json::to_value(read).map_err(|e| AppError::server(e.to_string()))?;
        let contents = value
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if contents.is_empty() {
            return Err(AppError::invalid(format!(
                "{uri} is empty: {server} gave no contents for it"
            )));
        }
        contents
            .into_iter()
            .map(|item| {
                Ok(Part::Attachment {
                    server: server.to_string(),
                    content: json!({"type": "resource", "resource": checked_content(uri, item)?}),
                })
            })
            .collect()
    }

    /// The parts every attachment of a message adds, in order.
    pub(crate) async fn attachments_of(&self, attachments: &[AttachmentRef]) -> AppResult<Vec<Part>> {
        let reads = attachments.iter().map(|a| self.attachment_parts(&a.server, &a.uri));
        let mut parts = Vec::new();
        for read in futures::future::join_all(reads).await {
            parts.extend(read?);
        }
        Ok(parts)
    }
}

/// One content of a resource, as it may be attached: text within [`MAX_ATTACHED_TEXT`]; a blob
/// that is UTF-8 text of a `text/*` (or JSON, XML) type, as text; an image the model APIs take,
/// within [`MAX_ATTACHED_IMAGE`]. Anything else is refused, with why.
fn checked_content(uri: &str, mut item: Value) -> AppResult<Value> {
    let mime = item
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let named = item.get("uri").and_then(Value::as_str).unwrap_or(uri).to_string();
    if let Some(text) = item.get("text").and_then(Value::as_str) {
        return too_large(&named, text.len(), MAX_ATTACHED_TEXT).map(|_| item);
    }
    let Some(blob) = item.get("blob").and_then(Value::as_str) else {
        return Err(AppError::invalid(format!("{named} has neither text nor data")));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .map_err(|_| AppError::invalid(format!("{named}: its data is not valid base64")))?;
    let textual = mime.starts_with("text/") || mime.ends_with("json") || mime.ends_with("xml");
    if textual && let Ok(text) = String::from_utf8(bytes.clone()) {
        too_large(&named, text.len(), MAX_ATTACHED_TEXT)?;
        let object = item.as_object_mut().expect("a content is an object");
        object.remove("blob");
        object.insert("text".into(), Value::String(text));
        return Ok(item);
    }
    if IMAGE_TYPES.contains(&mime.as_str()) {
        return too_large(&named, bytes.len(), MAX_ATTACHED_IMAGE).map(|_| item);
    }
    let kind = if mime.is_empty() {
        "of no stated type".to_string()
    } else {
        mime
    };
    Err(AppError::invalid(format!(
        "{named} is binary ({kind}): a model can be sent text and images (PNG, JPEG, GIF, WebP) only"
    )))
}

fn too_large(uri: &str, size: usize, limit: usize) -> AppResult<()> {
    if size <= limit {
        return Ok(());
    }
    Err(AppError::invalid(format!(
        "{uri} is too large to attach: {} (at most {})",
        size_words(size),
        size_words(limit)
    )))
}

/// A size in words: "512 bytes", "12.5 KB", "1.0 MB".
fn size_words(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// An attachment's size: its text's bytes, or its data's decoded bytes.
pub(crate) fn attachment_size(content: &Value) -> u64 {
    let resource = content.get("resource").unwrap_or(content);
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return text.len() as u64;
    }
    let data = resource
        .get("blob")
        .or(resource.get("data"))
        .and_then(Value::as_str)
        .unwrap_or("");
    (data.trim_end_matches('=').len() * 3 / 4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_images_may_be_attached() {
        let text = json!({"uri": "demo://a", "mimeType": "text/plain", "text": "A"});
        assert_eq!(checked_content("demo://a", text.clone()).unwrap(), text);
        let png = json!({"uri": "demo://p", "mimeType": "image/png", "blob": "iVBORw0KGgo="});
        assert_eq!(checked_content("demo://p", png.clone()).unwrap(), png);
    }

    #[test]
    fn text_sent_as_a_blob_is_attached_as_text() {
        let blob = json!({"uri": "demo://b", "mimeType": "text/plain", "blob": "UmVzb3VyY2UgMQ=="});
        assert_eq!(
            checked_content("demo://b", blob).unwrap(),
            json!({"uri": "demo://b", "mimeType": "text/plain", "text": "Resource 1"})
        );
    }

    #[test]
    fn binary_and_oversized_contents_are_refused_with_why() {
        let pdf = json!({"uri": "demo://r.pdf", "mimeType": "application/pdf", "blob": "JVBERi0="});
        let e = checked_content("demo://r.pdf", pdf).unwrap_err();
        assert_eq!(
            e.message,
            "demo://r.pdf is binary (application/pdf): a model can be sent text and images (PNG, JPEG, GIF, WebP) only"
        );
        let big = json!({"uri": "demo://big", "text": "x".repeat(MAX_ATTACHED_TEXT + 1)});
        let e = checked_content("demo://big", big).unwrap_err();
        assert!(
            e.message.starts_with("demo://big is too large to attach: 1.0 MB"),
            "{}",
            e.message
        );
    }
}
