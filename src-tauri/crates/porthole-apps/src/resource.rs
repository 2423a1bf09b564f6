//! Loading a tool call's view: which `ui://` resource it is, reading it from its server, and the
//! checks the HTML must pass before it is served (reference §1.1, §1.2, §2.1, §2.2, §12.4).
//!
//! A view is refused, with the reason in words, when:
//! - its URI is not `ui://` (the server is not even asked);
//! - the server cannot read it, or returns no contents;
//! - the chosen content item (the one whose `uri` is the requested URI, else the first) is not
//!   `text/html;profile=mcp-app` (parameters, spacing and case tolerated) nor the legacy
//!   `text/html+mcp`;
//! - it has neither `text` nor `blob`, its `blob` is not base64, or the bytes are not UTF-8;
//! - it is larger than [`MAX_VIEW_BYTES`] or empty.
//!
//! Its `_meta.ui` is read from the content item first and from the resource's `resources/list`
//! entry as the fallback, key by key (content wins); each may also be under `meta` (a Python SDK
//! quirk the reference host tolerates; `_meta` wins).

use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::csp::{CspOutcome, build_csp};

/// The largest view accepted, in bytes of HTML (after base64 decoding).
pub const MAX_VIEW_BYTES: usize = 5 * 1024 * 1024;

/// The MIME type of an MCP App view (`text/html;profile=mcp-app`).
pub const MIME: &str = porthole_mcp::MCP_APP_MIME;

/// The MIME type drafts before December 2025 used; still accepted.
pub const LEGACY_MIME: &str = "text/html+mcp";

/// The MIME type of an OpenAI Apps SDK widget (reference §9): a view written for `window.openai`.
pub const SKYBRIDGE_MIME: &str = "text/html+skybridge";

pub use porthole_mcp::ViewKind;

/// The Permission-Policy features a view asks for (`_meta.ui.permissions`). The host may honour
/// them; a view must not assume they are granted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Permissions {
    pub camera: bool,
    pub microphone: bool,
    pub geolocation: bool,
    pub clipboard_write: bool,
}

impl Permissions {
    /// The iframe `allow` value in the SDK's form (`"microphone; clipboard-write"`), empty when
    /// nothing is asked for.
    pub fn allow_attribute(&self) -> String {
        [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboard-write"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join("; ")
    }

    fn features(&self) -> [(bool, &'static str, &'static str); 4] {
        [
            (self.camera, "camera", "camera"),
            (self.microphone, "microphone", "microphone"),
            (self.geolocation, "geolocation", "geolocation"),
            (self.clipboard_write, "clipboardWrite", "clipboard-write"),
        ]
    }

    /// Whether nothing is asked for (or granted).
    pub fn is_empty(&self) -> bool {
        *self == Permissions::default()
    }

    /// What both hold: what a view asked for and its server was granted.
    pub fn and(&self, other: &Permissions) -> Permissions {
        Permissions {
            camera: self.camera && other.camera,
            microphone: self.microphone && other.microphone,
            geolocation: self.geolocation && other.geolocation,
            clipboard_write: self.clipboard_write && other.clipboard_write,
        }
    }

    /// What either holds.
    pub fn or(&self, other: &Permissions) -> Permissions {
        Permissions {
            camera: self.camera || other.camera,
            microphone: self.microphone || other.microphone,
            geolocation: self.geolocation || other.geolocation,
            clipboard_write: self.clipboard_write || other.clipboard_write,
        }
    }

    /// What this holds and `other` does not.
    pub fn without(&self, other: &Permissions) -> Permissions {
        Permissions {
            camera: self.camera && !other.camera,
            microphone: self.microphone && !other.microphone,
            geolocation: self.geolocation && !other.geolocation,
            clipboard_write: self.clipboard_write && !other.clipboard_write,
        }
    }

    /// The spec's shape (`McpUiResourcePermissions`): `{"camera": {}, "clipboardWrite": {}}`.
    pub fn to_spec(&self) -> Value {
        Value::Object(
            self.features()
                .iter()
                .filter(|(on, _, _)| *on)
                .map(|(_, name, _)| (name.to_string(), Value::Object(Default::default())))
                .collect(),
        )
    }

    /// The Permission-Policy feature names (`camera`, `clipboard-write`), in a fixed order.
    pub fn feature_names(&self) -> Vec<String> {
        self.features()
            .iter()
            .filter(|(on, _, _)| *on)
            .map(|(_, _, feature)| feature.to_string())
            .collect()
    }
}

/// A view that passed every check, ready to be served.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedView {
    /// The `ui://` URI that was requested.
    pub uri: String,
    /// Shared: the cache and every view showing it hold this one copy (an SDK-built view is
    /// ~600 KB; 50 of its views held 30 MB of copies, BENCHMARKS.md).
    pub html: Arc<str>,
    /// SHA-256 of the HTML's UTF-8 bytes, lowercase hex.
    pub sha256: String,
    pub csp: CspOutcome,
    pub permissions: Permissions,
    pub prefers_border: Option<bool>,
    /// The dedicated origin the view asks for; kept for information only (views are always
    /// served on Porthole's own per-view origin).
    pub domain: Option<String>,
    /// The effective `_meta.ui` (content item over listing; for a resource with none, its
    /// Apps SDK keys in MCP Apps terms); `{}` when there is none.
    pub meta: Value,
    /// What the view speaks: the MCP Apps bridge, or `window.openai` (a `text/html+skybridge`
    /// resource).
    pub kind: ViewKind,
    /// What was wrong in the metadata but did not stop the view (ignored values).
    pub problems: Vec<String>,
}

/// Why a view is not shown, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refusal {
    pub reason: String,
}

impl Refusal {
    fn new(reason: impl Into<String>) -> Refusal {
        Refusal { reason: reason.into() }
    }
}

fn is_ui_uri(uri: &str) -> bool {
    uri.len() > "ui://".len() && uri.starts_with("ui://") && !uri.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The view of one tool call: the tool's `ui://` resource, unless the call's result names
/// another `ui://` resource in `structuredContent.resourceUri` (anything else there is ignored).
/// A tool without a view of its own gets none, whatever its result says: only tools that
/// declare a view (and so only servers told about MCP Apps) ever get one.
pub fn view_uri(tool_ui_resource_uri: Option<&str>, result: Option<&Value>) -> Option<String> {
    let tool = tool_ui_resource_uri.filter(|u| is_ui_uri(u))?;
    let from_result = result
        .and_then(|r| r.get("structuredContent"))
        .and_then(|s| s.get("resourceUri"))
        .and_then(Value::as_str)
        .filter(|u| is_ui_uri(u));
    Some(from_result.unwrap_or(tool).to_string())
}

/// Whether a MIME type is the MCP App profile (`text/html` with `profile=mcp-app`, other
/// parameters, spacing, quoting and case tolerated) or the legacy `text/html+mcp`.
pub fn is_view_mime(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    let essence = parts.next().unwrap_or_default().to_ascii_lowercase();
    if essence == LEGACY_MIME {
        return true;
    }
    essence == "text/html"
        && parts.any(|p| {
            p.split_once('=').is_some_and(|(name, value)| {
                let value = value.trim();
                let value = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(value);
                name.trim().eq_ignore_ascii_case("profile") && value.eq_ignore_ascii_case("mcp-app")
            })
        })
}

/// The `ui` object of a `_meta` (or `meta`) holder, `_meta` first.
fn ui_of<'a>(holder: Option<&'a Value>, what: &str, problems: &mut Vec<String>) -> Option<&'a Map<String, Value>> {
    let holder = holder?;
    for key in ["_meta", "meta"] {
        match holder.get(key).and_then(|m| m.get("ui")) {
            None | Some(Value::Null) => {}
            Some(Value::Object(ui)) => return Some(ui),
            Some(other) => problems.push(format!("the {what}'s {key}.ui is not an object ({other}); ignored")),
        }
    }
    None
}

/// Checks a `resources/read` result (as JSON) for the view `uri`; `listing_meta` is the
/// resource's `_meta` from `resources/list`, when known.
pub fn check_contents(uri: &str, read: &Value, listing_meta: Option<&Value>) -> Result<LoadedView, Refusal> {
    let contents = match read.get("contents") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            return Err(Refusal::new("the server returned no contents for it"));
        }
        Some(_) => return Err(Refusal::new("the server's contents are not a list")),
    };
    let item = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .unwrap_or(&contents[0]);
    if !item.is_object() {
        return Err(Refusal::new("the server's content item is not an object"));
    }
    let kind = match item.get("mimeType").and_then(Value::as_str) {
        Some(mime) if is_view_mime(mime) => ViewKind::McpApp,
        Some(mime) if is_skybridge_mime(mime) => ViewKind::Openai,
        Some(mime) => {
            return Err(Refusal::new(format!(
                "wrong MIME type {mime:?}: a view must be {MIME:?}"
            )));
        }
        None => {
            return Err(Refusal::new(format!(
                "wrong MIME type (none given): a view must be {MIME:?}"
            )));
        }
    };
    let bytes: Vec<u8> = if let Some(text) = item.get("text").and_then(Value::as_str) {
        text.as_bytes().to_vec()
    } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
        let compact: String = blob.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        engine
            .decode(compact.as_bytes())
            .map_err(|e| Refusal::new(format!("its blob is not valid base64: {e}")))?
    } else {
        return Err(Refusal::new("the content has neither text nor a blob"));
    };
    if bytes.len() > MAX_VIEW_BYTES {
        return Err(Refusal::new(format!(
            "the view is {} bytes, over the {MAX_VIEW_BYTES}-byte limit (5 MiB)",
            bytes.len()
        )));
    }
    let html = String::from_utf8(bytes).map_err(|e| {
        Refusal::new(format!(
            "the view is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if html.trim().is_empty() {
        return Err(Refusal::new("the view is empty"));
    }
    let sha256: String = Sha256::digest(html.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();

    let mut problems = Vec::new();
    let listing_holder = listing_meta.map(|m| serde_json::json!({ "_meta": m }));
    let listing_ui = ui_of(listing_holder.as_ref(), "listing", &mut problems);
    let content_ui = ui_of(Some(item), "content", &mut problems);
    let mut ui = listing_ui.cloned().unwrap_or_default();
    if let Some(content) = content_ui {
        for (k, v) in content {
            ui.insert(k.clone(), v.clone());
        }
    }
    if listing_ui.is_none() && content_ui.is_none() {
        // No MCP Apps metadata: the Apps SDK's, if any, in MCP Apps terms (content over listing).
        for holder in [listing_holder.as_ref(), Some(item)].into_iter().flatten() {
            for (k, v) in openai_ui(holder.get("_meta"), &mut problems) {
                ui.insert(k, v);
            }
        }
    }

    let csp = build_csp(ui.get("csp"));
    let permissions = match ui.get("permissions") {
        None | Some(Value::Null) => Permissions::default(),
        Some(Value::Object(p)) => {
            // Each is `{}` in the spec; `true` is tolerated, `false`/`null` mean not asked.
            let asked = |name: &str| matches!(p.get(name), Some(Value::Object(_)) | Some(Value::Bool(true)));
            for name in p.keys() {
                if !["camera", "microphone", "geolocation", "clipboardWrite"].contains(&name.as_str()) {
                    problems.push(format!("unknown permission {name:?} ignored"));
                }
            }
            Permissions {
                camera: asked("camera"),
                microphone: asked("microphone"),
                geolocation: asked("geolocation"),
                clipboard_write: asked("clipboardWrite"),
            }
        }
        Some(other) => {
            problems.push(format!("permissions is not an object ({other}); none granted"));
            Permissions::default()
        }
    };
    let prefers_border = match ui.get("prefersBorder") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            problems.push(format!("prefersBorder is not a boolean ({other}); ignored"));
            None
        }
    };
    let domain = match ui.get("domain") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(other) => {
            problems.push(format!("domain is not a string ({other}); ignored"));
            None
        }
    };
    Ok(LoadedView {
        uri: uri.to_string(),
        html: html.into(),
        sha256,
        csp,
        permissions,
        prefers_border,
        domain,
        meta: Value::Object(ui),
        kind,
        problems,
    })
}

/// Whether a MIME type is the Apps SDK's widget type, `text/html+skybridge` (case and
/// parameters tolerated).
pub fn is_skybridge_mime(mime: &str) -> bool {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case(SKYBRIDGE_MIME)
}

/// A resource's Apps SDK metadata (`openai/widgetCSP` with snake_case lists,
/// `openai/widgetPrefersBorder`, `openai/widgetDomain`, `openai/widgetDescription`) as the
/// `_meta.ui` keys they stand for, so it is checked and audited as MCP Apps metadata is.
/// `redirect_domains` has no MCP Apps counterpart here: links open only after the person agrees.
fn openai_ui(meta: Option<&Value>, problems: &mut Vec<String>) -> Map<String, Value> {
    let mut ui = Map::new();
    let Some(meta) = meta.and_then(Value::as_object) else {
        return ui;
    };
    match meta.get("openai/widgetCSP") {
        None | Some(Value::Null) => {}
        Some(Value::Object(csp)) => {
            let mut mapped = Map::new();
            for (from, to) in [
                ("connect_domains", "connectDomains"),
                ("resource_domains", "resourceDomains"),
                ("frame_domains", "frameDomains"),
            ] {
                if let Some(list) = csp.get(from) {
                    mapped.insert(to.into(), list.clone());
                }
            }
            for key in csp.keys() {
                if ![
                    "connect_domains",
                    "resource_domains",
                    "frame_domains",
                    "redirect_domains",
                ]
                .contains(&key.as_str())
                {
                    problems.push(format!("unknown openai/widgetCSP key {key:?} ignored"));
                }
            }
            ui.insert("csp".into(), Value::Object(mapped));
        }
        Some(other) => problems.push(format!("openai/widgetCSP is not an object ({other}); ignored")),
    }
    for (from, to) in [
        ("openai/widgetPrefersBorder", "prefersBorder"),
        ("openai/widgetDomain", "domain"),
        ("openai/widgetDescription", "description"),
    ] {
        if let Some(value) = meta.get(from).filter(|v| !v.is_null()) {
            ui.insert(to.into(), value.clone());
        }
    }
    ui
}

/// Reads view `uri` from `server` and checks it. The resource's `resources/list` entry, when the
/// server lists it, supplies fallback metadata; a server that cannot list is no reason to refuse.
pub async fn load_view(servers: &porthole_mcp::Servers, server: &str, uri: &str) -> Result<LoadedView, Refusal> {
    if !is_ui_uri(uri) {
        return Err(not_requested(uri));
    }
    let (read, listing) = tokio::join!(servers.read_resource(server, uri), servers.list_resources(server));
    let read = read.map_err(|e| Refusal::new(format!("the server could not read it: {e}")))?;
    let read =
        serde_json::to_value(&read).map_err(|e| Refusal::new(format!("the server's answer could not be read: {e}")))?;
    let listing_meta = match listing {
        Ok(resources) => resources
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .find(|r| r.get("uri").and_then(Value::as_str) == Some(uri))
            .and_then(|r| r.get("_meta").cloned()),
        Err(e) => {
            tracing::debug!(server, "resources/list failed, so no listing metadata for {uri}: {e}");
            None
        }
    };
    checked(server, uri, &read, listing_meta.as_ref())
}

/// Reads and checks a view's HTML that comes another way than a connection of Porthole's (a
/// remote agent's server, through the agent): `read` gives the `ReadResourceResult` JSON or
/// why it could not; the checks are [`load_view`]'s.
pub async fn load_view_from(
    server: &str,
    uri: &str,
    read: impl std::future::Future<Output = Result<Value, String>>,
) -> Result<LoadedView, Refusal> {
    if !is_ui_uri(uri) {
        return Err(not_requested(uri));
    }
    let read = read
        .await
        .map_err(|e| Refusal::new(format!("it could not be read: {e}")))?;
    checked(server, uri, &read, None)
}

fn not_requested(uri: &str) -> Refusal {
    Refusal::new(format!("{uri:?} is not a ui:// URI; it was not requested"))
}

fn checked(server: &str, uri: &str, read: &Value, listing_meta: Option<&Value>) -> Result<LoadedView, Refusal> {
    let view = check_contents(uri, read, listing_meta)?;
    for d in &view.csp.dropped {
        tracing::warn!(server, uri, field = %d.field, entry = %d.entry, "CSP entry dropped: {}", d.reason);
    }
    for p in &view.problems {
        tracing::warn!(server, uri, "view metadata: {p}");
    }
    tracing::info!(server, uri, bytes = view.html.len(), sha256 = %view.sha256, csp = %view.csp.policy, "view loaded");
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const URI: &str = "ui://srv/view.html";
    const HTML: &str = "<!doctype html><html><body>hi</body></html>";

    fn read_text(mime: &str, text: &str) -> Value {
        json!({"contents": [{"uri": URI, "mimeType": mime, "text": text}]})
    }

    #[test]
    fn an_apps_sdk_widget_is_a_view_and_its_metadata_is_read_in_mcp_apps_terms() {
        let read = json!({"contents": [{
            "uri": URI,
            "mimeType": "text/html+skybridge",
            "text": HTML,
            "_meta": {
                "openai/widgetCSP": {
                    "connect_domains": ["https://api.example.com"],
                    "resource_domains": ["https://cdn.example.com", "http://insecure.example"],
                    "redirect_domains": ["https://checkout.example.com"],
                },
                "openai/widgetPrefersBorder": true,
                "openai/widgetDomain": "https://widgets.example.com",
                "openai/widgetDescription": "A pizza map",
            },
        }]});
        let view = check_contents(URI, &read, None).unwrap();
        assert_eq!(view.kind, ViewKind::Openai);
        assert_eq!(view.prefers_border, Some(true));
        assert_eq!(view.domain.as_deref(), Some("https://widgets.example.com"));
        assert_eq!(view.meta["description"], "A pizza map");
        assert!(
            view.csp.policy.contains("connect-src https://api.example.com;"),
            "{}",
            view.csp.policy
        );
        assert!(
            view.csp.policy.contains("https://cdn.example.com"),
            "{}",
            view.csp.policy
        );
        // The same checks as MCP Apps metadata: http:// is dropped, and said so.
        assert!(!view.csp.policy.contains("insecure.example"), "{}", view.csp.policy);
        assert_eq!(view.csp.dropped.len(), 1, "{:?}", view.csp.dropped);

        // Both shapes: `_meta.ui` wins, the Apps SDK's keys are not read.
        let both = json!({"contents": [{
            "uri": URI, "mimeType": MIME, "text": HTML,
            "_meta": {"ui": {"prefersBorder": false}, "openai/widgetPrefersBorder": true,
                      "openai/widgetCSP": {"connect_domains": ["https://api.example.com"]}},
        }]});
        let view = check_contents(URI, &both, None).unwrap();
        assert_eq!(view.kind, ViewKind::McpApp);
        assert_eq!(view.prefers_border, Some(false));
        assert!(!view.csp.policy.contains("api.example.com"), "{}", view.csp.policy);
        assert!(is_skybridge_mime("Text/HTML+Skybridge; charset=utf-8"));
    }

    #[test]
    fn mime_variants() {
        for ok in [
            "text/html;profile=mcp-app",
            "text/html; profile=mcp-app",
            "TEXT/HTML ; Profile=MCP-APP",
            "text/html; charset=utf-8; profile=mcp-app",
            "text/html;profile=\"mcp-app\"",
            "text/html+mcp",
            "Text/HTML+MCP; charset=utf-8",
        ] {
            assert!(is_view_mime(ok), "{ok}");
            assert!(check_contents(URI, &read_text(ok, HTML), None).is_ok(), "{ok}");
        }
        for bad in [
            "text/html",
            "text/plain",
            "text/html;profile=other",
            "text/vnd.mcp.ui+html",
            "application/json; profile=mcp-app",
            "",
        ] {
            assert!(!is_view_mime(bad), "{bad}");
            let err = check_contents(URI, &read_text(bad, HTML), None).unwrap_err();
            assert!(err.reason.starts_with("wrong MIME type"), "{err}");
        }
        let none = json!({"contents": [{"uri": URI, "text": HTML}]});
        assert!(
            check_contents(URI, &none, None)
                .unwrap_err()
                .reason
                .starts_with("wrong MIME type")
        );
    }

    #[test]
    fn what_a_view_asks_for_meets_what_its_server_was_granted() {
        let asked = Permissions {
            camera: true,
            clipboard_write: true,
            ..Permissions::default()
        };
        let granted = Permissions {
            camera: true,
            microphone: true,
            ..Permissions::default()
        };
        let given = asked.and(&granted);
        assert_eq!(
            given,
            Permissions {
                camera: true,
                ..Permissions::default()
            }
        );
        assert_eq!(given.allow_attribute(), "camera");
        assert_eq!(given.to_spec(), json!({"camera": {}}));
        assert_eq!(asked.without(&given).feature_names(), ["clipboard-write"]);
        assert_eq!(
            asked.or(&granted).feature_names(),
            ["camera", "microphone", "clipboard-write"]
        );
        assert!(Permissions::default().is_empty() && Permissions::default().to_spec() == json!({}));
        // Kept as JSON; a field a later version adds or drops is no harm.
        let kept: Permissions = serde_json::from_value(json!({"camera": true, "usb": true})).unwrap();
        assert_eq!(
            kept,
            Permissions {
                camera: true,
                ..Permissions::default()
            }
        );
    }

    #[test]
    fn text_and_its_hash() {
        let view = check_contents(URI, &read_text(MIME, HTML), None).unwrap();
        assert_eq!(&*view.html, HTML);
        assert_eq!(view.uri, URI);
        assert_eq!(view.sha256.len(), 64);
        assert_eq!(view.sha256, format!("{:x}", Sha256::digest(HTML.as_bytes())));
        assert_eq!(view.meta, json!({}));
        assert_eq!(view.permissions, Permissions::default());
        assert_eq!(view.prefers_border, None);
        assert_eq!(view.csp.policy, build_csp(None).policy);
    }
}
