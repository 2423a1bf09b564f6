//! The clipboard guard (Linux). WebKitGTK lets a sandboxed frame write the system clipboard
//! without any user activation (`navigator.clipboard.writeText` resolves and the text lands on
//! the CLIPBOARD selection; found by the hostile-view test on WebKitGTK 2.50.6, while the same
//! call from the app's own page is refused). No page-level switch stops it, so Porthole guards
//! the clipboard where the write lands: a write by this process is kept only when it follows a
//! copy shortcut or a click in the window; otherwise the text that was there before is put
//! back, and the log says so. The app's own page may also say, just before it writes, that the
//! person asked for the copy (a Copy button pressed from the keyboard): only the main webview
//! can call that command; a view's frame has no IPC.
//!
//! One guard for the process: every window (the main one, pop-outs) reports its clicks and
//! copy shortcuts to it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

/// How long after a copy shortcut or a click a clipboard write counts as the user's.
pub const USER_ACTION_WINDOW: Duration = Duration::from_secs(5);

/// When the person last copied, clicked, or (through the app's page) asked for a copy.
static LAST_ACTION: Mutex<Option<Instant>> = Mutex::new(None);
static CLIPBOARD_WATCHED: AtomicBool = AtomicBool::new(false);

/// The person asked for a copy now (the app's page says so before it writes the clipboard).
pub fn note_user_action() {
    *LAST_ACTION.lock().unwrap() = Some(Instant::now());
}

fn by_user() -> bool {
    LAST_ACTION
        .lock()
        .unwrap()
        .is_some_and(|t| t.elapsed() < USER_ACTION_WINDOW)
}

/// Installs the guard on one of the app's windows. Call on the GTK main thread.
pub fn install(window: &gtk::ApplicationWindow) {
    window.connect_key_press_event(move |_, event| {
        let state = event.state();
        let key = event.keyval();
        let ctrl = state.contains(gdk::ModifierType::CONTROL_MASK) || state.contains(gdk::ModifierType::META_MASK);
        let shift = state.contains(gdk::ModifierType::SHIFT_MASK);
        let copy = (ctrl
            && matches!(
                key,
                gdk::keys::constants::c
                    | gdk::keys::constants::C
                    | gdk::keys::constants::x
                    | gdk::keys::constants::X
                    | gdk::keys::constants::Insert
            ))
            || (shift && key == gdk::keys::constants::Delete)
            || key == gdk::keys::constants::Copy
            || key == gdk::keys::constants::Cut;
        if copy {
            note_user_action();
        }
        glib::Propagation::Proceed
    });
    window.connect_button_press_event(move |_, _| {
        note_user_action();
        glib::Propagation::Proceed
    });
    if CLIPBOARD_WATCHED.swap(true, Ordering::SeqCst) {
        return;
    }

    let clipboard = gtk::Clipboard::get(&gdk::SELECTION_CLIPBOARD);
    let known: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    remember(&clipboard, &known);
    let reverting = Rc::new(Cell::new(false));
    clipboard.connect_local("owner-change", false, move |values| {
        let clipboard = values.first()?.get::<gtk::Clipboard>().ok()?;
        let event = values.get(1)?.get::<gdk::Event>().ok()?;
        if reverting.replace(false) {
            return None;
        }
        // Another application's copy has no owner window in this process.
        let ours = event
            .downcast_ref::<gdk::EventOwnerChange>()
            .is_some_and(|e| e.owner().is_some());
        if ours && !by_user() {
            tracing::warn!("a write to the clipboard that no copy or click of the user's led to was undone");
            reverting.set(true);
            match known.borrow().clone() {
                Some(text) => clipboard.set_text(&text),
                None => clipboard.clear(),
            }
        } else {
            remember(&clipboard, &known);
        }
        None
    });
}

/// Keeps the clipboard's current text, to put back after a write that is undone.
fn remember(clipboard: &gtk::Clipboard, known: &Rc<RefCell<Option<String>>>) {
    let known = known.clone();
    clipboard.request_text(move |_, text| {
        *known.borrow_mut() = text.map(|t| t.to_string());
    });
}
