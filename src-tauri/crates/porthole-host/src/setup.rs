//! The profile a run uses and the MCP config files it reads, shared by the app and the
//! command line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use porthole_mcp::oauth::{KeyringTokens, OAuth, SystemBrowser};
use porthole_mcp::{ConnectOptions, ElicitationPolicy};
use porthole_profile::Profile;

/// The profile, created if new, plus the MCP config files to read (the profile's own first).
pub struct Setup {
    pub profile: Profile,
    pub config_files: Vec<PathBuf>,
    /// Start only the server of this name, even when its config disables it (the live check
    /// and snapshots of `--server NAME`); `None`: every enabled server, as the app does.
    pub only_server: Option<String>,
}

impl Setup {
    /// `profile_dir` (`--profile`/`PORTHOLE_HOME`) or the OS's usual places; `extra_configs`
    /// are the `--mcp-config` files, read after the profile's own.
    pub fn new(profile_dir: Option<&Path>, extra_configs: &[PathBuf]) -> Result<Setup> {
        let profile = Profile::resolve(profile_dir)?;
        profile.ensure()?;
        let mut config_files = vec![profile.config_file()];
        config_files.extend(extra_configs.iter().cloned());
        Ok(Setup {
            profile,
            config_files,
            only_server: None,
        })
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
            sampling: None,
            roots: None,
            oauth: Some({
                let mut oauth = OAuth::new(
                    Arc::new(SystemBrowser),
                    Arc::new(KeyringTokens(Arc::new(porthole_secrets::LazyKeyring::new("Porthole")))),
                );
                oauth.client_metadata_url = self.client_metadata_url();
                oauth
            }),
        }
    }

    /// The OAuth client ID metadata document URL: `PORTHOLE_CLIENT_METADATA_URL`, else the
    /// profile's setting (read from its database, when there is one).
    pub fn client_metadata_url(&self) -> Option<String> {
        if let Some(url) = std::env::var("PORTHOLE_CLIENT_METADATA_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        {
            return Some(url.trim().to_string());
        }
        let file = self.profile.database_file();
        if !file.exists() {
            return None;
        }
        let store = porthole_store::Store::open_read_only(&file).ok()?;
        crate::settings::read_general(Some(&store)).client_metadata_url
    }
}
