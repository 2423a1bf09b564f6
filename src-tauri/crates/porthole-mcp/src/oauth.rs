//! OAuth 2.1 for remote MCP servers, on rmcp's `auth` support: protected-resource and
//! authorization-server metadata discovery, client registration (pre-registered, client-ID
//! metadata document, or dynamic registration), authorization code with PKCE, token refresh, and
//! scope step-up. Tokens are kept per server URL in a [`TokenStore`].
//!
//! Who brings the user to the authorization page is an [`Authorizer`]: the desktop app uses the
//! system browser and a loopback redirect ([`SystemBrowser`]); tests and the conformance client
//! use [`FollowRedirect`], which fetches the page itself, as an auto-approving server allows.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use porthole_secrets::SecretStore;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore, StoredCredentials,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One authorization in progress: the redirect URI to register, and how to finish.
pub struct Authorization {
    pub redirect_uri: String,
    /// Given the authorization URL, brings the user there and returns the full URL the
    /// authorization server redirected back to (with `code` and `state`).
    pub finish: Box<dyn FnOnce(String) -> BoxFuture<'static, Result<String, String>> + Send>,
}

pub trait Authorizer: Send + Sync {
    fn start(&self) -> BoxFuture<'static, Result<Authorization, String>>;
}

/// Opens the authorization page in the system browser and waits (up to five minutes) for the
/// redirect on a loopback port.
pub struct SystemBrowser;

impl Authorizer for SystemBrowser {
    fn start(&self) -> BoxFuture<'static, Result<Authorization, String>> {
        Box::pin(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| format!("cannot open a loopback port for the OAuth redirect: {e}"))?;
            let port = listener.local_addr().map_err(|e| e.to_string())?.port();
            let redirect_uri = format!("http://127.0.0.1:{port}/callback");
            let finish = move |url: String| -> BoxFuture<'static, Result<String, String>> {
                Box::pin(async move {
                    open_in_browser(&url)?;
                    tokio::time::timeout(Duration::from_secs(300), wait_for_redirect(listener, port))
                        .await
                        .map_err(|_| "no answer from the browser within 5 minutes".to_string())?
                })
            };
            Ok(Authorization {
                redirect_uri,
                finish: Box::new(finish),
            })
        })
    }
}

/// Opens `url` in the user's browser: `$BROWSER` if set (the usual convention, and how tests
/// stand in for a person), else the platform's opener.
pub fn open_in_browser(url: &str) -> Result<(), String> {
    if !url.starts_with("https://") && !url.starts_with("http://") {
        return Err(format!("refusing to open {url:?}: not an http(s) URL"));
    }
    let browser = std::env::var("BROWSER")
        .ok()
        .and_then(|b| b.split(':').next().map(str::to_string));
    let mut cmd = match browser.filter(|b| !b.is_empty()) {
        Some(browser) => std::process::Command::new(browser),
        None => platform_opener(),
    };
    cmd.arg(url)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot open the browser: {e}"))
}

#[cfg(target_os = "macos")]
fn platform_opener() -> std::process::Command {
    std::process::Command::new("open")
}

#[cfg(target_os = "windows")]
fn platform_opener() -> std::process::Command {
    let mut c = std::process::Command::new("rundll32");
    c.arg("url.dll,FileProtocolHandler");
    c
}

#[cfg(not(any(target_os = "macos", target_os = "windows")))]
fn platform_opener() -> std::process::Command {
    std::process::Command::new("xdg-open")
}

/// Accepts connections on the loopback listener until one asks for `/callback`, answers it with
/// a short page, and returns the full redirect URL.
async fn wait_for_redirect(listener: tokio::net::TcpListener, port: u16) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 8192];
        let n = stream.read(&mut buf).await.unwrap_or(0);
        let request = String::from_utf8_lossy(&buf[..n]);
        let target = request
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("");
        if !target.starts_with("/callback") {
            // Some other request to the loopback port (a favicon, say): a browser that hung up
            // needs no answer, and we keep waiting for the callback.
            stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await
                .ok();
            continue;
        }
        let body = "<!doctype html><title>Porthole</title><p>Signed in. You can close this tab and return to Porthole.";
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        // The redirect URL is what signs in; the page is only a courtesy to the browser tab.
        if let Err(e) = stream.write_all(response.as_bytes()).await {
            tracing::debug!("sign-in page not shown to the browser: {e}");
        }
        return Ok(format!("http://127.0.0.1:{port}{target}"));
    }
}

/// Fetches the authorization URL itself and takes the redirect it answers with: for
/// authorization servers that approve without a person (tests, the conformance suite).
pub struct FollowRedirect;

impl Authorizer for FollowRedirect {
    fn start(&self) -> BoxFuture<'static, Result<Authorization, String>> {
        Box::pin(async {
            let finish = |url: String| -> BoxFuture<'static, Result<String, String>> {
                Box::pin(async move {
                    let client = reqwest::Client::builder()
                        .redirect(reqwest::redirect::Policy::none())
                        .build()
                        .map_err(|e| e.to_string())?;
                    let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
                    response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|l| l.to_str().ok())
                        .map(str::to_string)
                        .ok_or_else(|| {
                            format!(
                                "the authorization page answered {} without a redirect",
                                response.status()
                            )
                        })
                })
            };
            Ok(Authorization {
                redirect_uri: "http://127.0.0.1:1/callback".into(),
                finish: Box::new(finish),
            })
        })
    }
}

/// Where tokens live, per server URL.
pub trait TokenStore: Send + Sync {
    fn credential_store(&self, server_url: &str) -> Box<dyn CredentialStore>;
}

/// Tokens in a [`SecretStore`] (the OS keyring), one entry per server URL: `oauth:<url>`.
/// Keyring calls run on a blocking thread with a time limit, since a locked keyring can hang.
#[derive(Clone)]
pub struct KeyringTokens(pub Arc<dyn SecretStore>);

struct KeyringEntry {
    secrets: Arc<dyn SecretStore>,
    key: String,
}

impl KeyringEntry {
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn SecretStore, &str) -> Result<T, porthole_secrets::SecretError> + Send + 'static,
    ) -> Result<T, AuthError> {
        let (secrets, key) = (self.secrets.clone(), self.key.clone());
        let task = tokio::task::spawn_blocking(move || f(secrets.as_ref(), &key));
        match tokio::time::timeout(Duration::from_secs(10), task).await {
            Ok(Ok(result)) => result.map_err(|e| AuthError::InternalError(e.to_string())),
            Ok(Err(e)) => Err(AuthError::InternalError(e.to_string())),
            Err(_) => Err(AuthError::InternalError(
                "the OS keyring did not answer within 10 s (is it locked?)".into(),
            )),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeyringEntry {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let json = self.run(|s, k| s.get(k)).await?;
        Ok(json.and_then(|j| match serde_json::from_str(&j) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!("stored OAuth tokens are unreadable and are ignored: {e}");
                None
            }
        }))
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json = serde_json::to_string(&credentials).map_err(|e| AuthError::InternalError(e.to_string()))?;
        self.run(move |s, k| s.set(k, &json)).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.run(|s, k| s.delete(k)).await
    }
}

impl TokenStore for KeyringTokens {
    fn credential_store(&self, server_url: &str) -> Box<dyn CredentialStore> {
        Box::new(KeyringEntry {
            secrets: self.0.clone(),
            key: format!("oauth:{server_url}"),
        })
    }
}

struct BoxedStore(Box<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for BoxedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
}

/// How a connection signs in: who brings the user to the page, and where tokens are kept.
#[derive(Clone)]
pub struct OAuth {
    pub authorizer: Arc<dyn Authorizer>,
    pub tokens: Arc<dyn TokenStore>,
    /// A client registered in advance (`oauth.clientId` / `clientSecret` in the config).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A client-ID metadata document URL, for servers that support CIMD.
    pub client_metadata_url: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl OAuth {
    pub fn new(authorizer: Arc<dyn Authorizer>, tokens: Arc<dyn TokenStore>) -> OAuth {
        OAuth {
            authorizer,
            tokens,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
        }
    }

    async fn manager(&self, server_url: &str) -> Result<AuthorizationManager, String> {
        let mut manager = AuthorizationManager::new(server_url)
            .await
            .map_err(|e| format!("OAuth: {e}"))?;
        manager.set_credential_store(BoxedStore(self.tokens.credential_store(server_url)));
        Ok(manager)
    }

    /// An authorization manager with tokens from the store, if it has any for this server.
    pub async fn stored(&self, server_url: &str) -> Result<Option<AuthorizationManager>, String> {
        let mut manager = self.manager(server_url).await?;
        match manager.initialize_from_store().await {
            Ok(true) => Ok(Some(manager)),
            Ok(false) => Ok(None),
            Err(e) => Err(format!("OAuth: stored tokens unusable: {e}")),
        }
    }

    /// Runs the whole sign-in for `server_url`, answering the server's `WWW-Authenticate`
    /// challenge (which may name the resource metadata and the scopes needed).
    pub async fn sign_in(&self, server_url: &str, challenge: Option<&str>) -> Result<AuthorizationManager, String> {
        let mut manager = self.manager(server_url).await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| format!("OAuth discovery: {e}"))?;
        manager.set_metadata(resolution.metadata);
        let authorization = self.authorizer.start().await?;
        let mut request = AuthorizationRequest::new(authorization.redirect_uri).with_client_name("Porthole");
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        if let Some(id) = &self.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &self.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(url) = &self.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| format!("OAuth: {e}"))?;
        let redirected = (authorization.finish)(session.get_authorization_url().to_string()).await?;
        session
            .handle_callback_url(&redirected)
            .await
            .map_err(|e| format!("OAuth: token exchange failed: {e}"))?;
        Ok(session.auth_manager)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porthole_secrets::MemorySecrets;

    #[tokio::test]
    async fn keyring_tokens_keep_every_field_per_server_url() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemorySecrets::default());
        let tokens = KeyringTokens(secrets.clone());
        let a = tokens.credential_store("https://a.example/mcp");
        let b = tokens.credential_store("https://b.example/mcp");
        assert!(a.load().await.unwrap().is_none());
        let creds = StoredCredentials::new(
            "client-1".into(),
            None,
            vec!["read".into(), "write".into()],
            Some(1_764_000_000),
        )
        .with_issuer(Some("https://auth.a.example".into()));
        a.save(creds).await.unwrap();
        let loaded = a.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.granted_scopes, ["read", "write"]);
        assert_eq!(
            loaded.token_received_at,
            Some(1_764_000_000),
            "refresh needs the time tokens were received"
        );
        assert_eq!(loaded.issuer.as_deref(), Some("https://auth.a.example"));
        assert!(b.load().await.unwrap().is_none(), "tokens are per server URL");
        assert!(secrets.get("oauth:https://a.example/mcp").unwrap().is_some());
        a.clear().await.unwrap();
        assert!(a.load().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn unreadable_stored_tokens_are_ignored_not_fatal() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemorySecrets::default());
        secrets.set("oauth:https://a.example/mcp", "{not json").unwrap();
        let store = KeyringTokens(secrets).credential_store("https://a.example/mcp");
        assert!(store.load().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_loopback_redirect_is_caught_and_answered() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiter = tokio::spawn(wait_for_redirect(listener, port));
        let browser = async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            // A stray request first (favicon), then the redirect.
            for path in ["/favicon.ico", "/callback?code=abc&state=xyz"] {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut answer = String::new();
                s.read_to_string(&mut answer).await.unwrap();
                if path.starts_with("/callback") {
                    assert!(
                        answer.starts_with("HTTP/1.1 200") && answer.contains("Signed in"),
                        "{answer}"
                    );
                } else {
                    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
                }
            }
        };
        browser.await;
        let url = waiter.await.unwrap().unwrap();
        assert_eq!(url, format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz"));
    }

    #[test]
    fn only_http_urls_are_opened() {
        assert!(open_in_browser("file:///etc/passwd").is_err());
        assert!(open_in_browser("javascript:alert(1)").is_err());
    }
}
