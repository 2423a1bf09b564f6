//! The tool catalog: every connected server's tools, with their MCP Apps link and visibility,
//! and the names the model sees.
//!
//! - UI link: `_meta.ui.resourceUri`, else the deprecated flat `_meta["ui/resourceUri"]`; the
//!   nested key wins; a value that is not a `ui://` URI is rejected and recorded.
//! - Visibility (`_meta.ui.visibility`): absent means `["model", "app"]`. Handled strictly: a
//!   value that is not an array of strings makes the tool visible to no one; unknown entries are
//!   ignored and recorded; `[]` means no one. A tool without `"model"` is never offered to the model.
//! - OpenAI Apps SDK tools (reference §9): with no `_meta.ui` (nor the flat key), a tool's
//!   `openai/outputTemplate` is its view, written for the Apps SDK (`window.openai`); its
//!   visibility is the model's unless `openai/visibility` is `"private"`, and its view's unless
//!   `openai/widgetAccessible` is not `true`. When both shapes are there, the MCP Apps one wins.
//!   `openai/toolInvocation/invoking` and `invoked` are the card's status lines either way.
//! - Model-facing names are valid for OpenAI and Anthropic (`^[a-zA-Z0-9_-]{1,64}$`). A tool keeps
//!   its own name when that is valid and unique; otherwise it becomes `server__tool`, sanitised and,
//!   when too long or still taken, shortened with a stable hash. No tool is ever dropped for a clash.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// Who a tool is visible to (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    Model,
    App,
}

/// Which host bridge a tool's view speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ViewKind {
    /// The MCP Apps bridge (`ui/*` over `postMessage`).
    #[default]
    McpApp,
    /// The OpenAI Apps SDK's `window.openai` (a skybridge widget).
    Openai,
}

/// What a tool's view is written for, and the status lines the card shows for its calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    pub kind: ViewKind,
    /// Shown while a call runs (`openai/toolInvocation/invoking`).
    pub invoking: Option<String>,
    /// Shown once a call is done (`openai/toolInvocation/invoked`).
    pub invoked: Option<String>,
}

/// One tool of a connected server, as the catalog knows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogTool {
    pub server: String,
    /// The name the server knows the tool by.
    pub name: String,
    /// The name the model is offered; unique across the catalog.
    pub model_name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    /// The `ui://` resource of the tool's view, if it has one.
    pub ui_resource_uri: Option<String>,
    pub visibility: Vec<Audience>,
    /// What the view is written for, and the card's status lines.
    pub widget: Widget,
    /// What was wrong in the tool's `_meta.ui`, if anything.
    pub meta_problems: Vec<String>,
}

impl CatalogTool {
    pub fn visible_to_model(&self) -> bool {
        self.visibility.contains(&Audience::Model)
    }

    pub fn visible_to_app(&self) -> bool {
        self.visibility.contains(&Audience::App)
    }
}

/// What the catalog reads from one tool's `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct UiLink {
    pub resource_uri: Option<String>,
    pub visibility: Vec<Audience>,
    pub widget: Widget,
    pub problems: Vec<String>,
}

/// The tool's Apps SDK status line `key` (`openai/toolInvocation/…`), at most 120 characters.
fn status_line(meta: Option<&serde_json::Map<String, Value>>, key: &str) -> Option<String> {
    let line = meta?.get(key)?.as_str()?.trim();
    (!line.is_empty()).then(|| line.chars().take(120).collect())
}

/// Whether a server is written for the Apps SDK: some tool names a widget the SDK's way
/// (`openai/outputTemplate`) and none uses MCP Apps metadata. Its tools follow the SDK's
/// defaults: a tool is callable from a widget only when it says so (`openai/widgetAccessible`).
pub fn apps_sdk_server<'a>(metas: impl Iterator<Item = Option<&'a serde_json::Map<String, Value>>> + Clone) -> bool {
    let has = |key: &str| metas.clone().flatten().any(|m| m.contains_key(key));
    has("openai/outputTemplate") && !has("ui") && !has("ui/resourceUri")
}

/// [`read_ui_meta`] for a tool of a server written for the Apps SDK (see [`apps_sdk_server`])
/// when `sdk_server`.
pub fn read_tool_meta(meta: Option<&serde_json::Map<String, Value>>, sdk_server: bool) -> UiLink {
    let plain = meta.is_none_or(|m| {
        !m.keys()
            .any(|k| k == "ui" || k == "ui/resourceUri" || k.starts_with("openai/"))
    });
    if sdk_server && plain {
        // The SDK's defaults: offered to the model, not callable from a widget.
        let mut link = read_ui_meta(meta);
        link.visibility = vec![Audience::Model];
        return link;
    }
    read_ui_meta(meta)
}

pub fn read_ui_meta(meta: Option<&serde_json::Map<String, Value>>) -> UiLink {
    let mut link = read_mcp_apps_meta(meta);
    link.widget.invoking = status_line(meta, "openai/toolInvocation/invoking");
    link.widget.invoked = status_line(meta, "openai/toolInvocation/invoked");
    let mcp_apps_shape = meta.is_some_and(|m| m.contains_key("ui") || m.contains_key("ui/resourceUri"));
    let sdk_shape = meta.is_some_and(|m| {
        ["openai/outputTemplate", "openai/visibility", "openai/widgetAccessible"]
            .iter()
            .any(|k| m.contains_key(*k))
    });
    let (Some(meta), true, false) = (meta, sdk_shape, mcp_apps_shape) else {
        return link;
    };
    // An Apps SDK tool: its template (if any) is its view, and its visibility is read the
    // SDK's way (a widget's helper tools are often private and have no template).
    match meta.get("openai/outputTemplate") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.starts_with("ui://") && s.len() > "ui://".len() => {
            link.resource_uri = Some(s.clone());
            link.widget.kind = ViewKind::Openai;
        }
        Some(other) => link.problems.push(format!(
            "openai/outputTemplate {other} is not a ui:// URI; the view is ignored"
        )),
    }
    let mut visibility = Vec::new();
    match meta.get("openai/visibility") {
        Some(Value::String(v)) if v == "private" => {}
        None | Some(Value::Null) => visibility.push(Audience::Model),
        Some(Value::String(v)) if v == "public" => visibility.push(Audience::Model),
        Some(other) => {
            link.problems.push(format!(
                "openai/visibility {other} is not \"public\" or \"private\"; public"
            ));
            visibility.push(Audience::Model);
        }
    }
    if meta.get("openai/widgetAccessible") == Some(&Value::Bool(true)) {
        visibility.push(Audience::App);
    }
    link.visibility = visibility;
    link
}

fn read_mcp_apps_meta(meta: Option<&serde_json::Map<String, Value>>) -> UiLink {
    let mut problems = Vec::new();
    let ui = meta.and_then(|m| m.get("ui"));
    let nested = ui.and_then(|u| u.get("resourceUri"));
    let flat = meta.and_then(|m| m.get("ui/resourceUri"));
    let resource_uri = match nested.or(flat) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.starts_with("ui://") && s.len() > "ui://".len() => Some(s.clone()),
        Some(other) => {
            problems.push(format!("resourceUri {other} is not a ui:// URI; the view is ignored"));
            None
        }
    };
    let visibility = match ui.and_then(|u| u.get("visibility")) {
        None | Some(Value::Null) => vec![Audience::Model, Audience::App],
        Some(Value::Array(items)) => {
            let mut seen = Vec::new();
            let mut malformed = false;
            for item in items {
                match item.as_str() {
                    Some("model") if !seen.contains(&Audience::Model) => seen.push(Audience::Model),
                    Some("app") if !seen.contains(&Audience::App) => seen.push(Audience::App),
                    Some("model" | "app") => {}
                    Some(other) => problems.push(format!("unknown visibility {other:?} ignored")),
                    None => malformed = true,
                }
            }
            if malformed {
                problems.push("visibility has a non-string entry; the tool is hidden from everyone".into());
                Vec::new()
            } else {
                seen
            }
        }
        Some(other) => {
            problems.push(format!(
                "visibility {other} is not an array; the tool is hidden from everyone"
            ));
            Vec::new()
        }
    };
    UiLink {
        resource_uri,
        visibility,
        widget: Widget::default(),
        problems,
    }
}

const MAX_NAME: usize = 64;

fn valid_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn sanitise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a: stable across runs and platforms, unlike `DefaultHasher`.
fn stable_hash(s: &str) -> u32 {
    s.bytes()
        .fold(0x811c9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x01000193))
}

fn shorten(candidate: String, key: &str) -> String {
    if candidate.len() <= MAX_NAME {
        return candidate;
    }
    let suffix = format!("_{:08x}", stable_hash(key));
    let mut head = candidate;
    head.truncate(MAX_NAME - suffix.len());
    head + &suffix
}

/// Gives every `(server, tool)` pair a unique model-facing name. Deterministic: the same servers
/// and tools give the same names whatever order they connected in.
pub fn assign_model_names(tools: &mut [CatalogTool]) {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tools.iter() {
        *count.entry(t.name.as_str()).or_default() += 1;
    }
    let plain: HashSet<String> = tools
        .iter()
        .filter(|t| count[t.name.as_str()] == 1 && valid_model_name(&t.name))
        .map(|t| t.name.clone())
        .collect();
    let mut order: Vec<usize> = (0..tools.len()).collect();
    order.sort_by(|&a, &b| (&tools[a].server, &tools[a].name).cmp(&(&tools[b].server, &tools[b].name)));
    let mut taken: HashSet<String> = plain.clone();
    for i in order {
        let t = &tools[i];
        if plain.contains(&t.name) {
            tools[i].model_name = t.name.clone();
            continue;
        }
        let key = format!("{}\u{0}{}", t.server, t.name);
        let mut name = shorten(format!("{}__{}", sanitise(&t.server), sanitise(&t.name)), &key);
        let mut n = 2;
        while taken.contains(&name) {
            name = shorten(format!("{}__{}_{n}", sanitise(&t.server), sanitise(&t.name)), &key);
            n += 1;
        }
        taken.insert(name.clone());
        tools[i].model_name = name;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn nested_uri_wins_over_flat_and_non_ui_is_rejected() {
        let link = read_ui_meta(Some(&meta(
            json!({"ui": {"resourceUri": "ui://a/x.html"}, "ui/resourceUri": "ui://b/y.html"}),
        )));
        assert_eq!(link.resource_uri.as_deref(), Some("ui://a/x.html"));
        let flat = read_ui_meta(Some(&meta(json!({"ui/resourceUri": "ui://b/y.html"}))));
        assert_eq!(flat.resource_uri.as_deref(), Some("ui://b/y.html"));
        let bad = read_ui_meta(Some(&meta(
            json!({"ui": {"resourceUri": "https://evil.example/x.html"}}),
        )));
        assert_eq!(bad.resource_uri, None);
        assert_eq!(bad.problems.len(), 1);
    }

    #[test]
    fn visibility_is_strict() {
        let default = read_ui_meta(None);
        assert_eq!(default.visibility, vec![Audience::Model, Audience::App]);
        let app_only = read_ui_meta(Some(&meta(json!({"ui": {"visibility": ["app"]}}))));
        assert_eq!(app_only.visibility, vec![Audience::App]);
        let none = read_ui_meta(Some(&meta(json!({"ui": {"visibility": []}}))));
        assert!(none.visibility.is_empty());
        let unknown = read_ui_meta(Some(&meta(json!({"ui": {"visibility": ["model", "widget"]}}))));
        assert_eq!(unknown.visibility, vec![Audience::Model]);
        assert_eq!(unknown.problems.len(), 1);
        let malformed = read_ui_meta(Some(&meta(json!({"ui": {"visibility": "model"}}))));
        assert!(malformed.visibility.is_empty());
        let mixed = read_ui_meta(Some(&meta(json!({"ui": {"visibility": ["model", 3]}}))));
        assert!(mixed.visibility.is_empty());
    }

    fn tool(server: &str, name: &str) -> CatalogTool {
        CatalogTool {
            server: server.into(),
            name: name.into(),
            model_name: String::new(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            ui_resource_uri: None,
            visibility: vec![Audience::Model, Audience::App],
            widget: Widget::default(),
            meta_problems: vec![],
        }
    }

    #[test]
    fn an_apps_sdk_tool_gets_its_template_as_a_view_unless_mcp_apps_metadata_is_there() {
        let sdk = read_ui_meta(Some(&meta(json!({
            "openai/outputTemplate": "ui://widget/pizza.html",
            "openai/widgetAccessible": true,
            "openai/toolInvocation/invoking": "Baking a pizza",
            "openai/toolInvocation/invoked": "Served a pizza",
        }))));
        assert_eq!(sdk.resource_uri.as_deref(), Some("ui://widget/pizza.html"));
        assert_eq!(sdk.widget.kind, ViewKind::Openai);
        assert_eq!(sdk.visibility, vec![Audience::Model, Audience::App]);
        assert_eq!(sdk.widget.invoking.as_deref(), Some("Baking a pizza"));
        assert_eq!(sdk.widget.invoked.as_deref(), Some("Served a pizza"));
        // Not callable from its widget unless it says so; private: not offered to the model.
        let private = read_ui_meta(Some(&meta(
            json!({"openai/outputTemplate": "ui://widget/a.html", "openai/visibility": "private"}),
        )));
        assert!(private.visibility.is_empty());
        // A widget's helper tool: no template of its own, private, callable from the widget.
        let helper = read_ui_meta(Some(&meta(
            json!({"openai/visibility": "private", "openai/widgetAccessible": true}),
        )));
        assert_eq!(helper.resource_uri, None);
        assert_eq!(helper.visibility, vec![Audience::App]);
        let private_accessible = read_ui_meta(Some(&meta(json!({
            "openai/outputTemplate": "ui://widget/a.html", "openai/visibility": "private", "openai/widgetAccessible": true
        }))));
        assert_eq!(private_accessible.visibility, vec![Audience::App]);
        // A tool with no metadata of a server written for the SDK follows the SDK's defaults.
        let sdk_tools = [
            meta(json!({"openai/outputTemplate": "ui://widget/a.html"})),
            meta(json!({})),
        ];
        assert!(apps_sdk_server(sdk_tools.iter().map(Some)));
        assert_eq!(
            read_tool_meta(Some(&sdk_tools[1]), true).visibility,
            vec![Audience::Model]
        );
        assert_eq!(
            read_tool_meta(None, false).visibility,
            vec![Audience::Model, Audience::App]
        );
        let mixed = [
            meta(json!({"openai/outputTemplate": "ui://widget/a.html"})),
            meta(json!({"ui": {"resourceUri": "ui://b"}})),
        ];
        assert!(!apps_sdk_server(mixed.iter().map(Some)));
        // Both shapes: the MCP Apps one wins, the status lines still show.
        let both = read_ui_meta(Some(&meta(json!({
            "ui": {"resourceUri": "ui://apps/view.html", "visibility": ["model"]},
            "openai/outputTemplate": "ui://widget/view.html",
            "openai/toolInvocation/invoking": "Working",
        }))));
        assert_eq!(both.resource_uri.as_deref(), Some("ui://apps/view.html"));
        assert_eq!(both.widget.kind, ViewKind::McpApp);
        assert_eq!(both.visibility, vec![Audience::Model]);
        assert_eq!(both.widget.invoking.as_deref(), Some("Working"));
        let bad = read_ui_meta(Some(&meta(
            json!({"openai/outputTemplate": "https://x.example/w.html"}),
        )));
        assert_eq!(bad.resource_uri, None);
        assert_eq!(bad.problems.len(), 1);
    }

    #[test]
    fn collisions_are_namespaced_and_nothing_is_dropped() {
        let long = "x".repeat(80);
        let mut tools = vec![
            tool("b", "search"),
            tool("a", "search"),
            tool("a", "echo"),
            tool("weird server", "do.thing"),
            tool("s", &long),
        ];
        assign_model_names(&mut tools);
        let names: Vec<_> = tools.iter().map(|t| t.model_name.as_str()).collect();
        assert_eq!(
            &names[..4],
            ["b__search", "a__search", "echo", "weird_server__do_thing"]
        );
        assert_eq!(names[4].len(), 64);
        assert!(names.iter().all(|n| valid_model_name(n)));
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());

        // Same input in another order gives the same names.
        let mut again = vec![
            tools[4].clone(),
            tools[3].clone(),
            tools[2].clone(),
            tools[1].clone(),
            tools[0].clone(),
        ];
        assign_model_names(&mut again);
        let mut a: Vec<_> = tools
            .iter()
            .map(|t| (t.server.clone(), t.name.clone(), t.model_name.clone()))
            .collect();
        let mut b: Vec<_> = again
            .iter()
            .map(|t| (t.server.clone(), t.name.clone(), t.model_name.clone()))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    #[test]
    fn a_namespaced_name_never_steals_a_plain_one() {
        // "a__b" is a real tool name on server z; server a's tool b must not also become "a__b".
        let mut tools = vec![tool("z", "a__b"), tool("a", "b"), tool("c", "b")];
        assign_model_names(&mut tools);
        assert_eq!(tools[0].model_name, "a__b");
        assert_eq!(tools[1].model_name, "a__b_2");
        assert_eq!(tools[2].model_name, "c__b");
    }
}
