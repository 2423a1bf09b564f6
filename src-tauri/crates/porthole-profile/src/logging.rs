//! `tracing` to stderr and to a daily rolling file in the profile's log folder, plus a panic hook
//! that writes the panic to both before the process dies.
//!
//! Secrets never reach a log line: nothing that holds one has a `Debug`/`Display` that prints it
//! (see `porthole_mcp::config::ServerConfig`), request bodies are not logged, and every line, ours
//! or a library's (an HTTP client's error names the URL it failed on), passes through
//! [`porthole_secrets::redact::text`] on its way to stderr or the file.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, fmt};

/// Keeps the file writer alive; dropping it flushes the log file.
pub struct LogGuard {
    _file: WorkerGuard,
}

/// How many log lines may wait for the file at once; past that, new lines are dropped (and
/// counted by `tracing-appender`) rather than making the code that logs wait for the disk.
const LOG_QUEUE_LINES: usize = 8192;

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
    // Lines wait for the file's thread in a queue made up front: the default holds 128,000
    // (4 MiB of memory from the start, BENCHMARKS.md), far more than a burst of logging needs.
    let (file_writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(appender);

    let filter = || EnvFilter::try_from_env("PORTHOLE_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let stderr_filter = match stderr {
        Stderr::Full => filter(),
        Stderr::ErrorsOnly => EnvFilter::try_from_env("PORTHOLE_LOG").unwrap_or_else(|_| EnvFilter::new("error")),
    };
    // Colours only for a person at a terminal: a pipe or a file gets plain text.
    let stderr_layer = fmt::layer()
        .with_writer(Redacting(std::io::stderr))
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true)
        .with_filter(stderr_filter);
    let file_layer = fmt::layer()
        .with_writer(Redacting(file_writer))
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

/// A log writer whose every line has its credentials redacted first.
struct Redacting<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        RedactingWriter(self.0.make_writer_for(meta))
    }
}

/// Writes what it is given with its credentials redacted. The formatter hands it one whole log
/// line per write, so a URL or a header is never split between two writes.
struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let line = String::from_utf8_lossy(buf);
        self.0.write_all(porthole_secrets::redact::text(&line).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_lose_their_credentials_on_the_way_out() {
        let line = "2026-01-01T00:00:00Z ERROR rmcp: error sending request for url \
                    (http://127.0.0.1:9/mcp?access_token=T0K&x=1) authorization: Bearer sk-9\n";
        let mut writer = RedactingWriter(Vec::new());
        writer.write_all(line.as_bytes()).unwrap();
        let written = String::from_utf8(writer.0).unwrap();
        assert_eq!(
            written,
            "2026-01-01T00:00:00Z ERROR rmcp: error sending request for url \
             (http://127.0.0.1:9/mcp?access_token=[redacted]&x=1) authorization: [redacted]\n"
        );
    }
}
