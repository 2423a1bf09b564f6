//! Secrets — OAuth tokens now, API keys next — kept in the OS keyring (Secret Service on Linux,
//! the Keychain on macOS, the Credential Manager on Windows), behind [`SecretStore`].
//!
//! There is deliberately no file-backed store: when no keyring is available the caller gets
//! [`SecretError::Unavailable`] and decides what to tell the user (Porthole keeps such secrets in
//! memory for the session and says so); a secret is never written to disk in plain text.

pub mod redact;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What went wrong with a secret, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("no OS keyring is available ({0}); secrets are kept in memory for this session only")]
    Unavailable(String),
    #[error("the OS keyring refused: {0}")]
    Refused(String),
}

/// A place for secrets, by key. Calls may block (a keyring may ask the user to unlock it):
/// call them off the async runtime, e.g. with `spawn_blocking`.
pub trait SecretStore: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError>;
    fn delete(&self, key: &str) -> Result<(), SecretError>;
    /// Why what is set here lasts only for this process (there is no OS keyring), or `None`
    /// when the OS keeps it.
    fn session_only(&self) -> Option<String> {
        None
    }
}

/// The OS keyring. Every secret is an entry of `service` (normally "Porthole") whose user is
/// the key.
pub struct OsKeyring {
    store: Arc<keyring_core::CredentialStore>,
    service: String,
}

impl OsKeyring {
    /// Opens the platform's keyring, or says why there is none.
    pub fn open(service: &str) -> Result<OsKeyring, SecretError> {
        let store = platform_store()?;
        let keyring = OsKeyring {
            store,
            service: service.to_string(),
        };
        // Creating the store does not talk to the daemon; one read does, and tells a missing or
        // unusable Secret Service apart from an empty keyring.
        match keyring.get("porthole:probe") {
            Ok(_) => Ok(keyring),
            Err(SecretError::Refused(e)) | Err(SecretError::Unavailable(e)) => Err(SecretError::Unavailable(e)),
        }
    }

    fn entry(&self, key: &str) -> Result<keyring_core::Entry, SecretError> {
        keyring_core::Entry::new_in_store(&self.store, &self.service, key).map_err(classify)
    }
}

/// Whether the keyring new secrets go to (the Secret Service's default collection) is locked:
/// reading a secret then makes the desktop ask for its password. An error says why it cannot be
/// told (no Secret Service, no default collection yet).
#[cfg(target_os = "linux")]
pub fn default_collection_locked() -> Result<bool, String> {
    use dbus::blocking::stdintf::org_freedesktop_dbus::Properties;
    let connection = dbus::blocking::Connection::new_session().map_err(|e| e.to_string())?;
    let collection = connection.with_proxy(
        "org.freedesktop.secrets",
        "/org/freedesktop/secrets/aliases/default",
        std::time::Duration::from_secs(2),
    );
    collection
        .get::<bool>("org.freedesktop.Secret.Collection", "Locked")
        .map_err(|e| e.message().unwrap_or("no default keyring").to_string())
}

/// Elsewhere the OS unlocks its keyring with the session.
#[cfg(not(target_os = "linux"))]
pub fn default_collection_locked() -> Result<bool, String> {
    Ok(false)
}

#[cfg(target_os = "linux")]
fn platform_store() -> Result<Arc<keyring_core::CredentialStore>, SecretError> {
    let store = dbus_secret_service_keyring_store::Store::new().map_err(|e| SecretError::Unavailable(e.to_string()))?;
    Ok(store)
}

#[cfg(target_os = "macos")]
fn platform_store() -> Result<Arc<keyring_core::CredentialStore>, SecretError> {
    let store =
        apple_native_keyring_store::keychain::Store::new().map_err(|e| SecretError::Unavailable(e.to_string()))?;
    Ok(store)
}

#[cfg(target_os = "windows")]
fn platform_store() -> Result<Arc<keyring_core::CredentialStore>, SecretError> {
    let store = windows_native_keyring_store::Store::new().map_err(|e| SecretError::Unavailable(e.to_string()))?;
    Ok(store)
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
fn platform_store() -> Result<Arc<keyring_core::CredentialStore>, SecretError> {
    Err(SecretError::Unavailable("no keyring support on this platform".into()))
}

fn classify(e: keyring_core::Error) -> SecretError {
    match e {
        keyring_core::Error::NoStorageAccess(inner) => SecretError::Unavailable(inner.to_string()),
        other => SecretError::Refused(other.to_string()),
    }
}

impl SecretStore for OsKeyring {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        match self.entry(key)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(classify(e)),
        }
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.entry(key)?.set_password(value).map_err(classify)
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
            Err(e) => Err(classify(e)),
        }
    }
}

/// Secrets in memory, for this process only.
#[derive(Default)]
pub struct MemorySecrets(Mutex<HashMap<String, String>>);

impl SecretStore for MemorySecrets {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        Ok(self.0.lock().unwrap().get(key).cloned())
    }
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().insert(key.to_string(), value.to_string());
        Ok(())
    }
    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().remove(key);
        Ok(())
    }
    fn session_only(&self) -> Option<String> {
        Some("secrets are kept in memory for this session only".into())
    }
}

/// The OS keyring, opened on first use (so start-up never waits on D-Bus); if there is none,
/// memory for this session, with a warning in the log.
pub struct LazyKeyring {
    service: String,
    /// The store, and why it is memory when there is no OS keyring.
    opened: std::sync::OnceLock<(Arc<dyn SecretStore>, Option<String>)>,
}

impl LazyKeyring {
    pub fn new(service: &str) -> LazyKeyring {
        LazyKeyring {
            service: service.to_string(),
            opened: std::sync::OnceLock::new(),
        }
    }

    fn store(&self) -> &Arc<dyn SecretStore> {
        &self
            .opened
            .get_or_init(|| {
                let (store, problem) = open_or_memory(&self.service);
                (store, problem.map(|e| e.to_string()))
            })
            .0
    }
}

impl SecretStore for LazyKeyring {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        self.store().get(key)
    }
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.store().set(key, value)
    }
    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.store().delete(key)
    }
    fn session_only(&self) -> Option<String> {
        self.store();
        self.opened.get().and_then(|(_, problem)| problem.clone())
    }
}

/// The OS keyring if there is one; otherwise memory, with the reason (to show the user).
pub fn open_or_memory(service: &str) -> (Arc<dyn SecretStore>, Option<SecretError>) {
    match OsKeyring::open(service) {
        Ok(keyring) => (Arc::new(keyring), None),
        Err(e) => {
            tracing::warn!("{e}");
            (Arc::new(MemorySecrets::default()), Some(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(store: &dyn SecretStore, key: &str) {
        assert_eq!(store.get(key).unwrap(), None);
        store.set(key, "s3cret value ✓").unwrap();
        assert_eq!(store.get(key).unwrap().as_deref(), Some("s3cret value ✓"));
        store.set(key, "rotated").unwrap();
        assert_eq!(store.get(key).unwrap().as_deref(), Some("rotated"));
        store.delete(key).unwrap();
        assert_eq!(store.get(key).unwrap(), None);
        store.delete(key).unwrap();
    }

    #[test]
    fn memory_store_round_trip() {
        round_trip(&MemorySecrets::default(), "k");
    }

    #[test]
    fn memory_says_it_lasts_for_the_session_only() {
        let reason = MemorySecrets::default()
            .session_only()
            .expect("memory is not the OS keyring");
        assert!(reason.contains("this session only"), "{reason}");
    }

    /// Needs a real Secret Service (`.ci/test` runs it under `dbus-run-session` with an unlocked
    /// gnome-keyring): `cargo test -p porthole-secrets -- --ignored`.
    #[test]
    #[ignore = "needs a Secret Service; run by .ci/test inside a D-Bus session with gnome-keyring"]
    fn os_keyring_round_trip() {
        let service = format!("porthole-test-{}", std::process::id());
        let keyring = OsKeyring::open(&service).expect("a Secret Service is running and unlocked");
        round_trip(&keyring, "oauth:https://mcp.example.com/mcp");
        // Another process sees what this one stored: it is really in the keyring.
        keyring.set("shared", "visible").unwrap();
        let again = OsKeyring::open(&service).unwrap();
        assert_eq!(again.get("shared").unwrap().as_deref(), Some("visible"));
        again.delete("shared").unwrap();
    }
}
