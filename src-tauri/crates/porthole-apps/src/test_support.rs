//! A fake of the app side of a view's bridge ([`HostServices`]), for the tests of this crate and
//! of the app above it (the `test-support` feature).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use porthole_mcp::CatalogTool;
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::bridge::{AuditNote, HostServices};

/// The methods whose answers [`FakeHost::with_list`] sets, and what they answer by default.
const LISTS: [(&str, &str); 3] = [
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
    ("prompts/list", "prompts"),
];

/// One request a [`FakeHost`] was asked to pass on to a server.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCall {
    /// `tools/call`, `resources/read`, `resources/list`, `resources/templates/list`,
    /// `prompts/list` or `open_link`.
    pub method: &'static str,
    pub server: String,
    /// `{"name", "arguments"}` for `tools/call`, the URI for `resources/read`, the URL for
    /// `open_link`, else null.
    pub detail: Value,
}

/// The app as a view's bridge sees it, without servers behind it: it knows the tools it was
/// given, answers each request as it was told to (or with a plain default), and records every
/// request and audit note it gets.
///
/// By default a call of a tool answers with its name as text and its arguments as
/// `structuredContent.arguments` (and `_meta: {"fakeHost": true}`), a resource read answers
/// one empty text content of that URI, and the lists are empty. [`FakeHost::without_servers`] makes one that refuses everything.
pub struct FakeHost {
    tools: Vec<CatalogTool>,
    /// Why every request fails, for a host without servers.
    refusal: Option<String>,
    results: BTreeMap<String, Result<Value, String>>,
    held: BTreeSet<String>,
    resources: BTreeMap<String, Result<Value, String>>,
    lists: BTreeMap<&'static str, Value>,
    lists_tools: AtomicBool,
    released: watch::Sender<bool>,
    calls: Mutex<Vec<HostCall>>,
    audits: Mutex<Vec<AuditNote>>,
}

impl FakeHost {
    /// A host whose servers have these tools (each on its own `server`); it offers their lists
    /// to views ([`HostServices::tools`]).
    pub fn new(tools: impl IntoIterator<Item = CatalogTool>) -> FakeHost {
        FakeHost {
            tools: tools.into_iter().collect(),
            refusal: None,
            results: BTreeMap::new(),
            held: BTreeSet::new(),
            resources: BTreeMap::new(),
            lists: BTreeMap::new(),
            lists_tools: AtomicBool::new(true),
            released: watch::channel(false).0,
            calls: Mutex::new(vec![]),
            audits: Mutex::new(vec![]),
        }
    }

    /// A host with no server at all: it knows no tool, offers no tool list and refuses every
    /// request with "no server in this test"; enough to follow what a view is told.
    pub fn without_servers() -> FakeHost {
        let host = FakeHost {
            refusal: Some("no server in this test".into()),
            ..FakeHost::new([])
        };
        host.set_lists_tools(false);
        host
    }

    /// What a call of `tool` (on any server) answers: the `CallToolResult` JSON, or why the call
    /// failed.
    pub fn with_result(mut self, tool: &str, result: Result<Value, String>) -> FakeHost {
        self.results.insert(tool.into(), result);
        self
    }

    /// Calls of `tool` are answered only once [`FakeHost::release`] is called.
    pub fn with_held_tool(mut self, tool: &str) -> FakeHost {
        self.held.insert(tool.into());
        self
    }

    /// What `resources/read` of `uri` answers: the `ReadResourceResult` JSON, or why it failed.
    pub fn with_resource(mut self, uri: &str, result: Result<Value, String>) -> FakeHost {
        self.resources.insert(uri.into(), result);
        self
    }

    /// What `method` (`resources/list`, `resources/templates/list` or `prompts/list`) answers.
    ///
    /// # Panics
    /// For any other method.
    pub fn with_list(mut self, method: &str, answer: Value) -> FakeHost {
        let Some((method, _)) = LISTS.iter().find(|(m, _)| *m == method) else {
            panic!("{method:?} is not one of the lists a fake host answers");
        };
        self.lists.insert(method, answer);
        self
    }

    /// Whether views are offered the tool lists of the host's servers ([`HostServices::tools`]).
    pub fn set_lists_tools(&self, on: bool) {
        self.lists_tools.store(on, Ordering::SeqCst);
    }

    /// Answers the calls of held tools, those waiting and those to come.
    pub fn release(&self) {
        self.released.send_replace(true);
    }

    /// Every request passed to the host so far, in order.
    pub fn calls(&self) -> Vec<HostCall> {
        self.calls.lock().unwrap().clone()
    }

    /// Every audit note so far, in order.
    pub fn audits(&self) -> Vec<AuditNote> {
        self.audits.lock().unwrap().clone()
    }

    fn record(&self, method: &'static str, server: &str, detail: Value) {
        self.calls.lock().unwrap().push(HostCall {
            method,
            server: server.into(),
            detail,
        });
    }

    /// The answer to one of [`LISTS`], recorded.
    fn list(&self, method: &'static str, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.record(method, server, Value::Null);
        let answer = match &self.refusal {
            Some(refusal) => Err(refusal.clone()),
            None => Ok(self.lists.get(method).cloned().unwrap_or_else(|| {
                let (_, key) = LISTS.iter().find(|(m, _)| *m == method).expect("a known list");
                json!({ *key: [] })
            })),
        };
        Box::pin(async move { answer })
    }
}

impl HostServices for FakeHost {
    fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        self.record("tools/call", server, json!({"name": tool, "arguments": arguments}));
        let answer = match (&self.refusal, self.results.get(tool)) {
            (Some(refusal), _) => Err(refusal.clone()),
            (None, Some(result)) => result.clone(),
            (None, None) => Ok(json!({
                "content": [{"type": "text", "text": tool}],
                "structuredContent": {"arguments": arguments},
                "_meta": {"fakeHost": true},
            })),
        };
        let mut released = self.held.contains(tool).then(|| self.released.subscribe());
        Box::pin(async move {
            if let Some(released) = &mut released {
                // The host is gone (never here: it outlives its calls) or released: answer.
                let _ = released.wait_for(|open| *open).await;
            }
            answer
        })
    }

    fn tool(&self, server: &str, tool: &str) -> Option<CatalogTool> {
        self.tools
            .iter()
            .find(|t| t.server == server && t.name == tool)
            .cloned()
    }

    fn tools(&self, server: &str) -> Option<Vec<CatalogTool>> {
        self.lists_tools
            .load(Ordering::SeqCst)
            .then(|| self.tools.iter().filter(|t| t.server == server).cloned().collect())
    }

    fn read_resource(&self, server: &str, uri: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.record("resources/read", server, json!(uri));
        let answer = match &self.refusal {
            Some(refusal) => Err(refusal.clone()),
            None => self
                .resources
                .get(uri)
                .cloned()
                .unwrap_or_else(|| Ok(json!({"contents": [{"uri": uri, "text": ""}]}))),
        };
        Box::pin(async move { answer })
    }

    fn list_resources(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.list("resources/list", server)
    }

    fn list_resource_templates(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.list("resources/templates/list", server)
    }

    fn list_prompts(&self, server: &str) -> BoxFuture<'static, Result<Value, String>> {
        self.list("prompts/list", server)
    }

    fn audit(&self, entry: AuditNote) {
        self.audits.lock().unwrap().push(entry);
    }

    /// The person agrees at once: recorded as an `open_link` call, answered `{}`.
    fn open_link(&self, server: &str, _view_id: &str, url: String) -> BoxFuture<'static, Result<Value, String>> {
        self.record("open_link", server, json!(url));
        Box::pin(async { Ok(json!({})) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porthole_mcp::Audience;

    fn tool(server: &str, name: &str) -> CatalogTool {
        CatalogTool {
            server: server.into(),
            name: name.into(),
            model_name: name.into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            ui_resource_uri: None,
            visibility: vec![Audience::Model, Audience::App],
            widget: Default::default(),
            meta_problems: vec![],
        }
    }

    #[tokio::test]
    async fn answers_as_told_or_by_default_and_records_every_request() {
        let host = FakeHost::new([tool("a", "echo"), tool("a", "fails"), tool("b", "other")])
            .with_result("fails", Err("exploded".into()))
            .with_resource("ui://a/v.html", Ok(json!({"contents": []})))
            .with_resource("ui://a/gone.html", Err("gone".into()))
            .with_list("prompts/list", json!({"prompts": [{"name": "p"}]}));
        assert_eq!(host.tool("a", "echo").unwrap().name, "echo");
        assert!(host.tool("b", "echo").is_none(), "tools are per server");
        assert_eq!(host.tools("a").unwrap().len(), 2);
        host.set_lists_tools(false);
        assert!(host.tools("a").is_none());

        let echoed = host.call_tool("a", "echo", json!({"x": 1}).as_object().cloned()).await;
        assert_eq!(echoed.unwrap()["structuredContent"]["arguments"], json!({"x": 1}));
        assert_eq!(host.call_tool("a", "fails", None).await, Err("exploded".into()));
        assert_eq!(
            host.read_resource("a", "ui://a/v.html").await,
            Ok(json!({"contents": []}))
        );
        assert_eq!(host.read_resource("a", "ui://a/gone.html").await, Err("gone".into()));
        assert_eq!(
            host.read_resource("a", "ui://a/any.html").await,
            Ok(json!({"contents": [{"uri": "ui://a/any.html", "text": ""}]}))
        );
        assert_eq!(host.list_prompts("a").await.unwrap()["prompts"][0]["name"], "p");
        assert_eq!(host.list_resources("b").await, Ok(json!({"resources": []})));
        assert_eq!(
            host.list_resource_templates("b").await,
            Ok(json!({"resourceTemplates": []}))
        );
        let calls = host.calls();
        let methods: Vec<(&str, &str)> = calls.iter().map(|c| (c.method, c.server.as_str())).collect();
        assert_eq!(
            methods,
            [
                ("tools/call", "a"),
                ("tools/call", "a"),
                ("resources/read", "a"),
                ("resources/read", "a"),
                ("resources/read", "a"),
                ("prompts/list", "a"),
                ("resources/list", "b"),
                ("resources/templates/list", "b"),
            ]
        );
    }

    #[tokio::test]
    async fn held_calls_wait_for_the_release() {
        let host = FakeHost::new([tool("a", "slow")]).with_held_tool("slow");
        let mut call = host.call_tool("a", "slow", None);
        let waited = tokio::time::timeout(std::time::Duration::from_millis(50), &mut call).await;
        assert!(waited.is_err(), "answered before the release");
        host.release();
        assert!(call.await.is_ok());
        assert!(host.call_tool("a", "slow", None).await.is_ok(), "released for good");
    }

    #[tokio::test]
    async fn a_host_without_servers_refuses_everything() {
        let host = FakeHost::without_servers();
        assert!(host.tool("a", "echo").is_none());
        assert!(host.tools("a").is_none());
        let refused = Err("no server in this test".to_string());
        assert_eq!(host.call_tool("a", "echo", None).await, refused);
        assert_eq!(host.read_resource("a", "ui://a/v.html").await, refused);
        assert_eq!(host.list_resources("a").await, refused);
        assert_eq!(host.list_resource_templates("a").await, refused);
        assert_eq!(host.list_prompts("a").await, refused);
    }

    #[test]
    #[should_panic(expected = "not one of the lists")]
    fn only_lists_have_list_answers() {
        let _ = FakeHost::new([]).with_list("tools/call", json!({}));
    }
}
