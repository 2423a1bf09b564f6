//! How the app layer reaches the outside without knowing about windows: an [`Outbox`] for the
//! events it sends to a window, and a [`Desktop`] for what only the desktop can do (save
//! dialogs, the system's theme, the browser, windows of their own). The Tauri shell implements
//! both; tests use [`RecordingOutbox`] and [`RecordingDesktop`].

use std::path::PathBuf;
use std::sync::Mutex;

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_apps::theme::Theme;
use porthole_mcp::ServerStatus;
use serde::Serialize;

use crate::questions::Question;
use crate::sampling::{SamplingSettled, ServerSampling};
use crate::turns::ChatEvent;
use crate::views::ViewEvent;

/// The label of the app's main window (its webview); the only one with every command.
pub const MAIN_WINDOW: &str = "main";

/// The prefix of every pop-out window's label (`view-1`, `view-2`, …).
pub const POP_OUT_PREFIX: &str = "view-";

/// One event for a window, with the name the window listens for.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outbound {
    /// `chat-event`: a conversation's turn (or tools-panel run) moved on.
    Chat(ChatEvent),
    /// `view-event`: a tool call's view, as the window shows it.
    View(ViewEvent),
    /// `servers-changed`: every server's state, after any change.
    ServersChanged(Vec<ServerStatus>),
    /// `elicitation-requested`: a server asks the person something.
    Question(Question),
    /// `sampling-requested`: a server asks the model something (the person decides), or its
    /// answer waits to be sent back.
    Sampling(ServerSampling),
    /// `sampling-settled`: the window stops asking about a sampling request.
    SamplingSettled(SamplingSettled),
    /// `server-install-requested`: an install link was opened; the person is asked.
    ServerInstall(crate::server_install::ServerInstallRequest),
}

impl Outbound {
    /// The event's name, as the window listens for it.
    pub fn name(&self) -> &'static str {
        match self {
            Outbound::Chat(_) => "chat-event",
            Outbound::View(_) => "view-event",
            Outbound::ServersChanged(_) => "servers-changed",
            Outbound::Question(_) => "elicitation-requested",
            Outbound::Sampling(_) => "sampling-requested",
            Outbound::SamplingSettled(_) => "sampling-settled",
            Outbound::ServerInstall(_) => "server-install-requested",
        }
    }
}

/// Where the app's events go: to the window labelled `window`. Sending never fails from the
/// app's side; a window that is gone simply does not hear it (the implementation logs why).
pub trait Outbox: Send + Sync {
    fn send(&self, window: &str, event: Outbound);
}

/// What only the desktop can do for the app.
pub trait Desktop: Send + Sync {
    /// Asks the person where to save a file, in a dialog titled `title` (`None`: they cancelled).
    fn save_file(&self, title: &str, suggested_name: &str) -> BoxFuture<'static, Option<PathBuf>>;
    /// Asks the person for a file to open, in a dialog titled `title` (`None`: they cancelled).
    fn choose_file(&self, title: &str) -> BoxFuture<'static, Option<PathBuf>>;
    /// The system's light or dark appearance, when the desktop knows it.
    fn system_theme(&self) -> Option<Theme>;
    /// Makes the app's windows appear `theme` (`None`: the system's) as far as the web engine
    /// is concerned, so pages and views inside them see it in `prefers-color-scheme`.
    fn follow_theme(&self, theme: Option<Theme>);
    /// Opens a link in the person's browser.
    fn open_url(&self, url: &str) -> Result<(), String>;
    /// Opens a pop-out window `label` titled `title`, running the app's own pop-out page.
    fn open_pop_out(&self, label: &str, title: &str) -> Result<(), String>;
    /// Closes the window `label` (it tells the app once it is gone).
    fn close_window(&self, label: &str);
    /// Opens a window `label` of `width` × `height` CSS pixels, appearing `theme`, running the
    /// app's pop-out page with nothing but the view (`porthole check`, `porthole snapshot`); it
    /// is on the screen only when `shown` (a picture needs it: the engine paints only what is).
    fn open_view_window(&self, label: &str, width: u32, height: u32, theme: Theme, shown: bool) -> Result<(), String> {
        let _ = (label, width, height, theme, shown);
        Err("this desktop cannot open view windows".into())
    }
    /// A PNG of what the window `label` shows.
    fn capture(&self, label: &str) -> BoxFuture<'static, Result<Vec<u8>, String>> {
        let _ = label;
        Box::pin(std::future::ready(Err("this desktop cannot take pictures".into())))
    }
    /// Ends the app as when its window closes, and starts it again with the same arguments.
    fn restart(&self);
}

/// An outbox that keeps every event, for tests.
#[derive(Default)]
pub struct RecordingOutbox {
    sent: Mutex<Vec<(String, Outbound)>>,
}

impl RecordingOutbox {
    /// Everything sent so far, with the window it went to.
    pub fn sent(&self) -> Vec<(String, Outbound)> {
        self.sent.lock().unwrap().clone()
    }

    /// The view events sent to `window`, in order.
    pub fn view_events(&self, window: &str) -> Vec<ViewEvent> {
        self.sent()
            .into_iter()
            .filter(|(w, _)| w == window)
            .filter_map(|(_, e)| match e {
                Outbound::View(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    /// The chat events sent, in order.
    pub fn chat_events(&self) -> Vec<ChatEvent> {
        self.sent()
            .into_iter()
            .filter_map(|(_, e)| match e {
                Outbound::Chat(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}

impl Outbox for RecordingOutbox {
    fn send(&self, window: &str, event: Outbound) {
        self.sent.lock().unwrap().push((window.to_string(), event));
    }
}

/// A desktop for tests: saves to a fixed folder (or cancels), remembers links and windows.
#[derive(Default)]
pub struct RecordingDesktop {
    /// Where "save" dialogs put files; `None`: every dialog is cancelled.
    pub save_dir: Option<PathBuf>,
    /// What "open" dialogs choose; `None`: every dialog is cancelled.
    pub chosen_file: Option<PathBuf>,
    pub theme: Option<Theme>,
    /// The themes the windows were asked to follow, in order (`None`: the system's).
    pub followed_themes: Mutex<Vec<Option<Theme>>>,
    pub opened_urls: Mutex<Vec<String>>,
    /// Pop-out windows opened (label, title), and those closed.
    pub opened_windows: Mutex<Vec<(String, String)>>,
    pub closed_windows: Mutex<Vec<String>>,
    /// How many restarts were asked for.
    pub restarts: Mutex<usize>,
}

impl Desktop for RecordingDesktop {
    fn save_file(&self, _title: &str, suggested_name: &str) -> BoxFuture<'static, Option<PathBuf>> {
        let target = self.save_dir.as_ref().map(|d| d.join(suggested_name));
        async move { target }.boxed()
    }

    fn choose_file(&self, _title: &str) -> BoxFuture<'static, Option<PathBuf>> {
        let chosen = self.chosen_file.clone();
        async move { chosen }.boxed()
    }

    fn system_theme(&self) -> Option<Theme> {
        self.theme
    }

    fn follow_theme(&self, theme: Option<Theme>) {
        self.followed_themes.lock().unwrap().push(theme);
    }

    fn open_url(&self, url: &str) -> Result<(), String> {
        self.opened_urls.lock().unwrap().push(url.to_string());
        Ok(())
    }

    fn open_pop_out(&self, label: &str, title: &str) -> Result<(), String> {
        self.opened_windows
            .lock()
            .unwrap()
            .push((label.to_string(), title.to_string()));
        Ok(())
    }

    fn close_window(&self, label: &str) {
        self.closed_windows.lock().unwrap().push(label.to_string());
    }

    fn restart(&self) {
        *self.restarts.lock().unwrap() += 1;
    }
}
