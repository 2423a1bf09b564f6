//! A view opened in a long conversation against in a short one (prints numbers, asserts
//! nothing): `cargo bench -p porthole-host --bench view_open` (part of `make bench`).
//!
//! A real [`Host`] on a new profile's store, the demo MCP App server served in this process over
//! Streamable HTTP (its views read ahead into the view cache). A conversation is filled with
//! tools-panel runs of `sha256` over 32 KB of text (each stored call carries its arguments and
//! both facings), then the folder view (`list_directory`) is run in it again and again. Timed is
//! the host's own step, from the run being asked for to the window being told the view's address
//! (`ViewEvent::Opened`): the call started, the view's HTML taken from the cache, audited, its
//! URL minted and the view recorded with its call. Everything after it (the frame, the document,
//! the handshake) is the views benchmark's.

#[path = "timings/mod.rs"]
mod timings;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timings::summary;

use porthole_agent::TurnEvent;
use porthole_demo_server::DemoServer;
use porthole_host::ports::{Outbox, RecordingDesktop};
use porthole_host::views::ViewEvent;
use porthole_host::{Host, HostOptions, MAIN_WINDOW, ModelFlags, Outbound};
use porthole_mcp::test_support::serve_over_http;
use serde_json::json;

/// Views timed at each length.
const RUNS: usize = 30;
/// The conversation's lengths (stored calls before the timed ones).
const LENGTHS: [usize; 3] = [10, 300, 1000];
/// How long any one thing may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// Keeps when each call started and each view was opened (by call id), and how many runs
/// ended, as the window is told.
#[derive(Default)]
struct Stamps {
    started: Mutex<HashMap<String, Instant>>,
    opened: Mutex<HashMap<String, (Instant, String)>>,
    ended: Mutex<usize>,
    /// Woken on each of the above: the bench waits without taking the host's CPU.
    changed: tokio::sync::Notify,
}

impl Outbox for Stamps {
    fn send(&self, _window: &str, event: Outbound) {
        match event {
            Outbound::View(ViewEvent::Opened { call_id, view_id, .. }) => {
                self.opened.lock().unwrap().insert(call_id, (Instant::now(), view_id));
            }
            Outbound::Chat(chat) => match chat.event {
                TurnEvent::ToolCallStarted { call_id, .. } => {
                    self.started.lock().unwrap().insert(call_id, Instant::now());
                }
                TurnEvent::Done { .. } => *self.ended.lock().unwrap() += 1,
                _ => {}
            },
            _ => return,
        }
        self.changed.notify_waiters();
    }
}

impl Stamps {
    /// What `found` finds once it finds something, waiting for changes in between.
    async fn wait<T>(&self, what: &str, found: impl Fn(&Stamps) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            // Listening before looking: a change between the two is not missed.
            let changed = self.changed.notified();
            if let Some(found) = found(self) {
                return found;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!("{what} did not happen in {PATIENCE:?}");
            }
        }
    }

    async fn wait_ended(&self, n: usize) {
        self.wait(&format!("the end of run {n}"), |s| {
            (*s.ended.lock().unwrap() >= n).then_some(())
        })
        .await
    }

    async fn wait_opened(&self, call_id: &str) -> (Instant, String) {
        self.wait(&format!("the view of {call_id}"), |s| {
            s.opened.lock().unwrap().get(call_id).cloned()
        })
        .await
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let url = serve_over_http(DemoServer::new).await;
        let profile = tempfile::tempdir().unwrap();
        let config = json!({"mcpServers": {"demo": {"url": url}}});
        std::fs::write(profile.path().join("config.json"), config.to_string()).unwrap();
        let stamps = Arc::new(Stamps::default());
        let host = Host::start(
            HostOptions::for_profile(profile.path(), ModelFlags::default()).unwrap(),
            stamps.clone(),
            Arc::new(RecordingDesktop::default()),
            tokio::runtime::Handle::current(),
        );
        tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
        let folder = json!({"path": env!("CARGO_MANIFEST_DIR")});
        let text = "x".repeat(32 * 1024);
        let mut runs = 0;
        let mut conversation: Option<String> = None;
        println!("A view opened in a conversation of stored calls (32 KB each): the run asked for -> the window told the view's address");
        let mut medians = Vec::new();
        for length in LENGTHS {
            let stored = runs;
            let mut fill_ms = Vec::new();
            for _ in stored..length {
                let asked = Instant::now();
                let run = host
                    .run_tool(conversation.clone(), "demo", "sha256", json!({"text": text}))
                    .unwrap();
                conversation = Some(run.conversation_id);
                runs += 1;
                stamps.wait_ended(runs).await;
                fill_ms.push(asked.elapsed().as_secs_f64() * 1000.0);
            }
            if !fill_ms.is_empty() {
                summary(&format!("(a sha256 run, asked for -> ended, calls {stored}..{length})"), fill_ms);
            }
            let (mut ms, mut started_ms, mut view_ms) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let started = Instant::now();
                let run = host
                    .run_tool(conversation.clone(), "demo", "list_directory", folder.clone())
                    .unwrap();
                let (opened, view_id) = stamps.wait_opened(&run.call_id).await;
                let call_started = stamps.started.lock().unwrap()[&run.call_id];
                ms.push((opened - started).as_secs_f64() * 1000.0);
                started_ms.push((call_started - started).as_secs_f64() * 1000.0);
                view_ms.push((opened - call_started).as_secs_f64() * 1000.0);
                // Closed at once: no frame plays this view, and its run would wait for it to
                // start (10 s) before ending.
                host.close_view(MAIN_WINDOW, &view_id).await.unwrap();
                runs += 1;
                stamps.wait_ended(runs).await;
            }
            let p50 = summary(&format!("{length:>5} calls before: the whole step"), ms);
            summary("  of which: the run asked for -> the call started", started_ms);
            summary("  of which: the call started -> the view's address", view_ms);
            medians.push(p50);
        }
        println!(
            "  ratio (p50): {} calls / {} calls = {:.2}×",
            LENGTHS[LENGTHS.len() - 1],
            LENGTHS[0],
            medians[medians.len() - 1] / medians[0].max(1e-6)
        );
        host.shutdown().await;
    });
}
