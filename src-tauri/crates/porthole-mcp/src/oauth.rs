//! OAuth 2.1 for remote MCP servers, on rmcp's `auth` support: protected-resource and
//! authorization-server metadata discovery, client registration (pre-registered, client-ID
//! metadata document, or dynamic registration), authorization code with PKCE, token refresh, and
//! scope step-up. Tokens are kept per server URL in a [`TokenStore`].
//!
//! Who brings the user to the authorization page is an [`Authorizer`]: the desktop app uses the
//! system browser and a loopback redirect ([`SystemBrowser`]); tests and the conformance client
//! use [`FollowRedirect`], which fetches the page itself, as an auto-approving server allows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
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

fn open_in_browser(url: &str) -> Result<(), String> {
    if !url.starts_with("https://") && !url.starts_with("http://") {
        return Err(format!("refusing to open {url:?}: not an http(s) URL"));
    }
    #[cfg(target_os = "linux")]
    let mut cmd = std::process::Command::new("xdg-open");
    #[cfg(target_os = "macos")]
    let mut cmd = std::process::Command::new("open");
    #[cfg(target_os = "windows")]
    let mut cmd = {
        let mut c = std::process::Command::new("rundll32");
        c.arg("url.dll,FileProtocolHandler");
        c
    };
    cmd.arg(url)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot open the browser: {e}"))
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
            let _ = stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
            continue;
        }
        let body = "<!doctype html><title>Porthole</title><p>Signed in. You can close this tab and return to Porthole.";
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
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

/// Tokens in memory, for this process only.
#[derive(Clone, Default)]
pub struct MemoryTokens(Arc<Mutex<HashMap<String, StoredCredentials>>>);

struct MemoryEntry {
    all: MemoryTokens,
    url: String,
}

#[async_trait::async_trait]
impl CredentialStore for MemoryEntry {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.all.0.lock().unwrap().get(&self.url).cloned())
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.all.0.lock().unwrap().insert(self.url.clone(), credentials);
        Ok(())
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.all.0.lock().unwrap().remove(&self.url);
        Ok(())
    }
}

impl TokenStore for MemoryTokens {
    fn credential_store(&self, server_url: &str) -> Box<dyn CredentialStore> {
        Box::new(MemoryEntry {
            all: self.clone(),
            url: server_url.to_string(),
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
