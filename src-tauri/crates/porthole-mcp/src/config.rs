//! MCP server configuration: the profile's `config.json` and files passed with `--mcp-config`.
//!
//! Accepted shapes, as users have them:
//! - Claude Desktop / Cursor: `{"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"url", "headers"}}}`
//! - VS Code: `{"servers": {"name": {"type": "stdio"|"http", ...}}}`
//!
//! Porthole's own per-server keys may sit beside those: `enabled` (default true), `mcpApps`
//! (advertise the MCP Apps extension to this server; default true), `timeout` (seconds) and
//! `alwaysAllow` (tool names that need no approval), `roots`, `skybridge` and `watch` (files or
//! folders whose change restarts the server and re-creates its open views: hot reload for view
//! authors; a relative path is relative to the config file's folder).
//!
//! A malformed file or server entry becomes a [`ConfigProblem`] naming the file, line and field;
//! the other servers still load.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The default time allowed to connect to a server and to answer one request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Values may be secrets (API keys): never printed by `Debug`.
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    StreamableHttp {
        url: String,
        /// Values may be secrets (`Authorization`): never printed by `Debug`.
        headers: BTreeMap<String, String>,
    },
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field(
                    "env",
                    &env.keys().map(|k| format!("{k}=<redacted>")).collect::<Vec<_>>(),
                )
                .field("cwd", cwd)
                .finish(),
            Transport::StreamableHttp { url, headers } => f
                .debug_struct("StreamableHttp")
                .field("url", &porthole_secrets::redact::url(url))
                .field(
                    "headers",
                    &headers.keys().map(|k| format!("{k}: <redacted>")).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub mcp_apps: bool,
    pub timeout: Duration,
    pub always_allow: Vec<String>,
    /// The folders this server is given as its roots, instead of the app's (the config's
    /// `roots`: absolute paths).
    pub roots: Option<Vec<PathBuf>>,
    /// Whether the MCP Apps capability also names `text/html+skybridge` (the config's
    /// `skybridge`, default off): for servers written for the OpenAI Apps SDK that look for it.
    pub skybridge: bool,
    /// Files and folders whose change restarts the server and re-creates its open views (the
    /// config's `watch`; relative paths are resolved against the config file's folder).
    pub watch: Vec<PathBuf>,
    /// The file this entry came from, for error messages.
    pub source: PathBuf,
}

impl ServerConfig {
    /// A stdio server started with `command`, with what a config file gives an entry that has
    /// only `"command"`: no arguments, environment or working directory, enabled, told about
    /// MCP Apps, [`DEFAULT_TIMEOUT`], nothing allowed without approval. It comes from no file
    /// (`source` is empty).
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> ServerConfig {
        ServerConfig::with_transport(
            name.into(),
            Transport::Stdio {
                command: command.into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A Streamable HTTP server at `url`, with what a config file gives an entry that has only
    /// `"url"`: no headers, and the same defaults as [`ServerConfig::stdio`].
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> ServerConfig {
        ServerConfig::with_transport(
            name.into(),
            Transport::StreamableHttp {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    fn with_transport(name: String, transport: Transport) -> ServerConfig {
        ServerConfig {
            name,
            transport,
            enabled: true,
            mcp_apps: true,
            timeout: DEFAULT_TIMEOUT,
            always_allow: vec![],
            roots: None,
            skybridge: false,
            watch: vec![],
            source: PathBuf::new(),
        }
    }

    /// Adds these arguments to the command line of a stdio server.
    ///
    /// # Panics
    /// On a Streamable HTTP server, which has no command line.
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> ServerConfig {
        match &mut self.transport {
            Transport::Stdio { args: have, .. } => have.extend(args.into_iter().map(Into::into)),
            Transport::StreamableHttp { .. } => {
                panic!("server {:?} is not a stdio server: it has no arguments", self.name)
            }
        }
        self
    }

    /// Sets an environment variable of a stdio server's process (replacing an earlier value).
    ///
    /// # Panics
    /// On a Streamable HTTP server, which has no process.
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> ServerConfig {
        match &mut self.transport {
            Transport::Stdio { env, .. } => {
                env.insert(name.into(), value.into());
            }
            Transport::StreamableHttp { .. } => {
                panic!("server {:?} is not a stdio server: it has no environment", self.name)
            }
        }
        self
    }

    /// Sets an HTTP header sent with every request to a Streamable HTTP server (replacing an
    /// earlier value).
    ///
    /// # Panics
    /// On a stdio server, which has no requests to carry headers.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> ServerConfig {
        match &mut self.transport {
            Transport::StreamableHttp { headers, .. } => {
                headers.insert(name.into(), value.into());
            }
            Transport::Stdio { .. } => panic!("server {:?} is not an HTTP server: it has no headers", self.name),
        }
        self
    }

    /// Sets the time allowed to connect and to answer one request.
    pub fn with_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.timeout = timeout;
        self
    }

    /// Adds tools whose calls need no approval (the config's `alwaysAllow`).
    pub fn with_always_allow(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> ServerConfig {
        self.always_allow.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Gives the server these folders as its roots instead of the app's (the config's `roots`).
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = impl Into<PathBuf>>) -> ServerConfig {
        self.roots = Some(roots.into_iter().map(Into::into).collect());
        self
    }

    /// Turns the server off (the config's `"enabled": false`): it is listed, never connected.
    pub fn disabled(mut self) -> ServerConfig {
        self.enabled = false;
        self
    }

    /// Does not tell this server about MCP Apps (the config's `"mcpApps": false`).
    pub fn without_mcp_apps(mut self) -> ServerConfig {
        self.mcp_apps = false;
        self
    }
}

/// Something wrong in a config file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub file: PathBuf,
    pub line: Option<usize>,
    /// The server entry, when the problem is inside one.
    pub server: Option<String>,
    /// The field, when one field is at fault.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(server) = &self.server {
            write!(f, ": server {server:?}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ", field {field:?}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A remote agent Porthole can talk to over AG-UI (`"agents": {"NAME": {"url", "headers"}}`),
/// its placeholders filled in as a server's are.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub name: String,
    /// Where `RunAgentInput` is POSTed (http:// or https://).
    pub url: String,
    pub headers: BTreeMap<String, String>,
}

/// The servers of one or more files, and what was wrong in them.
#[derive(Debug, Default, Clone)]
pub struct LoadedConfig {
    pub servers: Vec<ServerConfig>,
    /// Remote AG-UI agents; a name seen again replaces the earlier entry.
    pub agents: Vec<AgentConfig>,
    pub problems: Vec<ConfigProblem>,
    /// The global MCP Apps switch (top-level `"mcpApps": false` turns it off), if a file set it.
    pub mcp_apps: Option<bool>,
}

impl LoadedConfig {
    /// Loads each file in order; a server name seen again replaces the earlier entry (so a
    /// `--mcp-config` file can override the profile's own).
    ///
    /// The servers come in the order of each name's last entry. Linear in the number of
    /// entries: a profile with tens of thousands of (disabled) servers still loads at once.
    pub fn load(files: &[PathBuf]) -> LoadedConfig {
        let mut loaded = LoadedConfig::default();
        for file in files {
            match std::fs::read_to_string(file) {
                Ok(text) => {
                    let other = parse_config(file, &text);
                    loaded.servers.extend(other.servers);
                    for agent in other.agents {
                        loaded.agents.retain(|a| a.name != agent.name);
                        loaded.agents.push(agent);
                    }
                    loaded.problems.extend(other.problems);
                    loaded.mcp_apps = other.mcp_apps.or(loaded.mcp_apps);
                }
                Err(e) => loaded.problems.push(ConfigProblem {
                    file: file.clone(),
                    line: None,
                    server: None,
                    field: None,
                    message: format!("cannot read the file: {e}"),
                }),
            }
        }
        loaded.servers = last_entry_of_each_name(std::mem::take(&mut loaded.servers));
        loaded
    }

    /// Whether MCP Apps is on: off when `PORTHOLE_MCP_APPS=off` or a config file says
    /// `"mcpApps": false`.
    pub fn mcp_apps_enabled(&self) -> bool {
        crate::mcp_apps_enabled_by_env() && self.mcp_apps.unwrap_or(true)
    }
}

/// Keeps only the last entry of each server name, in the order of those last entries (an
/// entry seen again replaces the earlier one and takes its place at the end), in one pass.
fn last_entry_of_each_name(servers: Vec<ServerConfig>) -> Vec<ServerConfig> {
    let mut seen = HashSet::with_capacity(servers.len());
    let mut kept: Vec<ServerConfig> = servers
        .into_iter()
        .rev()
        .filter(|s| seen.insert(s.name.clone()))
        .collect();
    kept.reverse();
    kept
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    enabled: Option<bool>,
    /// Claude Desktop's and Cursor's spelling of "off".
    disabled: Option<bool>,
    mcp_apps: Option<bool>,
    /// Seconds.
    timeout: Option<f64>,
    #[serde(default, alias = "autoApprove")]
    always_allow: Vec<String>,
    /// Folders given to this server as its roots instead of the app's.
    roots: Option<Vec<PathBuf>>,
    /// Advertise `text/html+skybridge` too.
    skybridge: Option<bool>,
    /// Files or folders to watch (hot reload).
    #[serde(default)]
    watch: Vec<PathBuf>,
    /// VS Code's `envFile` and other keys we accept but do not use.
    #[serde(rename = "envFile")]
    _env_file: Option<String>,
    #[serde(rename = "description")]
    _description: Option<String>,
}

/// Parses one config file's text. Never fails as a whole: problems are collected.
///
/// Placeholders are filled in as VS Code does: `${env:NAME}` from the environment, and
/// `${input:ID}` (declared in the file's `inputs`) from `PORTHOLE_INPUT_<ID>` (upper case,
/// other characters as `_`). A server whose placeholder has no value is reported, not loaded.
pub fn parse_config(file: &Path, text: &str) -> LoadedConfig {
    parse_config_with(file, text, &|name| std::env::var(name).ok())
}

/// The environment variable that answers VS Code's `${input:ID}`.
pub fn input_variable(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("PORTHOLE_INPUT_{id}")
}

/// Replaces every `${env:X}` and `${input:X}` in `value`, or names the first one with no value.
fn fill_placeholders(
    value: &str,
    inputs: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else { break };
        let inner = &rest[start + 2..start + len];
        let filled = if let Some(name) = inner.strip_prefix("env:") {
            env(name).ok_or_else(|| format!("needs the environment variable {name}, which is not set"))?
        } else if let Some(id) = inner.strip_prefix("input:") {
            let variable = input_variable(id);
            env(&variable).ok_or_else(|| {
                let about = inputs
                    .get(id)
                    .and_then(|i| i.get("description"))
                    .and_then(Value::as_str)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                format!("needs the input {id:?}{about}: set {variable}")
            })?
        } else {
            rest[start..start + len + 1].to_string()
        };
        out.push_str(&rest[..start]);
        out.push_str(&filled);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Fills the placeholders of every string in a server entry.
fn fill_entry(
    entry: &Value,
    inputs: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, String> {
    Ok(match entry {
        Value::String(s) => Value::String(fill_placeholders(s, inputs, env)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| fill_entry(i, inputs, env))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), fill_entry(v, inputs, env)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

pub(crate) fn parse_config_with(file: &Path, text: &str, env: &dyn Fn(&str) -> Option<String>) -> LoadedConfig {
    // Editors on Windows (Notepad) may start a UTF-8 file with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut loaded = LoadedConfig::default();
    let key_lines = KeyLines::new(text);
    let problem = |line: Option<usize>, server: Option<&str>, field: Option<&str>, message: String| ConfigProblem {
        file: file.to_path_buf(),
        line,
        server: server.map(str::to_string),
        field: field.map(str::to_string),
        message,
    };
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            loaded
                .problems
                .push(problem(Some(e.line()), None, None, format!("not valid JSON: {e}")));
            return loaded;
        }
    };
    let Some(root) = root.as_object() else {
        loaded
            .problems
            .push(problem(Some(1), None, None, "expected a JSON object at the top".into()));
        return loaded;
    };
    match root.get("mcpApps") {
        None => {}
        Some(Value::Bool(on)) => loaded.mcp_apps = Some(*on),
        Some(other) => loaded.problems.push(problem(
            key_lines.line_of("mcpApps"),
            None,
            Some("mcpApps"),
            format!("expected true or false, not {other}"),
        )),
    }
    let mut found_any_key = false;
    if let Some(section) = root.get("agents") {
        found_any_key = true;
        parse_agents(file, section, root, env, &key_lines, &mut loaded);
    }
    for key in ["mcpServers", "servers"] {
        let Some(section) = root.get(key) else { continue };
        found_any_key = true;
        let Some(section) = section.as_object() else {
            loaded.problems.push(problem(
                key_lines.line_of(key),
                None,
                Some(key),
                "expected an object of servers".into(),
            ));
            continue;
        };
        let inputs = inputs_of(root);
        for (name, entry) in section {
            let entry = match fill_entry(entry, &inputs, env) {
                Ok(filled) => filled,
                Err(message) => {
                    loaded
                        .problems
                        .push(problem(key_lines.line_of(name), Some(name), None, message));
                    continue;
                }
            };
            match parse_server(file, name, &entry) {
                Ok(server) => loaded.servers.push(server),
                Err((field, message)) => {
                    loaded
                        .problems
                        .push(problem(key_lines.line_of(name), Some(name), field.as_deref(), message))
                }
            }
        }
    }
    if !found_any_key && !root.is_empty() {
        loaded.problems.push(problem(
            Some(1),
            None,
            None,
            "no \"mcpServers\" (Claude Desktop, Cursor), \"servers\" (VS Code) or \"agents\" object found".into(),
        ));
    }
    loaded
}

/// VS Code's `inputs`, by id (what `${input:ID}` placeholders name).
fn inputs_of(root: &Map<String, Value>) -> Map<String, Value> {
    root.get("inputs")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|i| Some((i.get("id")?.as_str()?.to_string(), i.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The `agents` section: each entry `{"url", "headers"?}`, placeholders filled in.
fn parse_agents(
    file: &Path,
    section: &Value,
    root: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
    key_lines: &KeyLines,
    loaded: &mut LoadedConfig,
) {
    let problem = |line: Option<usize>, agent: Option<&str>, field: Option<&str>, message: String| ConfigProblem {
        file: file.to_path_buf(),
        line,
        server: agent.map(str::to_string),
        field: field.map(str::to_string),
        message,
    };
    let Some(section) = section.as_object() else {
        loaded.problems.push(problem(
            key_lines.line_of("agents"),
            None,
            Some("agents"),
            "expected an object of agents".into(),
        ));
        return;
    };
    let inputs = inputs_of(root);
    for (name, entry) in section {
        let line = key_lines.line_of(name);
        let mut fail = |field: Option<&str>, message: String| {
            loaded.problems.push(problem(line, Some(name), field, message));
        };
        if name.trim().is_empty() {
            fail(None, "an agent needs a non-empty name".into());
            continue;
        }
        let entry = match fill_entry(entry, &inputs, env) {
            Ok(filled) => filled,
            Err(message) => {
                fail(None, message);
                continue;
            }
        };
        let Some(obj) = entry.as_object() else {
            fail(None, "expected an object with \"url\"".into());
            continue;
        };
        let url = match obj.get("url").and_then(Value::as_str) {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => url.to_string(),
            Some(url) => {
                let shown = porthole_secrets::redact::url(url);
                fail(Some("url"), format!("{shown:?} is not an http:// or https:// URL"));
                continue;
            }
            None => {
                fail(Some("url"), "an agent needs the \"url\" its runs are sent to".into());
                continue;
            }
        };
        let headers = match obj.get("headers") {
            None => BTreeMap::new(),
            Some(Value::Object(headers)) if headers.values().all(Value::is_string) => headers
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect(),
            Some(_) => {
                fail(Some("headers"), "expected an object of header names to strings".into());
                continue;
            }
        };
        loaded.agents.push(AgentConfig {
            name: name.clone(),
            url,
            headers,
        });
    }
}

fn parse_server(file: &Path, name: &str, entry: &Value) -> Result<ServerConfig, (Option<String>, String)> {
    if name.trim().is_empty() {
        return Err((None, "a server needs a non-empty name".into()));
    }
    let Some(obj) = entry.as_object() else {
        return Err((None, "expected an object".into()));
    };
    let raw: RawServer = serde_path_to_error::deserialize(Value::Object(obj.clone())).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let field = if path != "." {
            Some(path)
        } else {
            field_named_in(&message)
        };
        (field, message)
    })?;
    let kind = raw.kind.as_deref();
    let transport = match (kind, raw.command, raw.url) {
        (Some("stdio") | None, Some(command), None) => {
            if command.trim().is_empty() {
                return Err((Some("command".into()), "must not be empty".into()));
            }
            Transport::Stdio {
                command,
                args: raw.args,
                env: raw.env,
                cwd: raw.cwd,
            }
        }
        (Some("http" | "streamable-http" | "streamableHttp") | None, None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                let shown = porthole_secrets::redact::url(&url);
                return Err((
                    Some("url".into()),
                    format!("{shown:?} is not an http:// or https:// URL"),
                ));
            }
            Transport::StreamableHttp {
                url,
                headers: raw.headers,
            }
        }
        (Some("sse"), _, _) => {
            return Err((
                Some("type".into()),
                "the legacy HTTP+SSE transport (2024-11-05) is not supported; use the server's \
                 Streamable HTTP endpoint or a stdio bridge"
                    .into(),
            ));
        }
        (Some(other), _, _) if !matches!(other, "stdio" | "http" | "streamable-http" | "streamableHttp") => {
            return Err((Some("type".into()), format!("unknown transport type {other:?}")));
        }
        (_, Some(_), Some(_)) => {
            return Err((None, "has both \"command\" and \"url\"; pick one transport".into()));
        }
        (_, None, None) => return Err((None, "needs \"command\" (stdio) or \"url\" (Streamable HTTP)".into())),
        (_, _, _) => return Err((Some("type".into()), "does not match the fields given".into())),
    };
    let timeout = match raw.timeout {
        None => DEFAULT_TIMEOUT,
        Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => Duration::from_secs_f64(t),
        Some(t) => {
            return Err((
                Some("timeout".into()),
                format!("{t} is not a number of seconds between 0 and 86400"),
            ));
        }
    };
    if let Some(relative) = raw.roots.iter().flatten().find(|r| !r.is_absolute()) {
        return Err((
            Some("roots".into()),
            format!("{} is not an absolute path", relative.display()),
        ));
    }
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled: raw.enabled.unwrap_or(true) && !raw.disabled.unwrap_or(false),
        mcp_apps: raw.mcp_apps.unwrap_or(true),
        timeout,
        always_allow: raw.always_allow,
        roots: raw.roots,
        skybridge: raw.skybridge.unwrap_or(false),
        watch: raw
            .watch
            .into_iter()
            .map(|p| match file.parent() {
                Some(folder) if p.is_relative() => folder.join(p),
                _ => p,
            })
            .collect(),
        source: file.to_path_buf(),
    })
}

/// serde names an unknown or missing field in backticks ("unknown field `comand`").
fn field_named_in(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(message[start..end].to_string())
}

/// The 1-based line where each object key first appears in a file's text, found in one pass
/// when the first problem asks (so a file with thousands of bad entries is still read at once).
struct KeyLines<'a> {
    text: &'a str,
    lines: std::cell::OnceCell<HashMap<&'a str, usize>>,
}

impl<'a> KeyLines<'a> {
    fn new(text: &'a str) -> KeyLines<'a> {
        KeyLines {
            text,
            lines: std::cell::OnceCell::new(),
        }
    }

    /// The line of the first `"key":` in the text (the key spelt as JSON writes it).
    fn line_of(&self, key: &str) -> Option<usize> {
        let quoted = serde_json::to_string(key).ok()?;
        self.lines
            .get_or_init(|| key_lines(self.text))
            .get(quoted.as_str())
            .copied()
    }
}

/// Every quoted string followed by `:` (an object key, quotes included) and the 1-based line
/// of its first appearance.
fn key_lines(text: &str) -> HashMap<&str, usize> {
    let bytes = text.as_bytes();
    let mut found = HashMap::new();
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(bytes.len());
                let after = text[end..].trim_start_matches([' ', '\t', '\r', '\n']);
                if after.starts_with(':') {
                    found.entry(&text[start..end]).or_insert(line);
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> LoadedConfig {
        parse_config(Path::new("/x/config.json"), text)
    }

    #[test]
    fn remote_agents_are_read_with_their_headers_and_checked() {
        let env = |name: &str| (name == "AGENT_TOKEN").then(|| "t0k".to_string());
        let text = r#"{"agents": {
            "helper": {"url": "https://agents.example/run", "headers": {"Authorization": "Bearer ${env:AGENT_TOKEN}"}},
            "local": {"url": "http://127.0.0.1:8000/"},
            "ftp": {"url": "ftp://x"},
            "nourl": {"headers": {}},
            "badheaders": {"url": "https://x", "headers": {"n": 1}},
            "noenv": {"url": "https://x", "headers": {"k": "${env:MISSING}"}}
        }}"#;
        let c = parse_config_with(Path::new("/x/config.json"), text, &env);
        let names: Vec<_> = c.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["helper", "local"]);
        assert_eq!(c.agents[0].headers["Authorization"], "Bearer t0k");
        assert_eq!(c.agents[1].url, "http://127.0.0.1:8000/");
        let mut problems: Vec<_> = c
            .problems
            .iter()
            .map(|p| (p.server.clone().unwrap(), p.field.clone()))
            .collect();
        problems.sort();
        assert_eq!(
            problems,
            [
                ("badheaders".to_string(), Some("headers".to_string())),
                ("ftp".to_string(), Some("url".to_string())),
                ("noenv".to_string(), None),
                ("nourl".to_string(), Some("url".to_string())),
            ]
        );
        assert!(
            c.problems.iter().all(|p| p.line.is_some()),
            "each problem names its line"
        );
        // A file with only agents is a config file, not a file with no servers.
        let only = parse(r#"{"agents": {"a": {"url": "https://a"}}}"#);
        assert!(only.problems.is_empty(), "{:?}", only.problems);
    }

    #[test]
    fn claude_desktop_file_as_it_is() {
        let c = parse(
            r#"{"mcpServers": {
                 "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                        "env": {"API_KEY": "sk-secret"}},
                 "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t0ken"}}
               }}"#,
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.servers.len(), 2);
        let fs = &c.servers[0];
        assert!(fs.enabled && fs.mcp_apps);
        assert_eq!(fs.timeout, DEFAULT_TIMEOUT);
        match &fs.transport {
            Transport::Stdio { command, args, .. } => {
                assert_eq!(command, "npx");
                assert_eq!(args.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(c.servers[1].transport, Transport::StreamableHttp { .. }));
    }

    #[test]
    fn a_file_that_starts_with_a_byte_order_mark_is_read() {
        let c = parse("\u{feff}{\"mcpServers\": {\"fs\": {\"command\": \"npx\"}}}");
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.servers.len(), 1);
    }

    #[test]
    fn constructed_configs_equal_loaded_entries_with_only_that_field() {
        let c = parse(r#"{"mcpServers": {"local": {"command": "node"}, "remote": {"url": "https://h/mcp"}}}"#);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let from_file = |config: ServerConfig| ServerConfig {
            source: PathBuf::from("/x/config.json"),
            ..config
        };
        assert_eq!(from_file(ServerConfig::stdio("local", "node")), c.servers[0]);
        assert_eq!(from_file(ServerConfig::http("remote", "https://h/mcp")), c.servers[1]);
        assert_eq!(ServerConfig::stdio("local", "node").source, PathBuf::new());
    }

    #[test]
    fn watched_paths_are_resolved_against_the_config_files_folder() {
        let c = parse(r#"{"mcpServers": {"dev": {"command": "node", "watch": ["dist", "/abs/views"]}}}"#);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(
            c.servers[0].watch,
            vec![PathBuf::from("/x/dist"), PathBuf::from("/abs/views")]
        );
        let bad = parse(r#"{"mcpServers": {"dev": {"command": "node", "watch": "dist"}}}"#);
        assert_eq!(bad.problems.len(), 1, "a watch that is not a list is refused");
    }

    #[test]
    fn constructed_configs_equal_loaded_entries_with_every_field() {
        let c = parse(
            r#"{"mcpServers": {
                 "local": {"command": "node", "args": ["s.js", "--x"], "env": {"A": "1", "B": "2"},
                           "timeout": 5, "alwaysAllow": ["echo", "add"], "enabled": false, "mcpApps": false},
                 "remote": {"url": "https://h/mcp", "headers": {"X-Key": "k", "Authorization": "Bearer t"}}
               }}"#,
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let from_file = |config: ServerConfig| ServerConfig {
            source: PathBuf::from("/x/config.json"),
            ..config
        };
        let local = ServerConfig::stdio("local", "node")
            .with_args(["s.js"])
            .with_args(["--x"])
            .with_env("A", "0")
            .with_env("A", "1")
            .with_env("B", "2")
            .with_timeout(Duration::from_secs(5))
            .with_always_allow(["echo", "add"])
            .disabled()
            .without_mcp_apps();
        assert_eq!(from_file(local), c.servers[0]);
        let remote = ServerConfig::http("remote", "https://h/mcp")
            .with_header("X-Key", "k")
            .with_header("Authorization", "Bearer t");
        assert_eq!(from_file(remote), c.servers[1]);
    }

    #[test]
    #[should_panic(expected = "not a stdio server")]
    fn arguments_on_an_http_server_are_a_mistake() {
        let _ = ServerConfig::http("remote", "https://h/mcp").with_args(["x"]);
    }

    #[test]
    #[should_panic(expected = "not an HTTP server")]
    fn headers_on_a_stdio_server_are_a_mistake() {
        let _ = ServerConfig::stdio("local", "node").with_header("X-Key", "k");
    }

    #[test]
    fn debug_output_never_shows_secrets() {
        let c = parse(
            r#"{"mcpServers": {"a": {"command": "x", "env": {"API_KEY": "sk-secret"}},
                               "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer t0ken"}}}}"#,
        );
        let printed = format!("{:?}", c.servers);
        assert!(printed.contains("API_KEY=<redacted>"), "{printed}");
        assert!(
            !printed.contains("sk-secret") && !printed.contains("t0ken"),
            "{printed}"
        );
    }

    #[test]
    fn vs_code_servers_and_porthole_keys() {
        let c = parse(
            r#"{"servers": {"x": {"type": "stdio", "command": "node", "args": ["s.js"],
                                  "mcpApps": false, "timeout": 5, "alwaysAllow": ["echo"], "enabled": false}}}"#,
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let s = &c.servers[0];
        assert!(!s.mcp_apps && !s.enabled);
        assert_eq!(s.timeout, Duration::from_secs(5));
        assert_eq!(s.always_allow, vec!["echo".to_string()]);
        assert_eq!(s.roots, None, "the app's roots");
        assert!(!s.skybridge, "off unless asked");
    }

    #[test]
    fn a_server_may_have_roots_of_its_own_given_as_absolute_paths() {
        let c = parse(
            r#"{"mcpServers": {"fs": {"command": "x", "roots": ["/srv/data", "/home/me/notes"]},
                                          "bad": {"command": "y", "roots": ["notes"]}}}"#,
        );
        assert_eq!(
            c.servers[0].roots,
            Some(vec![PathBuf::from("/srv/data"), PathBuf::from("/home/me/notes")])
        );
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(
            c.problems[0]
                .to_string()
                .contains("field \"roots\": notes is not an absolute path"),
            "{}",
            c.problems[0]
        );
    }

    #[test]
    fn bad_entry_names_file_line_and_field_and_others_still_load() {
        let text = "{\n  \"mcpServers\": {\n    \"good\": {\"command\": \"a\"},\n    \"bad\": {\"command\": \"b\", \"args\": \"not-a-list\"}\n  }\n}";
        let c = parse(text);
        assert_eq!(c.servers.len(), 1);
        assert_eq!(c.servers[0].name, "good");
        let p = &c.problems[0];
        assert_eq!(p.line, Some(4));
        assert_eq!(p.server.as_deref(), Some("bad"));
        assert_eq!(p.field.as_deref(), Some("args"));
        let shown = p.to_string();
        assert!(
            shown.starts_with("/x/config.json:4: server \"bad\", field \"args\""),
            "{shown}"
        );
    }

    #[test]
    fn syntax_error_gives_line() {
        let c = parse("{\n \"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n }\n}");
        assert!(c.servers.is_empty());
        assert_eq!(c.problems[0].line, Some(3));
        assert!(c.problems[0].message.starts_with("not valid JSON"));
    }

    #[test]
    fn misspelt_field_and_legacy_sse_are_named() {
        let c = parse(r#"{"mcpServers": {"a": {"comand": "x"}, "b": {"type": "sse", "url": "http://h/sse"}}}"#);
        assert_eq!(c.problems.len(), 2);
        assert_eq!(c.problems[0].field.as_deref(), Some("comand"));
        assert!(c.problems[1].message.contains("HTTP+SSE"), "{}", c.problems[1].message);
    }

    #[test]
    fn vs_code_inputs_and_env_placeholders() {
        let text = r#"{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "Search API key", "password": true}],
  "servers": {
    "search": {"type": "stdio", "command": "node", "args": ["${env:HOME}/s.js"], "env": {"KEY": "${input:api-key}"}},
    "other": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}
  }
}"#;
        let env = |name: &str| match name {
            "HOME" => Some("/home/ada".to_string()),
            "PORTHOLE_INPUT_API_KEY" => Some("k-42".to_string()),
            _ => None,
        };
        let c = parse_config_with(Path::new("/x/mcp.json"), text, &env);
        assert_eq!(c.servers.len(), 1);
        match &c.servers[0].transport {
            Transport::Stdio { args, env, .. } => {
                assert_eq!(args, &["/home/ada/s.js"]);
                assert_eq!(env["KEY"], "k-42");
            }
            other => panic!("{other:?}"),
        }
        let p = &c.problems[0];
        assert_eq!(p.server.as_deref(), Some("other"));
        assert_eq!(p.line, Some(5));
        assert_eq!(p.message, "needs the input \"token\": set PORTHOLE_INPUT_TOKEN");
        assert_eq!(input_variable("api-key"), "PORTHOLE_INPUT_API_KEY");
    }

    #[test]
    fn the_global_mcp_apps_switch() {
        assert_eq!(parse(r#"{"mcpApps": false, "mcpServers": {}}"#).mcp_apps, Some(false));
        assert_eq!(parse(r#"{"mcpServers": {}}"#).mcp_apps, None);
        let bad = parse(r#"{"mcpApps": "no", "mcpServers": {}}"#);
        assert_eq!(bad.problems[0].field.as_deref(), Some("mcpApps"));
    }

    #[test]
    fn later_files_override_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(
            &a,
            r#"{"mcpServers": {"s": {"command": "one"}, "t": {"command": "two"}}}"#,
        )
        .unwrap();
        std::fs::write(&b, r#"{"mcpServers": {"s": {"command": "three"}}}"#).unwrap();
        let c = LoadedConfig::load(&[a, b, dir.path().join("missing.json")]);
        let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["t", "s"]);
        assert!(matches!(&c.servers[1].transport, Transport::Stdio { command, .. } if command == "three"));
        assert!(c.problems[0].message.starts_with("cannot read the file"));
    }

    /// A config file with `n` servers named `s0`…, each `entry`, written to `dir`.
    fn many_servers(dir: &Path, n: usize, entry: &str) -> PathBuf {
        let servers: Vec<String> = (0..n).map(|i| format!("\"s{i}\": {entry}")).collect();
        let file = dir.join(format!("{n}.json"));
        std::fs::write(&file, format!("{{\"mcpServers\": {{\n{}\n}}}}", servers.join(",\n"))).unwrap();
        file
    }

    /// The fastest of three loads of `file`, so a busy machine's pauses count less.
    fn load_time(file: &Path) -> Duration {
        (0..3)
            .map(|_| {
                let started = std::time::Instant::now();
                std::hint::black_box(LoadedConfig::load(&[file.to_path_buf()]));
                started.elapsed()
            })
            .min()
            .unwrap()
    }

    /// Ten times the servers take about ten times as long to load, not a hundred (40,000
    /// disabled entries took 12 s when each entry searched the ones before it: 50 to 70 times
    /// as long for 10,000 as for 1,000 in a debug build, against about 10 now).
    #[test]
    fn loading_is_linear_in_the_number_of_servers() {
        let dir = tempfile::tempdir().unwrap();
        for entry in [
            r#"{"command": "/bin/true", "disabled": true}"#,
            // Every entry a problem, whose line is looked up.
            r#"{"command": "/bin/true", "comand": "typo"}"#,
        ] {
            let small = many_servers(dir.path(), 1_000, entry);
            let large = many_servers(dir.path(), 10_000, entry);
            let loaded = LoadedConfig::load(std::slice::from_ref(&large));
            assert_eq!(loaded.servers.len() + loaded.problems.len(), 10_000);
            if let Some(last) = loaded.problems.last() {
                assert_eq!((last.server.as_deref(), last.line), (Some("s9999"), Some(10_001)));
            }
            let (small, large) = (load_time(&small), load_time(&large));
            let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
            assert!(
                ratio < 25.0,
                "1,000 entries: {small:?}; 10,000: {large:?} ({ratio:.0}×): {entry}"
            );
        }
    }

    #[test]
    fn a_problems_line_is_where_its_key_is_written() {
        let text = r#"{"mcpServers": {
  "a\"b": {"command": "x", "args": ["ok", "bad"]},
  "ok": {"args": ["x"]},
  "bad"
  : {"url": "ftp://h"}}}"#;
        let c = parse(text);
        let lines: Vec<_> = c.problems.iter().map(|p| (p.server.as_deref(), p.line)).collect();
        assert_eq!(lines, [(Some("ok"), Some(3)), (Some("bad"), Some(4))], "{text}");
    }
}
