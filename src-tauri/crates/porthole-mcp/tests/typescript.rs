//! The TypeScript declarations of the types the window gets and sends (ts-rs) follow serde's
//! names: camelCase fields, tagged transports, skipped fields left out.

use porthole_mcp::config_file::{DraftTransport, EntryFields, EntryTransport, ServerDraft};
use porthole_mcp::import::{FoundServer, ImportSource};
use porthole_mcp::{Audience, CatalogTool, ModelFacing, ServerState, ServerStatus};
use ts_rs::{Config, TS};

/// The declaration, doc comments left out and whitespace collapsed.
fn decl<T: TS>() -> String {
    let decl = T::decl(&Config::new().with_large_int("number"));
    let mut out = String::new();
    let mut rest = decl.as_str();
    while let Some(start) = rest.find("/**") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("a closed doc comment") + start + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn server_statuses_and_tools_use_camel_case() {
    let tool = decl::<CatalogTool>();
    for field in [
        "modelName: string,",
        "title: string | null,",
        "inputSchema: JsonValue,",
        "uiResourceUri: string | null,",
        "visibility: Array<Audience>,",
        "metaProblems: Array<string>,",
    ] {
        assert!(tool.contains(field), "{field} in {tool}");
    }
    let status = decl::<ServerStatus>();
    for field in [
        "state: ServerState,",
        "serverInfo: string | null,",
        "protocolVersion: string | null,",
        "mcpApps: boolean,",
        "tools: Array<CatalogTool>,",
    ] {
        assert!(status.contains(field), "{field} in {status}");
    }
    assert_eq!(decl::<Audience>(), r#"type Audience = "model" | "app";"#);
    assert_eq!(
        decl::<ServerState>(),
        r#"type ServerState = "disabled" | "connecting" | "connected" | "failed";"#
    );
    assert_eq!(
        decl::<ModelFacing>(),
        "type ModelFacing = { content: Array<JsonValue>, isError: boolean, };"
    );
}

#[test]
fn settings_forms_and_imports_match_their_json() {
    assert_eq!(
        decl::<ServerDraft>(),
        "type ServerDraft = { name: string, transport: DraftTransport, enabled: boolean, mcpApps: boolean, };"
    );
    assert_eq!(
        decl::<DraftTransport>(),
        r#"type DraftTransport = { "type": "stdio", command: string, args: Array<string>, env: Array<string>, cwd: string, } | { "type": "http", url: string, headers: Array<string>, };"#
    );
    let fields = decl::<EntryFields>();
    for field in [
        "transport: EntryTransport,",
        "envKeys: Array<string>,",
        "headerKeys: Array<string>,",
    ] {
        assert!(fields.contains(field), "{field} in {fields}");
    }
    assert_eq!(
        decl::<EntryTransport>(),
        r#"type EntryTransport = "stdio" | "http" | "unknown";"#
    );
    assert_eq!(
        decl::<ImportSource>(),
        "type ImportSource = { client: string, path: string, };"
    );
    // The entry itself (`#[serde(skip)]`) never reaches the window.
    assert_eq!(
        decl::<FoundServer>(),
        "type FoundServer = { name: string, endpoint: string, importable: boolean, note: string | null, };"
    );
}
