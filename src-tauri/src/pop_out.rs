//! Pop-out: a view moves from its card into a window of its own, and back to the card when that
//! window closes. The pop-out window runs the app's own front end (`index.html#popout`), which
//! hosts the view's sandboxed frame exactly as the card does; the view is re-created there from
//! the call's stored input and result, with a token minted for that window only. A pop-out
//! window's capability (`capabilities/view-window.json`) holds only the view commands, and
//! every one of them checks that the window asking is the one showing the view. What a view
//! asks of the person (a message for the composer, files to save) still goes to the main window.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};

use crate::desktop::{MAIN_WEBVIEW, guarded};
use crate::views::Views;

/// The prefix of every pop-out window's label.
pub const POP_OUT_PREFIX: &str = "view-";

/// The call a pop-out window shows.
#[derive(Clone)]
struct PoppedCall {
    conversation_id: String,
    call_id: String,
    tool: String,
    /// Its front end has asked for the view.
    ready: bool,
}

/// The pop-out windows open, by label.
#[derive(Default)]
pub struct PopOuts {
    next: AtomicU64,
    windows: Mutex<HashMap<String, PoppedCall>>,
}

/// Moves a ready view from its card into a window of its own; returns the window's label.
#[tauri::command]
pub async fn pop_out_view(
    app: tauri::AppHandle,
    webview: tauri::Webview,
    views: tauri::State<'_, Views>,
    pop_outs: tauri::State<'_, PopOuts>,
    view_id: String,
) -> Result<String, String> {
    if webview.label() != MAIN_WEBVIEW || !views.shown_in(&view_id, MAIN_WEBVIEW) {
        return Err("no such view in this window".into());
    }
    let (conversation_id, call_id, tool) = views.pop_out_source(&view_id)?;
    let label = format!("{POP_OUT_PREFIX}{}", pop_outs.next.fetch_add(1, Ordering::Relaxed) + 1);
    pop_outs.windows.lock().unwrap().insert(
        label.clone(),
        PoppedCall {
            conversation_id: conversation_id.clone(),
            call_id: call_id.clone(),
            tool: tool.clone(),
            ready: false,
        },
    );
    // The view is told it is going before its frame leaves the card.
    views.close(&view_id, true).await;
    views.popped_out(MAIN_WEBVIEW, &conversation_id, &call_id);
    let window = guarded(WebviewWindowBuilder::new(
        &app,
        &label,
        WebviewUrl::App("index.html#popout".into()),
    ))
    .title(format!("{tool} — Porthole"))
    .inner_size(720.0, 560.0)
    .min_inner_size(320.0, 240.0)
    .build()
    .map_err(|e| {
        pop_outs.windows.lock().unwrap().remove(&label);
        // The view goes back to its card.
        let _ = views.reopen(&conversation_id, Some(&call_id), MAIN_WEBVIEW);
        format!("the window could not be opened: {e}")
    })?;
    // The same clipboard guard as the main window (GTK: on the main thread).
    #[cfg(target_os = "linux")]
    {
        let window = window.clone();
        let _ = app.run_on_main_thread(move || {
            if let Ok(gtk) = window.gtk_window() {
                crate::clipboard_guard::install(&gtk);
            }
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
    tracing::info!(%label, %call_id, "view popped out");
    Ok(label)
}

/// The pop-out window's front end listens: the view is re-created in it (once). Returns the
/// tool's name, for the window's heading.
#[tauri::command]
pub fn pop_out_ready(
    webview: tauri::Webview,
    views: tauri::State<'_, Views>,
    pop_outs: tauri::State<'_, PopOuts>,
) -> Result<String, String> {
    let call = {
        let mut windows = pop_outs.windows.lock().unwrap();
        let call = windows
            .get_mut(webview.label())
            .ok_or("this window is not a view's pop-out")?;
        if std::mem::replace(&mut call.ready, true) {
            return Err("this window's view was already asked for".into());
        }
        call.clone()
    };
    views.reopen(&call.conversation_id, Some(&call.call_id), webview.label())?;
    Ok(call.tool)
}

/// The pop-out window's "Back to the card": the window closes, and its view goes back.
#[tauri::command]
pub fn pop_in_view(webview: tauri::Webview) -> Result<(), String> {
    if !webview.label().starts_with(POP_OUT_PREFIX) {
        return Err("only a pop-out window can send its view back".into());
    }
    webview.window().close().map_err(|e| e.to_string())
}

/// Closes the pop-out windows showing views of a conversation (it is being deleted, or its
/// calls rewound).
pub fn close_for_conversation(app: &tauri::AppHandle, conversation_id: &str) {
    let labels: Vec<String> = app
        .state::<PopOuts>()
        .windows
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, call)| call.conversation_id == conversation_id)
        .map(|(label, _)| label.clone())
        .collect();
    for label in labels {
        if let Some(window) = app.get_webview_window(&label) {
            let _ = window.close();
        }
    }
}

/// A window closed. A pop-out's view goes back to its card (whatever became of it there:
/// shown, expired, or its server gone — the card says which). When the main window closes, the
/// pop-outs close with it, so the app ends.
pub fn window_closed(window: &tauri::Window) {
    let label = window.label().to_string();
    let app = window.app_handle().clone();
    if label == MAIN_WEBVIEW {
        for (other, window) in app.webview_windows() {
            if other.starts_with(POP_OUT_PREFIX) {
                let _ = window.destroy();
            }
        }
        return;
    }
    if !label.starts_with(POP_OUT_PREFIX) {
        return;
    }
    let call = app.state::<PopOuts>().windows.lock().unwrap().remove(&label);
    tauri::async_runtime::spawn(async move {
        let views = app.state::<Views>().inner().clone();
        views.webview_closed(&label).await;
        let Some(call) = call else { return };
        if let Err(e) = views.reopen(&call.conversation_id, Some(&call.call_id), MAIN_WEBVIEW) {
            tracing::warn!(call_id = %call.call_id, "the popped-out view could not go back to its card: {e}");
        }
    });
}
