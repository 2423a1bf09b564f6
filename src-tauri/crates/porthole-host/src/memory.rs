//! Memory the app freed, given back to the system once a burst of work is over.
//!
//! glibc's allocator keeps what a program frees in its arenas (one per thread that allocated,
//! up to eight per core) for the next allocation, and gives it back to the system only from the
//! top of an arena. After a burst (the views read ahead, a turn with its tool results, a large
//! message) an idle app would go on holding megabytes it no longer uses: 2.2 MiB of the app's
//! memory at rest after start-up, measured (BENCHMARKS.md). `malloc_trim` hands every free page
//! of every arena back. Elsewhere (macOS, Windows, musl) this does nothing.

/// Gives the allocator's free pages back to the system now (a few milliseconds for a large
/// heap). Returns whether any memory was given back.
pub fn give_back_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes no pointers and may be called from any thread at any time.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// [`give_back_freed_memory`] on one of `runtime`'s blocking threads, so no task waits for it.
pub(crate) fn give_back_freed_memory_soon(runtime: &tokio::runtime::Handle) {
    runtime.spawn_blocking(give_back_freed_memory);
}

/// How long a burst must have been quiet before what it freed is given back.
pub(crate) const QUIET: std::time::Duration = std::time::Duration::from_millis(500);

/// Gives freed memory back once a burst of small events (views' documents served, 600 KB each)
/// has been quiet for [`QUIET`]: one trim per burst, not one per event.
pub(crate) struct AfterBurst {
    /// Bumped by each event; a trim goes ahead only if no event came after the one that asked.
    latest: std::sync::atomic::AtomicU64,
    give_back: fn() -> bool,
}

impl AfterBurst {
    pub(crate) fn new() -> std::sync::Arc<AfterBurst> {
        AfterBurst::with(give_back_freed_memory)
    }

    pub(crate) fn with(give_back: fn() -> bool) -> std::sync::Arc<AfterBurst> {
        std::sync::Arc::new(AfterBurst {
            latest: std::sync::atomic::AtomicU64::new(0),
            give_back,
        })
    }

    /// One more event of the burst.
    pub(crate) fn event(self: &std::sync::Arc<Self>, runtime: &tokio::runtime::Handle) {
        use std::sync::atomic::Ordering;
        let mine = self.latest.fetch_add(1, Ordering::SeqCst) + 1;
        let this = self.clone();
        runtime.spawn(async move {
            tokio::time::sleep(QUIET).await;
            if this.latest.load(Ordering::SeqCst) == mine {
                let give_back = this.give_back;
                let _ = tokio::task::spawn_blocking(give_back).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static TRIMS: AtomicUsize = AtomicUsize::new(0);

    fn count() -> bool {
        TRIMS.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// Waits (real time) until `n` trims were made, or a few seconds.
    async fn trims_reach(n: usize) -> usize {
        for _ in 0..300 {
            if TRIMS.load(Ordering::SeqCst) >= n {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        TRIMS.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn a_burst_is_given_back_once_when_it_has_been_quiet() {
        let after = AfterBurst::with(count);
        let runtime = tokio::runtime::Handle::current();
        // Ten documents served 100 ms apart: nothing while they come.
        for _ in 0..10 {
            after.event(&runtime);
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(TRIMS.load(Ordering::SeqCst), 0, "no trim while the burst goes on");
        assert_eq!(trims_reach(1).await, 1, "one trim once the burst is quiet");
        tokio::time::sleep(QUIET * 2).await;
        assert_eq!(TRIMS.load(Ordering::SeqCst), 1, "one trim for the whole burst");
        // A later, separate event: one more.
        after.event(&runtime);
        assert_eq!(trims_reach(2).await, 2);
    }
}
