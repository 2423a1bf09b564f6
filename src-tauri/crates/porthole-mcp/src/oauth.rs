//! OAuth 2.1 for remote MCP servers, on rmcp's `auth` support: protected-resource and
//! authorization-server metadata discovery, client registration (pre-registered, client-ID
//! metadata document, or dynamic registration), authorization code with PKCE, token refresh, and
//! scope step-up. Tokens are kept per server URL in a [`TokenStore`]. A server of the
//! 2025-03-26 specification whose metadata names an issuer under a path of its own origin is
//! signed in to as well, which rmcp's RFC 8414 issuer check alone refuses (`legacy_metadata`).
//!
//! Who brings the user to the authorization page is an [`Authorizer`]: the desktop app uses the
//! system browser and a loopback redirect ([`SystemBrowser`]); tests and the conformance client
//! use [`FollowRedirect`], which fetches the page itself, as an auto-approving server allows.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use porthole_secrets::SecretStore;
use reqwest::Url;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
    CredentialStore, StoredCredentials,
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
    let mut child = cmd
        .arg(url)
        .spawn()
        .map_err(|e| format!("cannot open the browser: {e}"))?;
    // Waited for on a thread of its own, so an opener that exits is not left a zombie for as
    // long as the app runs.
    std::thread::spawn(move || child.wait());
    Ok(())
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
    /// A client-ID metadata document URL, for servers that support CIMD: an `https://` URL
    /// where a JSON document describing Porthole (its `client_id` being this very URL) is
    /// hosted. See [`check_client_metadata_url`] and [`OAuth::registration_for`].
    pub client_metadata_url: Option<String>,
}

/// How a sign-in identifies Porthole to an authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientRegistration {
    /// A client registered in advance: its `client_id` (and secret, if any).
    Preregistered(String),
    /// A client-ID metadata document (CIMD): its URL is the `client_id`, and nothing is
    /// registered.
    MetadataDocument(String),
    /// Dynamic client registration (RFC 7591) at the server's `registration_endpoint`.
    Dynamic,
}

/// Whether `url` can be a client-ID metadata document URL, and so a `client_id`: `https`, with
/// a host and a path other than `/`, and no credentials, fragment, or `.`/`..` segments (the
/// rules of draft-ietf-oauth-client-id-metadata-document and of rmcp, which otherwise fails the
/// whole sign-in). For a setting to check what it is given.
pub fn check_client_metadata_url(url: &str) -> Result<(), String> {
    let parsed = Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    if parsed.scheme() != "https" || parsed.host_str().is_none() {
        return Err(format!("{url:?} is not an https:// URL"));
    }
    if parsed.path() == "/" {
        return Err(format!(
            "{url:?} has no path: the document needs one (/client.json, say)"
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("{url:?} has a user name or password in it"));
    }
    if parsed.fragment().is_some() {
        return Err(format!("{url:?} has a #fragment"));
    }
    // The URL parser resolves dot segments away, but the client_id is the text as written.
    let path = url.split(['?', '#']).next().unwrap_or(url);
    if path.split('/').skip(3).any(|segment| segment == "." || segment == "..") {
        return Err(format!("{url:?} has a '.' or '..' path segment"));
    }
    Ok(())
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

    /// How to identify Porthole to the authorization server `metadata` describes: a client
    /// registered in advance if there is one, else the client-ID metadata document URL if the
    /// server advertises `client_id_metadata_document_supported` and the URL is usable, else
    /// dynamic registration. (The order of the MCP specification, and of rmcp's
    /// `AuthorizationSession`, which is only given what is chosen here.)
    pub fn registration_for(&self, metadata: &AuthorizationMetadata) -> ClientRegistration {
        if let Some(id) = &self.client_id {
            return ClientRegistration::Preregistered(id.clone());
        }
        let supports_cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        match &self.client_metadata_url {
            Some(url) if supports_cimd => match check_client_metadata_url(url) {
                Ok(()) => ClientRegistration::MetadataDocument(url.clone()),
                Err(e) => {
                    tracing::warn!("not using the client metadata document URL, registering instead: {e}");
                    ClientRegistration::Dynamic
                }
            },
            _ => ClientRegistration::Dynamic,
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
        let mut initialized = manager.initialize_from_store().await;
        // With stored tokens rmcp discovers the metadata again, and a 2025-03-26 server's is
        // only usable through the same fallback as at sign-in.
        if let Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) = &initialized
            && let Some(metadata) = legacy_metadata(server_url, None, expected_issuer, received_issuer).await
        {
            manager.set_metadata(metadata);
            initialized = manager.initialize_from_store().await;
        }
        match initialized {
            Ok(true) => Ok(Some(manager)),
            Ok(false) => Ok(None),
            Err(e) => Err(format!("OAuth: stored tokens unusable: {e}")),
        }
    }

    /// rmcp's metadata discovery, with the fallback of [`legacy_metadata`] for a 2025-03-26
    /// server whose metadata names an issuer under its origin.
    async fn discover(
        manager: &AuthorizationManager,
        server_url: &str,
        challenge: Option<&str>,
    ) -> Result<AuthorizationMetadata, String> {
        let error = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => return Ok(resolution.metadata),
            Err(error) => error,
        };
        if let AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } = &error
            && let Some(metadata) = legacy_metadata(server_url, challenge, expected_issuer, received_issuer).await
        {
            return Ok(metadata);
        }
        Err(format!("OAuth discovery: {error}"))
    }

    /// Runs the whole sign-in for `server_url`, answering the server's `WWW-Authenticate`
    /// challenge (which may name the resource metadata and the scopes needed).
    pub async fn sign_in(&self, server_url: &str, challenge: Option<&str>) -> Result<AuthorizationManager, String> {
        let mut manager = self.manager(server_url).await?;
        let metadata = Self::discover(&manager, server_url, challenge).await?;
        let registration = self.registration_for(&metadata);
        tracing::debug!(?registration, "OAuth client for {server_url}");
        manager.set_metadata(metadata);
        let authorization = self.authorizer.start().await?;
        let mut request = AuthorizationRequest::new(authorization.redirect_uri).with_client_name("Porthole");
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        match registration {
            ClientRegistration::Preregistered(id) => {
                request = request.with_preregistered_client(id);
                if let Some(secret) = &self.client_secret {
                    request = request.with_client_secret(secret);
                }
            }
            ClientRegistration::MetadataDocument(url) => request = request.with_client_metadata_url(url),
            ClientRegistration::Dynamic => {}
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

/// The authorization server metadata of a server of the 2025-03-26 MCP specification, which
/// publishes no protected-resource metadata (RFC 9728): it is at
/// `/.well-known/oauth-authorization-server` on the MCP server's origin (its "authorization base
/// URL"). rmcp fetches it from there too, but then holds it to RFC 8414's rule that its issuer
/// be the URL the well-known path was added to, the bare origin, which a server with its
/// authorization endpoints under a path (issuer `http://host/oauth`) does not meet.
///
/// Given the issuers of rmcp's mismatch, this answers that document when all of these hold, and
/// `None` (the mismatch stands) otherwise:
/// - it is the document at the origin that rmcp rejected ([`legacy_issuer_accepted`]);
/// - its issuer is on the MCP server's own origin;
/// - the server publishes no protected-resource metadata, neither named in its challenge nor
///   at a well-known location. With it, the authorization server it names must answer with
///   exactly that issuer, as rmcp checks, and nothing here relaxes that.
async fn legacy_metadata(
    server_url: &str,
    challenge: Option<&str>,
    expected_issuer: &str,
    received_issuer: &str,
) -> Option<AuthorizationMetadata> {
    let server = Url::parse(server_url).ok()?;
    if !legacy_issuer_accepted(&server, expected_issuer, received_issuer) {
        return None;
    }
    if challenge.is_some_and(names_resource_metadata) {
        return None;
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .ok()?;
    match publishes_resource_metadata(&client, &server).await {
        Ok(false) => {}
        Ok(true) => return None,
        Err(e) => {
            tracing::debug!("cannot tell whether {server} publishes resource metadata: {e}");
            return None;
        }
    }
    let mut url = server.clone();
    url.set_path("/.well-known/oauth-authorization-server");
    url.set_query(None);
    url.set_fragment(None);
    let response = client.get(url.clone()).send().await.ok()?;
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    let body = response.bytes().await.ok()?;
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).ok()?;
    // The document rmcp rejected, not another one served since.
    (metadata.issuer.as_deref() == Some(received_issuer)).then(|| {
        tracing::info!(
            "{server}: using the 2025-03-26 authorization server metadata at {url}, whose issuer is \
             {received_issuer}"
        );
        metadata
    })
}

/// Whether rmcp's issuer mismatch (`expected_issuer`, `received_issuer`) is the one of a
/// 2025-03-26 server: the metadata rejected is the one at the origin of `server` (rmcp expected
/// the origin as its issuer), and the issuer it names is an `http(s)` URL on that same origin,
/// with no query or fragment.
fn legacy_issuer_accepted(server: &Url, expected_issuer: &str, received_issuer: &str) -> bool {
    let (Ok(expected), Ok(received)) = (Url::parse(expected_issuer), Url::parse(received_issuer)) else {
        return false;
    };
    let is_origin = |url: &Url| url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    matches!(server.scheme(), "http" | "https")
        && expected.origin() == server.origin()
        && is_origin(&expected)
        && received.origin() == server.origin()
        && received.query().is_none()
        && received.fragment().is_none()
}

/// Whether a `WWW-Authenticate` challenge points at protected-resource metadata.
fn names_resource_metadata(challenge: &str) -> bool {
    challenge.to_ascii_lowercase().contains("resource_metadata=")
}

/// Where a client looks for the protected-resource metadata of `server` (RFC 9728, and the
/// places rmcp also tries): `/.well-known/oauth-protected-resource` with the server's path
/// after it, then before it, then alone.
fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let path = server.path().trim_matches('/');
    let mut paths = Vec::new();
    if !path.is_empty() {
        paths.push(format!("/.well-known/oauth-protected-resource/{path}"));
        paths.push(format!("/{path}/.well-known/oauth-protected-resource"));
    }
    paths.push("/.well-known/oauth-protected-resource".to_string());
    paths
        .into_iter()
        .map(|path| {
            let mut url = server.clone();
            url.set_path(&path);
            url.set_query(None);
            url.set_fragment(None);
            url
        })
        .collect()
}

/// Whether `server` publishes protected-resource metadata: a challenge to an unauthenticated
/// request that names it, or a document at one of [`resource_metadata_urls`]. An error when a
/// request fails, as nothing can then be ruled out.
async fn publishes_resource_metadata(client: &reqwest::Client, server: &Url) -> Result<bool, reqwest::Error> {
    let challenges_name_it = |response: &reqwest::Response| {
        response
            .headers()
            .get_all(reqwest::header::WWW_AUTHENTICATE)
            .iter()
            .any(|v| v.to_str().is_ok_and(names_resource_metadata))
    };
    if challenges_name_it(&client.get(server.clone()).send().await?) {
        return Ok(true);
    }
    for url in resource_metadata_urls(server) {
        let response = client.get(url).send().await?;
        if challenges_name_it(&response) {
            return Ok(true);
        }
        if response.status() == reqwest::StatusCode::OK {
            let body = response.bytes().await?;
            let document = serde_json::from_slice::<serde_json::Value>(&body).unwrap_or_default();
            if ["resource", "authorization_servers", "authorization_server"]
                .iter()
                .any(|field| document.get(field).is_some())
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
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

    fn metadata(json: serde_json::Value) -> AuthorizationMetadata {
        serde_json::from_value(json).unwrap()
    }

    fn oauth() -> OAuth {
        OAuth::new(
            Arc::new(FollowRedirect),
            Arc::new(KeyringTokens(Arc::new(MemorySecrets::default()))),
        )
    }

    const CIMD: &str = "https://porthole.example/oauth/client.json";

    #[test]
    fn the_metadata_document_url_is_the_client_id_only_where_the_server_supports_it() {
        let supports = metadata(serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "client_id_metadata_document_supported": true,
        }));
        let silent = metadata(serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
        }));
        let mut oauth = oauth();
        assert_eq!(
            oauth.registration_for(&supports),
            ClientRegistration::Dynamic,
            "no URL set"
        );
        oauth.client_metadata_url = Some(CIMD.into());
        assert_eq!(
            oauth.registration_for(&supports),
            ClientRegistration::MetadataDocument(CIMD.into())
        );
        assert_eq!(oauth.registration_for(&silent), ClientRegistration::Dynamic);
        oauth.client_metadata_url = Some("http://porthole.example/client.json".into());
        assert_eq!(
            oauth.registration_for(&supports),
            ClientRegistration::Dynamic,
            "an unusable URL registers rather than failing the sign-in"
        );
        oauth.client_metadata_url = Some(CIMD.into());
        oauth.client_id = Some("given".into());
        assert_eq!(
            oauth.registration_for(&supports),
            ClientRegistration::Preregistered("given".into()),
            "a client registered in advance comes first"
        );
    }

    #[test]
    fn client_metadata_urls_are_https_with_a_path() {
        assert!(check_client_metadata_url(CIMD).is_ok());
        assert!(check_client_metadata_url("https://conformance-test.local/client-metadata.json").is_ok());
        for bad in [
            "http://porthole.example/client.json",
            "https://porthole.example",
            "https://porthole.example/",
            "https://user:pw@porthole.example/client.json",
            "https://porthole.example/client.json#me",
            "https://porthole.example/a/../client.json",
            "https://porthole.example/./client.json",
            "porthole.example/client.json",
        ] {
            assert!(check_client_metadata_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_an_issuer_on_the_servers_origin_passes_for_the_metadata_at_the_origin() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(legacy_issuer_accepted(
            &server,
            "http://localhost:3000/",
            "http://localhost:3000/oauth"
        ));
        assert!(legacy_issuer_accepted(
            &server,
            "http://localhost:3000",
            "http://localhost:3000/tenant/a"
        ));
        // Another origin: host, port, or scheme.
        for received in [
            "http://evil.example/oauth",
            "http://localhost:3001/oauth",
            "https://localhost:3000/oauth",
            "http://localhost:3000/oauth?x=1",
            "not a url",
        ] {
            assert!(
                !legacy_issuer_accepted(&server, "http://localhost:3000/", received),
                "{received}"
            );
        }
        // The metadata rejected was not the one at the origin (a path-inserted one, or an
        // authorization server named elsewhere).
        for expected in ["http://localhost:3000/mcp", "http://auth.example/"] {
            assert!(
                !legacy_issuer_accepted(&server, expected, "http://localhost:3000/oauth"),
                "{expected}"
            );
        }
    }

    #[test]
    fn resource_metadata_is_looked_for_where_rfc_9728_puts_it() {
        let urls = |server: &str| -> Vec<String> {
            resource_metadata_urls(&Url::parse(server).unwrap())
                .iter()
                .map(Url::to_string)
                .collect()
        };
        assert_eq!(
            urls("https://h.example/api/mcp/?q=1"),
            [
                "https://h.example/.well-known/oauth-protected-resource/api/mcp",
                "https://h.example/api/mcp/.well-known/oauth-protected-resource",
                "https://h.example/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            urls("https://h.example/"),
            ["https://h.example/.well-known/oauth-protected-resource"]
        );
        assert!(names_resource_metadata(
            r#"Bearer error="invalid_token", Resource_Metadata="https://h.example/prm""#
        ));
        assert!(!names_resource_metadata(r#"Bearer error="invalid_token""#));
    }

    /// An MCP server and its authorization server on one loopback port, for sign-in tests:
    /// the MCP endpoint at `/mcp` answers 401; the authorization server's metadata is at
    /// `/.well-known/oauth-authorization-server`, with `issuer` the origin plus `issuer_path`
    /// (its endpoints under that path too), approving every request at once.
    struct FakeServers {
        issuer_path: &'static str,
        /// The issuer named instead of origin + `issuer_path`.
        issuer: Option<&'static str>,
        cimd: bool,
        /// Publishes protected-resource metadata at the RFC 9728 location, naming the origin
        /// as its authorization server.
        resource_metadata: bool,
    }

    /// The base URL, and the "METHOD path?query" of every request served.
    struct Served {
        base: String,
        requests: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Served {
        fn requests(&self) -> Vec<String> {
            self.requests.lock().unwrap().clone()
        }
    }

    impl FakeServers {
        fn answer(&self, base: &str, method: &str, target: &str) -> (u16, Vec<(&'static str, String)>, String) {
            let url = Url::parse(&format!("{base}{target}")).unwrap();
            let prefix = self.issuer_path;
            let json = |status, value: serde_json::Value| (status, vec![], value.to_string());
            match (method, url.path()) {
                ("GET", "/mcp") => (401, vec![("www-authenticate", "Bearer".into())], String::new()),
                ("GET", "/.well-known/oauth-protected-resource/mcp") if self.resource_metadata => json(
                    200,
                    serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
                ),
                ("GET", "/.well-known/oauth-authorization-server") => json(
                    200,
                    serde_json::json!({
                        "issuer": self.issuer.map(str::to_string).unwrap_or(format!("{base}{prefix}")),
                        "authorization_endpoint": format!("{base}{prefix}/authorize"),
                        "token_endpoint": format!("{base}{prefix}/token"),
                        "registration_endpoint": format!("{base}{prefix}/register"),
                        "response_types_supported": ["code"],
                        "code_challenge_methods_supported": ["S256"],
                        "client_id_metadata_document_supported": self.cimd,
                    }),
                ),
                ("GET", path) if path == format!("{prefix}/authorize") => {
                    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
                    let mut back = Url::parse(&query["redirect_uri"]).unwrap();
                    back.query_pairs_mut()
                        .append_pair("code", "the-code")
                        .append_pair("state", &query["state"]);
                    (302, vec![("location", back.to_string())], String::new())
                }
                ("POST", path) if path == format!("{prefix}/token") => json(
                    200,
                    serde_json::json!({"access_token": "the-token", "token_type": "Bearer", "expires_in": 3600}),
                ),
                ("POST", path) if path == format!("{prefix}/register") => json(
                    201,
                    serde_json::json!({"client_id": "registered", "redirect_uris": ["http://127.0.0.1:1/callback"]}),
                ),
                _ => (404, vec![], String::new()),
            }
        }

        async fn serve(self) -> Served {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
            let (servers, log, at) = (Arc::new(self), requests.clone(), base.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((mut stream, _)) = listener.accept().await else {
                        return;
                    };
                    let (servers, log, base) = (servers.clone(), log.clone(), at.clone());
                    tokio::spawn(async move {
                        let mut buf = Vec::new();
                        let mut chunk = [0u8; 4096];
                        // The head, then as much body as it announces.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                        let length = head
                            .lines()
                            .filter_map(|l| l.split_once(':'))
                            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        while buf.len() < head_end + length {
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let mut first = head.lines().next().unwrap_or("").split_whitespace();
                        let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
                        log.lock().unwrap().push(format!("{method} {target}"));
                        let (status, headers, body) = servers.answer(&base, method, target);
                        let mut response = format!(
                            "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                            http::StatusCode::from_u16(status)
                                .unwrap()
                                .canonical_reason()
                                .unwrap_or(""),
                            body.len()
                        );
                        for (name, value) in headers {
                            response.push_str(&format!("{name}: {value}\r\n"));
                        }
                        response.push_str("\r\n");
                        response.push_str(&body);
                        stream.write_all(response.as_bytes()).await.ok();
                        stream.shutdown().await.ok();
                    });
                }
            });
            Served { base, requests }
        }
    }

    fn asked(served: &Served, method_and_path: &str) -> Option<String> {
        served
            .requests()
            .into_iter()
            .find(|r| r.split('?').next() == Some(method_and_path))
    }

    fn client_id_asked_for(served: &Served, authorize: &str) -> String {
        let request = asked(served, &format!("GET {authorize}")).expect("an authorization request");
        let url = Url::parse(&format!("http://x{}", &request["GET ".len()..])).unwrap();
        url.query_pairs()
            .find(|(k, _)| k == "client_id")
            .unwrap()
            .1
            .into_owned()
    }

    #[tokio::test]
    async fn a_server_supporting_cimd_gets_the_metadata_document_url_as_client_id() {
        let served = FakeServers {
            issuer_path: "",
            issuer: None,
            cimd: true,
            resource_metadata: true,
        }
        .serve()
        .await;
        let mut oauth = oauth();
        oauth.client_metadata_url = Some(CIMD.into());
        oauth.sign_in(&format!("{}/mcp", served.base), None).await.unwrap();
        assert_eq!(client_id_asked_for(&served, "/authorize"), CIMD);
        assert_eq!(asked(&served, "POST /register"), None, "{:?}", served.requests());
        assert!(asked(&served, "POST /token").is_some());
    }

    #[tokio::test]
    async fn without_cimd_support_or_a_usable_url_the_client_registers() {
        for (cimd, url) in [(false, CIMD), (true, "http://porthole.example/client.json")] {
            let served = FakeServers {
                issuer_path: "",
                issuer: None,
                cimd,
                resource_metadata: true,
            }
            .serve()
            .await;
            let mut oauth = oauth();
            oauth.client_metadata_url = Some(url.into());
            oauth.sign_in(&format!("{}/mcp", served.base), None).await.unwrap();
            assert!(asked(&served, "POST /register").is_some(), "{:?}", served.requests());
            assert_eq!(client_id_asked_for(&served, "/authorize"), "registered");
        }
    }

    #[tokio::test]
    async fn a_2025_03_26_server_with_its_issuer_under_a_path_signs_in_and_its_tokens_are_reused() {
        let served = FakeServers {
            issuer_path: "/oauth",
            issuer: None,
            cimd: false,
            resource_metadata: false,
        }
        .serve()
        .await;
        let oauth = oauth();
        let url = format!("{}/mcp", served.base);
        let manager = oauth.sign_in(&url, Some("Bearer")).await.unwrap();
        assert!(manager.get_access_token().await.is_ok());
        for step in ["POST /oauth/register", "GET /oauth/authorize", "POST /oauth/token"] {
            assert!(asked(&served, step).is_some(), "{step}: {:?}", served.requests());
        }
        // At the next start, the stored tokens are found through the same metadata.
        let stored = oauth.stored(&url).await.unwrap().expect("stored tokens");
        assert!(stored.get_access_token().await.is_ok());
    }

    #[tokio::test]
    async fn with_resource_metadata_or_a_foreign_issuer_the_issuer_check_stands() {
        for (issuer, resource_metadata) in [(None, true), (Some("http://auth.example/oauth"), false)] {
            let served = FakeServers {
                issuer_path: "/oauth",
                issuer,
                cimd: false,
                resource_metadata,
            }
            .serve()
            .await;
            let error = oauth()
                .sign_in(&format!("{}/mcp", served.base), None)
                .await
                .err()
                .expect("no sign-in");
            assert!(error.contains("issuer mismatch"), "{error}");
            assert_eq!(asked(&served, "POST /oauth/register"), None);
        }
    }
}
