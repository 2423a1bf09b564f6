//! Where Porthole keeps its state, and how it logs.
//!
//! A *profile* is the set of folders that hold one user's config file, conversation database and
//! logs. `--profile DIR` (or `PORTHOLE_HOME=DIR`) puts all of it inside `DIR`, which is how tests
//! and side-by-side installs stay apart; otherwise the OS's usual places are used.

mod logging;

pub use logging::{LogGuard, Stderr, init_logging};

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

/// The name of the profile's config file.
pub const CONFIG_FILE_NAME: &str = "config.json";

/// What a fresh profile's config file says: the built-in demo MCP App server, so a new user sees
/// UI tools at once. `"command": "porthole"` always means "this same Porthole executable".
pub const DEFAULT_CONFIG: &str = r#"{
  "mcpServers": {
    "porthole-demo": {
      "command": "porthole",
      "args": ["demo-server"]
    }
  }
}
"#;

/// The folders of one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    config_dir: PathBuf,
    data_dir: PathBuf,
    log_dir: PathBuf,
}

impl Profile {
    /// Everything inside one folder: `DIR/config.json`, `DIR/porthole.db`, `DIR/logs/`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        Profile {
            config_dir: dir.clone(),
            data_dir: dir.clone(),
            log_dir: dir.join("logs"),
        }
    }

    /// The OS's usual places (XDG on Linux, `~/Library/...` on macOS, `%APPDATA%` on Windows).
    pub fn os_default() -> Result<Self> {
        let dirs = directories::ProjectDirs::from("dev", "Porthole", "Porthole")
            .ok_or_else(|| anyhow!("cannot find a home folder for Porthole's state; pass --profile DIR"))?;
        Ok(Profile {
            config_dir: dirs.config_dir().to_path_buf(),
            data_dir: dirs.data_dir().to_path_buf(),
            log_dir: dirs.data_local_dir().join("logs"),
        })
    }

    /// `explicit` comes from `--profile DIR` or `PORTHOLE_HOME`; without it, the OS's places.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self> {
        match explicit {
            Some(dir) => {
                let dir = if dir.is_absolute() {
                    dir.to_path_buf()
                } else {
                    std::env::current_dir()
                        .context("cannot read the current folder to resolve --profile")?
                        .join(dir)
                };
                Ok(Profile::in_dir(dir))
            }
            None => Profile::os_default(),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join(CONFIG_FILE_NAME)
    }

    pub fn database_file(&self) -> PathBuf {
        self.data_dir.join("porthole.db")
    }

    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Creates the profile's folders, and a config file with the demo server when there is none.
    /// An existing config file is never touched, even if it is malformed.
    pub fn ensure(&self) -> Result<()> {
        for dir in [&self.config_dir, &self.data_dir, &self.log_dir] {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = self.config_file();
        match fs::OpenOptions::new().write(true).create_new(true).open(&file) {
            Ok(mut f) => {
                use std::io::Write;
                f.write_all(DEFAULT_CONFIG.as_bytes())
                    .with_context(|| format!("cannot write {}", file.display()))?;
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot create {}", file.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_dir_holds_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Profile::resolve(Some(tmp.path())).unwrap();
        assert_eq!(p.config_file(), tmp.path().join("config.json"));
        assert_eq!(p.database_file(), tmp.path().join("porthole.db"));
        assert_eq!(p.log_dir(), tmp.path().join("logs"));
    }

    #[test]
    fn fresh_profile_gets_the_demo_server_and_an_edited_one_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Profile::in_dir(tmp.path().join("new"));
        p.ensure().unwrap();
        let written = fs::read_to_string(p.config_file()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(v["mcpServers"]["porthole-demo"]["args"][0], "demo-server");
        assert!(p.log_dir().is_dir());

        fs::write(p.config_file(), "{ not json").unwrap();
        p.ensure().unwrap();
        assert_eq!(fs::read_to_string(p.config_file()).unwrap(), "{ not json");
    }
}
