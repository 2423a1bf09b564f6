//! What a view does wrong, seen from inside its document: for `porthole check`'s live check and
//! `porthole snapshot`, the host puts [`shim`] first in the view's document (after the storage
//! shim), which reports through the frame's one channel ([`DIAGNOSTIC_METHOD`]):
//!
//! - `console.error` and `console.warn` calls (`kind: "console"`), and `console.log`, `info`
//!   and `debug` (level `info` or `debug`: the view inspector shows them; a check does not count
//!   them), at most [`MAX_LOG_REPORTS`] of those so chatter cannot crowd out errors,
//! - uncaught exceptions and unhandled promise rejections (`kind: "error"`; name and message, no
//!   stack: a stack names the view's unguessable URL),
//! - Content-Security-Policy violations (`kind: "csp"`, with the directive and the blocked URI),
//!   which only the document itself can see.
//!
//! The reports are the view's own words about itself: a view that forges or hides them only
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
document.addEventListener('securitypolicyviolation',function(e){{send({{kind:'csp',level:'error',\
message:'refused by '+e.effectiveDirective+': '+(e.blockedURI||'inline'),directive:e.effectiveDirective,blockedUri:e.blockedURI||'inline'}});}});\
{still_part}}})();</script>"
    )
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
    if !matches!(kind.as_str(), "console" | "error" | "csp") {
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
        let csp = checked_report(&params(json!({
            "kind": "csp", "level": "error", "message": "refused by img-src: https://x.test/a.png",
            "directive": "img-src", "blockedUri": "https://x.test/a.png"
        })))
        .unwrap();
        assert_eq!(csp.directive.as_deref(), Some("img-src"));
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
    fn the_shim_reports_through_the_method_and_holds_still_only_when_asked() {
        let plain = shim(false);
        assert!(plain.contains(DIAGNOSTIC_METHOD));
        assert!(plain.contains("securitypolicyviolation"));
        assert!(!plain.contains("animation:none"));
        let still = shim(true);
        assert!(still.contains("animation:none"));
        assert!(still.contains(&STILL_CLOCK_MS.to_string()));
        assert!(!still.contains("</script>") || still.matches("</script>").count() == 1);
    }
}
