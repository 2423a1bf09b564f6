//! The Content-Security-Policy a view document is served with, built from what its resource
//! declares in `_meta.ui.csp` (MCP Apps stable spec, "CSP Enforcement"; reference §2.3).
//!
//! # The policy
//!
//! One header value, directives separated by `"; "`, always in this order and never any other
//! directive (`R` = accepted `resourceDomains`, `C` = `connectDomains`, `F` = `frameDomains`,
//! `B` = `baseUriDomains`):
//!
//! | directive     | value                                                            |
//! |---------------|------------------------------------------------------------------|
//! | `default-src` | `'none'`                                                         |
//! | `script-src`  | `'unsafe-inline'` [`'wasm-unsafe-eval'` if `wasmUnsafeEval: true`] R |
//! | `style-src`   | `'unsafe-inline'` R                                              |
//! | `img-src`     | `data: blob:` R                                                  |
//! | `font-src`    | `data: blob:` R                                                  |
//! | `media-src`   | `data: blob:` R                                                  |
//! | `connect-src` | C, or `'none'`                                                   |
//! | `frame-src`   | F, or `'none'`                                                   |
//! | `object-src`  | `'none'`                                                         |
//! | `base-uri`    | B, or `'none'`                                                   |
//! | `form-action` | `'none'`                                                         |
//!
//! With nothing declared this is the spec's restrictive default (`default-src 'none'`, inline
//! script and style only, `data:` images and media, `connect-src 'none'`) plus `object-src 'none'`
//! as the draft adds, and the further restrictions below — the spec lets a host restrict but
//! never loosen.
//!
//! Deliberate departures from the spec's formula, all of them restrictions:
//! - No `'self'` anywhere. A view's origin (`mcpview:`) serves nothing but that one document, so
//!   `'self'` would grant nothing a view needs, only a way to reach the host's own scheme.
//! - `connect-src` and `base-uri` default to `'none'` (the spec formula says `'self'`).
//! - `form-action 'none'`: a view has nowhere to post a form to.
//!
//! The only additions are `blob:` (documents the view itself made) and `data:` for fonts, which
//! name no remote origin and so allow no undeclared domain.
//!
//! # What an entry may be
//!
//! An origin and nothing else: `https://host[:port]` (and `wss://host[:port]` in
//! `connectDomains` only), optionally with a trailing `/` that is dropped. The host is a DNS
//! name of at least two labels of ASCII letters, digits and inner hyphens, optionally with a
//! leading wildcard label (`https://*.example.com`, the form the spec allows). Scheme and host
//! are lower-cased and duplicates are merged. Everything else is dropped and reported in
//! [`CspOutcome::dropped`], notably: other schemes (`http:`, `ws:`, `data:`, `blob:`,
//! `javascript:`, `tauri:`, `ipc:`, `mcpview:`…), keywords and anything quoted, a bare `*`,
//! whitespace, control characters, `;` and `,` (which would inject directives or policies),
//! paths, queries, fragments, userinfo, port wildcards, non-ASCII hosts (use punycode),
//! IP-address literals of any form (dotted, numeric, hex, IPv6: they name local-network
//! machines and are parsed differently by URL and CSP matchers), `localhost` and every
//! `*.localhost` name (this machine, and on Windows the app's own `ipc.localhost` and
//! `tauri.localhost`), wildcards over a whole top-level domain, non-string entries, non-array
//! fields and unknown fields. A field keeps at most [`MAX_ENTRIES_PER_FIELD`] entries.

use serde::Serialize;
use serde_json::Value;

/// The most entries one field may have; the rest are dropped (they would only bloat the header).
pub const MAX_ENTRIES_PER_FIELD: usize = 100;

/// The longest entry considered (a DNS name is at most 253 characters).
const MAX_ENTRY_LEN: usize = 300;

/// How much of an offending value [`DroppedEntry::entry`] keeps.
const MAX_REPORTED_LEN: usize = 200;

/// Something in the declared CSP that the policy leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedEntry {
    /// The field it was in (`connectDomains`…), the unknown field's own name, or `csp` when the
    /// whole value is unusable.
    pub field: String,
    /// The entry as given (a string as is, anything else as JSON), cut to 200 characters.
    pub entry: String,
    pub reason: String,
}

/// What the host actually grants, in the spec's `McpUiResourceCsp` shape (for
/// `hostCapabilities.sandbox.csp`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantedCsp {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wasm_unsafe_eval: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CspOutcome {
    /// The `Content-Security-Policy` header value (one line).
    pub policy: String,
    /// Everything declared that the policy does not grant.
    pub dropped: Vec<DroppedEntry>,
    /// The accepted (normalised, de-duplicated) origins and flags the policy was built from.
    pub granted: GrantedCsp,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Connect,
    Resource,
    Frame,
    BaseUri,
}

impl Field {
    fn from_name(name: &str) -> Option<Field> {
        match name {
            "connectDomains" => Some(Field::Connect),
            "resourceDomains" => Some(Field::Resource),
            "frameDomains" => Some(Field::Frame),
            "baseUriDomains" => Some(Field::BaseUri),
            _ => None,
        }
    }
}

/// Builds the policy for a view from its resource's `_meta.ui.csp` (absent or `null`: the
/// restrictive default). See the module documentation for the exact policy and entry rules.
pub fn build_csp(declared: Option<&Value>) -> CspOutcome {
    let mut granted = GrantedCsp::default();
    let mut dropped = Vec::new();
    match declared {
        None | Some(Value::Null) => {}
        Some(Value::Object(fields)) => {
            for (name, value) in fields {
                if name == "wasmUnsafeEval" {
                    match value {
                        Value::Bool(b) => granted.wasm_unsafe_eval = *b,
                        Value::Null => {}
                        other => dropped.push(drop_value(name, other, "wasmUnsafeEval is not a boolean")),
                    }
                    continue;
                }
                let Some(field) = Field::from_name(name) else {
                    dropped.push(drop_value(name, value, "unknown CSP field; ignored"));
                    continue;
                };
                let items = match value {
                    Value::Null => continue,
                    Value::Array(items) => items,
                    other => {
                        dropped.push(drop_value(
                            name,
                            other,
                            "not an array of origins; the whole field is ignored",
                        ));
                        continue;
                    }
                };
                let target = match field {
                    Field::Connect => &mut granted.connect_domains,
                    Field::Resource => &mut granted.resource_domains,
                    Field::Frame => &mut granted.frame_domains,
                    Field::BaseUri => &mut granted.base_uri_domains,
                };
                for (index, item) in items.iter().enumerate() {
                    if index >= MAX_ENTRIES_PER_FIELD {
                        dropped.push(drop_value(
                            name,
                            item,
                            &format!("more than {MAX_ENTRIES_PER_FIELD} entries in this field"),
                        ));
                        continue;
                    }
                    let Value::String(raw) = item else {
                        dropped.push(drop_value(name, item, "not a string"));
                        continue;
                    };
                    match check_origin(raw, field == Field::Connect) {
                        Ok(origin) => {
                            if !target.contains(&origin) {
                                target.push(origin);
                            }
                        }
                        Err(reason) => dropped.push(drop_value(name, item, &reason)),
                    }
                }
            }
        }
        Some(other) => dropped.push(drop_value(
            "csp",
            other,
            "the csp metadata is not an object; the restrictive default applies",
        )),
    }
    CspOutcome {
        policy: policy_for(&granted),
        dropped,
        granted,
    }
}

fn policy_for(g: &GrantedCsp) -> String {
    fn directive(name: &str, fixed: &[&str], sources: &[String], empty: &str) -> String {
        let mut parts: Vec<&str> = vec![name];
        parts.extend_from_slice(fixed);
        parts.extend(sources.iter().map(String::as_str));
        if parts.len() == 1 {
            parts.push(empty);
        }
        parts.join(" ")
    }
    let mut script = vec!["'unsafe-inline'"];
    if g.wasm_unsafe_eval {
        script.push("'wasm-unsafe-eval'");
    }
    let r = &g.resource_domains;
    [
        "default-src 'none'".to_string(),
        directive("script-src", &script, r, "'none'"),
        directive("style-src", &["'unsafe-inline'"], r, "'none'"),
        directive("img-src", &["data:", "blob:"], r, "'none'"),
        directive("font-src", &["data:", "blob:"], r, "'none'"),
        directive("media-src", &["data:", "blob:"], r, "'none'"),
        directive("connect-src", &[], &g.connect_domains, "'none'"),
        directive("frame-src", &[], &g.frame_domains, "'none'"),
        "object-src 'none'".to_string(),
        directive("base-uri", &[], &g.base_uri_domains, "'none'"),
        "form-action 'none'".to_string(),
    ]
    .join("; ")
}

fn drop_value(field: &str, value: &Value, reason: &str) -> DroppedEntry {
    let shown = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let entry = if shown.chars().count() > MAX_REPORTED_LEN {
        let mut cut: String = shown.chars().take(MAX_REPORTED_LEN).collect();
        cut.push('…');
        cut
    } else {
        shown
    };
    DroppedEntry {
        field: field.to_string(),
        entry,
        reason: reason.to_string(),
    }
}

/// Checks one declared origin and returns its normalised form (lower-case, no trailing `/`),
/// or why it is refused.
pub fn check_origin(raw: &str, allow_wss: bool) -> Result<String, String> {
    let only = if allow_wss {
        "only https:// and wss:// origins are accepted"
    } else {
        "only https:// origins are accepted"
    };
    if raw.is_empty() {
        return Err("empty entry".into());
    }
    if raw.len() > MAX_ENTRY_LEN {
        return Err(format!("longer than {MAX_ENTRY_LEN} characters"));
    }
    if raw.chars().any(char::is_control) {
        return Err("contains a control character (such as a newline), which could end the directive".into());
    }
    if raw.chars().any(char::is_whitespace) {
        return Err("contains whitespace, which would add another source".into());
    }
    if raw.contains(';') {
        return Err("contains ';', which would start another directive".into());
    }
    if raw.contains(',') {
        return Err("contains ',', which would start another policy".into());
    }
    if raw.contains(['\'', '"', '`']) {
        return Err("keywords and quoted sources (such as 'self' or 'unsafe-eval') are not accepted".into());
    }
    if raw == "*" {
        return Err("a bare '*' would allow every origin".into());
    }
    if !raw.is_ascii() {
        return Err("contains non-ASCII characters; write the host in punycode (xn--)".into());
    }
    let Some((scheme, rest)) = raw.split_once("://") else {
        return match raw.split_once(':') {
            Some((scheme, _)) if !scheme.is_empty() => Err(format!(
                "the {}: scheme is not accepted; {only}",
                scheme.to_ascii_lowercase()
            )),
            _ => Err(format!("not an origin (no scheme); {only}")),
        };
    };
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "https" => {}
        "wss" if allow_wss => {}
        "wss" => return Err("wss:// is only accepted in connectDomains".into()),
        _ => return Err(format!("the {scheme}:// scheme is not accepted; {only}")),
    }
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '\\']) {
        return Err("has a path, query or fragment; only an origin (scheme://host[:port]) is accepted".into());
    }
    if authority.contains('@') {
        return Err("contains userinfo (user@host); not accepted".into());
    }
    if authority.starts_with('[') {
        return Err("IPv6 address literals are not accepted; declare a domain name".into());
    }
    let (host, port) = match authority.split_once(':') {
        None => (authority, None),
        Some((host, port)) => (host, Some(port)),
    };
    let port = match port {
        None => String::new(),
        Some("*") => return Err("a port wildcard (:*) is not accepted".into()),
        Some(p) => {
            let valid = !p.is_empty()
                && p.len() <= 5
                && p.bytes().all(|b| b.is_ascii_digit())
                && !p.starts_with('0')
                && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n));
            if !valid {
                return Err(format!("invalid port {p:?}"));
            }
            format!(":{p}")
        }
    };
    let host = host.to_ascii_lowercase();
    let (wildcard, base) = match host.strip_prefix("*.") {
        Some(base) => (true, base),
        None => (false, host.as_str()),
    };
    if base.contains('*') {
        return Err("'*' is only accepted as the whole first label (https://*.example.com)".into());
    }
    if base.is_empty() {
        return Err("empty host".into());
    }
    if base.len() > 253 {
        return Err("host name longer than 253 characters".into());
    }
    let labels: Vec<&str> = base.split('.').collect();
    if labels.iter().any(|l| l.is_empty()) {
        return Err("the host has an empty label (a leading, trailing or doubled '.')".into());
    }
    for label in &labels {
        let valid = label.len() <= 63
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(format!("invalid host label {label:?}"));
        }
    }
    let last = labels[labels.len() - 1];
    if last == "localhost" {
        return Err(
            "localhost names reach this machine (and, on Windows, the app's own ipc/tauri.localhost); not accepted"
                .into(),
        );
    }
    // What a URL parser would read as an IPv4 address: the last label is a number (decimal, or
    // hex with 0x). Covers dotted quads and the numeric/hex/short forms (127.1, 0x7f.1, 2130706433).
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || last
            .strip_prefix("0x")
            .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return Err("IP address literals are not accepted; declare a domain name".into());
    }
    if labels.len() < 2 {
        return Err(if wildcard {
            format!("'*.{base}' would cover a whole top-level domain")
        } else {
            format!("{base:?} is not a full domain name (it needs at least two labels)")
        });
    }
    Ok(format!("{scheme}://{host}{port}"))
}

/// The person's rules over every view's declared origins (the settings' allow list and block
/// list). They only ever take away: a declared origin on the block list is dropped, and when
/// the allow list is not empty, so is every declared origin it does not allow. Entries are
/// origins as a view declares them (`https://host`, `https://*.host`, `wss://host`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginRules {
    pub allowed: Vec<String>,
    pub blocked: Vec<String>,
}

/// The host of an accepted origin (`https://*.example.com:8443` → `*.example.com:8443`).
fn host_of(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, host)| host)
}

impl OriginRules {
    /// One rule as given in the settings, normalised; why not when it is not an origin.
    pub fn check_rule(raw: &str) -> Result<String, String> {
        check_origin(raw.trim(), true)
    }

    /// Why `origin` (accepted from a declaration) is dropped by these rules, if it is. A block
    /// rule covers its host and every name under it; an allow rule allows its own host (with a
    /// wildcard, the names under it).
    fn verdict(&self, origin: &str) -> Option<String> {
        let host = host_of(origin);
        let base = host.strip_prefix("*.").unwrap_or(host);
        for rule in &self.blocked {
            let rule_host = host_of(rule);
            let rule_base = rule_host.strip_prefix("*.").unwrap_or(rule_host);
            if base == rule_base || base.ends_with(&format!(".{rule_base}")) {
                return Some(format!("blocked by the settings' block list of view origins ({rule})"));
            }
        }
        if self.allowed.is_empty() {
            return None;
        }
        let allowed = self.allowed.iter().any(|rule| {
            let rule_host = host_of(rule);
            match rule_host.strip_prefix("*.") {
                // `*.x` covers the names under x, and a declared `*.x` (or `*.y.x`).
                Some(rule_base) => {
                    base.ends_with(&format!(".{rule_base}")) || (host.starts_with("*.") && base == rule_base)
                }
                None => host == rule_host,
            }
        });
        (!allowed).then(|| "not on the settings' allow list of view origins".to_string())
    }

    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty() && self.blocked.is_empty()
    }
}

/// `outcome` with `rules` applied: what they drop leaves the grant and the policy and is added
/// to [`CspOutcome::dropped`] (with the field it was declared in).
pub fn apply_rules(outcome: &CspOutcome, rules: &OriginRules) -> CspOutcome {
    if rules.is_empty() {
        return outcome.clone();
    }
    let mut granted = outcome.granted.clone();
    let mut dropped = outcome.dropped.clone();
    let fields: [(&str, &mut Vec<String>); 4] = [
        ("connectDomains", &mut granted.connect_domains),
        ("resourceDomains", &mut granted.resource_domains),
        ("frameDomains", &mut granted.frame_domains),
        ("baseUriDomains", &mut granted.base_uri_domains),
    ];
    for (field, origins) in fields {
        origins.retain(|origin| match rules.verdict(origin) {
            Some(reason) => {
                dropped.push(DroppedEntry {
                    field: field.to_string(),
                    entry: origin.clone(),
                    reason,
                });
                false
            }
            None => true,
        });
    }
    CspOutcome {
        policy: policy_for(&granted),
        dropped,
        granted,
    }
}

/// Every origin a view was granted to reach (connections, resources, frames), once each.
pub fn reachable_origins(granted: &GrantedCsp) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for origin in granted
        .connect_domains
        .iter()
        .chain(&granted.resource_domains)
        .chain(&granted.frame_domains)
    {
        if !all.contains(origin) {
            all.push(origin.clone());
        }
    }
    all
}

/// What a view's server could declare in `_meta.ui.csp` so that these violations (each a
/// violated directive and what it blocked, as the view's document reported them) would not
/// happen: the blocked origins, by the field that allows each, and for what no field can allow,
/// why. Only what [`build_csp`] would accept is suggested (an `http://` origin, a `data:` frame or
/// an inline handler cannot be allowed by a declaration).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CspSuggestion {
    /// `{"connectDomains": [...], "resourceDomains": [...], ...}`: only fields with entries.
    #[ts(type = "Record<string, string[]>")]
    pub csp: std::collections::BTreeMap<String, Vec<String>>,
    /// Violations no declaration can fix, each with why.
    pub unfixable: Vec<String>,
}

/// See [`CspSuggestion`].
pub fn suggest(violations: &[(String, String)]) -> CspSuggestion {
    let mut out = CspSuggestion::default();
    for (directive, blocked) in violations {
        // `script-src-elem`, `style-src-attr`… are their directive's.
        let base = directive.split_whitespace().next().unwrap_or("");
        let base = base
            .strip_suffix("-elem")
            .or_else(|| base.strip_suffix("-attr"))
            .unwrap_or(base);
        let field = match base {
            "connect-src" => "connectDomains",
            "script-src" | "style-src" | "img-src" | "font-src" | "media-src" => "resourceDomains",
            "frame-src" | "child-src" => "frameDomains",
            "base-uri" => "baseUriDomains",
            _ => {
                out.unfixable.push(format!(
                    "{directive} {blocked}: {base} cannot be opened by _meta.ui.csp"
                ));
                continue;
            }
        };
        let origin = origin_of(blocked);
        match origin.as_deref().map(|o| check_origin(o, field == "connectDomains")) {
            Some(Ok(origin)) => {
                let entries = out.csp.entry(field.to_string()).or_default();
                if !entries.contains(&origin) {
                    entries.push(origin);
                    entries.sort();
                }
            }
            Some(Err(why)) => out.unfixable.push(format!("{directive} {blocked}: {why}")),
            None => out.unfixable.push(format!(
                "{directive} {blocked}: not an origin a server can declare (inline code, eval, data: or the like)"
            )),
        }
    }
    out.unfixable.sort();
    out.unfixable.dedup();
    out
}

/// `scheme://host[:port]` of a URL, when it has one.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    (!host.is_empty()).then(|| format!("{}://{}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_rules_only_take_away() {
        let declared = serde_json::json!({
            "connectDomains": ["https://api.example.com", "wss://live.example.com", "https://tracker.net"],
            "resourceDomains": ["https://cdn.example.com", "https://*.static.example.org", "https://ads.tracker.net"],
        });
        let outcome = build_csp(Some(&declared));
        let none = apply_rules(&outcome, &OriginRules::default());
        assert_eq!(none, outcome);

        let blocked = apply_rules(
            &outcome,
            &OriginRules {
                allowed: vec![],
                blocked: vec!["https://tracker.net".into()],
            },
        );
        assert_eq!(
            blocked.granted.connect_domains,
            ["https://api.example.com", "wss://live.example.com"]
        );
        assert_eq!(
            blocked.granted.resource_domains,
            ["https://cdn.example.com", "https://*.static.example.org"]
        );
        assert!(!blocked.policy.contains("tracker"), "{}", blocked.policy);
        let new: Vec<_> = blocked
            .dropped
            .iter()
            .map(|d| (d.field.as_str(), d.entry.as_str()))
            .collect();
        assert_eq!(
            new,
            [
                ("connectDomains", "https://tracker.net"),
                ("resourceDomains", "https://ads.tracker.net")
            ]
        );
        assert!(blocked.dropped[0].reason.contains("block list"));

        let allowed = apply_rules(
            &outcome,
            &OriginRules {
                allowed: vec!["https://*.example.com".into(), "https://*.static.example.org".into()],
                blocked: vec![],
            },
        );
        assert_eq!(
            allowed.granted.connect_domains,
            ["https://api.example.com", "wss://live.example.com"]
        );
        assert_eq!(
            allowed.granted.resource_domains,
            ["https://cdn.example.com", "https://*.static.example.org"]
        );
        assert!(allowed.dropped.iter().all(|d| d.reason.contains("allow list")));
        assert_eq!(allowed.dropped.len(), 2);
        // Never loosening: an allow rule grants nothing that was not declared.
        assert!(!allowed.policy.contains("example.net"));
        assert_eq!(
            reachable_origins(&allowed.granted),
            [
                "https://api.example.com",
                "wss://live.example.com",
                "https://cdn.example.com",
                "https://*.static.example.org"
            ]
        );
        assert!(OriginRules::check_rule(" https://Example.com/ ").is_ok());
        assert!(OriginRules::check_rule("http://example.com").is_err());
    }
    use serde_json::json;

    const DEFAULT: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
        img-src data: blob:; font-src data: blob:; media-src data: blob:; connect-src 'none'; \
        frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";

    fn directive<'a>(policy: &'a str, name: &str) -> Vec<&'a str> {
        policy
            .split("; ")
            .find_map(|d| {
                let mut parts = d.split(' ');
                (parts.next() == Some(name)).then(|| parts.collect())
            })
            .unwrap_or_else(|| panic!("no {name} in {policy}"))
    }

    #[test]
    fn default_policy_when_nothing_is_declared() {
        for declared in [
            None,
            Some(json!(null)),
            Some(json!({})),
            Some(json!({"connectDomains": []})),
        ] {
            let out = build_csp(declared.as_ref());
            assert_eq!(out.policy, DEFAULT, "{declared:?}");
            assert!(out.dropped.is_empty());
            assert_eq!(out.granted, GrantedCsp::default());
        }
    }

    #[test]
    fn each_field_lands_in_its_directives() {
        let out = build_csp(Some(&json!({
            "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
            "resourceDomains": ["https://*.cdn.example.net", "https://fonts.example.org/"],
            "frameDomains": ["https://player.example.tv"],
            "baseUriDomains": ["https://base.example.com"],
            "wasmUnsafeEval": true,
        })));
        assert!(out.dropped.is_empty(), "{:?}", out.dropped);
        let p = &out.policy;
        assert_eq!(
            directive(p, "connect-src"),
            ["https://api.example.com", "wss://live.example.com:8443"]
        );
        let r = ["https://*.cdn.example.net", "https://fonts.example.org"];
        assert_eq!(
            directive(p, "script-src"),
            ["'unsafe-inline'", "'wasm-unsafe-eval'", r[0], r[1]]
        );
        assert_eq!(directive(p, "style-src"), ["'unsafe-inline'", r[0], r[1]]);
        for d in ["img-src", "font-src", "media-src"] {
            assert_eq!(directive(p, d), ["data:", "blob:", r[0], r[1]]);
        }
        assert_eq!(directive(p, "frame-src"), ["https://player.example.tv"]);
        assert_eq!(directive(p, "base-uri"), ["https://base.example.com"]);
        assert_eq!(directive(p, "default-src"), ["'none'"]);
        assert_eq!(directive(p, "object-src"), ["'none'"]);
        assert_eq!(directive(p, "form-action"), ["'none'"]);
        // Resource domains never reach connect-src, frame-src or base-uri.
        assert!(!directive(p, "connect-src").contains(&r[0]));
        assert_eq!(
            serde_json::to_value(&out.granted).unwrap(),
            json!({
                "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
                "resourceDomains": r,
                "frameDomains": ["https://player.example.tv"],
                "baseUriDomains": ["https://base.example.com"],
                "wasmUnsafeEval": true,
            })
        );
    }

    #[test]
    fn wasm_unsafe_eval_needs_true() {
        let off = build_csp(Some(&json!({"wasmUnsafeEval": false})));
        assert_eq!(off.policy, DEFAULT);
        let wrong = build_csp(Some(&json!({"wasmUnsafeEval": "true"})));
        assert_eq!(wrong.policy, DEFAULT);
        assert_eq!(wrong.dropped[0].field, "wasmUnsafeEval");
    }

    #[test]
    fn normalises_and_deduplicates() {
        let out = build_csp(Some(&json!({
            "connectDomains": ["HTTPS://API.Example.com/", "https://api.example.com", "https://api.example.com:443"]
        })));
        assert_eq!(
            directive(&out.policy, "connect-src"),
            ["https://api.example.com", "https://api.example.com:443"]
        );
        assert!(out.dropped.is_empty());
    }

    #[test]
    fn bad_entries_are_dropped_with_a_reason() {
        let bad = [
            "",
            "*",
            "'self'",
            "'unsafe-eval'",
            "'none'",
            "\"https://a.com\"",
            "https://a.com; script-src *",
            "https://a.com 'unsafe-eval'",
            "https://a.com\nscript-src *",
            "https://a.com\r\n",
            "https://a.com\t",
            "https://a.com\u{0}",
            "https://a.com,https://b.com",
            "https://a.com/path",
            "https://a.com//",
            "https://a.com?q=1",
            "https://a.com#frag",
            "https://a.com\\x",
            "https://user:pw@a.com",
            "https://user@a.com",
            "http://a.com",
            "ws://a.com",
            "wss://a.com",
            "data:",
            "data:text/html,x",
            "blob:",
            "javascript:alert(1)",
            "ipc:",
            "ipc://localhost",
            "tauri://localhost",
            "mcpview://localhost",
            "mcpview:",
            "a.com",
            "//a.com",
            "https://",
            "https://*",
            "https://*.com",
            "https://a.*.com",
            "https://*a.com",
            "https://**.a.com",
            "https://a.com:*",
            "https://a.com:",
            "https://a.com:0",
            "https://a.com:080",
            "https://a.com:65536",
            "https://a.com:99999999",
            "https://a.com:8x",
            "https://localhost",
            "https://localhost:8443",
            "https://ipc.localhost",
            "https://tauri.localhost",
            "https://*.localhost",
            "https://127.0.0.1",
            "https://192.168.1.10:8080",
            "https://10.0.0.1",
            "https://2130706433",
            "https://0x7f.1",
            "https://127.1",
            "https://[::1]",
            "https://[fe80::1%25eth0]",
            "https://intranet",
            "https://a..com",
            "https://.a.com",
            "https://a.com.",
            "https://-a.com",
            "https://a-.com",
            "https://a_b.com",
            "https://a%2ecom",
            "https://exämple.com",
            "https://a.com/\u{2028}",
        ];
        for entry in bad {
            let out = build_csp(Some(&json!({"resourceDomains": [entry]})));
            assert_eq!(out.policy, DEFAULT, "{entry:?} reached the policy");
            assert_eq!(out.dropped.len(), 1, "{entry:?}");
            assert_eq!(out.dropped[0].field, "resourceDomains");
            assert_eq!(out.dropped[0].entry, entry);
            assert!(!out.dropped[0].reason.is_empty());
        }
        let long = format!("https://{}.com", "a".repeat(400));
        assert_eq!(build_csp(Some(&json!({"frameDomains": [long]}))).dropped.len(), 1);
    }

    #[test]
    fn wss_only_in_connect_domains() {
        for field in ["resourceDomains", "frameDomains", "baseUriDomains"] {
            let out = build_csp(Some(&json!({field: ["wss://a.example.com"]})));
            assert_eq!(out.policy, DEFAULT);
            assert!(out.dropped[0].reason.contains("connectDomains"));
        }
        let ok = build_csp(Some(&json!({"connectDomains": ["wss://a.example.com"]})));
        assert_eq!(directive(&ok.policy, "connect-src"), ["wss://a.example.com"]);
    }

    #[test]
    fn injection_attempts_never_reach_the_policy() {
        for attack in [
            "https://a.com; script-src *",
            "https://a.com 'unsafe-eval'",
            "https://a.com\nscript-src *",
            "https://a.com;",
            "https://a.com,script-src *",
        ] {
            let out = build_csp(Some(&json!({"connectDomains": [attack], "resourceDomains": [attack]})));
            assert_eq!(out.policy, DEFAULT);
            assert_eq!(out.dropped.len(), 2);
            let reasons: Vec<_> = out.dropped.iter().map(|d| d.reason.as_str()).collect();
            assert!(reasons.iter().all(|r| !r.is_empty()), "{reasons:?}");
        }
    }

    #[test]
    fn non_strings_non_arrays_and_unknown_fields_are_dropped() {
        let out = build_csp(Some(&json!({
            "connectDomains": "https://a.example.com",
            "resourceDomains": [42, null, {"origin": "https://b.example.com"}, ["https://c.example.com"], true],
            "frameDomains": {"0": "https://d.example.com"},
            "redirectDomains": ["https://e.example.com"],
            "scriptSrc": "*",
        })));
        assert_eq!(out.policy, DEFAULT);
        let fields: Vec<_> = out.dropped.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "connectDomains",
                "resourceDomains",
                "resourceDomains",
                "resourceDomains",
                "resourceDomains",
                "resourceDomains",
                "frameDomains",
                "redirectDomains",
                "scriptSrc",
            ]
        );
        assert_eq!(out.dropped[1].entry, "42");
        assert!(out.dropped[7].reason.contains("unknown"));
        // A csp value that is not an object.
        for weird in [
            json!("https://a.example.com"),
            json!(["https://a.example.com"]),
            json!(1),
        ] {
            let out = build_csp(Some(&weird));
            assert_eq!(out.policy, DEFAULT);
            assert_eq!(out.dropped.len(), 1);
            assert_eq!(out.dropped[0].field, "csp");
        }
    }

    #[test]
    fn too_many_entries_are_cut() {
        let many: Vec<String> = (0..150).map(|i| format!("https://h{i}.example.com")).collect();
        let out = build_csp(Some(&json!({"connectDomains": many})));
        assert_eq!(directive(&out.policy, "connect-src").len(), MAX_ENTRIES_PER_FIELD);
        assert_eq!(out.dropped.len(), 50);
    }

    #[test]
    fn violations_suggest_the_fields_that_would_allow_them() {
        let v = |d: &str, b: &str| (d.to_string(), b.to_string());
        let out = suggest(&[
            v("connect-src", "https://api.example.com/v1/data?x=1"),
            v("connect-src", "wss://live.example.com/socket"),
            v("img-src", "https://cdn.example.com/a.png"),
            v("script-src-elem", "https://cdn.example.com/lib.js"),
            v("frame-src", "https://embed.example.com/"),
            v("connect-src", "https://api.example.com/other"),
            v("img-src", "http://plain.example.com/b.png"),
            v("script-src", "eval"),
            v("form-action", "https://forms.example.com/"),
        ]);
        assert_eq!(
            serde_json::to_value(&out.csp).unwrap(),
            json!({
                "connectDomains": ["https://api.example.com", "wss://live.example.com"],
                "resourceDomains": ["https://cdn.example.com"],
                "frameDomains": ["https://embed.example.com"],
            })
        );
        assert_eq!(out.unfixable.len(), 3, "{:?}", out.unfixable);
        assert!(
            out.unfixable
                .iter()
                .any(|u| u.contains("http://plain.example.com") && u.contains("https"))
        );
        assert!(out.unfixable.iter().any(|u| u.starts_with("script-src eval")));
        assert!(out.unfixable.iter().any(|u| u.contains("form-action cannot be opened")));
        // What is suggested is what the policy would then allow.
        let declared = serde_json::to_value(&out.csp).unwrap();
        let built = build_csp(Some(&declared));
        assert!(built.dropped.is_empty(), "{:?}", built.dropped);
        assert!(
            built
                .policy
                .contains("connect-src https://api.example.com wss://live.example.com")
        );
    }

    #[test]
    fn long_dropped_values_are_cut_in_the_report() {
        let long = format!("javascript:{}", "x".repeat(1000));
        let out = build_csp(Some(&json!({"connectDomains": [long]})));
        assert_eq!(out.dropped[0].entry.chars().count(), MAX_REPORTED_LEN + 1);
    }
}
