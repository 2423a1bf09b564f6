//! What a view is told about its host through the bridge: the context it starts with, and a
//! theme switch.

use std::sync::Arc;
use std::time::Duration;

use porthole_apps::bridge::{ViewBridge, ViewConfig};
use porthole_apps::display::{MAX_VIEW_HEIGHT, container_dimensions};
use porthole_apps::host_context::{HostEnvironment, host_context};
use porthole_apps::test_support::FakeHost;
use porthole_apps::theme::{Theme, theme_context};
use porthole_mcp::{Audience, CatalogTool};
use serde_json::json;

fn chart_view(theme: Theme) -> ViewConfig {
    ViewConfig {
        view_id: "v1".into(),
        server: "demo".into(),
        tool: CatalogTool {
            server: "demo".into(),
            name: "chart".into(),
            model_name: "chart".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            ui_resource_uri: Some("ui://demo/chart".into()),
            visibility: vec![Audience::Model, Audience::App],
            widget: Default::default(),
            meta_problems: vec![],
        },
        tool_call_request_id: None,
        host_context: host_context(
            theme,
            &HostEnvironment {
                locale: "nb-NO".into(),
                time_zone: "Europe/Oslo".into(),
            },
        ),
        granted: json!({"permissions": {}, "csp": {}}),
        emulating: None,
    }
}

#[tokio::test]
async fn a_view_starts_in_the_theme_shown_and_is_told_a_switch_with_its_style_variables() {
    let (bridge, mut to_view, _actions) =
        ViewBridge::new(chart_view(Theme::Light), Arc::new(FakeHost::without_servers()));
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(5), to_view.recv())
            .await
            .expect("a message to the view")
            .expect("the channel is open")
    };
    bridge.receive(json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26"}}));
    let answer = next().await;
    let context = &answer["result"]["hostContext"];
    assert_eq!(context["theme"], "light");
    assert_eq!(context["styles"]["variables"]["--color-background-primary"], "#ffffff");
    assert_eq!(context["displayMode"], "inline", "the rest of the context is there too");
    assert_eq!(context["availableDisplayModes"], json!(["inline", "fullscreen", "pip"]));
    assert_eq!(context["containerDimensions"], json!({"maxHeight": MAX_VIEW_HEIGHT}));
    assert_eq!(context["locale"], "nb-NO");
    assert_eq!(context["timeZone"], "Europe/Oslo");
    assert_eq!(
        context["toolInfo"]["tool"]["_meta"]["ui"]["resourceUri"],
        "ui://demo/chart"
    );
    bridge.receive(json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}));

    // What the app gives every live bridge when the theme shown changes.
    bridge.host_context_changed(theme_context(Theme::Dark));
    let told = next().await;
    assert_eq!(told["method"], "ui/notifications/host-context-changed");
    assert_eq!(told["params"]["theme"], "dark");
    let variables = told["params"]["styles"]["variables"]
        .as_object()
        .expect("the style variables");
    assert_eq!(variables.len(), 76);
    assert_eq!(variables["--color-background-primary"], "#1c1d21");
    assert_eq!(variables["--color-text-primary"], "#ececf1");
    assert_eq!(
        told["params"].as_object().unwrap().len(),
        2,
        "only the theme's part: {told}"
    );

    // The same theme again tells the view nothing; back to light tells it again.
    bridge.host_context_changed(theme_context(Theme::Dark));
    bridge.host_context_changed(theme_context(Theme::Light));
    let told = next().await;
    assert_eq!(told["params"]["theme"], "light");
    assert_eq!(
        told["params"]["styles"]["variables"]["--color-background-primary"],
        "#ffffff"
    );
    assert!(to_view.try_recv().is_err(), "nothing more");
}

#[tokio::test]
async fn a_resized_container_tells_the_view_its_width_and_the_height_limit() {
    let (bridge, mut to_view, _actions) =
        ViewBridge::new(chart_view(Theme::Dark), Arc::new(FakeHost::without_servers()));
    bridge.receive(json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}}));
    bridge.receive(json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}));
    let answer = to_view.recv().await.expect("the initialize answer");
    assert_eq!(answer["result"]["hostContext"]["theme"], "dark");

    bridge.host_context_changed(json!({ "containerDimensions": container_dimensions(Some(640.4)) }));
    let told = to_view.recv().await.expect("the change");
    assert_eq!(
        told["params"],
        json!({"containerDimensions": {"maxHeight": 4000, "maxWidth": 640.0}})
    );
}
