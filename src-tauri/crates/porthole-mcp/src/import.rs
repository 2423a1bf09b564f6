//! Servers from other MCP clients' config files (Claude Desktop, Cursor, VS Code), to copy into
//! the profile's own: where those files usually are, and what servers one holds.
//!
//! Entries are copied as written, placeholders (`${env:…}`, `${input:…}`) included, so that they
//! resolve the same way they do for the other client. VS Code's `settings.json` (`"mcp"` inside
//! the user's settings, with comments) is not read: only its `mcp.json`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::config::{ConfigProblem, parse_config, parse_config_with};
use crate::config_file::EntryFields;

/// A config file of another MCP client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportSource {
    /// The client it belongs to, as people call it.
    pub client: &'static str,
    pub path: PathBuf,
}

/// Where Claude Desktop, Cursor and VS Code keep their MCP servers, given the home folder and
/// the OS's folder for per-user settings (`~/.config`, `~/Library/Application Support`,
/// `%APPDATA%`).
pub fn usual_sources(home: &Path, config_dir: &Path) -> Vec<ImportSource> {
    vec![
        ImportSource {
            client: "Claude Desktop",
            path: config_dir.join("Claude").join("claude_desktop_config.json"),
        },
        ImportSource {
            client: "Cursor",
            path: home.join(".cursor").join("mcp.json"),
        },
        ImportSource {
            client: "VS Code",
            path: config_dir.join("Code").join("User").join("mcp.json"),
        },
    ]
}

/// The usual places on this machine that hold a file.
pub fn existing_sources() -> Vec<ImportSource> {
    let Some(home) = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from) else {
        return Vec::new();
    };
    let config_dir = if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support")
    } else if cfg!(windows) {
        std::env::var_os("APPDATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("AppData").join("Roaming"))
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"))
    };
    usual_sources(&home, &config_dir)
        .into_iter()
        .filter(|s| s.path.is_file())
        .collect()
}

/// One server found in a file to import from.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FoundServer {
    pub name: String,
    /// `stdio: command args…` or the URL, as written.
    pub endpoint: String,
    /// Whether Porthole can use the entry; when not, `note` says why.
    pub importable: bool,
    /// What is wrong with the entry, or what it still needs (an environment variable, say).
    pub note: Option<String>,
    /// The entry as written.
    #[serde(skip)]
    pub entry: Value,
}

fn problem_text(p: &ConfigProblem) -> String {
    match &p.field {
        Some(field) => format!("field {field:?}: {}", p.message),
        None => p.message.clone(),
    }
}

/// The servers in a Claude Desktop, Cursor or VS Code config file.
pub fn read_servers(path: &Path) -> Result<Vec<FoundServer>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let root: Value =
        serde_json::from_str(text).map_err(|e| format!("{}:{} is not valid JSON: {e}", path.display(), e.line()))?;
    let sections: Vec<&serde_json::Map<String, Value>> = ["mcpServers", "servers"]
        .iter()
        .filter_map(|s| root.get(*s).and_then(Value::as_object))
        .collect();
    if sections.is_empty() {
        return Err(format!(
            "{} has no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) object",
            path.display()
        ));
    }
    // Placeholders are resolved with this environment, and again with any value at all: an
    // entry that only lacks a variable here is still worth copying.
    let here = parse_config(path, text);
    let anywhere = parse_config_with(path, text, &|_| Some("placeholder".into()));
    let mut found: Vec<FoundServer> = Vec::new();
    for (name, entry) in sections.into_iter().flat_map(|m| m.iter()) {
        if found.iter().any(|f| &f.name == name) {
            continue;
        }
        let problem_in = |loaded: &crate::config::LoadedConfig| {
            loaded
                .problems
                .iter()
                .find(|p| p.server.as_deref() == Some(name.as_str()))
                .map(problem_text)
        };
        let loads = |loaded: &crate::config::LoadedConfig| loaded.servers.iter().any(|s| &s.name == name);
        let fields = EntryFields::of(entry);
        let endpoint = if !fields.url.is_empty() {
            fields.url
        } else if !fields.command.is_empty() {
            std::iter::once(format!("stdio: {}", fields.command))
                .chain(fields.args)
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            "no command or URL".into()
        };
        found.push(FoundServer {
            name: name.clone(),
            endpoint,
            importable: loads(&here) || loads(&anywhere),
            note: problem_in(&here).or_else(|| problem_in(&anywhere)),
            entry: entry.clone(),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usual_sources_that_exist_are_the_ones_offered() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let config = home.join(".config");
        let all = usual_sources(&home, &config);
        assert_eq!(
            all.iter().map(|s| s.path.clone()).collect::<Vec<_>>(),
            [
                config.join("Claude/claude_desktop_config.json"),
                home.join(".cursor/mcp.json"),
                config.join("Code/User/mcp.json"),
            ]
        );
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::write(home.join(".cursor/mcp.json"), "{}").unwrap();
        let existing: Vec<_> = all.into_iter().filter(|s| s.path.is_file()).collect();
        assert_eq!(existing.len(), 1);
        assert_eq!(existing[0].client, "Cursor");
    }

    #[test]
    fn a_claude_desktop_file_lists_each_server_and_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude_desktop_config.json");
        std::fs::write(
            &path,
            json!({"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
                "remote": {"url": "https://h.example/mcp"},
                "old": {"type": "sse", "url": "https://h.example/sse"},
                "needs": {"command": "node", "env": {"KEY": "${env:PORTHOLE_TEST_SURELY_UNSET_VAR}"}}
            }})
            .to_string(),
        )
        .unwrap();
        let found = read_servers(&path).unwrap();
        let rows: Vec<_> = found
            .iter()
            .map(|f| (f.name.as_str(), f.endpoint.as_str(), f.importable))
            .collect();
        assert_eq!(
            rows,
            [
                ("fs", "stdio: npx -y @modelcontextprotocol/server-filesystem /tmp", true),
                ("remote", "https://h.example/mcp", true),
                ("old", "https://h.example/sse", false),
                ("needs", "stdio: node", true),
            ]
        );
        assert!(
            found[2].note.as_deref().unwrap().contains("HTTP+SSE"),
            "{:?}",
            found[2].note
        );
        assert_eq!(
            found[3].note.as_deref(),
            Some("needs the environment variable PORTHOLE_TEST_SURELY_UNSET_VAR, which is not set")
        );
        assert_eq!(found[3].entry["env"]["KEY"], "${env:PORTHOLE_TEST_SURELY_UNSET_VAR}");
        assert!(found[0].note.is_none());
    }

    #[test]
    fn a_vs_code_file_is_read_too_and_other_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"inputs": [], "servers": {"gh": {"type": "http", "url": "https://api.example/mcp/"}}}"#,
        )
        .unwrap();
        let found = read_servers(&path).unwrap();
        assert_eq!((found[0].name.as_str(), found[0].importable), ("gh", true));

        std::fs::write(&path, r#"{"editor.fontSize": 14}"#).unwrap();
        assert!(read_servers(&path).unwrap_err().contains("has no \"mcpServers\""));
        std::fs::write(&path, "{\n  oops").unwrap();
        assert!(
            read_servers(&path)
                .unwrap_err()
                .contains("mcp.json:2 is not valid JSON")
        );
        assert!(
            read_servers(&dir.path().join("missing.json"))
                .unwrap_err()
                .starts_with("cannot read")
        );
    }
}
