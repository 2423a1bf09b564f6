//! Reading a long conversation back against a short one (prints numbers, asserts nothing):
//! `cargo bench -p porthole-host --bench transcript_page` (part of `make bench`).
//!
//! A real [`Host`] on a new profile. Its conversation is filled beside it through a second
//! handle on the same store file, each turn as a turn writes it (porthole-agent's
//! `shape::turn`: one tool call, 64 KB for its view) with the view the call showed recorded.
//! Timed at each length, as the window asks: the conversation opened (its newest page), its
//! oldest page (scrolled back to the start), and one card's view re-created (the newest call's
//! and the oldest's; the demo server is not connected, so each says so, after the same reads).
//! The window's own work is the e2e `transcript` benchmark's.

#[path = "../../porthole-agent/benches/shape/mod.rs"]
mod shape;
#[path = "timings/mod.rs"]
mod timings;
use std::sync::Arc;
use std::time::{Duration, Instant};
use timings::summary;

use porthole_host::ports::{Outbox, RecordingDesktop};
use porthole_host::{Host, HostOptions, ModelFlags, Outbound};
use porthole_store::{MessageRole, NewView, Store};

/// Times each thing is timed at each length.
const RUNS: usize = 30;
/// The conversation's lengths, in turns of one call (with its view) each.
const LENGTHS: [usize; 3] = [10, 300, 1000];
/// How long the host may take to settle.
const PATIENCE: Duration = Duration::from_secs(30);

/// The window: nothing it is told matters here.
struct Nowhere;

impl Outbox for Nowhere {
    fn send(&self, _window: &str, _event: Outbound) {}
}

/// Times `f` [`RUNS`] times; milliseconds each.
fn time(mut f: impl FnMut()) -> Vec<f64> {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let profile = tempfile::tempdir().unwrap();
        std::fs::write(profile.path().join("config.json"), r#"{"mcpServers": {}}"#).unwrap();
        let host = Host::start(
            HostOptions::for_profile(profile.path(), ModelFlags::openai_compatible("http://127.0.0.1:9", "m")).unwrap(),
            Arc::new(Nowhere),
            Arc::new(RecordingDesktop::default()),
            tokio::runtime::Handle::current(),
        );
        tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
        let filler = Store::open(&profile.path().join("porthole.db")).unwrap();
        let conversation = filler.create_conversation("Long").unwrap().id;
        // Another conversation written between its turns, as a person's other chats are.
        let other = filler.create_conversation("Other").unwrap().id;
        let view_of = |call_id: &str| {
            let call = filler.tool_call_row_id(&conversation, call_id).unwrap().unwrap();
            filler
                .insert_view(&NewView {
                    tool_call_id: call,
                    server: "demo".into(),
                    tool: "search".into(),
                    uri: "ui://demo/search.html".into(),
                    html_sha256: "0".repeat(64),
                    csp: "{}".into(),
                    expires_at: i64::MAX,
                })
                .unwrap();
        };
        println!("A conversation of N turns read back (one tool call each, 64 KB for its view, the view recorded)");
        let mut filled = 0;
        for length in LENGTHS {
            while filled < length {
                shape::turn(&filler, &conversation, filled);
                view_of(&format!("call_{filled}"));
                shape::turn(&filler, &other, filled);
                filled += 1;
            }
            // The oldest page: the one before the second page's first message, as the window
            // asks once the reader is near the top.
            let user_messages: Vec<i64> = filler
                .messages(&conversation)
                .unwrap()
                .into_iter()
                .filter(|m| m.role == MessageRole::User)
                .map(|m| m.id)
                .collect();
            let second_page = user_messages[user_messages.len().min(5) - 1];
            let (newest, oldest) = (format!("call_{}", length - 1), "call_0".to_string());
            let opened = time(|| assert!(!host.open_conversation(&conversation).unwrap().messages.is_empty()));
            let first = time(|| {
                assert!(
                    !host
                        .earlier_messages(&conversation, second_page)
                        .unwrap()
                        .tool_calls
                        .is_empty()
                )
            });
            let new_card = time(|| host.reopen_views(&conversation, Some(&newest)).unwrap());
            let old_card = time(|| host.reopen_views(&conversation, Some(&oldest)).unwrap());
            summary(
                &format!("{length:>5} turns: the conversation opened (its newest page)"),
                opened,
            );
            summary("  its oldest page", first);
            summary("  the newest card's view re-created", new_card);
            summary("  the oldest card's view re-created", old_card);
        }
        host.shutdown().await;
    });
}
