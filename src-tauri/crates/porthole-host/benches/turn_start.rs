//! A turn started in a long conversation against in a short one (prints numbers, asserts
//! nothing): `cargo bench -p porthole-host --bench turn_start` (part of `make bench`).
//!
//! A real [`Host`] on a new profile, its model the fake LLM (the OpenAI wire format on
//! loopback). Its conversation is filled beside it through a second handle on the same store
//! file, each turn as a turn writes it (porthole-agent's `shape::turn`: one tool call, 64 KB for
//! its view); then a message is sent 30 times at each length. Timed, as the window is told: from
//! the message sent to the model's request starting (`step_started`: the conversation claimed,
//! the person's message kept, the history read), and from there to the reply's first text (the
//! request written, sent and answered).

#[path = "../../porthole-agent/benches/shape/mod.rs"]
mod shape;
#[path = "timings/mod.rs"]
mod timings;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timings::summary;

use porthole_agent::TurnEvent;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_host::ports::{Outbox, RecordingDesktop};
use porthole_host::{Host, HostOptions, ModelFlags, Outbound};
use porthole_store::Store;

/// Turns timed at each length.
const RUNS: usize = 30;
/// The conversation's lengths, in turns of one call each.
const LENGTHS: [usize; 3] = [10, 300, 1000];
/// How long any one thing may take.
const PATIENCE: Duration = Duration::from_secs(60);

/// When the turn being timed was told its step started, its first text came, and it ended.
#[derive(Default)]
struct Stamps {
    seen: Mutex<(Option<Instant>, Option<Instant>, usize)>,
    changed: tokio::sync::Notify,
}

impl Outbox for Stamps {
    fn send(&self, _window: &str, event: Outbound) {
        let Outbound::Chat(chat) = event else { return };
        {
            let mut seen = self.seen.lock().unwrap();
            match chat.event {
                TurnEvent::StepStarted { .. } if seen.0.is_none() => seen.0 = Some(Instant::now()),
                TurnEvent::TextDelta { .. } if seen.1.is_none() => seen.1 = Some(Instant::now()),
                TurnEvent::Done { .. } => seen.2 += 1,
                _ => return,
            }
        }
        self.changed.notify_waiters();
    }
}

impl Stamps {
    /// Waits for turn `n` (from 1) to end; the instants of its step's start and first text.
    async fn turn(&self, n: usize) -> (Instant, Instant) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let changed = self.changed.notified();
            {
                let mut seen = self.seen.lock().unwrap();
                if seen.2 >= n {
                    let stamps = (seen.0.take(), seen.1.take());
                    if let (Some(step), Some(text)) = stamps {
                        return (step, text);
                    }
                    panic!("turn {n} ended without a step and a text");
                }
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!("turn {n} did not end in {PATIENCE:?}");
            }
        }
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let replies = (0..RUNS * LENGTHS.len()).map(|_| Reply::text("Noted.")).collect();
        let llm = FakeLlm::start(Script::new(replies)).await.unwrap();
        let profile = tempfile::tempdir().unwrap();
        std::fs::write(profile.path().join("config.json"), r#"{"mcpServers": {}}"#).unwrap();
        let stamps = Arc::new(Stamps::default());
        let host = Host::start(
            HostOptions::for_profile(profile.path(), ModelFlags::openai_compatible(llm.base_url(), "m")).unwrap(),
            stamps.clone(),
            Arc::new(RecordingDesktop::default()),
            tokio::runtime::Handle::current(),
        );
        tokio::time::timeout(PATIENCE, host.servers().settled()).await.unwrap();
        let filler = Store::open(&profile.path().join("porthole.db")).unwrap();
        let conversation = filler.create_conversation("Long").unwrap().id;
        println!("A turn started in a conversation of N turns (one tool call each, 64 KB for its view), the fake LLM answering");
        let (mut filled, mut sent) = (0, 0);
        let mut medians = Vec::new();
        for length in LENGTHS {
            while filled < length {
                shape::turn(&filler, &conversation, filled);
                filled += 1;
            }
            let (mut whole, mut before, mut request) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let asked = Instant::now();
                host.send_message(Some(conversation.clone()), "And the next one?").unwrap();
                sent += 1;
                let (step, text) = stamps.turn(sent).await;
                whole.push((text - asked).as_secs_f64() * 1000.0);
                before.push((step - asked).as_secs_f64() * 1000.0);
                request.push((text - step).as_secs_f64() * 1000.0);
            }
            let p50 = summary(&format!("{length:>5} turns before: sent -> the reply's first text"), whole);
            summary("  of which: sent -> the model's request starts", before);
            summary("  of which: the request -> its first text", request);
            medians.push(p50);
        }
        // The model gets the whole history, so the step grows with it: what each stored turn
        // adds is the figure to keep flat.
        let (n, m) = (LENGTHS.len() - 1, LENGTHS.len() - 2);
        println!(
            "  each stored turn adds (p50, {} -> {} turns): {:.1} µs",
            LENGTHS[m],
            LENGTHS[n],
            (medians[n] - medians[m]) * 1000.0 / (LENGTHS[n] - LENGTHS[m]) as f64
        );
        host.shutdown().await;
    });
}
