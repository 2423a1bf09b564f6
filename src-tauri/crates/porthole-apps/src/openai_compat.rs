//! Views written for the OpenAI Apps SDK (reference §9): a `text/html+skybridge` widget reads
//! `window.openai` instead of speaking the MCP Apps bridge. The host puts [`shim`] first in its
//! document (after the storage shim), and the shim speaks the bridge on the widget's behalf:
//! every method becomes the `ui/*` request it stands for, so it meets the same checks, limits and
//! audit as any view — a translation inside the frame, never a second door. The one thing the
//! bridge has no word for is the widget's own state (`setWidgetState`), which the host keeps with
//! the tool call ([`WIDGET_STATE_METHOD`]) and gives back when the view is shown again.

use serde_json::{Map, Value};

/// The notification the shim sends for `setWidgetState`: `{state: …}`.
pub const WIDGET_STATE_METHOD: &str = "porthole/notifications/widget-state";

/// The most widget state (as compact JSON) the host keeps for one tool call.
pub const MAX_WIDGET_STATE_BYTES: usize = 256 * 1024;

const SCRIPT: &str = include_str!("openai_shim.js");

/// The script that gives the widget `window.openai`, with `widget_state` (what the host kept for
/// the call, if anything) as its first `widgetState`.
pub fn shim(widget_state: Option<&Value>) -> String {
    // `</` is written `<\/` so no state can end the script element.
    let state = serde_json::to_string(widget_state.unwrap_or(&Value::Null))
        .unwrap_or_else(|_| "null".into())
        .replace("</", "<\\/");
    let script = SCRIPT
        .replace("__WIDGET_STATE_METHOD__", WIDGET_STATE_METHOD)
        .replace("__WIDGET_STATE__", &state);
    format!("<script>{script}</script>")
}

/// The state a report carries, when it can be kept: any JSON, at most [`MAX_WIDGET_STATE_BYTES`].
pub fn checked_state(params: &Map<String, Value>) -> Result<Value, String> {
    let state = params.get("state").cloned().unwrap_or(Value::Null);
    let size = serde_json::to_string(&state).map(|s| s.len()).unwrap_or(usize::MAX);
    if size > MAX_WIDGET_STATE_BYTES {
        return Err(format!(
            "{size} bytes, over the {} KiB kept per widget",
            MAX_WIDGET_STATE_BYTES >> 10
        ));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shim_carries_the_kept_state_and_no_state_can_end_the_script() {
        let state = json!({"note": "</script><script>alert(1)</script>", "n": 3});
        let script = shim(Some(&state));
        assert!(script.starts_with("<script>") && script.ends_with("</script>"));
        assert_eq!(script.matches("</script>").count(), 1, "{script}");
        assert!(
            script.contains(r#"widgetState: {"n":3,"note":"<\/script><script>alert(1)<\/script>"}"#)
                || script.contains(r#"widgetState: {"note":"<\/script><script>alert(1)<\/script>","n":3}"#),
            "{script}"
        );
        assert!(script.contains(WIDGET_STATE_METHOD));
        assert!(shim(None).contains("widgetState: null,"));
    }

    #[test]
    fn state_is_kept_up_to_a_limit() {
        let mut params = Map::new();
        params.insert("state".into(), json!({"selected": "margherita"}));
        assert_eq!(checked_state(&params).unwrap(), json!({"selected": "margherita"}));
        params.insert("state".into(), json!("x".repeat(MAX_WIDGET_STATE_BYTES)));
        assert!(checked_state(&params).unwrap_err().contains("256 KiB"));
    }
}
