//! Pop-out: a view moves from its card into a window of its own, and back to the card when that
//! window closes. The pop-out window runs the app's own front end (its pop-out page), which
//! hosts the view's sandboxed frame exactly as the card does; the view is re-created there from
//! the call's stored input and result, with a token minted for that window only. A pop-out
//! window may only use the view commands, and every one of them checks that the window asking
//! is the one showing the view. What a view asks of the person (a message for the composer,
//! files to save) still goes to the main window.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Host;
use crate::error::{AppError, AppResult};
use crate::ports::{MAIN_WINDOW, POP_OUT_PREFIX};

/// The call a pop-out window shows.
#[derive(Clone)]
pub(crate) struct PoppedCall {
    pub(crate) conversation_id: String,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    /// Its front end has asked for the view.
    pub(crate) ready: bool,
    /// The view to create from this input and result (`porthole check`, `porthole snapshot`),
    /// rather than from the call's stored view.
    pub(crate) fresh: Option<(porthole_mcp::CatalogTool, serde_json::Value, serde_json::Value)>,
}

/// The pop-out windows open, by label.
#[derive(Default)]
pub struct PopOuts {
    pub(crate) next: AtomicU64,
    pub(crate) windows: Mutex<HashMap<String, PoppedCall>>,
}

impl Host {
    /// Moves a ready view of the main window from its card into a window of its own; returns
    /// the window's label.
    pub async fn pop_out_view(&self, window: &str, view_id: &str) -> AppResult<String> {
        let views = &self.inner.views;
        if window != MAIN_WINDOW || !views.shown_in(view_id, MAIN_WINDOW) {
            return Err(AppError::forbidden("no such view in this window"));
        }
        let (conversation_id, call_id, tool) = views.pop_out_source(view_id)?;
        let pop_outs = &self.inner.pop_outs;
        let label = format!("{POP_OUT_PREFIX}{}", pop_outs.next.fetch_add(1, Ordering::Relaxed) + 1);
        pop_outs.windows.lock().unwrap().insert(
            label.clone(),
            PoppedCall {
                conversation_id: conversation_id.clone(),
                call_id: call_id.clone(),
                tool: tool.clone(),
                ready: false,
                fresh: None,
            },
        );
        // The view is told it is going before its frame leaves the card.
        views.close(view_id, true).await;
        views.popped_out(MAIN_WINDOW, &conversation_id, &call_id);
        if let Err(e) = self.inner.desktop.open_pop_out(&label, &format!("{tool} — Porthole")) {
            pop_outs.windows.lock().unwrap().remove(&label);
            // The view goes back to its card.
            if let Err(back) = views.reopen(&conversation_id, Some(&call_id), MAIN_WINDOW) {
                tracing::warn!(%call_id, "the view could not go back to its card: {back}");
            }
            return Err(AppError::io(format!("the window could not be opened: {e}")));
        }
        tracing::info!(%label, %call_id, "view popped out");
        Ok(label)
    }

    /// The pop-out window's front end listens: the view is re-created in it (once). Returns the
    /// tool's name, for the window's heading.
    pub fn pop_out_ready(&self, window: &str) -> AppResult<String> {
        let call = {
            let mut windows = self.inner.pop_outs.windows.lock().unwrap();
            let call = windows
                .get_mut(window)
                .ok_or_else(|| AppError::forbidden("this window is not a view's pop-out"))?;
            if std::mem::replace(&mut call.ready, true) {
                return Err(AppError::invalid("this window's view was already asked for"));
            }
            call.clone()
        };
        // While the inspector is on, a popped-out view is watched as the card's was.
        if call.fresh.is_none() && self.view_inspection_on() {
            self.inner.views.observe_webview(window, false);
        }
        match call.fresh {
            Some((tool, input, result)) => {
                self.inner
                    .views
                    .open_with(&call.conversation_id, &call.call_id, tool, input, result, window);
            }
            None => self
                .inner
                .views
                .reopen(&call.conversation_id, Some(&call.call_id), window)?,
        }
        Ok(call.tool)
    }

    /// The pop-out window's "Back to the card": the window closes, and its view goes back.
    pub fn pop_in_view(&self, window: &str) -> AppResult<()> {
        if !window.starts_with(POP_OUT_PREFIX) {
            return Err(AppError::forbidden("only a pop-out window can send its view back"));
        }
        self.inner.desktop.close_window(window);
        Ok(())
    }

    /// Closes the pop-out windows showing views of a conversation (it is being deleted).
    pub(crate) fn close_pop_outs_of(&self, conversation_id: &str) {
        self.close_pop_outs_where(|call| call.conversation_id == conversation_id);
    }

    /// Closes the pop-out windows showing the views of these calls (the model's call ids) of a
    /// conversation (they are being rewound).
    pub(crate) fn close_pop_outs_of_calls(&self, conversation_id: &str, call_ids: &[String]) {
        self.close_pop_outs_where(|call| call.conversation_id == conversation_id && call_ids.contains(&call.call_id));
    }

    fn close_pop_outs_where(&self, close: impl Fn(&PoppedCall) -> bool) {
        let labels: Vec<String> = self
            .inner
            .pop_outs
            .windows
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, call)| close(call))
            .map(|(label, _)| label.clone())
            .collect();
        for label in labels {
            self.inner.desktop.close_window(&label);
        }
    }

    /// The labels of the pop-out windows open.
    pub fn pop_out_windows(&self) -> Vec<String> {
        self.inner.pop_outs.windows.lock().unwrap().keys().cloned().collect()
    }

    /// A pop-out window is gone: its view goes back to its card (whatever became of it there:
    /// shown, expired, or its server gone — the card says which).
    pub async fn pop_out_closed(&self, window: &str) {
        if !window.starts_with(POP_OUT_PREFIX) {
            return;
        }
        let call = self.inner.pop_outs.windows.lock().unwrap().remove(window);
        let views = &self.inner.views;
        views.webview_closed(window).await;
        views.unobserve_webview(window);
        let Some(call) = call else { return };
        if let Err(e) = views.reopen(&call.conversation_id, Some(&call.call_id), MAIN_WINDOW) {
            tracing::warn!(call_id = %call.call_id, "the popped-out view could not go back to its card: {e}");
        }
    }
}
