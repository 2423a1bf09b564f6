//! `tracing` to stderr and to a daily rolling file in the profile's log folder, plus a panic hook
//! that writes the panic to both before the process dies.
//!
//! Secrets never reach a log line because nothing that holds one has a `Debug`/`Display` that
//! prints it (see `porthole_mcp::config::ServerConfig`), and request bodies are not logged.

use std::path::Path;

use anyhow::{Context, Result};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, fmt};

/// Keeps the file writer alive; dropping it flushes the log file.
pub struct LogGuard {
    _file: WorkerGuard,
}

const DEFAULT_FILTER: &str = "info,rmcp=warn,tao=warn,wry=warn";

/// How much goes to stderr: everything the file gets (the desktop app), or only errors
/// (command-line tools, which print what a person needs themselves; the file still gets all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    Full,
    ErrorsOnly,
}

/// Starts logging. `PORTHOLE_LOG` (an `EnvFilter` directive such as `debug` or
/// `porthole_mcp=trace`) overrides the default level. `prefix` names the log file
/// (`porthole.2026-11-30.log`), so the app and the command-line tools never write one file.
pub fn init_logging(log_dir: &Path, prefix: &str, stderr: Stderr) -> Result<LogGuard> {
    std::fs::create_dir_all(log_dir).with_context(|| format!("cannot create {}", log_dir.display()))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(prefix)
        .filename_suffix("log")
        .max_log_files(14)
        .build(log_dir)
        .with_context(|| format!("cannot open a log file in {}", log_dir.display()))?;
    let (file_writer, guard) = tracing_appender::non_blocking(appender);

    let filter = || EnvFilter::try_from_env("PORTHOLE_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let stderr_filter = match stderr {
        Stderr::Full => filter(),
        Stderr::ErrorsOnly => EnvFilter::try_from_env("PORTHOLE_LOG").unwrap_or_else(|_| EnvFilter::new("error")),
    };
    let stderr_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(true)
        .with_filter(stderr_filter);
    let file_layer = fmt::layer()
        .with_writer(file_writer)
        .with_ansi(false)
        .with_target(true)
        .with_filter(filter());
    // A second call (tests, or a library user that set its own subscriber) keeps the first one.
    if let Err(e) = tracing_subscriber::registry()
        .with(stderr_layer)
        .with(file_layer)
        .try_init()
    {
        tracing::debug!("a tracing subscriber was already set; it stays, and this log file gets nothing: {e}");
    }

    install_panic_hook();
    Ok(LogGuard { _file: guard })
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "unknown place".into());
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with no message".into());
        let backtrace = std::backtrace::Backtrace::force_capture();
        tracing::error!(target: "panic", %location, %message, "Porthole panicked\n{backtrace}");
        previous(info);
    }));
}
