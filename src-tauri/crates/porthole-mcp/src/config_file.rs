//! Changes to the profile's own config file (`config.json`): add, edit and remove a server
//! entry, switch a server (or MCP Apps) on and off. Every change is validated first and refused
//! with the reasons; keys Porthole does not manage, and the other entries, are kept as they were
//! (in their order); the file is replaced atomically (a temporary file, then a rename).
//!
//! Files passed with `--mcp-config` are never written: they are the user's, shared with other
//! tools.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

/// The sections server entries live in: Claude Desktop's and Cursor's, then VS Code's.
const SECTIONS: [&str; 2] = ["mcpServers", "servers"];

/// The longest server name accepted.
const MAX_NAME_CHARS: usize = 100;

/// A server as the settings form sends it. Env and header lines are text: `KEY=value` and
/// `Name: value`; a line with the name alone keeps the value stored for it (the form is never
/// sent stored values, which may be secrets).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerDraft {
    pub name: String,
    pub transport: DraftTransport,
    pub enabled: bool,
    pub mcp_apps: bool,
}

/// A remote AG-UI agent as the settings form sends it. Header lines are `Name: value`; a line
/// with the name alone keeps the value stored for it (stored values are never sent to the form).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentDraft {
    pub name: String,
    pub url: String,
    pub headers: Vec<String>,
}

/// How the server of a [`ServerDraft`] is reached.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum DraftTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<String>,
        cwd: String,
    },
    Http {
        url: String,
        headers: Vec<String>,
    },
}

/// One reason a change was refused: the form field at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invalid {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn invalid(field: &'static str, message: impl Into<String>) -> Invalid {
    Invalid {
        field,
        message: message.into(),
    }
}

/// What the settings list shows of an entry, read from the file as written (placeholders
/// unfilled). Env and header values are left out: only their names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EntryFields {
    pub transport: EntryTransport,
    pub command: String,
    pub args: Vec<String>,
    pub env_keys: Vec<String>,
    pub cwd: String,
    pub url: String,
    pub header_keys: Vec<String>,
    pub enabled: bool,
    pub mcp_apps: bool,
}

/// How a config entry's server is reached, as far as the settings can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum EntryTransport {
    /// A command started with its arguments.
    Stdio,
    /// Streamable HTTP at a URL.
    Http,
    /// Neither (another client's transport, or a broken entry).
    Unknown,
}

impl EntryFields {
    pub fn of(entry: &Value) -> EntryFields {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let keys = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let kind = entry.get("type").and_then(Value::as_str);
        let transport = if entry.get("command").is_some() && matches!(kind, None | Some("stdio")) {
            EntryTransport::Stdio
        } else if entry.get("url").is_some()
            && matches!(kind, None | Some("http" | "streamable-http" | "streamableHttp"))
        {
            EntryTransport::Http
        } else {
            EntryTransport::Unknown
        };
        EntryFields {
            transport,
            command: text("command"),
            args: entry
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            env_keys: keys("env"),
            cwd: text("cwd"),
            url: text("url"),
            header_keys: keys("headers"),
            enabled: entry.get("enabled").and_then(Value::as_bool).unwrap_or(true)
                && !entry.get("disabled").and_then(Value::as_bool).unwrap_or(false),
            mcp_apps: entry.get("mcpApps").and_then(Value::as_bool).unwrap_or(true),
        }
    }
}

/// A config file's JSON, read to be changed and written back.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    path: PathBuf,
    root: Map<String, Value>,
}

impl ConfigFile {
    /// Reads the file; a missing file reads as empty. A file that is not a JSON object is
    /// refused, so that nothing the user wrote is overwritten.
    pub fn read(path: &Path) -> Result<ConfigFile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        // A byte-order mark (Notepad's) is dropped; the file is written back without one.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let root = if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(root)) => root,
                Ok(_) => return Err(format!("{} is not a JSON object; fix it by hand first", path.display())),
                Err(e) => {
                    return Err(format!(
                        "{}:{} is not valid JSON ({e}); fix it by hand first",
                        path.display(),
                        e.line()
                    ));
                }
            }
        };
        Ok(ConfigFile {
            path: path.to_path_buf(),
            root,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every server entry, in file order (`mcpServers` first, then `servers`).
    pub fn servers(&self) -> Vec<(&str, &Value)> {
        SECTIONS
            .iter()
            .filter_map(|s| self.root.get(*s).and_then(Value::as_object))
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
            .collect()
    }

    pub fn server(&self, name: &str) -> Option<&Value> {
        self.servers().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The top-level MCP Apps switch, if the file sets it (absent: on).
    pub fn mcp_apps(&self) -> Option<bool> {
        self.root.get("mcpApps").and_then(Value::as_bool)
    }

    /// The section holding `name`.
    fn section_of(&self, name: &str) -> Option<&'static str> {
        SECTIONS.into_iter().find(|s| {
            self.root
                .get(*s)
                .and_then(Value::as_object)
                .is_some_and(|m| m.contains_key(name))
        })
    }

    /// Where new entries go: `mcpServers`, unless the file has only VS Code's `servers`.
    fn section_for_new(&self) -> &'static str {
        if self.root.contains_key("servers") && !self.root.contains_key("mcpServers") {
            "servers"
        } else {
            "mcpServers"
        }
    }

    fn section_mut(&mut self, section: &'static str) -> Result<&mut Map<String, Value>, String> {
        let path = self.path.display().to_string();
        self.root
            .entry(section)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| format!("\"{section}\" in {path} is not an object; fix it by hand first"))
    }

    fn entry_mut(&mut self, name: &str) -> Result<&mut Map<String, Value>, String> {
        let path = self.path.display().to_string();
        let section = self
            .section_of(name)
            .ok_or_else(|| format!("no server named {name:?} in {path}"))?;
        self.section_mut(section)?[name]
            .as_object_mut()
            .ok_or_else(|| format!("the entry of {name:?} in {path} is not an object; fix it by hand first"))
    }

    /// Adds a server (`original` is `None`) or changes the one named `original` (which may be
    /// renamed). `taken` is every server name configured anywhere (this file's included).
    pub fn save_server(
        &mut self,
        original: Option<&str>,
        draft: &ServerDraft,
        taken: &[String],
    ) -> Result<(), Vec<Invalid>> {
        let old = match original {
            Some(name) => match self.server(name) {
                Some(Value::Object(old)) => Some(old.clone()),
                Some(_) => {
                    return Err(vec![invalid(
                        "name",
                        format!("the entry of {name:?} is not an object; fix the file by hand"),
                    )]);
                }
                None => return Err(vec![invalid("name", format!("no server named {name:?} to change"))]),
            },
            None => None,
        };
        let name = draft.name.trim();
        let mut problems = Vec::new();
        if let Err(p) = check_name(name) {
            problems.push(p);
        } else if original != Some(name) && taken.iter().any(|t| t == name) {
            problems.push(invalid("name", format!("a server named {name:?} already exists")));
        }
        let section = match original.and_then(|o| self.section_of(o)) {
            Some(section) => section,
            None => self.section_for_new(),
        };
        let old = old.unwrap_or_default();
        let kind = match (&draft.transport, old.contains_key("type") || section == "servers") {
            (DraftTransport::Stdio { .. }, true) => Some(Value::from("stdio")),
            (DraftTransport::Http { .. }, true) => Some(Value::from("http")),
            (_, false) => None,
        };
        let (transport, transport_problems) = transport_values(&draft.transport, &old);
        problems.extend(transport_problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut changes = vec![("type", kind)];
        changes.extend(transport);
        changes.extend([
            ("enabled", (!draft.enabled).then_some(Value::Bool(false))),
            ("disabled", None),
            ("mcpApps", (!draft.mcp_apps).then_some(Value::Bool(false))),
        ]);
        let entry = Value::Object(changed(&old, &changes));
        let map = self.section_mut(section).map_err(|e| vec![invalid("name", e)])?;
        put_entry(map, original, name, entry);
        Ok(())
    }

    /// The remote agents of the file, in file order.
    pub fn agents(&self) -> Vec<(&str, &Value)> {
        self.root
            .get("agents")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default()
    }

    /// Adds a remote agent (`original` is `None`) or changes the one named `original` (which
    /// may be renamed). `taken` is every agent name configured anywhere.
    pub fn save_agent(
        &mut self,
        original: Option<&str>,
        draft: &AgentDraft,
        taken: &[String],
    ) -> Result<(), Vec<Invalid>> {
        let old = match original {
            Some(name) => match self.agents().into_iter().find(|(n, _)| *n == name) {
                Some((_, Value::Object(old))) => old.clone(),
                Some(_) => {
                    return Err(vec![invalid(
                        "name",
                        format!("the entry of {name:?} is not an object; fix the file by hand"),
                    )]);
                }
                None => return Err(vec![invalid("name", format!("no agent named {name:?} to change"))]),
            },
            None => Map::new(),
        };
        let name = draft.name.trim();
        let url = draft.url.trim();
        let mut problems = Vec::new();
        if name.is_empty() {
            problems.push(invalid("name", "an agent needs a name"));
        } else if let Err(p) = check_name(name) {
            problems.push(p);
        } else if name.contains('/') {
            problems.push(invalid(
                "name",
                "no \"/\" (it separates the agent from its servers' names)",
            ));
        } else if original != Some(name) && taken.iter().any(|t| t == name) {
            problems.push(invalid("name", format!("an agent named {name:?} already exists")));
        }
        if url.is_empty() {
            problems.push(invalid("url", "an agent needs the URL its runs are sent to"));
        } else if let Err(p) = check_url(url) {
            problems.push(p);
        }
        let stored = old
            .get("headers")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let headers = parse_header_lines(&draft.headers, &stored).unwrap_or_else(|p| {
            problems.extend(p);
            Map::new()
        });
        if !problems.is_empty() {
            return Err(problems);
        }
        let entry = Value::Object(changed(
            &old,
            &[
                ("url", Some(Value::from(url))),
                ("headers", (!headers.is_empty()).then_some(Value::Object(headers))),
            ],
        ));
        let map = self.section_mut("agents").map_err(|e| vec![invalid("name", e)])?;
        put_entry(map, original, name, entry);
        Ok(())
    }

    pub fn remove_agent(&mut self, name: &str) -> Result<(), String> {
        let path = self.path.display().to_string();
        let map = self.section_mut("agents")?;
        map.shift_remove(name)
            .map(|_| ())
            .ok_or_else(|| format!("no agent named {name:?} in {path}"))
    }

    pub fn remove_server(&mut self, name: &str) -> Result<(), String> {
        let path = self.path.display().to_string();
        let section = self
            .section_of(name)
            .ok_or_else(|| format!("no server named {name:?} in {path}"))?;
        self.section_mut(section)?.shift_remove(name);
        Ok(())
    }

    /// Switches a server on or off: off is `"enabled": false`; on drops `enabled` and Claude
    /// Desktop's `disabled`.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<(), String> {
        let entry = self.entry_mut(name)?;
        *entry = changed(
            entry,
            &[
                ("enabled", (!enabled).then_some(Value::Bool(false))),
                ("disabled", None),
            ],
        );
        Ok(())
    }

    /// Whether MCP Apps is advertised to one server: off is `"mcpApps": false`.
    pub fn set_server_mcp_apps(&mut self, name: &str, on: bool) -> Result<(), String> {
        let entry = self.entry_mut(name)?;
        *entry = changed(entry, &[("mcpApps", (!on).then_some(Value::Bool(false)))]);
        Ok(())
    }

    /// The global MCP Apps switch: off is a top-level `"mcpApps": false`.
    pub fn set_mcp_apps(&mut self, on: bool) {
        self.root = changed(&self.root, &[("mcpApps", (!on).then_some(Value::Bool(false)))]);
    }

    /// Adds an entry copied from another file as it is, under `name` or, when that is taken
    /// (here or in `taken`), under `name-2`, `name-3`…; returns the name it got.
    pub fn add_copied(&mut self, name: &str, entry: Value, taken: &[String]) -> Result<String, String> {
        let in_use = |candidate: &str| taken.iter().any(|t| t == candidate) || self.server(candidate).is_some();
        let mut chosen = name.to_string();
        let mut n = 2;
        while in_use(&chosen) {
            chosen = format!("{name}-{n}");
            n += 1;
        }
        let section = self.section_for_new();
        self.section_mut(section)?.insert(chosen.clone(), entry);
        Ok(chosen)
    }

    /// Writes the file: a temporary file beside it, flushed to disk, then renamed over it, so a
    /// crash leaves either the old file or the new one. The file keeps its permissions (a new
    /// one is readable by its owner only: entries may hold secrets). A `config.json` that is a
    /// symbolic link (dotfiles) stays one: the file it points to is the one replaced.
    pub fn write(&self) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot write {}: {e}", self.path.display());
        let target = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail)?;
        let mut text = serde_json::to_string_pretty(&self.root).map_err(|e| e.to_string())?;
        text.push('\n');
        let mut temp = tempfile_in(dir, &target).map_err(fail)?;
        let result = (|| {
            temp.file.write_all(text.as_bytes())?;
            match std::fs::metadata(&target) {
                Ok(meta) => temp.file.set_permissions(meta.permissions())?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            temp.file.sync_all()?;
            std::fs::rename(&temp.path, &target)
        })();
        if result.is_err()
            && let Err(e) = std::fs::remove_file(&temp.path)
        {
            // The save's own error is what the caller hears; a leftover temp file is only untidy.
            tracing::warn!(path = %temp.path.display(), "failed save left its temp file behind: {e}");
        }
        result.map_err(fail)
    }
}

struct TempFile {
    file: std::fs::File,
    path: PathBuf,
}

/// A new file in `dir` named after `target`, created exclusively (owner-only on Unix).
fn tempfile_in(dir: &Path, target: &Path) -> std::io::Result<TempFile> {
    let stem = target.file_name().and_then(|n| n.to_str()).unwrap_or("config.json");
    let mut attempt = 0u32;
    loop {
        let path = dir.join(format!(".{stem}.{}.{attempt}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(file) => return Ok(TempFile { file, path }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// `old` with each key of `changes` set (`Some`) or dropped (`None`): a key already present
/// keeps its place; a new one goes at the end, in the order given.
fn changed(old: &Map<String, Value>, changes: &[(&str, Option<Value>)]) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in old {
        match changes.iter().find(|(k, _)| k == key) {
            Some((_, Some(new))) => {
                out.insert(key.clone(), new.clone());
            }
            Some((_, None)) => {}
            None => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    for (key, value) in changes {
        if let Some(value) = value
            && !out.contains_key(*key)
        {
            out.insert(key.to_string(), value.clone());
        }
    }
    out
}

/// Checks a server name (already trimmed).
pub fn check_name(name: &str) -> Result<(), Invalid> {
    if name.is_empty() {
        return Err(invalid("name", "a server needs a name"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(invalid("name", format!("at most {MAX_NAME_CHARS} characters")));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid("name", "no control characters (such as line breaks)"));
    }
    Ok(())
}

/// Puts `entry` into `map` as `name`: in the place of `original` when it is given (a renamed
/// entry keeps its place in the file), else at the end.
fn put_entry(map: &mut Map<String, Value>, original: Option<&str>, name: &str, entry: Value) {
    match original {
        Some(original) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, v)| {
                    if k == original {
                        (name.to_string(), entry.clone())
                    } else {
                        (k, v)
                    }
                })
                .collect();
        }
        None => {
            map.insert(name.to_string(), entry);
        }
    }
}

/// The transport keys of an entry for `draft` (each set or dropped), and what is wrong with it.
/// `old` is the entry being changed, whose stored env and header values a name-only line keeps.
fn transport_values(
    draft: &DraftTransport,
    old: &Map<String, Value>,
) -> (Vec<(&'static str, Option<Value>)>, Vec<Invalid>) {
    let mut problems = Vec::new();
    let stored = |key: &str| old.get(key).and_then(Value::as_object).cloned().unwrap_or_default();
    let values = match draft {
        DraftTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let command = command.trim();
            if command.is_empty() {
                problems.push(invalid("command", "a stdio server needs a command"));
            } else if command.contains('\0') {
                problems.push(invalid("command", "must not contain a NUL character"));
            }
            if args.iter().any(|a| a.contains('\0')) {
                problems.push(invalid("args", "must not contain a NUL character"));
            }
            let cwd = cwd.trim();
            if !cwd.is_empty() && !cwd.starts_with("${") && !Path::new(cwd).is_absolute() {
                problems.push(invalid("cwd", format!("{cwd:?} is not an absolute path")));
            }
            let env = match parse_env_lines(env, &stored("env")) {
                Ok(env) => env,
                Err(mut p) => {
                    problems.append(&mut p);
                    Map::new()
                }
            };
            vec![
                ("command", Some(Value::from(command))),
                (
                    "args",
                    (!args.is_empty())
                        .then(|| Value::from(args.iter().map(|a| Value::from(a.as_str())).collect::<Vec<_>>())),
                ),
                ("env", (!env.is_empty()).then_some(Value::Object(env))),
                ("cwd", (!cwd.is_empty()).then(|| Value::from(cwd))),
                ("url", None),
                ("headers", None),
            ]
        }
        DraftTransport::Http { url, headers } => {
            let url = url.trim();
            if let Err(p) = check_url(url) {
                problems.push(p);
            }
            let headers = match parse_header_lines(headers, &stored("headers")) {
                Ok(headers) => headers,
                Err(mut p) => {
                    problems.append(&mut p);
                    Map::new()
                }
            };
            vec![
                ("url", Some(Value::from(url))),
                ("headers", (!headers.is_empty()).then_some(Value::Object(headers))),
                ("command", None),
                ("args", None),
                ("env", None),
                ("cwd", None),
            ]
        }
    };
    (values, problems)
}

/// An http:// or https:// URL with a host.
pub fn check_url(url: &str) -> Result<(), Invalid> {
    if url.is_empty() {
        return Err(invalid("url", "an HTTP server needs a URL"));
    }
    let shown = porthole_secrets::redact::url(url);
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        Ok(_) => Err(invalid("url", format!("{shown:?} is not an http:// or https:// URL"))),
        Err(e) => Err(invalid("url", format!("{shown:?} is not a URL ({e})"))),
    }
}

/// `KEY=value` lines (blank lines skipped); `KEY` alone keeps the value in `stored`.
pub fn parse_env_lines(lines: &[String], stored: &Map<String, Value>) -> Result<Map<String, Value>, Vec<Invalid>> {
    let mut env = Map::new();
    let mut problems = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value)),
            None => (line.trim(), None),
        };
        if key.is_empty() {
            problems.push(invalid("env", format!("line {n}: no name before \"=\"")));
            continue;
        }
        if key.chars().any(|c| c.is_whitespace() || c == '\0') {
            problems.push(invalid(
                "env",
                format!("line {n}: {key:?} is not a variable name (no spaces)"),
            ));
            continue;
        }
        if env.contains_key(key) {
            problems.push(invalid("env", format!("line {n}: {key} is set twice")));
            continue;
        }
        let value = match value {
            Some(v) if v.contains('\0') => {
                problems.push(invalid(
                    "env",
                    format!("line {n}: the value must not contain a NUL character"),
                ));
                continue;
            }
            Some(v) => Value::from(v),
            None => match stored.get(key) {
                Some(v) => v.clone(),
                None => {
                    problems.push(invalid(
                        "env",
                        format!("line {n}: {key} has no value; write {key}=value"),
                    ));
                    continue;
                }
            },
        };
        env.insert(key.to_string(), value);
    }
    if problems.is_empty() { Ok(env) } else { Err(problems) }
}

/// `Name: value` lines (blank lines skipped); `Name` alone keeps the value in `stored`.
pub fn parse_header_lines(lines: &[String], stored: &Map<String, Value>) -> Result<Map<String, Value>, Vec<Invalid>> {
    let mut headers = Map::new();
    let mut problems = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (line.trim(), None),
        };
        if name.is_empty() {
            problems.push(invalid("headers", format!("line {n}: no header name before \":\"")));
            continue;
        }
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            problems.push(invalid(
                "headers",
                format!("line {n}: {name:?} is not a valid header name"),
            ));
            continue;
        }
        if headers.keys().any(|k| k.eq_ignore_ascii_case(name)) {
            problems.push(invalid("headers", format!("line {n}: {name} is set twice")));
            continue;
        }
        let value = match value {
            Some(v) if http::HeaderValue::from_str(v).is_err() => {
                problems.push(invalid(
                    "headers",
                    format!("line {n}: the value of {name} is not a valid header value"),
                ));
                continue;
            }
            Some(v) => Value::from(v),
            None => match stored.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
                Some((_, v)) => v.clone(),
                None => {
                    problems.push(invalid(
                        "headers",
                        format!("line {n}: {name} has no value; write {name}: value"),
                    ));
                    continue;
                }
            },
        };
        headers.insert(name.to_string(), value);
    }
    if problems.is_empty() {
        Ok(headers)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stdio(name: &str, command: &str, args: &[&str], env: &[&str]) -> ServerDraft {
        ServerDraft {
            name: name.into(),
            transport: DraftTransport::Stdio {
                command: command.into(),
                args: args.iter().map(|s| s.to_string()).collect(),
                env: env.iter().map(|s| s.to_string()).collect(),
                cwd: String::new(),
            },
            enabled: true,
            mcp_apps: true,
        }
    }

    fn http(name: &str, url: &str, headers: &[&str]) -> ServerDraft {
        ServerDraft {
            name: name.into(),
            transport: DraftTransport::Http {
                url: url.into(),
                headers: headers.iter().map(|s| s.to_string()).collect(),
            },
            enabled: true,
            mcp_apps: true,
        }
    }

    fn file_with(dir: &Path, value: Value) -> ConfigFile {
        let path = dir.join("config.json");
        std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        ConfigFile::read(&path).unwrap()
    }

    fn on_disk(file: &ConfigFile) -> Value {
        serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap()
    }

    fn fields(problems: &[Invalid]) -> Vec<&str> {
        problems.iter().map(|p| p.field).collect()
    }

    #[test]
    fn adding_a_server_keeps_everything_else_and_parses_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"theme": "dark", "mcpServers": {"a": {"command": "x", "description": "mine"}}}),
        );
        file.save_server(
            None,
            &stdio("b", "node", &["s.js", "--flag"], &["KEY=v=1"]),
            &["a".into()],
        )
        .unwrap();
        file.write().unwrap();
        let v = on_disk(&file);
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["a"], json!({"command": "x", "description": "mine"}));
        assert_eq!(
            v["mcpServers"]["b"],
            json!({"command": "node", "args": ["s.js", "--flag"], "env": {"KEY": "v=1"}})
        );
        let keys: Vec<_> = v["mcpServers"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "b"]);
        let loaded = crate::config::LoadedConfig::load(&[file.path().to_path_buf()]);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        assert_eq!(loaded.servers.len(), 2);
    }

    fn agent(name: &str, url: &str, headers: &[&str]) -> AgentDraft {
        AgentDraft {
            name: name.into(),
            url: url.into(),
            headers: headers.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// An agent added, renamed in place with its stored token kept (a header line with the name
    /// only), refused with every reason, and removed; what the loader reads back matches.
    #[test]
    fn agents_are_added_changed_and_removed_keeping_stored_headers() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {}, "agents": {"first": {"url": "https://a.example/run"}}}),
        );
        file.save_agent(
            None,
            &agent(
                "helper",
                " https://agents.example/helper ",
                &["Authorization: Bearer ${env:PATH}"],
            ),
            &["first".into()],
        )
        .unwrap();
        file.save_agent(
            Some("helper"),
            &agent("planner", "https://agents.example/planner", &["Authorization"]),
            &["first".into(), "helper".into()],
        )
        .unwrap();
        file.write().unwrap();
        let v = on_disk(&file);
        let keys: Vec<_> = v["agents"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["first", "planner"]);
        assert_eq!(
            v["agents"]["planner"],
            json!({"url": "https://agents.example/planner", "headers": {"Authorization": "Bearer ${env:PATH}"}})
        );
        let loaded = crate::config::LoadedConfig::load(&[file.path().to_path_buf()]);
        let names: Vec<_> = loaded.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["first", "planner"]);

        let refused = file
            .save_agent(None, &agent("a/b", "ftp://x", &["Bad Header: 1"]), &[])
            .unwrap_err();
        assert_eq!(fields(&refused), ["name", "url", "headers"]);
        let taken = file
            .save_agent(None, &agent("first", "https://x.example", &[]), &["first".into()])
            .unwrap_err();
        assert!(taken[0].message.contains("already exists"), "{taken:?}");

        file.remove_agent("first").unwrap();
        assert!(file.remove_agent("first").is_err());
        assert_eq!(file.agents().len(), 1);
    }

    #[test]
    fn a_missing_file_is_created_owner_only_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.json");
        let mut file = ConfigFile::read(&path).unwrap();
        file.save_server(None, &http("r", "https://h.example/mcp", &[]), &[])
            .unwrap();
        file.write().unwrap();
        assert_eq!(
            on_disk(&file),
            json!({"mcpServers": {"r": {"url": "https://h.example/mcp"}}})
        );
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["config.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_rewritten_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(dir.path(), json!({"mcpServers": {}}));
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o640)).unwrap();
        file.set_mcp_apps(false);
        file.write().unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_config_that_is_a_symbolic_link_stays_one_and_its_target_changes() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir(&dotfiles).unwrap();
        let real = file_with(&dotfiles, json!({"mcpServers": {}, "keep": 1}));
        let link = dir.path().join("config.json");
        std::os::unix::fs::symlink(real.path(), &link).unwrap();
        let mut file = ConfigFile::read(&link).unwrap();
        file.set_mcp_apps(false);
        file.write().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        let written: Value = serde_json::from_str(&std::fs::read_to_string(real.path()).unwrap()).unwrap();
        assert_eq!(written["mcpApps"], json!(false));
        assert_eq!(written["keep"], json!(1));
    }

    #[test]
    fn invalid_input_is_refused_with_every_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(dir.path(), json!({"mcpServers": {"taken": {"command": "x"}}}));
        let before = std::fs::read_to_string(file.path()).unwrap();
        let taken = vec!["taken".to_string(), "elsewhere".to_string()];

        let e = file.save_server(None, &stdio("  ", "", &[], &[]), &taken).unwrap_err();
        assert_eq!(fields(&e), ["name", "command"]);
        assert_eq!(e[0].message, "a server needs a name");

        let e = file
            .save_server(None, &stdio("elsewhere", "x", &[], &[]), &taken)
            .unwrap_err();
        assert_eq!(e[0].to_string(), "name: a server named \"elsewhere\" already exists");

        let e = file
            .save_server(
                None,
                &stdio("n", "x", &[], &["=v", "A B=1", "OK=1", "OK=2", "NOVALUE"]),
                &taken,
            )
            .unwrap_err();
        let messages: Vec<_> = e.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "line 1: no name before \"=\"",
                "line 2: \"A B\" is not a variable name (no spaces)",
                "line 4: OK is set twice",
                "line 5: NOVALUE has no value; write NOVALUE=value",
            ]
        );

        let mut relative = stdio("n", "x", &[], &[]);
        if let DraftTransport::Stdio { cwd, .. } = &mut relative.transport {
            *cwd = "some/dir".into();
        }
        assert_eq!(fields(&file.save_server(None, &relative, &taken).unwrap_err()), ["cwd"]);

        for url in ["", "ftp://h/mcp", "not a url", "http://"] {
            let e = file.save_server(None, &http("n", url, &[]), &taken).unwrap_err();
            assert_eq!(fields(&e), ["url"], "{url}");
        }
        let e = check_url("ftp://user:s3cret@h/mcp?token=t0k").unwrap_err();
        assert_eq!(
            e.message,
            r#""ftp://[redacted]@h/mcp?token=[redacted]" is not an http:// or https:// URL"#
        );
        let e = file
            .save_server(
                None,
                &http(
                    "n",
                    "https://h/mcp",
                    &["Bad Name: x", "X-A: ok", "x-a: again", ": v", "X-B: line\u{7f}"],
                ),
                &taken,
            )
            .unwrap_err();
        let messages: Vec<_> = e.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "line 1: \"Bad Name\" is not a valid header name",
                "line 3: x-a is set twice",
                "line 4: no header name before \":\"",
                "line 5: the value of X-B is not a valid header value",
            ]
        );
        let e = file
            .save_server(None, &stdio(&"n".repeat(101), "x", &[], &[]), &taken)
            .unwrap_err();
        assert_eq!(e[0].message, "at most 100 characters");
        assert_eq!(
            file.save_server(None, &stdio("a\nb", "x", &[], &[]), &taken)
                .unwrap_err()[0]
                .field,
            "name"
        );
        // Nothing was changed, in memory or on disk.
        assert_eq!(file.servers().len(), 1);
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), before);
    }

    #[test]
    fn editing_keeps_stored_secrets_for_name_only_lines_and_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {
                "s": {"command": "old", "env": {"TOKEN": "sk-secret", "DROP": "x"}, "timeout": 5, "alwaysAllow": ["echo"]},
                "r": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer t0ken"}, "description": "remote"}
            }}),
        );
        let taken = vec!["s".to_string(), "r".to_string()];
        file.save_server(Some("s"), &stdio("s", "new", &[], &["TOKEN", "ADDED=1"]), &taken)
            .unwrap();
        file.save_server(
            Some("r"),
            &http("r", "https://h/v2/mcp", &["authorization", "X-Extra: 1"]),
            &taken,
        )
        .unwrap();
        file.write().unwrap();
        let v = on_disk(&file);
        assert_eq!(
            v["mcpServers"]["s"],
            json!({"command": "new", "env": {"TOKEN": "sk-secret", "ADDED": "1"}, "timeout": 5, "alwaysAllow": ["echo"]})
        );
        assert_eq!(
            v["mcpServers"]["r"],
            json!({"url": "https://h/v2/mcp", "headers": {"authorization": "Bearer t0ken", "X-Extra": "1"}, "description": "remote"})
        );
        // A name-only line for a key that was never stored is refused.
        let e = file
            .save_server(Some("s"), &stdio("s", "new", &[], &["OTHER"]), &taken)
            .unwrap_err();
        assert_eq!(e[0].message, "line 1: OTHER has no value; write OTHER=value");
    }

    #[test]
    fn renaming_keeps_the_place_and_switching_transport_drops_the_old_keys() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "args": ["1"], "env": {"K": "v"}, "timeout": 9}, "c": {"command": "z"}}}),
        );
        let taken: Vec<String> = ["a", "b", "c"].map(String::from).into();
        // Renaming onto another server's name is refused.
        let e = file
            .save_server(Some("b"), &stdio("c", "y", &[], &[]), &taken)
            .unwrap_err();
        assert_eq!(fields(&e), ["name"]);
        file.save_server(Some("b"), &http("bee", "http://127.0.0.1:9/mcp", &[]), &taken)
            .unwrap();
        let v = serde_json::to_value(&file.root).unwrap();
        let keys: Vec<_> = v["mcpServers"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "bee", "c"]);
        assert_eq!(
            v["mcpServers"]["bee"],
            json!({"timeout": 9, "url": "http://127.0.0.1:9/mcp"})
        );
    }

    #[test]
    fn vs_code_files_get_typed_entries_in_their_own_section() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"inputs": [], "servers": {"v": {"type": "stdio", "command": "x"}}}),
        );
        file.save_server(None, &http("h", "https://h/mcp", &[]), &["v".into()])
            .unwrap();
        file.save_server(Some("v"), &http("v", "https://v/mcp", &[]), &["v".into(), "h".into()])
            .unwrap();
        let v = serde_json::to_value(&file.root).unwrap();
        assert!(v.get("mcpServers").is_none());
        assert_eq!(v["servers"]["h"], json!({"type": "http", "url": "https://h/mcp"}));
        assert_eq!(v["servers"]["v"], json!({"type": "http", "url": "https://v/mcp"}));
    }

    #[test]
    fn switches_write_only_what_differs_from_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {"a": {"command": "x", "disabled": true}, "b": {"command": "y"}}}),
        );
        file.set_enabled("a", true).unwrap();
        file.set_enabled("b", false).unwrap();
        file.set_server_mcp_apps("b", false).unwrap();
        file.set_mcp_apps(false);
        assert_eq!(file.mcp_apps(), Some(false));
        file.write().unwrap();
        let v = on_disk(&file);
        assert_eq!(
            v,
            json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "enabled": false, "mcpApps": false}}, "mcpApps": false})
        );
        let loaded = crate::config::LoadedConfig::load(&[file.path().to_path_buf()]);
        assert_eq!(loaded.mcp_apps, Some(false));
        assert!(loaded.servers[0].enabled && !loaded.servers[1].enabled && !loaded.servers[1].mcp_apps);
        file.set_enabled("b", true).unwrap();
        file.set_server_mcp_apps("b", true).unwrap();
        file.set_mcp_apps(true);
        assert_eq!(file.mcp_apps(), None);
        assert_eq!(
            serde_json::to_value(&file.root).unwrap(),
            json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})
        );
        assert_eq!(
            file.set_enabled("nope", true).unwrap_err(),
            format!("no server named \"nope\" in {}", file.path().display())
        );
    }

    #[test]
    fn removing_keeps_the_others_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}}}),
        );
        file.remove_server("b").unwrap();
        let names: Vec<_> = file.servers().into_iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(names, ["a", "c"]);
        assert!(file.remove_server("b").is_err());
    }

    #[test]
    fn a_broken_file_is_refused_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, "{\n  \"mcpServers\": {,\n}").unwrap();
        let e = ConfigFile::read(&path).unwrap_err();
        assert!(e.contains("config.json:2 is not valid JSON"), "{e}");
        std::fs::write(&path, "[1]").unwrap();
        assert!(ConfigFile::read(&path).unwrap_err().contains("not a JSON object"));
        std::fs::write(&path, r#"{"mcpServers": []}"#).unwrap();
        let mut file = ConfigFile::read(&path).unwrap();
        let e = file.save_server(None, &stdio("a", "x", &[], &[]), &[]).unwrap_err();
        assert!(e[0].message.contains("\"mcpServers\""), "{e:?}");
    }

    #[test]
    fn copied_entries_are_renamed_on_a_clash() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_with(
            dir.path(),
            json!({"mcpServers": {"fs": {"command": "a"}, "fs-2": {"command": "b"}}}),
        );
        let entry = json!({"command": "c", "env": {"K": "${env:K}"}});
        assert_eq!(file.add_copied("fs", entry.clone(), &[]).unwrap(), "fs-3");
        assert_eq!(file.add_copied("git", entry.clone(), &["git".into()]).unwrap(), "git-2");
        assert_eq!(file.add_copied("new", entry.clone(), &[]).unwrap(), "new");
        assert_eq!(file.server("fs-3"), Some(&entry));
    }

    #[test]
    fn fields_shown_never_include_values_of_env_or_headers() {
        let f = EntryFields::of(
            &json!({"command": "npx", "args": ["-y", "pkg"], "env": {"API_KEY": "sk-secret"}, "disabled": true}),
        );
        assert_eq!(f.transport, EntryTransport::Stdio);
        assert_eq!(f.env_keys, ["API_KEY"]);
        assert!(!f.enabled && f.mcp_apps);
        let shown = serde_json::to_string(&f).unwrap();
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains(r#""transport":"stdio""#), "{shown}");
        let f = EntryFields::of(
            &json!({"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}, "mcpApps": false}),
        );
        assert_eq!(
            (f.transport, f.header_keys.as_slice(), f.mcp_apps),
            (EntryTransport::Http, &["Authorization".to_string()][..], false)
        );
        assert_eq!(
            EntryFields::of(&json!({"type": "sse", "url": "https://h/sse"})).transport,
            EntryTransport::Unknown
        );
    }
}
