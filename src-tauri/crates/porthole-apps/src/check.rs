//! `porthole check`'s rules: what a server's tools and views get wrong as an MCP Apps host
//! (Porthole, and hosts that follow the spec) sees it. Each finding has a stable rule ID, a
//! severity and a one-line fix. The rules are pure functions of what the server sent (its
//! `tools/list`, `resources/list` and `resources/read` answers, as JSON), so they are tested
//! without a server; `porthole-host` connects, asks and reports.
//!
//! The rules (IDs are a contract: CI jobs filter on them):
//!
//! | rule | severity | what |
//! |---|---|---|
//! | `server-connect` | error | the server could not be connected |
//! | `tool-name` | warning | a name OpenAI or Anthropic would refuse (`^[a-zA-Z0-9_-]{1,64}$`) |
//! | `input-schema` | error / warning | `inputSchema` is not an object schema, or is malformed |
//! | `ui-resource-uri` | error | `_meta.ui.resourceUri` is not a `ui://` URI |
//! | `ui-legacy-key` | warning | the flat `_meta["ui/resourceUri"]` key instead of `_meta.ui.resourceUri` |
//! | `ui-visibility` | error / warning | `_meta.ui.visibility` malformed (error: the tool is hidden from everyone) or has unknown values |
//! | `ui-unknown-key` | warning / info | a key a tool's `_meta.ui` does not take (warning for resource keys such as `csp`) |
//! | `openai-template` | error | `openai/outputTemplate` is not a `ui://` URI |
//! | `openai-mismatch` | warning | the Apps SDK metadata says otherwise than the MCP Apps metadata |
//! | `resource-read` | error | `resources/read` of the view fails |
//! | `resource-contents` | error / warning | no content item, or more than one HTML item |
//! | `resource-mime` | error / warning / info | wrong MIME type; the legacy `text/html+mcp`; an Apps SDK widget |
//! | `resource-size` | error | the HTML is over 5 MiB |
//! | `resource-encoding` | error | no text or blob, a blob that is not base64, not UTF-8, empty |
//! | `csp-entry` | error | a `_meta.ui.csp` entry a host drops (only `https://` origins; the reason is given) |
//! | `permissions-unknown` | warning | a permission hosts do not know |
//! | `resource-meta` | warning | other `_meta.ui` values of the resource that are ignored |
//! | `resource-not-listed` | info | the view is not in `resources/list` (hosts lose its listing metadata) |
//! | `capability-gated` | info | a tool that disappears or changes when the MCP Apps extension is not advertised |
//!
//! The live check ([`check_live`]) loads each UI tool's view in a real, hidden Porthole webview:
//!
//! | rule | severity | what |
//! |---|---|---|
//! | `live-call` | warning | calling the tool with the sample input failed (the view still gets the result) |
//! | `live-load` | error | the view could not be shown (refused, or its frame never loaded) |
//! | `live-initialize` | error / info | the view did not complete `ui/initialize` within the limit (info: the time it took) |
//! | `live-console-error` | warning | the view logged an error (`console.error`), or threw one it did not catch |
//! | `live-csp-violation` | warning | the view tried to load something its CSP refused (the fix names the `_meta.ui.csp` field) |
//! | `live-unsupported` | warning | the view asked for a method a host does not offer (answered -32601) |

use serde::Serialize;
use serde_json::{Map, Value};

use crate::resource::{LEGACY_MIME, MIME, SKYBRIDGE_MIME, check_contents, is_skybridge_mime, is_view_mime};

/// How bad a finding is. Errors fail a check; warnings fail it with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    /// The tool it is about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The `ui://` resource it is about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    pub message: String,
    /// What to change, in one line.
    pub fix: String,
}

impl Finding {
    fn new(rule: &'static str, severity: Severity, message: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            rule,
            severity,
            tool: None,
            resource: None,
            message: message.into(),
            fix: fix.into(),
        }
    }

    fn on_tool(mut self, tool: &str) -> Finding {
        self.tool = Some(tool.to_string());
        self
    }

    fn on_resource(mut self, uri: &str) -> Finding {
        self.resource = Some(uri.to_string());
        self
    }

    /// The server could not be connected.
    pub fn server_connect(error: &str) -> Finding {
        Finding::new(
            "server-connect",
            Severity::Error,
            format!("the server could not be connected: {error}"),
            "run it by hand with the same command, or read its log (porthole keeps it under the profile's logs/servers/)",
        )
    }
}

/// The keys a tool's `_meta.ui` takes.
const TOOL_UI_KEYS: [&str; 2] = ["resourceUri", "visibility"];
/// Keys that belong on the resource's `_meta.ui`, not the tool's.
const RESOURCE_UI_KEYS: [&str; 4] = ["csp", "permissions", "domain", "prefersBorder"];
const SCHEMA_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "object", "array", "null"];

fn name_is_portable(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The findings of one tool (its `tools/list` entry as JSON); `sdk_server`: the server is
/// written for the Apps SDK (see [`porthole_mcp::catalog::apps_sdk_server`]).
pub fn check_tool(tool: &Value, sdk_server: bool) -> Vec<Finding> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    if !name_is_portable(name) {
        out.push(Finding::new(
            "tool-name",
            Severity::Warning,
            format!("the name {name:?} is not one OpenAI and Anthropic accept (letters, digits, _ and -, at most 64); hosts must rename it"),
            "rename the tool to match ^[a-zA-Z0-9_-]{1,64}$",
        ));
    }
    check_input_schema(tool.get("inputSchema"), &mut out);
    let meta = tool.get("_meta").and_then(Value::as_object);
    check_tool_meta(meta, sdk_server, &mut out);
    out.into_iter().map(|f| f.on_tool(name)).collect()
}

fn check_input_schema(schema: Option<&Value>, out: &mut Vec<Finding>) {
    let fix_object = "give the tool an inputSchema of {\"type\": \"object\", \"properties\": {…}}";
    let Some(Value::Object(schema)) = schema else {
        out.push(Finding::new(
            "input-schema",
            Severity::Error,
            "inputSchema is missing or not an object",
            fix_object,
        ));
        return;
    };
    if schema.get("type") != Some(&Value::String("object".into())) {
        out.push(Finding::new(
            "input-schema",
            Severity::Error,
            format!(
                "inputSchema's type is {}, not \"object\"; providers refuse such a tool",
                schema.get("type").map_or("missing".to_string(), Value::to_string)
            ),
            fix_object,
        ));
    }
    let mut problems = Vec::new();
    schema_shape("inputSchema", schema, &mut problems, 0);
    for problem in problems {
        out.push(Finding::new(
            "input-schema",
            Severity::Error,
            problem,
            "make inputSchema valid JSON Schema (draft 2020-12)",
        ));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if !properties.is_some_and(|p| p.contains_key(r)) {
                out.push(Finding::new(
                    "input-schema",
                    Severity::Warning,
                    format!("{r:?} is required but not among the properties"),
                    format!("add {r:?} to properties, or take it out of required"),
                ));
            }
        }
    }
}

/// The structural mistakes of a JSON Schema object (types, `properties`, `required`, `items`),
/// at `path`; not a full validator.
fn schema_shape(path: &str, schema: &Map<String, Value>, problems: &mut Vec<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if SCHEMA_TYPES.contains(&t.as_str()) => {}
        Some(Value::Array(ts)) if ts.iter().all(|t| t.as_str().is_some_and(|t| SCHEMA_TYPES.contains(&t))) => {}
        Some(other) => problems.push(format!("{path}.type {other} is not a JSON Schema type")),
    }
    match schema.get("properties") {
        None => {}
        Some(Value::Object(props)) => {
            for (key, sub) in props {
                let sub_path = format!("{path}.properties.{key}");
                match sub {
                    Value::Object(sub) => schema_shape(&sub_path, sub, problems, depth + 1),
                    Value::Bool(_) => {}
                    other => problems.push(format!("{sub_path} is {other}, not a schema")),
                }
            }
        }
        Some(other) => problems.push(format!("{path}.properties is {other}, not an object")),
    }
    match schema.get("required") {
        None => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {}
        Some(other) => problems.push(format!("{path}.required is {other}, not an array of names")),
    }
    match schema.get("items") {
        None | Some(Value::Bool(_)) => {}
        Some(Value::Object(sub)) => schema_shape(&format!("{path}.items"), sub, problems, depth + 1),
        Some(other) => problems.push(format!("{path}.items is {other}, not a schema")),
    }
}

fn check_tool_meta(meta: Option<&Map<String, Value>>, sdk_server: bool, out: &mut Vec<Finding>) {
    let Some(meta) = meta else { return };
    let ui = meta.get("ui").and_then(Value::as_object);
    let nested = ui.and_then(|u| u.get("resourceUri"));
    // Both keys with the same value is what the official SDK writes, for older hosts: fine.
    if let Some(flat) = meta.get("ui/resourceUri") {
        let message = match nested {
            Some(n) if n != flat => Some(format!(
                "both _meta.ui.resourceUri ({n}) and the legacy _meta[\"ui/resourceUri\"] ({flat}), and they differ; hosts read the nested one"
            )),
            Some(_) => None,
            None => Some(format!(
                "the view is named with the legacy flat key _meta[\"ui/resourceUri\"] ({flat}) alone; current hosts read _meta.ui.resourceUri"
            )),
        };
        if let Some(message) = message {
            out.push(Finding::new(
                "ui-legacy-key",
                Severity::Warning,
                message,
                "name the view as _meta.ui.resourceUri (the flat key may stay beside it, with the same value)",
            ));
        }
    }
    if let Some(ui) = ui {
        for key in ui.keys() {
            if TOOL_UI_KEYS.contains(&key.as_str()) {
                continue;
            }
            if RESOURCE_UI_KEYS.contains(&key.as_str()) {
                out.push(Finding::new(
                    "ui-unknown-key",
                    Severity::Warning,
                    format!("_meta.ui.{key} is on the tool, where hosts do not read it"),
                    format!("move {key} to the ui:// resource's _meta.ui (on resources/read or resources/list)"),
                ));
            } else {
                out.push(Finding::new(
                    "ui-unknown-key",
                    Severity::Info,
                    format!("_meta.ui.{key} is not a key of the MCP Apps extension; hosts ignore it"),
                    format!("remove {key}, or keep it if another host reads it"),
                ));
            }
        }
    } else if let Some(other) = meta.get("ui").filter(|v| !v.is_null()) {
        out.push(Finding::new(
            "ui-resource-uri",
            Severity::Error,
            format!("_meta.ui is {other}, not an object; the view is ignored"),
            "make _meta.ui an object: {\"resourceUri\": \"ui://…\"}",
        ));
    }
    let link = porthole_mcp::catalog::read_tool_meta(Some(meta), sdk_server);
    for problem in &link.problems {
        let finding = if problem.starts_with("openai/outputTemplate") {
            Finding::new(
                "openai-template",
                Severity::Error,
                problem.clone(),
                "set openai/outputTemplate to the widget's ui:// URI",
            )
        } else if problem.starts_with("resourceUri") {
            Finding::new(
                "ui-resource-uri",
                Severity::Error,
                problem.clone(),
                "set _meta.ui.resourceUri to a ui:// URI the server serves",
            )
        } else if problem.contains("hidden from everyone") {
            Finding::new(
                "ui-visibility",
                Severity::Error,
                problem.clone(),
                "make _meta.ui.visibility an array of \"model\" and/or \"app\"",
            )
        } else if problem.starts_with("unknown visibility") {
            Finding::new(
                "ui-visibility",
                Severity::Warning,
                problem.clone(),
                "use only \"model\" and \"app\" in _meta.ui.visibility",
            )
        } else if problem.starts_with("openai/visibility") {
            Finding::new(
                "openai-mismatch",
                Severity::Warning,
                problem.clone(),
                "set openai/visibility to \"public\" or \"private\"",
            )
        } else {
            Finding::new(
                "ui-visibility",
                Severity::Warning,
                problem.clone(),
                "fix the tool's _meta.ui",
            )
        };
        out.push(finding);
    }
    if ui.is_some_and(|u| {
        u.get("visibility")
            .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty))
    }) {
        out.push(Finding::new(
            "ui-visibility",
            Severity::Error,
            "_meta.ui.visibility is empty: neither the model nor a view can call the tool",
            "list \"model\", \"app\" or both in _meta.ui.visibility",
        ));
    }
    // The two shapes side by side: what ChatGPT does against what MCP Apps hosts do.
    let template = meta.get("openai/outputTemplate").and_then(Value::as_str);
    let resource_uri = nested.or(meta.get("ui/resourceUri")).and_then(Value::as_str);
    if let (Some(template), Some(uri)) = (template, resource_uri)
        && template != uri
    {
        out.push(Finding::new(
            "openai-mismatch",
            Severity::Warning,
            format!("openai/outputTemplate is {template} but _meta.ui.resourceUri is {uri}: ChatGPT and MCP Apps hosts show different views"),
            "point both at the same ui:// resource, unless the two views are meant to differ",
        ));
    }
    let ui_visibility: Option<Vec<&str>> = ui
        .and_then(|u| u.get("visibility"))
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect());
    if let Some(visibility) = &ui_visibility {
        if meta.get("openai/visibility").and_then(Value::as_str) == Some("private") && visibility.contains(&"model") {
            out.push(Finding::new(
                "openai-mismatch",
                Severity::Warning,
                "openai/visibility is \"private\" but _meta.ui.visibility offers the tool to the model",
                "make them agree: drop \"model\" from _meta.ui.visibility, or make openai/visibility \"public\"",
            ));
        }
        if meta.get("openai/widgetAccessible") == Some(&Value::Bool(false)) && visibility.contains(&"app") {
            out.push(Finding::new(
                "openai-mismatch",
                Severity::Warning,
                "openai/widgetAccessible is false but _meta.ui.visibility lets views call the tool",
                "make them agree: drop \"app\" from _meta.ui.visibility, or make openai/widgetAccessible true",
            ));
        }
    }
}

/// The findings of view `uri`: `read` is its `resources/read` answer (or why it failed),
/// `listing` its `resources/list` entry when the server lists it.
pub fn check_view(uri: &str, read: Result<&Value, &str>, listing: Option<&Value>) -> Vec<Finding> {
    let mut out = Vec::new();
    if listing.is_none() {
        out.push(Finding::new(
            "resource-not-listed",
            Severity::Info,
            "the view is not in resources/list, so hosts cannot read metadata from its listing (or read it ahead)",
            "list the ui:// resource in resources/list",
        ));
    }
    let read = match read {
        Ok(read) => read,
        Err(e) => {
            out.push(Finding::new(
                "resource-read",
                Severity::Error,
                format!("resources/read failed: {e}"),
                "serve the ui:// resource the tool names",
            ));
            return out.into_iter().map(|f| f.on_resource(uri)).collect();
        }
    };
    let contents = read
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let html_items = contents
        .iter()
        .filter(|c| {
            c.get("mimeType")
                .and_then(Value::as_str)
                .is_some_and(|m| m.trim().to_ascii_lowercase().starts_with("text/html"))
        })
        .count();
    if html_items > 1 {
        out.push(Finding::new(
            "resource-contents",
            Severity::Warning,
            format!("{html_items} HTML content items: hosts show the one whose uri is the view's, else the first"),
            "return exactly one HTML content item",
        ));
    }
    let item = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or(contents.first());
    match item.and_then(|i| i.get("mimeType")).and_then(Value::as_str) {
        Some(mime) if is_view_mime(mime) && mime.trim().eq_ignore_ascii_case(LEGACY_MIME) => out.push(Finding::new(
            "resource-mime",
            Severity::Warning,
            format!("the MIME type is {LEGACY_MIME:?}, which drafts before December 2025 used"),
            format!("serve it as {MIME:?}"),
        )),
        Some(mime) if is_skybridge_mime(mime) => out.push(Finding::new(
            "resource-mime",
            Severity::Info,
            format!(
                "an OpenAI Apps SDK widget ({SKYBRIDGE_MIME}): MCP Apps hosts without Apps SDK support show nothing"
            ),
            format!("serve an MCP Apps version too ({MIME:?}, named by _meta.ui.resourceUri)"),
        )),
        _ => {}
    }
    let listing_meta = listing.and_then(|l| l.get("_meta"));
    match check_contents(uri, read, listing_meta) {
        Err(refusal) => {
            let reason = refusal.reason;
            let (rule, fix) = if reason.contains("MIME") {
                ("resource-mime", format!("serve the view as {MIME:?}"))
            } else if reason.contains("limit") {
                (
                    "resource-size",
                    "keep the view's HTML under 5 MiB (load large assets from a declared origin)".to_string(),
                )
            } else if reason.contains("contents") || reason.contains("content item") {
                (
                    "resource-contents",
                    "return one content item with the HTML as text".to_string(),
                )
            } else {
                (
                    "resource-encoding",
                    "return the HTML as UTF-8 text (or a base64 blob of it)".to_string(),
                )
            };
            out.push(Finding::new(
                rule,
                Severity::Error,
                format!("hosts refuse the view: {reason}"),
                fix,
            ));
        }
        Ok(view) => {
            for d in &view.csp.dropped {
                out.push(Finding::new(
                    "csp-entry",
                    Severity::Error,
                    format!("_meta.ui.csp.{} entry {:?} is dropped: {}", d.field, d.entry, d.reason),
                    "declare origins only, as https://host[:port] (wss:// for connectDomains)",
                ));
            }
            for problem in &view.problems {
                if problem.starts_with("unknown permission") {
                    out.push(Finding::new(
                        "permissions-unknown",
                        Severity::Warning,
                        problem.clone(),
                        "ask only for camera, microphone, geolocation or clipboardWrite",
                    ));
                } else {
                    out.push(Finding::new(
                        "resource-meta",
                        Severity::Warning,
                        problem.clone(),
                        "fix the resource's _meta.ui value",
                    ));
                }
            }
        }
    }
    out.into_iter().map(|f| f.on_resource(uri)).collect()
}

/// What changes when a host does not advertise the MCP Apps extension: `with` and `without`
/// are the server's `tools/list` entries in each case.
pub fn compare_capability(with: &[Value], without: &[Value]) -> Vec<Finding> {
    let name = |t: &Value| t.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let mut out = Vec::new();
    for tool in with {
        let n = name(tool);
        match without.iter().find(|t| name(t) == n) {
            None => out.push(
                Finding::new(
                    "capability-gated",
                    Severity::Info,
                    "offered only to hosts that advertise MCP Apps: a text-only host never sees this tool",
                    "offer the tool to every host, with a text result a model can use on its own",
                )
                .on_tool(&n),
            ),
            Some(other) => {
                let differs: Vec<&str> = ["description", "inputSchema", "outputSchema"]
                    .into_iter()
                    .filter(|k| tool.get(*k) != other.get(*k))
                    .collect();
                if !differs.is_empty() {
                    out.push(
                        Finding::new(
                            "capability-gated",
                            Severity::Info,
                            format!("its {} differ when MCP Apps is not advertised", differs.join(" and ")),
                            "check that a text-only host gets what it needs",
                        )
                        .on_tool(&n),
                    );
                }
            }
        }
    }
    for tool in without {
        let n = name(tool);
        if !with.iter().any(|t| name(t) == n) {
            out.push(
                Finding::new(
                    "capability-gated",
                    Severity::Info,
                    "offered only to hosts that do not advertise MCP Apps (a text-only stand-in)",
                    "nothing to do if a view replaces it",
                )
                .on_tool(&n),
            );
        }
    }
    out
}

/// What loading one UI tool's view live showed, for [`check_live`].
#[derive(Debug, Clone, Default)]
pub struct LiveFacts {
    /// Why calling the tool failed, when it did.
    pub call_error: Option<String>,
    /// Why the view could not be shown, when it could not.
    pub load_error: Option<String>,
    /// Milliseconds to `ui/notifications/initialized`, when it came within the limit.
    pub initialized_ms: Option<u64>,
    pub limit_ms: u64,
    pub diagnostics: Vec<crate::diagnostics::Diagnostic>,
    pub unsupported: Vec<String>,
}

/// The `_meta.ui.csp` field that would allow what a directive refused.
fn csp_field(directive: &str) -> Option<&'static str> {
    match directive {
        "connect-src" => Some("connectDomains"),
        "img-src" | "style-src" | "style-src-elem" | "script-src" | "script-src-elem" | "font-src" | "media-src" => {
            Some("resourceDomains")
        }
        "frame-src" | "child-src" => Some("frameDomains"),
        _ => None,
    }
}

/// The origin of a URL (`https://host[:port]`), when it has one.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next().filter(|h| !h.is_empty())?;
    Some(format!("{scheme}://{host}"))
}

/// The most findings of one kind (console errors, CSP violations) reported for one view.
const MAX_LIVE_FINDINGS: usize = 5;

/// The live check's findings for `tool`'s view `uri`.
pub fn check_live(tool: &str, uri: &str, facts: &LiveFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    let on = |f: Finding| f.on_tool(tool).on_resource(uri);
    if let Some(why) = &facts.call_error {
        out.push(on(Finding::new(
            "live-call",
            Severity::Warning,
            format!("calling the tool with the sample input failed: {why}"),
            "give realistic arguments with --args JSON (or --no-call to show the view without calling the tool)",
        )));
    }
    if let Some(why) = &facts.load_error {
        out.push(on(Finding::new(
            "live-load",
            Severity::Error,
            format!("the view could not be shown: {why}"),
            "fix what the reason names; the rules above usually say why",
        )));
        return out;
    }
    match facts.initialized_ms {
        Some(ms) => out.push(on(Finding::new(
            "live-initialize",
            Severity::Info,
            format!("the view completed ui/initialize in {ms} ms"),
            "nothing to do",
        ))),
        None => out.push(on(Finding::new(
            "live-initialize",
            Severity::Error,
            format!("the view did not complete ui/initialize within {} ms", facts.limit_ms),
            "send ui/initialize and then ui/notifications/initialized as the page starts (the SDK's App.connect() does both)",
        ))),
    }
    let mut seen = std::collections::HashSet::new();
    let (mut console, mut csp) = (0, 0);
    for d in facts.diagnostics.iter().filter(|d| !d.is_log()) {
        if !seen.insert((d.kind.clone(), d.message.clone())) {
            continue;
        }
        if d.kind == "csp" {
            csp += 1;
            if csp > MAX_LIVE_FINDINGS {
                continue;
            }
            let directive = d.directive.clone().unwrap_or_default();
            let blocked = d.blocked_uri.clone().unwrap_or_default();
            let fix = match (csp_field(&directive), origin_of(&blocked)) {
                (Some(field), Some(origin)) if origin.starts_with("https://") => {
                    format!("add \"{origin}\" to _meta.ui.csp.{field} of the view's resource")
                }
                (_, Some(origin)) => {
                    format!("load it over https:// from a declared origin ({origin} cannot be allowed)")
                }
                _ => "move inline scripts and styles into the document as hosts allow them, or drop what was refused"
                    .into(),
            };
            out.push(on(Finding::new(
                "live-csp-violation",
                Severity::Warning,
                format!("the view's CSP refused {blocked} ({directive})"),
                fix,
            )));
        } else {
            console += 1;
            if console > MAX_LIVE_FINDINGS {
                continue;
            }
            let what = if d.kind == "error" { "threw" } else { "logged" };
            out.push(on(Finding::new(
                "live-console-error",
                Severity::Warning,
                format!("the view {what}: {}", d.message),
                "open the view in Porthole (or a browser) and fix what its console says",
            )));
        }
    }
    for method in &facts.unsupported {
        out.push(on(Finding::new(
            "live-unsupported",
            Severity::Warning,
            format!("the view asked for {method}, which hosts do not offer (answered -32601)"),
            "only call methods the MCP Apps spec gives views, and check hostCapabilities before optional ones",
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(findings: &[Finding]) -> Vec<(&'static str, Severity)> {
        findings.iter().map(|f| (f.rule, f.severity)).collect()
    }

    fn good_tool() -> Value {
        json!({
            "name": "show_chart",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "_meta": {"ui": {"resourceUri": "ui://charts/view.html", "visibility": ["model", "app"]}},
        })
    }

    #[test]
    fn a_correct_tool_has_no_findings() {
        assert_eq!(check_tool(&good_tool(), false), vec![]);
        let plain = json!({"name": "echo", "inputSchema": {"type": "object"}});
        assert_eq!(check_tool(&plain, false), vec![]);
    }

    #[test]
    fn each_tool_rule_fires() {
        let tool = json!({"name": "show chart!", "inputSchema": {"type": "object"}});
        assert_eq!(rules(&check_tool(&tool, false)), [("tool-name", Severity::Warning)]);

        let tool = json!({"name": "t", "inputSchema": {"type": "string"}});
        assert_eq!(rules(&check_tool(&tool, false)), [("input-schema", Severity::Error)]);
        let tool = json!({"name": "t"});
        assert_eq!(rules(&check_tool(&tool, false)), [("input-schema", Severity::Error)]);
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "text"}, "b": 3}, "required": ["c"]}});
        let found = check_tool(&tool, false);
        assert_eq!(
            rules(&found),
            [
                ("input-schema", Severity::Error),
                ("input-schema", Severity::Error),
                ("input-schema", Severity::Warning)
            ],
            "{found:#?}"
        );
        assert!(found[0].message.contains("properties.a.type"), "{found:#?}");
        assert_eq!(found[0].tool.as_deref(), Some("t"));

        let tool =
            json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://x/v.html"}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-legacy-key", Severity::Warning)]);
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {
            "ui/resourceUri": "ui://x/v.html", "ui": {"resourceUri": "ui://x/w.html"}}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-legacy-key", Severity::Warning)]);
        // Both, agreeing, as the official SDK writes them for older hosts.
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {
            "ui/resourceUri": "ui://x/v.html", "ui": {"resourceUri": "ui://x/v.html"}}});
        assert_eq!(check_tool(&tool, false), vec![]);

        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "https://x/v.html"}}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-resource-uri", Severity::Error)]);

        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://x/v.html", "visibility": "model"}}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-visibility", Severity::Error)]);
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://x/v.html", "visibility": ["model", "user"]}}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-visibility", Severity::Warning)]);
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://x/v.html", "visibility": []}}});
        assert_eq!(rules(&check_tool(&tool, false)), [("ui-visibility", Severity::Error)]);

        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://x/v.html", "csp": {}, "colour": "red"}}});
        assert_eq!(
            rules(&check_tool(&tool, false)),
            [
                ("ui-unknown-key", Severity::Warning),
                ("ui-unknown-key", Severity::Info)
            ]
        );

        let tool =
            json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"openai/outputTemplate": "widget.html"}});
        assert_eq!(rules(&check_tool(&tool, true)), [("openai-template", Severity::Error)]);

        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {
            "ui": {"resourceUri": "ui://x/v.html", "visibility": ["model", "app"]},
            "openai/outputTemplate": "ui://x/other.html",
            "openai/visibility": "private",
            "openai/widgetAccessible": false,
        }});
        assert_eq!(
            rules(&check_tool(&tool, false)),
            [
                ("openai-mismatch", Severity::Warning),
                ("openai-mismatch", Severity::Warning),
                ("openai-mismatch", Severity::Warning)
            ]
        );
        // Both shapes, agreeing: nothing to say.
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {
            "ui": {"resourceUri": "ui://x/v.html"}, "openai/outputTemplate": "ui://x/v.html",
        }});
        assert_eq!(check_tool(&tool, false), vec![]);
    }

    const URI: &str = "ui://charts/view.html";

    fn read(mime: &str, text: &str, meta: Value) -> Value {
        json!({"contents": [{"uri": URI, "mimeType": mime, "text": text, "_meta": meta}]})
    }

    fn listing() -> Value {
        json!({"uri": URI, "name": "view", "mimeType": MIME})
    }

    #[test]
    fn a_correct_view_has_no_findings() {
        let read = read(
            MIME,
            "<!doctype html><p>hi</p>",
            json!({"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"camera": {}}}}),
        );
        assert_eq!(check_view(URI, Ok(&read), Some(&listing())), vec![]);
    }

    #[test]
    fn each_view_rule_fires() {
        let ok = read(MIME, "<p>hi</p>", json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&ok), None)),
            [("resource-not-listed", Severity::Info)]
        );
        let found = check_view(URI, Err("no such resource"), Some(&listing()));
        assert_eq!(rules(&found), [("resource-read", Severity::Error)]);
        assert_eq!(found[0].resource.as_deref(), Some(URI));

        let none = json!({"contents": []});
        assert_eq!(
            rules(&check_view(URI, Ok(&none), Some(&listing()))),
            [("resource-contents", Severity::Error)]
        );
        let two = json!({"contents": [
            {"uri": URI, "mimeType": MIME, "text": "<p>a</p>"},
            {"uri": "ui://charts/other.html", "mimeType": MIME, "text": "<p>b</p>"},
        ]});
        assert_eq!(
            rules(&check_view(URI, Ok(&two), Some(&listing()))),
            [("resource-contents", Severity::Warning)]
        );

        let wrong = read("text/html", "<p>hi</p>", json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&wrong), Some(&listing()))),
            [("resource-mime", Severity::Error)]
        );
        let legacy = read(LEGACY_MIME, "<p>hi</p>", json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&legacy), Some(&listing()))),
            [("resource-mime", Severity::Warning)]
        );
        let widget = read(SKYBRIDGE_MIME, "<p>hi</p>", json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&widget), Some(&listing()))),
            [("resource-mime", Severity::Info)]
        );

        let big = read(MIME, &"x".repeat(crate::resource::MAX_VIEW_BYTES + 1), json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&big), Some(&listing()))),
            [("resource-size", Severity::Error)]
        );
        let empty = read(MIME, "  ", json!({}));
        assert_eq!(
            rules(&check_view(URI, Ok(&empty), Some(&listing()))),
            [("resource-encoding", Severity::Error)]
        );
        let bad_blob = json!({"contents": [{"uri": URI, "mimeType": MIME, "blob": "%%%"}]});
        assert_eq!(
            rules(&check_view(URI, Ok(&bad_blob), Some(&listing()))),
            [("resource-encoding", Severity::Error)]
        );

        let csp = read(
            MIME,
            "<p>hi</p>",
            json!({"ui": {"csp": {"connectDomains": ["http://api.example.com", "https://ok.example.com", "*"]}}}),
        );
        let found = check_view(URI, Ok(&csp), Some(&listing()));
        assert_eq!(
            rules(&found),
            [("csp-entry", Severity::Error), ("csp-entry", Severity::Error)]
        );
        assert!(
            found[0].message.contains("http://api.example.com") && found[0].message.contains("http://"),
            "{found:#?}"
        );

        let permissions = read(
            MIME,
            "<p>hi</p>",
            json!({"ui": {"permissions": {"camera": {}, "bluetooth": {}}}}),
        );
        assert_eq!(
            rules(&check_view(URI, Ok(&permissions), Some(&listing()))),
            [("permissions-unknown", Severity::Warning)]
        );
        let meta = read(MIME, "<p>hi</p>", json!({"ui": {"prefersBorder": "yes"}}));
        assert_eq!(
            rules(&check_view(URI, Ok(&meta), Some(&listing()))),
            [("resource-meta", Severity::Warning)]
        );
    }

    #[test]
    fn tools_that_depend_on_the_capability_are_named() {
        let a = json!({"name": "a", "description": "A chart", "inputSchema": {"type": "object"}});
        let a_text = json!({"name": "a", "description": "A chart, as text", "inputSchema": {"type": "object"}});
        let b = json!({"name": "b", "inputSchema": {"type": "object"}});
        let c = json!({"name": "c", "inputSchema": {"type": "object"}});
        assert_eq!(
            compare_capability(&[a.clone(), b.clone()], &[a.clone(), b.clone()]),
            vec![]
        );
        let found = compare_capability(&[a.clone(), b.clone()], &[a_text, c]);
        let named: Vec<_> = found.iter().map(|f| (f.tool.as_deref().unwrap(), f.rule)).collect();
        assert_eq!(
            named,
            [
                ("a", "capability-gated"),
                ("b", "capability-gated"),
                ("c", "capability-gated")
            ]
        );
        assert!(found[0].message.contains("description"));
        assert!(found.iter().all(|f| f.severity == Severity::Info));
    }

    #[test]
    fn the_live_check_says_what_the_view_did() {
        use crate::diagnostics::Diagnostic;
        let quiet = LiveFacts {
            initialized_ms: Some(120),
            limit_ms: 5000,
            ..LiveFacts::default()
        };
        assert_eq!(
            rules(&check_live("t", "ui://v", &quiet)),
            [("live-initialize", Severity::Info)]
        );

        let never = LiveFacts {
            limit_ms: 5000,
            ..LiveFacts::default()
        };
        let found = check_live("t", "ui://v", &never);
        assert_eq!(rules(&found), [("live-initialize", Severity::Error)]);
        assert!(found[0].message.contains("5000 ms"), "{}", found[0].message);

        let diagnostic = |kind: &str, message: &str, directive: Option<&str>, blocked: Option<&str>| Diagnostic {
            kind: kind.into(),
            level: "error".into(),
            message: message.into(),
            directive: directive.map(String::from),
            blocked_uri: blocked.map(String::from),
        };
        let noisy = LiveFacts {
            call_error: Some("city is required".into()),
            initialized_ms: Some(80),
            limit_ms: 5000,
            diagnostics: vec![
                diagnostic("console", "boom", None, None),
                diagnostic("console", "boom", None, None),
                diagnostic("csp", "x", Some("img-src"), Some("https://cdn.example.com/a.png")),
                diagnostic("csp", "y", Some("connect-src"), Some("http://plain.example/api")),
            ],
            unsupported: vec!["ui/unheard-of".into()],
            ..LiveFacts::default()
        };
        let found = check_live("t", "ui://v", &noisy);
        assert_eq!(
            rules(&found),
            [
                ("live-call", Severity::Warning),
                ("live-initialize", Severity::Info),
                ("live-console-error", Severity::Warning),
                ("live-csp-violation", Severity::Warning),
                ("live-csp-violation", Severity::Warning),
                ("live-unsupported", Severity::Warning),
            ],
            "the same console error once"
        );
        assert_eq!(
            found[3].fix,
            "add \"https://cdn.example.com\" to _meta.ui.csp.resourceDomains of the view's resource"
        );
        assert!(found[4].fix.contains("cannot be allowed"), "{}", found[4].fix);
        assert!(
            found
                .iter()
                .all(|f| f.tool.as_deref() == Some("t") && f.resource.as_deref() == Some("ui://v"))
        );

        let refused = LiveFacts {
            load_error: Some("not HTML".into()),
            limit_ms: 5000,
            ..LiveFacts::default()
        };
        assert_eq!(
            rules(&check_live("t", "ui://v", &refused)),
            [("live-load", Severity::Error)]
        );
    }
}
