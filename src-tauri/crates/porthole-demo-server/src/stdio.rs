//! The server's side of MCP's stdio transport (a JSON-RPC message per line), holding no large
//! buffer between messages.
//!
//! rmcp's own stdio transport keeps the capacity its largest message needed twice over, for as
//! long as the server runs: Tokio's stdout copies each write into a buffer of its own (up to
//! 2 MiB, kept) and the framing's write buffer grows to the largest line (kept). A view is a
//! 650 KB line, so after the views were read the server held about 2.4 MiB it never used again
//! (BENCHMARKS.md, session 21). Here each answer is one `Vec`, written straight to the pipe
//! and dropped; each request one `String`.

use std::io;

use futures::{Sink, Stream};
use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The messages the client sends, one per line of stdin; a line that is not one is logged and
/// skipped. Ends with stdin.
pub fn requests() -> impl Stream<Item = RxJsonRpcMessage<RoleServer>> + Send + Unpin + 'static {
    let lines = BufReader::new(tokio::io::stdin()).lines();
    Box::pin(futures::stream::unfold(lines, |mut lines| async move {
        loop {
            match lines.next_line().await {
                Ok(Some(line)) if line.trim().is_empty() => continue,
                Ok(Some(line)) => match serde_json::from_str(&line) {
                    Ok(message) => return Some((message, lines)),
                    Err(e) => tracing::warn!("a line on stdin is not a JSON-RPC message: {e}"),
                },
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!("stdin could not be read: {e}");
                    return None;
                }
            }
        }
    }))
}

/// The server's answers and notifications, one line each, to `out`.
pub fn answers<W: AsyncWrite + Send + Unpin + 'static>(
    out: W,
) -> impl Sink<TxJsonRpcMessage<RoleServer>, Error = io::Error> + Send + Unpin + 'static {
    Box::pin(futures::sink::unfold(
        out,
        |mut out, message: TxJsonRpcMessage<RoleServer>| async move {
            let mut line = serde_json::to_vec(&message).map_err(io::Error::other)?;
            line.push(b'\n');
            out.write_all(&line).await?;
            out.flush().await?;
            Ok(out)
        },
    ))
}

/// stdout, written to without a copy: as a non-blocking pipe when it is one (Porthole starts
/// its servers so), else through Tokio's stdout.
pub fn stdout() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned()
            && let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd)
        {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdout())
}
