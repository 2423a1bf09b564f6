//! The demo server over a real MCP session (rmcp client ↔ server on an in-memory pipe).

use std::sync::{Arc, Mutex};

use porthole_demo_server::{DemoServer, MCP_APP_MIME};
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam, ReadResourceRequestParams, ResourceContents};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;

#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }
}

async fn connect() -> (RunningService<RoleClient, Recorder>, Recorder) {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = DemoServer::new().serve(server_io).await.unwrap();
        let _ = running.waiting().await;
    });
    let recorder = Recorder::default();
    let client = recorder.clone().serve(client_io).await.unwrap();
    (client, recorder)
}

#[tokio::test]
async fn tools_carry_the_mcp_apps_metadata() {
    let (client, _) = connect().await;
    let tools = client.list_all_tools().await.unwrap();
    let meta = |name: &str| {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(&t.meta).unwrap()
    };
    assert_eq!(
        meta("system_monitor")["ui"]["resourceUri"],
        "ui://porthole-demo/system-monitor.html"
    );
    assert_eq!(meta("poll_system_stats")["ui"]["visibility"], json!(["app"]));
    assert_eq!(meta("sha256")["ui"]["visibility"], json!(["model"]));
    assert_eq!(meta("weather")["ui"]["resourceUri"], "ui://porthole-demo/weather.html");
    let info = client.peer().peer_info().unwrap();
    let ext = info.capabilities.extensions.as_ref().unwrap();
    assert_eq!(ext["io.modelcontextprotocol/ui"]["mimeTypes"], json!([MCP_APP_MIME]));
}

#[tokio::test]
async fn every_view_is_an_mcp_app_built_with_the_sdk() {
    let (client, _) = connect().await;
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(listed.len(), 3);
    for resource in listed {
        let read = client
            .read_resource(ReadResourceRequestParams::new(resource.uri.clone()))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents {
            mime_type, text, meta, ..
        } = &read.contents[0]
        else {
            panic!("{} is not text", resource.uri);
        };
        assert_eq!(mime_type.as_deref(), Some(MCP_APP_MIME));
        assert!(text.starts_with("<!doctype html>"), "{}", resource.uri);
        // The ext-apps SDK speaks JSON-RPC over postMessage with the ui/initialize handshake.
        assert!(
            text.contains("ui/initialize"),
            "{} does not embed the ext-apps SDK",
            resource.uri
        );
        let meta = serde_json::to_value(meta).unwrap();
        if resource.uri.ends_with("weather.html") {
            assert_eq!(
                meta["ui"]["csp"]["connectDomains"],
                json!(["https://api.open-meteo.com"])
            );
        } else {
            assert!(meta["ui"].get("csp").is_none(), "{}", resource.uri);
        }
    }
}

#[tokio::test]
async fn system_monitor_returns_real_figures_as_text_and_structured_content() {
    let (client, _) = connect().await;
    let result = client
        .call_tool(CallToolRequestParams::new("system_monitor"))
        .await
        .unwrap();
    let s = result.structured_content.unwrap();
    assert!(s["cores"].as_u64().unwrap() >= 1);
    assert!(s["memory"]["totalBytes"].as_u64().unwrap() > 0);
    assert!(s["memory"]["usedBytes"].as_u64().unwrap() <= s["memory"]["totalBytes"].as_u64().unwrap());
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("CPU") && text.contains("MiB"), "{text}");
}

#[tokio::test]
async fn sample_cpu_reports_progress_as_it_goes() {
    let (client, recorder) = connect().await;
    let result = client
        .call_tool(
            CallToolRequestParams::new("sample_cpu").with_arguments(json!({"seconds": 1}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.unwrap()["samples"].as_array().unwrap().len(),
        2
    );
    let progress = recorder.progress.lock().unwrap().clone();
    assert_eq!(progress.iter().map(|p| p.progress).collect::<Vec<_>>(), [1.0, 2.0]);
    assert!(progress.iter().all(|p| p.total == Some(2.0)));
}

#[tokio::test]
async fn sha256_and_bad_input_errors() {
    let (client, _) = connect().await;
    let hash = client
        .call_tool(
            CallToolRequestParams::new("sha256").with_arguments(json!({"text": "abc"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(
        hash.content[0].as_text().unwrap().text,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let bad = client
        .call_tool(
            CallToolRequestParams::new("weather")
                .with_arguments(json!({"latitude": 91, "longitude": 0}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(bad.content[0].as_text().unwrap().text.contains("latitude 91"));
    let weather = client
        .call_tool(
            CallToolRequestParams::new("weather").with_arguments(
                json!({"latitude": 38.72, "longitude": -9.14, "place": "Lisbon"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let forecast = weather.structured_content.unwrap();
    assert_eq!(forecast["place"], "Lisbon");
    assert!(
        forecast["forecastUrl"]
            .as_str()
            .unwrap()
            .starts_with("https://api.open-meteo.com/v1/forecast?latitude=38.7200&longitude=-9.1400&")
    );
    let missing = client
        .call_tool(
            CallToolRequestParams::new("list_directory")
                .with_arguments(json!({"path": "/nonexistent/folder"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(missing.is_error, Some(true));
    assert!(
        missing.content[0]
            .as_text()
            .unwrap()
            .text
            .starts_with("Cannot list /nonexistent/folder")
    );
}
