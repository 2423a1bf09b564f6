//! An empty Tauri 2 window, built in Porthole's workspace with the same dependencies and
//! profile, as the baseline for Porthole's start-up and memory benchmark. With
//! `PORTHOLE_REPORT_READY=1` it prints `porthole-ready <ms>` when its page has loaded, as
//! Porthole does when its composer is ready.

use std::sync::OnceLock;
use std::time::Instant;

static STARTED: OnceLock<Instant> = OnceLock::new();

#[tauri::command]
fn ready() {
    if std::env::var_os("PORTHOLE_REPORT_READY").is_some() {
        let ms = STARTED.get().map(|t| t.elapsed().as_millis()).unwrap_or(0);
        println!("porthole-ready {ms}");
    }
}

fn main() {
    STARTED.get_or_init(Instant::now);
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ready])
        .run(tauri::generate_context!())
        .expect("cannot start the baseline window");
}
