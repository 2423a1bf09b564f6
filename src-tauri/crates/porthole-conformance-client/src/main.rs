//! `porthole-conformance-client URL`: what the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client --command …`) runs for each client scenario.
//!
//! The scenario's name is in `MCP_CONFORMANCE_SCENARIO` (extra data, if any, in
//! `MCP_CONFORMANCE_CONTEXT`). It does what Porthole does with a server: connect over Streamable
//! HTTP through `porthole-mcp`, list the tools, and call each one with arguments made from its
//! input schema, answering elicitation with the schema's defaults. Run it with `make conformance`.
//!
//! `PORTHOLE_CLIENT_METADATA_URL` is the client-ID metadata document URL it signs in with where
//! the authorization server supports CIMD (`tests/conformance/run` sets the one the suite's
//! `auth/basic-cimd` expects); `PORTHOLE_AUTHORIZER=browser` signs in through the system browser.

use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use porthole_mcp::oauth::{Authorizer, FollowRedirect, KeyringTokens, OAuth, SystemBrowser, check_client_metadata_url};
use porthole_mcp::{CallOptions, ConnectOptions, ElicitationPolicy, ServerConfig, ServerState, Servers};
use serde_json::{Map, Value, json};

/// A plausible value for a JSON Schema property: its default, its first enum value, else a
/// small value of its type.
fn sample(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number") | Some("integer") => json!(2),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => Value::Object(arguments(schema)),
        _ => json!("conformance"),
    }
}

fn arguments(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(k, v)| (k.clone(), sample(v))).collect())
        .unwrap_or_default()
}

#[tokio::main]
async fn main() -> ExitCode {
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PORTHOLE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    if let Err(e) = subscriber {
        // Only another subscriber set first makes this fail; logging then goes there.
        eprintln!("logging stays with the subscriber already set: {e}");
    }
    let Some(url) = std::env::args().nth(1).filter(|u| u.starts_with("http")) else {
        eprintln!("usage: porthole-conformance-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");

    let config = ServerConfig::http("conformance", url).with_timeout(Duration::from_secs(20));
    // The suite's authorization servers approve without a person: fetch the page and take the
    // redirect. Tokens go through the same keyring adapter the app uses, over an in-memory store.
    let secrets = Arc::new(porthole_secrets::MemorySecrets::default());
    // PORTHOLE_AUTHORIZER=browser signs in the way the desktop app does: the system browser
    // ($BROWSER) and a loopback redirect.
    let authorizer: Arc<dyn Authorizer> = match std::env::var("PORTHOLE_AUTHORIZER").as_deref() {
        Ok("browser") => Arc::new(SystemBrowser),
        _ => Arc::new(FollowRedirect),
    };
    let mut oauth = OAuth::new(authorizer, Arc::new(KeyringTokens(secrets)));
    // PORTHOLE_CLIENT_METADATA_URL is Porthole's client-ID metadata document URL, the client_id
    // for authorization servers that support CIMD (others get a dynamic registration).
    oauth.client_metadata_url = std::env::var("PORTHOLE_CLIENT_METADATA_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT")
        && let Ok(context) = serde_json::from_str::<Value>(&context)
    {
        oauth.client_id = context["client_id"].as_str().map(str::to_string);
        oauth.client_secret = context["client_secret"].as_str().map(str::to_string);
        if let Some(url) = context["client_metadata_url"].as_str() {
            oauth.client_metadata_url = Some(url.to_string());
        }
    }
    if let Some(url) = &oauth.client_metadata_url
        && let Err(e) = check_client_metadata_url(url)
    {
        eprintln!("unusable client metadata document URL: {e}");
        return ExitCode::from(2);
    }
    let options = ConnectOptions {
        elicitation: ElicitationPolicy::AcceptDefaults,
        oauth: Some(oauth),
        ..Default::default()
    };
    let servers = Servers::start(vec![config], options);
    let status = servers.settled().await.remove(0);
    if status.state != ServerState::Connected {
        eprintln!("cannot connect: {}", status.error.unwrap_or_default());
        return ExitCode::FAILURE;
    }
    let mut failed = false;
    for tool in &status.tools {
        let args = arguments(&tool.input_schema);
        match servers
            .call_tool(&status.name, &tool.name, Some(args), CallOptions::default())
            .await
        {
            Ok(outcome) => eprintln!(
                "{}: {}",
                tool.name,
                serde_json::to_string(&outcome.model).unwrap_or_default()
            ),
            Err(e) => {
                eprintln!("{}: {e}", tool.name);
                failed = true;
            }
        }
    }
    servers.shutdown().await;
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_come_from_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "s": {"type": "string", "default": "x"},
            "e": {"type": "string", "enum": ["p", "q"]}, "o": {"type": "object", "properties": {"b": {"type": "boolean"}}}
        }});
        assert_eq!(
            Value::Object(arguments(&schema)),
            json!({"a": 2, "s": "x", "e": "p", "o": {"b": true}})
        );
    }
}
