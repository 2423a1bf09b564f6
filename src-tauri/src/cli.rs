//! The command line. With no subcommand Porthole opens the desktop app; the subcommands share
//! the same crates (and so the same behaviour) without a window.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use porthole_agent::providers::ProviderKind;
use porthole_mcp::oauth::{KeyringTokens, OAuth, SystemBrowser};
use porthole_mcp::{CallOptions, ConnectOptions, ElicitationPolicy, LoadedConfig, Progress, ServerState, Servers};
use porthole_profile::{Profile, Stderr};

use crate::model_choice::ModelArgs;

#[derive(Debug, Parser)]
#[command(
    name = "porthole",
    version,
    about = "A desktop chat client for MCP servers and MCP Apps"
)]
pub struct Cli {
    /// Keep all state (config, database, logs) in DIR instead of the OS's usual places.
    #[arg(long, global = true, env = "PORTHOLE_HOME", value_name = "DIR")]
    pub profile: Option<PathBuf>,

    /// Also load MCP servers from FILE (Claude Desktop, VS Code or Cursor format); repeatable.
    /// A server named in FILE replaces the profile's server of the same name.
    #[arg(long = "mcp-config", global = true, value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,

    #[command(flatten)]
    pub model: ModelArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the built-in demo MCP App server on stdin/stdout (configured in every new profile).
    DemoServer,
    /// List the tools the model would be offered, connecting with the app's own settings.
    Tools {
        /// Print JSON (an array of tools) instead of a table.
        #[arg(long)]
        json: bool,
        /// Also list tools that are not offered to the model (app-only or hidden).
        #[arg(long)]
        all: bool,
    },
    /// Call one tool directly and print what the model would get and what a view would get.
    /// Exits 1 when the tool reports an error (isError), 2 when there is no result at all.
    Call {
        /// The server's name in the config.
        #[arg(long)]
        server: String,
        /// The tool's name on that server.
        #[arg(long)]
        tool: String,
        /// The arguments, as a JSON object.
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
        /// Print one JSON object {"model": …, "view": …} instead of two sections.
        #[arg(long)]
        json: bool,
    },
    /// Run one user turn to completion with the model and MCP servers, and print the answer.
    /// Exits non-zero with a one-line reason when the turn fails.
    Run {
        /// The user's message; read from stdin when absent.
        #[arg(long)]
        prompt: Option<String>,
        /// Allow every tool call without asking.
        #[arg(long)]
        yes: bool,
        /// Print every event of the turn as a JSON line instead of the answer.
        #[arg(long)]
        json: bool,
        /// Continue this conversation (its id is printed when a run starts one).
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Model requests in this turn at most.
        #[arg(long, default_value_t = 20, value_name = "N")]
        max_steps: u32,
    },
    /// List the models the provider offers.
    Models,
    /// Keep a provider's API key in the OS keyring (read from stdin), delete it, or say where
    /// the key comes from. The environment variable, when set, is used first.
    Key {
        #[arg(value_enum)]
        action: KeyVerb,
        /// openai or anthropic
        provider: ProviderKind,
    },
    /// Print the MCP Apps audit log (views shown and refused, calls from views, CSP entries dropped).
    Audit {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// The most recent N entries.
        #[arg(long, default_value_t = 1000, value_name = "N")]
        limit: usize,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KeyVerb {
    Set,
    Delete,
    Status,
}

/// The profile, created if new, plus the MCP config files to read (the profile's own first).
pub struct Setup {
    pub profile: Profile,
    pub config_files: Vec<PathBuf>,
}

impl Setup {
    pub fn new(cli: &Cli) -> Result<Setup> {
        let profile = Profile::resolve(cli.profile.as_deref())?;
        profile.ensure()?;
        let mut config_files = vec![profile.config_file()];
        config_files.extend(cli.mcp_config.iter().cloned());
        Ok(Setup { profile, config_files })
    }

    /// Connection settings shared by the app and the command line. A server's questions
    /// (elicitation) go to the window's form in the app; the command-line tools decline them
    /// (and do not advertise the capability), having no one to ask. Remote servers that
    /// require OAuth are signed in to in the system browser; tokens are kept in the OS keyring
    /// per server URL (in memory for the session, with a warning, when there is no keyring).
    pub fn connect_options(&self, mcp_apps: bool, elicitation: ElicitationPolicy) -> ConnectOptions {
        ConnectOptions {
            mcp_apps,
            server_log_dir: Some(self.profile.log_dir().join("servers")),
            elicitation,
            oauth: Some(OAuth::new(
                Arc::new(SystemBrowser),
                Arc::new(KeyringTokens(Arc::new(porthole_secrets::LazyKeyring::new("Porthole")))),
            )),
        }
    }
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => {
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole", Stderr::Full)?;
            crate::desktop::run(setup, cli.model.clone())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::DemoServer) => {
            // stdout carries the protocol; logs go to stderr, which Porthole files per server.
            let _ = tracing_subscriber::fmt()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_env("PORTHOLE_LOG")
                        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
                )
                .try_init();
            tracing::info!("porthole demo-server {} on stdio", env!("CARGO_PKG_VERSION"));
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(porthole_demo_server::serve_stdio())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tools { json, all }) => {
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(tools(setup, json, all))
        }
        Some(Command::Call {
            ref server,
            ref tool,
            ref args,
            json,
        }) => {
            let arguments = match args {
                None => None,
                Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(serde_json::Value::Object(map)) => Some(map),
                    Ok(_) => anyhow::bail!("--args must be a JSON object, such as '{{\"path\": \"/tmp\"}}'"),
                    Err(e) => anyhow::bail!("--args is not valid JSON: {e}"),
                },
            };
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(call(setup, server, tool, arguments, json))
        }
        Some(Command::Run {
            ref prompt,
            yes,
            json,
            ref conversation,
            max_steps,
        }) => {
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
            let runtime = tokio::runtime::Runtime::new()?;
            let args = crate::headless::RunArgs {
                prompt: prompt.clone(),
                yes,
                json,
                conversation: conversation.clone(),
                max_steps,
            };
            runtime.block_on(crate::headless::run(setup, &cli.model, args))
        }
        Some(Command::Models) => {
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(crate::headless::models(setup, &cli.model))
        }
        Some(Command::Key { action, provider }) => {
            let action = match action {
                KeyVerb::Set => crate::headless::KeyAction::Set,
                KeyVerb::Delete => crate::headless::KeyAction::Delete,
                KeyVerb::Status => crate::headless::KeyAction::Status,
            };
            crate::headless::key(action, provider)
        }
        Some(Command::Audit { json, limit }) => {
            let setup = Setup::new(&cli)?;
            crate::headless::audit(setup, json, limit)
        }
    }
}

async fn tools(setup: Setup, json: bool, all: bool) -> Result<ExitCode> {
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        eprintln!("porthole: config: {problem}");
        tracing::info!("config: {problem}");
    }
    let options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
    let servers = Servers::start(loaded.servers, options);
    let statuses = servers.settled().await;
    servers.shutdown().await;
    for s in &statuses {
        if s.state == ServerState::Failed {
            eprintln!(
                "porthole: server {}: {}",
                s.name,
                s.error.as_deref().unwrap_or("failed")
            );
        }
    }
    let tools: Vec<_> = statuses
        .iter()
        .flat_map(|s| s.tools.iter())
        .filter(|t| all || t.visible_to_model())
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&tools).context("cannot print JSON")?);
    } else {
        let rows: Vec<[String; 5]> = tools
            .iter()
            .map(|t| {
                [
                    t.server.clone(),
                    t.name.clone(),
                    t.model_name.clone(),
                    t.ui_resource_uri.clone().unwrap_or_else(|| "-".into()),
                    serde_json::to_string(&t.visibility).unwrap_or_default(),
                ]
            })
            .collect();
        print_table(["SERVER", "TOOL", "MODEL NAME", "UI RESOURCE", "VISIBILITY"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}

async fn call(
    setup: Setup,
    server: &str,
    tool: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    json: bool,
) -> Result<ExitCode> {
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        eprintln!("porthole: config: {problem}");
    }
    // Only the named server is started.
    let options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
    let configs: Vec<_> = loaded.servers.into_iter().filter(|s| s.name == server).collect();
    if configs.is_empty() {
        anyhow::bail!("no server named {server:?} in {}", setup.config_files[0].display());
    }
    let servers = Servers::start(configs, options);
    servers.settled().await;
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let cancel = tokio_util::sync::CancellationToken::new();
    let printer = tokio::spawn(async move {
        while let Some(p) = progress_rx.recv().await {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            eprintln!(
                "progress {}{total}{}",
                p.progress,
                p.message.map(|m| format!(": {m}")).unwrap_or_default()
            );
        }
    });
    let ctrl_c = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let options = CallOptions {
        progress: Some(progress_tx),
        cancel,
        timeout: None,
    };
    let result = servers.call_tool(server, tool, arguments, options).await;
    ctrl_c.abort();
    let _ = printer.await;
    servers.shutdown().await;
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("porthole: {server}/{tool}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        println!(
            "== What the model gets{} ==",
            if outcome.model.is_error { " (isError: true)" } else { "" }
        );
        for block in &outcome.model.content {
            match block.get("text").and_then(|t| t.as_str()) {
                Some(text) if block["type"] == "text" => println!("{text}"),
                _ => println!("{}", serde_json::to_string(block)?),
            }
        }
        println!("\n== What the view gets ==");
        println!("{}", serde_json::to_string_pretty(&outcome.view)?);
    }
    Ok(if outcome.model.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
