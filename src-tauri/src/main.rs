//! `porthole`: the desktop app (no subcommand) and its command-line tools, in one binary.

// On Windows a GUI app must not open a console window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod cli;
mod desktop;
mod headless;
mod model_choice;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("porthole: {e:#}");
            ExitCode::FAILURE
        }
    }
}
