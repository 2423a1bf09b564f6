//! API keys: the provider's environment variable, else the OS keyring. There is no key file:
//! with no keyring the user is told so and pointed at the environment variable.

use porthole_secrets::{SecretError, SecretStore};

use crate::providers::{ProviderKind, key_env_var};

/// Where a key came from (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env(&'static str),
    Keyring,
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Env(var) => write!(f, "the environment variable {var}"),
            KeySource::Keyring => write!(f, "the OS keyring"),
        }
    }
}

/// The keyring entry (of service "Porthole") that holds a provider's key.
pub fn keyring_entry(kind: ProviderKind) -> String {
    format!("api-key:{kind}")
}

/// The key to use for `kind`, and where it came from. `keyring` is consulted only when the
/// environment variable is unset or empty; a keyring that cannot be read is an error (with the
/// reason), not a silent "no key".
pub fn find_key(
    kind: ProviderKind,
    env: impl Fn(&str) -> Option<String>,
    keyring: Option<&dyn SecretStore>,
) -> Result<Option<(String, KeySource)>, SecretError> {
    let var = key_env_var(kind);
    if let Some(value) = env(var).filter(|v| !v.trim().is_empty()) {
        return Ok(Some((value.trim().to_string(), KeySource::Env(var))));
    }
    match keyring {
        None => Ok(None),
        Some(store) => Ok(store
            .get(&keyring_entry(kind))?
            .filter(|v| !v.is_empty())
            .map(|v| (v, KeySource::Keyring))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porthole_secrets::MemorySecrets;

    #[test]
    fn the_environment_wins_then_the_keyring() {
        let keyring = MemorySecrets::default();
        keyring
            .set(&keyring_entry(ProviderKind::OpenAi), "sk-from-keyring")
            .unwrap();
        let env_set = |var: &str| (var == "OPENAI_API_KEY").then(|| "sk-from-env\n".to_string());
        let found = find_key(ProviderKind::OpenAi, env_set, Some(&keyring)).unwrap();
        assert_eq!(found, Some(("sk-from-env".into(), KeySource::Env("OPENAI_API_KEY"))));
        let found = find_key(ProviderKind::OpenAi, |_| Some(" ".into()), Some(&keyring)).unwrap();
        assert_eq!(found, Some(("sk-from-keyring".into(), KeySource::Keyring)));
        assert_eq!(
            find_key(ProviderKind::Anthropic, |_| None, Some(&keyring)).unwrap(),
            None,
            "each provider has its own entry"
        );
        assert_eq!(find_key(ProviderKind::OpenAi, |_| None, None).unwrap(), None);
    }
}
