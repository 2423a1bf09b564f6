//! The contract between the app and its front end, generated, never mirrored by hand: the
//! arguments of every window command (one struct each, the invoke payload), the list of commands
//! and the windows allowed to call them (`command_list.rs`, written once), and the generator of
//! the front end's TypeScript (types, a typed command client, event names) and of the shell's
//! capability files. `tests/contract.rs` fails when the committed files are stale.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use porthole_agent::Decision;
use porthole_agent::providers::ProviderKind;
use porthole_apps::display::DisplayMode;
use porthole_mcp::config_file::{AgentDraft, ServerDraft};
use porthole_mcp::import::ImportSource;
use porthole_mcp::traffic::TrafficEntry;
use porthole_mcp::{ServerDetails, ServerStatus};
use porthole_store::{Conversation, SearchHit};
use serde::Deserialize;
use serde_json::Value;
use ts_rs::{Config, ExportError, TS, TypeVisitor};

use crate::AppInfo;
use crate::approvals::Approvals;
use crate::attachments::{AttachmentInfo, AttachmentRef, ResourceList};
use crate::conversations::{ConversationList, StoredConversation};
use crate::error::AppError;
use crate::model::ModelInfo;
use crate::prompts::{CompletionTarget, Completions, PromptList};
use crate::questions::{ElicitationAction, Question};
use crate::remote_agents::{AgentEntry, AgentSummary};
use crate::sampling::{SamplingDecision, SamplingSettled, ServerSampling};
use crate::scroll_positions::ScrollPosition;
use crate::server_install::ServerInstallRequest;
use crate::server_settings::{ImportPreview, ImportReport, ServerLog, ServerSettings};
use crate::settings::{GeneralSettings, ModelSettings, ModelTest};
use crate::theme::ThemePreference;
use crate::tool_runs::{ResourceRead, ToolRun};
use crate::turns::ChatEvent;
use crate::views::{ViewEvent, ViewPreview};
use crate::workbench::{HostEmulationState, PromptPreview, ViewInspection};
use porthole_apps::host_emulation::HostEmulation;

include!("command_list.rs");

/// The arguments of a command that takes none.
#[derive(Debug, Default, Deserialize, TS)]
pub struct NoArgs {}

macro_rules! args {
    ($($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty),* $(,)? })*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Deserialize, TS)]
            #[serde(rename_all = "camelCase")]
            pub struct $name {
                $($(#[$fmeta])* pub $field: $ty,)*
            }
        )*
    };
}

args! {
    /// A server's question answered: `accept` (with `content`, an object), `decline` or `cancel`.
    AnswerElicitation { #[ts(type = "number")] id: u64, action: ElicitationAction, content: Option<Value> }
    ConversationRef { id: String }
    RenameConversation { id: String, title: String }
    SearchConversations { query: String }
    /// A page of the conversation list: `limit` (1 to 1000) after the one with id `after`.
    ConversationPage { limit: u32, after: Option<String> }
    /// Conversation `id` exported as `format` to a file the person chooses.
    ExportConversation { id: String, format: crate::export::ExportFormat }
    /// The turns of conversation `id` before its message `before` (the first one shown).
    EarlierMessages { id: String, #[ts(type = "number")] before: i64 }
    /// Where the reader stopped scrolling in a conversation (none: at its end).
    KeepScrollPosition { conversation_id: String, position: Option<ScrollPosition> }
    /// The person's message, with the resources attached to it; a new conversation when
    /// `conversation_id` is absent, with remote agent `agent` (its name in the config) when
    /// given, else with the local model.
    SendMessage { conversation_id: Option<String>, text: String, #[serde(default)] #[ts(optional, as = "Option<_>")] attachments: Vec<AttachmentRef>, #[serde(default)] #[ts(optional)] agent: Option<String> }
    /// Suggestions for `argument` of a prompt or resource template of `server`, typed so far as
    /// `value`, knowing the other arguments' values (`context`).
    CompleteArgument { server: String, target: CompletionTarget, argument: String, value: String, #[serde(default)] context: HashMap<String, String> }
    /// Prompt `name` of `server`, with its arguments, sent as the person's turn.
    SendPrompt { conversation_id: Option<String>, server: String, name: String, #[serde(default)] arguments: HashMap<String, String> }
    /// The person's decision on a server's sampling request (`sampling-requested`).
    AnswerServerSampling { #[ts(type = "number")] id: u64, decision: SamplingDecision }
    /// The URI `uri_template` makes with `values`.
    TemplateUri { uri_template: String, values: HashMap<String, String> }
    InConversation { conversation_id: String }
    /// A remote agent added (`original_name` absent) or changed, from the settings' form.
    SaveAgent { original_name: Option<String>, agent: AgentDraft }
    AgentRef { name: String }
    EditAndResend { conversation_id: String, text: String }
    AnswerApproval { call_id: String, decision: Decision }
    /// The views of a stored conversation (or of one call of it) to re-create.
    ReopenViews { conversation_id: String, call_id: Option<String> }
    AnswerDownload { request_id: String, accept: bool }
    /// The person's answer to a view's sampling request (`sampling_request` view event).
    AnswerSampling { #[ts(type = "number")] request_id: u64, approve: bool }
    /// The person's answer to a view's request to open a link (`link_request` view event).
    AnswerLink { #[ts(type = "number")] request_id: u64, open: bool }
    /// The person's answer to an install link (`server-install-requested`): add it or not.
    AnswerServerInstall { #[ts(type = "number")] id: u64, add: bool }
    ViewRef { view_id: String }
    /// One message a view's frame posted (the window matched `event.source` to the frame).
    ViewMessage { view_id: String, message: Value }
    SetViewDisplayMode { view_id: String, mode: DisplayMode }
    SetViewContainer { view_id: String, width: f64 }
    /// A tools-panel run: `arguments` is a JSON object; a new conversation when none is given.
    RunTool { conversation_id: Option<String>, server: String, tool: String, arguments: Value }
    /// `model`: `None` for the provider's only model.
    SaveModelSettings { provider: ProviderKind, base_url: String, model: Option<String> }
    /// `api_key`: the one typed in the form, else the environment's or the keyring's.
    ProviderRequest { provider: ProviderKind, base_url: String, api_key: Option<String> }
    TestModel { provider: ProviderKind, base_url: String, model: Option<String>, api_key: Option<String> }
    SaveApiKey { provider: ProviderKind, key: String }
    ProviderRef { provider: ProviderKind }
    /// What is given is checked and stored; a retention is a whole number of days, 1 to 365;
    /// origin lists are `https://` (or `wss://`) origins, `*.` wildcards allowed; an empty
    /// client metadata URL clears it.
    SaveGeneralSettings {
        view_retention_days: Option<Value>,
        theme: Option<ThemePreference>,
        view_origins_allowed: Option<Vec<String>>,
        view_origins_blocked: Option<Vec<String>>,
        client_metadata_url: Option<String>,
        roots: Option<Vec<String>>,
    }
    SystemThemeChanged { dark: bool }
    /// Adds a server (`original_name` absent) or changes one (maybe renaming it).
    SaveServer { original_name: Option<String>, server: ServerDraft }
    ServerRef { name: String }
    /// Tool `tool` of server `server`.
    ToolRef { server: String, tool: String }
    /// Resource `uri` of server `server` (a tool result's link).
    ResourceRef { server: String, uri: String }
    /// `server`'s traffic log after entry `after` (0: all of it).
    ServerTraffic { server: String, #[ts(type = "number")] after: u64 }
    /// One message of `server`'s traffic log.
    TrafficMessage { server: String, #[ts(type = "number")] seq: u64 }
    /// A view's call shown again with this input and result (JSON), the server not called.
    ReplayView { view_id: String, input: Value, result: Value }
    /// The view inspector on or off (the main window's views from now on).
    InspectionSwitch { on: bool }
    /// A `ui://` resource of `server` shown as a view with this sample input and result.
    PreviewView { server: String, uri: String, input: Value, result: Value }
    /// The workbench's host emulation: a preset, overrides, and whether chats are emulated too.
    SetHostEmulation { emulation: HostEmulation }
    /// Prompt `name` of `server` with its arguments, shown, not sent.
    PreviewPrompt { server: String, name: String, #[serde(default)] arguments: HashMap<String, String> }
    ServerSwitch { name: String, enabled: bool }
    McpAppsSwitch { enabled: bool }
    ImportPath { path: String }
    ImportServers { path: String, names: Vec<String> }
}

/// Which windows may call a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Windows {
    /// Only the main window.
    Main,
    /// The main window and pop-out windows.
    Shared,
    /// Only pop-out windows.
    PopOut,
}

/// One window command, for the generators.
pub struct CommandSpec {
    pub name: &'static str,
    pub windows: Windows,
    /// The TypeScript name of its arguments (`None`: it takes none).
    args: fn(&Config) -> Option<String>,
    /// The TypeScript type of its answer.
    result: fn(&Config) -> String,
    /// Writes the TypeScript of its argument and answer types (and theirs) to the config's folder.
    export: fn(&Config) -> Result<(), ExportError>,
}

/// The TypeScript type of a Rust type, `void` for `()`.
fn ts_name<T: TS + 'static + ?Sized>(cfg: &Config, rust: &str) -> String {
    if rust == "()" { "void".into() } else { T::name(cfg) }
}

/// Writes `T` (when it is declared in a file of its own) and every type it uses.
fn export_with_dependencies<T: TS + 'static + ?Sized>(cfg: &Config) -> Result<(), ExportError> {
    export_once::<T>(cfg, &mut HashSet::new())
}

fn export_once<T: TS + 'static + ?Sized>(cfg: &Config, seen: &mut HashSet<TypeId>) -> Result<(), ExportError> {
    if !seen.insert(TypeId::of::<T>()) {
        return Ok(());
    }
    if T::output_path().is_some() {
        return T::export_all(cfg);
    }
    struct Dependencies<'a> {
        cfg: &'a Config,
        seen: &'a mut HashSet<TypeId>,
        failed: Option<ExportError>,
    }
    impl TypeVisitor for Dependencies<'_> {
        fn visit<U: TS + 'static + ?Sized>(&mut self) {
            if self.failed.is_none()
                && let Err(e) = export_once::<U>(self.cfg, self.seen)
            {
                self.failed = Some(e);
            }
        }
    }
    let mut visitor = Dependencies {
        cfg,
        seen,
        failed: None,
    };
    T::visit_dependencies(&mut visitor);
    T::visit_generics(&mut visitor);
    visitor.failed.map_or(Ok(()), Err)
}

macro_rules! spec {
    ($name:ident, $windows:expr, $args:ty, $result:ty) => {
        CommandSpec {
            name: stringify!($name),
            windows: $windows,
            args: |cfg| (stringify!($args) != "NoArgs").then(|| <$args as TS>::name(cfg)),
            result: |cfg| ts_name::<$result>(cfg, stringify!($result)),
            export: |cfg| {
                export_with_dependencies::<$args>(cfg)?;
                export_with_dependencies::<$result>(cfg)
            },
        }
    };
}

macro_rules! command_specs {
    (
        main: { $($main:ident: $main_args:ty => $main_result:ty,)* }
        shared: { $($shared:ident: $shared_args:ty => $shared_result:ty,)* }
        pop_out: { $($pop:ident: $pop_args:ty => $pop_result:ty,)* }
    ) => {
        vec![
            $(spec!($main, Windows::Main, $main_args, $main_result),)*
            $(spec!($shared, Windows::Shared, $shared_args, $shared_result),)*
            $(spec!($pop, Windows::PopOut, $pop_args, $pop_result),)*
        ]
    };
}

/// Every window command, in the list's order.
pub fn commands() -> Vec<CommandSpec> {
    app_command_list!(command_specs)
}

/// The events the app sends to windows: (name, payload type's TypeScript name).
fn events(cfg: &Config) -> Vec<(&'static str, String)> {
    vec![
        ("chat-event", ChatEvent::name(cfg)),
        ("view-event", ViewEvent::name(cfg)),
        ("servers-changed", <Vec<ServerStatus>>::name(cfg)),
        ("elicitation-requested", Question::name(cfg)),
        ("sampling-requested", ServerSampling::name(cfg)),
        ("sampling-settled", SamplingSettled::name(cfg)),
        ("server-install-requested", ServerInstallRequest::name(cfg)),
    ]
}

/// How TypeScript is generated: 64-bit integers as `number` (no value here comes near 2^53).
pub fn ts_config(out_dir: &Path) -> Config {
    Config::new().with_large_int("number").with_out_dir(out_dir)
}

fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

const HEADER: &str = "// Generated from the Rust types by `PORTHOLE_BLESS=1 cargo test -p porthole-host --test contract`.\n// Do not edit: change the Rust side and generate again.\n";

/// Writes the whole front-end contract into `out_dir`: a file per type (ts-rs), `commands.ts`
/// (a typed function per command), and `events.ts` (each event's name and payload).
pub fn generate(out_dir: &Path) -> Result<(), String> {
    let cfg = ts_config(out_dir);
    let specs = commands();
    let mut imports: BTreeMap<String, ()> = BTreeMap::new();
    let mut functions = String::new();
    for spec in &specs {
        (spec.export)(&cfg).map_err(|e| format!("{}: {e}", spec.name))?;
        let args = (spec.args)(&cfg);
        let result = (spec.result)(&cfg);
        for ts in args.iter().chain(std::iter::once(&result)) {
            collect_type_names(ts, &mut imports);
        }
        let call = match &args {
            Some(args) => format!(
                "  {}: (args: {args}) => invoke<{result}>(\"{}\", args),\n",
                camel(spec.name),
                spec.name
            ),
            None => format!("  {}: () => invoke<{result}>(\"{}\"),\n", camel(spec.name), spec.name),
        };
        functions.push_str(&call);
    }
    export_with_dependencies::<AppError>(&cfg).map_err(|e| e.to_string())?;
    export_with_dependencies::<ChatEvent>(&cfg).map_err(|e| e.to_string())?;
    export_with_dependencies::<ViewEvent>(&cfg).map_err(|e| e.to_string())?;
    export_with_dependencies::<ServerSampling>(&cfg).map_err(|e| e.to_string())?;
    export_with_dependencies::<SamplingSettled>(&cfg).map_err(|e| e.to_string())?;
    let mut commands_ts = String::from(HEADER);
    commands_ts.push_str("import { invoke } from \"@tauri-apps/api/core\";\n");
    for name in imports.keys() {
        // ts-rs writes serde_json's Value as JsonValue in a folder of its own.
        let path = if name == "JsonValue" {
            "serde_json/JsonValue"
        } else {
            name
        };
        commands_ts.push_str(&format!("import type {{ {name} }} from \"./{path}\";\n"));
    }
    commands_ts.push_str(
        "\n/** Every window command, by its camelCase name; a failed command rejects with an `AppError`. */\nexport const commands = {\n",
    );
    commands_ts.push_str(&functions);
    commands_ts.push_str("};\n");
    std::fs::write(out_dir.join("commands.ts"), commands_ts).map_err(|e| e.to_string())?;

    let mut events_ts = String::from(HEADER);
    let events = events(&cfg);
    let mut event_imports = BTreeMap::new();
    for (_, ts) in &events {
        collect_type_names(ts, &mut event_imports);
    }
    for name in event_imports.keys() {
        events_ts.push_str(&format!("import type {{ {name} }} from \"./{name}\";\n"));
    }
    events_ts.push_str(
        "\n/** Each event the app sends a window, by name, with its payload. */\nexport type AppEvents = {\n",
    );
    for (name, ts) in &events {
        events_ts.push_str(&format!("  \"{name}\": {ts};\n"));
    }
    events_ts.push_str("};\n");
    std::fs::write(out_dir.join("events.ts"), events_ts).map_err(|e| e.to_string())?;
    Ok(())
}

/// The declared type names in a TypeScript type expression (`Array<ServerStatus>` → `ServerStatus`).
fn collect_type_names(ts: &str, into: &mut BTreeMap<String, ()>) {
    const BUILT_IN: &[&str] = &[
        "Array", "Record", "Partial", "string", "number", "boolean", "void", "null",
    ];
    for word in ts.split(|c: char| !c.is_alphanumeric() && c != '_') {
        if word.chars().next().is_some_and(char::is_uppercase) && !BUILT_IN.contains(&word) {
            into.insert(word.to_string(), ());
        }
    }
}

/// The permissions a capability grants, for windows of `kind`: listening for events, and
/// `allow-<command>` for each command those windows may call.
pub fn capability_permissions(pop_out: bool) -> Vec<String> {
    let mut permissions = vec![
        "core:event:allow-listen".to_string(),
        "core:event:allow-unlisten".to_string(),
    ];
    for spec in commands() {
        let allowed = match spec.windows {
            Windows::Main => !pop_out,
            Windows::Shared => true,
            Windows::PopOut => pop_out,
        };
        if allowed {
            permissions.push(format!("allow-{}", spec.name.replace('_', "-")));
        }
    }
    permissions
}

/// Every file under `dir`, by its path relative to `dir`, with its contents.
pub fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                files.insert(path.strip_prefix(dir).unwrap_or(&path).to_path_buf(), text);
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names_are_unique_and_camel_cased_for_the_client() {
        let specs = commands();
        let mut names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        assert_eq!(camel("set_view_display_mode"), "setViewDisplayMode");
    }

    #[test]
    fn pop_out_windows_get_only_the_view_commands() {
        let pop_out = capability_permissions(true);
        assert!(pop_out.contains(&"allow-view-message".to_string()));
        assert!(pop_out.contains(&"allow-pop-out-ready".to_string()));
        assert!(!pop_out.contains(&"allow-send-message".to_string()));
        let main = capability_permissions(false);
        assert!(main.contains(&"allow-send-message".to_string()));
        assert!(!main.contains(&"allow-pop-in-view".to_string()));
    }
}
