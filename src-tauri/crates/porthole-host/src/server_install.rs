//! Adding one MCP server from outside the settings: an install link
//! (`porthole://install-server?name=…&config=<base64url JSON>`, as VS Code's, Cursor's and LM
//! Studio's install links do for them) or `porthole add-server --name N --json CONFIG`.
//!
//! Either way the entry is read and checked first, and what it would run or contact is spelled
//! out ([`ServerInstall`]: the command line, the URL, the names — never the values — of its
//! environment variables and headers, and whether it asks for MCP Apps) for the person to
//! confirm. Nothing is written before that yes. The entry has the shape of a `config.json`
//! entry and is written as given.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use porthole_mcp::config_file::{self, ConfigFile, EntryFields, EntryTransport};
use serde::Serialize;
use serde_json::{Map, Value, json};
use ts_rs::TS;

use crate::error::{AppError, AppResult};
use crate::server_settings::ServerSettings;
use crate::{Host, MAIN_WINDOW, Outbound};

/// The scheme of install links (registered with the OS by the packages).
pub const LINK_SCHEME: &str = "porthole";
/// The longest install link accepted, in bytes: far more than any real entry needs, and a
/// bound on what a web page can hand the app.
pub const MAX_LINK_BYTES: usize = 16 * 1024;
/// The largest entry accepted, as JSON text.
pub const MAX_ENTRY_BYTES: usize = 8 * 1024;

/// A server ready to be added, and what the person is asked to confirm.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerInstall {
    /// The name it is added under.
    pub name: String,
    pub transport: EntryTransport,
    /// A stdio server's command and arguments, quoted as a shell would need them.
    pub command_line: Option<String>,
    /// A stdio server's working folder, when the entry sets one.
    pub cwd: Option<String>,
    /// A remote server's URL.
    pub url: Option<String>,
    /// The names of the environment variables it is given (their values are not shown).
    pub env_names: Vec<String>,
    /// The names of the HTTP headers it is sent (their values are not shown).
    pub header_names: Vec<String>,
    /// Whether Porthole tells it about MCP Apps (so it may show views).
    pub mcp_apps: bool,
    /// Whether it starts when added (an entry may arrive disabled).
    pub enabled: bool,
    /// The entry written to `config.json`, as given.
    #[serde(skip)]
    #[ts(skip)]
    pub entry: Value,
}

impl ServerInstall {
    /// Reads and checks an entry given as JSON text under `name`.
    pub fn from_json(name: &str, text: &str) -> Result<ServerInstall, String> {
        if text.len() > MAX_ENTRY_BYTES {
            return Err(format!(
                "the server's config is {} bytes; at most {MAX_ENTRY_BYTES} are accepted",
                text.len()
            ));
        }
        let entry: Value =
            serde_json::from_str(text).map_err(|e| format!("the server's config is not valid JSON: {e}"))?;
        ServerInstall::from_entry(name, entry)
    }

    /// Checks `entry` (a `config.json` server entry) under `name` as Porthole would load it.
    pub fn from_entry(name: &str, entry: Value) -> Result<ServerInstall, String> {
        config_file::check_name(name).map_err(|e| format!("the server's name: {}", e.message))?;
        let Value::Object(fields) = &entry else {
            return Err(
                "the server's config must be a JSON object, such as {\"command\": \"npx\", \"args\": [\"-y\", \"some-server\"]}"
                    .into(),
            );
        };
        let file = Path::new("the server's config");
        let loaded =
            porthole_mcp::config::parse_config(file, &json!({ "mcpServers": { name: entry.clone() } }).to_string());
        if !loaded.problems.is_empty() {
            let problems: Vec<String> = loaded
                .problems
                .iter()
                .map(|p| match &p.field {
                    Some(field) => format!("{field}: {}", p.message),
                    None => p.message.clone(),
                })
                .collect();
            return Err(format!("the server's config cannot be used: {}", problems.join("; ")));
        }
        let shown = EntryFields::of(&entry);
        let command_line = (shown.transport == EntryTransport::Stdio).then(|| {
            std::iter::once(&shown.command)
                .chain(&shown.args)
                .map(|part| shell_quoted(part))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let text_field = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_string);
        Ok(ServerInstall {
            name: name.to_string(),
            transport: shown.transport,
            command_line,
            cwd: text_field("cwd"),
            url: (shown.transport == EntryTransport::Http).then(|| shown.url.clone()),
            env_names: shown.env_keys,
            header_names: shown.header_keys,
            mcp_apps: shown.mcp_apps,
            enabled: shown.enabled,
            entry,
        })
    }

    /// Reads an install link: `porthole://install-server?name=NAME&config=CONFIG`, CONFIG being
    /// the entry's JSON in base64url (padded or not). Anything else is refused, saying why.
    pub fn from_link(link: &str) -> Result<ServerInstall, String> {
        if link.len() > MAX_LINK_BYTES {
            return Err(format!(
                "the install link is {} bytes long; at most {MAX_LINK_BYTES} are accepted",
                link.len()
            ));
        }
        let url = url::Url::parse(link).map_err(|e| format!("not a link Porthole can read: {e}"))?;
        if url.scheme() != LINK_SCHEME {
            return Err(format!("not a Porthole link: it starts with {}:", url.scheme()));
        }
        let action = url.host_str().unwrap_or_default();
        if action != "install-server" || !matches!(url.path(), "" | "/") {
            return Err(format!(
                "Porthole links can install a server (porthole://install-server?…); this one asks for {:?}",
                format!("{action}{}", url.path())
            ));
        }
        let mut name = None;
        let mut config = None;
        for (key, value) in url.query_pairs() {
            let slot = match key.as_ref() {
                "name" => &mut name,
                "config" => &mut config,
                _ => continue,
            };
            if slot.replace(value.into_owned()).is_some() {
                return Err(format!("the install link gives {key} twice"));
            }
        }
        let name = name.ok_or("the install link has no name=")?;
        let config = config.ok_or("the install link has no config=")?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(config.trim_end_matches('='))
            .map_err(|e| format!("the install link's config is not base64url: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| "the install link's config is not UTF-8 text".to_string())?;
        ServerInstall::from_json(&name, &text)
    }

    /// The lines a terminal shows before asking.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!("Add the MCP server {:?}?", self.name)];
        if let Some(command) = &self.command_line {
            lines.push(format!("  runs:        {command}"));
        }
        if let Some(cwd) = &self.cwd {
            lines.push(format!("  in:          {cwd}"));
        }
        if let Some(url) = &self.url {
            lines.push(format!("  contacts:    {url}"));
        }
        if !self.env_names.is_empty() {
            lines.push(format!(
                "  environment: {} (values not shown)",
                self.env_names.join(", ")
            ));
        }
        if !self.header_names.is_empty() {
            lines.push(format!(
                "  headers:     {} (values not shown)",
                self.header_names.join(", ")
            ));
        }
        lines.push(format!(
            "  MCP Apps:    {}",
            if self.mcp_apps {
                "asks for it (its tools may show views)"
            } else {
                "off"
            }
        ));
        if !self.enabled {
            lines.push("  added disabled: it does not start until enabled".into());
        }
        lines
    }

    /// Adds the entry to `profile`'s file, unless a server of that name is already in it or in
    /// one of `others` (read-only files such as `--mcp-config` ones).
    pub fn add_to(&self, profile: &mut ConfigFile, taken: &[String]) -> Result<(), String> {
        if profile.server(&self.name).is_some() || taken.iter().any(|t| t == &self.name) {
            return Err(format!(
                "a server named {:?} is already configured: remove it first, or add this one under another name",
                self.name
            ));
        }
        let added = profile.add_copied(&self.name, self.entry.clone(), &[])?;
        debug_assert_eq!(added, self.name);
        Ok(())
    }
}

/// Adds `install` to the profile's `config.json` (the file at `config`), from a terminal;
/// `others` are the servers' names in the other config files of this run.
pub fn add_to_file(config: &Path, install: &ServerInstall, others: &[String]) -> Result<(), String> {
    let mut file = ConfigFile::read(config)?;
    install.add_to(&mut file, others)?;
    file.write()
}

/// An install link opened in the app, as the window asks about it: the server to confirm, or
/// why the link was refused.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerInstallRequest {
    /// Answered with [`Host::answer_server_install`].
    pub id: u64,
    pub install: Option<ServerInstall>,
    /// Why nothing can be added from this link.
    pub refusal: Option<String>,
}

impl Host {
    /// An install link reached the app (on its command line, or from the OS): the window is
    /// asked to show what it would add; nothing is written before the person says yes. A
    /// malformed link is shown refused, saying why. A newer link replaces one not yet answered.
    pub fn open_install_link(&self, link: &str) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let (install, refusal) = match ServerInstall::from_link(link) {
            Ok(install) => (Some(install), None),
            Err(why) => {
                tracing::warn!("install link refused: {why}");
                (None, Some(why))
            }
        };
        let request = ServerInstallRequest {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            install,
            refusal,
        };
        *self.inner.install_request.lock().unwrap() = Some(request.clone());
        self.inner.outbox.send(MAIN_WINDOW, Outbound::ServerInstall(request));
    }

    /// The install link waiting for an answer, for a window that opens after it arrived.
    pub fn server_install_request(&self) -> Option<ServerInstallRequest> {
        self.inner.install_request.lock().unwrap().clone()
    }

    /// The person's answer to install request `id`: `add` writes the server to the profile's
    /// `config.json` and starts it; otherwise nothing changes. `None` when nothing was added.
    pub async fn answer_server_install(&self, id: u64, add: bool) -> AppResult<Option<ServerSettings>> {
        let request = {
            let mut pending = self.inner.install_request.lock().unwrap();
            match pending.take() {
                Some(request) if request.id == id => request,
                other => {
                    *pending = other;
                    return Err(AppError::not_found(format!("no install request {id} is waiting")));
                }
            }
        };
        let Some(install) = request.install.filter(|_| add) else {
            tracing::info!("install request {id} declined");
            return Ok(None);
        };
        let settings = self
            .change_config(|profile, taken| install.add_to(profile, taken).map_err(AppError::invalid))
            .await?;
        tracing::info!(server = %install.name, "server added from an install link");
        Ok(Some(settings))
    }
}

/// `part` as a POSIX shell would need it written.
fn shell_quoted(part: &str) -> String {
    let plain = !part.is_empty()
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        part.to_string()
    } else {
        format!("'{}'", part.replace('\'', r"'\''"))
    }
}

/// An install link for `entry` under `name` (what a web page would put behind its button).
pub fn link(name: &str, entry: &Map<String, Value>) -> String {
    let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Value::Object(entry.clone()).to_string());
    let mut url = url::Url::parse("porthole://install-server").expect("a valid link");
    url.query_pairs_mut()
        .append_pair("name", name)
        .append_pair("config", &config);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_link_shows_what_would_run_and_never_a_secret() {
        let link = link(
            "files",
            &entry(json!({"command": "npx", "args": ["-y", "@scope/server", "it's here"],
                          "env": {"API_KEY": "sk-secret-value"}})),
        );
        let install = ServerInstall::from_link(&link).unwrap();
        assert_eq!(install.name, "files");
        assert_eq!(install.transport, EntryTransport::Stdio);
        assert_eq!(
            install.command_line.as_deref(),
            Some(r"npx -y @scope/server 'it'\''s here'")
        );
        assert_eq!(install.env_names, ["API_KEY"]);
        assert!(install.mcp_apps && install.enabled);
        let shown = format!(
            "{}\n{}",
            install.describe().join("\n"),
            serde_json::to_string(&install).unwrap()
        );
        assert!(shown.contains("API_KEY"), "{shown}");
        assert!(!shown.contains("sk-secret-value"), "{shown}");
        // The entry itself is written as given.
        assert_eq!(install.entry["env"]["API_KEY"], "sk-secret-value");
    }

    #[test]
    fn a_remote_server_shows_its_url_and_header_names() {
        let link = link(
            "remote",
            &entry(
                json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"},
                          "mcpApps": false}),
            ),
        );
        let install = ServerInstall::from_link(&link).unwrap();
        assert_eq!(install.url.as_deref(), Some("https://mcp.example.com/mcp"));
        assert_eq!(install.command_line, None);
        assert_eq!(install.header_names, ["Authorization"]);
        assert!(!install.mcp_apps);
        assert!(install.describe().iter().any(|l| l.contains("MCP Apps:    off")));
    }

    #[test]
    fn padded_base64_is_read_too() {
        let config = base64::engine::general_purpose::URL_SAFE.encode(r#"{"command":"ab"}"#);
        assert!(config.ends_with("=="), "{config}");
        let install = ServerInstall::from_link(&format!("porthole://install-server?name=a&config={config}")).unwrap();
        assert_eq!(install.command_line.as_deref(), Some("ab"));
    }

    #[test]
    fn malformed_links_are_refused_saying_why() {
        let good = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"command":"a"}"#);
        let refused = |link: &str, why: &str| {
            let error = ServerInstall::from_link(link).unwrap_err();
            assert!(error.contains(why), "{link}: {error}");
        };
        refused("not a link", "not a link Porthole can read");
        refused(&format!("vscode:mcp/install?config={good}"), "not a Porthole link");
        refused(
            &format!("porthole://delete-everything?name=a&config={good}"),
            "can install a server",
        );
        refused(&format!("porthole://install-server?config={good}"), "no name=");
        refused("porthole://install-server?name=a", "no config=");
        refused(
            &format!("porthole://install-server?name=a&name=b&config={good}"),
            "name twice",
        );
        refused("porthole://install-server?name=a&config=%%%", "not base64url");
        let not_json = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("{command");
        refused(
            &format!("porthole://install-server?name=a&config={not_json}"),
            "not valid JSON",
        );
        let array = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("[1]");
        refused(
            &format!("porthole://install-server?name=a&config={array}"),
            "must be a JSON object",
        );
        let neither = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"args":["x"]}"#);
        refused(
            &format!("porthole://install-server?name=a&config={neither}"),
            "cannot be used",
        );
        let unknown = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"command":"a","shell":true}"#);
        refused(
            &format!("porthole://install-server?name=a&config={unknown}"),
            "cannot be used",
        );
        refused(
            &format!("porthole://install-server?name=&config={good}"),
            "the server's name",
        );
        refused(
            &format!("porthole://install-server?name=a%0Ab&config={good}"),
            "control characters",
        );
        let huge = "a".repeat(MAX_LINK_BYTES);
        refused(
            &format!("porthole://install-server?name=a&config={huge}"),
            "at most 16384",
        );
        let big = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(json!({"command": "a", "args": ["x".repeat(MAX_ENTRY_BYTES)]}).to_string());
        refused(
            &format!("porthole://install-server?name=a&config={big}"),
            "at most 8192",
        );
    }

    #[test]
    fn a_name_in_use_is_refused_and_the_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.json");
        std::fs::write(&config, r#"{"mcpServers": {"old": {"command": "old-server"}}}"#).unwrap();
        let install = ServerInstall::from_json("new", r#"{"command": "new-server", "args": ["--stdio"]}"#).unwrap();
        add_to_file(&config, &install, &[]).unwrap();
        let again = add_to_file(&config, &install, &[]).unwrap_err();
        assert!(again.contains("already configured"), "{again}");
        let elsewhere = ServerInstall::from_json("shared", r#"{"command": "x"}"#).unwrap();
        assert!(add_to_file(&config, &elsewhere, &["shared".into()]).is_err());
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        assert_eq!(written["mcpServers"]["old"]["command"], "old-server");
        assert_eq!(
            written["mcpServers"]["new"],
            json!({"command": "new-server", "args": ["--stdio"]})
        );
        assert!(written["mcpServers"].get("shared").is_none());
    }
}
