//! The desktop shell: one window, a handful of commands, and the security hooks. Everything it
//! does that needs no window lives in the `porthole-*` crates.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use anyhow::{Context, Result};
use porthole_mcp::{
    ConfigProblem, ElicitationAnswer, ElicitationPolicy, ElicitationRequest, LoadedConfig, ServerStatus, Servers,
};
use serde::Serialize;
use tauri::webview::{NewWindowResponse, PermissionResponse};
use tauri::{Emitter, Manager, Url, WebviewUrl, WebviewWindowBuilder};

use crate::cli::Setup;

/// The label of the app's own webview; the only one granted a capability.
pub const MAIN_WEBVIEW: &str = "main";

/// A server's question waiting for the person's answer in the window.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Question {
    id: u64,
    server: String,
    message: String,
    schema: Option<serde_json::Value>,
    url: Option<String>,
}

#[derive(Default)]
struct Questions {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, (Question, tokio::sync::oneshot::Sender<ElicitationAnswer>)>>,
}

struct AppState {
    questions: Questions,
    servers: Servers,
    info: AppInfo,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct AppInfo {
    version: &'static str,
    profile_dir: String,
    config_file: String,
    /// Problems found in config files, one line each (file:line: server, field: message).
    config_problems: Vec<String>,
    mcp_apps: bool,
}

#[tauri::command]
fn app_info(state: tauri::State<'_, AppState>) -> AppInfo {
    state.info.clone()
}

/// The person's answer to a server's question: `accept` (with `content`), `decline` or `cancel`.
#[tauri::command]
fn answer_elicitation(
    state: tauri::State<'_, AppState>,
    id: u64,
    action: String,
    content: Option<serde_json::Value>,
) -> Result<(), String> {
    let answer = match (action.as_str(), content) {
        ("accept", Some(content)) if content.is_object() => ElicitationAnswer::Accept(content),
        ("accept", _) => return Err("accept needs the answer as an object".into()),
        ("decline", _) => ElicitationAnswer::Decline,
        ("cancel", _) => ElicitationAnswer::Cancel,
        (other, _) => return Err(format!("unknown action {other:?}")),
    };
    let waiting = state.questions.waiting.lock().unwrap().remove(&id);
    let (_, respond) = waiting.ok_or("that question was already answered")?;
    respond
        .send(answer)
        .map_err(|_| "the server stopped waiting for this answer".to_string())
}

/// Questions asked before the window was listening, or still unanswered.
#[tauri::command]
fn list_questions(state: tauri::State<'_, AppState>) -> Vec<Question> {
    let mut all: Vec<Question> = state
        .questions
        .waiting
        .lock()
        .unwrap()
        .values()
        .map(|(q, _)| q.clone())
        .collect();
    all.sort_by_key(|q| q.id);
    all
}

#[tauri::command]
fn list_servers(state: tauri::State<'_, AppState>) -> Vec<ServerStatus> {
    state.servers.statuses()
}

static STARTED: OnceLock<Instant> = OnceLock::new();

/// Called once by the front end when the composer can take input. With
/// `PORTHOLE_REPORT_READY=1` it prints `porthole-ready <ms since start>` on stdout, which is how
/// the start-up benchmark measures.
#[tauri::command]
fn ui_ready() {
    let ms = STARTED.get().map(|t| t.elapsed().as_millis()).unwrap_or(0);
    tracing::info!(ms, "composer ready");
    if std::env::var_os("PORTHOLE_REPORT_READY").is_some() {
        println!("porthole-ready {ms}");
    }
}

/// Whether the main webview may navigate to `url`: only the app's own pages.
fn navigation_allowed(url: &Url) -> bool {
    match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        "about" => url.as_str() == "about:blank" || url.as_str() == "about:srcdoc",
        _ => false,
    }
}

pub fn run(setup: Setup) -> Result<()> {
    STARTED.get_or_init(Instant::now);
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        tracing::warn!("config: {problem}");
    }
    let mcp_apps = loaded.mcp_apps_enabled();
    let info = AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        profile_dir: setup.profile.data_dir().display().to_string(),
        config_file: setup.profile.config_file().display().to_string(),
        config_problems: loaded.problems.iter().map(ConfigProblem::to_string).collect(),
        mcp_apps,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    tauri::async_runtime::set(runtime.handle().clone());
    let (questions_tx, mut questions_rx) = tokio::sync::mpsc::channel::<ElicitationRequest>(8);
    let options = setup.connect_options(mcp_apps, ElicitationPolicy::Ask(questions_tx));
    let servers = runtime.block_on(async { Servers::start(loaded.servers, options) });

    let app = tauri::Builder::default()
        .manage(AppState {
            questions: Questions::default(),
            servers: servers.clone(),
            info,
        })
        .invoke_handler(tauri::generate_handler![
            app_info,
            list_servers,
            ui_ready,
            answer_elicitation,
            list_questions
        ])
        .setup(move |app| {
            WebviewWindowBuilder::new(app, MAIN_WEBVIEW, WebviewUrl::App("index.html".into()))
                .title("Porthole")
                .inner_size(1180.0, 800.0)
                .min_inner_size(640.0, 480.0)
                .on_navigation(|url| {
                    let ok = navigation_allowed(url);
                    if !ok {
                        tracing::warn!(%url, "navigation refused");
                    }
                    ok
                })
                .on_new_window(|url, _| {
                    tracing::warn!(%url, "new window refused");
                    NewWindowResponse::Deny
                })
                .on_download(|_, _| {
                    tracing::warn!("download refused");
                    false
                })
                .on_permission_request(|_, kind| {
                    tracing::warn!(?kind, "permission request refused");
                    PermissionResponse::Deny
                })
                .build()?;

            // Every change of a server's state reaches the front end as one event.
            // Each server question is held until the window answers it.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                while let Some(request) = questions_rx.recv().await {
                    let state = handle.state::<AppState>();
                    let id = state.questions.next.fetch_add(1, Ordering::Relaxed);
                    let question = Question {
                        id,
                        server: request.server,
                        message: request.message,
                        schema: request.schema,
                        url: request.url,
                    };
                    state
                        .questions
                        .waiting
                        .lock()
                        .unwrap()
                        .insert(id, (question.clone(), request.respond));
                    tracing::info!(id, server = %question.server, "asking the user");
                    let _ = handle.emit_to(MAIN_WEBVIEW, "elicitation-requested", question);
                }
            });

            let handle = app.handle().clone();
            let mut changes = servers.subscribe();
            tauri::async_runtime::spawn(async move {
                while changes.changed().await.is_ok() {
                    let statuses = changes.borrow_and_update().clone();
                    let _ = handle.emit_to(MAIN_WEBVIEW, "servers-changed", statuses);
                }
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("cannot start the window")?;

    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            let state = handle.state::<AppState>();
            tauri::async_runtime::block_on(state.servers.shutdown());
        }
    });
    drop(runtime);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_apps_own_pages_are_navigable() {
        for ok in ["tauri://localhost/index.html", "http://tauri.localhost/"] {
            assert!(navigation_allowed(&Url::parse(ok).unwrap()), "{ok}");
        }
        for bad in [
            "https://evil.example/",
            "http://localhost:1420/",
            "tauri://evil/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,hi",
            "http://tauri.localhost.evil.example/",
        ] {
            assert!(!navigation_allowed(&Url::parse(bad).unwrap()), "{bad}");
        }
    }
}
