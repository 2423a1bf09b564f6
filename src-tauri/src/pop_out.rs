//! Pop-out windows: a view in a window of its own (`porthole_host::pop_outs` decides which view
//! and when; this opens the window). It runs the app's own page (`index.html#popout`) under the
//! same rules as the main window, with the view-window capability (the view commands only).

use tauri::{AppHandle, WebviewUrl, WebviewWindowBuilder};

use crate::desktop::guarded;

/// Opens the pop-out window `label`.
pub fn open(app: &AppHandle, label: &str, title: &str) -> Result<(), String> {
    let window = guarded(WebviewWindowBuilder::new(
        app,
        label,
        WebviewUrl::App("index.html#popout".into()),
    ))
    .title(title)
    .inner_size(720.0, 560.0)
    .min_inner_size(320.0, 240.0)
    .build()
    .map_err(|e| e.to_string())?;
    // The same clipboard guard as the main window (GTK: on the main thread).
    #[cfg(target_os = "linux")]
    {
        let installed = app.run_on_main_thread(move || match window.gtk_window() {
            Ok(gtk) => crate::clipboard_guard::install(&gtk),
            Err(e) => tracing::warn!("the pop-out's clipboard guard is not installed: {e}"),
        });
        if let Err(e) = installed {
            tracing::warn!("the pop-out's clipboard guard is not installed: {e}");
        }
    }
    #[cfg(not(target_os = "linux"))]
    drop(window);
    Ok(())
}
