//! The two facings of one tool call, split the moment the result arrives and never merged again.
//!
//! - **Model-facing**: the `content` blocks exactly as the server returned them, and `isError`.
//!   Only when `content` is empty is `structuredContent` serialized into one text block, so the
//!   model is never left with nothing. Nothing else is added, removed or replaced here.
//! - **View-facing**: the whole `CallToolResult` as received (`structuredContent` and `_meta`
//!   included), for the tool's view.

use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::{Value, json};
use ts_rs::TS;

/// What the model gets of a tool call's result.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelFacing {
    /// MCP content blocks, as JSON.
    pub content: Vec<Value>,
    pub is_error: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutcome {
    pub model: ModelFacing,
    /// The full `CallToolResult`, unmodified.
    pub view: Value,
}

impl ToolOutcome {
    /// [`ToolOutcome::split`] of a `CallToolResult` given as JSON (a view's, for a tool it
    /// offers); why not when it is not one.
    pub fn from_json(result: Value) -> Result<ToolOutcome, String> {
        serde_json::from_value::<CallToolResult>(result)
            .map(|r| ToolOutcome::split(&r))
            .map_err(|e| format!("not a tool result: {e}"))
    }

    pub fn split(result: &CallToolResult) -> ToolOutcome {
        let view = serde_json::to_value(result).unwrap_or(Value::Null);
        let mut content: Vec<Value> = view
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if content.is_empty()
            && let Some(structured) = &result.structured_content
        {
            content.push(json!({ "type": "text", "text": structured.to_string() }));
        }
        ToolOutcome {
            model: ModelFacing {
                content,
                is_error: result.is_error.unwrap_or(false),
            },
            view,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, MetaObject};

    fn from_json(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_ui_tools_text_reaches_the_model_unchanged_and_the_view_gets_everything() {
        // The kagent case: a UI-linked tool returns the full JSON as text plus structuredContent.
        let payload = json!({"city": "Oslo", "forecast": [{"day": "Mon", "high": 3}, {"day": "Tue", "high": 5}]});
        let raw = json!({
            "content": [{"type": "text", "text": payload.to_string()}],
            "structuredContent": payload,
            "_meta": {"ui": {"resourceUri": "ui://weather/view.html"}, "trace": "abc"}
        });
        let outcome = ToolOutcome::split(&from_json(raw.clone()));
        assert_eq!(
            outcome.model.content,
            vec![json!({"type": "text", "text": payload.to_string()})]
        );
        assert!(!outcome.model.is_error);
        assert_eq!(outcome.view["structuredContent"], payload);
        assert_eq!(outcome.view["_meta"], raw["_meta"]);
        assert_eq!(outcome.view["content"], raw["content"]);
    }

    #[test]
    fn structured_content_is_text_for_the_model_only_when_content_is_empty() {
        let only_structured = from_json(json!({"content": [], "structuredContent": {"n": 1}}));
        let outcome = ToolOutcome::split(&only_structured);
        assert_eq!(
            outcome.model.content,
            vec![json!({"type": "text", "text": "{\"n\":1}"})]
        );
        assert_eq!(
            outcome.view["content"],
            json!([]),
            "the view still gets the content as sent"
        );

        let both = from_json(json!({"content": [{"type": "text", "text": "one"}], "structuredContent": {"n": 1}}));
        assert_eq!(
            ToolOutcome::split(&both).model.content,
            vec![json!({"type": "text", "text": "one"})]
        );
    }

    #[test]
    fn errors_and_every_content_kind_pass_through() {
        let mut result = CallToolResult::error(vec![
            ContentBlock::text("boom"),
            ContentBlock::image("aGVsbG8=", "image/png"),
        ]);
        let mut meta = MetaObject::default();
        meta.0.insert("k".into(), json!(1));
        result = result.with_meta(Some(meta));
        let outcome = ToolOutcome::split(&result);
        assert!(outcome.model.is_error);
        assert_eq!(outcome.model.content.len(), 2);
        assert_eq!(outcome.model.content[1]["type"], "image");
        assert_eq!(outcome.model.content[1]["data"], "aGVsbG8=");
        assert_eq!(outcome.view["isError"], true);
        assert_eq!(outcome.view["_meta"]["k"], 1);
    }

    #[test]
    fn an_empty_result_stays_empty() {
        let outcome = ToolOutcome::split(&from_json(json!({"content": []})));
        assert!(outcome.model.content.is_empty());
    }
}
