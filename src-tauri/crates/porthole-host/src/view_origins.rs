//! Each server's views have an origin of their own: `mcpview://<origin>/`, where `<origin>` is
//! 128 random bits in hex, made the first time the server shows a view and kept in the profile,
//! so it is the same after a restart, never another server's, and never the app's
//! (`tauri://localhost`). A server that asks for a dedicated origin (`_meta.ui.domain`) gets it
//! when it is a valid host name that no other server of the profile has been given.
//!
//! The origin's `localStorage` is kept here too (see [`porthole_apps::view_storage`]), for the
//! next start. Clearing a server's view data gives it a new origin (so what the engine holds
//! for the old one for the rest of the session is out of reach too) and forgets what was kept;
//! removing the server forgets both.
//!
//! So are the devices the person let a server's views use (`_meta.ui.permissions`: camera,
//! microphone, location, writing the clipboard), like a browser's site permissions: granted
//! per server, forgotten with its view data.

use std::collections::HashMap;
use std::sync::Mutex;

use porthole_apps::resource::Permissions;
use porthole_store::Store;
use serde_json::{Map, Value};

const ORIGIN_SETTING: &str = "view_origin:";
const DOMAIN_CLAIM_SETTING: &str = "view_domain:";
const STORAGE_SETTING: &str = "view_storage:";
const DEVICES_SETTING: &str = "view_devices:";

/// Origins of servers' views, and what their `localStorage` held.
pub struct ViewOrigins {
    store: Option<Store>,
    /// Without a store (tests, a damaged database): for this run only.
    memory: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    origins: HashMap<String, String>,
    claims: HashMap<String, String>,
    storage: HashMap<String, Map<String, Value>>,
    devices: HashMap<String, Value>,
}

fn random_origin() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS has randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `domain` can be a view origin: a lowercase host name of letters, digits and
/// hyphens (labels of 1 to 63, none starting or ending with a hyphen), 253 characters at most,
/// with a dot (a name, not a bare word such as `localhost`), and not Porthole's own names.
pub fn is_valid_domain(domain: &str) -> bool {
    let reserved = domain == "localhost"
        || domain.ends_with(".localhost")
        || domain.starts_with("mcpview.")
        || domain.starts_with("ipc.")
        || domain.starts_with("tauri.");
    !reserved
        && domain.len() <= 253
        && domain.contains('.')
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

impl ViewOrigins {
    pub fn new(store: Option<Store>) -> ViewOrigins {
        ViewOrigins {
            store,
            memory: Mutex::default(),
        }
    }

    fn get(&self, key: &str) -> Option<Value> {
        match &self.store {
            Some(store) => store.setting(key).ok().flatten(),
            None => {
                let memory = self.memory.lock().unwrap();
                let (kind, rest) = key.split_at(key.find(':').map_or(0, |i| i + 1));
                match kind {
                    ORIGIN_SETTING => memory.origins.get(rest).cloned().map(Value::String),
                    DOMAIN_CLAIM_SETTING => memory.claims.get(rest).cloned().map(Value::String),
                    DEVICES_SETTING => memory.devices.get(rest).cloned(),
                    _ => memory.storage.get(rest).cloned().map(Value::Object),
                }
            }
        }
    }

    fn set(&self, key: &str, value: Value) {
        match &self.store {
            Some(store) => {
                if let Err(e) = store.set_setting(key, &value) {
                    tracing::error!("cannot keep {key}: {e}");
                }
            }
            None => {
                let mut memory = self.memory.lock().unwrap();
                let (kind, rest) = key.split_at(key.find(':').map_or(0, |i| i + 1));
                match (kind, value) {
                    (ORIGIN_SETTING, Value::String(v)) => drop(memory.origins.insert(rest.into(), v)),
                    (DOMAIN_CLAIM_SETTING, Value::String(v)) => drop(memory.claims.insert(rest.into(), v)),
                    (DEVICES_SETTING, v) => drop(memory.devices.insert(rest.into(), v)),
                    (_, Value::Object(v)) => drop(memory.storage.insert(rest.into(), v)),
                    _ => {}
                }
            }
        }
    }

    fn remove(&self, key: &str) {
        match &self.store {
            Some(store) => {
                if let Err(e) = store.remove_setting(key) {
                    tracing::error!("cannot forget {key}: {e}");
                }
            }
            None => {
                let mut memory = self.memory.lock().unwrap();
                let (kind, rest) = key.split_at(key.find(':').map_or(0, |i| i + 1));
                match kind {
                    ORIGIN_SETTING => drop(memory.origins.remove(rest)),
                    DOMAIN_CLAIM_SETTING => drop(memory.claims.remove(rest)),
                    DEVICES_SETTING => drop(memory.devices.remove(rest)),
                    _ => drop(memory.storage.remove(rest)),
                }
            }
        }
    }

    /// The origin of `server`'s views: the domain it asks for when that is valid and no other
    /// server's, else its own random one (made now the first time).
    pub fn origin(&self, server: &str, requested_domain: Option<&str>) -> String {
        if let Some(domain) = requested_domain.map(str::to_ascii_lowercase)
            && is_valid_domain(&domain)
        {
            let claim = format!("{DOMAIN_CLAIM_SETTING}{domain}");
            match self.get(&claim) {
                Some(Value::String(owner)) if owner == server => return domain,
                Some(_) => {
                    tracing::warn!(
                        server,
                        domain,
                        "the view origin asked for is another server's; not used"
                    )
                }
                None => {
                    self.set(&claim, Value::String(server.to_string()));
                    return domain;
                }
            }
        }
        let key = format!("{ORIGIN_SETTING}{server}");
        if let Some(Value::String(origin)) = self.get(&key) {
            return origin;
        }
        let origin = random_origin();
        self.set(&key, Value::String(origin.clone()));
        origin
    }

    /// Whether `origin` is still `server`'s (not cleared since, nor another server's).
    pub fn is_current(&self, server: &str, origin: &str) -> bool {
        let key = format!("{ORIGIN_SETTING}{server}");
        matches!(self.get(&key), Some(Value::String(own)) if own == origin)
            || matches!(
                self.get(&format!("{DOMAIN_CLAIM_SETTING}{origin}")),
                Some(Value::String(owner)) if owner == server
            )
    }

    /// What `origin`'s `localStorage` held when last reported.
    pub fn storage(&self, origin: &str) -> Map<String, Value> {
        match self.get(&format!("{STORAGE_SETTING}{origin}")) {
            Some(Value::Object(kept)) => kept,
            _ => Map::new(),
        }
    }

    /// Keeps `origin`'s `localStorage` for the next start.
    pub fn save_storage(&self, origin: &str, local_storage: Map<String, Value>) {
        let key = format!("{STORAGE_SETTING}{origin}");
        if local_storage.is_empty() {
            self.remove(&key);
        } else {
            self.set(&key, Value::Object(local_storage));
        }
    }

    /// The devices `server`'s views may use.
    pub fn devices(&self, server: &str) -> Permissions {
        self.get(&format!("{DEVICES_SETTING}{server}"))
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    /// Lets `server`'s views use `devices` too (what was granted before stays).
    pub fn grant_devices(&self, server: &str, devices: Permissions) {
        let all = self.devices(server).or(&devices);
        match serde_json::to_value(all) {
            Ok(value) => self.set(&format!("{DEVICES_SETTING}{server}"), value),
            Err(e) => tracing::error!("cannot keep the devices of {server}'s views: {e}"),
        }
    }

    /// Forgets `server`'s view data: what was kept, its origin (the next view gets a new
    /// one) and the devices its views were let use. A domain it asked for stays its own, with
    /// nothing kept.
    pub fn clear(&self, server: &str) {
        self.remove(&format!("{DEVICES_SETTING}{server}"));
        let key = format!("{ORIGIN_SETTING}{server}");
        if let Some(Value::String(origin)) = self.get(&key) {
            self.remove(&format!("{STORAGE_SETTING}{origin}"));
        }
        self.remove(&key);
        for domain in self.claimed_domains(server) {
            self.remove(&format!("{STORAGE_SETTING}{domain}"));
        }
    }

    /// Forgets everything of `server` (it was removed), its domain claims included.
    pub fn forget(&self, server: &str) {
        self.clear(server);
        for domain in self.claimed_domains(server) {
            self.remove(&format!("{DOMAIN_CLAIM_SETTING}{domain}"));
        }
    }

    fn claimed_domains(&self, server: &str) -> Vec<String> {
        match &self.store {
            Some(store) => store
                .settings_with_prefix(DOMAIN_CLAIM_SETTING)
                .unwrap_or_default()
                .into_iter()
                .filter(|(_, owner)| owner.as_str() == Some(server))
                .filter_map(|(key, _)| key.strip_prefix(DOMAIN_CLAIM_SETTING).map(str::to_string))
                .collect(),
            None => self
                .memory
                .lock()
                .unwrap()
                .claims
                .iter()
                .filter(|(_, owner)| owner.as_str() == server)
                .map(|(domain, _)| domain.clone())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both() -> Vec<(ViewOrigins, tempfile::TempDir)> {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("p.db")).unwrap();
        vec![
            (ViewOrigins::new(Some(store)), dir),
            (ViewOrigins::new(None), tempfile::tempdir().unwrap()),
        ]
    }

    #[test]
    fn each_server_has_its_own_lasting_origin() {
        for (origins, _dir) in both() {
            let a = origins.origin("a", None);
            let b = origins.origin("b", None);
            assert_ne!(a, b);
            assert_eq!(a.len(), 32);
            assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
            assert_eq!(origins.origin("a", None), a, "the same next time");
        }
        // Kept in the profile: the same after a restart.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        let first = ViewOrigins::new(Some(Store::open(&path).unwrap())).origin("a", None);
        let again = ViewOrigins::new(Some(Store::open(&path).unwrap())).origin("a", None);
        assert_eq!(first, again);
    }

    #[test]
    fn a_requested_domain_is_given_once_and_only_when_valid() {
        for (origins, _dir) in both() {
            assert_eq!(origins.origin("a", Some("Widgets.Example.com")), "widgets.example.com");
            assert_eq!(origins.origin("a", Some("widgets.example.com")), "widgets.example.com");
            let b = origins.origin("b", Some("widgets.example.com"));
            assert_ne!(b, "widgets.example.com", "another server's domain is not given");
            for bad in [
                "localhost",
                "x.localhost",
                "mcpview.x.com",
                "nodot",
                "-a.com",
                "a_b.com",
                "a..com",
                "",
            ] {
                assert_ne!(origins.origin("c", Some(bad)), bad, "{bad}");
            }
            // Removed, the server's claim goes: another may have the domain.
            origins.forget("a");
            assert_eq!(origins.origin("b", Some("widgets.example.com")), "widgets.example.com");
        }
    }

    #[test]
    fn devices_are_granted_per_server_kept_and_forgotten_with_its_view_data() {
        let camera = Permissions {
            camera: true,
            ..Permissions::default()
        };
        let clipboard = Permissions {
            clipboard_write: true,
            ..Permissions::default()
        };
        for (origins, _dir) in both() {
            assert!(origins.devices("a").is_empty(), "nothing until the person allows it");
            origins.grant_devices("a", camera);
            origins.grant_devices("a", clipboard);
            assert_eq!(origins.devices("a"), camera.or(&clipboard), "a grant adds to the last");
            assert!(origins.devices("b").is_empty(), "never another server's");
            origins.clear("a");
            assert!(origins.devices("a").is_empty(), "cleared with the server's view data");
            origins.grant_devices("b", camera);
            origins.forget("b");
            assert!(origins.devices("b").is_empty(), "forgotten with the server");
        }
        // Kept in the profile.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        ViewOrigins::new(Some(Store::open(&path).unwrap())).grant_devices("a", camera);
        assert_eq!(ViewOrigins::new(Some(Store::open(&path).unwrap())).devices("a"), camera);
    }

    #[test]
    fn storage_is_kept_per_origin_and_cleared_with_a_new_origin() {
        for (origins, _dir) in both() {
            let a = origins.origin("a", None);
            let b = origins.origin("b", None);
            let kept = json!({"k": "v"}).as_object().unwrap().clone();
            origins.save_storage(&a, kept.clone());
            assert_eq!(origins.storage(&a), kept);
            assert!(origins.storage(&b).is_empty());
            assert!(origins.is_current("a", &a) && !origins.is_current("b", &a));
            origins.clear("a");
            assert!(origins.storage(&a).is_empty());
            assert!(
                !origins.is_current("a", &a),
                "a cleared origin is no longer the server's"
            );
            let new = origins.origin("a", None);
            assert_ne!(new, a, "cleared: a new origin");
            origins.save_storage(&new, kept.clone());
            origins.forget("a");
            assert!(origins.storage(&new).is_empty());
            assert_eq!(origins.origin("b", None), b, "others untouched");
        }
    }
}
