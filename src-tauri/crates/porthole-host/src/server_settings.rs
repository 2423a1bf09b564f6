//! The settings dialog's MCP servers section: the servers of every config file, changes to the
//! profile's own `config.json` (files passed with `--mcp-config` are shown, never written),
//! importing from Claude Desktop, Cursor and VS Code, the global MCP Apps switch, signing in to
//! remote servers, and the servers' logs.
//!
//! Every change is written to the file first; then the running servers are reconfigured from
//! the files (unchanged servers keep their connection) and the app's info follows. Env and
//! header values never reach the window: it gets their names only.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use porthole_mcp::config_file::{ConfigFile, EntryFields, ServerDraft};
use porthole_mcp::import::{self, FoundServer, ImportSource};
use porthole_mcp::{ConfigProblem, LoadedConfig};
use serde::Serialize;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// How much of the end of a server's log the window is shown.
const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// The config files of this run, and one change at a time to them.
pub struct ServerConfigFiles {
    /// The profile's `config.json` first (the only one written), then the `--mcp-config` files.
    pub(crate) files: Vec<PathBuf>,
    /// Held from reading the file to reconfiguring the servers.
    changing: tokio::sync::Mutex<()>,
}

impl ServerConfigFiles {
    pub fn new(files: Vec<PathBuf>) -> ServerConfigFiles {
        assert!(!files.is_empty(), "the profile's config file comes first");
        ServerConfigFiles {
            files,
            changing: tokio::sync::Mutex::new(()),
        }
    }

    fn profile(&self) -> &Path {
        &self.files[0]
    }
}

/// What the MCP servers section shows.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerSettings {
    /// The profile's own config file, the one these settings change.
    config_file: String,
    servers: Vec<ServerEntry>,
    /// The profile's MCP Apps switch (its top-level `mcpApps`).
    mcp_apps: bool,
    /// Whether MCP Apps is on for the servers now.
    mcp_apps_effective: bool,
    /// `PORTHOLE_MCP_APPS=off` (or 0, false, no) is set: MCP Apps is off whatever the switch says.
    mcp_apps_env_off: bool,
    /// A `--mcp-config` file that sets `mcpApps` itself, which wins over the profile's switch.
    mcp_apps_set_by: Option<String>,
    /// Problems in the config files, one line each.
    problems: Vec<String>,
}

/// One server entry of one config file.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerEntry {
    name: String,
    /// The file it is written in.
    source: String,
    /// Whether these settings may change it (it is in the profile's own file).
    editable: bool,
    /// A later file has a server of the same name, which is the one that runs.
    shadowed_by: Option<String>,
    #[serde(flatten)]
    fields: EntryFields,
    /// Why the entry is not used, when it cannot be.
    problem: Option<String>,
}

fn read_settings(files: &[PathBuf]) -> ServerSettings {
    let loaded = LoadedConfig::load(files);
    let mut problems: Vec<String> = loaded.problems.iter().map(ConfigProblem::to_string).collect();
    let read: Vec<(&PathBuf, ConfigFile)> = files
        .iter()
        .filter_map(|f| match ConfigFile::read(f) {
            Ok(file) => Some((f, file)),
            Err(e) => {
                // An unreadable file is already among the problems; an invalid one is said again
                // in the words of the writer, which refuses to change it.
                if !problems.iter().any(|p| p.starts_with(&f.display().to_string())) {
                    problems.push(e);
                }
                None
            }
        })
        .collect();
    let mut servers = Vec::new();
    for (i, (path, file)) in read.iter().enumerate() {
        for (name, entry) in file.servers() {
            let shadowed_by = read[i + 1..]
                .iter()
                .rev()
                .find(|(_, later)| later.server(name).is_some())
                .map(|(p, _)| p.display().to_string());
            let problem = loaded
                .problems
                .iter()
                .find(|p| p.file == **path && p.server.as_deref() == Some(name))
                .map(|p| match &p.field {
                    Some(field) => format!("field {field:?}: {}", p.message),
                    None => p.message.clone(),
                });
            servers.push(ServerEntry {
                name: name.to_string(),
                source: path.display().to_string(),
                editable: *path == &files[0],
                shadowed_by,
                fields: EntryFields::of(entry),
                problem,
            });
        }
    }
    let profile_switch = read
        .iter()
        .find(|(p, _)| *p == &files[0])
        .and_then(|(_, f)| f.mcp_apps())
        .unwrap_or(true);
    let mcp_apps_set_by = read
        .iter()
        .rfind(|(p, f)| *p != &files[0] && f.mcp_apps().is_some())
        .map(|(p, _)| p.display().to_string());
    ServerSettings {
        config_file: files[0].display().to_string(),
        servers,
        mcp_apps: profile_switch,
        mcp_apps_effective: loaded.mcp_apps_enabled(),
        mcp_apps_env_off: !porthole_mcp::mcp_apps_enabled_by_env(),
        mcp_apps_set_by,
        problems,
    }
}

/// Every server name in every file (a new name must be none of them: a later file's server of
/// the same name would replace it).
pub(crate) fn taken_names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| ConfigFile::read(f).ok())
        .flat_map(|f| f.servers().into_iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>())
        .collect()
}

/// Refuses a change to a server that is not in the profile's own file, saying where it is.
fn editable(profile: &ConfigFile, files: &[PathBuf], name: &str) -> AppResult<()> {
    if profile.server(name).is_some() {
        return Ok(());
    }
    let elsewhere = files[1..]
        .iter()
        .find(|f| ConfigFile::read(f).is_ok_and(|c| c.server(name).is_some()));
    Err(match elsewhere {
        Some(file) => AppError::forbidden(format!(
            "{name:?} is set in {}, which Porthole does not change; edit that file",
            file.display()
        )),
        None => AppError::not_found(format!("no server named {name:?}")),
    })
}

/// `~/…` is the home folder; anything else must be a full path.
fn import_path(path: &str) -> AppResult<PathBuf> {
    let path = path.trim();
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(rest))
            .ok_or_else(|| AppError::invalid("HOME is not set, so ~ means nothing"))?,
        None => PathBuf::from(path),
    };
    if path.is_empty() {
        return Err(AppError::invalid("give the path of a config file"));
    }
    if !expanded.is_absolute() {
        return Err(AppError::invalid(format!(
            "{path:?} is not a full path (such as ~/.cursor/mcp.json)"
        )));
    }
    Ok(expanded)
}

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    path: String,
    servers: Vec<FoundServer>,
}

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportedServer {
    name: String,
    /// The name it got: another when its own was taken.
    imported_as: String,
}

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    settings: ServerSettings,
    imported: Vec<ImportedServer>,
}

impl Host {
    /// Reconfigures the running servers from the files, and updates the app's info to match.
    async fn apply_config(&self) {
        let loaded = LoadedConfig::load(&self.inner.config_files.files);
        let mcp_apps = loaded.mcp_apps_enabled();
        self.inner
            .info
            .lock()
            .unwrap()
            .config_changed(&loaded.problems, mcp_apps);
        self.inner.servers.reconfigure(loaded.servers, mcp_apps).await;
    }

    /// Reads the profile's file, changes it (an edit that refuses says why, in words), writes
    /// it, and reconfigures the servers.
    pub(crate) async fn change_config(
        &self,
        edit: impl FnOnce(&mut ConfigFile, &[String]) -> AppResult<()>,
    ) -> AppResult<ServerSettings> {
        let files = &self.inner.config_files;
        let _one_at_a_time = files.changing.lock().await;
        let mut profile = ConfigFile::read(files.profile()).map_err(AppError::io)?;
        edit(&mut profile, &taken_names(&files.files))?;
        profile.write().map_err(AppError::io)?;
        self.apply_config().await;
        Ok(read_settings(&files.files))
    }

    /// [`Host::change_config`] of one server of the profile's file (refused, with where it is
    /// set, for a server of another file).
    async fn change_server(
        &self,
        name: &str,
        edit: impl FnOnce(&mut ConfigFile) -> Result<(), String>,
    ) -> AppResult<ServerSettings> {
        let all = self.inner.config_files.files.clone();
        self.change_config(|profile, _| {
            editable(profile, &all, name)?;
            edit(profile).map_err(AppError::invalid)
        })
        .await
    }

    pub fn server_settings(&self) -> ServerSettings {
        read_settings(&self.inner.config_files.files)
    }

    /// Adds a server (`original_name` absent) or changes one of the profile's (possibly
    /// renaming it). Refused with every reason when the form is invalid; env and header lines
    /// with a name only keep their stored values.
    pub async fn save_server(&self, original_name: Option<&str>, server: &ServerDraft) -> AppResult<ServerSettings> {
        let all = self.inner.config_files.files.clone();
        self.change_config(|profile, taken| {
            if let Some(original) = original_name {
                editable(profile, &all, original)?;
            }
            profile.save_server(original_name, server, taken).map_err(|problems| {
                AppError::invalid(problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
            })
        })
        .await
    }

    pub async fn remove_server(&self, name: &str) -> AppResult<ServerSettings> {
        let settings = self.change_server(name, |profile| profile.remove_server(name)).await?;
        self.inner.views.forget_server(name);
        self.forget_sampling(name);
        Ok(settings)
    }

    pub async fn set_server_enabled(&self, name: &str, enabled: bool) -> AppResult<ServerSettings> {
        self.change_server(name, |profile| profile.set_enabled(name, enabled))
            .await
    }

    /// Whether MCP Apps is advertised to one server; it reconnects.
    pub async fn set_server_mcp_apps(&self, name: &str, enabled: bool) -> AppResult<ServerSettings> {
        self.change_server(name, |profile| profile.set_server_mcp_apps(name, enabled))
            .await
    }

    /// The global MCP Apps switch; every server it changes for reconnects, so the capability is
    /// (or is no longer) advertised. `PORTHOLE_MCP_APPS=off` still wins.
    pub async fn set_mcp_apps(&self, enabled: bool) -> AppResult<ServerSettings> {
        self.change_config(|profile, _| {
            profile.set_mcp_apps(enabled);
            Ok(())
        })
        .await
    }

    /// Claude Desktop's, Cursor's and VS Code's config files, where this machine has them.
    pub fn import_candidates(&self) -> Vec<ImportSource> {
        import::existing_sources()
    }

    /// The servers in another client's config file.
    /// Asks the person for another client's config file to import servers from, in a dialog;
    /// its path, or `None` when they cancelled.
    pub async fn choose_import_file(&self) -> AppResult<Option<String>> {
        let chosen = self
            .inner
            .desktop
            .choose_file("Import MCP servers from a config file")
            .await;
        Ok(chosen.map(|p| p.display().to_string()))
    }

    pub fn import_preview(&self, path: &str) -> AppResult<ImportPreview> {
        let path = import_path(path)?;
        Ok(ImportPreview {
            servers: import::read_servers(&path).map_err(AppError::io)?,
            path: path.display().to_string(),
        })
    }

    /// Copies the chosen servers of another client's config file into the profile's, as
    /// written; a name already in use gets `-2`, `-3`… (the report says which).
    pub async fn import_servers(&self, path: &str, names: &[String]) -> AppResult<ImportReport> {
        let path = import_path(path)?;
        if names.is_empty() {
            return Err(AppError::invalid("choose at least one server to import"));
        }
        if self.inner.config_files.files.contains(&path) {
            return Err(AppError::invalid(format!(
                "{} is one of Porthole's own config files",
                path.display()
            )));
        }
        let found = import::read_servers(&path).map_err(AppError::io)?;
        let mut chosen = Vec::new();
        for name in names {
            let server = found
                .iter()
                .find(|f| &f.name == name)
                .ok_or_else(|| AppError::not_found(format!("{} has no server named {name:?}", path.display())))?;
            if !server.importable {
                return Err(AppError::invalid(format!(
                    "{name:?} cannot be imported: {}",
                    server.note.as_deref().unwrap_or("Porthole cannot use it")
                )));
            }
            chosen.push(server);
        }
        let mut imported = Vec::new();
        let settings = self
            .change_config(|profile, taken| {
                for server in chosen {
                    let imported_as = profile
                        .add_copied(&server.name, server.entry.clone(), taken)
                        .map_err(AppError::invalid)?;
                    imported.push(ImportedServer {
                        name: server.name.clone(),
                        imported_as,
                    });
                }
                Ok(())
            })
            .await?;
        tracing::info!(from = %path.display(), count = imported.len(), "servers imported");
        Ok(ImportReport { settings, imported })
    }

    /// The end of a stdio server's log (what it wrote to stderr).
    pub fn server_log(&self, name: &str) -> AppResult<ServerLog> {
        let path = self
            .inner
            .servers
            .log_file(name)
            .ok_or_else(|| AppError::not_found("this run keeps no server logs"))?;
        read_log(&path).map_err(AppError::io)
    }

    /// Connects a server anew (a stdio server is restarted); how it went is in its status.
    pub async fn reconnect_server(&self, name: &str) -> AppResult<()> {
        self.inner.servers.reconnect(name).await.map_err(AppError::server)
    }

    /// Signs in to a remote server in the system browser, then reconnects it.
    pub async fn sign_in_server(&self, name: &str) -> AppResult<()> {
        self.inner.servers.sign_in(name).await.map_err(AppError::server)
    }

    /// Deletes a remote server's stored sign-in from the keyring and reconnects it without one.
    /// Clears what `name`'s views stored (`localStorage`, IndexedDB) and the devices they were
    /// let use: its next view starts on a new origin with nothing kept and nothing allowed.
    pub fn clear_view_data(&self, name: &str) -> AppResult<String> {
        if !self.inner.servers.statuses().iter().any(|s| s.name == name) {
            return Err(AppError::not_found(format!("there is no server named {name:?}")));
        }
        self.inner.views.clear_view_data(name);
        Ok(format!(
            "Cleared what {name}'s views stored and the devices they were let use. Views of it open now keep theirs until they close."
        ))
    }

    pub async fn sign_out_server(&self, name: &str) -> AppResult<String> {
        Ok(if self.inner.servers.sign_out(name).await.map_err(AppError::server)? {
            format!("Signed out of {name}: its stored sign-in was deleted.")
        } else {
            format!("{name} had no stored sign-in.")
        })
    }
}

#[derive(Debug, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerLog {
    path: String,
    /// The end of the log; `None` when there is no log file (yet).
    text: Option<String>,
    /// Whether the log is longer than what is shown.
    truncated: bool,
}

/// The last `limit` bytes of a file, from the first whole line, as text.
fn tail(path: &Path, limit: u64) -> std::io::Result<(String, bool)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let truncated = len > limit;
    if truncated {
        file.seek(SeekFrom::Start(len - limit))?;
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    if truncated && let Some(newline) = bytes.iter().position(|b| *b == b'\n') {
        bytes.drain(..=newline);
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), truncated))
}

fn read_log(path: &Path) -> Result<ServerLog, String> {
    let shown = path.display().to_string();
    match tail(path, LOG_TAIL_BYTES) {
        Ok((text, truncated)) => Ok(ServerLog {
            path: shown,
            text: Some(text),
            truncated,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ServerLog {
            path: shown,
            text: None,
            truncated: false,
        }),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &Path, value: serde_json::Value) {
        std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }

    #[test]
    fn every_files_servers_are_shown_and_only_the_profiles_are_editable() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("config.json");
        let extra = dir.path().join("extra.json");
        write(
            &profile,
            json!({"mcpServers": {
                "local": {"command": "node", "args": ["s.js"], "env": {"API_KEY": "sk-secret"}},
                "shared": {"command": "x"},
                "bad": {"command": "x", "args": "oops"}
            }}),
        );
        write(
            &extra,
            json!({"mcpApps": false, "servers": {"shared": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t0ken"}}}}),
        );
        let files = vec![profile.clone(), extra.clone()];
        let settings = read_settings(&files);
        let shown = serde_json::to_value(&settings).unwrap();
        let text = shown.to_string();
        assert!(!text.contains("sk-secret") && !text.contains("t0ken"), "{text}");
        let rows: Vec<_> = settings
            .servers
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.editable,
                    s.shadowed_by.is_some(),
                    s.problem.is_some(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("local", true, false, false),
                ("shared", true, true, false),
                ("bad", true, false, true),
                ("shared", false, false, false),
            ]
        );
        assert_eq!(shown["servers"][0]["envKeys"], json!(["API_KEY"]));
        assert_eq!(shown["servers"][0]["transport"], "stdio");
        assert_eq!(shown["servers"][3]["headerKeys"], json!(["Authorization"]));
        assert_eq!(
            settings.servers[2].problem.as_deref().unwrap().split(':').next(),
            Some("field \"args\"")
        );
        assert!(settings.mcp_apps, "the profile's own switch is on");
        assert!(!settings.mcp_apps_effective, "the --mcp-config file turns it off");
        assert_eq!(
            settings.mcp_apps_set_by.as_deref(),
            Some(extra.display().to_string().as_str())
        );
        assert_eq!(settings.problems.len(), 1);

        let profile_file = ConfigFile::read(&profile).unwrap();
        assert!(editable(&profile_file, &files, "local").is_ok());
        let refused = editable(
            &ConfigFile::read(&dir.path().join("none.json")).unwrap(),
            &files,
            "shared",
        )
        .unwrap_err();
        assert!(refused.message.contains("which Porthole does not change"), "{refused}");
        assert_eq!(taken_names(&files), ["local", "shared", "bad", "shared"]);
    }

    #[test]
    fn a_broken_profile_file_is_reported_not_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("config.json");
        std::fs::write(&profile, "{ nope").unwrap();
        let settings = read_settings(std::slice::from_ref(&profile));
        assert!(settings.servers.is_empty());
        assert_eq!(settings.problems.len(), 1);
        assert!(
            settings.problems[0].contains("not valid JSON"),
            "{:?}",
            settings.problems
        );
    }

    #[test]
    fn a_log_is_shown_from_its_end_in_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        assert_eq!(
            read_log(&path).unwrap(),
            ServerLog {
                path: path.display().to_string(),
                text: None,
                truncated: false
            }
        );
        std::fs::write(&path, "one\ntwo\n").unwrap();
        assert_eq!(read_log(&path).unwrap().text.as_deref(), Some("one\ntwo\n"));
        let long: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &long).unwrap();
        let log = read_log(&path).unwrap();
        let text = log.text.unwrap();
        assert!(log.truncated);
        assert!(text.len() <= LOG_TAIL_BYTES as usize);
        assert!(
            text.starts_with("line ") && text.ends_with("line 9999\n"),
            "{}",
            &text[..20]
        );
        assert!(long.ends_with(&text));
    }

    #[test]
    fn import_paths_are_full_paths_or_start_at_home() {
        assert!(import_path("").unwrap_err().message.contains("give the path"));
        assert!(import_path("mcp.json").unwrap_err().message.contains("not a full path"));
        assert_eq!(import_path(" /a/b.json ").unwrap(), PathBuf::from("/a/b.json"));
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(
                import_path("~/.cursor/mcp.json").unwrap(),
                PathBuf::from(home).join(".cursor/mcp.json")
            );
        }
    }
}
