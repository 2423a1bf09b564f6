//! `porthole`: the desktop app (no subcommand) and its command-line tools, in one binary. This
//! crate is the Tauri shell: windows, the view scheme, command wrappers and the command line;
//! what the app does is `porthole-host`.

// On Windows a GUI app must not open a console window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod cli;
#[cfg(target_os = "linux")]
mod clipboard_guard;
mod commands;
mod desktop;
mod desktop_font;
mod windows;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // SIGPIPE stays ignored (Rust's default): a stdio server that exits makes writes to it fail
    // with an error Porthole reports, where the signal would kill Porthole. Printing to a closed
    // stdout (`porthole tools | head`) stops the command quietly where it prints (`headless`).
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            // The reason may quote a server or a provider: escaped on a terminal.
            eprintln!("porthole: {}", porthole_host::terminal::for_stderr(&format!("{e:#}")));
            ExitCode::from(porthole_host::exit::code_of(&e))
        }
    }
}
