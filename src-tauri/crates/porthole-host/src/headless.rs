//! The headless commands that involve a model or the store: `porthole run` (one user turn to
//! completion), `porthole models`, `porthole key`, `porthole audit`, `porthole tools`,
//! `porthole call`, `porthole prompt`, `porthole resource read` and `porthole add-server`. The command line itself (its flags) is the desktop binary's.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::providers::{ProviderKind, key_env_var};
use porthole_agent::record::{Recorder, StoredApprovals, load_history, title_from};
use porthole_agent::{
    Agent, AllowAll, ApprovalRequest, Approver, ChannelSink, Decision, EventSink, Message, StopReason, TurnEvent,
};
use porthole_mcp::{CallOptions, ElicitationPolicy, LoadedConfig, Progress, ServerState, Servers};
use porthole_secrets::{OsKeyring, SecretStore};
use porthole_store::Store;

use crate::exit;
use crate::model::{ModelChoice, ModelFlags, key_entry};
use crate::server_install::{self, ServerInstall};
use crate::setup::Setup;
use crate::terminal;

/// A line on stdout, through [`print_line`] (use it, never `println!`, in this file): output to
/// a closed pipe (`porthole tools | head`) stops the command quietly rather than panicking, and
/// text is escaped on a terminal.
macro_rules! out {
    ($($arg:tt)*) => { print_line(format_args!($($arg)*)) };
}

/// Writes one line to stdout. When stdout is a closed pipe the command stops quietly, as Unix
/// tools do (by SIGPIPE, which Porthole otherwise ignores so that a server that exits cannot kill
/// it); any other write error is only logged.
/// Text from servers and models is escaped when stdout is a terminal ([`terminal`]).
fn print_line(line: std::fmt::Arguments) {
    let line = line.to_string();
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{}", terminal::for_stdout(&line)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            #[cfg(unix)]
            // SAFETY: restoring SIGPIPE's default action and raising it ends the process, as a
            // write to a closed pipe does in other tools; no memory is touched.
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::raise(libc::SIGPIPE);
            }
            std::process::exit(141);
        }
        Err(e) => tracing::warn!("cannot print to stdout: {e}"),
    }
}

/// A line on stderr (use it, never `eprintln!`, in this file), with control characters escaped
/// when stderr is a terminal: server names, tool names, errors and progress messages come from
/// elsewhere.
macro_rules! note {
    ($($arg:tt)*) => { std::eprintln!("{}", terminal::for_stderr(&format!($($arg)*))) };
}

/// [`note!`] without the line break (a prompt).
macro_rules! prompt {
    ($($arg:tt)*) => { std::eprint!("{}", terminal::for_stderr(&format!($($arg)*))) };
}

pub struct RunArgs {
    pub prompt: Option<String>,
    pub yes: bool,
    pub json: bool,
    pub conversation: Option<String>,
    pub max_steps: u32,
    /// A remote AG-UI agent of the config runs the turn.
    pub agent: Option<String>,
}

/// The model flags and settings resolved, with the key. The OS keyring is opened only when the
/// environment has no key (keys are never written to a file), and a keyring that cannot be
/// opened is told only when a key was needed and not found: a local server that needs no key
/// runs without a warning on every run (the log file still has it).
pub fn choose_model(model_args: &ModelFlags, store: &Store) -> Result<ModelChoice> {
    let trouble = Mutex::new(None);
    let keyring = || -> Arc<dyn SecretStore> {
        let (keyring, problem) = porthole_secrets::open_or_memory("Porthole");
        *trouble.lock().unwrap() = problem;
        keyring
    };
    let choice = ModelChoice::new(model_args, Some(store), &keyring);
    // The keyring was opened only after the flags were found sound, so a failure with a
    // keyring problem is the missing key.
    choice.map_err(|e| match trouble.lock().unwrap().take() {
        Some(problem) => anyhow::anyhow!("{e:#} (a key kept in the OS keyring cannot be read: {problem})"),
        None => e,
    })
}

/// A prompt on stderr shows before the answer is read; a closed stderr has no one to show it to.
fn flush_stderr() {
    if let Err(e) = std::io::stderr().flush() {
        tracing::debug!("stderr cannot be flushed: {e}");
    }
}

/// Asks on the terminal, one call at a time.
struct TerminalApprover(Mutex<()>);

impl Approver for TerminalApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision> {
        let lock = &self.0;
        let _guard = lock.lock().unwrap();
        prompt!(
            "Allow {}/{} with {}? [y]es once, [a]lways for this tool, [N]o: ",
            request.server,
            request.tool,
            request.arguments
        );
        flush_stderr();
        let mut answer = String::new();
        if let Err(e) = std::io::stdin().read_line(&mut answer) {
            // Nothing could be read: the call is denied, as an empty answer is.
            tracing::warn!("cannot read the approval answer: {e}");
        }
        let decision = match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Decision::AllowOnce,
            "a" | "always" => Decision::AllowAlways,
            _ => Decision::Deny,
        };
        async move { decision }.boxed()
    }
}

/// Refuses, saying how to allow tool calls when there is no one to ask.
struct NoOneToAsk;

impl Approver for NoOneToAsk {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision> {
        note!(
            "porthole: refused {}/{}: no terminal to ask for approval (pass --yes to allow tool calls)",
            request.server,
            request.tool
        );
        async { Decision::Deny }.boxed()
    }
}

pub async fn run(setup: Setup, model_args: &ModelFlags, args: RunArgs) -> Result<ExitCode> {
    let ask_on_terminal = args.prompt_was_given_and_terminal();
    let prompt = match args.prompt.clone() {
        Some(p) => p,
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(crate::exit::usage(anyhow::anyhow!(
            "the prompt is empty: pass --prompt TEXT or write it to stdin"
        )));
    }
    let store = Store::open(&setup.profile.database_file())?;
    if let Some(agent) = &args.agent {
        return run_with_agent(&setup, &store, agent, prompt, &args).await;
    }
    let choice = choose_model(model_args, &store)?;
    let model = choice.resolve_model().await?;

    let (existing, history) = continued(&setup, &store, args.conversation.as_ref())?;
    // One writer per conversation: another Porthole busy with it (this command or the window)
    // makes this one refuse with its pid rather than interleave rows with it.
    let mut _writer = existing.as_deref().map(|id| store.claim_writer(id)).transpose()?;

    let loaded = load_config(&setup);
    let mut options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
    // The settings' roots are given to servers that ask. Sampling is offered only with --yes:
    // with no one to review a request or its answer, it runs as asked, with the run's model,
    // and is audited; without --yes servers are not told it is there.
    options.roots = Some(crate::roots::source(Some(store.clone())));
    let sampler = args.yes.then(|| {
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        options.sampling = Some(tx);
        tokio::spawn(sample_unattended(rx, choice.clone(), store.clone()))
    });
    let servers = Servers::start(loaded.servers, options);
    // Servers still starting are waited for (each within its own timeout): the model is never
    // asked without the person's tools while nothing says why; those that fail are named.
    let Some(statuses) = settle_or_stop(&servers).await else {
        return Ok(stopped());
    };
    for s in statuses {
        if s.state == ServerState::Failed {
            note!(
                "porthole: sent without {}: {}",
                s.name,
                s.error.as_deref().unwrap_or("it failed to start")
            );
        }
    }
    // A new conversation is made only now that the turn starts: a run stopped before (Ctrl-C
    // while servers connect, say) leaves no empty conversation behind.
    let conversation_id = match existing {
        Some(id) => id,
        None => {
            let id = store.create_conversation(&title_from(&prompt))?.id;
            _writer = Some(store.claim_writer(&id)?);
            id
        }
    };

    let mut agent = Agent::new(choice.provider.clone(), model, servers.clone());
    agent.step_limit = args.max_steps;
    agent.remembered = Some(Arc::new(StoredApprovals(store.clone())));
    agent.approver = if args.yes {
        Arc::new(AllowAll)
    } else if ask_on_terminal {
        Arc::new(TerminalApprover(Mutex::new(())))
    } else {
        Arc::new(NoOneToAsk)
    };

    let json = args.json;
    let (sinks, printer) = RunSink::new(&store, &conversation_id, json);
    let (cancel, ctrl_c) = cancel_on_ctrl_c();
    if !json {
        let key = match &choice.key_source {
            Some(source) => format!("key from {source}"),
            None => "no key".into(),
        };
        note!(
            "porthole: conversation {conversation_id}; {} model {} at {} ({key})",
            choice.kind,
            agent.model,
            porthole_secrets::redact::url(&choice.base_url)
        );
    }
    let result = agent
        .run_turn(Some(conversation_id), history, Message::user(prompt), &sinks, cancel)
        .await;
    ctrl_c.abort();
    drop(sinks);
    if let Err(e) = printer.await {
        tracing::error!("the event printer stopped: {e}");
    }
    servers.shutdown().await;
    if let Some(sampler) = sampler {
        sampler.abort();
    }
    Ok(finished(result, json))
}

/// The conversation a run continues (checked to exist), and its history.
fn continued(setup: &Setup, store: &Store, conversation: Option<&String>) -> Result<(Option<String>, Vec<Message>)> {
    let Some(id) = conversation else {
        return Ok((None, Vec::new()));
    };
    store
        .conversation(id)?
        .with_context(|| format!("no conversation {id:?} in {}", store_path(setup)))?;
    Ok((Some(id.clone()), load_history(store, id)?))
}

/// Prints a turn's events as `porthole run` does (JSON lines, or the progress on stderr).
fn printer(json: bool) -> (ChannelSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut stdout = std::io::stdout();
        while let Some(event) = rx.recv().await {
            if json {
                // The frozen `--json` line format (outside tests read it); on a terminal its
                // control characters are escaped, as valid JSON still.
                let line = porthole_agent::wire::cli_line(&event);
                let line = terminal::for_stdout(&line);
                if let Err(e) = writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
                    tracing::debug!("stdout is closed; the event is not printed: {e}");
                }
            } else {
                describe(&event);
            }
        }
    });
    (ChannelSink(tx), task)
}

/// `porthole run --agent NAME`: the turn runs on a remote AG-UI agent of the config; its events
/// are kept and printed as a local turn's are.
async fn run_with_agent(setup: &Setup, store: &Store, name: &str, prompt: String, args: &RunArgs) -> Result<ExitCode> {
    let loaded = load_config(setup);
    let Some(config) = loaded.agents.iter().find(|a| a.name == name).cloned() else {
        let known: Vec<&str> = loaded.agents.iter().map(|a| a.name.as_str()).collect();
        return Err(crate::exit::usage(anyhow::anyhow!(
            "no agent named {name:?} in the config{}",
            if known.is_empty() {
                " (it has no \"agents\")".to_string()
            } else {
                format!(" (it has {})", known.join(", "))
            }
        )));
    };
    let (existing, history) = continued(setup, store, args.conversation.as_ref())?;
    let mut _writer = existing.as_deref().map(|id| store.claim_writer(id)).transpose()?;
    let conversation_id = match existing {
        Some(id) => id,
        None => {
            let id = store.create_conversation_with(&title_from(&prompt), Some(name))?.id;
            _writer = Some(store.claim_writer(&id)?);
            id
        }
    };
    let agent = porthole_agent::agui::RemoteAgent::new(config);
    let (sinks, printer_task) = RunSink::new(store, &conversation_id, args.json);
    let (cancel, ctrl_c) = cancel_on_ctrl_c();
    if !args.json {
        note!(
            "porthole: conversation {conversation_id}; agent {name} at {}",
            porthole_secrets::redact::url(&agent.config.url)
        );
    }
    let mut thread = porthole_agent::agui::AgentThread::load(store, &conversation_id);
    let result = agent
        .run_turn(
            Some(conversation_id.clone()),
            history,
            Message::user(prompt),
            &mut thread,
            &sinks,
            cancel,
        )
        .await;
    thread.save(store, &conversation_id);
    ctrl_c.abort();
    drop(sinks);
    if let Err(e) = printer_task.await {
        tracing::error!("the event printer stopped: {e}");
    }
    Ok(finished(result, args.json))
}

/// The exit of a finished turn (and its answer on stdout, unless `json`).
fn finished(result: porthole_agent::TurnResult, json: bool) -> ExitCode {
    match result.stop_reason {
        StopReason::EndTurn => {
            if !json {
                out!("{}", result.text);
            }
            ExitCode::SUCCESS
        }
        StopReason::Cancelled => stopped(),
        StopReason::Error | StopReason::StepLimit => {
            // The reply so far (e.g. one the store could not keep) is still the person's to read.
            if !json && !result.text.is_empty() {
                out!("{}", result.text);
            }
            let reason = result.error.unwrap_or_else(|| "the turn failed".into());
            note!("porthole: {}", reason.lines().next().unwrap_or(""));
            ExitCode::FAILURE
        }
    }
}

/// Where a `porthole run` turn's events go: the store first, then the printer. The turn fails
/// when the store does ([`EventSink::failure`]).
struct RunSink {
    recorder: Recorder,
    printer: ChannelSink,
}

impl RunSink {
    /// The sinks of a run in `conversation_id`, and the task printing its events.
    fn new(store: &Store, conversation_id: &str, json: bool) -> (RunSink, tokio::task::JoinHandle<()>) {
        let (printer_sink, task) = printer(json);
        let sinks = RunSink {
            recorder: Recorder::new(store.clone(), conversation_id.to_string()),
            printer: printer_sink,
        };
        (sinks, task)
    }
}

/// A token cancelled by Ctrl-C, and the task listening for it (abort it when the turn ends).
fn cancel_on_ctrl_c() -> (tokio_util::sync::CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = tokio_util::sync::CancellationToken::new();
    let listener = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    (cancel, listener)
}

impl EventSink for RunSink {
    fn emit(&self, event: &TurnEvent) {
        self.recorder.emit(event);
        self.printer.emit(event);
    }

    fn failure(&self) -> Option<String> {
        self.recorder.failure()
    }
}

impl RunArgs {
    /// Approval can be asked on the terminal only when the prompt did not come from stdin.
    fn prompt_was_given_and_terminal(&self) -> bool {
        self.prompt.is_some() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

fn store_path(setup: &Setup) -> String {
    setup.profile.database_file().display().to_string()
}

/// The human-readable progress of a turn, on stderr (the answer alone goes to stdout).
fn describe(event: &TurnEvent) {
    match event {
        TurnEvent::ToolCallStarted { server, tool, name, .. } => match (server, tool) {
            (Some(s), Some(t)) => note!("→ {s}/{t}"),
            (None, Some(t)) if t == name => note!("→ {t} (the agent's)"),
            _ => note!("→ {name} (no such tool)"),
        },
        TurnEvent::ToolCallFinished {
            status,
            duration_ms,
            error,
            ..
        } => {
            let detail = error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            note!(
                "  {} in {duration_ms} ms{detail}",
                serde_json::to_string(status).unwrap_or_default()
            );
        }
        TurnEvent::Retrying { wait_ms, reason, .. } => note!("porthole: retrying in {wait_ms} ms: {reason}"),
        TurnEvent::WaitingForServers { servers } => {
            note!("porthole: waiting for {} to start", servers.join(", "))
        }
        TurnEvent::ServersWaited { missing } => {
            for m in missing {
                note!("porthole: sent without {}: {}", m.name, m.reason);
            }
        }
        // A turn's error ends it: `run` prints it once, as its last line.
        _ => {}
    }
}

/// `porthole models`: what the provider lists.
pub async fn models(setup: Setup, model_args: &ModelFlags) -> Result<ExitCode> {
    let store = Store::open_read_only(&setup.profile.database_file())?;
    let choice = choose_model(model_args, &store)?;
    let models = choice.provider.list_models().await?;
    for m in models {
        out!("{m}");
    }
    Ok(ExitCode::SUCCESS)
}

pub enum KeyAction {
    Set,
    Delete,
    Status,
}

/// `porthole key set|delete|status PROVIDER`: the key in the OS keyring; never a file.
pub fn key(action: KeyAction, kind: ProviderKind) -> Result<ExitCode> {
    let keyring = OsKeyring::open("Porthole").map_err(|e| {
        anyhow::anyhow!(
            "{e}. Porthole does not write API keys to files; set {} instead",
            key_env_var(kind)
        )
    })?;
    let entry = key_entry(kind);
    match action {
        KeyAction::Set => {
            if std::io::stdin().is_terminal() {
                prompt!("API key for {kind} (input is read from this line): ");
                flush_stderr();
            }
            let mut key = String::new();
            std::io::stdin()
                .read_line(&mut key)
                .context("cannot read the key from stdin")?;
            let key = key.trim();
            if key.is_empty() {
                bail!("no key given: write it to stdin, e.g. `printenv MY_KEY | porthole key set {kind}`");
            }
            keyring.set(&entry, key)?;
            note!("porthole: the {kind} key is in the OS keyring");
        }
        KeyAction::Delete => {
            keyring.delete(&entry)?;
            note!("porthole: the {kind} key is no longer in the OS keyring");
        }
        KeyAction::Status => {
            let env = std::env::var(key_env_var(kind)).is_ok_and(|v| !v.trim().is_empty());
            let stored = keyring.get(&entry)?.is_some();
            out!(
                "{kind}: environment {}: {}; OS keyring: {}",
                key_env_var(kind),
                if env { "set (used first)" } else { "unset" },
                if stored { "stored" } else { "none" }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `porthole audit [--json]`: the MCP Apps audit log, oldest first.
/// `porthole export`: conversation `id` as Markdown or JSON, to `out` (stdout when absent).
pub fn export(
    setup: Setup,
    id: &str,
    format: crate::export::ExportFormat,
    out: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let store = Store::open_read_only(&setup.profile.database_file())?;
    let text = crate::export::export(&store, id, format)?;
    match out {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
            note!("porthole: conversation {id} exported to {}", path.display());
        }
        None => {
            for line in text.lines() {
                out!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `porthole import`: an exported conversation (JSON) added as a new conversation; prints its id.
pub fn import(setup: Setup, file: &std::path::Path) -> Result<ExitCode> {
    let text = if file == std::path::Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let store = Store::open(&setup.profile.database_file())?;
    let conversation = crate::export::import(&store, &text)?;
    note!("porthole: imported as {:?}", conversation.title);
    out!("{}", conversation.id);
    Ok(ExitCode::SUCCESS)
}

pub fn audit(setup: Setup, json: bool, limit: usize) -> Result<ExitCode> {
    let store = Store::open_read_only(&setup.profile.database_file())?;
    let entries = store.audit_entries(limit)?;
    if json {
        for e in &entries {
            out!("{}", serde_json::to_string(e)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        note!("porthole: the audit log is empty");
    }
    for e in &entries {
        let at = e.at / 1000;
        out!(
            "{at} {:<12} {}/{} {} {}",
            e.kind,
            e.server.as_deref().unwrap_or("-"),
            e.tool.as_deref().unwrap_or("-"),
            e.uri.as_deref().unwrap_or("-"),
            e.detail
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `porthole store recover`: moves a damaged conversation store aside (kept, with its `-wal` and
/// `-shm` files, as `porthole.db.damaged-<UTC time>`) and starts a fresh one. Prints where the
/// old store went; refuses a store that is not damaged.
pub fn store_recover(setup: Setup) -> Result<ExitCode> {
    let path = setup.profile.database_file();
    let (_fresh, kept) = Store::recover(&path)?;
    note!(
        "porthole: the damaged store was moved to {} (nothing in it was changed); a fresh store is at {}",
        kept.display(),
        path.display()
    );
    out!("{}", kept.display());
    Ok(ExitCode::SUCCESS)
}

/// `porthole add-server --name N --json CONFIG [--yes]`: shows what the server would run or
/// contact, asks (on a terminal; `--yes` does not ask), and adds it to the profile's
/// `config.json`. Exit 0 added, 1 declined, 2 not possible (an invalid entry, a name in use, no
/// one to ask and no `--yes`).
pub fn add_server(setup: Setup, name: &str, config: &str, yes: bool) -> Result<ExitCode> {
    let text = if config == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("--json -: cannot read the server's config from stdin")?;
        text
    } else if let Some(path) = config.strip_prefix('@') {
        std::fs::read_to_string(path).with_context(|| format!("--json @{path}: cannot read {path}"))?
    } else {
        config.to_string()
    };
    let install = ServerInstall::from_json(name, &text).map_err(|e| exit::usage(anyhow::anyhow!(e)))?;
    let others = crate::server_settings::taken_names(&setup.config_files[1..]);
    for line in install.describe() {
        note!("{line}");
    }
    if !yes {
        if config == "-" || !std::io::stdin().is_terminal() {
            return Err(exit::usage(anyhow::anyhow!(
                "nothing was added: there is no one to ask here; pass --yes to add it without asking"
            )));
        }
        prompt!("Add it? [y/N] ");
        flush_stderr();
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .context("cannot read the answer")?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            note!("porthole: nothing was added");
            return Ok(ExitCode::from(1));
        }
    }
    let config_file = setup.profile.config_file();
    server_install::add_to_file(&config_file, &install, &others).map_err(|e| exit::usage(anyhow::anyhow!(e)))?;
    note!("porthole: added {:?} to {}", install.name, config_file.display());
    Ok(ExitCode::SUCCESS)
}

/// Waits until every server has connected or failed. Ctrl-C meanwhile gives `None`: the servers
/// that connected are closed (for half a second at most), and those still starting end with
/// their connection attempts when the command returns and its runtime drops them (their process
/// groups are ended then: they no longer share Porthole's, so the terminal's Ctrl-C does not
/// reach them itself).
async fn settle_or_stop(servers: &Servers) -> Option<Vec<porthole_mcp::ServerStatus>> {
    tokio::select! {
        statuses = servers.settled() => Some(statuses),
        _ = tokio::signal::ctrl_c() => {
            if tokio::time::timeout(Duration::from_millis(500), servers.shutdown()).await.is_err() {
                tracing::debug!("servers still starting are ended as the command returns");
            }
            None
        }
    }
}

/// The MCP server config of `setup`'s files; what could not be read is said on stderr.
fn load_config(setup: &Setup) -> LoadedConfig {
    let loaded = LoadedConfig::load(&setup.config_files);
    for problem in &loaded.problems {
        note!("porthole: config: {problem}");
        tracing::info!("config: {problem}");
    }
    loaded
}

/// A command stopped with Ctrl-C: it says so and exits 130.
fn stopped() -> ExitCode {
    note!("porthole: stopped");
    ExitCode::from(130)
}

/// `porthole tools`: the tools the model would be offered (`all`: every tool).
pub async fn tools(setup: Setup, json: bool, all: bool) -> Result<ExitCode> {
    let loaded = load_config(&setup);
    let options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
    let servers = Servers::start(loaded.servers, options);
    let Some(statuses) = settle_or_stop(&servers).await else {
        return Ok(stopped());
    };
    servers.shutdown().await;
    for s in &statuses {
        if s.state == ServerState::Failed {
            note!(
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
        out!("{}", serde_json::to_string_pretty(&tools).context("cannot print JSON")?);
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

/// What `porthole check` was asked.
#[derive(Debug, Clone, Default)]
pub struct CheckArgs {
    /// Only this server (checked even when disabled).
    pub server: Option<String>,
    pub json: bool,
    /// Also write the report as JUnit XML here.
    pub junit: Option<std::path::PathBuf>,
    /// Warnings fail the check too.
    pub strict: bool,
}

/// `porthole check` without its live check: every enabled server (or `--server`), its tools and
/// views, against the MCP Apps rules. Exit 0 when it passed, 1 when it found what fails it, 2
/// when it could not run.
pub async fn check(setup: Setup, args: CheckArgs) -> Result<ExitCode> {
    match check_report(&setup, &args).await? {
        Ok(report) => print_check(&report, &args),
        Err(code) => Ok(code),
    }
}

/// The static part of `porthole check`: the report, or the exit code when it could not run.
pub async fn check_report(setup: &Setup, args: &CheckArgs) -> Result<Result<crate::check::Report, ExitCode>> {
    let loaded = load_config(setup);
    let configs: Vec<_> = match &args.server {
        Some(name) => loaded.servers.into_iter().filter(|s| &s.name == name).collect(),
        None => loaded.servers.into_iter().filter(|s| s.enabled).collect(),
    };
    if configs.is_empty() {
        match &args.server {
            Some(name) => note!("porthole: no server named {name:?} to check"),
            None => note!("porthole: no enabled server to check"),
        }
        return Ok(Err(ExitCode::from(2)));
    }
    match crate::check::gather(setup, configs, args.strict).await {
        Some(report) => Ok(Ok(report)),
        None => Ok(Err(stopped())),
    }
}

/// Prints `porthole check`'s report as asked (and writes its JUnit file); its exit code.
pub fn print_check(report: &crate::check::Report, args: &CheckArgs) -> Result<ExitCode> {
    if let Some(path) = &args.junit
        && let Err(e) = std::fs::write(path, crate::check::junit(report))
    {
        note!("porthole: cannot write {}: {e}", path.display());
        return Ok(ExitCode::from(2));
    }
    if args.json {
        out!("{}", serde_json::to_string_pretty(report).context("cannot print JSON")?);
    } else {
        out!("{}", crate::check::text(report).trim_end());
    }
    Ok(if report.summary.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What `porthole snapshot` was asked.
#[derive(Debug, Clone)]
pub struct SnapshotArgs {
    pub server: String,
    pub tool: String,
    /// The tool's arguments (else made from its input schema).
    pub args: Option<serde_json::Map<String, serde_json::Value>>,
    /// The `CallToolResult` to show (else the tool is called).
    pub result: Option<serde_json::Value>,
    pub theme: porthole_apps::theme::Theme,
    pub width: u32,
    pub height: u32,
    pub out: std::path::PathBuf,
    /// How long the view may take to complete `ui/initialize`.
    pub limit: std::time::Duration,
}

/// Named window sizes for `porthole snapshot --preset`: (name, width, height).
pub const SNAPSHOT_PRESETS: [(&str, u32, u32); 4] = [
    ("desktop", 1024, 768),
    ("chat", 720, 560),
    ("tablet", 768, 1024),
    ("mobile", 390, 844),
];

/// How long nothing may change before the picture is taken, and the longest wait for that.
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(400);
const SETTLE_MOST: std::time::Duration = std::time::Duration::from_secs(5);

/// `porthole snapshot`: the view of one tool call in a real webview, once it started and
/// settled, written as a PNG with a JSON sidecar beside it (the same name, ending `.json`).
/// Exit 0 when both were written, 1 when the view failed or did not start (the sidecar says
/// why), 2 when it could not run.
pub async fn snapshot(host: &crate::Host, args: SnapshotArgs) -> Result<ExitCode> {
    host.servers().settled().await;
    let tool = match host.ui_tool(&args.server, &args.tool) {
        Ok(tool) => tool,
        Err(e) => {
            note!("porthole: {}", e.message);
            return Ok(ExitCode::from(2));
        }
    };
    let input = args
        .args
        .clone()
        .unwrap_or_else(|| crate::live::sample_arguments(&tool.input_schema));
    let request = crate::live::LiveRequest {
        server: args.server.clone(),
        tool: args.tool.clone(),
        input: input.clone(),
        result: match &args.result {
            Some(result) => crate::live::LiveResult::Given(result.clone()),
            None => crate::live::LiveResult::Call,
        },
        width: args.width,
        height: args.height,
        theme: args.theme,
        still: true,
        limit: args.limit,
        settle: Some((SETTLE_QUIET, SETTLE_MOST)),
        picture: true,
    };
    let outcome = match host.show_view(request).await {
        Ok(outcome) => outcome,
        Err(e) => {
            note!("porthole: {}", e.message);
            return Ok(ExitCode::from(2));
        }
    };
    let o = outcome
        .observation
        .clone()
        .unwrap_or_else(crate::views::Observation::empty);
    let (state, reason) = match &outcome.progress {
        crate::views::ViewProgress::Ready => ("ready", None),
        crate::views::ViewProgress::Loading => (
            "not-initialized",
            Some(format!(
                "the view did not complete ui/initialize within {} ms",
                args.limit.as_millis()
            )),
        ),
        crate::views::ViewProgress::Failed(why) => ("failed", Some(why.clone())),
    };
    let sidecar = serde_json::json!({
        "server": args.server,
        "tool": args.tool,
        "input": input,
        "result": outcome.result,
        "callError": outcome.call_error,
        "state": state,
        "reason": reason,
        "theme": args.theme.as_str(),
        "window": {"width": args.width, "height": args.height},
        "viewSize": o.size.map(|(w, h)| serde_json::json!({"width": w, "height": h})),
        "timings": {"initializedMs": o.initialized_ms, "settledMs": outcome.settled_ms},
        "console": o.diagnostics.iter().filter(|d| d.kind != "csp" && !d.is_log()).collect::<Vec<_>>(),
        "cspViolations": o.diagnostics.iter().filter(|d| d.kind == "csp").collect::<Vec<_>>(),
        "unsupported": o.unsupported,
        "logs": o.logs,
        "messages": o.messages,
        "messagesDropped": o.messages_dropped,
        "stillness": {
            "clock": "Date is fixed at 2026-01-01T12:00:00Z",
            "animations": "CSS animations and transitions are off, and the caret does not blink",
            "fonts": "the machine's own fonts (the same machine and fonts give the same picture)",
        },
    });
    let sidecar_path = args.out.with_extension("json");
    let write = |path: &std::path::Path, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let written =
        write(&sidecar_path, serde_json::to_string_pretty(&sidecar)?.as_bytes()).and_then(|()| match &outcome.png {
            Some(png) => write(&args.out, png),
            None => Ok(()),
        });
    if let Err(e) = written {
        note!("porthole: {e}");
        return Ok(ExitCode::from(2));
    }
    match reason {
        None => {
            out!(
                "{} ({} × {}, {}); {}",
                args.out.display(),
                args.width,
                args.height,
                args.theme.as_str(),
                sidecar_path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(why) => {
            note!("porthole: no picture: {why} (see {})", sidecar_path.display());
            Ok(ExitCode::from(1))
        }
    }
}

/// `porthole call`: one tool call, and both facings of its result.
pub async fn call(
    setup: Setup,
    server: &str,
    tool: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    json: bool,
) -> Result<ExitCode> {
    let loaded = load_config(&setup);
    let Some(servers) = start_one(&setup, loaded, server).await? else {
        return Ok(stopped());
    };
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let cancel = tokio_util::sync::CancellationToken::new();
    let printer = tokio::spawn(async move {
        while let Some(p) = progress_rx.recv().await {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            note!(
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
    if let Err(e) = printer.await {
        tracing::error!("the progress printer stopped: {e}");
    }
    servers.shutdown().await;
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            note!("porthole: {server}/{tool}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if json {
        out!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        out!(
            "== What the model gets{} ==",
            if outcome.model.is_error { " (isError: true)" } else { "" }
        );
        for block in &outcome.model.content {
            match block.get("text").and_then(|t| t.as_str()) {
                Some(text) if block["type"] == "text" => out!("{text}"),
                _ => out!("{}", serde_json::to_string(block)?),
            }
        }
        out!("\n== What the view gets ==");
        out!("{}", serde_json::to_string_pretty(&outcome.view)?);
    }
    Ok(if outcome.model.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Answers servers' sampling requests in a `--yes` run: each goes to the run's model (or one
/// its hints name, when the provider has it) and is audited; a line on stderr says so.
async fn sample_unattended(
    mut requests: tokio::sync::mpsc::Receiver<porthole_mcp::SamplingRequest>,
    choice: ModelChoice,
    store: Store,
) {
    while let Some(request) = requests.recv().await {
        let answer = match crate::sampling::SamplingPrompt::read(&request.params) {
            Err(e) => Err(e),
            Ok(prompt) => {
                note!("porthole: {} asks the model (allowed by --yes)", request.server);
                prompt.answer_with(&choice).await
            }
        };
        let detail = match &answer {
            Ok((_, model)) => {
                serde_json::json!({"outcome": "ok", "model": model, "from": "server", "allowedBy": "--yes"})
            }
            Err(e) => serde_json::json!({"outcome": "error", "error": e, "from": "server", "allowedBy": "--yes"}),
        };
        crate::sampling::audit_sampling(Some(&store), &request.server, detail);
        let answer = answer.map(|(text, model)| crate::sampling::create_message_result(&text, &model));
        request.respond.send(answer).ok();
    }
}

/// Starts only the server named `server`; `None` when the person stopped it while it started.
async fn start_one(setup: &Setup, loaded: LoadedConfig, server: &str) -> Result<Option<Servers>> {
    let options = setup.connect_options(loaded.mcp_apps_enabled(), ElicitationPolicy::Decline);
    let configs: Vec<_> = loaded.servers.into_iter().filter(|s| s.name == server).collect();
    if configs.is_empty() {
        anyhow::bail!("no server named {server:?} in {}", setup.config_files[0].display());
    }
    let servers = Servers::start(configs, options);
    if settle_or_stop(&servers).await.is_none() {
        servers.shutdown().await;
        return Ok(None);
    }
    Ok(Some(servers))
}

/// Starts only `server`, asks it one thing, and closes it: its answer as JSON, or the code to
/// exit with (2 when the server failed, said on stderr as `porthole: {what}: {why}`; 130 when
/// the person stopped it while the server started).
async fn ask_one<T, F>(
    setup: &Setup,
    loaded: LoadedConfig,
    server: &str,
    what: &str,
    ask: impl FnOnce(Servers) -> F,
) -> Result<Result<serde_json::Value, ExitCode>>
where
    T: serde::Serialize,
    F: std::future::Future<Output = Result<T, porthole_mcp::CallError>>,
{
    let Some(servers) = start_one(setup, loaded, server).await? else {
        return Ok(Err(stopped()));
    };
    let result = ask(servers.clone()).await;
    servers.shutdown().await;
    match result {
        Ok(answer) => Ok(Ok(serde_json::to_value(&answer)?)),
        Err(e) => {
            note!("porthole: {what}: {e}");
            Ok(Err(ExitCode::from(2)))
        }
    }
}

/// `porthole prompt`: the messages prompt `name` of `server` gives with `arguments` (each
/// value a string; numbers and booleans are written as such). Exit 2 when there are none.
pub async fn prompt(
    setup: Setup,
    server: &str,
    name: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    json: bool,
) -> Result<ExitCode> {
    let loaded = load_config(&setup);
    let arguments = arguments
        .map(|map| {
            map.into_iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => Ok((k, serde_json::Value::String(s))),
                    v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_)) => {
                        Ok((k, serde_json::Value::String(v.to_string())))
                    }
                    other => bail!("argument {k:?} must be a string, not {other}"),
                })
                .collect::<Result<serde_json::Map<_, _>>>()
        })
        .transpose()?;
    let what = format!("{server}/{name}");
    let asked = ask_one(&setup, loaded, server, &what, |s| async move {
        s.get_prompt(server, name, arguments).await
    });
    let value = match asked.await? {
        Ok(value) => value,
        Err(code) => return Ok(code),
    };
    if json {
        out!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(description) = value["description"].as_str() {
        out!("# {description}");
    }
    for message in value["messages"].as_array().into_iter().flatten() {
        out!("== {} ==", message["role"].as_str().unwrap_or("user"));
        let content = &message["content"];
        match content["text"].as_str() {
            Some(text) if content["type"] == "text" => out!("{text}"),
            _ => out!("{}", serde_json::to_string(content)?),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `porthole resource read`: resource `uri` of `server` — text contents as text, others as a
/// line saying what they are (`--json`: the whole `resources/read` answer). Exit 2 when it
/// cannot be read.
pub async fn read_resource(setup: Setup, server: &str, uri: &str, json: bool) -> Result<ExitCode> {
    let loaded = load_config(&setup);
    let what = format!("{server}: {uri}");
    let asked = ask_one(&setup, loaded, server, &what, |s| async move {
        s.read_resource(server, uri).await
    });
    let value = match asked.await? {
        Ok(value) => value,
        Err(code) => return Ok(code),
    };
    if json {
        out!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let contents = value["contents"].as_array().cloned().unwrap_or_default();
    for content in &contents {
        if contents.len() > 1 {
            out!("== {} ==", content["uri"].as_str().unwrap_or(uri));
        }
        let mime = content["mimeType"].as_str().unwrap_or("");
        let textual = mime.starts_with("text/") || mime.ends_with("json") || mime.ends_with("xml");
        let blob_text = content["blob"]
            .as_str()
            .filter(|_| textual)
            .and_then(|b| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b.trim()).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok());
        match (
            content["text"].as_str().or(blob_text.as_deref()),
            content["blob"].as_str(),
        ) {
            (Some(text), _) => out!("{text}"),
            (None, Some(blob)) => out!(
                "[binary, {}, {} bytes: --json prints it as base64]",
                content["mimeType"].as_str().unwrap_or("of no stated type"),
                blob.trim_end_matches('=').len() * 3 / 4
            ),
            (None, None) => out!("[no contents]"),
        }
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
        out!("{}", s.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
