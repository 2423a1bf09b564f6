//! The events waiting for each window, handed over when the window asks for them.
//!
//! A window's page keeps one `next_events` request open; the events the app sends that window
//! ([`Outbox::send`]) are queued here and answer it, in order, as a batch. This is how the app's
//! events reach its pages instead of Tauri's `emit`, which evaluates a script in the page for
//! each event: WebKitGTK hands every evaluated script's result back to the app's process, which
//! then needs a JavaScriptCore VM of its own (3.5 MiB at rest; BENCHMARKS.md, session 19). An
//! answer to a request needs none.
//!
//! A page starts listening with [`WindowEvents::open`], which gives it a generation: what was
//! queued for an earlier page of the same window (a reload) is dropped, and a request still
//! open from that page ends with nothing. Events for a window no page listens in are dropped,
//! as Tauri's events are when nothing listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::ports::{Outbound, Outbox};

/// How many events may wait for one window: a page that stopped asking (its script broke)
/// does not make the app hold every later event. Past it, new events are dropped and logged.
pub const MAX_WAITING: usize = 20_000;

/// The events waiting for each window that listens.
#[derive(Default)]
pub struct WindowEvents {
    windows: Mutex<HashMap<String, Queue>>,
}

struct Queue {
    generation: u64,
    events: Vec<Outbound>,
    wake: Arc<Notify>,
    /// Whether dropping events past [`MAX_WAITING`] was logged for this generation.
    overflow_logged: bool,
}

impl WindowEvents {
    pub fn new() -> Self {
        Self::default()
    }

    /// A page of `window` starts listening: its generation, to pass to [`Self::next`]. Events
    /// queued for the window before are dropped, and an earlier page's open request ends.
    pub fn open(&self, window: &str) -> u64 {
        let mut windows = self.windows.lock().unwrap();
        let generation = windows.get(window).map_or(1, |q| q.generation + 1);
        let old = windows.insert(
            window.to_string(),
            Queue {
                generation,
                events: Vec::new(),
                wake: Arc::new(Notify::new()),
                overflow_logged: false,
            },
        );
        if let Some(old) = old {
            old.wake.notify_one();
        }
        generation
    }

    /// The events sent to `window` since the last call, waiting until there is one. `None` when
    /// `generation` is no longer the window's (another page listens now, or the window closed):
    /// the page should stop asking.
    pub async fn next(&self, window: &str, generation: u64) -> Option<Vec<Outbound>> {
        loop {
            let wake = {
                let mut windows = self.windows.lock().unwrap();
                let queue = windows.get_mut(window).filter(|q| q.generation == generation)?;
                if !queue.events.is_empty() {
                    queue.overflow_logged = false;
                    return Some(std::mem::take(&mut queue.events));
                }
                queue.wake.clone()
            };
            // A wake given between the unlock and here is kept by `Notify` for this wait.
            wake.notified().await;
        }
    }

    /// `window` is gone: its queue is dropped and a request still open ends with nothing.
    pub fn close(&self, window: &str) {
        if let Some(old) = self.windows.lock().unwrap().remove(window) {
            old.wake.notify_one();
        }
    }

    /// How many events wait for `window` (none when no page of it listens).
    pub fn waiting(&self, window: &str) -> usize {
        self.windows.lock().unwrap().get(window).map_or(0, |q| q.events.len())
    }
}

impl Outbox for WindowEvents {
    fn send(&self, window: &str, event: Outbound) {
        let mut windows = self.windows.lock().unwrap();
        let Some(queue) = windows.get_mut(window) else {
            tracing::debug!(
                window,
                event = event.name(),
                "no page of the window listens; the event is dropped"
            );
            return;
        };
        if queue.events.len() >= MAX_WAITING {
            if !queue.overflow_logged {
                queue.overflow_logged = true;
                tracing::warn!(
                    window,
                    waiting = queue.events.len(),
                    "the window has not asked for its events; newer ones are dropped"
                );
            }
            return;
        }
        queue.events.push(event);
        queue.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sampling::SamplingSettled;

    fn event(id: u64) -> Outbound {
        Outbound::SamplingSettled(SamplingSettled { id })
    }

    fn ids(events: &[Outbound]) -> Vec<u64> {
        events
            .iter()
            .map(|e| match e {
                Outbound::SamplingSettled(s) => s.id,
                other => panic!("unexpected event {}", other.name()),
            })
            .collect()
    }

    #[tokio::test]
    async fn events_wait_for_the_page_and_come_in_order() {
        let events = WindowEvents::new();
        events.send("main", event(0)); // nobody listens yet: dropped
        let generation = events.open("main");
        events.send("main", event(1));
        events.send("main", event(2));
        events.send("view-1", event(9)); // another window's, not listening
        assert_eq!(ids(&events.next("main", generation).await.unwrap()), [1, 2]);
        assert_eq!(events.waiting("view-1"), 0);
    }

    #[tokio::test]
    async fn a_waiting_request_is_answered_by_the_next_event() {
        let events = Arc::new(WindowEvents::new());
        let generation = events.open("main");
        let waiting = tokio::spawn({
            let events = events.clone();
            async move { events.next("main", generation).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "answered with nothing to say");
        events.send("main", event(7));
        let got = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ids(&got.unwrap()), [7]);
    }

    #[tokio::test]
    async fn a_reloaded_page_ends_the_old_request_and_gets_only_its_own_events() {
        let events = Arc::new(WindowEvents::new());
        let old = events.open("main");
        events.send("main", event(1));
        let waiting = tokio::spawn({
            let events = events.clone();
            async move {
                // The old page had taken what was there; its next request is still open.
                let first = events.next("main", old).await;
                (first, events.next("main", old).await)
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let new = events.open("main");
        let (first, second) = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ids(&first.unwrap()), [1]);
        assert!(second.is_none(), "the old page's request should end");
        events.send("main", event(2));
        assert_eq!(ids(&events.next("main", new).await.unwrap()), [2]);
        assert!(events.next("main", old).await.is_none());
    }

    #[tokio::test]
    async fn a_closed_window_ends_its_request_and_keeps_nothing() {
        let events = Arc::new(WindowEvents::new());
        let generation = events.open("view-1");
        let waiting = tokio::spawn({
            let events = events.clone();
            async move { events.next("view-1", generation).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        events.close("view-1");
        let got = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert!(got.is_none());
        events.send("view-1", event(1));
        assert_eq!(events.waiting("view-1"), 0);
    }

    #[tokio::test]
    async fn a_page_that_stops_asking_holds_at_most_the_cap() {
        let events = WindowEvents::new();
        let generation = events.open("main");
        for id in 0..(MAX_WAITING as u64 + 10) {
            events.send("main", event(id));
        }
        assert_eq!(events.waiting("main"), MAX_WAITING);
        let got = events.next("main", generation).await.unwrap();
        assert_eq!(ids(&got).last(), Some(&(MAX_WAITING as u64 - 1)));
        // Once it asks again, new events are queued again.
        events.send("main", event(1));
        assert_eq!(events.waiting("main"), 1);
    }
}
