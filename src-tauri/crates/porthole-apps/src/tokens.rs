//! The unguessable tokens in a view's URL ([`view_url`]: `mcpview://<origin>/view/<token>`), and the HTTP
//! answer the custom-scheme handler gives for them (tauri-notes §2, "Per-view content keyed by
//! an unguessable token").
//!
//! - A token is 128 random bits from the OS, as 32 lowercase hex characters (short enough to be
//!   a single DNS label should a token ever become part of a host name).
//! - It serves only to the webview it was minted for.
//! - Its first use must come within [`FIRST_USE_WINDOW`] of minting; a token never used in time
//!   is forgotten. Once used, the same document may be fetched again (reloads) until the view is
//!   revoked.
//! - Every refusal is the same empty 404, so a page cannot tell an unknown token from another
//!   webview's or an expired one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long after minting a token's first use may come.
pub const FIRST_USE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// Random bytes in a token (128 bits).
const TOKEN_BYTES: usize = 16;

/// What a token serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedView {
    /// The view (one tool call's frame) the token belongs to; [`ViewTokens::revoke`] takes it.
    pub view_id: String,
    /// The label of the only webview that may load it.
    pub owner_webview: String,
    /// The origin (host name) it is served on: its server's.
    pub origin: String,
    /// The view's HTML as checked (shared with the view cache and other views of it).
    pub html: Arc<str>,
    /// What goes into the document's head before the view's own scripts (the storage shim,
    /// the inspector's hooks): put in each time the document is served.
    pub script: String,
    /// The `Content-Security-Policy` header value.
    pub csp: String,
    /// The devices the person let this view use (Permission-Policy feature names, e.g.
    /// `camera`); every other feature is off for its document.
    pub devices: Vec<String>,
    pub minted_at: Instant,
}

/// The document and policy for one successful request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub html: String,
    pub csp: String,
    /// The `Permissions-Policy` header value: the view's devices for its own origin, nothing else.
    pub permissions_policy: String,
}

/// Why a request got nothing. All of them answer the same 404 ([`response`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotServed {
    #[error("unknown token")]
    Unknown,
    #[error("the token belongs to another webview")]
    WrongWebview,
    #[error("the token belongs to another origin")]
    WrongOrigin,
    #[error("the token was not used within its first-use window")]
    Expired,
}

/// The address a view's frame loads for `token`, on its server's `origin` (a host name: one
/// or more DNS labels). WebView2 (Windows) has no real custom scheme: there the scheme is served
/// as `http://mcpview.<origin>.localhost`.
pub fn view_url(origin: &str, token: &str) -> String {
    if cfg!(windows) {
        format!("http://mcpview.{origin}.localhost/view/{token}")
    } else {
        format!("mcpview://{origin}/view/{token}")
    }
}

/// The path under a view origin where the engine posts the view's CSP violation reports
/// (`report-uri` in its policy), followed by the view's report key.
pub const CSP_REPORT_PATH: &str = "/csp-report/";

/// Where view `origin`'s CSP reports go for the view with report key `key` (the same scheme and
/// origin as [`view_url`]).
pub fn csp_report_url(origin: &str, key: &str) -> String {
    if cfg!(windows) {
        format!("http://mcpview.{origin}.localhost{CSP_REPORT_PATH}{key}")
    } else {
        format!("mcpview://{origin}{CSP_REPORT_PATH}{key}")
    }
}

/// The view origin a request was made on, from its URI's host: the host itself
/// (`mcpview://<origin>/…`), or on Windows the part between `mcpview.` and `.localhost`.
pub fn origin_of(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    host.strip_suffix(".localhost")
        .map(|h| h.strip_prefix("mcpview.").unwrap_or(h))
        .unwrap_or(&host)
        .to_string()
}

struct Entry {
    view: ServedView,
    used: bool,
}

/// The live tokens. Cheap to clone; every clone shares the same table.
#[derive(Clone, Default)]
pub struct ViewTokens {
    inner: Arc<Mutex<HashMap<String, Entry>>>,
}

impl std::fmt::Debug for ViewTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the tokens themselves.
        f.debug_struct("ViewTokens").field("live", &self.len()).finish()
    }
}

fn random_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl ViewTokens {
    pub fn new() -> ViewTokens {
        ViewTokens::default()
    }

    fn table(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // A panic elsewhere while holding the lock leaves the table itself consistent.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores `entry` under a fresh token and returns the token.
    pub fn mint(&self, entry: ServedView) -> String {
        let mut table = self.table();
        let token = loop {
            let token = random_token();
            if !table.contains_key(&token) {
                break token;
            }
        };
        table.insert(
            token.clone(),
            Entry {
                view: entry,
                used: false,
            },
        );
        token
    }

    /// What a request for `token` on `origin` from webview `webview_label` gets at time `now`.
    pub fn serve(&self, token: &str, origin: &str, webview_label: &str, now: Instant) -> Result<Served, NotServed> {
        let view = self.checked(token, origin, webview_label, now)?;
        // The document is put together with the table let go: other views' requests do not wait.
        Ok(Served {
            html: crate::view_storage::inject(&view.html, &view.script),
            csp: view.csp,
            permissions_policy: permissions_policy(&view.devices),
        })
    }

    /// The token's view, once the request for it is checked (the HTML itself is shared).
    fn checked(&self, token: &str, origin: &str, webview_label: &str, now: Instant) -> Result<ServedView, NotServed> {
        let mut table = self.table();
        let entry = table.get_mut(token).ok_or(NotServed::Unknown)?;
        if entry.view.owner_webview != webview_label {
            return Err(NotServed::WrongWebview);
        }
        if entry.view.origin != origin {
            return Err(NotServed::WrongOrigin);
        }
        if !entry.used {
            if now.saturating_duration_since(entry.view.minted_at) > FIRST_USE_WINDOW {
                table.remove(token);
                return Err(NotServed::Expired);
            }
            entry.used = true;
        }
        Ok(entry.view.clone())
    }

    /// Forgets every token of view `view_id` (the view was closed or replaced).
    pub fn revoke(&self, view_id: &str) {
        self.table().retain(|_, e| e.view.view_id != view_id);
    }

    /// Forgets one token.
    pub fn revoke_token(&self, token: &str) {
        self.table().remove(token);
    }

    /// Forgets every token whose first-use window passed unused; returns how many.
    pub fn purge_expired(&self, now: Instant) -> usize {
        let mut table = self.table();
        let before = table.len();
        table.retain(|_, e| e.used || now.saturating_duration_since(e.view.minted_at) <= FIRST_USE_WINDOW);
        before - table.len()
    }

    /// How many tokens are live.
    pub fn len(&self) -> usize {
        self.table().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The policy sent with refusals, and instead of a policy that is not a valid header value.
const REFUSAL_CSP: &str = "default-src 'none'; base-uri 'none'; form-action 'none'";

/// The features a view's `Permissions-Policy` names: off unless the view was given them.
const POLICY_FEATURES: &[&str] = &[
    "camera",
    "microphone",
    "geolocation",
    "clipboard-read",
    "clipboard-write",
    "display-capture",
    "usb",
    "serial",
    "hid",
    "bluetooth",
    "payment",
];

/// The `Permissions-Policy` of a view given `devices`: each of them for the view's own origin
/// (`camera=(self)`), every other feature off (`usb=()`). Only the four a view may ask for
/// (camera, microphone, geolocation, clipboard-write) can be on.
pub fn permissions_policy(devices: &[String]) -> String {
    const GRANTABLE: &[&str] = &["camera", "microphone", "geolocation", "clipboard-write"];
    POLICY_FEATURES
        .iter()
        .map(|f| {
            let on = GRANTABLE.contains(f) && devices.iter().any(|d| d == f);
            format!("{f}={}", if on { "(self)" } else { "()" })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The HTTP response for a view request (the document is moved into the body, not copied).
pub fn response(result: Result<Served, NotServed>) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let (status, csp, policy) = match &result {
        Ok(served) => {
            // A header value must be visible ASCII and spaces; anything else (a CR/LF above all)
            // gets the strictest policy rather than a broken or split header.
            let csp = if !served.csp.is_empty() && served.csp.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                served.csp.as_str()
            } else {
                REFUSAL_CSP
            };
            (200, csp, served.permissions_policy.clone())
        }
        Err(_) => (404, REFUSAL_CSP, permissions_policy(&[])),
    };
    let headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Security-Policy", csp),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        // Device and clipboard features only as the person gave them (where the engine honours it).
        ("Permissions-Policy", policy.as_str()),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let body = match result {
        Ok(served) => served.html.into_bytes(),
        Err(_) => Vec::new(),
    };
    (status, headers, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn view(id: &str, owner: &str, at: Instant) -> ServedView {
        ServedView {
            view_id: id.into(),
            owner_webview: owner.into(),
            origin: "srv".into(),
            html: format!("<p>{id}</p>").into(),
            script: String::new(),
            csp: "default-src 'none'".into(),
            devices: Vec::new(),
            minted_at: at,
        }
    }

    #[test]
    fn a_views_permissions_policy_turns_on_only_the_devices_it_was_given() {
        let none = permissions_policy(&[]);
        assert!(none.contains("camera=()") && none.contains("clipboard-write=()") && !none.contains("(self)"));
        let some = permissions_policy(&["camera".into(), "clipboard-write".into(), "usb".into()]);
        assert!(
            some.contains("camera=(self)") && some.contains("clipboard-write=(self)"),
            "{some}"
        );
        assert!(
            some.contains("microphone=()") && some.contains("usb=()"),
            "never more than the four: {some}"
        );
    }

    #[test]
    fn a_served_document_has_its_script_in_its_head_and_the_shared_html_stays_as_it_was() {
        let tokens = ViewTokens::new();
        let html: Arc<str> = "<html><head><title>t</title></head><body>x</body></html>".into();
        let mut one = view("v1", "main", Instant::now());
        one.html = html.clone();
        one.script = "<script>shim()</script>".into();
        let token = tokens.mint(one);
        let served = tokens.serve(&token, "srv", "main", Instant::now()).unwrap();
        assert_eq!(
            served.html,
            "<html><head><script>shim()</script><title>t</title></head><body>x</body></html>"
        );
        assert_eq!(&*html, "<html><head><title>t</title></head><body>x</body></html>");
    }

    #[test]
    fn view_urls_carry_the_origin_and_the_token() {
        let url = view_url("a1b2", "0123456789abcdef0123456789abcdef");
        assert!(url.ends_with("/view/0123456789abcdef0123456789abcdef"), "{url}");
        let scheme = if cfg!(windows) {
            "http://mcpview.a1b2.localhost/"
        } else {
            "mcpview://a1b2/"
        };
        assert!(url.starts_with(scheme), "{url}");
        let host = url.split('/').nth(2).unwrap();
        assert_eq!(origin_of(host), "a1b2");
        assert_eq!(origin_of("a1b2.localhost"), "a1b2");
        assert_eq!(origin_of("Srv.Example"), "srv.example");
    }

    #[test]
    fn tokens_are_long_hex_and_distinct() {
        let tokens = ViewTokens::new();
        let now = Instant::now();
        let mut seen = HashSet::new();
        for i in 0..10_000 {
            let t = tokens.mint(view(&format!("v{i}"), "main", now));
            assert!(t.len() >= 32, "{t}");
            assert!(
                t.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{t}"
            );
            assert!(seen.insert(t));
        }
        assert_eq!(tokens.len(), 10_000);
    }

    #[test]
    fn serves_the_owner_and_reloads() {
        let tokens = ViewTokens::new();
        let t0 = Instant::now();
        let token = tokens.mint(view("v1", "main", t0));
        let first = tokens
            .serve(&token, "srv", "main", t0 + Duration::from_secs(1))
            .unwrap();
        assert_eq!(first.html, "<p>v1</p>");
        assert_eq!(first.csp, "default-src 'none'");
        // Reloads after the first use, even long after the first-use window.
        let later = t0 + FIRST_USE_WINDOW + Duration::from_secs(3600);
        assert_eq!(tokens.serve(&token, "srv", "main", later).unwrap(), first);
        let (status, headers, body) = response(Ok(first));
        assert_eq!(status, 200);
        assert_eq!(body, b"<p>v1</p>");
        let h: HashMap<_, _> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(h["Content-Type"], "text/html; charset=utf-8");
        assert_eq!(h["Content-Security-Policy"], "default-src 'none'");
        assert_eq!(h["X-Content-Type-Options"], "nosniff");
        assert_eq!(h["Referrer-Policy"], "no-referrer");
        assert_eq!(h["Cache-Control"], "no-store");
    }

    #[test]
    fn every_refusal_is_the_same_404() {
        let tokens = ViewTokens::new();
        let t0 = Instant::now();
        let token = tokens.mint(view("v1", "main", t0));
        let wrong = tokens.serve(&token, "srv", "other-webview", t0);
        assert_eq!(wrong, Err(NotServed::WrongWebview));
        let unknown = tokens.serve("0123456789abcdef0123456789abcdef", "srv", "main", t0);
        assert_eq!(unknown, Err(NotServed::Unknown));
        let expired_token = tokens.mint(view("v2", "main", t0));
        let expired = tokens.serve(
            &expired_token,
            "srv",
            "main",
            t0 + FIRST_USE_WINDOW + Duration::from_millis(1),
        );
        assert_eq!(expired, Err(NotServed::Expired));
        let answers: Vec<_> = [wrong, unknown, expired].into_iter().map(response).collect();
        for (status, headers, body) in &answers {
            assert_eq!(*status, 404);
            assert!(body.is_empty());
            assert_eq!(headers, &answers[0].1);
            assert!(
                headers
                    .iter()
                    .any(|(k, v)| k == "Content-Security-Policy" && v.starts_with("default-src 'none'"))
            );
            assert!(headers.iter().any(|(k, v)| k == "Cache-Control" && v == "no-store"));
        }
        // Another origin (another server's) is refused the same way.
        assert_eq!(
            tokens.serve(&token, "other-srv", "main", t0),
            Err(NotServed::WrongOrigin)
        );
        assert_eq!(response(Err(NotServed::WrongOrigin)), answers[0]);
        // A wrong webview does not burn the token for its owner.
        assert!(tokens.serve(&token, "srv", "main", t0).is_ok());
    }

    #[test]
    fn expiry_removes_the_entry() {
        let tokens = ViewTokens::new();
        let t0 = Instant::now();
        let at_limit = tokens.mint(view("v1", "main", t0));
        assert!(tokens.serve(&at_limit, "srv", "main", t0 + FIRST_USE_WINDOW).is_ok());
        let late = tokens.mint(view("v2", "main", t0));
        let after = t0 + FIRST_USE_WINDOW + Duration::from_secs(1);
        assert_eq!(tokens.serve(&late, "srv", "main", after), Err(NotServed::Expired));
        // Gone for good: even a time inside the window no longer helps.
        assert_eq!(tokens.serve(&late, "srv", "main", t0), Err(NotServed::Unknown));
        assert_eq!(tokens.len(), 1);
    }

    #[test]
    fn purge_forgets_only_unused_expired_tokens() {
        let tokens = ViewTokens::new();
        let t0 = Instant::now();
        let used = tokens.mint(view("v1", "main", t0));
        tokens.serve(&used, "srv", "main", t0).unwrap();
        let _unused = tokens.mint(view("v2", "main", t0));
        let fresh = tokens.mint(view("v3", "main", t0 + FIRST_USE_WINDOW));
        assert_eq!(tokens.purge_expired(t0 + FIRST_USE_WINDOW + Duration::from_secs(1)), 1);
        assert_eq!(tokens.len(), 2);
        assert!(tokens.serve(&fresh, "srv", "main", t0 + FIRST_USE_WINDOW).is_ok());
    }

    #[test]
    fn revoke_by_view_and_by_token() {
        let tokens = ViewTokens::new();
        let t0 = Instant::now();
        let a1 = tokens.mint(view("a", "main", t0));
        let a2 = tokens.mint(view("a", "main", t0));
        let b = tokens.mint(view("b", "main", t0));
        tokens.serve(&a1, "srv", "main", t0).unwrap();
        tokens.revoke("a");
        assert_eq!(tokens.serve(&a1, "srv", "main", t0), Err(NotServed::Unknown));
        assert_eq!(tokens.serve(&a2, "srv", "main", t0), Err(NotServed::Unknown));
        assert!(tokens.serve(&b, "srv", "main", t0).is_ok());
        tokens.revoke_token(&b);
        assert_eq!(tokens.serve(&b, "srv", "main", t0), Err(NotServed::Unknown));
        assert!(tokens.is_empty());
    }

    #[test]
    fn a_policy_that_is_not_a_header_value_is_replaced() {
        let bad = Served {
            html: "x".into(),
            csp: "default-src *\r\nX-Injected: 1".into(),
            permissions_policy: permissions_policy(&[]),
        };
        let (status, headers, _) = response(Ok(bad));
        assert_eq!(status, 200);
        let csp = &headers.iter().find(|(k, _)| k == "Content-Security-Policy").unwrap().1;
        assert_eq!(csp, REFUSAL_CSP);
    }

    #[test]
    fn shared_between_clones_and_threads() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<ViewTokens>();
        let tokens = ViewTokens::new();
        let other = tokens.clone();
        let token = std::thread::spawn(move || other.mint(view("v", "main", Instant::now())))
            .join()
            .unwrap();
        assert!(tokens.serve(&token, "srv", "main", Instant::now()).is_ok());
        assert!(!format!("{tokens:?}").contains(&token));
    }
}
