//! The main window's size, position and maximized state, kept in the profile (`window.json`) so
//! the window comes back where it was after a restart. A place no screen shows any more (a
//! monitor unplugged, a smaller screen) is moved onto one.
//!
//! The shell reports each move and resize ([`Host::window_placed`]); the file is written at most
//! twice a second, and once more when the app ends.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Host;

/// How long after a move or resize the file is written (a drag reports many).
const WRITE_AFTER: Duration = Duration::from_millis(500);

/// How much of the window's top (where its title bar is) must show on a screen, in logical
/// pixels, for it to be left where it was.
const MIN_VISIBLE_WIDTH: i64 = 120;
const MIN_VISIBLE_HEIGHT: i64 = 40;

/// The smallest window kept (the window's own minimum is larger).
const MIN_WIDTH: u32 = 320;
const MIN_HEIGHT: u32 = 240;

/// Where the main window is, in logical pixels: its outer position and its inner size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    /// Maximized: `x`, `y`, `width` and `height` are where it goes when un-maximized.
    pub maximized: bool,
}

/// A screen's work area, in logical pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Placement {
    /// Where to open it: as it was when enough of its top shows on one of `screens`; otherwise
    /// on the first screen, as large as fits (up to as it was), centred. With no screen known,
    /// as it was.
    pub fn on_screen(self, screens: &[Screen]) -> Placement {
        let width = self.width.max(MIN_WIDTH);
        let height = self.height.max(MIN_HEIGHT);
        let placed = Placement { width, height, ..self };
        let shows = |s: &Screen| {
            let left = i64::from(placed.x).max(i64::from(s.x));
            let right = (i64::from(placed.x) + i64::from(width)).min(i64::from(s.x) + i64::from(s.width));
            let top = i64::from(placed.y).max(i64::from(s.y));
            let bottom = (i64::from(placed.y) + MIN_VISIBLE_HEIGHT).min(i64::from(s.y) + i64::from(s.height));
            right - left >= MIN_VISIBLE_WIDTH.min(i64::from(width)) && bottom - top >= MIN_VISIBLE_HEIGHT
        };
        let Some(first) = screens.first() else {
            return placed;
        };
        if screens.iter().any(shows) {
            return placed;
        }
        let width = width.min(first.width);
        let height = height.min(first.height);
        Placement {
            x: first.x + ((first.width - width) / 2) as i32,
            y: first.y + ((first.height - height) / 2) as i32,
            width,
            height,
            maximized: self.maximized,
        }
    }
}

/// The main window's remembered placement, and its file.
pub struct WindowPlacements {
    file: PathBuf,
    state: Mutex<PlacementState>,
}

#[derive(Default)]
struct PlacementState {
    latest: Option<Placement>,
    /// A write is scheduled.
    pending: bool,
}

impl WindowPlacements {
    pub fn new(file: PathBuf) -> WindowPlacements {
        WindowPlacements {
            file,
            state: Mutex::new(PlacementState::default()),
        }
    }

    /// What the file says (nothing when there is none, or it cannot be read).
    pub fn read(&self) -> Option<Placement> {
        read_file(&self.file)
    }

    fn write_latest(&self) {
        let latest = {
            let mut state = self.state.lock().unwrap();
            state.pending = false;
            state.latest
        };
        if let Some(placement) = latest
            && let Err(e) = write_file(&self.file, &placement)
        {
            tracing::warn!("the window's place cannot be kept: {e}");
        }
    }
}

fn read_file(file: &Path) -> Option<Placement> {
    let text = std::fs::read_to_string(file).ok()?;
    match serde_json::from_str(&text) {
        Ok(placement) => Some(placement),
        Err(e) => {
            tracing::warn!(
                "{} is not a window placement ({e}); the window opens at its default place",
                file.display()
            );
            None
        }
    }
}

fn write_file(file: &Path, placement: &Placement) -> std::io::Result<()> {
    let temp = file.with_extension("json.tmp");
    std::fs::write(&temp, serde_json::to_vec_pretty(placement)?)?;
    std::fs::rename(&temp, file)
}

impl Host {
    /// Where the main window should open: where it was, moved onto one of `screens` if none
    /// shows it any more; `None` the first time.
    pub fn main_window_placement(&self, screens: &[Screen]) -> Option<Placement> {
        self.inner.window_placements.read().map(|p| p.on_screen(screens))
    }

    /// The main window moved, was resized, or was (un)maximized: `normal` is its place when
    /// not maximized (`None` while it is, when the engine reports only the maximized size).
    pub fn window_placed(&self, normal: Option<Placement>, maximized: bool) {
        let placements = &self.inner.window_placements;
        let schedule = {
            let mut state = placements.state.lock().unwrap();
            let base = normal.or(state.latest).or_else(|| placements.read());
            let Some(base) = base else {
                return;
            };
            let next = Placement { maximized, ..base };
            if state.latest == Some(next) {
                return;
            }
            state.latest = Some(next);
            !std::mem::replace(&mut state.pending, true)
        };
        if schedule {
            let host = self.clone();
            self.inner.runtime.spawn(async move {
                tokio::time::sleep(WRITE_AFTER).await;
                host.inner.window_placements.write_latest();
            });
        }
    }

    /// Writes the window's last place now (the app is ending).
    pub fn keep_window_placement(&self) {
        self.inner.window_placements.write_latest();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Screen = Screen {
        x: 0,
        y: 0,
        width: 1280,
        height: 900,
    };

    fn at(x: i32, y: i32, width: u32, height: u32) -> Placement {
        Placement {
            x,
            y,
            width,
            height,
            maximized: false,
        }
    }

    #[test]
    fn a_window_on_screen_stays_where_it_was() {
        assert_eq!(at(100, 50, 900, 700).on_screen(&[SCREEN]), at(100, 50, 900, 700));
        // Partly off to the right, its title bar still reachable.
        assert_eq!(at(1100, 10, 900, 700).on_screen(&[SCREEN]), at(1100, 10, 900, 700));
        // On a second screen to the right.
        let right = Screen { x: 1280, ..SCREEN };
        assert_eq!(
            at(1500, 100, 800, 600).on_screen(&[SCREEN, right]),
            at(1500, 100, 800, 600)
        );
    }

    #[test]
    fn a_window_no_screen_shows_is_brought_onto_the_first() {
        // Its screen was unplugged.
        assert_eq!(at(3000, 200, 800, 600).on_screen(&[SCREEN]), at(240, 150, 800, 600));
        // Only its bottom shows: the title bar is above the screen.
        assert_eq!(at(100, -650, 800, 600).on_screen(&[SCREEN]), at(240, 150, 800, 600));
        // Larger than the screen it lands on: shrunk to fit.
        assert_eq!(at(-5000, 0, 2560, 1440).on_screen(&[SCREEN]), at(0, 0, 1280, 900));
        // Maximized stays maximized.
        let maximized = Placement {
            maximized: true,
            ..at(4000, 0, 800, 600)
        };
        assert!(maximized.on_screen(&[SCREEN]).maximized);
        // No screen known: as it was.
        assert_eq!(at(3000, 200, 800, 600).on_screen(&[]), at(3000, 200, 800, 600));
    }

    #[test]
    fn the_file_round_trips_and_a_bad_one_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let placements = WindowPlacements::new(dir.path().join("window.json"));
        assert_eq!(placements.read(), None);
        placements.state.lock().unwrap().latest = Some(at(10, 20, 800, 600));
        placements.write_latest();
        assert_eq!(placements.read(), Some(at(10, 20, 800, 600)));
        std::fs::write(dir.path().join("window.json"), "{not json").unwrap();
        assert_eq!(placements.read(), None);
    }
}
