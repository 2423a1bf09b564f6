//! `porthole-demo-server`: the demo MCP App server on stdio, as a program of its own. It is what
//! `porthole demo-server` runs (the same server), without the window's libraries: Porthole starts
//! it for the config's `porthole demo-server` entry when it is installed beside Porthole.

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        if arg == "--version" {
            println!("porthole-demo-server {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        eprintln!("porthole-demo-server: takes no arguments (got {arg:?}); it serves MCP on stdio");
        return ExitCode::from(2);
    }
    match porthole_demo_server::run_on_stdio("porthole-demo-server") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("porthole-demo-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}
