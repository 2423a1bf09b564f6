//! The command line. With no subcommand Porthole opens the desktop app; the subcommands share
//! the same crates (and so the same behaviour) without a window.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use porthole_agent::providers::ProviderKind;
use porthole_host::exit;
use porthole_host::headless::{self, KeyAction, RunArgs};
use porthole_host::{ModelFlags, Setup};
use porthole_profile::Stderr;

#[derive(Debug, Parser)]
#[command(
    name = "porthole",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("PORTHOLE_COMMIT"), ")"),
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

    /// An install link to open in the app (`porthole://install-server?name=…&config=…`): the
    /// window shows what the server would run or contact and adds it only when told to.
    #[arg(value_name = "LINK")]
    pub link: Option<String>,
}

/// The theme `porthole snapshot` shows the view in.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SnapshotTheme {
    Light,
    Dark,
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
    /// Check servers' MCP Apps tools and views against the rules a host applies, for CI.
    ///
    /// Each finding has a rule ID, a severity and a fix. Exit codes: 0 passed (no error; no
    /// warning either with --strict); 1 failed; 2 could not run (no such server, the JUnit file
    /// could not be written); 130 stopped.
    Check {
        /// Only this server (by its name in the config); checked even when disabled.
        #[arg(long)]
        server: Option<String>,
        /// Print the report as one JSON document.
        #[arg(long)]
        json: bool,
        /// Also write the report as JUnit XML to FILE.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Warnings fail the check too.
        #[arg(long)]
        strict: bool,
        /// The live check's arguments for each UI tool, as JSON, @FILE or - (stdin); else each
        /// tool's are made from its input schema.
        #[arg(long, value_name = "JSON|@FILE|-")]
        args: Option<String>,
        /// Show each view with a sample result instead of calling its tool.
        #[arg(long)]
        no_call: bool,
        /// Skip the live check (no view is loaded; no display needed).
        #[arg(long)]
        no_live: bool,
        /// How long a view may take to complete ui/initialize in the live check.
        #[arg(long, value_name = "SECONDS", default_value_t = 10)]
        view_timeout: u64,
    },
    /// Render one tool's view in a real Porthole webview and write it as a PNG, with a JSON
    /// sidecar (bridge traffic, console, CSP violations, timings, size) beside it.
    ///
    /// The same input gives the same picture on the same machine: the view's clock is fixed and
    /// its animations are off. Exit codes: 0 written; 1 the view failed or did not start (the
    /// sidecar says why); 2 could not run. Without a display it runs itself under xvfb-run.
    Snapshot {
        /// The server's name in the config.
        #[arg(long)]
        server: String,
        /// The tool whose view to render.
        #[arg(long)]
        tool: String,
        /// The tool's arguments, as JSON, @FILE or - (stdin); else made from its input schema.
        #[arg(long, value_name = "JSON|@FILE|-")]
        args: Option<String>,
        /// A CallToolResult (JSON file) to show instead of calling the tool.
        #[arg(long, value_name = "FILE")]
        result: Option<PathBuf>,
        /// The theme the view is shown in.
        #[arg(long, value_enum, default_value = "light")]
        theme: SnapshotTheme,
        /// The window's width in CSS pixels (default: the preset's, else 720).
        #[arg(long)]
        width: Option<u32>,
        /// The window's height in CSS pixels (default: the preset's, else 560).
        #[arg(long)]
        height: Option<u32>,
        /// A named size: desktop (1024×768), chat (720×560), tablet (768×1024), mobile (390×844).
        #[arg(long, value_name = "NAME")]
        preset: Option<String>,
        /// Where to write the PNG (the sidecar is the same name ending in .json).
        #[arg(long, value_name = "FILE.png")]
        out: PathBuf,
        /// How long the view may take to complete ui/initialize.
        #[arg(long, value_name = "SECONDS", default_value_t = 10)]
        view_timeout: u64,
    },
    /// Call one tool directly and print what the model would get and what a view would get.
    ///
    /// Exit codes: 0 a result; 1 a result the tool marked as an error (isError); 2 no result at
    /// all (a usage error, no such server or tool, the server failed or timed out); 130 stopped.
    Call {
        /// The server's name in the config.
        #[arg(long)]
        server: String,
        /// The tool's name on that server.
        #[arg(long)]
        tool: String,
        /// The arguments, as a JSON object; `@FILE` reads them from FILE, `-` from stdin (for
        /// arguments larger than a command line may be).
        #[arg(long, value_name = "JSON|@FILE|-")]
        args: Option<String>,
        /// Print one JSON object {"model": …, "view": …} instead of two sections.
        #[arg(long)]
        json: bool,
    },
    /// Print the messages one of a server's prompts gives (`prompts/get`).
    ///
    /// Exit codes: 0 the messages; 2 none (no such server or prompt, a missing argument, the
    /// server failed); 130 stopped.
    Prompt {
        /// The server's name in the config.
        #[arg(long)]
        server: String,
        /// The prompt's name on that server.
        #[arg(long)]
        name: String,
        /// The arguments, as a JSON object of strings; `@FILE` reads them from FILE, `-` from stdin.
        #[arg(long, value_name = "JSON|@FILE|-")]
        args: Option<String>,
        /// Print the whole answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A server's resources.
    Resource {
        #[command(subcommand)]
        action: ResourceVerb,
    },
    /// Run one user turn to completion with the model and MCP servers, and print the answer.
    ///
    /// Exit codes: 0 the turn ended; 1 it failed or could not start (the last line of stderr
    /// says why); 2 a usage error; 130 stopped.
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
        /// Model requests in this turn at most (1 or more).
        #[arg(long, default_value_t = 20, value_name = "N", value_parser = at_least_one)]
        max_steps: u32,
        /// Run the turn with this remote AG-UI agent (the config's "agents") instead of the
        /// local model and MCP servers.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
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
    /// Print or save a conversation: Markdown for reading, or JSON with every message, tool call
    /// (both facings) and view record, which `porthole import` reads back.
    Export {
        /// The conversation's id (as `porthole run` prints it).
        #[arg(long, value_name = "ID")]
        conversation: String,
        /// markdown or json
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Markdown)]
        format: ExportFormatArg,
        /// Write it to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Add a conversation exported as JSON (`porthole export --format json`) as a new one; prints its id.
    Import {
        /// The exported file; `-` reads stdin.
        file: std::path::PathBuf,
    },
    /// Add an MCP server to the profile's config.json, after showing what it would run or
    /// contact (its command line or URL, the names of its environment variables and headers,
    /// whether it asks for MCP Apps) and asking; `--yes` does not ask.
    ///
    /// Exit codes: 0 added; 1 declined; 2 nothing added (an invalid entry, a name already in
    /// use, or no terminal to ask on and no --yes).
    AddServer {
        /// The server's name.
        #[arg(long)]
        name: String,
        /// The server's entry, shaped as in config.json (e.g. {"command": "npx", "args": [...]}),
        /// as JSON, @FILE or - (stdin).
        #[arg(long = "json", value_name = "CONFIG")]
        config: String,
        /// Add it without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Check what a working install needs and print each finding with a fix: the web engine, a
    /// display, the Secret Service (and whether it is unlocked), a model API key, the programs
    /// the servers are started with (npx, uvx, …), the config, the store, and each enabled
    /// server's connection.
    ///
    /// Exit codes: 0 nothing required is missing (warnings may remain); 1 something required is
    /// missing or broken.
    Doctor {
        /// Print the findings as one JSON array of {check, status, detail, fix}.
        #[arg(long)]
        json: bool,
    },
    /// Look after the conversation store (`porthole.db` in the profile).
    Store {
        #[command(subcommand)]
        action: StoreVerb,
    },
}

#[derive(Debug, Subcommand)]
pub enum ResourceVerb {
    /// Print one resource (`resources/read`): text as text.
    ///
    /// Exit codes: 0 its contents; 2 none (no such server or resource, the server failed); 130 stopped.
    Read {
        /// The server's name in the config.
        #[arg(long)]
        server: String,
        /// The resource's URI.
        #[arg(long)]
        uri: String,
        /// Print the whole answer as JSON (binary contents as base64).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum StoreVerb {
    /// Move a damaged store aside, keeping it as `porthole.db.damaged-<UTC time>` (with its
    /// -wal and -shm files), and start a fresh, empty one. Refused when the store is not damaged.
    /// Prints where the old store went.
    Recover,
}

/// The model flags; they apply to this run only.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelArgs {
    /// The provider's wire format: `openai` (OpenAI and compatible servers: Ollama, llama.cpp,
    /// LM Studio, vLLM, OpenRouter) or `anthropic`.
    #[arg(long, global = true, env = "PORTHOLE_PROVIDER", value_name = "openai|anthropic")]
    pub provider: Option<ProviderKind>,
    /// The provider's base URL, e.g. http://localhost:11434/v1 for Ollama.
    #[arg(long = "base-url", global = true, env = "PORTHOLE_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// The model's name. Without it: the settings' model, else the provider's only model.
    #[arg(long, global = true, env = "PORTHOLE_MODEL", value_name = "NAME")]
    pub model: Option<String>,
}

impl ModelArgs {
    fn flags(&self) -> ModelFlags {
        ModelFlags {
            provider: self.provider,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KeyVerb {
    Set,
    Delete,
    Status,
}

/// `porthole export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    Markdown,
    Json,
}

/// `--max-steps`: a turn needs at least one model request.
fn at_least_one(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(0) => Err("must be at least 1: each step is one request to the model".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}")),
    }
}

/// The profile of `--profile`/`PORTHOLE_HOME` (created if new) and the config files to read.
fn setup(cli: &Cli) -> Result<Setup> {
    Setup::new(cli.profile.as_deref(), &cli.mcp_config)
}

/// Runs a headless command that needs the async runtime: the profile, the CLI's log (errors on
/// stderr), then `command` to completion.
fn headless_command<F>(cli: &Cli, command: impl FnOnce(Setup) -> F) -> Result<ExitCode>
where
    F: std::future::Future<Output = Result<ExitCode>>,
{
    let setup = setup(cli)?;
    let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
    tokio::runtime::Runtime::new()?.block_on(command(setup))
}

/// [`headless_command`] for a command that returns something else than an exit code.
fn headless_command_with<T, F>(cli: &Cli, command: impl FnOnce(Setup) -> F) -> Result<T>
where
    F: std::future::Future<Output = Result<T>>,
{
    let setup = setup(cli)?;
    let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
    tokio::runtime::Runtime::new()?.block_on(command(setup))
}

/// The setup views are shown with for `porthole check` and `porthole snapshot`: the same
/// servers, a profile of its own in a scratch folder (removed when the returned guard goes), so
/// nothing of the check is kept in the person's conversations. With `only_server`, that server
/// alone is started, even when disabled (`--server NAME`).
fn live_setup(cli: &Cli, only_server: Option<&str>) -> Result<(Setup, tempfile::TempDir)> {
    let own = setup(cli)?;
    let scratch = tempfile::Builder::new()
        .prefix("porthole-live-")
        .tempdir()
        .context("cannot make a scratch profile")?;
    let profile = porthole_profile::Profile::resolve(Some(scratch.path()))?;
    profile.ensure()?;
    Ok((
        Setup {
            profile,
            config_files: own.config_files,
            only_server: only_server.map(String::from),
        },
        scratch,
    ))
}

/// Views need a display. Without one (no `DISPLAY` nor `WAYLAND_DISPLAY`) — or always, with
/// `prefer_xvfb`, when `xvfb-run` is there (a picture is the same on every screen then: one
/// scale, one size, and no window on the person's screen) — the command runs itself again
/// under `xvfb-run`, and its exit code is returned; with no display and no `xvfb-run` it says
/// how to run. `None`: go on here.
fn with_display(prefer_xvfb: bool) -> Result<Option<ExitCode>> {
    let has = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
    const AGAIN: &str = "PORTHOLE_UNDER_XVFB";
    if !cfg!(target_os = "linux") || has(AGAIN) {
        return Ok(None);
    }
    let displayed = has("DISPLAY") || has("WAYLAND_DISPLAY");
    if displayed && !prefer_xvfb {
        return Ok(None);
    }
    let exe = std::env::current_exe().context("cannot find this program to run it under xvfb-run")?;
    let status = std::process::Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x1024x24"])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(AGAIN, "1")
        .status();
    match status {
        Ok(status) => Ok(Some(ExitCode::from(
            status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(2),
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && displayed => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!(
                "views need a display and there is none: run this under xvfb-run (or pass --no-live to porthole check)"
            )
        }
        Err(e) => Err(e).context("cannot run xvfb-run"),
    }
}

/// The web engine this binary runs views in, with its version (what `porthole doctor` says).
fn web_engine_version() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        use webkit2gtk::ffi;
        // SAFETY: these read constants of the linked library; they need no GTK initialization.
        let (major, minor, micro) = unsafe {
            (
                ffi::webkit_get_major_version(),
                ffi::webkit_get_minor_version(),
                ffi::webkit_get_micro_version(),
            )
        };
        Some(format!("WebKitGTK {major}.{minor}.{micro} (webkit2gtk-4.1)"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `--args JSON|@FILE|-`, when given.
fn arguments(spec: &Option<String>) -> Result<Option<serde_json::Map<String, serde_json::Value>>> {
    spec.as_deref()
        .map(|spec| porthole_host::call_arguments::read(spec, std::io::stdin()))
        .transpose()
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => {
            let setup = setup(&cli)?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole", Stderr::Full)?;
            // One app per profile: a launch on a profile whose app runs hands it over and ends.
            let handover = porthole_host::single_instance::Handover { link: cli.link.clone() };
            let listener = match porthole_host::single_instance::claim(setup.profile.data_dir(), &handover) {
                Ok(porthole_host::single_instance::Launch::HandedOver) => {
                    eprintln!(
                        "porthole: Porthole is already open on this profile ({}): it was brought forward",
                        setup.profile.data_dir().display()
                    );
                    return Ok(ExitCode::SUCCESS);
                }
                Ok(porthole_host::single_instance::Launch::First(listener)) => Some(listener),
                Err(e) => {
                    tracing::warn!("later launches on this profile will start apps of their own: {e}");
                    None
                }
            };
            crate::desktop::run(setup, cli.model.flags(), cli.link.clone(), listener)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::DemoServer) => {
            porthole_demo_server::run_on_stdio("porthole demo-server")?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tools { json, all }) => headless_command(&cli, |setup| headless::tools(setup, json, all)),
        Some(Command::Check {
            ref server,
            json,
            ref junit,
            strict,
            ref args,
            no_call,
            no_live,
            view_timeout,
        }) => {
            let check = headless::CheckArgs {
                server: server.clone(),
                json,
                junit: junit.clone(),
                strict,
            };
            if no_live {
                return headless_command(&cli, |setup| headless::check(setup, check));
            }
            let live = porthole_host::check::LiveOptions {
                args: arguments(args)?,
                no_call,
                limit: std::time::Duration::from_secs(view_timeout),
            };
            if let Some(code) = with_display(false)? {
                return Ok(code);
            }
            let report = headless_command_with(
                &cli,
                |setup| async move { headless::check_report(&setup, &check).await },
            )?;
            let report = match report {
                Ok(report) => report,
                Err(code) => return Ok(code),
            };
            let check = headless::CheckArgs {
                server: server.clone(),
                json,
                junit: junit.clone(),
                strict,
            };
            if report.servers.iter().all(|s| s.ui_tools.is_empty()) {
                return headless::print_check(&report, &check);
            }
            let (setup, _scratch) = live_setup(&cli, server.as_deref())?;
            let report = crate::desktop::with_host(setup, move |host| {
                Box::pin(async move { porthole_host::check::live(&host, report, &live).await })
            })?;
            headless::print_check(&report, &check)
        }
        Some(Command::Snapshot {
            ref server,
            ref tool,
            ref args,
            ref result,
            theme,
            width,
            height,
            ref preset,
            ref out,
            view_timeout,
        }) => {
            let size = match preset.as_deref() {
                None => (720, 560),
                Some(name) => match headless::SNAPSHOT_PRESETS.iter().find(|(n, _, _)| *n == name) {
                    Some((_, w, h)) => (*w, *h),
                    None => {
                        let known: Vec<&str> = headless::SNAPSHOT_PRESETS.iter().map(|(n, _, _)| *n).collect();
                        anyhow::bail!("no preset {name:?}: the presets are {}", known.join(", "));
                    }
                },
            };
            let result = match result {
                Some(path) => {
                    let text =
                        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
                    Some(serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?)
                }
                None => None,
            };
            let snapshot = headless::SnapshotArgs {
                server: server.clone(),
                tool: tool.clone(),
                args: arguments(args)?,
                result,
                theme: match theme {
                    SnapshotTheme::Light => porthole_apps::theme::Theme::Light,
                    SnapshotTheme::Dark => porthole_apps::theme::Theme::Dark,
                },
                width: width.unwrap_or(size.0).clamp(100, 4096),
                height: height.unwrap_or(size.1).clamp(100, 4096),
                out: out.clone(),
                limit: std::time::Duration::from_secs(view_timeout),
            };
            if let Some(code) = with_display(true)? {
                return Ok(code);
            }
            let (setup, _scratch) = live_setup(&cli, Some(server))?;
            let _log = porthole_profile::init_logging(setup.profile.log_dir(), "porthole-cli", Stderr::ErrorsOnly)?;
            crate::desktop::with_host(setup, move |host| {
                Box::pin(async move { headless::snapshot(&host, snapshot).await })
            })?
        }
        Some(Command::Call {
            ref server,
            ref tool,
            ref args,
            json,
        }) => {
            let call = || -> Result<ExitCode> {
                let arguments = arguments(args)?;
                headless_command(&cli, |setup| headless::call(setup, server, tool, arguments, json))
            };
            // No result at all exits 2, whatever the reason: 1 is the tool's own isError.
            call().map_err(|e| exit::with_code(exit::NO_RESULT, e))
        }
        Some(Command::Prompt {
            ref server,
            ref name,
            ref args,
            json,
        }) => {
            let get = || -> Result<ExitCode> {
                let arguments = arguments(args)?;
                headless_command(&cli, |setup| headless::prompt(setup, server, name, arguments, json))
            };
            get().map_err(|e| exit::with_code(exit::NO_RESULT, e))
        }
        Some(Command::Resource {
            action:
                ResourceVerb::Read {
                    ref server,
                    ref uri,
                    json,
                },
        }) => headless_command(&cli, |setup| headless::read_resource(setup, server, uri, json))
            .map_err(|e| exit::with_code(exit::NO_RESULT, e)),
        Some(Command::Run {
            ref prompt,
            yes,
            json,
            ref conversation,
            max_steps,
            ref agent,
        }) => {
            let args = RunArgs {
                prompt: prompt.clone(),
                yes,
                json,
                conversation: conversation.clone(),
                max_steps,
                agent: agent.clone(),
            };
            let flags = cli.model.flags();
            headless_command(&cli, |setup| async move { headless::run(setup, &flags, args).await })
        }
        Some(Command::Models) => {
            let flags = cli.model.flags();
            headless_command(&cli, |setup| async move { headless::models(setup, &flags).await })
        }
        Some(Command::Key { action, provider }) => {
            let action = match action {
                KeyVerb::Set => KeyAction::Set,
                KeyVerb::Delete => KeyAction::Delete,
                KeyVerb::Status => KeyAction::Status,
            };
            headless::key(action, provider)
        }
        Some(Command::Audit { json, limit }) => {
            let setup = setup(&cli)?;
            headless::audit(setup, json, limit)
        }
        Some(Command::Export {
            ref conversation,
            format,
            ref out,
        }) => {
            let setup = setup(&cli)?;
            let format = match format {
                ExportFormatArg::Markdown => porthole_host::export::ExportFormat::Markdown,
                ExportFormatArg::Json => porthole_host::export::ExportFormat::Json,
            };
            headless::export(setup, conversation, format, out.as_deref())
        }
        Some(Command::Import { ref file }) => {
            let setup = setup(&cli)?;
            headless::import(setup, file)
        }
        Some(Command::Doctor { json }) => {
            let engine = porthole_host::doctor::Engine {
                web_engine: web_engine_version(),
            };
            let flags = cli.model.flags();
            headless_command(&cli, |setup| porthole_host::doctor::doctor(setup, engine, flags, json))
        }
        Some(Command::AddServer {
            ref name,
            ref config,
            yes,
        }) => headless::add_server(setup(&cli)?, name, config, yes),
        Some(Command::Store {
            action: StoreVerb::Recover,
        }) => {
            let setup = setup(&cli)?;
            headless::store_recover(setup)
        }
    }
}
