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
//!
//! While no view shows it, an entry's HTML waits on disk rather than in memory (views read
//! ahead when a server connects are most of what the app held at rest: 600 KB for each view
//! built on the SDK): in a file of the profile's data folder that has no name (unlinked, so
//! the system removes it when the app ends, however it ends), read back when the next view
//! of it opens — a fraction of a millisecond from the page cache. The views showing it share
//! one copy, which the entry finds again while any of them lives. Without a folder, or when
//! the file cannot be written, the HTML stays in memory.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

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
    /// The checked view; its `html` is empty while `html` below is on disk.
    view: LoadedView,
    html: Held,
    /// When it was last used (a counter): the smallest goes first.
    used: u64,
}

/// Where an entry's HTML is.
enum Held {
    /// In memory (no folder to put it in, or the file could not be written).
    Memory(Arc<str>),
    /// In an unnamed file of `len` bytes; `shown` is the copy views hold, while one lives.
    Disk {
        file: Arc<Mutex<File>>,
        len: usize,
        shown: Weak<str>,
    },
}

impl Entry {
    fn len(&self) -> usize {
        match &self.html {
            Held::Memory(html) => html.len(),
            Held::Disk { len, .. } => *len,
        }
    }
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
    /// The folder where HTML no view shows waits (none: it stays in memory).
    folder: Option<PathBuf>,
}

impl Default for ViewCache {
    fn default() -> Self {
        ViewCache {
            entries: Arc::default(),
            reading: Arc::default(),
            enabled: true,
            folder: None,
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

    /// The same cache, keeping the HTML no view shows in unnamed files in `folder` (the
    /// profile's data folder) instead of in memory.
    pub fn on_disk_in(self, folder: Option<PathBuf>) -> ViewCache {
        ViewCache { folder, ..self }
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
            return Ok((view, Source::Cache));
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

    /// The entry at `version`, its HTML shared with the views showing it, or read back from its
    /// file (outside the lock) when none does. A file that cannot be read is a miss.
    fn get(&self, server: &str, uri: &str, version: u64) -> Option<LoadedView> {
        let key = (server.to_string(), uri.to_string());
        let (file, len) = {
            let mut entries = self.entries.lock().unwrap();
            entries.clock += 1;
            let now = entries.clock;
            let entry = entries.by_key.get_mut(&key)?;
            if entry.version != version {
                return None;
            }
            entry.used = now;
            match &entry.html {
                Held::Memory(html) => return Some(with_html(&entry.view, html.clone())),
                Held::Disk { shown, file, len } => match shown.upgrade() {
                    Some(html) => return Some(with_html(&entry.view, html)),
                    None => (file.clone(), *len),
                },
            }
        };
        let html = match read_back(&file, len) {
            Ok(html) => html,
            Err(e) => {
                tracing::warn!(server, uri, "a cached view could not be read back: {e}");
                self.forget(server, uri);
                return None;
            }
        };
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.by_key.get_mut(&key)?;
        if entry.version != version {
            return None;
        }
        if let Held::Disk { file: kept, shown, .. } = &mut entry.html
            && Arc::ptr_eq(kept, &file)
        {
            // Another view may have read it back meanwhile: theirs is the copy to share.
            match shown.upgrade() {
                Some(theirs) => return Some(with_html(&entry.view, theirs)),
                None => *shown = Arc::downgrade(&html),
            }
        }
        Some(with_html(&entry.view, html))
    }

    /// Keeps `view`; `true` when the URI was not cached before (at any version).
    fn put(&self, server: &str, uri: &str, version: u64, view: LoadedView) -> bool {
        let size = view.html.len();
        // Written before the lock is taken; the view being shown holds the copy in memory.
        let html = match self.folder.as_deref().map(|folder| write_out(folder, &view.html)) {
            Some(Ok(file)) => Held::Disk {
                file: Arc::new(Mutex::new(file)),
                len: size,
                shown: Arc::downgrade(&view.html),
            },
            Some(Err(e)) => {
                tracing::warn!(
                    server,
                    uri,
                    "a view's HTML is kept in memory: it could not be written out: {e}"
                );
                Held::Memory(view.html.clone())
            }
            None => Held::Memory(view.html.clone()),
        };
        let view = with_html(&view, Arc::from(""));
        let mut entries = self.entries.lock().unwrap();
        entries.clock += 1;
        let used = entries.clock;
        let key = (server.to_string(), uri.to_string());
        let old = entries.by_key.remove(&key);
        if let Some(old) = &old {
            entries.bytes -= old.len();
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
                entries.bytes -= gone.len();
            }
        }
        entries.bytes += size;
        entries.by_key.insert(
            key,
            Entry {
                version,
                view,
                html,
                used,
            },
        );
        old.is_none()
    }

    /// How many bytes of cached HTML are in memory: held by the cache itself, or shared with
    /// views that show it.
    pub fn in_memory(&self) -> usize {
        let entries = self.entries.lock().unwrap();
        entries
            .by_key
            .values()
            .map(|e| match &e.html {
                Held::Memory(html) => html.len(),
                Held::Disk { shown, len, .. } => {
                    if shown.strong_count() > 0 {
                        *len
                    } else {
                        0
                    }
                }
            })
            .sum()
    }

    /// Forgets every view of `server` (removed, or its view data cleared).
    pub fn forget_server(&self, server: &str) {
        let mut entries = self.entries.lock().unwrap();
        let keys: Vec<_> = entries.by_key.keys().filter(|(s, _)| s == server).cloned().collect();
        for key in keys {
            if let Some(gone) = entries.by_key.remove(&key) {
                entries.bytes -= gone.len();
            }
        }
    }

    /// Forgets the view `uri` of `server`: the next load reads it again.
    pub fn forget(&self, server: &str, uri: &str) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(gone) = entries.by_key.remove(&(server.to_string(), uri.to_string())) {
            entries.bytes -= gone.len();
        }
    }

    /// How many views and bytes of HTML are cached.
    pub fn size(&self) -> (usize, usize) {
        let entries = self.entries.lock().unwrap();
        (entries.by_key.len(), entries.bytes)
    }
}

/// `view` with `html` as its HTML.
fn with_html(view: &LoadedView, html: Arc<str>) -> LoadedView {
    LoadedView { html, ..view.clone() }
}

/// `html` in a new file of `folder` that has no name: only this handle reaches it, and the
/// system frees it when the handle is closed (the entry goes, or the app ends).
fn write_out(folder: &std::path::Path, html: &str) -> std::io::Result<File> {
    let mut file = tempfile::tempfile_in(folder)?;
    file.write_all(html.as_bytes())?;
    Ok(file)
}

/// The `len` bytes of HTML `file` holds (it was written as UTF-8 and is read whole).
fn read_back(file: &Mutex<File>, len: usize) -> std::io::Result<Arc<str>> {
    let mut bytes = vec![0; len];
    let mut file = file.lock().unwrap();
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut bytes)?;
    let html = String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    Ok(Arc::from(html))
}
