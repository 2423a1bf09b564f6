//! Porthole's app layer, with no Tauri: everything the desktop app does that needs no window.
//! The turn lifecycle (claims, approvals, retry and edit), tools-panel runs, the views of tool
//! calls (their registry, persistence, downloads and pop-outs), model and general settings,
//! MCP server editing, servers' questions, and the headless commands.
//!
//! [`Host`] is the app's state; each window command of the shell is a call to one of its
//! methods. It talks outward only through [`ports::Outbox`] (events for a window) and
//! [`ports::Desktop`] (save dialogs, the system theme, the browser, pop-out windows), so its
//! tests run with a recording outbox, the real store and real MCP servers — no window.

pub mod approvals;
pub mod attachments;
pub mod call_arguments;
pub mod check;
pub mod contract;
pub mod conversations;
pub mod doctor;
pub mod error;
pub mod exit;
pub mod export;
pub mod headless;
pub mod hot_reload;
pub mod live;
pub mod memory;
pub mod model;
pub mod pop_outs;
pub mod ports;
pub mod prompts;
pub mod questions;
pub mod remote_agents;
pub mod roots;
pub mod sampling;
pub mod scroll_positions;
pub mod server_install;
pub mod server_settings;
pub mod settings;
pub mod setup;
pub mod single_instance;
pub mod terminal;
pub mod theme;
pub mod tool_runs;
pub mod turns;
pub mod view_cache;
pub mod view_origins;
pub mod views;
pub mod window_placement;
pub mod workbench;

use std::sync::{Arc, Mutex};

use porthole_agent::ModelContext;
use porthole_mcp::{ConfigProblem, ElicitationPolicy, ElicitationRequest, LoadedConfig, SamplingRequest, Servers};
use porthole_secrets::SecretStore;
use porthole_store::Store;
use serde::Serialize;
use ts_rs::TS;

pub use error::{AppError, AppResult, ErrorCode};
pub use model::ModelFlags;
pub use ports::{Desktop, MAIN_WINDOW, Outbound, Outbox, POP_OUT_PREFIX};
pub use setup::Setup;

use crate::pop_outs::PopOuts;
use crate::questions::Questions;
use crate::server_settings::ServerConfigFiles;
use crate::turns::Turns;
use crate::views::Views;

/// What the window shows about this run of the app.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub profile_dir: String,
    pub config_file: String,
    /// Problems found in config files, one line each (file:line: server, field: message).
    pub config_problems: Vec<String>,
    pub mcp_apps: bool,
    /// Why the conversation store cannot be used, when it cannot (`store_damaged`: it can be
    /// moved aside with `recover_store`).
    pub store_problem: Option<AppError>,
}

impl AppInfo {
    /// The config files changed (in the settings): their problems and the MCP Apps switch now.
    pub fn config_changed(&mut self, problems: &[ConfigProblem], mcp_apps: bool) {
        self.config_problems = problems.iter().map(ConfigProblem::to_string).collect();
        self.mcp_apps = mcp_apps;
    }
}

/// The page key of the profile in `profile_dir`: the same for the same folder from start to
/// start (and from version to version), another for another folder, and not the folder's name
/// (its 64-bit FNV-1a hash, as 16 hex digits). Computed here rather than with a hashing crate:
/// a new dependency of this crate renames its functions, and the release build's link order
/// (src-tauri/link-order/README.md) would no longer find them.
pub fn page_key(profile_dir: &str) -> String {
    let hash = profile_dir.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// What a [`Host`] starts from.
pub struct HostOptions {
    pub setup: Setup,
    /// The command line's model flags (they win over the settings, for this run only).
    pub model_flags: ModelFlags,
    /// The OS keyring for API keys (opened on first need).
    pub keyring: Arc<dyn SecretStore>,
    /// Whether what the window's first paint does not need waits for the window to be ready
    /// ([`Host::ui_ready`], at most [`WINDOW_WAIT_AT_MOST`]): the servers' connections (their
    /// processes) and finding whether a model is set up (which opens the keyring). `false`: they
    /// start at once (the command line, tests).
    pub start_after_window: bool,
}

impl HostOptions {
    /// A host on the profile in `dir`, its API keys kept in memory (not the OS keyring) and its
    /// servers connected at once: how tests and benchmarks start one.
    pub fn for_profile(dir: &std::path::Path, model_flags: ModelFlags) -> anyhow::Result<HostOptions> {
        Ok(HostOptions {
            setup: Setup::new(Some(dir), &[])?,
            model_flags,
            keyring: Arc::new(porthole_secrets::MemorySecrets::default()),
            start_after_window: false,
        })
    }
}

/// How long the host waits for the window before starting anyway (a page that never says it is
/// ready must not leave the servers unconnected).
pub const WINDOW_WAIT_AT_MOST: std::time::Duration = std::time::Duration::from_secs(3);

/// The app's state: the servers, the store, the turns running, the views shown, the settings.
/// Cheap to clone; every clone is the same app.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    pub(crate) servers: Servers,
    pub(crate) store: Result<Store, AppError>,
    /// The store's file (the profile's `porthole.db`).
    pub(crate) database_file: std::path::PathBuf,
    pub(crate) model_flags: ModelFlags,
    pub(crate) keyring: Arc<dyn SecretStore>,
    pub(crate) context: ModelContext,
    pub(crate) turns: Turns,
    pub(crate) questions: Questions,
    pub(crate) samplings: sampling::ServerSamplings,
    pub(crate) views: Views,
    pub(crate) pop_outs: PopOuts,
    pub(crate) config_files: ServerConfigFiles,
    /// The install link waiting for the person's answer (the latest one opened).
    pub(crate) install_request: Mutex<Option<server_install::ServerInstallRequest>>,
    pub(crate) window_placements: window_placement::WindowPlacements,
    pub(crate) scroll_positions: scroll_positions::ScrollPositions,
    /// Hot reload has started (with the main window: the command line has no use for it).
    pub(crate) hot_reload: std::sync::Once,
    /// Set when the window is ready: the servers waiting for it connect.
    pub(crate) window_ready: tokio::sync::watch::Sender<bool>,
    pub(crate) info: Mutex<AppInfo>,
    pub(crate) outbox: Arc<dyn Outbox>,
    pub(crate) desktop: Arc<dyn Desktop>,
    pub(crate) runtime: tokio::runtime::Handle,
}

impl Host {
    /// Loads the config files, starts every server (in the background, in parallel), opens the
    /// store, and starts forwarding servers' questions and state changes to the main window.
    /// Its background work runs on `runtime`.
    pub fn start(
        options: HostOptions,
        outbox: Arc<dyn Outbox>,
        desktop: Arc<dyn Desktop>,
        runtime: tokio::runtime::Handle,
    ) -> Host {
        let setup = options.setup;
        let mut loaded = LoadedConfig::load(&setup.config_files);
        if let Some(only) = &setup.only_server {
            loaded.servers.retain(|s| &s.name == only);
            for server in &mut loaded.servers {
                server.enabled = true;
            }
        }
        for problem in &loaded.problems {
            tracing::warn!("config: {problem}");
        }
        let mcp_apps = loaded.mcp_apps_enabled();
        let database_file = setup.profile.database_file();
        let store = Store::open(&database_file).map_err(|e| {
            tracing::error!("{e}");
            let e = AppError::from(e);
            AppError::new(
                e.code,
                format!("the conversation store cannot be opened: {}", e.message),
            )
        });
        let info = AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            profile_dir: setup.profile.data_dir().display().to_string(),
            config_file: setup.profile.config_file().display().to_string(),
            config_problems: loaded.problems.iter().map(ConfigProblem::to_string).collect(),
            mcp_apps,
            store_problem: store.as_ref().err().cloned(),
        };
        let (questions_tx, mut questions_rx) = tokio::sync::mpsc::channel::<ElicitationRequest>(8);
        let (sampling_tx, mut sampling_rx) = tokio::sync::mpsc::channel::<SamplingRequest>(8);
        let mut connect = setup.connect_options(mcp_apps, ElicitationPolicy::Ask(questions_tx));
        connect.sampling = Some(sampling_tx);
        connect.roots = Some(roots::source(store.as_ref().ok().cloned()));
        let start_after_window = options.start_after_window;
        let window_ready = tokio::sync::watch::channel(false).0;
        let servers = {
            let _entered = runtime.enter();
            if start_after_window {
                let mut ready = window_ready.subscribe();
                Servers::start_after(loaded.servers, connect, async move {
                    let _ = tokio::time::timeout(WINDOW_WAIT_AT_MOST, ready.wait_for(|r| *r)).await;
                })
            } else {
                Servers::start(loaded.servers, connect)
            }
        };
        let context = ModelContext::default();
        let views = Views::new(
            servers.clone(),
            store.as_ref().ok().cloned(),
            context.clone(),
            outbox.clone(),
            desktop.clone(),
            runtime.clone(),
        );
        views.prefetch_views();
        views.forward_list_changes();
        let host = Host {
            inner: Arc::new(HostInner {
                servers: servers.clone(),
                store,
                database_file,
                model_flags: options.model_flags,
                keyring: options.keyring,
                context,
                turns: Turns::default(),
                questions: Questions::default(),
                samplings: sampling::ServerSamplings::default(),
                views,
                pop_outs: PopOuts::default(),
                config_files: ServerConfigFiles::new(setup.config_files.clone()),
                install_request: Mutex::new(None),
                window_placements: window_placement::WindowPlacements::new(
                    setup.profile.data_dir().join("window.json"),
                ),
                scroll_positions: scroll_positions::ScrollPositions::new(setup.profile.data_dir().join("scroll.json")),
                hot_reload: std::sync::Once::new(),
                window_ready,
                info: Mutex::new(info),
                outbox,
                desktop,
                runtime: runtime.clone(),
            }),
        };
        host.inner.views.set_sampler(Arc::new(crate::model::HostSampler::new(
            Arc::downgrade(&host.inner),
            start_after_window,
        )));
        // A stored conversation's remote views reach their servers through its agent, as the
        // config names it now.
        let weak = Arc::downgrade(&host.inner);
        host.inner.views.set_agents(Arc::new(move |name: &str| {
            let inner = weak.upgrade()?;
            Host { inner }.remote_agent(name).ok()
        }));

        // Each server question is held until the window answers it.
        let this = host.clone();
        runtime.spawn(async move {
            while let Some(request) = questions_rx.recv().await {
                let question = this.inner.questions.ask(request);
                this.inner.outbox.send(MAIN_WINDOW, Outbound::Question(question));
            }
        });
        // Each server sampling request runs (asking the person) on its own.
        let this = host.clone();
        runtime.spawn(async move {
            while let Some(request) = sampling_rx.recv().await {
                let host = this.clone();
                tokio::spawn(async move { host.serve_sampling(request).await });
            }
        });
        // Every change of a server's state reaches the window as one event.
        let this = host.clone();
        let mut changes = servers.subscribe();
        runtime.spawn(async move {
            while changes.changed().await.is_ok() {
                let statuses = changes.borrow_and_update().clone();
                this.inner.outbox.send(MAIN_WINDOW, Outbound::ServersChanged(statuses));
            }
        });
        host
    }

    /// The running servers.
    pub fn servers(&self) -> &Servers {
        &self.inner.servers
    }

    /// The views of tool calls (the shell's scheme handler serves their tokens).
    pub fn views(&self) -> &Views {
        &self.inner.views
    }

    /// The store, or why there is none.
    pub fn store(&self) -> AppResult<&Store> {
        self.inner.store.as_ref().map_err(Clone::clone)
    }

    /// The main window's composer can take input: work kept off the start-up path begins
    /// (views' HTML read ahead; watched servers' files and resources looked at, for hot
    /// reload, which only the app needs).
    pub fn ui_ready(&self) {
        self.inner.window_ready.send_replace(true);
        self.inner.views.window_ready();
        self.inner.hot_reload.call_once(|| self.start_hot_reload());
    }

    pub fn app_info(&self) -> AppInfo {
        self.inner.info.lock().unwrap().clone()
    }

    /// What the window's page keeps what it remembers between starts under (its theme, the
    /// sidebar's height): the engine's storage is the user's, shared by every profile, so each
    /// profile's page keeps its own. See [`page_key`].
    pub fn page_key(&self) -> String {
        page_key(&self.inner.info.lock().unwrap().profile_dir)
    }

    pub fn list_servers(&self) -> Vec<porthole_mcp::ServerStatus> {
        self.inner.servers.statuses()
    }

    pub fn list_questions(&self) -> Vec<questions::Question> {
        self.inner.questions.list()
    }

    /// The person's answer to a server's question. Accepting a URL-mode question opens its page
    /// in the system browser first (web pages only), and the opening is audited; the server
    /// hears `accept` only once it is open.
    pub fn answer_elicitation(
        &self,
        id: u64,
        action: questions::ElicitationAction,
        content: Option<serde_json::Value>,
    ) -> AppResult<()> {
        let questions = &self.inner.questions;
        if action == questions::ElicitationAction::Accept
            && let Some(question) = questions.list().into_iter().find(|q| q.id == id)
            && let Some(url) = &question.url
        {
            questions::check_page_url(url)?;
            self.inner
                .desktop
                .open_url(url)
                .map_err(|e| AppError::server(format!("the browser could not be opened: {e}")))?;
            if let Ok(store) = self.store() {
                let entry = porthole_store::NewAuditEntry {
                    kind: porthole_store::AuditKind::Other("elicitation-url".into()),
                    conversation_id: None,
                    server: Some(question.server.clone()),
                    tool: None,
                    uri: Some(url.clone()),
                    detail: serde_json::json!({"outcome": "opened"}),
                };
                if let Err(e) = store.audit(&entry) {
                    tracing::error!("cannot write the audit log: {e}");
                }
            }
            return questions.answer(id, action, Some(serde_json::Value::Null));
        }
        questions.answer(id, action, content)
    }

    /// Moves a damaged conversation store aside (kept as `porthole.db.damaged-<time>`), creates
    /// a fresh one and restarts the app with it; says where the old file went. Refused when the
    /// store is not damaged.
    pub fn recover_store(&self) -> AppResult<String> {
        match &self.inner.store {
            Err(e) if e.code == ErrorCode::StoreDamaged => {}
            Err(e) => return Err(e.clone()),
            Ok(_) => {
                return Err(AppError::invalid(
                    "the conversation store is not damaged; nothing was moved",
                ));
            }
        }
        let (_, kept) = Store::recover(&self.inner.database_file)?;
        self.inner.desktop.restart();
        Ok(format!(
            "The damaged store was kept as {}; Porthole restarts with a fresh one.",
            kept.display()
        ))
    }

    /// Ends every server's connection and records the store as left sound (the app is closing;
    /// the process may end without dropping the store).
    pub async fn shutdown(&self) {
        self.keep_window_placement();
        self.keep_scroll_positions();
        self.inner.servers.shutdown().await;
        if let Ok(store) = &self.inner.store {
            store.close_cleanly();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::page_key;

    #[test]
    fn each_profile_folder_has_its_own_page_key() {
        let home = page_key("/home/ada/.local/share/porthole");
        assert_eq!(
            home,
            page_key("/home/ada/.local/share/porthole"),
            "the same from start to start"
        );
        assert_ne!(home, page_key("/home/ada/work-profile"));
        assert_eq!(home.len(), 16);
        assert!(
            home.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{home}"
        );
        // FNV-1a's own check values: the key stays what it is from version to version.
        assert_eq!(page_key(""), "cbf29ce484222325");
        assert_eq!(page_key("a"), "af63dc4c8601ec8c");
    }
}
