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
//! The HTML is kept compressed (DEFLATE; a view built on the official SDK, 588 KiB, takes 178
//! KiB) and unpacked when a view needs it (1.5 ms for that one). The copy a view was given
//! is kept unpacked for [`KEEP_UNPACKED`] after the last view asked for it, so views of one tool
//! opened meanwhile share it (a reply calling the tool 20 times holds one copy, not 20). Views
//! read ahead as servers connect are kept packed only: at rest the cache holds no view whole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porthole_apps::resource::{LoadedView, Refusal, load_view};
use porthole_mcp::Servers;

/// How much view HTML the cache holds at most.
pub const MAX_BYTES: usize = 32 << 20;

/// How long a view's HTML stays unpacked after a view last asked for it.
pub const KEEP_UNPACKED: Duration = Duration::from_secs(30);

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
    /// The view, its `html` left empty: the HTML is `packed` (and `unpacked` a while).
    view: LoadedView,
    /// The HTML's UTF-8 bytes, compressed (raw DEFLATE); `None` while they are being packed,
    /// right after the read (`unpacked` holds the HTML meanwhile).
    packed: Option<Arc<[u8]>>,
    /// The HTML's length in bytes.
    size: usize,
    /// The copy views were given last, for [`KEEP_UNPACKED`] after that.
    unpacked: Option<Arc<str>>,
    /// When it was last used (a counter): the smallest goes first.
    used: u64,
}

/// A cached view's HTML as the entry holds it: a copy kept unpacked, or only its packed bytes.
enum Held {
    Unpacked(Arc<str>),
    Packed { bytes: Arc<[u8]>, size: usize },
}

impl Entry {
    fn held(&self) -> Option<Held> {
        match (&self.unpacked, &self.packed) {
            (Some(html), _) => Some(Held::Unpacked(html.clone())),
            (None, Some(bytes)) => Some(Held::Packed {
                bytes: bytes.clone(),
                size: self.size,
            }),
            (None, None) => None,
        }
    }
}

/// The HTML `bytes` were packed from (`None` if they do not unpack to `size` bytes of UTF-8,
/// which would be a bug).
fn unpack(bytes: &[u8], size: usize) -> Option<Arc<str>> {
    let mut html = vec![0; size];
    miniz_oxide::inflate::decompress_slice_iter_to_slice(&mut html, std::iter::once(bytes), false, true)
        .ok()
        .filter(|&n| n == size)?;
    Some(Arc::from(String::from_utf8(html).ok()?))
}

/// DEFLATE's fastest level: 600 KB of HTML in a few milliseconds, to under a third.
const PACK_LEVEL: u8 = 1;

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
    /// How long a copy stays unpacked ([`KEEP_UNPACKED`]; shorter in tests).
    keep_unpacked: Duration,
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
            keep_unpacked: KEEP_UNPACKED,
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

    /// The same cache, keeping a view's HTML unpacked for `keep` after a view last asked for it.
    pub fn keeping_unpacked_for(self, keep: Duration) -> ViewCache {
        ViewCache {
            keep_unpacked: keep,
            ..self
        }
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
        self.read_once(servers, server, uri, version, true).await
    }

    /// `uri` of `server` read at `version` by this call or by the load of it under way, which
    /// this one waits for; `for_view`: a view will show it (so its copy is kept unpacked a while).
    async fn read_once(
        &self,
        servers: &Servers,
        server: &str,
        uri: &str,
        version: u64,
        for_view: bool,
    ) -> Result<(LoadedView, Source), Refusal> {
        let key = (server.to_string(), uri.to_string(), version);
        let read = self.reading.lock().unwrap().entry(key.clone()).or_default().clone();
        // Whoever gets here first reads (a waiter takes over if that call is dropped); whoever
        // is done first takes the read off the list, so a later view goes by the cache again.
        let asked = std::sync::atomic::AtomicBool::new(false);
        let answer = read
            .get_or_init(|| {
                asked.store(true, std::sync::atomic::Ordering::Relaxed);
                self.read(servers, server, uri, version, for_view)
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
    async fn read(
        &self,
        servers: &Servers,
        server: &str,
        uri: &str,
        version: u64,
        for_view: bool,
    ) -> Result<LoadedView, Refusal> {
        let view = load_view(servers, server, uri).await?;
        let (first_time, packing) = self.put(server, uri, version, view.clone(), for_view);
        if first_time {
            // Told of changes to it from now on, where the server offers that.
            let (servers, server, uri) = (servers.clone(), server.to_string(), uri.to_string());
            tokio::spawn(async move { servers.subscribe_resource(&server, &uri).await });
        }
        if let Some(packing) = packing {
            if for_view {
                // Not on the view's way: it has its HTML.
                tokio::spawn(packing);
            } else {
                packing.await;
            }
        }
        Ok(view)
    }

    /// Reads `uri` of `server` into the cache unless it is there at the current version (kept
    /// packed only).
    pub async fn prefetch(&self, servers: &Servers, server: &str, uri: &str) {
        let Some(version) = servers.resources_version(server).filter(|_| self.enabled) else {
            return;
        };
        let cached = (self.entries.lock().unwrap().by_key)
            .get(&(server.to_string(), uri.to_string()))
            .is_some_and(|e| e.version == version);
        if cached {
            return;
        }
        if let Err(e) = self.read_once(servers, server, uri, version, false).await {
            tracing::debug!(server, uri, "prefetching the view failed: {e}");
        }
    }

    /// The view for a view to show, its copy kept unpacked a while. Unpacked (~1.5 ms for an
    /// SDK view) outside the cache's lock, so other views' loads do not wait for it.
    fn get(&self, server: &str, uri: &str, version: u64) -> Option<LoadedView> {
        let key = (server.to_string(), uri.to_string());
        let mut entries = self.entries.lock().unwrap();
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries.by_key.get_mut(&key)?;
        if entry.version != version {
            return None;
        }
        let held = entry.held()?;
        let view = entry.view.clone();
        entry.used = now;
        drop(entries);
        let html = match held {
            Held::Unpacked(html) => html,
            Held::Packed { bytes, size } => {
                let html = unpack(&bytes, size)?;
                // Kept for the next views, unless a view that asked meanwhile kept its copy
                // first (then this one shares that) or the entry changed.
                let mut entries = self.entries.lock().unwrap();
                match (entries.by_key.get_mut(&key))
                    .filter(|e| e.version == version && e.packed.as_ref().is_some_and(|p| Arc::ptr_eq(p, &bytes)))
                {
                    Some(entry) => entry.unpacked.get_or_insert(html).clone(),
                    None => html,
                }
            }
        };
        self.pack_later(key, now);
        Some(LoadedView { html, ..view })
    }

    /// Lets go of the unpacked copy of `key` once [`KEEP_UNPACKED`] has passed with no view
    /// asking for it since `used`.
    fn pack_later(&self, key: (String, String), used: u64) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let entries = Arc::downgrade(&self.entries);
        let keep = self.keep_unpacked;
        runtime.clone().spawn(async move {
            tokio::time::sleep(keep).await;
            let Some(entries) = entries.upgrade() else {
                return;
            };
            let dropped = entries
                .lock()
                .unwrap()
                .by_key
                .get_mut(&key)
                .filter(|e| e.used == used && e.packed.is_some())
                .and_then(|e| e.unpacked.take());
            if let Some(html) = dropped {
                // Freed now unless a view still shows it (then when that view goes).
                let last = Arc::strong_count(&html) == 1;
                drop(html);
                if last {
                    crate::memory::give_back_freed_memory_soon(&runtime);
                }
            }
        });
    }

    /// Keeps `view`, unpacked until the returned task has packed it (and for [`KEEP_UNPACKED`]
    /// after that when `for_view`); `true` when the URI was not cached before (at any version).
    fn put(
        &self,
        server: &str,
        uri: &str,
        version: u64,
        mut view: LoadedView,
        for_view: bool,
    ) -> (bool, Option<impl Future<Output = ()> + Send + 'static>) {
        let size = view.html.len();
        let html = std::mem::replace(&mut view.html, Arc::from(""));
        let mut entries = self.entries.lock().unwrap();
        entries.clock += 1;
        let used = entries.clock;
        let key = (server.to_string(), uri.to_string());
        let old = entries.by_key.remove(&key);
        if let Some(old) = &old {
            entries.bytes -= old.size;
        }
        if size > MAX_BYTES {
            return (old.is_none(), None);
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
                entries.bytes -= gone.size;
            }
        }
        entries.bytes += size;
        entries.by_key.insert(
            key.clone(),
            Entry {
                version,
                view,
                packed: None,
                size,
                unpacked: Some(html.clone()),
                used,
            },
        );
        drop(entries);
        if for_view {
            self.pack_later(key.clone(), used);
        }
        (old.is_none(), Some(self.clone().pack(key, html, used, for_view)))
    }

    /// Packs `html`, `key`'s entry's since it was kept at `used`, on a blocking thread (a
    /// few milliseconds for 600 KB); then lets go of the unpacked copy unless a view asked for
    /// it (`for_view`, or since).
    async fn pack(self, key: (String, String), html: Arc<str>, used: u64, for_view: bool) {
        let source = html.clone();
        let Ok(packed) =
            tokio::task::spawn_blocking(move || miniz_oxide::deflate::compress_to_vec(source.as_bytes(), PACK_LEVEL))
                .await
        else {
            return;
        };
        let mut entries = self.entries.lock().unwrap();
        let Some(entry) =
            (entries.by_key.get_mut(&key)).filter(|e| e.unpacked.as_ref().is_some_and(|kept| Arc::ptr_eq(kept, &html)))
        else {
            return;
        };
        entry.packed = Some(Arc::from(packed));
        if !for_view && entry.used == used {
            entry.unpacked = None;
        }
    }

    /// Forgets every view of `server` (removed, or its view data cleared).
    pub fn forget_server(&self, server: &str) {
        let mut entries = self.entries.lock().unwrap();
        let keys: Vec<_> = entries.by_key.keys().filter(|(s, _)| s == server).cloned().collect();
        for key in keys {
            if let Some(gone) = entries.by_key.remove(&key) {
                entries.bytes -= gone.size;
            }
        }
    }

    /// Forgets the view `uri` of `server`: the next load reads it again.
    pub fn forget(&self, server: &str, uri: &str) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(gone) = entries.by_key.remove(&(server.to_string(), uri.to_string())) {
            entries.bytes -= gone.size;
        }
    }

    /// How many bytes of HTML the cache holds: packed, and the copies kept unpacked.
    pub fn held_bytes(&self) -> usize {
        let entries = self.entries.lock().unwrap();
        entries
            .by_key
            .values()
            .map(|e| e.packed.as_ref().map_or(0, |p| p.len()) + e.unpacked.as_ref().map_or(0, |h| h.len()))
            .sum()
    }

    /// How many views and bytes of HTML are cached.
    pub fn size(&self) -> (usize, usize) {
        let entries = self.entries.lock().unwrap();
        (entries.by_key.len(), entries.bytes)
    }
}
