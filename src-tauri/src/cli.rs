//! The command line. With no subcommand Porthole opens the desktop app; the subcommands share
//! the same crates (and so the same behaviour) without a window.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use porthole_mcp::{ConnectOptions, LoadedConfig, ServerState, Servers};
use porthole_profile::{Profile, Stderr};

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

    pub fn connect_options(&self, mcp_apps: bool) -> ConnectOptions {
        ConnectOptions {
            mcp_apps,
            server_log_dir: Some(self.profile.log_dir().join("servers")),
        }
    }
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => {
            let setup = Setup::new(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole", Stderr::Full)?;
            crate::desktop::run(setup)?;
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
    }
}

async fn tools(setup: Setup, json: bool, all: bool) -> Result<ExitCode> {
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        eprintln!("porthole: config: {problem}");
        tracing::info!("config: {problem}");
    }
    let servers = Servers::start(
        loaded.servers,
        setup.connect_options(porthole_mcp::mcp_apps_enabled_by_env()),
    );
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
