//! What a view does wrong, seen from inside its document: for `porthole check`'s live check and
//! `porthole snapshot`, the host puts [`shim`] first in the view's document (after the storage
//! shim), which reports through the frame's one channel ([`DIAGNOSTIC_METHOD`]):
//!
//! - `console.error` and `console.warn` calls (`kind: "console"`), and `console.log`, `info`
//!   and `debug` (level `info` or `debug`: the view inspector shows them; a check does not count
//!   them), at most [`MAX_LOG_REPORTS`] of those so chatter cannot crowd out errors,
//! - uncaught exceptions and unhandled promise rejections (`kind: "error"`; name and message, no
//!   stack: a stack names the view's unguessable URL),
//!
//! Content-Security-Policy violations are not the document's to report: the engine posts them
//! to the host itself (the policy's `report-uri`, on the view's own origin), and
//! [`from_csp_report`] reads them (`kind: "csp"`, with the directive and the blocked URI).
//!
//! The shim's reports are the view's own words about itself: a view that forges or hides them only
//! misleads a check of itself. Each is cut to [`MAX_TEXT`] characters, and the shim stops after
//! [`MAX_REPORTS`].
//!
//! With `still`, the shim also makes the view hold still for a picture: no CSS animations or
//! transitions, no blinking caret, and the clock (`Date`, `performance.now` excepted) fixed at
//! [`STILL_CLOCK_MS`], so the same input paints the same picture.

use serde::Serialize;
use serde_json::{Map, Value};

/// The notification the shim sends: `{kind, level, message, directive?, blockedUri?}`.
pub const DIAGNOSTIC_METHOD: &str = "porthole/notifications/diagnostic";
/// The most characters of one report's message kept.
pub const MAX_TEXT: usize = 500;
/// The most reports the shim sends from one document.
pub const MAX_REPORTS: usize = 100;
/// The most `console.log` / `info` / `debug` reports, counted apart.
pub const MAX_LOG_REPORTS: usize = 200;
/// The instant a still view's clock shows: 2026-01-01T12:00:00Z.
pub const STILL_CLOCK_MS: i64 = 1_767_268_800_000;

/// One thing a view reported about itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// `console`, `error` or `csp`.
    pub kind: String,
    /// `error`, `warning`, or `info` / `debug` (`console.log` and the like).
    pub level: String,
    pub message: String,
    /// The CSP directive violated (`csp` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directive: Option<String>,
    /// What the CSP blocked (`csp` only): a URL, or `inline` / `eval`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_uri: Option<String>,
}

impl Diagnostic {
    /// `console.log`, `info` or `debug` output: shown, never counted as a problem.
    pub fn is_log(&self) -> bool {
        matches!(self.level.as_str(), "info" | "debug")
    }
}

/// The script the host puts in a view's document to hear of its errors (see the module's notes).
pub fn shim(still: bool) -> String {
    let still_part = if still {
        format!(
            "var st=document.createElement('style');st.textContent='*,*::before,*::after{{animation:none!important;transition:none!important;caret-color:transparent!important;scroll-behavior:auto!important}}';\
(document.head||document.documentElement).appendChild(st);\
var RD=Date,T={STILL_CLOCK_MS};function FD(){{var a=[].slice.call(arguments);if(!(this instanceof FD))return new RD(T).toString();\
return a.length?new(Function.prototype.bind.apply(RD,[null].concat(a))):new RD(T);}}\
FD.prototype=RD.prototype;FD.now=function(){{return T;}};FD.parse=RD.parse;FD.UTC=RD.UTC;window.Date=FD;"
        )
    } else {
        String::new()
    };
    format!(
        "<script>/* Porthole: this view's errors, for porthole check */(function(){{\
var n=0,M={MAX_REPORTS},L={MAX_TEXT},nl=0,ML={MAX_LOG_REPORTS};\
function text(v){{try{{if(v instanceof Error)return v.name+': '+v.message;if(typeof v==='string')return v;return JSON.stringify(v);}}catch(e){{return String(v);}}}}\
function send(p){{var log=p.level==='info'||p.level==='debug';if(log?nl>=ML:n>=M)return;if(log)nl++;else n++;p.message=String(p.message).slice(0,L);\
try{{window.parent.postMessage({{jsonrpc:'2.0',method:'{DIAGNOSTIC_METHOD}',params:p}},'*');}}catch(e){{}}}}\
['error','warn'].forEach(function(k){{var o=console[k];console[k]=function(){{\
send({{kind:'console',level:k==='warn'?'warning':'error',message:[].map.call(arguments,text).join(' ')}});\
return o.apply(console,arguments);}};}});\
[['log','info'],['info','info'],['debug','debug']].forEach(function(k){{var o=console[k[0]];console[k[0]]=function(){{\
send({{kind:'console',level:k[1],message:[].map.call(arguments,text).join(' ')}});\
return o.apply(console,arguments);}};}});\
window.addEventListener('error',function(e){{if(e.target&&e.target!==window)return;send({{kind:'error',level:'error',message:e.error?text(e.error):String(e.message)}});}});\
window.addEventListener('unhandledrejection',function(e){{send({{kind:'error',level:'error',message:'unhandled rejection: '+text(e.reason)}});}});\
{still_part}}})();</script>"
    )
}

/// The violation a CSP report describes, as the engine posts it to the policy's `report-uri`:
/// `{"csp-report": {"effective-directive", "violated-directive", "blocked-uri", …}}`, or the
/// Reporting API's `[{"type": "csp-violation", "body": {"effectiveDirective", "blockedURL"}}]`.
/// The document's own URL (which holds its token) is not kept.
pub fn from_csp_report(body: &[u8]) -> Option<Diagnostic> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let cut = |v: Option<&Value>, most: usize| -> Option<String> {
        v.and_then(Value::as_str).map(|s| s.chars().take(most).collect())
    };
    let (directive, blocked) = if let Some(report) = value.get("csp-report") {
        let directive = cut(report.get("effective-directive"), 100).or_else(|| {
            cut(report.get("violated-directive"), 100).map(|d| d.split(' ').next().unwrap_or("").to_string())
        });
        (directive, cut(report.get("blocked-uri"), 500))
    } else {
        let body = value
            .as_array()?
            .iter()
            .find(|r| r["type"] == "csp-violation")?
            .get("body")?;
        (
            cut(body.get("effectiveDirective"), 100),
            cut(body.get("blockedURL"), 500),
        )
    };
    let directive = directive.filter(|d| !d.is_empty())?;
    let blocked = blocked.filter(|b| !b.is_empty()).unwrap_or_else(|| "inline".into());
    Some(Diagnostic {
        kind: "csp".into(),
        level: "error".into(),
        message: format!("refused by {directive}: {blocked}")
            .chars()
            .take(MAX_TEXT)
            .collect(),
        directive: Some(directive),
        blocked_uri: Some(blocked),
    })
}

/// The diagnostic a report carries, when it is one.
pub fn checked_report(params: &Map<String, Value>) -> Result<Diagnostic, String> {
    let text = |key: &str, most: usize| -> Option<String> {
        params
            .get(key)
            .and_then(Value::as_str)
            .map(|s| s.chars().take(most).collect())
    };
    let kind = text("kind", 20).ok_or("no kind")?;
    // CSP violations come from the engine (the policy's report-uri), never from the document.
    if !matches!(kind.as_str(), "console" | "error") {
        return Err(format!("unknown kind {kind:?}"));
    }
    let level = match text("level", 20).as_deref() {
        Some("warning") => "warning",
        Some("info") => "info",
        Some("debug") => "debug",
        _ => "error",
    };
    Ok(Diagnostic {
        kind,
        level: level.into(),
        message: text("message", MAX_TEXT).unwrap_or_default(),
        directive: text("directive", 100),
        blocked_uri: text("blockedUri", 500),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reports_are_checked_and_cut() {
        let params = |v: Value| v.as_object().unwrap().clone();
        let forged = checked_report(&params(json!({
            "kind": "csp", "level": "error", "message": "refused by img-src: https://x.test/a.png",
            "directive": "img-src", "blockedUri": "https://x.test/a.png"
        })));
        assert!(forged.is_err(), "a document cannot report CSP violations of its own");
        let long = checked_report(&params(
            json!({"kind": "console", "level": "warning", "message": "x".repeat(2000)}),
        ))
        .unwrap();
        assert_eq!(long.message.len(), MAX_TEXT);
        assert_eq!(long.level, "warning");
        let log = checked_report(&params(json!({"kind": "console", "level": "info", "message": "hi"}))).unwrap();
        assert!(log.is_log() && !long.is_log());
        assert!(
            !checked_report(&params(json!({"kind": "console", "level": "shout", "message": "?"})))
                .unwrap()
                .is_log()
        );
        assert!(checked_report(&params(json!({"kind": "other", "message": "?"}))).is_err());
        assert!(checked_report(&params(json!({"message": "?"}))).is_err());
    }

    #[test]
    fn csp_reports_are_read_in_both_formats_without_the_documents_url() {
        let report = json!({"csp-report": {
            "document-uri": "mcpview://abc/view/SECRET", "effective-directive": "img-src",
            "violated-directive": "img-src data: blob:", "blocked-uri": "https://images.example/a.png"}});
        let d = from_csp_report(report.to_string().as_bytes()).unwrap();
        assert_eq!(d.kind, "csp");
        assert_eq!(d.directive.as_deref(), Some("img-src"));
        assert_eq!(d.blocked_uri.as_deref(), Some("https://images.example/a.png"));
        assert_eq!(d.message, "refused by img-src: https://images.example/a.png");
        assert!(!serde_json::to_string(&d).unwrap().contains("SECRET"));
        let old = json!({"csp-report": {"violated-directive": "script-src 'none'", "blocked-uri": ""}});
        let d = from_csp_report(old.to_string().as_bytes()).unwrap();
        assert_eq!(
            (d.directive.as_deref(), d.blocked_uri.as_deref()),
            (Some("script-src"), Some("inline"))
        );
        let api = json!([{"type": "csp-violation", "body": {"effectiveDirective": "connect-src", "blockedURL": "https://x.example/"}}]);
        assert_eq!(
            from_csp_report(api.to_string().as_bytes())
                .unwrap()
                .directive
                .as_deref(),
            Some("connect-src")
        );
        assert!(from_csp_report(b"not json").is_none());
        assert!(from_csp_report(b"{}").is_none());
    }

    #[test]
    fn the_shim_reports_through_the_method_and_holds_still_only_when_asked() {
        let plain = shim(false);
        assert!(plain.contains(DIAGNOSTIC_METHOD));
        assert!(
            !plain.contains("securitypolicyviolation"),
            "the engine reports CSP to the host"
        );
        assert!(!plain.contains("animation:none"));
        let still = shim(true);
        assert!(still.contains("animation:none"));
        assert!(still.contains(&STILL_CLOCK_MS.to_string()));
        assert!(!still.contains("</script>") || still.matches("</script>").count() == 1);
    }
}
