//! Lasting `localStorage` for views.
//!
//! Each server's views run on an origin of their own (`mcpview://<origin>/`, with
//! `allow-same-origin`), so `localStorage` and IndexedDB work. WebKitGTK keeps a frame's storage
//! only for the session, though: a frame whose origin is not the top page's gets in-memory
//! storage, whatever the settings (measured on 2.50.6, see ARCHITECTURE.md). So the host keeps
//! each origin's `localStorage` itself: the document it serves starts with [`shim`], which
//!
//! - fills an empty `localStorage` from the copy the host kept (after a restart), and
//! - reports the whole of it ([`STORAGE_METHOD`]) to the host, through the frame's one channel,
//!   whenever it changed: checked every second and when the page goes away.
//!
//! The report is the view's own data about itself, so a view that forges or suppresses it only
//! affects its own storage. It is refused above [`MAX_STORAGE_BYTES`].

use serde_json::{Map, Value};

/// The notification the shim sends: `{localStorage: {key: value, …}}`.
pub const STORAGE_METHOD: &str = "porthole/notifications/storage";

/// The most `localStorage` (as compact JSON) the host keeps for one origin.
pub const MAX_STORAGE_BYTES: usize = 3 << 20;

/// The script the host puts first in a view's document, holding `seed` (what it kept).
pub fn shim(seed: &Map<String, Value>) -> String {
    // `</` is written `<\/` so no value can end the script element.
    let seed = serde_json::to_string(seed)
        .unwrap_or_else(|_| "{}".into())
        .replace("</", "<\\/");
    format!(
        "<script>/* Porthole: this view's localStorage, kept by the host */(function(){{\
var s;try{{s=window.localStorage;}}catch(e){{return;}}if(!s)return;\
var seed={seed};\
try{{if(s.length===0){{for(var k in seed){{if(Object.prototype.hasOwnProperty.call(seed,k))s.setItem(k,String(seed[k]));}}}}}}catch(e){{}}\
function all(){{var o={{}};for(var i=0;i<s.length;i++){{var k=s.key(i);if(k!==null)o[k]=s.getItem(k);}}return o;}}\
var last;try{{last=JSON.stringify(all());}}catch(e){{last=null;}}\
function report(){{try{{var o=all(),j=JSON.stringify(o);if(j===last)return;last=j;\
window.parent.postMessage({{jsonrpc:\"2.0\",method:\"{STORAGE_METHOD}\",params:{{localStorage:o}}}},\"*\");}}catch(e){{}}}}\
setInterval(report,1000);window.addEventListener(\"pagehide\",report);\
document.addEventListener(\"visibilitychange\",report);}})();</script>"
    )
}

/// `html` with `script` first: right after the `<head>` tag when there is one (so it runs
/// before the view's own scripts), else before everything. Tags are found in any case, without
/// a lowered copy of the document (views built with the SDKs are ~600 KB; this runs for each
/// document a view loads).
pub fn inject(html: &str, script: &str) -> String {
    let bytes = html.as_bytes();
    let at = find_ignoring_case(bytes, b"<head")
        .and_then(|i| bytes[i..].iter().position(|&b| b == b'>').map(|j| i + j + 1))
        // A `<head` inside a comment or script before the real one is not worth parsing for:
        // the shim only needs to come before the view's scripts, which a later `<head>` precedes.
        .filter(|&end| find_ignoring_case(&bytes[..end], b"<script").is_none())
        .unwrap_or(0);
    let mut out = String::with_capacity(html.len() + script.len());
    out.push_str(&html[..at]);
    out.push_str(script);
    out.push_str(&html[at..]);
    out
}

/// Where `needle` (ASCII, lower case) first occurs in `haystack`, ASCII letters in any case.
fn find_ignoring_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// The `localStorage` a report carries, when it is one: an object of strings, at most
/// [`MAX_STORAGE_BYTES`] as JSON.
pub fn checked_report(params: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let Some(Value::Object(storage)) = params.get("localStorage") else {
        return Err("localStorage is not an object".into());
    };
    if let Some((key, _)) = storage.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!("the value of {key:?} is not a string"));
    }
    let size = serde_json::to_string(storage).map(|s| s.len()).unwrap_or(usize::MAX);
    if size > MAX_STORAGE_BYTES {
        return Err(format!(
            "{size} bytes, over the {} MiB kept per view origin",
            MAX_STORAGE_BYTES >> 20
        ));
    }
    Ok(storage.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shim_goes_first_in_the_head() {
        let script = "<script>X</script>";
        assert_eq!(
            inject(
                "<!doctype html><html><head><title>t</title><script>view()</script></head></html>",
                script
            ),
            "<!doctype html><html><head><script>X</script><title>t</title><script>view()</script></head></html>"
        );
        assert_eq!(
            inject("<HTML><HEAD lang=en>", script),
            "<HTML><HEAD lang=en><script>X</script>"
        );
        assert_eq!(inject("<p>no head</p>", script), "<script>X</script><p>no head</p>");
        // A script before any head: the shim goes before it.
        assert_eq!(
            inject("<script>early()</script><head></head>", script),
            "<script>X</script><script>early()</script><head></head>"
        );
    }

    #[test]
    fn the_head_is_found_in_any_case_where_a_lowered_copy_would_find_it() {
        // What `inject` did before it stopped lowering a copy of the whole document.
        fn by_lowered_copy(html: &str, script: &str) -> String {
            let lower = html.to_ascii_lowercase();
            let at = lower
                .find("<head")
                .and_then(|i| lower[i..].find('>').map(|j| i + j + 1))
                .filter(|&end| !lower[..end].contains("<script"))
                .unwrap_or(0);
            format!("{}{script}{}", &html[..at], &html[at..])
        }
        let script = "<script>X</script>";
        for html in [
            "",
            "<",
            "<head",
            "<head>",
            "<HeAd>",
            "<HEAD\n data-x=\"é\">après</HEAD>",
            "<!-- ünïcödé --><head><title>x</title>",
            "<p>no head, a <header>é</header></p>",
            "<SCRIPT>early()</SCRIPT><head></head>",
            "<head><ScRiPt>view()</script></head>",
            "<html><<head>>",
            "\u{1F600}<head>\u{1F600}<script></script>",
        ] {
            assert_eq!(inject(html, script), by_lowered_copy(html, script), "{html:?}");
        }
    }

    #[test]
    fn no_value_can_end_the_script() {
        let mut seed = Map::new();
        seed.insert("k".into(), json!("</script><script>alert(1)</script>"));
        let script = shim(&seed);
        assert_eq!(script.matches("</script>").count(), 1, "{script}");
        assert!(script.ends_with("</script>"));
        assert!(script.contains(STORAGE_METHOD));
    }

    #[test]
    fn reports_are_objects_of_strings_within_the_limit() {
        let ok = json!({"localStorage": {"a": "1", "b": ""}});
        assert_eq!(checked_report(ok.as_object().unwrap()).unwrap().len(), 2);
        for bad in [
            json!({}),
            json!({"localStorage": []}),
            json!({"localStorage": {"a": 1}}),
            json!({"localStorage": {"a": "x".repeat(MAX_STORAGE_BYTES)}}),
        ] {
            assert!(checked_report(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
