//! The view cache against a real MCP server (rmcp, over Streamable HTTP on loopback) whose view
//! changes on request: a view is read once and then served from the cache, and read again after
//! the server says its resources changed (`resources/list_changed`, `resources/updated` for the
//! URI the cache subscribed to) or the connection is made anew.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porthole_host::view_cache::{Source, ViewCache};
use porthole_mcp::test_support::serve_over_http;
use porthole_mcp::{CallOptions, ConnectOptions, ServerConfig, ServerState, Servers};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig as RmcpServerConfig,
    SubscribeRequestParams, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::json;

const URI: &str = "ui://changing/view.html";

/// What the server's view is now, how often it was read, and which URIs were subscribed to;
/// whether its reads are slow (200 ms) and whether they fail.
#[derive(Clone, Default)]
struct Shared {
    revision: Arc<AtomicUsize>,
    reads: Arc<AtomicUsize>,
    subscribed: Arc<Mutex<Vec<String>>>,
    slow: Arc<AtomicBool>,
    failing: Arc<AtomicBool>,
    /// The view is the size of one built on the official SDK (~600 KB of script).
    large: Arc<AtomicBool>,
}

#[derive(Clone)]
struct ChangingView(Shared);

impl ChangingView {
    fn html(&self) -> String {
        let revision = self.0.revision.load(Ordering::SeqCst);
        let script: String = if self.0.large.load(Ordering::SeqCst) {
            (0..12_000)
                .map(|i| format!("function f{i}(a,b){{return a.map(x=>x*{i}+b[\"k{}\"])}}", i % 97))
                .collect()
        } else {
            String::new()
        };
        format!("<!doctype html><html><body>revision {revision}<script>{script}</script></body></html>")
    }
}

impl ServerHandler for ChangingView {
    fn get_info(&self) -> RmcpServerConfig {
        RmcpServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(json!({"type": "object"}).as_object().unwrap().clone());
        let mut show = Tool::new("show", "Shows the view.", schema.clone());
        show.meta = Some(serde_json::from_value(json!({"ui": {"resourceUri": URI}})).unwrap());
        Ok(ListToolsResult::with_all_items(vec![
            show,
            Tool::new(
                "change_listed",
                "Changes the view; says resources/list_changed.",
                schema.clone(),
            ),
            Tool::new("change_updated", "Changes the view; says resources/updated.", schema),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let internal = |e: rmcp::service::ServiceError| ErrorData::internal_error(e.to_string(), None);
        match request.name.as_ref() {
            "change_listed" => {
                self.0.revision.fetch_add(1, Ordering::SeqCst);
                context.peer.notify_resource_list_changed().await.map_err(internal)?;
            }
            "change_updated" => {
                self.0.revision.fetch_add(1, Ordering::SeqCst);
                let param = ResourceUpdatedNotificationParam::new(URI);
                context.peer.notify_resource_updated(param).await.map_err(internal)?;
            }
            _ => {}
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("ok")]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resource = Resource::new(URI, "view").with_mime_type(porthole_mcp::MCP_APP_MIME);
        Ok(ListResourcesResult::with_all_items(vec![resource]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.0.reads.fetch_add(1, Ordering::SeqCst);
        if self.0.slow.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if self.0.failing.load(Ordering::SeqCst) {
            return Err(ErrorData::internal_error("the disk is gone", None));
        }
        let contents = ResourceContents::text(self.html(), request.uri).with_mime_type(porthole_mcp::MCP_APP_MIME);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.subscribed.lock().unwrap().push(request.uri);
        Ok(())
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The changing view's server over Streamable HTTP, connected: its servers and its config.
async fn connected(shared: &Shared) -> (Servers, ServerConfig) {
    let server = shared.clone();
    let url = serve_over_http(move || ChangingView(server.clone())).await;
    let config = ServerConfig::http("changing", &url).with_timeout(Duration::from_secs(10));
    let servers = Servers::start(vec![config.clone()], ConnectOptions::default());
    let statuses = servers.settled().await;
    assert_eq!(statuses[0].state, ServerState::Connected, "{:?}", statuses[0].error);
    (servers, config)
}

/// The changing view's server serving its large view (~600 KB, as an SDK view), connected, and
/// a cache keeping a view's HTML unpacked for `keep`: the server's state, its servers, the
/// cache and the HTML.
async fn large_view(keep: Duration) -> (Shared, Servers, ViewCache, String) {
    let shared = Shared::default();
    shared.large.store(true, Ordering::SeqCst);
    let (servers, _) = connected(&shared).await;
    let html = ChangingView(shared.clone()).html();
    assert!(html.len() > 500_000, "{}", html.len());
    (shared, servers, ViewCache::default().keeping_unpacked_for(keep), html)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_view_is_read_once_and_again_only_after_the_server_says_it_changed() {
    let shared = Shared::default();
    let (servers, config) = connected(&shared).await;
    let cache = ViewCache::default();
    let reads = || shared.reads.load(Ordering::SeqCst);

    let (first, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server);
    assert!(first.html.contains("revision 0"));
    let (again, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Cache);
    assert_eq!(again.sha256, first.sha256, "the same checked view, with its hash");
    assert!(
        std::sync::Arc::ptr_eq(&again.html, &first.html),
        "each view of it shares the one copy of its HTML"
    );
    assert_eq!(reads(), 1, "the server was asked once");
    eventually("the cache to subscribe to the view's URI", || {
        shared.subscribed.lock().unwrap().as_slice() == [URI]
    })
    .await;

    // resources/list_changed: read again.
    let version = servers.resources_version("changing");
    servers
        .call_tool("changing", "change_listed", None, CallOptions::default())
        .await
        .unwrap();
    eventually("the list change to be noticed", || {
        servers.resources_version("changing") != version
    })
    .await;
    let (changed, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server);
    assert!(changed.html.contains("revision 1"), "{}", changed.html);
    assert_ne!(changed.sha256, first.sha256);
    assert_eq!(cache.load(&servers, "changing", URI).await.unwrap().1, Source::Cache);
    assert_eq!(reads(), 2);

    // resources/updated for the subscribed URI: read again.
    let version = servers.resources_version("changing");
    servers
        .call_tool("changing", "change_updated", None, CallOptions::default())
        .await
        .unwrap();
    eventually("the update to be noticed", || {
        servers.resources_version("changing") != version
    })
    .await;
    let (updated, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server);
    assert!(updated.html.contains("revision 2"), "{}", updated.html);
    assert_eq!(reads(), 3);

    // A new connection (the server's settings changed): read again.
    servers
        .reconfigure(vec![config.with_timeout(Duration::from_secs(11))], true)
        .await;
    servers.settled().await;
    let (_, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server, "a reconnected server's views are read anew");
    assert_eq!(reads(), 4);
    assert_eq!(cache.size().0, 1, "one entry per server and URI");

    // Forgotten with the server.
    cache.forget_server("changing");
    assert_eq!(cache.size(), (0, 0));
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn views_that_open_together_make_one_read_and_share_its_copy_or_its_refusal() {
    let shared = Shared::default();
    shared.slow.store(true, Ordering::SeqCst);
    let (servers, _) = connected(&shared).await;
    let cache = ViewCache::default();
    let reads = || shared.reads.load(Ordering::SeqCst);

    // A reply that calls the tool 20 times: its views open at once.
    let answers = futures::future::join_all((0..20).map(|_| cache.load(&servers, "changing", URI))).await;
    assert_eq!(reads(), 1, "one resources/read for the 20 views");
    let views: Vec<_> = answers.into_iter().map(|a| a.unwrap()).collect();
    assert!(
        views.iter().all(|(v, _)| Arc::ptr_eq(&v.html, &views[0].0.html)),
        "the 20 views share one copy of the HTML"
    );
    let from_server = views.iter().filter(|(_, source)| *source == Source::Server).count();
    assert_eq!(from_server, 1, "one of them read it; the others took its answer");

    // A read that fails is waited for once, not once per view, and is not kept: the next view
    // asks again.
    cache.forget("changing", URI);
    shared.failing.store(true, Ordering::SeqCst);
    let answers = futures::future::join_all((0..20).map(|_| cache.load(&servers, "changing", URI))).await;
    assert_eq!(reads(), 2, "one resources/read for the 20 views that failed");
    assert!(answers.iter().all(|a| a.is_err()), "each view is told it failed");
    shared.failing.store(false, Ordering::SeqCst);
    let (view, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server);
    assert!(view.html.contains("revision 0"));
    assert_eq!(reads(), 3);
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_view_is_kept_compressed_and_unpacked_whole_when_a_view_needs_it() {
    let (shared, servers, cache, html) = large_view(Duration::from_millis(300)).await;
    let reads = || shared.reads.load(Ordering::SeqCst);

    // Read ahead: kept packed only.
    cache.prefetch(&servers, "changing", URI).await;
    assert_eq!(reads(), 1);
    assert_eq!(cache.size(), (1, html.len()), "the cache counts the HTML's own size");
    let packed = cache.held_bytes();
    assert!(
        packed > 0 && packed < html.len() / 3,
        "kept in {packed} bytes for {} of HTML",
        html.len()
    );

    // A view gets it unpacked, the same HTML byte for byte; views opened meanwhile share that
    // copy.
    let (first, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Cache);
    assert_eq!(&*first.html, html);
    let (again, _) = cache.load(&servers, "changing", URI).await.unwrap();
    assert!(Arc::ptr_eq(&again.html, &first.html));
    assert_eq!(cache.held_bytes(), packed + html.len());

    // A while after the last view asked, the cache lets go of the copy (the views keep theirs).
    eventually("the unpacked copy to be let go", || cache.held_bytes() == packed).await;
    assert_eq!(&*again.html, html);
    let (later, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Cache);
    assert_eq!(&*later.html, html);
    assert_eq!(reads(), 1, "the server was asked once");

    // Read for a view: packed once the view has it, the copy let go a while after.
    cache.forget("changing", URI);
    let (read, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Server);
    eventually("the view read to be packed and its copy let go", || {
        cache.held_bytes() == packed
    })
    .await;
    drop((first, again, later, read));
    let (last, source) = cache.load(&servers, "changing", URI).await.unwrap();
    assert_eq!(source, Source::Cache);
    assert_eq!(&*last.html, html);
    assert_eq!(reads(), 2);
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn views_opening_at_once_from_a_packed_view_share_one_unpacked_copy() {
    // Views unpack outside the cache's lock: when several race, the cache keeps one of their
    // copies, and that is the one the next view gets.
    let (shared, servers, cache, html) = large_view(Duration::from_secs(30)).await;
    cache.prefetch(&servers, "changing", URI).await;
    let packed = cache.held_bytes();
    assert!(packed > 0 && packed < html.len() / 3, "{packed}");

    let start = Arc::new(tokio::sync::Barrier::new(8));
    let loads: Vec<_> = (0..8)
        .map(|_| {
            let (cache, servers, start) = (cache.clone(), servers.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                cache.load(&servers, "changing", URI).await.unwrap()
            })
        })
        .collect();
    let mut views = Vec::new();
    for load in loads {
        views.push(load.await.unwrap());
    }
    assert!(views.iter().all(|(_, source)| *source == Source::Cache));
    assert!(views.iter().all(|(v, _)| *v.html == html));
    // The copy the cache keeps is the one the next view gets; at most the views that raced
    // for the first unpack hold copies of their own, and the cache holds one.
    assert_eq!(cache.held_bytes(), packed + html.len(), "one unpacked copy kept");
    let (next, _) = cache.load(&servers, "changing", URI).await.unwrap();
    let sharing = views.iter().filter(|(v, _)| Arc::ptr_eq(&v.html, &next.html)).count();
    assert!(sharing >= 1, "the kept copy is one a view was given");
    assert_eq!(shared.reads.load(Ordering::SeqCst), 1, "the server was asked once");
    servers.shutdown().await;
}
