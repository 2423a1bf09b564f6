//! Memory the server freed, given back to the system once a burst of answers is over.
//!
//! Views (600 KB of HTML each, unpacked and written out as JSON) and folder listings are built,
//! sent and freed; glibc's allocator keeps what was freed for later, so after a client opened
//! 50 views the server went on holding 38 MiB it no longer used (BENCHMARKS.md). The server's
//! stdout counts what is written; once a large answer has gone out and things are quiet for
//! a moment, `malloc_trim` gives the free pages back. Elsewhere than glibc it does nothing.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::sync::Notify;

/// How much has to be written since the last trim for one to be worth it.
const BURST_BYTES: usize = 256 << 10;
/// How long after such a burst the memory is given back (more answers may be on their way).
const QUIET: Duration = Duration::from_millis(500);

/// Said when [`BURST_BYTES`] have been written since it was last said.
#[derive(Default)]
pub struct Bursts {
    written: AtomicUsize,
    over: Notify,
}

/// A writer (the server's stdout) that counts what goes through it into [`Bursts`].
pub struct BurstWatch<W> {
    inner: W,
    bursts: Arc<Bursts>,
}

impl<W> BurstWatch<W> {
    pub fn new(inner: W) -> (BurstWatch<W>, Arc<Bursts>) {
        let bursts = Arc::new(Bursts::default());
        (
            BurstWatch {
                inner,
                bursts: bursts.clone(),
            },
            bursts,
        )
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for BurstWatch<W> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written
            && self.bursts.written.fetch_add(n, Ordering::Relaxed) + n >= BURST_BYTES
        {
            self.bursts.written.store(0, Ordering::Relaxed);
            self.bursts.over.notify_one();
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Gives freed memory back a moment after each burst, for as long as the server runs.
pub async fn give_back_memory_after(bursts: Arc<Bursts>) {
    loop {
        bursts.over.notified().await;
        tokio::time::sleep(QUIET).await;
        give_back_freed_memory();
    }
}

fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and may be called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_burst_is_said_once_enough_has_been_written() {
        let (mut out, bursts) = BurstWatch::new(Vec::new());
        out.write_all(&vec![b'x'; BURST_BYTES - 1]).await.unwrap();
        let early = tokio::time::timeout(Duration::from_millis(50), bursts.over.notified()).await;
        assert!(early.is_err(), "said before a burst's worth was written");
        out.write_all(b"xy").await.unwrap();
        let said = tokio::time::timeout(Duration::from_secs(1), bursts.over.notified()).await;
        assert!(said.is_ok(), "not said after a burst's worth was written");
        assert_eq!(out.inner.len(), BURST_BYTES + 1, "everything reached the writer");
    }
}
