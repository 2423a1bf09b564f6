//! `porthole-demo-server`: the demo MCP App server on stdio, as a program of its own. It is what
//! `porthole demo-server` runs (the same server), without the window's libraries: Porthole starts
//! it for the config's `porthole demo-server` entry when it is installed beside Porthole.

use std::process::ExitCode;

fn main() -> ExitCode {
    // stdout carries the protocol; logs go to stderr, which Porthole files per server.
    let logging = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PORTHOLE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    if let Err(e) = logging {
        eprintln!("porthole-demo-server: no log output: {e}");
    }
    if let Some(arg) = std::env::args().nth(1) {
        if arg == "--version" {
            println!("porthole-demo-server {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        eprintln!("porthole-demo-server: takes no arguments (got {arg:?}); it serves MCP on stdio");
        return ExitCode::from(2);
    }
    tracing::info!("porthole-demo-server {} on stdio", env!("CARGO_PKG_VERSION"));
    let served = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(porthole_demo_server::serve_stdio()));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("porthole-demo-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}
