//! The view CSP and the view loading rules through the crate's public API, including a property
//! test of the CSP builder and `load_view` against the real demo server (in-process, over
//! Streamable HTTP on loopback).

use std::time::Duration;

use base64::Engine as _;
use porthole_apps::csp::{CspOutcome, build_csp};
use porthole_apps::resource::{
    LEGACY_MIME, MAX_VIEW_BYTES, MIME, Permissions, Refusal, check_contents, load_view, view_uri,
};
use porthole_mcp::test_support::serve_over_http;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const DIRECTIVES: [&str; 11] = [
    "default-src",
    "script-src",
    "style-src",
    "img-src",
    "font-src",
    "media-src",
    "connect-src",
    "frame-src",
    "object-src",
    "base-uri",
    "form-action",
];

/// The origin grammar, written independently of the crate: `https://` (or `wss://` where
/// allowed), an optional leading `*.`, two or more DNS labels (lowercase), an optional port.
fn is_origin(source: &str, allow_wss: bool) -> bool {
    let Some((scheme, rest)) = source.split_once("://") else {
        return false;
    };
    if !(scheme == "https" || (allow_wss && scheme == "wss")) {
        return false;
    }
    let (host, port) = match rest.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    if let Some(p) = port {
        let ok = (1..=5).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_digit())
            && !p.starts_with('0')
            && p.parse::<u32>().unwrap() <= 65535;
        if !ok {
            return false;
        }
    }
    let host = host.strip_prefix("*.").unwrap_or(host);
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
        && !labels.last().unwrap().bytes().all(|b| b.is_ascii_digit())
        && *labels.last().unwrap() != "localhost"
}

/// Checks everything the policy must always be; returns its directives' sources by name.
fn check_policy(out: &CspOutcome, declared: &Value) {
    let policy = &out.policy;
    assert!(
        policy.bytes().all(|b| (0x20..0x7f).contains(&b)),
        "not a single header line: {policy:?}"
    );
    assert!(!policy.contains("'unsafe-eval'"), "{policy}");
    let directives: Vec<&str> = policy.split("; ").collect();
    let names: Vec<&str> = directives.iter().map(|d| d.split(' ').next().unwrap()).collect();
    assert_eq!(names, DIRECTIVES, "{policy}");
    for d in directives {
        let mut parts = d.split(' ');
        let name = parts.next().unwrap();
        let sources: Vec<&str> = parts.collect();
        assert!(!sources.is_empty(), "{d}");
        if sources.contains(&"'none'") {
            assert_eq!(sources, ["'none'"], "'none' must stand alone: {d}");
        }
        let field = match name {
            "connect-src" => Some("connectDomains"),
            "frame-src" => Some("frameDomains"),
            "base-uri" => Some("baseUriDomains"),
            "script-src" | "style-src" | "img-src" | "font-src" | "media-src" => Some("resourceDomains"),
            _ => None,
        };
        for s in sources {
            assert!(!s.is_empty() && s != "*", "bare or empty source in {d}");
            assert!(!s.contains([';', ',']), "{d}");
            let keyword = match name {
                "script-src" => ["'unsafe-inline'", "'wasm-unsafe-eval'"].contains(&s),
                "style-src" => s == "'unsafe-inline'",
                "img-src" | "font-src" | "media-src" => s == "data:" || s == "blob:",
                _ => false,
            };
            if s == "'none'" || keyword {
                continue;
            }
            let field = field.unwrap_or_else(|| panic!("{name} has an origin: {d}"));
            assert!(is_origin(s, field == "connectDomains"), "{s:?} in {d}");
            // No loosening: every origin was declared in its field (up to case and a trailing '/').
            let declared_here = declared
                .get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .any(|e| {
                    let e = e.strip_suffix('/').unwrap_or(e);
                    e.eq_ignore_ascii_case(s)
                });
            assert!(declared_here, "{s} was never declared in {field}: {declared}");
        }
    }
}

fn entry_strategy() -> impl Strategy<Value = Value> {
    let scheme = prop::sample::select(vec![
        "https://",
        "HTTPS://",
        "wss://",
        "http://",
        "ws://",
        "",
        "data:",
        "blob:",
        "javascript:",
        "tauri://",
        "mcpview://",
        "ipc://",
        "'self'",
        "*",
    ]);
    let host = prop::sample::select(vec![
        "example.com",
        "*.example.com",
        "a-b.example.co.uk",
        "localhost",
        "127.0.0.1",
        "[::1]",
        "*",
        "com",
        "*.com",
        "xn--bcher-kva.example",
        "a..b",
        "-a.com",
        "",
    ]);
    let suffix = prop::sample::select(vec![
        "",
        "/",
        ":443",
        ":8443/",
        ":0",
        ":*",
        "/path",
        "?q",
        "#f",
        "; script-src *",
        " 'unsafe-eval'",
        "\nscript-src *",
        ",x",
        "@evil.com",
        "'",
        "\"",
        "\t",
        "\u{0}",
    ]);
    let structured = (scheme, host, suffix).prop_map(|(a, b, c)| Value::String(format!("{a}{b}{c}")));
    let junk = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        Just(json!({"origin": "https://example.com"})),
        Just(json!(["https://example.com"])),
    ];
    // Mostly-valid origins, to exercise the edges of the grammar (labels, ports, numbers).
    let near_valid =
        r"(https|wss|HTTPS)://(\*\.)?[a-z0-9-]{1,8}(\.[a-zA-Z0-9-]{0,8}){0,3}(:[0-9]{0,6})?/?".prop_map(Value::String);
    let from_corpus = prop::sample::select(corpus_entries());
    prop_oneof![
        4 => near_valid,
        4 => structured,
        2 => from_corpus,
        3 => any::<String>().prop_map(Value::String),
        2 => "[ -~]{0,40}".prop_map(Value::String),
        1 => junk,
    ]
}

/// The kept corpus of CSP declarations (`tests/corpus/csp/`: the hostile server's, the demo
/// server's shape, every field, injections, wrong types): per file, its name, the declaration and
/// the origins it must be granted (by field).
fn corpus() -> Vec<(String, Value, Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/csp");
    let mut files: Vec<(String, Value, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, file["declared"].clone(), file["granted"].clone())
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(files.len() >= 5, "the CSP corpus is missing: {}", dir.display());
    files
}

/// Every entry the corpus declares, for the fuzz to draw from.
fn corpus_entries() -> Vec<Value> {
    corpus()
        .into_iter()
        .filter_map(|(_, declared, _)| declared.as_object().cloned())
        .flat_map(|fields| {
            fields
                .into_iter()
                .flat_map(|(_, v)| v.as_array().cloned().unwrap_or_default())
        })
        .collect()
}

#[test]
fn the_corpus_grants_exactly_its_expected_origins() {
    for (name, declared, expected) in corpus() {
        let out = build_csp(Some(&declared));
        check_policy(&out, &declared);
        let g = &out.granted;
        for (field, granted) in [
            ("connectDomains", &g.connect_domains),
            ("resourceDomains", &g.resource_domains),
            ("frameDomains", &g.frame_domains),
            ("baseUriDomains", &g.base_uri_domains),
        ] {
            let want: Vec<&str> = expected[field]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(granted, &want, "{name}: {field}");
            // Every declared entry is granted or reported as dropped, not both.
            for entry in declared.get(field).and_then(Value::as_array).into_iter().flatten() {
                let shown = entry.as_str().map_or_else(|| entry.to_string(), str::to_string);
                let landed = granted
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case(shown.strip_suffix('/').unwrap_or(&shown)));
                let reported = out.dropped.iter().any(|d| d.field == field && d.entry == shown);
                assert!(
                    landed != reported,
                    "{name}: {field} {shown:?} granted {landed}, reported {reported}"
                );
            }
        }
    }
}

fn field_value_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::collection::vec(entry_strategy(), 0..8).prop_map(Value::Array),
        1 => entry_strategy(),
        1 => any::<bool>().prop_map(Value::Bool),
    ]
}

fn csp_strategy() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "connectDomains",
        "resourceDomains",
        "frameDomains",
        "baseUriDomains",
        "wasmUnsafeEval",
        "scriptSrc",
        "redirectDomains",
    ]);
    prop_oneof![
        9 => prop::collection::btree_map(key, field_value_strategy(), 0..7)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        1 => prop::sample::select(corpus().into_iter().map(|(_, declared, _)| declared).collect::<Vec<_>>()),
        1 => entry_strategy(),
    ]
}

proptest! {
    // Failures are kept in proptest-regressions/csp_resource.txt (committed) and replayed first;
    // 256 cases unless PROPTEST_CASES says otherwise.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/csp_resource.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn csp_policy_is_always_well_formed(declared in csp_strategy()) {
        let out = build_csp(Some(&declared));
        check_policy(&out, &declared);
    }

    #[test]
    fn any_string_in_any_field_is_safe(entry in any::<String>(), field in prop::sample::select(vec![
        "connectDomains", "resourceDomains", "frameDomains", "baseUriDomains",
    ])) {
        let declared = json!({ field: [entry.clone()] });
        let out = build_csp(Some(&declared));
        check_policy(&out, &declared);
        // Each entry either lands or is reported, never both and never silently lost.
        let g = &out.granted;
        let granted = g.connect_domains.len() + g.resource_domains.len() + g.frame_domains.len()
            + g.base_uri_domains.len();
        prop_assert_eq!(granted + out.dropped.len(), 1, "{:?} {:?}", out.policy, out.dropped);
    }
}

// ---- resource rules ----

const URI: &str = "ui://srv/view.html";
const HTML: &str = "<!doctype html><html><body>hello</body></html>";

fn text_item(mime: &str, text: &str) -> Value {
    json!({"uri": URI, "mimeType": mime, "text": text})
}

fn read(items: Vec<Value>) -> Value {
    json!({ "contents": items })
}

fn refused(r: Result<porthole_apps::resource::LoadedView, Refusal>) -> String {
    match r {
        Ok(v) => panic!("accepted {}", v.uri),
        Err(e) => {
            assert_eq!(e.to_string(), e.reason);
            e.reason
        }
    }
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn mime_variants_and_legacy() {
    assert_eq!(MIME, porthole_mcp::MCP_APP_MIME);
    for ok in [
        MIME,
        "text/html; profile=mcp-app",
        "text/html ;profile=MCP-App; charset=utf-8",
        LEGACY_MIME,
        // An OpenAI Apps SDK widget: shown, as one (`window.openai`).
        "text/html+skybridge",
    ] {
        let view = check_contents(URI, &read(vec![text_item(ok, HTML)]), None).unwrap();
        assert_eq!(&*view.html, HTML, "{ok}");
    }
    for bad in ["text/html", "text/plain", "text/html;profile=mcp"] {
        let reason = refused(check_contents(URI, &read(vec![text_item(bad, HTML)]), None));
        assert!(reason.starts_with("wrong MIME type"), "{reason}");
        assert!(reason.contains(bad), "{reason}");
    }
}

#[test]
fn blob_is_decoded_and_bad_base64_refused() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(HTML);
    let item = json!({"uri": URI, "mimeType": MIME, "blob": b64});
    let view = check_contents(URI, &read(vec![item]), None).unwrap();
    assert_eq!(&*view.html, HTML);
    assert_eq!(view.sha256, sha_hex(HTML.as_bytes()));
    // Line-wrapped base64 (as some encoders write it) is fine too.
    let wrapped: String = b64
        .as_bytes()
        .chunks(16)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let item = json!({"uri": URI, "mimeType": MIME, "blob": wrapped});
    assert_eq!(check_contents(URI, &read(vec![item]), None).unwrap().html, HTML.into());

    let bad = json!({"uri": URI, "mimeType": MIME, "blob": "not base64!!"});
    assert!(refused(check_contents(URI, &read(vec![bad]), None)).contains("base64"));
    let latin1 = base64::engine::general_purpose::STANDARD.encode([b'<', b'p', b'>', 0xe9, 0xff]);
    let bad = json!({"uri": URI, "mimeType": MIME, "blob": latin1});
    assert!(refused(check_contents(URI, &read(vec![bad]), None)).contains("UTF-8"));
    let neither = json!({"uri": URI, "mimeType": MIME});
    assert!(refused(check_contents(URI, &read(vec![neither]), None)).contains("neither"));
}

#[test]
fn size_limit_is_exact() {
    let at_limit = "a".repeat(MAX_VIEW_BYTES);
    let view = check_contents(URI, &read(vec![text_item(MIME, &at_limit)]), None).unwrap();
    assert_eq!(view.html.len(), MAX_VIEW_BYTES);
    let over = "a".repeat(MAX_VIEW_BYTES + 1);
    let reason = refused(check_contents(URI, &read(vec![text_item(MIME, &over)]), None));
    assert!(reason.contains(&(MAX_VIEW_BYTES + 1).to_string()), "{reason}");
    // The limit is on the decoded bytes of a blob.
    let blob = base64::engine::general_purpose::STANDARD.encode(over.as_bytes());
    let item = json!({"uri": URI, "mimeType": MIME, "blob": blob});
    let reason = refused(check_contents(URI, &read(vec![item]), None));
    assert!(reason.contains(&(MAX_VIEW_BYTES + 1).to_string()), "{reason}");
    let blob = base64::engine::general_purpose::STANDARD.encode(at_limit.as_bytes());
    let item = json!({"uri": URI, "mimeType": MIME, "blob": blob});
    assert!(check_contents(URI, &read(vec![item]), None).is_ok());
}

#[test]
fn empty_and_missing_contents_are_refused() {
    assert!(refused(check_contents(URI, &read(vec![text_item(MIME, "")]), None)).contains("empty"));
    assert!(refused(check_contents(URI, &read(vec![text_item(MIME, " \n\t")]), None)).contains("empty"));
    assert!(refused(check_contents(URI, &read(vec![]), None)).contains("no contents"));
    assert!(refused(check_contents(URI, &json!({}), None)).contains("no contents"));
}

#[test]
fn the_item_with_the_requested_uri_is_chosen() {
    let other = json!({"uri": "ui://srv/other.html", "mimeType": MIME, "text": "<p>other</p>"});
    let mine = json!({"uri": URI, "mimeType": MIME, "text": "<p>mine</p>"});
    let view = check_contents(URI, &read(vec![other.clone(), mine]), None).unwrap();
    assert_eq!(&*view.html, "<p>mine</p>");
    // No item has the requested URI: the first one.
    let view = check_contents(URI, &read(vec![other]), None).unwrap();
    assert_eq!(&*view.html, "<p>other</p>");
    assert_eq!(view.uri, URI);
    // The chosen item's MIME type decides, not another item's.
    let wrong = json!({"uri": URI, "mimeType": "text/html", "text": "<p>mine</p>"});
    let good = json!({"uri": "ui://srv/other.html", "mimeType": MIME, "text": "<p>other</p>"});
    assert!(refused(check_contents(URI, &read(vec![good, wrong]), None)).starts_with("wrong MIME"));
}

#[test]
fn content_meta_wins_over_listing_meta() {
    let mut item = text_item(MIME, HTML);
    item["_meta"] = json!({"ui": {
        "csp": {"connectDomains": ["https://content.example.com"]},
        "prefersBorder": false,
    }});
    let listing = json!({"ui": {
        "csp": {"connectDomains": ["https://listing.example.com"]},
        "prefersBorder": true,
        "domain": "abc.example-host.com",
        "permissions": {"camera": {}},
    }});
    let view = check_contents(URI, &read(vec![item]), Some(&listing)).unwrap();
    assert!(view.csp.policy.contains("connect-src https://content.example.com;"));
    assert!(!view.csp.policy.contains("listing.example.com"));
    assert_eq!(view.prefers_border, Some(false));
    // Keys only the listing has still apply.
    assert_eq!(view.domain.as_deref(), Some("abc.example-host.com"));
    assert!(view.permissions.camera);
    assert_eq!(view.meta["prefersBorder"], json!(false));
    assert_eq!(view.meta["domain"], json!("abc.example-host.com"));

    // Listing alone.
    let view = check_contents(URI, &read(vec![text_item(MIME, HTML)]), Some(&listing)).unwrap();
    assert!(view.csp.policy.contains("connect-src https://listing.example.com;"));
    assert_eq!(view.prefers_border, Some(true));

    // `meta` (Python SDK) is read when `_meta` has no ui; `_meta` wins when both do.
    let mut py = text_item(MIME, HTML);
    py["meta"] = json!({"ui": {"prefersBorder": true}});
    assert_eq!(
        check_contents(URI, &read(vec![py.clone()]), None)
            .unwrap()
            .prefers_border,
        Some(true)
    );
    py["_meta"] = json!({"ui": {"prefersBorder": false}});
    assert_eq!(
        check_contents(URI, &read(vec![py]), None).unwrap().prefers_border,
        Some(false)
    );
}

#[test]
fn permissions_prefers_border_and_bad_meta() {
    let mut item = text_item(MIME, HTML);
    item["_meta"] = json!({"ui": {
        "permissions": {"camera": {}, "microphone": true, "geolocation": false, "clipboardWrite": {}, "usb": {}},
        "prefersBorder": "yes",
        "domain": 7,
        "csp": {"connectDomains": ["https://ok.example.com", "http://bad.example.com"]},
    }});
    let view = check_contents(URI, &read(vec![item]), None).unwrap();
    assert_eq!(
        view.permissions,
        Permissions {
            camera: true,
            microphone: true,
            geolocation: false,
            clipboard_write: true,
        }
    );
    assert_eq!(
        view.permissions.allow_attribute(),
        "camera; microphone; clipboard-write"
    );
    assert_eq!(view.prefers_border, None);
    assert_eq!(view.domain, None);
    assert_eq!(view.problems.len(), 3, "{:?}", view.problems);
    assert_eq!(view.csp.dropped.len(), 1);
    assert_eq!(view.csp.dropped[0].entry, "http://bad.example.com");
    assert!(view.csp.policy.contains("connect-src https://ok.example.com;"));

    let mut item = text_item(MIME, HTML);
    item["_meta"] = json!({"ui": "not an object"});
    let view = check_contents(URI, &read(vec![item]), None).unwrap();
    assert_eq!(view.meta, json!({}));
    assert_eq!(view.csp.policy, build_csp(None).policy);
    assert_eq!(view.permissions.allow_attribute(), "");
}

#[test]
fn view_uri_rules() {
    let tool = Some("ui://srv/tool.html");
    assert_eq!(view_uri(tool, None).as_deref(), tool);
    let result = json!({"content": [], "structuredContent": {"resourceUri": "ui://srv/other.html"}});
    assert_eq!(view_uri(tool, Some(&result)).as_deref(), Some("ui://srv/other.html"));
    for ignored in [
        json!({"structuredContent": {"resourceUri": "https://evil.example.com/x.html"}}),
        json!({"structuredContent": {"resourceUri": "ui://"}}),
        json!({"structuredContent": {"resourceUri": 5}}),
        json!({"structuredContent": {"resourceUri": "javascript:alert(1)"}}),
        json!({"structuredContent": {"resourceUri": "ui://srv/a b.html"}}),
        json!({"structuredContent": "ui://srv/other.html"}),
        json!({"resourceUri": "ui://srv/other.html"}),
    ] {
        assert_eq!(view_uri(tool, Some(&ignored)).as_deref(), tool, "{ignored}");
    }
    // No (valid) view on the tool: no view at all, whatever the result names.
    assert_eq!(view_uri(None, Some(&result)), None);
    assert_eq!(view_uri(Some("https://srv/tool.html"), Some(&result)), None);
    assert_eq!(view_uri(Some("https://srv/tool.html"), None), None);
}

// ---- load_view against the real demo server ----

async fn connected(url: &str) -> porthole_mcp::Servers {
    let config = porthole_mcp::ServerConfig::http("demo", url).with_timeout(Duration::from_secs(20));
    let servers = porthole_mcp::Servers::start(vec![config], porthole_mcp::ConnectOptions::default());
    let statuses = tokio::time::timeout(Duration::from_secs(30), servers.settled())
        .await
        .expect("the demo server did not connect in time");
    assert_eq!(
        statuses[0].state,
        porthole_mcp::ServerState::Connected,
        "{:?}",
        statuses[0].error
    );
    servers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_view_from_the_demo_server() {
    let url = serve_over_http(porthole_demo_server::DemoServer::new).await;
    let servers = connected(&url).await;

    // The path a tool call takes: the catalog's UI link, then the view.
    let status = servers.statuses().remove(0);
    let tool = status.tools.iter().find(|t| t.name == "system_monitor").unwrap();
    let uri = view_uri(tool.ui_resource_uri.as_deref(), None).unwrap();
    let expected = porthole_demo_server::VIEWS
        .iter()
        .find(|v| v.uri == uri)
        .expect("system_monitor's view is a demo view");
    let view = load_view(&servers, "demo", &uri).await.unwrap();
    assert_eq!(view.uri, "ui://porthole-demo/system-monitor.html");
    assert_eq!(*view.html, *expected.html());
    assert_eq!(view.sha256, sha_hex(expected.html().as_bytes()));
    assert_eq!(view.prefers_border, Some(true));
    assert_eq!(view.csp.policy, build_csp(None).policy);
    assert!(view.csp.dropped.is_empty());
    assert_eq!(view.permissions, Permissions::default());

    // A view that declares connectDomains gets exactly them.
    let weather = load_view(&servers, "demo", "ui://porthole-demo/weather.html")
        .await
        .unwrap();
    assert!(
        weather.csp.policy.contains("; connect-src https://api.open-meteo.com;"),
        "{}",
        weather.csp.policy
    );

    // An unknown ui:// resource: refused with the server's own reason.
    let reason = load_view(&servers, "demo", "ui://porthole-demo/nope.html")
        .await
        .unwrap_err()
        .reason;
    assert!(reason.starts_with("the server could not read it"), "{reason}");
    assert!(reason.contains("no resource ui://porthole-demo/nope.html"), "{reason}");

    servers.shutdown().await;
}

#[tokio::test]
async fn load_view_refuses_non_ui_uris_without_asking() {
    // No server at all: a refusal that mentions the URI scheme proves nothing was contacted.
    let servers = porthole_mcp::Servers::start(vec![], porthole_mcp::ConnectOptions::default());
    for uri in [
        "https://example.com/view.html",
        "file:///etc/passwd",
        "ui://",
        "UI://srv/x.html",
    ] {
        let reason = load_view(&servers, "nobody", uri).await.unwrap_err().reason;
        assert!(reason.contains("not a ui:// URI"), "{uri}: {reason}");
    }
    let reason = load_view(&servers, "nobody", "ui://srv/x.html")
        .await
        .unwrap_err()
        .reason;
    assert!(reason.contains("could not read it"), "{reason}");
}
