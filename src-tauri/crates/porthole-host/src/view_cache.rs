//! Views' HTML, kept per server and `ui://` URI once read and checked, so that the next view of
//! the same tool (another call, a reopened conversation, a pop-out) starts without asking the
//! server again.
//!
//! An entry is good only for the server's `resources_version` it was read at: a new connection,
//! `notifications/resources/list_changed` and `notifications/resources/updated` (for which each
//! cached URI is subscribed, when the server offers it) move the version on, and the next view
//! reads the resource again. Entries are kept up to [`MAX_BYTES`] of HTML in all, the least
//! recently used going first. What is cached is the checked [`LoadedView`] (HTML, SHA-256,
//! CSP): the audit log records the hash of what is actually served either way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use porthole_apps::resource::{LoadedView, Refusal, load_view};
use porthole_mcp::Servers;

/// How much view HTML the cache holds at most.
pub const MAX_BYTES: usize = 32 << 20;

/// Where a view's HTML came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `resources/read` just now.
    Server,
    /// The cache: read earlier at the server's current resources version.
    Cache,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Server => "server",
            Source::Cache => "cache",
        }
    }
}

struct Entry {
    version: u64,
    view: Arc<LoadedView>,
    /// When it was last used (a counter): the smallest goes first.
    used: u64,
}

#[derive(Default)]
struct Entries {
    by_key: HashMap<(String, String), Entry>,
    bytes: usize,
    clock: u64,
}

/// One read of a view from its server, and its answer once there.
type Reading = tokio::sync::OnceCell<Result<LoadedView, Refusal>>;

/// The reads under way, per server, URI and resources version.
type Readings = HashMap<(String, String, u64), Arc<Reading>>;

/// The cache (cheap to clone; clones share it).
#[derive(Clone)]
pub struct ViewCache {
    entries: Arc<Mutex<Entries>>,
    /// The reads under way: views of one tool that open together (a reply calling it many
    /// times) wait for the one read and share its copy.
    reading: Arc<Mutex<Readings>>,
    /// Off: every view is read from its server (`PORTHOLE_VIEW_CACHE=off`, for measuring).
    enabled: bool,
}

impl Default for ViewCache {
    fn default() -> Self {
        ViewCache {
            entries: Arc::default(),
            reading: Arc::default(),
            enabled: true,
        }
    }
}

impl ViewCache {
    /// A cache, or none when `PORTHOLE_VIEW_CACHE` is `off` (or `0`, `false`, `no`).
    pub fn from_env() -> ViewCache {
        let off = std::env::var("PORTHOLE_VIEW_CACHE")
            .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "off" | "0" | "false" | "no"));
        ViewCache {
            enabled: !off,
            ..ViewCache::default()
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// View `uri` of `server`: from the cache when it was read at the server's current
    /// resources version, else read (and checked) now and kept. Loads of the same view that
    /// start together make one read: the others wait for it and take its answer (each would
    /// otherwise ask the server and hold a copy of its own, 600 KB for a view built on the SDK;
    /// a refusal is shared too, so a dead server is waited for once).
    pub async fn load(&self, servers: &Servers, server: &str, uri: &str) -> Result<(LoadedView, Source), Refusal> {
        let Some(version) = servers.resources_version(server).filter(|_| self.enabled) else {
            return Ok((load_view(servers, server, uri).await?, Source::Server));
        };
        if let Some(view) = self.get(server, uri, version) {
            return Ok(((*view).clone(), Source::Cache));
        }
        let key = (server.to_string(), uri.to_string(), version);
        let read = self.reading.lock().unwrap().entry(key.clone()).or_default().clone();
        // Whoever gets here first reads (a waiter takes over if that call is dropped); whoever
        // is done first takes the read off the list, so a later view goes by the cache again.
        let asked = std::sync::atomic::AtomicBool::new(false);
        let answer = read
            .get_or_init(|| {
                asked.store(true, std::sync::atomic::Ordering::Relaxed);
                self.read(servers, server, uri, version)
            })
            .await
            .clone();
        {
            let mut reading = self.reading.lock().unwrap();
            if reading.get(&key).is_some_and(|r| Arc::ptr_eq(r, &read)) {
                reading.remove(&key);
            }
        }
        answer.map(|view| {
            (
                view,
                if asked.into_inner() {
                    Source::Server
                } else {
                    Source::Cache
                },
            )
        })
    }

    /// Reads `uri` of `server` and keeps it at `version` (the version before the read: a change
    /// during it makes the next view read again).
    async fn read(&self, servers: &Servers, server: &str, uri: &str, version: u64) -> Result<LoadedView, Refusal> {
        let view = load_view(servers, server, uri).await?;
        let first_time = self.put(server, uri, version, view.clone());
        if first_time {
            // Told of changes to it from now on, where the server offers that.
            let (servers, server, uri) = (servers.clone(), server.to_string(), uri.to_string());
            tokio::spawn(async move { servers.subscribe_resource(&server, &uri).await });
        }
        Ok(view)
    }

    /// Reads `uri` of `server` into the cache unless it is there at the current version.
    pub async fn prefetch(&self, servers: &Servers, server: &str, uri: &str) {
        if let Err(e) = self.load(servers, server, uri).await {
            tracing::debug!(server, uri, "prefetching the view failed: {e}");
        }
    }

    fn get(&self, server: &str, uri: &str, version: u64) -> Option<Arc<LoadedView>> {
        let mut entries = self.entries.lock().unwrap();
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries.by_key.get_mut(&(server.to_string(), uri.to_string()))?;
        if entry.version != version {
            return None;
        }
        entry.used = now;
        Some(entry.view.clone())
    }

    /// Keeps `view`; `true` when the URI was not cached before (at any version).
    fn put(&self, server: &str, uri: &str, version: u64, view: LoadedView) -> bool {
        let size = view.html.len();
        let mut entries = self.entries.lock().unwrap();
        entries.clock += 1;
        let used = entries.clock;
        let key = (server.to_string(), uri.to_string());
        let old = entries.by_key.remove(&key);
        if let Some(old) = &old {
            entries.bytes -= old.view.html.len();
        }
        if size > MAX_BYTES {
            return old.is_none();
        }
        while entries.bytes + size > MAX_BYTES {
            let Some(oldest) = entries
                .by_key
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(gone) = entries.by_key.remove(&oldest) {
                entries.bytes -= gone.view.html.len();
            }
        }
        entries.bytes += size;
        entries.by_key.insert(
            key,
            Entry {
                version,
                view: Arc::new(view),
                used,
            },
        );
        old.is_none()
    }

    /// Forgets every view of `server` (removed, or its view data cleared).
    pub fn forget_server(&self, server: &str) {
        let mut entries = self.entries.lock().unwrap();
        let keys: Vec<_> = entries.by_key.keys().filter(|(s, _)| s == server).cloned().collect();
        for key in keys {
            if let Some(gone) = entries.by_key.remove(&key) {
                entries.bytes -= gone.view.html.len();
            }
        }
    }

    /// Forgets the view `uri` of `server`: the next load reads it again.
    pub fn forget(&self, server: &str, uri: &str) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(gone) = entries.by_key.remove(&(server.to_string(), uri.to_string())) {
            entries.bytes -= gone.view.html.len();
        }
    }

    /// How many views and bytes of HTML are cached.
    pub fn size(&self) -> (usize, usize) {
        let entries = self.entries.lock().unwrap();
        (entries.by_key.len(), entries.bytes)
    }
}
