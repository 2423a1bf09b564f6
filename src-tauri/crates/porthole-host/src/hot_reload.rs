//! Hot reload for view authors. A server entry's `watch` names files or folders (its built views,
//! its source); when one of them changes, the server is started again (a stdio server's process;
//! a remote server's connection), its catalog listed again, and each of its open views
//! re-created with its call's input and result, its resource read anew. A watched server's own
//! `notifications/resources/updated` or `resources/list_changed` re-create its open views the
//! same way, without a restart.
//!
//! The files are looked at a few times a second (modification times and sizes, no OS watch API:
//! the same on every platform and file system, network mounts included); folders are walked
//! up to [`MAX_FILES`] files, leaving out `.git`, `node_modules` and `target`.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Host;

/// How often the watched files are looked at.
const POLL: Duration = Duration::from_millis(250);
/// The most files of one server's watched folders looked at.
pub const MAX_FILES: usize = 20_000;
/// Folders never walked into.
const SKIPPED: [&str; 3] = [".git", "node_modules", "target"];

/// A summary of what `paths` hold now: it changes when a file is written, added, removed or
/// renamed (a missing path counts as such).
pub fn fingerprint(paths: &[PathBuf]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut seen = 0usize;
    for path in paths {
        visit(path, &mut hasher, &mut seen);
    }
    hasher.finish()
}

fn visit(path: &Path, hasher: &mut impl Hasher, seen: &mut usize) {
    if *seen >= MAX_FILES {
        return;
    }
    *seen += 1;
    path.hash(hasher);
    let Ok(meta) = std::fs::metadata(path) else {
        0u8.hash(hasher);
        return;
    };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut children: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !SKIPPED.iter().any(|s| e.file_name() == *s))
            .map(|e| e.path())
            .collect();
        children.sort();
        for child in children {
            visit(&child, hasher, seen);
        }
    } else {
        meta.len().hash(hasher);
        if let Ok(modified) = meta.modified() {
            modified.hash(hasher);
        }
    }
}

impl Host {
    /// Starts looking at the watched servers' files (see the module's notes), for as long as
    /// the app runs.
    pub(crate) fn start_hot_reload(&self) {
        // The app's state is held only while it is looked at: the loop ends with the app.
        let weak = std::sync::Arc::downgrade(&self.inner);
        self.inner.runtime.spawn(async move {
            // Each watched server's files and resources as last seen.
            let mut files: HashMap<String, (Vec<PathBuf>, u64)> = HashMap::new();
            let mut versions: HashMap<String, u64> = HashMap::new();
            loop {
                tokio::time::sleep(POLL).await;
                let Some(inner) = weak.upgrade() else { break };
                let host = Host { inner };
                let watched = host.inner.servers.watched();
                files.retain(|name, _| watched.iter().any(|(n, _)| n == name));
                versions.retain(|name, _| watched.iter().any(|(n, _)| n == name));
                for (name, paths) in watched {
                    let now = {
                        let paths = paths.clone();
                        tokio::task::spawn_blocking(move || fingerprint(&paths))
                            .await
                            .unwrap_or(0)
                    };
                    let before = files.insert(name.clone(), (paths.clone(), now));
                    let changed = before.is_some_and(|(old_paths, old)| old_paths == paths && old != now);
                    if changed {
                        tracing::info!(server = %name, "a watched file changed: restarting the server");
                        if let Err(e) = host.inner.servers.reconnect(&name).await {
                            tracing::warn!(server = %name, "the server did not start again: {e}");
                        }
                        let reloaded = host.inner.views.reload_server(&name).await;
                        tracing::info!(server = %name, views = reloaded, "hot reload");
                    }
                    // The server said its resources changed (or it was restarted just now).
                    let version = host.inner.servers.resources_version(&name);
                    let seen = versions.insert(name.clone(), version.unwrap_or(0));
                    if !changed && seen.is_some_and(|v| Some(v) != version) {
                        let reloaded = host.inner.views.reload_server(&name).await;
                        if reloaded > 0 {
                            tracing::info!(server = %name, views = reloaded, "resources changed: views re-created");
                        }
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_when_a_watched_file_or_folder_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("view.html");
        std::fs::write(&file, "one").unwrap();
        let folder = dir.path().join("dist");
        std::fs::create_dir(&folder).unwrap();
        std::fs::create_dir(folder.join("node_modules")).unwrap();
        let paths = vec![file.clone(), folder.clone()];
        let first = fingerprint(&paths);
        assert_eq!(fingerprint(&paths), first, "nothing changed");
        std::fs::write(&file, "two!").unwrap();
        let written = fingerprint(&paths);
        assert_ne!(written, first, "a file written");
        std::fs::write(folder.join("app.js"), "x").unwrap();
        let added = fingerprint(&paths);
        assert_ne!(added, written, "a file added to a folder");
        std::fs::write(folder.join("node_modules").join("dep.js"), "x").unwrap();
        assert_eq!(fingerprint(&paths), added, "node_modules is not watched");
        std::fs::remove_file(&file).unwrap();
        assert_ne!(fingerprint(&paths), added, "a file removed");
    }
}
