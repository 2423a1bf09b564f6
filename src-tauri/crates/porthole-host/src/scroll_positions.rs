//! Where the reader left each conversation, kept in the profile (`scroll.json`) so that a
//! conversation reopens there after a restart, not at its end. A conversation read to its end has
//! no entry (it opens at the end, following new replies).
//!
//! The window reports a position once the reader stops scrolling
//! ([`Host::keep_scroll_position`]); the file is written at most twice a second, and once more
//! when the app ends. It holds the most recent [`KEPT`] conversations.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::Host;

/// How long after a change the file is written.
const WRITE_AFTER: Duration = Duration::from_millis(500);

/// The most conversations whose place is kept (the least recently read are forgotten).
pub const KEPT: usize = 1000;

/// A place in a conversation: the item at the top of the transcript and how far its top is
/// above the transcript's top. The item is known by its stored message (when the window knows
/// it: a message of this session's turn has none until the conversation is opened again) and by
/// how many of the conversation's items (messages and tool calls) follow it, which stays true
/// as earlier pages are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScrollPosition {
    #[ts(type = "number | null")]
    pub message_id: Option<i64>,
    pub from_end: u32,
    /// Pixels; negative when the item's top is below the transcript's top.
    pub within: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    #[serde(flatten)]
    position: ScrollPosition,
    /// When it was kept (seconds since 1970): the oldest go first.
    at: u64,
}

/// The places kept, and their file.
pub struct ScrollPositions {
    file: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Read from the file at the first use.
    kept: Option<BTreeMap<String, Kept>>,
    /// A write is scheduled.
    pending: bool,
}

impl ScrollPositions {
    pub fn new(file: PathBuf) -> ScrollPositions {
        ScrollPositions {
            file,
            state: Mutex::new(State::default()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Kept>) -> T) -> T {
        let mut state = self.state.lock().unwrap();
        let kept = state.kept.get_or_insert_with(|| self.read());
        f(kept)
    }

    fn read(&self) -> BTreeMap<String, Kept> {
        let Ok(text) = std::fs::read_to_string(&self.file) else {
            return BTreeMap::new();
        };
        serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(
                "{} is not a list of places in conversations ({e}); conversations open at their end",
                self.file.display()
            );
            BTreeMap::new()
        })
    }

    pub fn get(&self, conversation: &str) -> Option<ScrollPosition> {
        self.with(|kept| kept.get(conversation).map(|k| k.position))
    }

    /// Keeps `position` for `conversation` (none: it is read to its end); true when that
    /// changed what is kept.
    fn set(&self, conversation: &str, position: Option<ScrollPosition>) -> bool {
        self.with(|kept| match position {
            None => kept.remove(conversation).is_some(),
            Some(position) => {
                if kept.get(conversation).is_some_and(|k| k.position == position) {
                    return false;
                }
                let at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
                kept.insert(conversation.to_string(), Kept { position, at });
                while kept.len() > KEPT {
                    let oldest = kept
                        .iter()
                        .min_by_key(|(_, k)| k.at)
                        .map(|(id, _)| id.clone())
                        .expect("not empty");
                    kept.remove(&oldest);
                }
                true
            }
        })
    }

    fn write(&self) {
        let text = {
            let mut state = self.state.lock().unwrap();
            state.pending = false;
            match &state.kept {
                Some(kept) => serde_json::to_vec_pretty(kept).expect("serializable"),
                None => return,
            }
        };
        let temp = self.file.with_extension("json.tmp");
        if let Err(e) = std::fs::write(&temp, text).and_then(|()| std::fs::rename(&temp, &self.file)) {
            tracing::warn!("the places in conversations cannot be kept: {e}");
        }
    }
}

impl Host {
    /// Where the reader left `conversation`, if not at its end.
    pub fn scroll_position(&self, conversation: &str) -> Option<ScrollPosition> {
        self.inner.scroll_positions.get(conversation)
    }

    /// The reader stopped scrolling in `conversation` at `position` (none: at its end).
    pub fn keep_scroll_position(&self, conversation: &str, position: Option<ScrollPosition>) {
        let positions = &self.inner.scroll_positions;
        if !positions.set(conversation, position) {
            return;
        }
        let schedule = !std::mem::replace(&mut positions.state.lock().unwrap().pending, true);
        if schedule {
            let host = self.clone();
            self.inner.runtime.spawn(async move {
                tokio::time::sleep(WRITE_AFTER).await;
                host.inner.scroll_positions.write();
            });
        }
    }

    /// Writes the places now (the app is ending).
    pub fn keep_scroll_positions(&self) {
        let positions = &self.inner.scroll_positions;
        if positions.state.lock().unwrap().pending {
            positions.write();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(message_id: Option<i64>, from_end: u32, within: f64) -> ScrollPosition {
        ScrollPosition {
            message_id,
            from_end,
            within,
        }
    }

    #[test]
    fn places_round_trip_through_the_file_and_a_bad_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scroll.json");
        let positions = ScrollPositions::new(file.clone());
        assert_eq!(positions.get("a"), None);
        assert!(positions.set("a", Some(at(Some(7), 3, 12.5))));
        assert!(!positions.set("a", Some(at(Some(7), 3, 12.5))), "the same place again");
        assert!(positions.set("b", Some(at(None, 0, -4.0))));
        positions.write();
        let again = ScrollPositions::new(file.clone());
        assert_eq!(again.get("a"), Some(at(Some(7), 3, 12.5)));
        assert_eq!(again.get("b"), Some(at(None, 0, -4.0)));
        // Read to the end: forgotten.
        assert!(again.set("a", None));
        assert!(!again.set("a", None));
        again.write();
        assert_eq!(ScrollPositions::new(file.clone()).get("a"), None);

        std::fs::write(&file, "{not json").unwrap();
        assert_eq!(ScrollPositions::new(file).get("b"), None);
    }

    #[test]
    fn only_the_most_recent_places_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let positions = ScrollPositions::new(dir.path().join("scroll.json"));
        positions.with(|kept| {
            for n in 0..KEPT {
                let position = at(Some(n as i64), 0, 0.0);
                kept.insert(
                    format!("c{n}"),
                    Kept {
                        position,
                        at: 1000 + n as u64,
                    },
                );
            }
        });
        assert!(positions.set("newest", Some(at(Some(1), 1, 1.0))));
        assert_eq!(positions.with(|kept| kept.len()), KEPT);
        assert_eq!(positions.get("c0"), None, "the least recently read went");
        assert!(positions.get("c1").is_some());
        assert!(positions.get("newest").is_some());
    }
}
