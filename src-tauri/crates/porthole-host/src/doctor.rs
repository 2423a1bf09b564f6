//! `porthole doctor`: what a working install needs, each checked and said with a fix — the web
//! engine, a display, the Secret Service (and whether it is unlocked), a model's API key, the
//! programs the configured servers are started with (Node's `npx`, `uvx`, …), the profile's
//! config and conversation store, and each enabled server's connection.
//!
//! Exit 1 when something required is missing or broken ([`Status::Fail`]); what is only
//! recommended (a keyring, a key) is a warning.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use porthole_agent::providers::{ProviderKind, key_env_var};
use porthole_mcp::{ElicitationPolicy, LoadedConfig, ServerState, Servers, Transport};
use porthole_secrets::{OsKeyring, SecretStore};
use serde::Serialize;

use crate::model::{ModelChoice, ModelFlags, key_entry};
use crate::setup::Setup;

/// How a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Recommended, or needed only for some uses: the app works without it.
    Warn,
    /// Required: the app, or a configured server, cannot work until it is fixed.
    Fail,
}

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// What was checked, e.g. "Secret Service" or "server \"files\"".
    pub check: String,
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do about it, when something is to be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    fn new(check: impl Into<String>, status: Status, detail: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = Some(fix.into());
        self
    }
}

/// What the shell knows that this crate cannot: the web engine it was linked with.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    /// e.g. "WebKitGTK 2.48.1"; `None` where it cannot be told.
    pub web_engine: Option<String>,
}

/// Every check, in the order shown. `flags`: the command line's model flags (they win over the
/// saved model settings, as in the app).
pub async fn findings(setup: &Setup, engine: &Engine, flags: &ModelFlags) -> Vec<Finding> {
    let mut found = Vec::new();
    found.push(match &engine.web_engine {
        Some(version) => Finding::new("web engine", Status::Ok, version.clone()),
        None => Finding::new("web engine", Status::Warn, "its version could not be read"),
    });
    found.push(display());
    found.extend(keyring_findings().await);
    found.extend(model_finding(setup, flags).await);
    let loaded = LoadedConfig::load(&setup.config_files);
    found.push(config_finding(setup, &loaded));
    found.push(store_finding(&setup.profile.database_file()));
    found.extend(program_findings(&loaded));
    found.extend(server_findings(setup, loaded).await);
    found
}

/// Prints the findings (or `--json`: one JSON array) and gives the exit code.
pub async fn doctor(setup: Setup, engine: Engine, flags: ModelFlags, json: bool) -> anyhow::Result<ExitCode> {
    let found = findings(&setup, &engine, &flags).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        for f in &found {
            let mark = match f.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{mark}  {}: {}", f.check, crate::terminal::for_stdout(&f.detail));
            if let Some(fix) = &f.fix {
                println!("      fix: {fix}");
            }
        }
        let failed = found.iter().filter(|f| f.status == Status::Fail).count();
        let warned = found.iter().filter(|f| f.status == Status::Warn).count();
        println!(
            "\n{failed} failed, {warned} warnings, {} ok",
            found.len() - failed - warned
        );
    }
    Ok(if found.iter().any(|f| f.status == Status::Fail) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn display() -> Finding {
    let has = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
    if !cfg!(target_os = "linux") || has("DISPLAY") || has("WAYLAND_DISPLAY") {
        Finding::new("display", Status::Ok, "the window can open")
    } else {
        Finding::new(
            "display",
            Status::Warn,
            "no DISPLAY or WAYLAND_DISPLAY: the window cannot open here (the command line works; check and snapshot start xvfb-run themselves)",
        )
        .fix("run the app from a desktop session, or under xvfb-run")
    }
}

async fn keyring_findings() -> Vec<Finding> {
    let probe = tokio::task::spawn_blocking(|| {
        let keyring = OsKeyring::open("Porthole")?;
        let keys: Vec<(ProviderKind, bool)> = [ProviderKind::OpenAi, ProviderKind::Anthropic]
            .into_iter()
            .map(|kind| (kind, keyring.get(&key_entry(kind)).ok().flatten().is_some()))
            .collect();
        Ok::<_, porthole_secrets::SecretError>(keys)
    })
    .await;
    let mut found = Vec::new();
    let stored = match probe {
        Ok(Ok(keys)) => {
            let locked = porthole_secrets::default_collection_locked();
            found.push(match locked {
                Ok(false) => Finding::new("Secret Service", Status::Ok, "running, unlocked"),
                Ok(true) => Finding::new(
                    "Secret Service",
                    Status::Warn,
                    "running, but the keyring is locked: the desktop asks for its password when a key or sign-in is needed",
                )
                .fix("unlock the login keyring (log in to the desktop session, or open Passwords and Keys)"),
                Err(why) => Finding::new("Secret Service", Status::Warn, format!("running; its lock state is unknown ({why})")),
            });
            keys
        }
        Ok(Err(e)) => {
            found.push(
                Finding::new("Secret Service", Status::Warn, e.to_string())
                    .fix("install and start a Secret Service (gnome-keyring, or KeePassXC with its Secret Service on); without one, API keys come from environment variables and sign-ins last for the session"),
            );
            Vec::new()
        }
        Err(e) => {
            found.push(Finding::new(
                "Secret Service",
                Status::Warn,
                format!("could not be asked: {e}"),
            ));
            Vec::new()
        }
    };
    let mut sources = Vec::new();
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let var = key_env_var(kind);
        if std::env::var(var).is_ok_and(|v| !v.trim().is_empty()) {
            sources.push(format!("{kind} ({var})"));
        } else if stored.iter().any(|(k, has)| *k == kind && *has) {
            sources.push(format!("{kind} (OS keyring)"));
        }
    }
    found.push(if sources.is_empty() {
        Finding::new("model API key", Status::Warn, "none for OpenAI or Anthropic (a local server such as Ollama needs none)")
            .fix("`porthole key set openai` (or anthropic) reads a key into the OS keyring; or set OPENAI_API_KEY / ANTHROPIC_API_KEY")
    } else {
        Finding::new("model API key", Status::Ok, sources.join(", "))
    });
    found
}

/// A model server of the person's own (any base URL but the provider's hosted one: Ollama, LM
/// Studio, llama.cpp, vLLM…) is asked for its models; a hosted provider is not contacted (its
/// key is what is checked).
async fn model_finding(setup: &Setup, flags: &ModelFlags) -> Option<Finding> {
    let database = setup.profile.database_file();
    let store = database
        .exists()
        .then(|| porthole_store::Store::open_read_only(&database).ok())
        .flatten();
    let keyring = || porthole_secrets::open_or_memory("Porthole").0;
    let choice = match ModelChoice::new(flags, store.as_ref(), &keyring) {
        Ok(choice) => choice,
        // No key for a hosted provider: the key finding says so.
        Err(_) => return None,
    };
    let hosted = porthole_agent::providers::default_base_url(choice.kind);
    if choice.base_url.trim_end_matches('/') == hosted.trim_end_matches('/') {
        return None;
    }
    let check = "model server";
    let at = format!("{} at {}", choice.kind, choice.base_url);
    Some(
        match tokio::time::timeout(Duration::from_secs(5), choice.provider.list_models()).await {
            Ok(Ok(models)) if models.is_empty() => Finding::new(check, Status::Warn, format!("{at} lists no model"))
                .fix("load or pull a model in that server (e.g. `ollama pull llama3.2`)"),
            Ok(Ok(models)) => {
                let shown: Vec<&str> = models.iter().take(5).map(String::as_str).collect();
                let more = if models.len() > shown.len() { ", …" } else { "" };
                let using = match &choice.model {
                    Some(model) if !models.contains(model) => {
                        return Some(
                            Finding::new(
                                check,
                                Status::Warn,
                                format!(
                                    "{at} does not list the chosen model {model:?} (it lists {}{more})",
                                    shown.join(", ")
                                ),
                            )
                            .fix("choose one of its models in Settings → Model, or pass --model"),
                        );
                    }
                    Some(model) => format!("; using {model}"),
                    None => String::new(),
                };
                Finding::new(check, Status::Ok, format!("{at}: {}{more}{using}", shown.join(", ")))
            }
            Ok(Err(e)) => Finding::new(check, Status::Warn, format!("{at}: {e}"))
                .fix("start that server, or change the base URL in Settings → Model"),
            Err(_) => Finding::new(check, Status::Warn, format!("{at}: no answer within 5 s"))
                .fix("start that server, or change the base URL in Settings → Model"),
        },
    )
}

fn config_finding(setup: &Setup, loaded: &LoadedConfig) -> Finding {
    let files: Vec<String> = setup.config_files.iter().map(|f| f.display().to_string()).collect();
    if loaded.problems.is_empty() {
        Finding::new(
            "config",
            Status::Ok,
            format!("{} ({} servers)", files.join(", "), loaded.servers.len()),
        )
    } else {
        let problems: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
        Finding::new("config", Status::Fail, problems.join("; "))
            .fix("correct the entries named (the settings' MCP servers section shows each problem beside its server)")
    }
}

fn store_finding(path: &Path) -> Finding {
    if !path.exists() {
        return Finding::new(
            "conversation store",
            Status::Ok,
            format!("{} (new: made at first use)", path.display()),
        );
    }
    match porthole_store::Store::open_read_only(path) {
        Ok(_) => Finding::new("conversation store", Status::Ok, path.display().to_string()),
        Err(e) => Finding::new("conversation store", Status::Fail, format!("{}: {e:#}", path.display()))
            .fix("`porthole store recover` moves the damaged store aside (kept, unchanged) and starts a fresh one"),
    }
}

/// The program each enabled stdio server is started with must be there.
fn program_findings(loaded: &LoadedConfig) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for server in loaded.servers.iter().filter(|s| s.enabled) {
        let Transport::Stdio { command, cwd, .. } = &server.transport else {
            continue;
        };
        if !seen.insert(command.clone()) {
            continue;
        }
        let users: Vec<&str> = loaded
            .servers
            .iter()
            .filter(|s| s.enabled && matches!(&s.transport, Transport::Stdio { command: c, .. } if c == command))
            .map(|s| s.name.as_str())
            .collect();
        let check = format!("program {command}");
        // `porthole` is this very executable, as when the server is started.
        let resolved = porthole_mcp::connection::resolve_command(command);
        match find_program(&resolved.to_string_lossy(), cwd.as_deref()) {
            Some(path) => {
                let version = program_version(command, &path);
                found.push(Finding::new(
                    check,
                    Status::Ok,
                    format!("{}{version} (for {})", path.display(), users.join(", ")),
                ));
            }
            None => found.push(
                Finding::new(
                    check,
                    Status::Fail,
                    format!("not found on PATH; needed by {}", users.join(", ")),
                )
                .fix(install_hint(command)),
            ),
        }
    }
    found
}

/// Where `command` would be run from: itself when it names a path, else the first executable
/// of that name on `PATH`.
pub fn find_program(command: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    let executable = |p: &Path| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            p.is_file()
        }
    };
    if command.contains('/') {
        let path = match cwd {
            Some(dir) if Path::new(command).is_relative() => dir.join(command),
            _ => PathBuf::from(command),
        };
        return executable(&path).then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(command))
        .find(|p| executable(p))
}

/// Node's version for `node`/`npx` (servers from npm need a current one), else nothing.
fn program_version(command: &str, path: &Path) -> String {
    let name = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    if !matches!(name, "node" | "npx" | "npm") {
        return String::new();
    }
    let node = if name == "node" {
        path.to_path_buf()
    } else {
        path.with_file_name("node")
    };
    std::process::Command::new(node)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| format!(" (Node {})", String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_default()
}

fn install_hint(command: &str) -> String {
    match Path::new(command).file_name().and_then(|n| n.to_str()).unwrap_or(command) {
        "npx" | "node" | "npm" => "install Node.js (e.g. `sudo apt install nodejs npm`, or from nodejs.org), or give the server's full path to npx in its config".into(),
        "uvx" | "uv" => "install uv (e.g. `pipx install uv`), or give the full path to uvx in the server's config".into(),
        "docker" => "install Docker and make sure this user may run it".into(),
        "python" | "python3" => "install Python 3 (e.g. `sudo apt install python3`)".into(),
        _ => format!("install {command}, or give its full path in the server's config"),
    }
}

/// Connects every enabled server, as the app would, and says how each went.
async fn server_findings(setup: &Setup, loaded: LoadedConfig) -> Vec<Finding> {
    let enabled: Vec<_> = loaded.servers.iter().filter(|s| s.enabled).cloned().collect();
    let disabled: Vec<String> = loaded
        .servers
        .iter()
        .filter(|s| !s.enabled)
        .map(|s| s.name.clone())
        .collect();
    let mut found = Vec::new();
    if !enabled.is_empty() {
        let options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
        let started = Instant::now();
        let servers = Servers::start(enabled, options);
        let statuses = servers.settled().await;
        let took = started.elapsed();
        servers.shutdown().await;
        for s in statuses {
            let check = format!("server {:?}", s.name);
            found.push(if s.state == ServerState::Failed {
                let log = setup.profile.log_dir().join("servers").join(format!("{}.log", s.name));
                Finding::new(
                    check,
                    Status::Fail,
                    s.error.unwrap_or_else(|| "failed to connect".into()),
                )
                .fix(if s.endpoint.starts_with("stdio") && log.exists() {
                    format!("see what it wrote in {}", log.display())
                } else {
                    "check its command or URL in the config (the settings' MCP servers section can reconnect it)".into()
                })
            } else {
                Finding::new(
                    check,
                    Status::Ok,
                    format!(
                        "{} · {} tools · connected within {}",
                        s.server_info.unwrap_or_else(|| "connected".into()),
                        s.tools.len(),
                        seconds(took)
                    ),
                )
            });
        }
    }
    if !disabled.is_empty() {
        found.push(Finding::new(
            "disabled servers",
            Status::Ok,
            format!("not started: {}", disabled.join(", ")),
        ));
    }
    found
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_path_or_by_their_own_path() {
        assert!(find_program("sh", None).is_some());
        assert!(find_program("/bin/sh", None).is_some());
        assert!(find_program("surely-no-such-program-here", None).is_none());
        assert!(find_program("./no-such-file", Some(Path::new("/"))).is_none());
        assert!(install_hint("npx").contains("Node.js"));
        assert!(install_hint("/opt/bin/uvx").contains("uv"));
    }
}
