//! The rules every window of the app follows (its own pages only: no navigation away, no new
//! windows, no downloads, no devices but those the person let a live view use), and pop-out
//! windows.

use porthole_host::Host;
use tauri::webview::{NewWindowResponse, PermissionKind, PermissionResponse};
use tauri::{AppHandle, Manager, Url, WebviewUrl, WebviewWindowBuilder};

/// Whether the main webview may navigate to `url`: only the app's own pages.
fn navigation_allowed(url: &Url) -> bool {
    match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        // Views' frames, each on its server's origin (WebKitGTK asks about frame navigations
        // too); the scheme handler serves only minted tokens, on their own origin and only to
        // this window.
        "mcpview" => url.host_str().is_some_and(|h| !h.is_empty()) && url.path().starts_with("/view/"),
        "http"
            if url
                .host_str()
                .is_some_and(|h| h.starts_with("mcpview.") && h.ends_with(".localhost")) =>
        {
            url.path().starts_with("/view/")
        }
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        "about" => url.as_str() == "about:blank" || url.as_str() == "about:srcdoc",
        _ => false,
    }
}

/// The app's rules for any of its windows: no navigation away from its own pages, no new
/// windows, no downloads, and a device (camera, microphone, location) only while a live view
/// was given it by the person (only such a view's frame has it in its `allow` attribute, so
/// only it can ask); the app's own pages never use one.
pub fn guarded<'a, R: tauri::Runtime, M: Manager<R>>(
    builder: WebviewWindowBuilder<'a, R, M>,
) -> WebviewWindowBuilder<'a, R, M> {
    builder
        .on_navigation(|url| {
            let ok = navigation_allowed(url);
            if !ok {
                tracing::warn!(%url, "navigation refused");
            }
            ok
        })
        .on_new_window(|url, _| {
            tracing::warn!(%url, "new window refused");
            NewWindowResponse::Deny
        })
        .on_download(|_, _| {
            tracing::warn!("download refused");
            false
        })
        .on_permission_request(|webview, kind| {
            let device = match kind {
                PermissionKind::Camera => Some("camera"),
                PermissionKind::Microphone => Some("microphone"),
                PermissionKind::Geolocation => Some("geolocation"),
                _ => None,
            };
            let host = webview.try_state::<Host>();
            match (device, host) {
                (Some(device), Some(host)) if host.device_request(device) => PermissionResponse::Allow,
                _ => {
                    tracing::warn!(?kind, "permission request refused");
                    PermissionResponse::Deny
                }
            }
        })
}

/// A window of the app's own page (`page`, e.g. `index.html#popout`): under the rules every
/// window follows ([`guarded`]), with the desktop's font and the profile named in its page.
pub fn app_window<'a, R: tauri::Runtime, M: Manager<R>>(
    manager: &'a M,
    label: &str,
    page: &str,
) -> WebviewWindowBuilder<'a, R, M> {
    let builder = crate::desktop_font::named(guarded(WebviewWindowBuilder::new(
        manager,
        label,
        WebviewUrl::App(page.into()),
    )));
    match manager.try_state::<Host>() {
        Some(host) => builder.initialization_script(profile_script(&host.page_key())),
        None => builder,
    }
}

/// The script that tells the page which profile it shows (`data-profile` on its root element,
/// before the page's own code runs): what the page remembers between starts (its theme, the
/// sidebar's height) lives in WebKit's storage, which every profile of the user shares, so it
/// keeps it under this key (`ui/src/lib/pageStorage.ts`). The top frame only: never a view's.
fn profile_script(key: &str) -> String {
    let js = serde_json::to_string(key).unwrap_or_else(|_| "\"\"".into());
    format!("if (window.top === window) document.documentElement?.setAttribute(\"data-profile\", {js});")
}

/// Shows `window` `wait` from now unless something showed it first (a window built hidden until
/// its page says it is ready, whose page never does). Asked on the window's own thread: from
/// a worker of the async runtime, `is_visible` would block it until that thread answers, which
/// it does not while the app is stopping (the quit hung when the two met).
pub fn show_at_most_after(window: &tauri::WebviewWindow, wait: std::time::Duration) {
    let window = window.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(wait).await;
        let shown = window.clone();
        let _ = window.run_on_main_thread(move || {
            if !shown.is_visible().unwrap_or(true)
                && let Err(e) = shown.show()
            {
                tracing::warn!(label = shown.label(), "the window cannot be shown: {e}");
            }
        });
    });
}

/// Opens the pop-out window `label`: a view in a window of its own (`porthole_host::pop_outs`
/// decides which view and when). It runs the app's own page (`index.html#popout`) under the same
/// rules as the main window, with the view-window capability (the view commands only). Built
/// hidden and shown when its page asks for its view (`pop_out_ready`; at most 3 s on), as the
/// main window is: its first draw, while the page loads, may stall WebKitGTK for 500 ms, and
/// it never shows a blank page first.
pub fn open_pop_out(app: &AppHandle, label: &str, title: &str) -> Result<(), String> {
    let window = app_window(app, label, "index.html#popout")
        .title(title)
        .inner_size(720.0, 560.0)
        .min_inner_size(320.0, 240.0)
        .visible(false)
        .build()
        .map_err(|e| e.to_string())?;
    show_at_most_after(&window, porthole_host::WINDOW_WAIT_AT_MOST);
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

/// Opens the window `label` showing one view with nothing around it (`index.html#bare-…`), of
/// `width` × `height`, on the screen only when `shown`: `porthole check` and `porthole snapshot`.
pub fn open_view_window(
    app: &AppHandle,
    label: &str,
    width: u32,
    height: u32,
    dark: bool,
    shown: bool,
) -> Result<(), String> {
    let page = if dark {
        "index.html#bare-dark"
    } else {
        "index.html#bare-light"
    };
    app_window(app, label, page)
        .title("Porthole")
        .theme(Some(if dark { tauri::Theme::Dark } else { tauri::Theme::Light }))
        .inner_size(f64::from(width), f64::from(height))
        .resizable(false)
        .decorations(false)
        .skip_taskbar(true)
        .focused(false)
        .position(0.0, 0.0)
        .visible(shown)
        .build()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A PNG of what the window `label` shows (WebKitGTK's snapshot of the visible part).
#[cfg(target_os = "linux")]
pub async fn capture(app: &AppHandle, label: &str) -> Result<Vec<u8>, String> {
    use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};
    let window = app
        .get_webview_window(label)
        .ok_or_else(|| format!("there is no window {label}"))?;
    let (tx, rx) = tokio::sync::oneshot::channel::<Result<Vec<u8>, String>>();
    window
        .with_webview(move |webview| {
            webview.inner().snapshot(
                SnapshotRegion::Visible,
                SnapshotOptions::NONE,
                None::<&webkit2gtk::gio::Cancellable>,
                move |taken| {
                    let png = taken.map_err(|e| e.to_string()).and_then(|surface| {
                        let image = cairo::ImageSurface::try_from(surface)
                            .map_err(|_| "the snapshot is not an image".to_string())?;
                        let mut png = Vec::new();
                        image.write_to_png(&mut png).map_err(|e| e.to_string())?;
                        Ok(png)
                    });
                    let _ = tx.send(png);
                },
            );
        })
        .map_err(|e| e.to_string())?;
    rx.await.map_err(|_| "the snapshot never came".to_string())?
}

#[cfg(not(target_os = "linux"))]
pub async fn capture(_app: &AppHandle, _label: &str) -> Result<Vec<u8>, String> {
    Err("pictures of views are taken on Linux only for now".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_apps_own_pages_are_navigable() {
        for ok in [
            "tauri://localhost/index.html",
            "http://tauri.localhost/",
            "mcpview://0123456789abcdef0123456789abcdef/view/aa",
            "mcpview://widgets.example.com/view/aa",
            "http://mcpview.0123abcd.localhost/view/aa",
        ] {
            assert!(navigation_allowed(&Url::parse(ok).unwrap()), "{ok}");
        }
        for bad in [
            "https://evil.example/",
            "http://localhost:1420/",
            "tauri://evil/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,hi",
            "http://tauri.localhost.evil.example/",
            "mcpview://0123abcd/other",
            "http://mcpview.0123abcd.evil.example/view/aa",
        ] {
            assert!(!navigation_allowed(&Url::parse(bad).unwrap()), "{bad}");
        }
    }

    #[test]
    fn the_profile_is_named_in_the_top_frame_only() {
        assert_eq!(
            profile_script("0123456789abcdef"),
            r#"if (window.top === window) document.documentElement?.setAttribute("data-profile", "0123456789abcdef");"#
        );
    }
}
