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
mod windows;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    if args.command.is_some() {
        quiet_broken_pipe();
    }
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            // The reason may quote a server or a provider: escaped on a terminal.
            eprintln!("porthole: {}", porthole_host::terminal::for_stderr(&format!("{e:#}")));
            ExitCode::from(porthole_host::exit::code_of(&e))
        }
    }
}

/// A command-line tool piped into `head` should stop quietly when the pipe closes, as other
/// Unix tools do, rather than panic on the next write to stdout.
fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
