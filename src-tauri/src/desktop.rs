//! The desktop shell: the app's start, the `mcpview` scheme that serves views, and the adapters through which `porthole-host` reaches the windows ([`WindowOutbox`])
//! and the desktop ([`TauriDesktop`]). Everything the app does lives in `porthole-host`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_apps::theme::Theme;
use porthole_host::{Desktop, Host, HostOptions, MAIN_WINDOW, ModelFlags, Outbound, Outbox, POP_OUT_PREFIX, Setup};
use tauri::{AppHandle, Emitter, Manager};

/// Sends the app's events to the window they are addressed to.
struct WindowOutbox(AppHandle);

impl Outbox for WindowOutbox {
    fn send(&self, window: &str, event: Outbound) {
        if let Err(e) = self.0.emit_to(window, event.name(), &event) {
            tracing::warn!(window, event = event.name(), "an event did not reach its window: {e}");
        }
    }
}

fn tauri_theme(theme: Theme) -> tauri::Theme {
    if theme == Theme::Dark {
        tauri::Theme::Dark
    } else {
        tauri::Theme::Light
    }
}

/// The theme the windows are made with: the one chosen in Settings, else the system's.
fn host_theme(host: &Host) -> Option<tauri::Theme> {
    host.views().chosen_theme().map(tauri_theme)
}

/// Save dialogs (GTK), the window's theme, the browser and pop-out windows.
struct TauriDesktop(AppHandle);

impl Desktop for TauriDesktop {
    fn save_file(&self, title: &str, suggested_name: &str) -> BoxFuture<'static, Option<PathBuf>> {
        let dialog = rfd::AsyncFileDialog::new()
            .set_title(title)
            .set_file_name(suggested_name);
        async move { dialog.save_file().await.map(|f| f.path().to_path_buf()) }.boxed()
    }

    fn choose_file(&self, title: &str) -> BoxFuture<'static, Option<PathBuf>> {
        let dialog = rfd::AsyncFileDialog::new().set_title(title);
        async move { dialog.pick_file().await.map(|f| f.path().to_path_buf()) }.boxed()
    }

    fn system_theme(&self) -> Option<Theme> {
        let window = self.0.get_webview_window(MAIN_WINDOW)?;
        let theme = window.theme().ok()?;
        Some(Theme::from_dark(theme == tauri::Theme::Dark))
    }

    fn follow_theme(&self, theme: Option<Theme>) {
        let theme = theme.map(tauri_theme);
        for (label, window) in self.0.webview_windows() {
            if let Err(e) = window.set_theme(theme) {
                tracing::warn!(label, "the window's theme could not be set: {e}");
            }
        }
    }

    fn open_url(&self, url: &str) -> Result<(), String> {
        porthole_mcp::oauth::open_in_browser(url).map_err(|e| e.to_string())
    }

    fn open_pop_out(&self, label: &str, title: &str) -> Result<(), String> {
        crate::windows::open_pop_out(&self.0, label, title)
    }

    fn restart(&self) {
        self.0.request_restart();
    }

    fn open_view_window(&self, label: &str, width: u32, height: u32, theme: Theme, shown: bool) -> Result<(), String> {
        crate::windows::open_view_window(&self.0, label, width, height, theme == Theme::Dark, shown)
    }

    fn capture(&self, label: &str) -> BoxFuture<'static, Result<Vec<u8>, String>> {
        let (app, label) = (self.0.clone(), label.to_string());
        async move { crate::windows::capture(&app, &label).await }.boxed()
    }

    fn close_window(&self, label: &str) {
        if let Some(window) = self.0.get_webview_window(label)
            && let Err(e) = window.close()
        {
            tracing::warn!(label, "the window could not be closed: {e}");
        }
    }
}

/// Each view's document, once per unguessable token, only to the webview that owns it and on
/// its server's origin.
fn serve_view(host: &Host, label: &str, request: &http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    let token = request
        .uri()
        .path()
        .strip_prefix("/view/")
        .map(|t| t.trim_end_matches('/').to_string())
        .unwrap_or_default();
    // The view's origin is its server's: a token is served only on the origin it was made for.
    let origin = porthole_apps::tokens::origin_of(request.uri().host().unwrap_or_default());
    // The engine's report of a CSP violation (the policy's report-uri): for the view's inspector.
    if let Some(key) = request
        .uri()
        .path()
        .strip_prefix(porthole_apps::tokens::CSP_REPORT_PATH)
        && *request.method() == http::Method::POST
    {
        let known = host.views().csp_report(key, label, &origin, request.body());
        return http::Response::builder()
            .status(if known { 204 } else { 404 })
            .body(Vec::new())
            .unwrap_or_else(|_| http::Response::new(Vec::new()));
    }
    let served = if matches!(*request.method(), http::Method::GET | http::Method::HEAD) {
        host.views().tokens().serve(&token, &origin, label, Instant::now())
    } else {
        Err(porthole_apps::tokens::NotServed::Unknown)
    };
    if let Err(refused) = &served {
        tracing::warn!(webview = %label, ?refused, "a view URL was refused");
    }
    let (status, headers, body) = porthole_apps::tokens::response(served);
    let mut response = http::Response::builder().status(status);
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(body).unwrap_or_else(|e| {
        tracing::error!("a view's response could not be built: {e}");
        http::Response::new(Vec::new())
    })
}

/// A window closed. A pop-out's view goes back to its card; when the main window closes, the
/// pop-outs close with it, so the app ends.
fn window_closed(window: &tauri::Window) {
    let label = window.label().to_string();
    let app = window.app_handle().clone();
    if label == MAIN_WINDOW {
        for (other, window) in app.webview_windows() {
            if other.starts_with(POP_OUT_PREFIX)
                && let Err(e) = window.destroy()
            {
                tracing::warn!(label = other, "a pop-out window could not be closed: {e}");
            }
        }
        return;
    }
    let host = app.state::<Host>().inner().clone();
    tauri::async_runtime::spawn(async move { host.pop_out_closed(&label).await });
}

/// SIGTERM (a session ending, `kill`) and SIGINT (Ctrl+C where it was started) close the app
/// as its window's close button does: servers are stopped and the store is left sound.
fn quit_on_signals(app: tauri::AppHandle, runtime: &tokio::runtime::Handle) {
    #[cfg(unix)]
    runtime.spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::info!("asked to quit by a signal");
        app.exit(0);
    });
    #[cfg(not(unix))]
    let _ = (app, runtime);
}

/// The app has begun to end: a launch on its profile starts an app of its own.
static ENDING: AtomicBool = AtomicBool::new(false);
/// The host's shutdown has begun (once, whatever asked the app to end).
static STOPPING: AtomicBool = AtomicBool::new(false);
/// The host has shut down: the app may end.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Another launch on this profile: the main window comes forward and is handed its install
/// link. `false` when the app is ending (that launch then starts its own).
fn launched_again(app: &AppHandle, handover: porthole_host::single_instance::Handover) -> bool {
    let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
        return false;
    };
    if ENDING.load(Ordering::SeqCst) {
        return false;
    }
    tracing::info!(
        link = handover.link.is_some(),
        "launched again on this profile: brought forward"
    );
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
    if let Some(link) = handover.link {
        app.state::<Host>().open_install_link(&link);
    }
    true
}

/// The screens' areas in logical pixels, for placing the main window.
fn screens(app: &tauri::AppHandle) -> Vec<porthole_host::window_placement::Screen> {
    let monitors = app.available_monitors().unwrap_or_default();
    let primary = app.primary_monitor().ok().flatten();
    let mut screens: Vec<_> = monitors
        .iter()
        .map(|m| {
            let scale = m.scale_factor();
            let position = m.position().to_logical::<i32>(scale);
            let size = m.size().to_logical::<u32>(scale);
            porthole_host::window_placement::Screen {
                x: position.x,
                y: position.y,
                width: size.width,
                height: size.height,
            }
        })
        .collect();
    // The primary screen first: a window no screen shows is brought onto it.
    if let Some(primary) = primary {
        let origin = primary.position().to_logical::<i32>(primary.scale_factor());
        if let Some(i) = screens.iter().position(|s| s.x == origin.x && s.y == origin.y) {
            screens.swap(0, i);
        }
    }
    screens
}

/// The main window moved or was resized: the host keeps its place for the next start.
fn main_window_placed(window: &tauri::Window) {
    if window.is_minimized().unwrap_or(false) {
        return;
    }
    let maximized = window.is_maximized().unwrap_or(false);
    let normal = if maximized {
        None
    } else {
        let (Ok(scale), Ok(position), Ok(size)) = (window.scale_factor(), window.outer_position(), window.inner_size())
        else {
            return;
        };
        let position = position.to_logical::<i32>(scale);
        let size = size.to_logical::<u32>(scale);
        Some(porthole_host::window_placement::Placement {
            x: position.x,
            y: position.y,
            width: size.width,
            height: size.height,
            maximized: false,
        })
    };
    window.app_handle().state::<Host>().window_placed(normal, maximized);
}

/// The app's commands, window hooks and view scheme: the same for the desktop app and for the
/// windows `porthole check` and `porthole snapshot` show views in.
fn builder() -> tauri::Builder<tauri::Wry> {
    tauri::Builder::default()
        .invoke_handler(crate::commands::handler())
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                window_closed(window);
            }
            if matches!(event, tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_))
                && window.label() == MAIN_WINDOW
            {
                main_window_placed(window);
            }
            // Views follow the system theme, as the window does.
            if let tauri::WindowEvent::ThemeChanged(theme) = event {
                window
                    .app_handle()
                    .state::<Host>()
                    .system_theme_changed(*theme == tauri::Theme::Dark);
            }
        })
        .register_asynchronous_uri_scheme_protocol("mcpview", |ctx, request, responder| {
            let host = ctx.app_handle().state::<Host>();
            responder.respond(serve_view(&host, ctx.webview_label(), &request));
        })
}

/// Runs `job` with the app's `Host` for `setup` and no window of its own (`porthole check`'s
/// live check, `porthole snapshot`): the job opens the view windows it needs; the app ends with
/// it, and so do the servers. Returns what the job returned.
pub fn with_host<T: Send + 'static>(
    setup: Setup,
    job: impl FnOnce(Host) -> BoxFuture<'static, T> + Send + 'static,
) -> Result<T> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    tauri::async_runtime::set(runtime.handle().clone());
    let handle = runtime.handle().clone();
    let mut setup = Some(setup);
    let mut job = Some(job);
    let answer: Arc<std::sync::Mutex<Option<T>>> = Arc::new(std::sync::Mutex::new(None));
    let done = answer.clone();
    let app = builder()
        .setup(move |app| {
            let options = HostOptions {
                setup: setup.take().expect("the app is set up once"),
                model_flags: ModelFlags::default(),
                keyring: Arc::new(porthole_secrets::LazyKeyring::new("Porthole")),
                // The job needs its servers now; there is no main window to wait for.
                start_after_window: false,
            };
            let host = Host::start(
                options,
                Arc::new(WindowOutbox(app.handle().clone())),
                Arc::new(TauriDesktop(app.handle().clone())),
                handle.clone(),
            );
            app.manage(host.clone());
            // The job's windows (the live check's and snapshots' views) are the app's page too.
            crate::desktop_font::read();
            let job = job.take().expect("the job runs once");
            let app = app.handle().clone();
            handle.spawn(async move {
                let value = job(host.clone()).await;
                host.shutdown().await;
                *done.lock().unwrap() = Some(value);
                app.exit(0);
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("cannot start the app's webview")?;
    let answer_ = answer.clone();
    app.run_return(move |_, event| {
        // No window is the job's end: the app stays until the job says so.
        if let tauri::RunEvent::ExitRequested { code: None, api, .. } = event
            && answer_.lock().unwrap().is_none()
        {
            api.prevent_exit();
        }
    });
    drop(runtime);
    let value = answer.lock().unwrap().take();
    value.context("the app ended before its work was done")
}

/// Opens the app's window. `link`: an install link (`porthole://install-server?…`) it was
/// launched with, put to the person once the window is up. `listener`: where later launches on
/// the same profile are heard (the window comes forward; their link is put to the person).
pub fn run(
    setup: Setup,
    model_flags: ModelFlags,
    link: Option<String>,
    listener: Option<porthole_host::single_instance::Listener>,
) -> Result<()> {
    crate::commands::mark_start();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    tauri::async_runtime::set(runtime.handle().clone());
    let handle = runtime.handle().clone();
    let mut setup = Some(setup);
    let mut listener = listener;

    let app = builder()
        .setup(move |app| {
            let options = HostOptions {
                setup: setup.take().expect("the app is set up once"),
                model_flags,
                keyring: Arc::new(porthole_secrets::LazyKeyring::new("Porthole")),
                // Off the way to the first paint (BENCHMARKS.md: start-up).
                start_after_window: true,
            };
            quit_on_signals(app.handle().clone(), &handle);
            let started = std::time::Instant::now();
            let host = Host::start(
                options,
                Arc::new(WindowOutbox(app.handle().clone())),
                Arc::new(TauriDesktop(app.handle().clone())),
                handle,
            );
            // On the way to the first paint: the page's own requests wait for `setup`.
            tracing::debug!(ms = started.elapsed().as_secs_f64() * 1000.0, "host started");
            if let Some(link) = &link {
                host.open_install_link(link);
            }
            let placement = host.main_window_placement(&screens(app.handle()));
            app.manage(host);
            crate::desktop_font::read();
            let builder = crate::windows::app_window(app, MAIN_WINDOW, "index.html")
                .title("Porthole")
                // The theme chosen in Settings, for the engine too (`prefers-color-scheme` in views).
                .theme(host_theme(&app.state::<Host>()))
                .min_inner_size(640.0, 480.0)
                // Shown once its composer is ready (`ui_ready`; at most 3 s on): WebKitGTK's first
                // draw of a web view waits up to 500 ms for the web process, which, while it starts
                // loading the page, may itself be waiting on this process: half a second of nothing
                // in one start in three (BENCHMARKS.md, session 25). Shown ready, the window also
                // never shows a blank page first.
                .visible(false);
            // Where it was when it last closed (moved onto a screen if none shows it now).
            let builder = match placement {
                Some(p) => builder
                    .inner_size(f64::from(p.width), f64::from(p.height))
                    .position(f64::from(p.x), f64::from(p.y))
                    .maximized(p.maximized),
                None => builder.inner_size(1180.0, 800.0),
            };
            let window = builder.build()?;
            // `ui_ready` shows it; a page that never says so is shown 3 s on all the same.
            crate::windows::show_at_most_after(&window, porthole_host::WINDOW_WAIT_AT_MOST);
            if let Some(listener) = listener.take() {
                let handle = app.handle().clone();
                listener.serve(move |handover| launched_again(&handle, handover));
            }
            #[cfg(target_os = "linux")]
            crate::clipboard_guard::install(&window.gtk_window()?);
            #[cfg(not(target_os = "linux"))]
            drop(window);
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("cannot start the window")?;

    app.run(|handle, event| match event {
        // The servers are stopped and the store left sound before the app ends, while its event
        // loop runs on: whatever waits on the windows' thread meanwhile is answered.
        tauri::RunEvent::ExitRequested { code, api, .. } => {
            ENDING.store(true, Ordering::SeqCst);
            // A restart cannot be held back (Tauri ignores `prevent_exit` for it): it stops below.
            if code != Some(tauri::RESTART_EXIT_CODE) && !STOPPED.load(Ordering::SeqCst) {
                api.prevent_exit();
                if !STOPPING.swap(true, Ordering::SeqCst) {
                    let handle = handle.clone();
                    tauri::async_runtime::spawn(async move {
                        handle.state::<Host>().shutdown().await;
                        STOPPED.store(true, Ordering::SeqCst);
                        // The same exit again, now let through.
                        handle.exit(code.unwrap_or(0));
                    });
                }
            }
        }
        // A restart (or an end that did not ask first): stopped here, the event loop held.
        tauri::RunEvent::Exit if !STOPPED.load(Ordering::SeqCst) => {
            ENDING.store(true, Ordering::SeqCst);
            tauri::async_runtime::block_on(handle.state::<Host>().shutdown());
        }
        _ => {}
    });
    drop(runtime);
    Ok(())
}
