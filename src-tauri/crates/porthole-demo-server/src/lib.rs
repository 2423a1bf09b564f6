//! The demo MCP App server that ships inside Porthole (`porthole demo-server`, stdio).
//!
//! It is configured in every fresh profile so a new user sees UI tools at once, and it exercises
//! each part of the MCP Apps extension a host has to get right:
//!
//! | tool                | what it shows                                                          |
//! |---------------------|------------------------------------------------------------------------|
//! | `system_monitor`    | a UI tool returning text plus `structuredContent` (this machine's CPU, memory, top processes) |
//! | `poll_system_stats` | an app-only tool (`visibility: ["app"]`) that the monitor view calls to refresh |
//! | `list_directory`    | a UI tool whose view browses folders by calling the tool again          |
//! | `sha256`            | a model-only tool (`visibility: ["model"]`)                             |
//! | `sample_cpu`        | progress notifications over a few seconds                               |
//! | `weather`           | a view whose CSP declares `connectDomains` (Open-Meteo's key-less forecast API) |
//!
//! The views are built from `ui/demo-views/` with the official `@modelcontextprotocol/ext-apps`
//! SDK at build time and embedded here, so the demo also proves Porthole interoperates with it.

mod idle;
mod stdio;
mod system;
mod views;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, Implementation, ListResourcesResult, MetaObject, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, RequestMetaObject,
    Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub use views::{DemoView, VIEWS};

/// The MIME type of an MCP App view resource.
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";

/// The whole program `name` (`porthole demo-server`, `porthole-demo-server`): logs to stderr
/// (stdout carries the protocol; Porthole files a server's stderr), then serves on stdio until
/// the client closes the pipe.
pub fn run_on_stdio(name: &str) -> anyhow::Result<()> {
    let logging = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PORTHOLE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    if let Err(e) = logging {
        eprintln!("{name}: no log output: {e}");
    }
    tracing::info!("{name} {} on stdio", env!("CARGO_PKG_VERSION"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve_stdio())
}

/// Serves the demo server on stdin/stdout until the client closes the pipe.
pub async fn serve_stdio() -> anyhow::Result<()> {
    let (stdout, bursts) = idle::BurstWatch::new(stdio::stdout());
    tokio::spawn(idle::give_back_memory_after(bursts));
    let service = DemoServer::new()
        .serve((stdio::answers(stdout), stdio::requests()))
        .await?;
    service.waiting().await?;
    Ok(())
}

#[derive(Clone)]
pub struct DemoServer {
    #[allow(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

impl Default for DemoServer {
    fn default() -> Self {
        Self::new()
    }
}

fn ui_meta(resource_uri: &str, visibility: Option<&[&str]>) -> MetaObject {
    let mut ui = json!({ "resourceUri": resource_uri });
    if let Some(v) = visibility {
        ui["visibility"] = json!(v);
    }
    let mut meta = MetaObject::default();
    meta.0.insert("ui".into(), ui);
    meta
}

fn visibility_meta(visibility: &[&str]) -> MetaObject {
    let mut meta = MetaObject::default();
    meta.0.insert("ui".into(), json!({ "visibility": visibility }));
    meta
}

fn text_and_structured(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirectoryArgs {
    /// The folder to list; the user's home folder when absent.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Sha256Args {
    /// The text to hash (UTF-8).
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SampleCpuArgs {
    /// How many seconds to sample for, 1 to 10 (default 3).
    #[serde(default)]
    pub seconds: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// Latitude in degrees, -90 to 90 (north is positive).
    pub latitude: f64,
    /// Longitude in degrees, -180 to 180 (east is positive).
    pub longitude: f64,
    /// The place's name, as the view should title it (e.g. "Lisbon").
    #[serde(default)]
    pub place: Option<String>,
}

#[tool_router]
impl DemoServer {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Show this computer's CPU load, memory use and busiest processes in a live monitor view.",
        meta = ui_meta(views::SYSTEM_MONITOR.uri, None)
    )]
    async fn system_monitor(&self) -> CallToolResult {
        let snapshot = system::snapshot().await;
        text_and_structured(snapshot.summary(), snapshot.to_json())
    }

    #[tool(
        description = "Fresh CPU and memory figures for the system monitor view. Called by the view, not offered to the model.",
        meta = ui_meta(views::SYSTEM_MONITOR.uri, Some(&["app"]))
    )]
    async fn poll_system_stats(&self) -> CallToolResult {
        let snapshot = system::snapshot().await;
        text_and_structured(snapshot.summary(), snapshot.to_json())
    }

    #[tool(
        description = "List a folder's entries (name, kind, size, last modified) in a browsable view.",
        meta = ui_meta(views::DIRECTORY.uri, None)
    )]
    async fn list_directory(&self, Parameters(args): Parameters<ListDirectoryArgs>) -> CallToolResult {
        let path = match args.path.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(p) => PathBuf::from(p),
            None => home_dir(),
        };
        match list_directory(&path).await {
            Ok(listing) => listing,
            Err(e) => tool_error(format!("Cannot list {}: {e}", path.display())),
        }
    }

    #[tool(
        description = "SHA-256 of a UTF-8 text, as lowercase hex.",
        meta = visibility_meta(&["model"])
    )]
    async fn sha256(&self, Parameters(args): Parameters<Sha256Args>) -> CallToolResult {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(args.text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        CallToolResult::success(vec![ContentBlock::text(hex)])
    }

    #[tool(
        description = "Sample this computer's CPU use every half second for a few seconds (reporting progress) and return the average and peak."
    )]
    async fn sample_cpu(
        &self,
        Parameters(args): Parameters<SampleCpuArgs>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        let seconds = args.seconds.unwrap_or(3).clamp(1, 10);
        let steps = seconds * 2;
        let token = meta.get_progress_token();
        let mut sampler = system::CpuSampler::new();
        let mut samples = Vec::with_capacity(steps as usize);
        for step in 1..=steps {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let usage = sampler.sample();
            samples.push(usage);
            if let Some(token) = &token {
                let progress = peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), step as f64)
                            .with_total(steps as f64)
                            .with_message(format!("CPU {usage:.1}% ({step}/{steps})")),
                    )
                    .await;
                // Progress is a courtesy: the sampling goes on, and the result says it all.
                if let Err(e) = progress {
                    tracing::debug!("progress notification not sent: {e}");
                }
            }
        }
        let average = samples.iter().sum::<f32>() / samples.len() as f32;
        let peak = samples.iter().copied().fold(0.0_f32, f32::max);
        text_and_structured(
            format!(
                "CPU over {seconds} s: average {average:.1}%, peak {peak:.1}% ({} samples).",
                samples.len()
            ),
            json!({ "seconds": seconds, "averagePercent": average, "peakPercent": peak, "samples": samples }),
        )
    }

    #[tool(
        description = "Open a view that shows the current weather and the next days' forecast for a place (by latitude and longitude), fetched live by the view from Open-Meteo.",
        meta = ui_meta(views::WEATHER.uri, None)
    )]
    async fn weather(&self, Parameters(args): Parameters<WeatherArgs>) -> CallToolResult {
        let (latitude, longitude) = (args.latitude, args.longitude);
        if !(latitude.is_finite() && (-90.0..=90.0).contains(&latitude)) {
            return tool_error(format!("latitude {latitude} is not between -90 and 90."));
        }
        if !(longitude.is_finite() && (-180.0..=180.0).contains(&longitude)) {
            return tool_error(format!("longitude {longitude} is not between -180 and 180."));
        }
        let place = args
            .place
            .map(|p| p.trim().chars().take(100).collect::<String>())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| format!("{latitude:.2}, {longitude:.2}"));
        let forecast_url = forecast_url(latitude, longitude);
        text_and_structured(
            format!(
                "The weather view for {place} fetches the forecast from {} itself; \
                 this tool has no weather data of its own.",
                views::WEATHER_API
            ),
            json!({ "place": place, "latitude": latitude, "longitude": longitude, "forecastUrl": forecast_url }),
        )
    }
}

#[tool_handler]
impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(
            "io.modelcontextprotocol/ui".into(),
            rmcp::object!({ "mimeTypes": [MCP_APP_MIME] }),
        );
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_extensions_with(extensions)
                .build(),
        )
        .with_server_info(
            Implementation::new("porthole-demo", env!("CARGO_PKG_VERSION")).with_title("Porthole demo MCP App server"),
        )
        .with_instructions(
            "Demo tools with interactive views: system_monitor, list_directory, weather; \
             plus sha256 and sample_cpu.",
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            VIEWS
                .iter()
                .map(|v| {
                    Resource::new(v.uri, v.name)
                        .with_mime_type(MCP_APP_MIME)
                        .with_description(v.description)
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let view = VIEWS
            .iter()
            .find(|v| v.uri == request.uri)
            .ok_or_else(|| ErrorData::resource_not_found(format!("no resource {}", request.uri), None))?;
        let mut contents = ResourceContents::text(view.html(), view.uri).with_mime_type(MCP_APP_MIME);
        if let Some(meta) = view.resource_meta() {
            contents = contents.with_meta(meta);
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Entries past this many are counted but not listed, so a huge folder stays a small result.
const MAX_ENTRIES: usize = 500;

async fn list_directory(path: &Path) -> std::io::Result<CallToolResult> {
    let mut reader = tokio::fs::read_dir(path).await?;
    let mut entries = Vec::new();
    let mut total = 0usize;
    while let Some(entry) = reader.next_entry().await? {
        total += 1;
        if entries.len() >= MAX_ENTRIES {
            continue;
        }
        let meta = entry.metadata().await.ok();
        let kind = match entry.file_type().await {
            Ok(t) if t.is_dir() => "folder",
            Ok(t) if t.is_symlink() => "link",
            Ok(_) => "file",
            Err(_) => "unknown",
        };
        let modified = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        entries.push(json!({
            "name": entry.file_name().to_string_lossy(),
            "kind": kind,
            "size": meta.as_ref().filter(|m| m.is_file()).map(|m| m.len()),
            "modifiedUnix": modified,
        }));
    }
    entries.sort_by(|a, b| {
        let key = |v: &Value| (v["kind"] != "folder", v["name"].as_str().unwrap_or("").to_lowercase());
        key(a).cmp(&key(b))
    });
    let shown: Vec<String> = entries
        .iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap_or("");
            if e["kind"] == "folder" {
                format!("{name}/")
            } else {
                name.to_string()
            }
        })
        .collect();
    let canonical = tokio::fs::canonicalize(path)
        .await
        .unwrap_or_else(|_| path.to_path_buf());
    let mut text = format!("{} ({} entries", canonical.display(), total);
    if total > entries.len() {
        text.push_str(&format!(", first {} listed", entries.len()));
    }
    text.push_str("):\n");
    text.push_str(&shown.join("\n"));
    Ok(text_and_structured(
        text,
        json!({
            "path": canonical.to_string_lossy(),
            "parent": canonical.parent().map(|p| p.to_string_lossy().into_owned()),
            "total": total,
            "entries": entries,
        }),
    ))
}

/// Open-Meteo's forecast for a place: the current temperature, wind and weather, and three
/// days' highs and lows, in the place's own time zone.
fn forecast_url(latitude: f64, longitude: f64) -> String {
    format!(
        "{}/v1/forecast?latitude={latitude:.4}&longitude={longitude:.4}\
         &current=temperature_2m,wind_speed_10m,weather_code\
         &daily=temperature_2m_max,temperature_2m_min,weather_code&forecast_days=3&timezone=auto",
        views::WEATHER_API
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forecast_is_asked_of_the_declared_origin_only() {
        let url = forecast_url(38.7223, -9.1393);
        assert!(url.starts_with("https://api.open-meteo.com/v1/forecast?"), "{url}");
        assert!(url.contains("latitude=38.7223&longitude=-9.1393&"), "{url}");
        assert!(views::WEATHER.connect_domains.contains(&views::WEATHER_API));
    }

    #[tokio::test]
    async fn directory_listing_has_text_and_structured_content() {
        let dir = std::env::temp_dir().join(format!("porthole-demo-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.txt"), "hello").unwrap();
        let result = list_directory(&dir).await.unwrap();
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured["total"], 2);
        assert_eq!(structured["entries"][0]["name"], "sub");
        assert_eq!(structured["entries"][0]["kind"], "folder");
        assert_eq!(structured["entries"][1]["size"], 5);
        let text = result.content[0].as_text().unwrap().text.clone();
        assert!(text.contains("sub/\na.txt"), "{text}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
